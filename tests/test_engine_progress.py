"""The real Pulumi engine shows the waiter's progress: `pulumi up` of a vertex stack
against the fake service prints each job's lasting line (non-interactive, as the tests
run the CLI), under the waiter's row."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.engine import Project, tools_missing, vertex_stack
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

WAITER_ROW = "pulumi-python:dynamic/vertex:JobWaiter (wait-for-jobs):"


def container_job(display_name: str) -> dict[str, str]:
    return {
        "display_name": display_name,
        "image": "us-docker.pkg.dev/test-project/repo/trainer:1",
        "wait": "succeeded",
    }


class TestProgressInPulumiUp:
    """`pulumi up` shows what the waiter reports to the engine."""

    def test_each_job_leaves_its_lasting_line(self, tmp_path: Path) -> None:
        """Each job's final state, duration, console and logs links are printed, and kept
        under the waiter in the diagnostics; the state lines show while it waits."""
        project = Project.create(tmp_path)
        with FakeVertex() as fake:
            fake.script("short", run_s=2.0)
            fake.script("longer", run_s=5.0)
            jobs = {"short": container_job("short"), "longer": container_job("longer")}
            project.write_stack(vertex_stack(fake, **jobs))
            output = project.up().check().output
            ids = {name: job["job_id"] for name, job in project.outputs()["jobs"].items()}

        assert "wait-for-jobs creating" in output and "RUNNING" in output, output
        diagnostics = output.split("Diagnostics:", 1)[1].split("Outputs:", 1)[0]
        assert WAITER_ROW in diagnostics, output
        for name, job_id in ids.items():
            line = re.search(
                rf"^ +{name}: SUCCEEDED after [\d.]+s \(ran [\d.]+s\); .*$",
                diagnostics,
                re.MULTILINE,
            )
            assert line is not None, output
            assert f"/training/{job_id}/cpu?project=test-project" in line.group()
            assert "; logs: https://console.cloud.google.com/logs/query;" in line.group()
            assert f"job_id%3D%22{job_id}%22" in line.group()
