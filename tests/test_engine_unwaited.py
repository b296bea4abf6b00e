"""A Python program's job with a ``wait`` that no waiter takes, on the real engine: its
preview and its `pulumi up` warn on its row, naming what to add
(``vertex_training.resources.unwaited``); a job given to ``wait_for_jobs`` is waited for,
with no warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine import Project
from vertex_training.resources.unwaited import untaken_text
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = pytest.mark.engine

PROGRAM = """
import vertex_training as vt

where = {"project": "test-project", "region": "us-central1"}
image = "us-docker.pkg.dev/test-project/train/trainer:1"
lonely = vt.TrainingJob("lonely", vt.TrainingJobArgs(image=image, wait="succeeded"), **where)
waited = vt.TrainingJob("waited", vt.TrainingJobArgs(image=image, wait="succeeded"), **where)
vt.wait_for_jobs("wait", [waited])
"""


def test_a_job_no_waiter_takes_is_warned_about_and_one_taken_is_waited_for(
    tmp_path: Path,
) -> None:
    with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
        project = Project.of_program(tmp_path, PROGRAM, {})
        project.write_stack({"vertex-training:apiEndpoint": fake.address})
        warning = untaken_text("lonely", "succeeded")

        preview = project.run("preview").check()
        assert warning in preview.output, preview.output
        assert untaken_text("waited", "succeeded") not in preview.output
        # On the job's own row, among the diagnostics.
        diagnostics = preview.output.split("Diagnostics:", 1)[1]
        assert f"TrainingJob (lonely):\n    warning: {warning}" in diagnostics, preview.output

        up = project.run("up", "--yes", "--skip-preview").check()
        assert warning in up.output and "waited: SUCCEEDED" in up.output, up.output
        assert untaken_text("waited", "succeeded") not in up.output
