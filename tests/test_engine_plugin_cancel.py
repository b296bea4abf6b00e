"""Ctrl-C during a plugin's wait, on the real engine: a YAML program's `pulumi up`
interrupted while its waiter waits for a running job stops within seconds (the engine's
cancel reaches the plugin's ``cancel``: ``vertex_training.resources.cancellation``),
says where each job was, and leaves no pending operation; the job keeps running and is
in the state, the waiter too with what it saw, and the next `pulumi up` (its preview
saying so) waits for the job again without submitting it twice.
CI runs this once (``polyglot``).
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.engine import Project
from tests.test_engine_plugin import IMAGE, missing
from vertex_training.api import states
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

REPO = Path(__file__).resolve().parent.parent
#: How long the job runs: the first `pulumi up` is interrupted well within it.
RUN_S = 10.0
#: The first Ctrl-C ends the `pulumi up` within this (the wait stops at once; the rest is
#: the engine's own ending: about 2 s here, left room for a loaded machine). What tells
#: a stopped wait from one that ran to the job's end is its message.
STOPPED_WITHIN_S = 30.0


def program(fake: FakeVertex) -> dict[str, object]:
    return {
        "name": "training",
        "runtime": "yaml",
        "plugins": {"providers": [{"name": "vertex-training", "path": str(REPO / "provider")}]},
        "config": {
            "vertex-training:apiEndpoint": fake.address,
            "vertex-training:project": "test-project",
            "vertex-training:region": "us-central1",
        },
        "resources": {
            "long": {
                "type": "vertex-training:TrainingJob",
                "properties": {
                    "job": {"image": IMAGE, "machine": "e2-standard-4", "wait": "succeeded"}
                },
            },
            "waiter": {
                "type": "vertex-training:JobWaiter",
                "properties": {"jobs": ["${long.waiterEntry}"]},
            },
        },
    }


def running(fake: FakeVertex) -> bool:
    return any(job.state.name == f"JOB_STATE_{states.RUNNING}" for job in fake.jobs.values())


def interrupted_up(project: Project, started: Callable[[], bool]) -> str:
    """A first `pulumi up` of ``project``, interrupted (SIGINT to the engine) a second
    after ``started`` (its job is running, and its wait waiting): its output, once it has
    failed within ``STOPPED_WITHIN_S``."""
    project.init()
    proc = project.start("up", "--yes", "--skip-preview")
    deadline = time.monotonic() + 120
    while not started():
        assert proc.poll() is None and time.monotonic() < deadline, "no job ran"
        time.sleep(0.2)
    time.sleep(1.0)  # the wait is waiting
    os.kill(proc.pid, signal.SIGINT)
    interrupted = time.monotonic()
    out, err = proc.communicate(timeout=60)
    stopped_s = time.monotonic() - interrupted
    output = out + err
    assert proc.returncode != 0, output
    assert stopped_s < STOPPED_WITHIN_S, f"stopped after {stopped_s:.1f}s:\n{output}"
    return output


class TestCtrlC:
    def test_the_first_ctrl_c_stops_the_wait_and_the_next_up_resumes(self, tmp_path: Path) -> None:
        """SIGINT to the engine while the job runs: `pulumi up` ends within seconds, the
        job is RUNNING and in the state, the waiter too (the job its problem), nothing is
        pending; the next `pulumi up` waits for it to succeed, with one submission in all."""
        if reason := missing():
            pytest.skip(reason)
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=RUN_S) as fake:
            project = Project.of_yaml(tmp_path, program(fake))
            output = interrupted_up(project, lambda: running(fake))
            stopped = re.search(
                r"\* the wait was stopped \(Ctrl-C\) before its jobs were done; last seen: "
                r"long (QUEUED|PENDING|RUNNING)\. The jobs keep running",
                output,
            )
            assert stopped, output
            assert running(fake), fake.jobs

            exported = json.loads(project.run("stack", "export").check().stdout)["deployment"]
            assert not exported.get("pending_operations"), exported.get("pending_operations")
            kept = {r["type"].rsplit(":", 1)[-1]: r for r in exported.get("resources") or []}
            assert {"TrainingJob", "JobWaiter"} <= set(kept)
            waiter = kept["JobWaiter"]["outputs"]
            assert waiter["states"]["long"] in ("QUEUED", "PENDING", "RUNNING")
            assert waiter["problems"]["long"].startswith("the wait was stopped (Ctrl-C)")

            preview = project.run("preview").check()
            assert "waits again for long, whose last wait was stopped (Ctrl-C)" in preview.output
            again = project.up().check()
            assert "long: SUCCEEDED" in again.output, again.output
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 1
            [waiter] = [r for r in project.state_resources() if r["type"].endswith(":JobWaiter")]
            assert waiter["outputs"]["states"] == {"long": "SUCCEEDED"}
            assert not waiter["outputs"]["problems"] and not waiter.get("initErrors")

    def test_ctrl_c_stops_a_tuning_jobs_own_wait_and_the_next_up_resumes(
        self, tmp_path: Path
    ) -> None:
        """A tuning job waits in its own create: SIGINT while its trials run ends `pulumi
        up` within seconds, the job kept in the state (no pending operation); the next
        `pulumi up` updates it (the engine does, for a resource kept by a failed create),
        which waits for it to succeed and fills its `bestTrial`, one submission in all."""
        if reason := missing():
            pytest.skip(reason)
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1}},
            "maxTrials": 2,
            "parallelTrials": 1,
        }
        with FakeVertex(queued_s=0.2, pending_s=0.2, trial_s=RUN_S / 2) as fake:
            sweep = program(fake)
            sweep["resources"] = {
                "sweep": {
                    "type": "vertex-training:HyperparameterTuningJob",
                    "properties": {"job": {"image": IMAGE, "wait": "succeeded", "study": study}},
                }
            }
            sweep["outputs"] = {"best": "${sweep.bestTrial}"}
            project = Project.of_yaml(tmp_path, sweep)
            sweeping = f"JOB_STATE_{states.RUNNING}"
            output = interrupted_up(
                project, lambda: any(j.state.name == sweeping for j in fake.tuning_jobs.values())
            )
            assert "* the wait was stopped (Ctrl-C) before its jobs were done" in output, output

            exported = json.loads(project.run("stack", "export").check().stdout)["deployment"]
            assert not exported.get("pending_operations"), exported.get("pending_operations")
            [kept] = [
                r for r in exported["resources"] if r["type"].endswith(":HyperparameterTuningJob")
            ]
            assert kept["outputs"]["state"] in ("QUEUED", "PENDING", "RUNNING")

            preview = project.run("preview").check()
            assert "its update waits for it (`wait: succeeded`)" in preview.output, preview.output
            again = project.up().check()
            assert "sweep: SUCCEEDED" in again.output, again.output
            assert [c.method for c in fake.calls].count("CreateHyperparameterTuningJob") == 1
            outputs = json.loads(project.run("stack", "output", "--json").check().stdout)
            assert outputs["best"]["state"] == "SUCCEEDED", outputs
            [job] = [r for r in project.state_resources() if r["type"].endswith("TuningJob")]
            assert job["outputs"]["state"] == "SUCCEEDED" and not job.get("initErrors")
