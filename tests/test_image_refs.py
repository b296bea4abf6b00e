"""Image references (vertex_training.api.image_refs): the distribution/reference grammar, the
fixes its refusals give, and every place a stack config names an image."""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from vertex_training.api.image_refs import (
    ImageReference,
    NotAReference,
    image_issue,
    in_repository,
    parse,
)
from vertex_training.catalog import images, machines
from vertex_training.errors import SpecError
from vertex_training.stackconfig import StackSettings, load_stack_file, parse_job

REPO = Path(__file__).resolve().parent.parent
EXIT_INVALID_CONFIG = 2
HEX = "f" * 64
GOOD = "us-docker.pkg.dev/acme/train/trainer:1"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest"


def reference(value: str) -> ImageReference:
    """``value`` parsed; fails the test if it is refused."""
    parsed = parse(value)
    assert isinstance(parsed, ImageReference), parsed
    return parsed


def refusal(value: str) -> NotAReference:
    """Why ``value`` is refused; fails the test if it parses."""
    parsed = parse(value)
    assert isinstance(parsed, NotAReference), parsed
    return parsed


class TestGrammar:
    """parse accepts what reference.go's Parse accepts (cases from reference_test.go)."""

    @pytest.mark.parametrize(
        ("value", "host", "path", "tag", "digest"),
        [
            ("test_com", None, "test_com", None, None),
            ("test.com:tag", None, "test.com", "tag", None),
            ("test.com:5000", None, "test.com", "5000", None),
            ("test.com/repo:tag", "test.com", "repo", "tag", None),
            ("test:5000/repo", "test:5000", "repo", None, None),
            (f"test:5000/repo:tag@sha256:{HEX}", "test:5000", "repo", "tag", f"sha256:{HEX}"),
            ("lowercase:Uppercase", None, "lowercase", "Uppercase", None),
            (
                "sub-dom1.foo.com/bar/baz/quux:some-long-tag",
                "sub-dom1.foo.com",
                "bar/baz/quux",
                "some-long-tag",
                None,
            ),
            (
                "b.gcr.io/test.example.com/my-app:test.example.com",
                "b.gcr.io",
                "test.example.com/my-app",
                "test.example.com",
                None,
            ),
            ("xn--n3h.com/myimage:xn--n3h.com", "xn--n3h.com", "myimage", "xn--n3h.com", None),
            ("192.168.1.1:5000/repo:5050", "192.168.1.1:5000", "repo", "5050", None),
            ("[2001:db8::1]:5000/repo:tag", "[2001:db8::1]:5000", "repo", "tag", None),
            ("[::1]:5000/repo", "[::1]:5000", "repo", None, None),
            ("localhost/trainer", "localhost", "trainer", None, None),
            ("a__b/c--d/e.f_g", None, "a__b/c--d/e.f_g", None, None),
            (GOOD, "us-docker.pkg.dev", "acme/train/trainer", "1", None),
        ],
    )
    def test_valid(
        self, value: str, host: str | None, path: str, tag: str | None, digest: str | None
    ) -> None:
        """Each valid form parses into its host, path, tag and digest, and prints back."""
        parsed = reference(value)
        assert (parsed.host, parsed.path, parsed.tag, parsed.digest) == (host, path, tag, digest)
        assert str(parsed) == value

    def test_first_component_without_dot_is_no_host(self) -> None:
        """acme/trainer has no registry host, as Docker reads it (splitDockerDomain)."""
        assert reference("acme/trainer:1").host is None
        assert reference("acme/trainer:1").repository == "acme/trainer"

    def test_longest_path(self) -> None:
        """A 255-character path parses; 256 is refused with the limit."""
        assert reference("example.com/" + "a" * 255 + ":tag").tag == "tag"
        assert "at most 255" in refusal("domain/" + "a" * 256 + ":tag").fix

    @pytest.mark.parametrize(
        "value",
        [
            "",
            ":justtag",
            f"@sha256:{HEX}",
            "repo@sha256:" + "f" * 34,
            f"validname@invaliddigest:{HEX}",
            "validname@sha512:" + "f" * 128,
            "Uppercase:tag",
            "test:5000/Uppercase/lowercase:tag",
            "aa/asdf$$^/aa",
            "[2001:db8::1]",
            "[2001:db8::1]:5000",
            "[fe80::1%eth0]:5000/repo",
            "a/" + "b" * 5000,
            "trainer:1\n",
            "us-docker.pkg.dev/acme//trainer",
            "us-docker.pkg.dev/acme/trainer:",
            "us-docker.pkg.dev/acme/trainer:" + "t" * 129,
            "us-docker.pkg.dev/acme/trainer:-dash",
            f"us-docker.pkg.dev/acme/trainer@sha256:{HEX.upper()}",
        ],
    )
    def test_invalid(self, value: str) -> None:
        """Each invalid form is refused with a fix to write instead."""
        assert refusal(value).fix


