"""The policy pack (policy/) on the real engine: `pulumi preview --policy-pack` against the
fake Vertex service, for every kind of program: this project's stack-file jobs, a YAML
program's plugin jobs with a `--policy-pack-config` file, and a Python program's jobs
declared in code.

The pack runs through policy/analyzer with its own virtualenv (`make policy-venv`): the
Python language host this project builds cannot start a pack directory (docs/policies.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine import REPO, Project, tools_missing, vertex_stack
from tests.test_engine_plugin import YamlProgram
from tests.test_engine_plugin import missing as plugin_missing
from vertex_training.testing.fake_vertex import FakeVertex

ANALYZER = REPO / "policy" / "analyzer"
PACK_PYTHON = REPO / "policy" / ".venv" / "bin" / "python"


def _missing() -> str | None:
    if tools_missing() is not None:
        return tools_missing()
    if not PACK_PYTHON.exists():
        return "the policy pack's virtualenv is not made: run `make policy-venv`"
    return None


pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(_missing() is not None, reason=_missing() or ""),
]

IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
RULES = {
    "require_timeout": {"enforcement": "mandatory"},
    "required_labels": {"enforcement": "advisory", "labels": ["team"]},
}


def stack(fake: Any, **job: Any) -> dict[str, Any]:
    config = vertex_stack(fake, train={"image": IMAGE, **job})
    config["vertex-training:policies"] = RULES
    return config


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


class TestPolicyPack:
    """`pulumi preview --policy-pack policy/analyzer` applies the stack's own rules."""

    def test_a_mandatory_failure_fails_the_preview_and_an_advisory_one_warns(
        self, project: Project
    ) -> None:
        """A job without a timeout fails the preview; a missing label is only advisory."""
        with FakeVertex() as fake:
            project.write_stack(stack(fake))
            result = project.run("preview", "--policy-pack", str(ANALYZER))
            assert result.returncode != 0, result.output
            assert "[mandatory]  require_timeout.mandatory" in result.output, result.output
            assert "vertex-training:jobs.train.scheduling.timeout" in result.output
            assert "[advisory]  required_labels.advisory" in result.output
            assert "vertex-training:jobs.train.labels" in result.output
            assert fake.jobs == {}

    def test_only_advisory_failures_let_the_preview_pass(self, project: Project) -> None:
        """With the timeout set, the preview passes and still shows the advisory failure."""
        with FakeVertex() as fake:
            project.write_stack(stack(fake, scheduling={"timeout": "2h"}))
            result = project.run("preview", "--policy-pack", str(ANALYZER))
            assert result.returncode == 0, result.output
            assert "require_timeout" not in result.output
            assert "[advisory]  required_labels.advisory" in result.output

    def test_a_mistake_in_the_rules_fails_the_preview_naming_the_key(
        self, project: Project
    ) -> None:
        """A rule's bad setting is a mandatory failure naming the full key."""
        with FakeVertex() as fake:
            config = stack(fake, scheduling={"timeout": "2h"})
            config["vertex-training:policies"] = {"max_cost_per_job": {"usd": -5}}
            project.write_stack(config)
            result = project.run("preview", "--policy-pack", str(ANALYZER))
            assert result.returncode != 0, result.output
            assert "vertex-training:policies.max_cost_per_job.usd" in result.output


#: A policy pack config (`--policy-pack-config`): a mandatory rule and an advisory one.
PACK_CONFIG = {
    "required_labels": {"enforcementLevel": "mandatory", "labels": ["team"]},
    "require_timeout": "advisory",
}


def plugin_program(tmp: Path, fake: FakeVertex, **job: Any) -> YamlProgram:
    """A YAML program with one plugin TrainingJob, ``train``."""
    program = YamlProgram(tmp, fake)
    program.resources = {
        "train": {
            "type": "vertex-training:TrainingJob",
            "properties": {"job": {"image": IMAGE, "machine": "e2-standard-4", **job}},
        }
    }
    program.write()
    return program


def preview_with(program: YamlProgram, config: dict[str, Any]) -> Any:
    path = program.root / "policy-config.json"
    path.write_text(json.dumps(config))
    return program.run("preview", "--policy-pack", str(ANALYZER), "--policy-pack-config", str(path))


