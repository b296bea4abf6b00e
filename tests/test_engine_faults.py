"""The real Pulumi engine against the fake Vertex service with injected faults: a create
that fails in a way that may or may not have created the job is retried after the
identity label lookup, and `pulumi up` ends with exactly one job.

Like tests/test_engine.py, each test runs the CLI that `make tools` built on a copy of
the project (tests/engine.py); the fake runs in the test process, so the test injects
its faults directly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.engine import Project, tools_missing, vertex_stack
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]


def container_job(display_name: str) -> dict[str, Any]:
    return {
        "display_name": display_name,
        "image": "us-docker.pkg.dev/test-project/repo/trainer:1",
        "wait": "succeeded",
    }


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


class TestCreateFaults:
    """`pulumi up` of a vertex stack whose CreateCustomJob fails, then serves."""

    def test_two_internal_errors_on_create_end_with_one_job(self, project: Project) -> None:
        """INTERNAL twice (nothing created): looked up, submitted again, one job succeeds."""
        with FakeVertex(run_s=1.0) as fake:
            fake.fail_next("CreateCustomJob", grpc.StatusCode.INTERNAL, times=2)
            project.write_stack(vertex_stack(fake, train=container_job("train")))
            project.up().check()

            methods = [call.method for call in fake.calls]
            assert methods.count("CreateCustomJob") == 3
            [(name, job)] = fake.jobs.items()
            assert IDENTITY_LABEL in job.labels
            outputs = project.outputs()["jobs"]["train"]
            assert outputs["resource_name"] == name
            assert outputs["state"] == "SUCCEEDED"
            assert project.jobs_in_state()["train"]["id"] == name

    def test_a_create_that_took_effect_then_failed_is_adopted(self, project: Project) -> None:
        """UNKNOWN after the server created the job: the lookup adopts it, no resubmit."""
        with FakeVertex(run_s=1.0) as fake:
            fake.fail_next("CreateCustomJob", grpc.StatusCode.UNKNOWN, take_effect=True)
            project.write_stack(vertex_stack(fake, train=container_job("train")))
            project.up().check()

            assert [call.method for call in fake.calls].count("CreateCustomJob") == 1
            [name] = fake.jobs
            assert project.outputs()["jobs"]["train"]["resource_name"] == name
