"""A pipeline of a Python program's dynamic resources on the real engine: three jobs, each
with the one before among its ``run_after`` (an Output: the other job's ID), previewed
while those IDs are unknown, then submitted one after the other against the fake
JobService. (tests/test_engine_sdks.py runs the same through the plugin in TypeScript.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine import Project, ran_in_order
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = pytest.mark.engine

PIPELINE = """
import pulumi

import vertex_training as vt

where = {"project": "test-project", "region": "us-central1"}
image = "us-docker.pkg.dev/test-project/train/trainer:1"
prepare = vt.TrainingJob("prepare", vt.TrainingJobArgs(image=image, args=["prepare"]), **where)
train = vt.TrainingJob(
    "train", vt.TrainingJobArgs(image=image, args=["train"], run_after=[prepare.id]), **where
)
evaluate = vt.TrainingJob(
    "evaluate", vt.TrainingJobArgs(image=image, args=["evaluate"], run_after=[train.id]), **where
)
pulumi.export("evaluate", evaluate.id)
"""


def test_three_steps_of_a_python_program_run_one_after_the_other(tmp_path: Path) -> None:
    with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.6) as fake:
        project = Project.of_program(tmp_path, PIPELINE, {})
        project.write_stack({"vertex-training:apiEndpoint": fake.address})

        preview = project.run("preview").check()
        assert "+ 4 to create" in preview.output, preview.output
        assert fake.jobs == {}

        project.run("up", "--yes", "--skip-preview").check()
        jobs = ran_in_order(fake, ("prepare", "train", "evaluate"))
        assert project.outputs()["evaluate"] == jobs["evaluate"].name

        unchanged = project.run("preview", "--expect-no-changes").check()
        assert "4 unchanged" in unchanged.output
        project.run("destroy", "--yes", "--skip-preview").check()
        assert fake.jobs == {}
