"""`vertex-training review` of real previews: a TypeScript, a YAML and a Python program,
each in a folder of its own outside the repository, against the fake JobService.

Each program runs two jobs (`train` and `old`, labelled `team: ml`), then changes them as a
pull request would: `train` gets a bigger machine and two GPUs (a replacement), `old` goes
and `new` comes. `pulumi preview --json` of that change, read by `vertex-training review`
in the program's folder with the program's price snapshot (prices/snapshot.json: the fake
catalog's invented prices), shows each job's change, the keys that changed in the
program's own words, the cost of what it submits and the snapshot's date; a rule the team
makes mandatory in a policy pack config fails it, naming the job. A no-change preview
reviews as nothing to submit. Nothing is submitted by a preview.

The TypeScript program uses the packed SDK and the plugin (provider/), the YAML program
the plugin, the Python program the package's own classes (dynamic resources declared in
code). CI runs the TypeScript and YAML ones once (``polyglot``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine import Project, tools_missing
from tests.prices import fake_snapshot
from tests.release import PULUMI, run
from tests.test_engine_plugin import YamlProgram
from tests.test_engine_plugin import missing as yaml_missing
from tests.test_engine_sdks import NPM_QUIET, plugin_block
from vertex_training import stackconfig
from vertex_training.catalog.prices import save_snapshot
from vertex_training.review import cost
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = pytest.mark.engine

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
PROVIDER_CONFIG = {
    "vertex-training:project": "test-project",
    "vertex-training:region": "us-central1",
}
#: The team's rules, as a policy pack config gives them.
RULES = {"required_labels": {"enforcementLevel": "mandatory", "labels": ["team", "cost-center"]}}
EXIT_RULE_FAILED = 1
GPUS = {"type": "NVIDIA_TESLA_T4", "count": 2}

TYPESCRIPT = """\
import * as pulumi from "@pulumi/pulumi";
import * as vertex from "vertex-training";

const config = new pulumi.Config();
const image = "%(image)s";
const labels = { team: "ml" };
const gpus = config.getNumber("gpus");

new vertex.TrainingJob("train", {
    job: {
        image,
        labels,
        machine: config.get("machine") ?? "e2-standard-4",
        ...(gpus ? { accelerator: { type: "NVIDIA_TESLA_T4", count: gpus } } : {}),
    },
});
new vertex.TrainingJob(config.get("second") ?? "old", {
    job: { image, labels, machine: "e2-standard-4" },
});
"""

PYTHON = """\
import pulumi

import vertex_training as vt

config = pulumi.Config()
gpus = config.get_int("gpus")
train = {"machine": config.get("machine") or "e2-standard-4"}
if gpus:
    train["accelerator"] = {"type": "NVIDIA_TESLA_T4", "count": gpus}
for name, keys in ((config.get("second") or "old", {}), ("train", train)):
    args = {"image": "%(image)s", "labels": {"team": "ml"}, "machine": "e2-standard-4", **keys}
    vt.TrainingJob(
        name, vt.TrainingJobArgs(**args), project="test-project", region="us-central1"
    )
"""


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=30, pending_s=30, run_s=60) as fake:
        yield fake


def with_prices(project: Project) -> None:
    """The program's own price snapshot, where `review` looks for one."""
    save_snapshot(fake_snapshot(), project.root / "prices" / "snapshot.json")


def preview(project: Project) -> None:
    """`pulumi preview --json` of the program into preview.json, as a pull request's check
    runs it."""
    previewed = project.run("preview", "--json")
    assert previewed.stdout.lstrip().startswith("{"), previewed.output
    (project.root / "preview.json").write_text(previewed.stdout)