class TestFixes:
    """A refusal says what to write, with the corrected reference where there is one."""

    def test_scheme(self) -> None:
        """A URL scheme is dropped."""
        found = refusal(f"https://{GOOD}")
        assert found.fix == f"drop the https:// scheme: write {GOOD}"
        assert found.suggestion == GOOD

    def test_uppercase_path(self) -> None:
        """An uppercase path is lowercased; the host and the tag keep their case."""
        found = refusal("us-docker.pkg.dev/Acme/Train/Trainer:V1")
        assert (
            found.fix
            == "repository paths are lowercase: write us-docker.pkg.dev/acme/train/trainer:V1"
        )

    def test_scheme_and_uppercase(self) -> None:
        """Both corrections are named in one fix."""
        found = refusal("https://us-docker.pkg.dev/Acme/trainer:1")
        assert found.suggestion == "us-docker.pkg.dev/acme/trainer:1"
        assert found.fix.startswith("drop the https:// scheme and lowercase the path")

    def test_spaces(self) -> None:
        """Surrounding spaces are removed."""
        assert refusal(f" {GOOD} ").suggestion == GOOD

    def test_storage_url(self) -> None:
        """A gs:// URL is no image: nothing to strip, the fix says to push one."""
        found = refusal("gs://bucket/trainer.tar.gz")
        assert found.suggestion is None
        assert "not a container image" in found.fix

    def test_tag(self) -> None:
        """A bad tag is named, with the tag rule and an example."""
        fix = refusal("us-docker.pkg.dev/acme/trainer:v1+cuda").fix
        assert "'v1+cuda'" in fix and "1 to 128 letters" in fix

    def test_digest(self) -> None:
        """A short digest says the algorithm and the number of hex digits."""
        fix = refusal("us-docker.pkg.dev/acme/trainer@sha256:" + "a" * 40).fix
        assert "sha256: and 64 lowercase hex digits (got 40)" in fix

    def test_issue(self) -> None:
        """image_issue names the key, the bad value and the fix."""
        issue = image_issue(
            "vertex-training:jobs.x.image", f"http://{GOOD}", refusal(f"http://{GOOD}")
        )
        assert str(issue) == (
            "vertex-training:jobs.x.image: not a container image reference: drop the http:// "
            f"scheme: write {GOOD} (got 'http://{GOOD}')"
        )


class TestInRepository:
    """A bare name goes under the platform repository; nothing else changes."""

    REPOSITORY = "us-central1-docker.pkg.dev/my-project/training"

    def test_bare_name(self) -> None:
        """trainer:1 is in the repository."""
        assert in_repository("trainer:1", self.REPOSITORY) == f"{self.REPOSITORY}/trainer:1"

    @pytest.mark.parametrize("image", [GOOD, "acme/trainer:1", "localhost:5000/t", "Bad:1"])
    def test_unchanged(self, image: str) -> None:
        """A host, a multi-component path, or no reference at all: unchanged."""
        assert in_repository(image, self.REPOSITORY) == image

    def test_no_repository(self) -> None:
        """Without a repository a bare name stays bare."""
        assert in_repository("trainer:1", None) == "trainer:1"


