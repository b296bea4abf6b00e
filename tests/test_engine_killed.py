"""An engine killed mid-wait leaves no process of the project's behind, in either host.

The engine alone is SIGKILLed (not its process group, as a crash or an out-of-memory kill
ends it): within ``GONE_WITHIN_S`` every process it had started that runs this project's
code (the plugin, the dynamic resources' host, the Python program) has ended, and Vertex
AI (the fake) hears nothing more from them. The language hosts (``pulumi-language-*``)
are Pulumi's own and outlive their engine (a YAML program runs inside its host); they
make no call to Google, and the test ends them itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import pytest

from tests.engine import Project, tools_missing
from tests.test_engine_plugin import YamlProgram
from tests.test_engine_plugin import missing as plugin_missing
from vertex_training.resources.engine_watch import ENGINE_CHECK_S, ENGINE_MISSES
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing())),
]

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
#: "A few seconds": the providers look for their engine every ENGINE_CHECK_S and give up
#: after ENGINE_MISSES refusals; the rest is slack for a loaded machine.
GONE_WITHIN_S = ENGINE_CHECK_S * (ENGINE_MISSES + 1) + 4
#: How long the test waits for the run to reach its wait.
START_TIMEOUT_S = 120

#: A Python program of the dynamic resources: one job, waited for until it succeeds.
WAITING_PROGRAM = """
import vertex_training as vt

train = vt.TrainingJob(
    "train",
    vt.TrainingJobArgs(image="us-docker.pkg.dev/test-project/train/trainer:1", wait="succeeded"),
    project="test-project",
    region="us-central1",
)
vt.wait_for_jobs("wait-for-jobs", [train])
"""


def descendants(root: int) -> dict[int, str]:
    """Every process under ``root`` now, with its command line."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: dict[int, str] = {}
    frontier = [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in found:
                with contextlib.suppress(OSError):
                    cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
                    found[child] = cmdline.replace(b"\0", b" ").decode(errors="replace")
                frontier.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def kill_mid_wait_and_watch(runner: Project, fake: FakeVertex) -> None:
    """Start `pulumi up`, SIGKILL the engine once the job is being waited for, and check
    that every process the engine had started ends within GONE_WITHIN_S, and that
    nothing reaches the fake after that."""
    proc = runner.start("up", "--yes", "--skip-preview")
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        gets = [c for c in fake.calls if c.method == "GetCustomJob"]
        if fake.jobs and len(gets) >= 2:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    else:
        pytest.fail("the run never waited for its job")
    started = descendants(proc.pid)
    ours = {
        pid: cmd
        for pid, cmd in started.items()
        if not Path(cmd.split(" ", 1)[0]).name.startswith("pulumi-language-")
    }
    assert any("vertex_training" in c or "pulumi.dynamic" in c for c in started.values()), started
    try:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        killed = time.monotonic()
        while time.monotonic() - killed < GONE_WITHIN_S:
            if not any(alive(pid) for pid in ours):
                break
            time.sleep(0.2)
        left = {pid: cmd for pid, cmd in ours.items() if alive(pid)}
        assert not left, f"still running {GONE_WITHIN_S:.0f} s after the engine was killed: {left}"
        heard = len(fake.calls)
        time.sleep(2 * ENGINE_CHECK_S)
        assert len(fake.calls) == heard, fake.calls[heard:]
    finally:
        for pid in started:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


class TestEngineKilled:
    """SIGKILL of the engine alone, mid-wait."""

    def test_the_dynamic_resources_host_and_the_program_end(self, tmp_path: Path) -> None:
        """A Python program of the dynamic resources: nothing of the run is left."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=600.0) as fake:
            project = Project.of_program(tmp_path, WAITING_PROGRAM, {}, project_name="killed")
            project.write_stack({"vertex-training:apiEndpoint": fake.address})
            project.init()
            kill_mid_wait_and_watch(project, fake)

    @pytest.mark.polyglot
    def test_the_plugin_ends(self, tmp_path: Path) -> None:
        """A YAML program through the plugin: nothing of the run is left."""
        if reason := plugin_missing():
            pytest.skip(reason)
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=600.0) as fake:
            program = YamlProgram(tmp_path, fake)
            program.resources = {
                "train": {
                    "type": "vertex-training:TrainingJob",
                    "properties": {"job": {"image": IMAGE, "wait": "succeeded"}},
                },
                "wait-for-jobs": {
                    "type": "vertex-training:JobWaiter",
                    "properties": {"jobs": ["${train.waiterEntry}"]},
                },
            }
            program.write()
            program.project.init()
            kill_mid_wait_and_watch(program.project, fake)
