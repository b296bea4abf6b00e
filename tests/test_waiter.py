"""The waiter's polling schedule: each job read after 5% of the time it has run, between
2 s and 60 s, against the fake Vertex service on a manual clock; the observers the loop
tells what it sees; a cancelled wait; an interrupted one; and what depends on a waiter."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from vertex_training.api import states
from vertex_training.backends.base import Backend, JobStatus
from vertex_training.backends.vertex import VertexBackend
from vertex_training.errors import JobEndedError
from vertex_training.resources import interrupted
from vertex_training.resources.cancellation import Cancellation, WaitCancelledError
from vertex_training.resources.state import ProviderSettings
from vertex_training.resources.wait_loop import Timing, follow
from vertex_training.resources.wait_plan import JobWait, WaitPlan
from vertex_training.resources.waiter import (
    POLL_FRACTION,
    POLL_MIN_S,
    poll_interval_s,
    wait_for,
)
from vertex_training.testing import FakeVertex, ManualClock

pytestmark = pytest.mark.timeout(60)

PROJECT, REGION = "test-project", "us-central1"
IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
HOUR_S = 3600.0


def body(name: str) -> dict[str, Any]:
    """A minimal CustomJob REST body."""
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "containerSpec": {"imageUri": IMAGE},
    }
    return {"displayName": name, "jobSpec": {"workerPoolSpecs": [pool]}}


def entry(fake: FakeVertex, resource_name: str, **wait: Any) -> dict[str, Any]:
    return {
        "resource_name": resource_name,
        "location": {"backend": "vertex", "project": PROJECT, "region": REGION},
        "wait": {"until": "succeeded", "timeout_s": 10 * 24 * HOUR_S, **wait},
    }


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    """A fake on a manual clock whose jobs start running at once."""
    with FakeVertex(queued_s=0, pending_s=0, clock=clock) as fake:
        yield fake


def submit(fake: FakeVertex, name: str, run_s: float) -> str:
    fake.script(name, run_s=run_s)
    return VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(body(name)).name


def run(
    entries: dict[str, Any], clock: ManualClock, fake: FakeVertex, **kwargs: Any
) -> dict[str, str]:
    """``wait_for`` on the manual clock (sleeping moves the clock), reaching ``fake``."""
    settings = ProviderSettings(api_endpoint=fake.address)
    return wait_for(
        entries, settings=settings, clock=clock, monotonic=clock, sleep=clock.advance, **kwargs
    )


def reads(fake: FakeVertex, name: str) -> int:
    return sum(1 for c in fake.calls if c.method == "GetCustomJob" and c.request.name == name)


class TestPollInterval:
    """poll_interval_s: 5% of the job's running time, clamped to [2 s, 60 s]."""

    @pytest.mark.parametrize(
        ("age", "interval"),
        [(None, 2.0), (0.0, 2.0), (40.0, 2.0), (100.0, 5.0), (1200.0, 60.0), (10 * HOUR_S, 60.0)],
    )
    def test_clamped_fraction_of_age(self, age: float | None, interval: float) -> None:
        """The interval is POLL_FRACTION of the age, never under 2 s nor over 60 s."""
        assert poll_interval_s(age) == pytest.approx(interval)


