"""What the state keeps of a plugin job, on the real engine: a Pulumi YAML program
(``tests.test_engine_plugin.YamlProgram``) against the fake JobService.

The state keeps what the job's inputs cannot give (its ID, state, pages, waiter entry,
...) and the inputs once: not the request and the estimate, which a preview of a change
shows, nor the job's keys a second time (``job_shapes.RECORDED_INPUTS``). A stack that
the code before this change brought up, whose jobs kept all three among their outputs,
reads as unchanged, updates and refreshes with no job submitted again, its job's ID
kept: that code is taken from git (``PREVIOUS``) and runs as the plugin, as a user's
checkout of it would have.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_engine_plugin import YamlProgram, missing
from tests.test_engine_upgrade import release_tree
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
TYPE = "vertex-training:index:TrainingJob"
#: The last commit whose plugin recorded a job's request, estimate and keys among its
#: outputs (0.3.0 is not released: users of the plugin run a checkout of main).
PREVIOUS = "7d02f4e"
#: What a job's outputs no longer record.
LEFT_OUT = {"request", "estimate", "job"}


@pytest.fixture
def program(tmp_path: Path) -> Iterator[YamlProgram]:
    """One job of a 2h timeout, the stack exporting its request, estimate, ID and logs."""
    if reason := missing():
        pytest.skip(reason)
    with FakeVertex(queued_s=0.5, pending_s=0.5, run_s=60.0) as fake:
        made = YamlProgram(tmp_path, fake)
        made.resources = {"train": {"type": TYPE, "properties": {"job": keys()}}}
        made.outputs = {
            "request": "${train.request}",
            "estimate": "${train.estimate}",
            "jobId": "${train.jobId}",
            "logs": "${train.logsUrl}",
        }
        made.write()
        yield made


def keys(**more: Any) -> dict[str, Any]:
    return {"image": IMAGE, "machine": "n1-standard-4", "scheduling": {"timeout": "2h"}, **more}


def recorded(program: YamlProgram) -> dict[str, Any]:
    """The job's resource in the state: its ID, inputs and outputs."""
    [job] = [r for r in program.state() if r["type"] == TYPE]
    return job


def unchanged(program: YamlProgram) -> None:
    """A preview that must find nothing to change (the CLI fails one that does)."""
    program.run("preview", "--expect-no-changes").check()


class TestWhatTheStateKeeps:
    def test_a_job_keeps_its_outputs_and_its_inputs_once(self, program: YamlProgram) -> None:
        """After `up`: the job's outputs but those its inputs give; the stack exports its
        ID and logs page, its request and estimate null; a no-change preview is clean;
        the preview of a change shows both again."""
        program.run("up", "--yes", "--skip-preview").check()
        job = recorded(program)
        outputs = job["outputs"]
        assert LEFT_OUT.isdisjoint(outputs)
        assert outputs["jobId"] and outputs["consoleUrl"] and outputs["logsUrl"]
        assert outputs["waiterEntry"]["resourceName"] == job["id"]
        assert job["inputs"]["job"] == keys()
        stack = program.project.outputs()
        assert stack["jobId"] == outputs["jobId"] and stack["logs"] == outputs["logsUrl"]
        assert stack["request"] is None and stack["estimate"] is None, stack
        unchanged(program)

        program.resources["train"]["properties"]["job"] = keys(wait="running")
        program.write()
        text = program.run("preview", "--diff").check().output
        assert "~ 1 to update" in text, text
        # The stack's outputs in the preview: the request and the estimate of the job.
        assert f'imageUri: "{IMAGE}"' in text.replace("  ", "").replace(" :", ":"), text
        assert "summary" in text, text
        assert len(program.fake.jobs) == 1


class TestFromTheStateBefore:
    def test_a_job_recorded_whole_is_kept_and_its_state_shrinks(
        self, program: YamlProgram, tmp_path: Path
    ) -> None:
        """The previous code's plugin brings the job up (its outputs hold the request,
        estimate and keys); this one previews no change, updates a new `wait` in place
        and refreshes, without submitting the job again, and drops the three from the
        outputs as it writes them."""
        before = release_tree(PREVIOUS, tmp_path / "previous")
        program.project.env["PYTHONPATH"] = str(before / "provider")
        program.run("up", "--yes", "--skip-preview").check()
        job = recorded(program)
        assert set(job["outputs"]) >= LEFT_OUT, "the previous code did not run as the plugin"
        del program.project.env["PYTHONPATH"]

        unchanged(program)
        program.run("refresh", "--yes", "--skip-preview").check()
        refreshed = recorded(program)
        assert LEFT_OUT.isdisjoint(refreshed["outputs"])
        assert refreshed["id"] == job["id"]
        named = ("jobId", "consoleUrl", "logsUrl", "waiterEntry", "createTime", "project")
        assert [job["outputs"][k] for k in named] == [refreshed["outputs"][k] for k in named]
        unchanged(program)

        program.resources["train"]["properties"]["job"] = keys(wait="running")
        program.write()
        program.run("up", "--yes", "--skip-preview").check()
        updated = recorded(program)
        assert updated["id"] == job["id"] and LEFT_OUT.isdisjoint(updated["outputs"])
        assert len(program.fake.jobs) == 1
        assert [c.method for c in program.fake.calls].count("CreateCustomJob") == 1
        unchanged(program)
