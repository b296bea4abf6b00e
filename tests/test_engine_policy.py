"""The policy pack (policy/) on the real engine: `pulumi preview --policy-pack` against a
vertex stack on the fake Vertex service.

The pack runs through policy/analyzer with its own virtualenv (`make policy-venv`): the
Python language host this project builds cannot start a pack directory (docs/policies.md).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine import REPO, Project, tools_missing, vertex_stack
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