@pytest.mark.polyglot  # a YAML program: CI runs it under the first Python only
class TestPolicyPackConfigOnThePlugin:
    """A YAML program's plugin jobs, judged by the rules a `--policy-pack-config` file turns
    on, each at the level the file gives."""

    @pytest.fixture(autouse=True)
    def _plugin(self) -> None:
        if reason := plugin_missing():
            pytest.skip(reason)

    def test_a_mandatory_rule_fails_the_preview_and_an_advisory_one_warns(
        self, tmp_path: Path
    ) -> None:
        """A missing label (mandatory) fails the preview naming the job, the rule and the
        property to set; a missing timeout (advisory) is listed."""
        with FakeVertex() as fake:
            result = preview_with(plugin_program(tmp_path, fake), PACK_CONFIG)
            assert result.returncode != 0, result.output
            assert "[mandatory]  required_labels  (vertex-training:index:TrainingJob: train)" in (
                result.output
            ), result.output
            assert "train: lacks the required label team: add job.labels: {team: ...}" in (
                result.output
            )
            assert "[advisory]  require_timeout  (vertex-training:index:TrainingJob: train)" in (
                result.output
            )
            assert "write job.scheduling.timeout: 4h" in result.output
            assert fake.jobs == {}

    def test_a_made_job_is_judged_in_a_no_change_preview(self, tmp_path: Path) -> None:
        """Once the job is made its state keeps its keys as an input only, and the stack's
        rules see outputs: the pack reads the job from its inputs, and the missing label
        still fails the preview."""
        with FakeVertex() as fake:
            program = plugin_program(tmp_path, fake)
            program.run("up", "--yes", "--skip-preview").check()
            result = preview_with(program, PACK_CONFIG)
            assert result.returncode != 0, result.output
            assert "train: lacks the required label team: add job.labels: {team: ...}" in (
                result.output
            )
            assert "not judged" not in result.output
            assert len(fake.jobs) == 1

    def test_advisory_failures_alone_let_the_preview_pass(self, tmp_path: Path) -> None:
        """With the label set, only the advisory rule reports, and the preview passes."""
        with FakeVertex() as fake:
            program = plugin_program(tmp_path, fake, labels={"team": "vision"})
            result = preview_with(program, PACK_CONFIG)
            assert result.returncode == 0, result.output
            assert "required_labels" not in result.output
            assert "[advisory]  require_timeout" in result.output

    def test_a_mistake_in_the_pack_config_fails_the_preview_naming_the_key(
        self, tmp_path: Path
    ) -> None:
        """A bad setting and a misspelt rule are mandatory policies-config failures naming
        the key, the value and the fix."""
        with FakeVertex() as fake:
            config = {
                "max_cost_per_job": {"enforcementLevel": "advisory", "usd": -5},
                "require_timout": "mandatory",
            }
            result = preview_with(plugin_program(tmp_path, fake), config)
            assert result.returncode != 0, result.output
            assert "[mandatory]  policies-config" in result.output
            assert "--policy-pack-config.max_cost_per_job.usd: must be at least 0" in (
                result.output
            )
            assert "did you mean 'require_timeout'?" in result.output

    def test_all_is_refused_by_a_mandatory_policies_config(self, tmp_path: Path) -> None:
        """`all: advisory`, which the engine applies to every policy, is refused, and the
        refusal still fails the preview."""
        with FakeVertex() as fake:
            config = {"all": "advisory", "require_timeout": "mandatory"}
            result = preview_with(plugin_program(tmp_path, fake), config)
            assert result.returncode != 0, result.output
            assert "[mandatory]  policies-config" in result.output
            assert "--policy-pack-config.all: the engine gives its level" in result.output


#: A team's Python program with a job declared in code (no stack config job).
PROGRAM = f"""
import pulumi

import vertex_training as vt

train = vt.TrainingJob(
    "train",
    vt.TrainingJobArgs(image="{IMAGE}", labels={{"team": "vision"}}),
    project="test-project",
    region="us-central1",
)
pulumi.export("jobId", train.id)
"""


class TestPolicyPackOnAPythonProgram:
    """A Python program's jobs declared in code, judged by its stack's rules."""

    def test_a_mandatory_rule_fails_the_preview_naming_the_job_by_argument(
        self, tmp_path: Path
    ) -> None:
        """A job in code without a timeout fails the stack's mandatory rule; the fix names
        the argument path job.scheduling.timeout."""
        with FakeVertex() as fake:
            project = Project.of_program(tmp_path, PROGRAM, {}, project_name="team")
            project.write_stack(
                {"vertex-training:apiEndpoint": fake.address, "vertex-training:policies": RULES}
            )
            result = project.run("preview", "--policy-pack", str(ANALYZER))
            assert result.returncode != 0, result.output
            assert (
                "[mandatory]  require_timeout.mandatory  "
                "(pulumi-python:dynamic/vertex:TrainingJob: train)"
            ) in result.output, result.output
            assert "train: has no timeout" in result.output
            assert "write job.scheduling.timeout: 4h" in result.output
            assert "required_labels" not in result.output
            assert fake.jobs == {}