class TestSchedule:
    """wait_for reads each job when its own next read is due."""

    @pytest.mark.parametrize("run_s", [1.0, 10.0, 60.0, 300.0, 1000.0, 5000.0])
    def test_an_end_is_noticed_within_the_bound(
        self, fake: FakeVertex, clock: ManualClock, run_s: float
    ) -> None:
        """The wait returns within max(2 s, 5% of the job's running time) of its end."""
        started = clock()
        name = submit(fake, "job", run_s)
        assert run({"job": entry(fake, name)}, clock, fake) == {"job": states.SUCCEEDED}
        late = clock() - (started + run_s)
        assert 0 <= late <= max(POLL_MIN_S, POLL_FRACTION * run_s) + 1e-6

    def test_a_long_job_costs_one_read_a_minute(self, fake: FakeVertex, clock: ManualClock) -> None:
        """A job that has run for hours is read once a minute until it ends."""
        name = submit(fake, "long", 3 * HOUR_S)
        clock.advance(2 * HOUR_S)  # a rerun of `pulumi up`, two hours into the job
        run({"long": entry(fake, name)}, clock, fake)
        assert 60 <= reads(fake, name) <= 62

    def test_a_jobs_first_hour_costs_about_130_reads(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """2 s apart for 40 s, then 5% of the age, then once a minute from minute 20."""
        name = submit(fake, "young", 2 * HOUR_S)
        with pytest.raises(JobEndedError, match="still RUNNING"):
            run({"young": entry(fake, name, timeout_s=HOUR_S)}, clock, fake)
        assert 120 <= reads(fake, name) <= 140

    def test_only_due_jobs_are_read(self, fake: FakeVertex, clock: ManualClock) -> None:
        """A long job is read on its own schedule, whatever the other jobs do."""
        alone = submit(fake, "alone", HOUR_S)
        run({"alone": entry(fake, alone)}, clock, fake)
        short = submit(fake, "short", 30.0)
        long = submit(fake, "long", HOUR_S)
        run({"short": entry(fake, short), "long": entry(fake, long)}, clock, fake)
        assert reads(fake, short) <= 17  # at 0, 2, 4, ... 30 s
        assert reads(fake, long) == reads(fake, alone)

    def test_a_timeout_is_noticed_when_it_runs_out(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """A wait that times out fails at its timeout, not at the next minute's read."""
        name = submit(fake, "slow", 10 * HOUR_S)
        start = clock()
        with pytest.raises(JobEndedError, match="still RUNNING after waiting 3630"):
            run({"slow": entry(fake, name, timeout_s=3630)}, clock, fake)
        assert clock() - start == pytest.approx(3630)

    def test_jobs_waited_until_submitted_are_never_read(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """`wait: submitted` jobs are not read at all."""
        name = submit(fake, "fire", 60.0)
        assert run({"fire": entry(fake, name, until="submitted")}, clock, fake) == {}
        assert reads(fake, name) == 0

    def test_a_failed_job_fails_the_wait_with_its_logs(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """A job that ends FAILED raises with its error and logs link."""
        fake.script("doomed", run_s=5.0, outcome="FAILED", error_message="exit 1")
        backend = VertexBackend(PROJECT, REGION, api_endpoint=fake.address)
        name = backend.submit(body("doomed")).name
        with pytest.raises(JobEndedError, match=r"ended FAILED: exit 1\n  logs: https://"):
            run({"doomed": entry(fake, name)}, clock, fake)


class Recorder:
    """An observer that records what the loop tells it."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def read(self, job: JobWait, status: JobStatus | None) -> None:
        self.events.append(("read", job.name, status.state if status else "gone"))

    def left(self, job: JobWait, status: JobStatus, backend: Backend) -> None:
        self.events.append(("left", job.name, status.state))

    def waiting(self, latest: Mapping[str, JobStatus | None]) -> None:
        self.events.append(("waiting", ",".join(sorted(latest)), ""))


class TestObservers:
    """The loop tells its observers what it read, who left, and each round's jobs."""

    def test_an_observer_hears_each_read_and_each_leaving(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        short, long = submit(fake, "short", 3.0), submit(fake, "long", 30.0)
        plan = WaitPlan.of_entries({"short": entry(fake, short), "long": entry(fake, long)})
        recorder = Recorder()
        settings = ProviderSettings(api_endpoint=fake.address)
        timing = Timing(clock, clock, clock.advance)
        waited = follow(plan, settings=settings, timing=timing, observers=[recorder])
        assert waited == {"short": states.SUCCEEDED, "long": states.SUCCEEDED}
        assert recorder.events[:3] == [
            ("read", "long", states.RUNNING),
            ("read", "short", states.RUNNING),
            ("waiting", "long,short", ""),
        ]
        assert [e for e in recorder.events if e[0] == "left"] == [
            ("left", "short", states.SUCCEEDED),
            ("left", "long", states.SUCCEEDED),
        ]
        heard = [e for e in recorder.events if e[0] == "read"]
        assert len(heard) == reads(fake, short) + reads(fake, long)
        assert recorder.events[-1] == ("waiting", "", "")


class TestCancelledWaits:
    """The engine's cancel (Ctrl-C, through the plugin) ends a wait at once, naming each
    job's last state; the job keeps running (``vertex_training.resources.cancellation``)."""

    def test_a_cancel_stops_the_wait_at_once(self) -> None:
        """On the real clock, with a job that runs an hour: the wait ends at the
        cancel, and the job is left RUNNING on the service."""
        cancel = Cancellation()
        with FakeVertex(queued_s=0, pending_s=0) as fake:
            name = submit(fake, "long", HOUR_S)
            settings = ProviderSettings(api_endpoint=fake.address)
            threading.Timer(1.0, cancel.cancel).start()
            started = time.monotonic()
            with pytest.raises(WaitCancelledError, match="last seen: long RUNNING") as raised:
                wait_for({"long": entry(fake, name)}, settings=settings, cancel=cancel)
            assert time.monotonic() - started < 30.0  # not the hour the job runs
            assert raised.value.last_states == {"long": "RUNNING"}
            assert "next `pulumi up` waits for them again" in str(raised.value)
            assert [c.method for c in fake.calls].count("CancelCustomJob") == 0
            assert fake.jobs[name].state.name == "JOB_STATE_RUNNING"

    def test_a_wait_after_the_cancel_stops_after_its_first_reads(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """A job that is done is reported done; one still running stops the wait."""
        cancel = Cancellation()
        cancel.cancel()
        done, long = submit(fake, "done", 0.0), submit(fake, "long", HOUR_S)
        entries = {"done": entry(fake, done), "long": entry(fake, long)}
        with pytest.raises(WaitCancelledError) as raised:
            run(entries, clock, fake, cancel=cancel)
        assert raised.value.last_states == {"done": "SUCCEEDED", "long": "RUNNING"}


class TestInterruptedWaits:
    """A create's wait is marked while it runs; the next one finds a mark another engine
    left and says so (``vertex_training.resources.interrupted``)."""

    URN = "urn:pulumi:dev::proj::pulumi-python:dynamic/vertex:JobWaiter::wait-for-jobs"

    def test_a_wait_that_ended_leaves_no_mark(self, tmp_path: Path) -> None:
        with interrupted.marked(tmp_path, self.URN, "127.0.0.1:1001") as stopped_before:
            assert not stopped_before
            assert interrupted.mark_path(tmp_path, self.URN).is_file()
        assert not interrupted.mark_path(tmp_path, self.URN).exists()
        with pytest.raises(RuntimeError), interrupted.marked(tmp_path, self.URN, "127.0.0.1:1"):
            raise RuntimeError("the wait failed")
        assert not interrupted.mark_path(tmp_path, self.URN).exists()

    def test_a_mark_another_engine_left_is_reported_once(self, tmp_path: Path) -> None:
        """A mark left by a killed engine: the next engine's wait is told, and its own
        mark goes when it ends; another waiter's mark is not its business."""
        path = interrupted.mark_path(tmp_path, self.URN)
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps({"urn": self.URN, "engine": "127.0.0.1:1001"}))
        other = self.URN.replace("dev", "prod")
        with interrupted.marked(tmp_path, other, "127.0.0.1:1002") as stopped_before:
            assert not stopped_before
        with interrupted.marked(tmp_path, self.URN, "127.0.0.1:1002") as stopped_before:
            assert stopped_before
        with interrupted.marked(tmp_path, self.URN, "127.0.0.1:1003") as stopped_before:
            assert not stopped_before

    def test_no_engine_or_no_room_marks_nothing_and_fails_nothing(self, tmp_path: Path) -> None:
        """Without an engine (a provider called directly) nothing is written; a project
        directory that cannot be written to does not fail the wait."""
        with interrupted.marked(tmp_path, self.URN, "") as stopped_before:
            assert not stopped_before
        assert not (tmp_path / interrupted.WAITS_DIR).exists()
        blocked = tmp_path / "file"
        blocked.write_text("not a directory")
        with interrupted.marked(blocked, self.URN, "127.0.0.1:1001") as stopped_before:
            assert not stopped_before


#: A program under the SDK's mocks, run in a process of its own (the SDK keeps what a
#: failed program leaves, so two programs in one process are not independent): a
#: waiter whose outputs say ``problems`` (argv[1], JSON; argv[2]: preview or update), a
#: resource that depends on it (argv[3]: by ``depends_on``, or by an ``input`` made of
#: its outputs), and a stack output; it prints what was registered and the error, as JSON.
MOCKED_PROGRAM = """
import json, sys
import pulumi
from pulumi.runtime import mocks
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await
from vertex_training.resources.waiter import JobWaiter

problems, preview = json.loads(sys.argv[1]), sys.argv[2] == "preview"
registered = []


class Mocks(mocks.Mocks):
    def new_resource(self, args):
        registered.append(args.name)
        outputs = dict(args.inputs)
        if args.typ.endswith(":JobWaiter"):
            outputs["problems"] = problems
            outputs["states"] = {"train": "FAILED" if problems else "SUCCEEDED"}
        return f"{args.name}-id", outputs

    def call(self, args):
        return {}


def program():
    waiter = JobWaiter("wait-for-jobs", {}, {})
    if sys.argv[3] == "input":
        pulumi.CustomResource("test:index:Deployed", "deploy", {"after": waiter.states})
    else:
        pulumi.CustomResource(
            "test:index:Deployed", "deploy", {}, pulumi.ResourceOptions(depends_on=[waiter])
        )
    pulumi.export("states", waiter.states)


mocks.set_mocks(Mocks(), project="p", stack="s", preview=preview)
error = None
try:
    _sync_await(run_pulumi_func(program))
except pulumi.RunError as exc:
    error = str(exc)
print(json.dumps({"registered": registered, "error": error}))
"""


class TestWhatDependsOnTheWaiter:
    """A resource that depends on the waiter is registered only when no job failed the
    wait (``JobWaiter.urn``); the stack outputs are registered either way."""

    def run(
        self, problems: dict[str, str], preview: bool = False, by: str = "depends_on"
    ) -> dict[str, Any]:
        result = subprocess.run(
            [
                sys.executable,
                "-c",
                MOCKED_PROGRAM,
                json.dumps(problems),
                "preview" if preview else "update",
                by,
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        ran: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
        return ran

    @pytest.mark.parametrize("by", ["depends_on", "input"])
    def test_a_failed_wait_registers_no_dependent(self, by: str) -> None:
        failed = "job train (...) ended FAILED: exit 1"
        ran = self.run({"train": failed}, by=by)
        assert ran == {"registered": ["wait-for-jobs"], "error": failed}

    def test_a_wait_that_reached_its_states_registers_the_dependent(self) -> None:
        ran = self.run({})
        assert ran == {"registered": ["wait-for-jobs", "deploy"], "error": None}

    def test_a_preview_is_not_gated(self) -> None:
        """In a preview nothing was waited for: the waiter's URN is the SDK's own."""
        ran = self.run({"train": "recorded by the last update"}, preview=True)
        assert ran == {"registered": ["wait-for-jobs", "deploy"], "error": None}