def review(project: Project, *options: str) -> subprocess.CompletedProcess[str]:
    """`vertex-training review` of the last preview, in the program's folder."""
    return subprocess.run(
        [sys.executable, "-m", "vertex_training", "review", "preview.json", *options],
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def most(name: str, **keys: Any) -> float:
    """The most a job with these keys can cost, estimated from the same snapshot without
    the engine: what the review must add up."""
    config = {"image": IMAGE, "labels": {"team": "ml"}, "machine": "e2-standard-4", **keys}
    settings = stackconfig.StackSettings(
        stack="test", project="test-project", region="us-central1", config_from="program"
    )
    estimate = cost.estimate(stackconfig.parse_job(name, config, settings), fake_snapshot())
    assert estimate.max_usd is not None
    return estimate.max_usd


def by_config(project: Project) -> Callable[[], None]:
    """The change, for a program that reads it from its config."""

    def change() -> None:
        for name, value in (("machine", "n1-standard-4"), ("gpus", "2"), ("second", "new")):
            project.run("config", "set", name, value).check()

    return change


def the_change_is_reviewed(
    project: Project, fake: FakeVertex, key: str, change: Callable[[], None]
) -> None:
    """Up with `train` and `old`; a no-change review; the change's review; a rule.
    ``key``: how the program names a job's machine (``job.machine``, ``machine``);
    ``change``: makes the change (`train` on n1-standard-4 with two T4s, `new` for `old`)."""
    project.run("up", "--yes", "--skip-preview").check()
    assert sorted(job.display_name for job in fake.jobs.values()) == ["old", "train"]
    submitted = set(fake.jobs)

    preview(project)
    unchanged = review(project)
    assert unchanged.returncode == 0, unchanged.stderr
    assert "0 to submit, 0 to replace, 0 to delete; this change submits no job." in (
        unchanged.stdout
    )
    assert "| `train` |" not in unchanged.stdout  # the preview shows no step for it

    change()
    preview(project)
    changed = review(project, "--format", "json")
    assert changed.returncode == 0, changed.stderr
    assert set(fake.jobs) == submitted, "a preview submitted or deleted a job"
    document = json.loads(changed.stdout)
    jobs = {job["name"]: job for job in document["jobs"]}
    assert {name: job["change"] for name, job in jobs.items()} == {
        "train": "replace",
        "new": "submit",
        "old": "delete",
    }
    prefix = key.removesuffix("machine")
    assert {(k["key"], k["before"], k["after"], k["replaces"]) for k in jobs["train"]["keys"]} == {
        (f"{prefix}machine", "e2-standard-4", "n1-standard-4", True),
        (f"{prefix}accelerator.count", "(unset)", "2", True),
        (f"{prefix}accelerator.type", "(unset)", "NVIDIA_TESLA_T4", True),
    }
    assert jobs["train"]["pools"] == ["primary: 1 x n1-standard-4 + 2 x NVIDIA_TESLA_T4"]
    expected = {
        "train": most("train", machine="n1-standard-4", accelerator=GPUS),
        "new": most("new"),
    }
    assert jobs["train"]["estimate"]["max_usd"] == pytest.approx(expected["train"])
    assert jobs["new"]["estimate"]["max_usd"] == pytest.approx(expected["new"])
    assert jobs["old"]["estimate"] is None
    assert document["change_max_usd"] == pytest.approx(sum(expected.values()))
    assert document["prices_read"] == "2026-11-20"

    text = review(project).stdout
    assert (
        "Costs from a fake Cloud Billing Catalog on this machine "
        "(`127.0.0.1:0 (fake catalog, invented prices)`): invented prices read 2026-11-20" in text
    )
    assert (
        "1 to submit, 1 to replace, 1 to delete; the jobs this change submits cost at most "
        f"${sum(expected.values()):,.2f}." in text
    )
    assert f"`{key}` e2-standard-4 -> n1-standard-4 (forces replacement)" in text

    rules = project.root / "rules.json"
    rules.write_text(json.dumps(RULES))
    broken = review(project, "--policy-pack-config", str(rules))
    assert broken.returncode == EXIT_RULE_FAILED, broken.stderr
    assert (
        "- :x: required_labels (mandatory) `new`: lacks the required label cost-center"
        in broken.stdout
    )


@pytest.mark.polyglot
class TestTypeScriptProgram:
    def test_a_change_to_a_typescript_programs_jobs_is_reviewed(
        self, tmp_path: Path, nodejs_sdk: Path, fake: FakeVertex
    ) -> None:
        if reason := tools_missing():
            pytest.skip(reason)
        package = {
            "name": "ts-review",
            "main": "index.ts",
            "dependencies": {"@pulumi/pulumi": PULUMI, "vertex-training": f"file:{nodejs_sdk}"},
            "devDependencies": {"@types/node": "^20", "typescript": "^5"},
        }
        project = Project.of_files(
            tmp_path,
            {
                "Pulumi.yaml": "name: ts-review\n"
                "runtime:\n  name: nodejs\n  options:\n    typescript: true\n" + plugin_block(),
                "package.json": json.dumps(package, indent=2),
                "index.ts": TYPESCRIPT % {"image": IMAGE},
            },
        )
        run("npm", "install", *NPM_QUIET, cwd=project.root)
        with_prices(project)
        for name, value in {**PROVIDER_CONFIG, "vertex-training:apiEndpoint": fake.address}.items():
            project.run("config", "set", name, value).check()
        the_change_is_reviewed(project, fake, "job.machine", by_config(project))


def yaml_jobs(machine: str = "e2-standard-4", second: str = "old", **train: Any) -> Any:
    """The YAML program's jobs: YAML names each resource once, so each change is written."""

    def job(**keys: Any) -> dict[str, Any]:  # a mapping of its own each (YAML has no aliases)
        return {"image": IMAGE, "labels": {"team": "ml"}, "machine": "e2-standard-4", **keys}

    return {
        "train": {
            "type": "vertex-training:TrainingJob",
            "properties": {"job": job(machine=machine, **train)},
        },
        second: {"type": "vertex-training:TrainingJob", "properties": {"job": job()}},
    }


@pytest.mark.polyglot
class TestYamlProgram:
    def test_a_change_to_a_yaml_programs_jobs_is_reviewed(
        self, tmp_path: Path, fake: FakeVertex
    ) -> None:
        if reason := yaml_missing():
            pytest.skip(reason)
        program = YamlProgram(tmp_path, fake)
        program.resources = yaml_jobs()
        program.write()
        with_prices(program.project)

        def change() -> None:
            program.resources = yaml_jobs("n1-standard-4", "new", accelerator=GPUS)
            program.write()

        the_change_is_reviewed(program.project, fake, "job.machine", change)


class TestPythonProgram:
    def test_a_change_to_a_python_programs_jobs_in_code_is_reviewed(
        self, tmp_path: Path, fake: FakeVertex
    ) -> None:
        if reason := tools_missing():
            pytest.skip(reason)
        project = Project.of_program(tmp_path, PYTHON % {"image": IMAGE}, {}, "py-review")
        with_prices(project)
        project.write_stack({"vertex-training:apiEndpoint": fake.address})
        the_change_is_reviewed(project, fake, "machine", by_config(project))