class TestPrebuiltNames:
    """catalog.images reads prebuilt image URIs through the parser."""

    def test_name(self) -> None:
        """The name under vertex-ai/training, with a tag, a digest or neither."""
        for suffix in (":latest", f"@sha256:{HEX}", ""):
            uri = f"europe-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310{suffix}"
            assert images.prebuilt_image_name(uri) == "tf-cpu.2-17.py310"
        assert images.prebuilt_image_name("gcr.io/cloud-aiplatform/training/tf-cpu.2-3:latest")

    @pytest.mark.parametrize(
        "uri",
        [
            GOOD,
            "https://us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
            "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-17:latest",
            "us-docker.pkg.dev/vertex-ai/training/nested/tf-cpu.2-17:latest",
        ],
    )
    def test_not_prebuilt(self, uri: str) -> None:
        """Other images, and strings that are no reference, have no prebuilt name."""
        assert images.prebuilt_image_name(uri) is None

    def test_prediction(self) -> None:
        """A prediction image is recognised as one."""
        assert images.is_prediction_image(
            "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-17:latest"
        )
        assert not images.is_prediction_image(EXECUTOR)


#: mistake -> (a bad container image, a bad executor image, what the message says, where
#: ``{good}`` is the reference to write instead).
MISTAKES: dict[str, tuple[str, str, str]] = {
    "scheme": (f"https://{GOOD}", f"https://{EXECUTOR}", "drop the https:// scheme: write {good}"),
    "uppercase": (
        "us-docker.pkg.dev/acme/Train/Trainer:1",
        EXECUTOR.replace("sklearn", "SKLEARN"),
        "repository paths are lowercase: write {good}",
    ),
    "tag": (f"{GOOD}+cuda", f"{EXECUTOR}+1", "breaks the tag rule: 1 to 128 letters"),
    "digest": (
        GOOD.replace(":1", "@sha256:abc"),
        EXECUTOR.replace(":latest", "@sha256:abc"),
        "a digest is sha256: and 64 lowercase hex digits",
    ),
}
PLACES = ("job", "pool", "executor", "legacy")
TI = "training_input"
PREFIX = f"vertex-training:jobs.old.{TI}"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
#: A CUSTOM scale tier legacy job with one worker, before its program.
CUSTOM = {"scaleTier": "CUSTOM", "masterType": "n1-standard-4", "workerCount": 1}


def bad_job(place: str, image: str, executor: str) -> tuple[dict[str, Any], str, str]:
    """A job with one bad image at ``place``: (its keys, the key at fault, the bad value)."""
    package = {"package_uris": ["gs://my-bucket/trainer-0.1.tar.gz"], "module": "trainer.task"}
    if place == "job":
        return {"image": image}, "image", image
    if place == "pool":
        return {"image": GOOD, "workers": {"replicas": 2, "image": image}}, "workers.image", image
    if place == "executor":
        keys = {"python_package": {**package, "executor_image": executor}}
        return keys, "python_package.executor_image", executor
    return {TI: {"masterConfig": {"imageUri": image}}}, f"{TI}.masterConfig.imageUri", image


def yaml_text(value: Any, indent: int) -> str:
    """``value`` as flow-style YAML (JSON is YAML), at ``indent``."""
    return textwrap.indent(json.dumps(value), " " * indent)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """stderr lines of render on one stack with every mistake at every place."""
    lines = [
        "config:",
        "  gcp:project: my-project",
        "  gcp:region: us-central1",
        "  vertex-training:jobs:",
    ]
    for place in PLACES:
        for mistake, (image, executor, _) in MISTAKES.items():
            keys, _, _ = bad_job(place, image, executor)
            lines.append(f"    {place}-{mistake}:")
            lines.append(yaml_text(keys, 6))
    path = tmp_path_factory.mktemp("stack") / "Pulumi.dev.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = run_cli("render", str(path))
    assert result.returncode == EXIT_INVALID_CONFIG, result.stderr
    assert result.stdout == ""
    return result.stderr.splitlines()


