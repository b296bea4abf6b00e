"""Google's registry of prebuilt training images: the refresh (against the fake registry,
through the real Artifact Registry client), the snapshot, and the snapshot deciding which
images exist when a job names a framework.

Every image the fake serves is invented (vertex_training.testing.fake_registry).
"""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli import run_cli
from vertex_training.catalog import images, registry
from vertex_training.errors import SpecError
from vertex_training.stackconfig import StackSettings, load_stack_file, parse_job
from vertex_training.testing.fake_registry import REBUILDS, FakeRegistry

REPO = Path(__file__).resolve().parent.parent
TODAY = datetime.date(2026, 11, 26)
US = StackSettings(stack="dev", project="my-project", region="us-central1")
EU = StackSettings(stack="prod", project="my-project", region="europe-west4")


def framework_job(version: str, python: str | None = None) -> dict[str, object]:
    framework: dict[str, object] = {"name": "pytorch", "version": version}
    if python is not None:
        framework["python"] = python
    return {
        "python_package": {
            "package_uris": ["gs://acme/trainer-0.1.tar.gz"],
            "module": "trainer.task",
            "framework": framework,
        },
        "machine": "n1-standard-8",
        "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
    }


def executor(job: object) -> str:
    body = job.request_body()  # type: ignore[attr-defined]
    return str(body["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["executorImageUri"])


@pytest.fixture(scope="module")
def snapshot() -> registry.RegistrySnapshot:
    with FakeRegistry() as fake:
        return registry.refresh(endpoint=fake.address)


@pytest.fixture
def held(snapshot: registry.RegistrySnapshot) -> Iterator[registry.RegistrySnapshot]:
    with registry.using(snapshot):
        yield snapshot


class TestRefresh:
    """refresh(): every repository, every page, one entry per image name and location."""

    def test_lists_every_location_through_pages_and_transient_errors(self) -> None:
        """Two UNAVAILABLE answers are retried; each repository is read to its last page."""
        pages: list[tuple[str, int, int]] = []
        with FakeRegistry() as fake:
            fake.fail_next(2)
            snapshot = registry.refresh(
                endpoint=fake.address, progress=lambda r, read, kept: pages.append((r, read, kept))
            )
            calls = list(fake.calls)
        both = {*registry.REPOSITORIES.values(), *registry.PREDICTION_REPOSITORIES.values()}
        assert set(snapshot.repositories) == both
        assert {r for r, _, _ in pages} == both
        assert len({p for p, _ in calls}) == 6 and any(token for _, token in calls)
        image = snapshot.holds("pytorch-gpu.2-5.py310", "europe")
        assert image is not None
        assert "latest" in image.tags and image.versions == REBUILDS
        assert image.digest.startswith("sha256:")
        assert image.uri == "europe-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-5.py310:latest"
        serving = snapshot.holds("sklearn-cpu.1-6", "asia", registry.PREDICTION)
        assert serving is not None
        assert serving.uri == "asia-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-6:latest"
        assert snapshot.holds("tf2-cpu.2-15", "us") is None  # a prediction image only
        assert snapshot.source == fake.address

    def test_a_refused_identity_says_how_to_log_in(self) -> None:
        with FakeRegistry() as fake:
            fake.deny()
            with pytest.raises(registry.ImagesError, match="application-default login"):
                registry.refresh(endpoint=fake.address)

    def test_a_missing_repository_is_named(self) -> None:
        with (
            FakeRegistry(images={"us": ["tf-cpu.2-17.py310"]}) as fake,
            pytest.raises(registry.ImagesError, match="locations/europe/repositories"),
        ):
            registry.refresh(endpoint=fake.address, locations=("us", "europe"))

    def test_the_snapshot_round_trips_and_ages(
        self, snapshot: registry.RegistrySnapshot, tmp_path: Path
    ) -> None:
        path = tmp_path / "images.json"
        registry.save_snapshot(snapshot, path)
        loaded = registry.load_snapshot(path)
        order = sorted(snapshot.images, key=lambda i: (i.repository, i.name, i.location))
        assert loaded.images == tuple(order)
        assert loaded.stale_warning(loaded.read_date + datetime.timedelta(days=30)) is None
        stale = loaded.stale_warning(loaded.read_date + datetime.timedelta(days=31))
        assert stale is not None and "make images" in stale

    def test_a_bad_snapshot_says_how_to_make_one(self, tmp_path: Path) -> None:
        path = tmp_path / "images.json"
        path.write_text('{"format": 1}', encoding="utf-8")
        with pytest.raises(registry.ImagesError, match="make images"):
            registry.load_snapshot(path)

    def test_the_command_line_writes_the_snapshot(self, tmp_path: Path) -> None:
        """`vertex-training images refresh` in a project writes prices/images.json, shows
        its progress, and warns that a loopback endpoint's snapshot is not to be committed."""
        shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
        with FakeRegistry() as fake:
            result = run_cli("images", "refresh", "--endpoint", fake.address, cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        assert "wrote" in result.stdout
        assert "14 training and 8 prediction image names in 6 repositories" in result.stdout
        assert "images read" in result.stderr and "do not commit" in result.stderr
        written = registry.load_snapshot(tmp_path / "prices" / "images.json")
        assert written.holds("sklearn-cpu.1-7", "asia") is not None


class TestNames:
    @pytest.mark.parametrize(
        ("name", "parsed"),
        [
            ("pytorch-gpu.2-5.py310", ("pytorch", "2.5", "gpu", "3.10")),
            ("pytorch-xla.2-6.py311", ("pytorch", "2.6", "cpu", "3.11")),
            ("tf-tpu.2-15.cp310", ("tensorflow", "2.15", "tpu", "3.10")),
            ("sklearn-cpu.1-7", ("sklearn", "1.7", "cpu", None)),
        ],
    )
    def test_a_name_says_framework_version_kind_and_python(
        self, name: str, parsed: tuple[str, str, str, str | None]
    ) -> None:
        found = registry.parse_name(name)
        assert found is not None
        assert (found.framework, found.version, found.kind, found.python) == parsed

    def test_other_names_are_not_training_images(self) -> None:
        assert registry.parse_name("reductionserver") is None


class TestTheSnapshotDecides:
    """With a snapshot, what Google's registry holds exists; what it lacks does not."""

    def test_a_version_only_the_registry_holds_gets_its_image(
        self, held: registry.RegistrySnapshot
    ) -> None:
        """PyTorch 2.5 (newer than the table): the registry's image, no guessed name; the
        warning says the dates are unknown and names the page."""
        job = parse_job("train", framework_job("2.5"), US, today=TODAY)
        assert executor(job) == "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-5.py310:latest"
        (warning,) = [w for w in job.warnings if "pytorch-gpu.2-5.py310" in w]
        assert "holds pytorch-gpu.2-5.py310" in warning and images.CATALOGUE_URL in warning
        assert not [w for w in job.warnings if "naming pattern" in w]

    def test_a_version_it_lacks_is_refused_naming_versions_it_holds(
        self, held: registry.RegistrySnapshot
    ) -> None:
        """9.9 is refused naming the nearest versions held for GPU; each of those passes."""
        with pytest.raises(SpecError) as caught:
            parse_job("train", framework_job("9.9"), US, today=TODAY)
        (issue,) = caught.value.issues
        assert issue.key == "vertex-training:jobs.train.python_package.framework.version"
        assert "holds no PyTorch 9.9 GPU" in issue.message
        assert "the nearest versions it holds for GPU: 2.6, 2.5" in issue.message
        for version in ("2.6", "2.5"):
            job = parse_job("train", framework_job(version), US, today=TODAY)
            assert "pytorch-gpu" in executor(job)

    def test_an_image_missing_from_the_regions_location_is_refused(self) -> None:
        with FakeRegistry(
            images={"us": ["pytorch-gpu.2-5.py310"], "europe": [], "asia": []}
        ) as fake:
            snapshot = registry.refresh(endpoint=fake.address)
        with registry.using(snapshot), pytest.raises(SpecError) as caught:
            parse_job("train", framework_job("2.5"), EU, today=TODAY)
        (issue,) = caught.value.issues
        assert "in europe" in issue.message

    def test_a_retired_table_row_is_still_refused_by_its_date(
        self, held: registry.RegistrySnapshot
    ) -> None:
        """2.4 is in the registry, but past its end of availability: refused, moved to 2.5."""
        with pytest.raises(SpecError) as caught:
            parse_job("train", framework_job("2.4"), US, today=TODAY)
        (issue,) = caught.value.issues
        assert "end of availability on 2026-07-24" in issue.message
        assert 'write version: "2.5"' in issue.message

    def test_without_a_snapshot_the_name_is_guessed_and_the_warning_says_how_to_read_it(
        self,
    ) -> None:
        with registry.using(None):
            job = parse_job("train", framework_job("2.5"), US, today=TODAY)
        (warning,) = [w for w in job.warnings if "naming pattern" in w]
        assert "make images" in warning

    def test_an_old_snapshot_is_warned_about(self, snapshot: registry.RegistrySnapshot) -> None:
        with registry.using(snapshot):
            job = parse_job(
                "train", framework_job("2.5"), US, today=TODAY + datetime.timedelta(days=45)
            )
        assert any("days ago (more than 30)" in w for w in job.warnings)

    @pytest.mark.parametrize("stack", ["dev", "prod"])
    def test_the_shipped_stacks_render_with_the_registrys_images(
        self, stack: str, snapshot: registry.RegistrySnapshot, tmp_path: Path
    ) -> None:
        """dev (scikit-learn 1.7) and prod (PyTorch 2.5) render with the registry's images:
        no guessed name, no refusal; the only image note is that the table lacks their
        dates (docs/images.md)."""
        project = tmp_path / "project"
        # What the stacks read: the project file, the stack files, the trainer they build.
        for part in ("stacks", "trainer"):
            shutil.copytree(
                REPO / part, project / part, ignore=shutil.ignore_patterns("__pycache__")
            )
        shutil.copy(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
        registry.save_snapshot(snapshot, project / "prices" / "images.json")
        loaded = load_stack_file(project / "stacks" / f"Pulumi.{stack}.yaml", today=TODAY)
        assert not loaded.issues
        for job in loaded.jobs.values():
            assert job.job is not None, job.issues
            assert not [w for w in job.job.warnings if "naming pattern" in w]
        uris = [
            str(pool["pythonPackageSpec"]["executorImageUri"])
            for job in loaded.jobs.values()
            if job.job is not None
            for pool in job.job.request_body().get("jobSpec", {}).get("workerPoolSpecs", [])
            if pool and "pythonPackageSpec" in pool
        ]
        expected = {"dev": "sklearn-cpu.1-7:latest", "prod": "pytorch-gpu.2-5.py310:latest"}
        assert any(uri.endswith(expected[stack]) for uri in uris), uris