class TestRenderRefuses:
    """render refuses a bad image wherever a job names one, with key, value and fix."""

    @pytest.mark.parametrize("mistake", sorted(MISTAKES))
    @pytest.mark.parametrize("place", PLACES)
    def test_refused(self, rendered: list[str], place: str, mistake: str) -> None:
        """One line for the bad image: its key (the legacy key for imageUri), fix, value."""
        image, executor, fix = MISTAKES[mistake]
        _, key, value = bad_job(place, image, executor)
        fix = fix.format(good=EXECUTOR if place == "executor" else GOOD)
        full_key = f"vertex-training:jobs.{place}-{mistake}.{key}"
        found = [line for line in rendered if line.startswith(f"{full_key}: ")]
        assert len(found) == 1, rendered
        (line,) = found
        assert line.startswith(f"{full_key}: not a container image reference: ")
        assert fix in line
        assert line.endswith(f"(got {value!r})")

    def test_nothing_else(self, rendered: list[str]) -> None:
        """Each job is refused for its image only."""
        assert len(rendered) == len(PLACES) * len(MISTAKES), rendered


class TestLegacyKeys:
    """A bad imageUri is refused on the legacy key the user wrote."""

    def issues(self, **training_input: Any) -> list[str]:
        """The issues parse_job reports for a legacy job."""
        with pytest.raises(SpecError) as caught:
            parse_job("old", {"training_input": {**CUSTOM, **training_input}}, STACK)
        return [str(issue) for issue in caught.value.issues]

    def test_worker_image(self) -> None:
        """workerConfig.imageUri is named for the workers' image."""
        (issue,) = self.issues(
            workerType="n1-standard-4",
            masterConfig={"imageUri": GOOD},
            workerConfig={"imageUri": f"https://{GOOD}"},
        )
        assert issue.startswith(f"{PREFIX}.workerConfig.imageUri: not a container image")

    def test_master_image_given_to_workers(self) -> None:
        """Workers that take the master's bad image (for their own command) add no issue."""
        (issue,) = self.issues(
            workerType="n1-standard-4",
            masterConfig={"imageUri": f"https://{GOOD}"},
            workerConfig={"containerCommand": ["python", "-m", "worker"]},
        )
        assert issue.startswith(f"{PREFIX}.masterConfig.imageUri: not a container image")


def stack_images() -> Iterator[tuple[str, str]]:
    """(where, image) for every image the stacks in stacks/ name or resolve to."""
    for path in sorted((REPO / "stacks").glob("Pulumi.*.yaml")):
        stack = load_stack_file(path)
        for name, job in stack.jobs.items():
            where = f"{path.name}:{name}"
            yield from _named(where, job.config, ("image", "executor_image", "imageUri"))
            if job.job is not None:
                body = job.job.request_body()
                yield from _named(where, body, ("imageUri", "executorImageUri"))


def _named(where: str, value: Any, keys: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """The text values of ``keys`` anywhere in ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in keys and isinstance(item, str):
                yield where, item
            else:
                yield from _named(where, item, keys)
    elif isinstance(value, list):
        for item in value:
            yield from _named(where, item, keys)


def doc_images() -> list[str]:
    """The image values in docs/config-shape.md's YAML examples."""
    text = (REPO / "docs" / "config-shape.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)
    keys = r"(?:image|executor_image|imageUri|repository_url)"
    return [m for block in blocks for m in re.findall(rf"\b{keys}:\s*([^\s#,}}]+)", block)]


class TestShippedImages:
    """Every image the project ships or documents parses."""

    def test_stacks(self) -> None:
        """Each image in stacks/, as written and as resolved, is a reference."""
        found = list(stack_images())
        assert found
        for where, image in found:
            assert isinstance(parse(image), ImageReference), (where, image, parse(image))

    def test_docs(self) -> None:
        """Each image in docs/config-shape.md's examples is a reference."""
        found = doc_images()
        assert len(found) >= 3
        for image in found:
            assert isinstance(parse(image), ImageReference), (image, parse(image))

    def test_catalogue(self) -> None:
        """Every prebuilt image on every host parses and reads back as its own name."""
        for image in images.TRAINING_IMAGES:
            for region in ("us-central1", "europe-west4", "asia-east1"):
                uri = image.uri(region)
                assert isinstance(parse(uri), ImageReference), uri
                assert images.prebuilt_image_name(uri) == image.name

    def test_reduction_server(self) -> None:
        """Google's reduction server image, which no key sets, parses."""
        assert reference(machines.REDUCTION_SERVER_IMAGE).host == "us-docker.pkg.dev"
