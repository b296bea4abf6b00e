"""Progress on the waiter's row: the engine address, the lines, and the Log requests the
waiter sends to a fake Engine gRPC server on loopback, or does not send when it cannot."""

from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc

from tests.test_waiter import PROJECT, REGION, body, entry, run, submit
from vertex_training.api import states
from vertex_training.api.times import epoch_s
from vertex_training.backends.base import JobStatus, Trial
from vertex_training.backends.vertex import VertexBackend
from vertex_training.errors import JobEndedError
from vertex_training.resources.progress import (
    LOG_TIMEOUT_S,
    STATUS_REFRESH_S,
    EngineLog,
    Progress,
    backend_notices,
    duration_text,
    engine_address,
    lasting_line,
    resource_urn,
    status_line,
)
from vertex_training.testing import FakeVertex, ManualClock

pytestmark = pytest.mark.timeout(60)

URN = "urn:pulumi:test::vertex-training::pulumi-python:dynamic/vertex:JobWaiter::wait-for-jobs"
T0 = 1_700_000_000.0


class FakeEngine(engine_pb2_grpc.EngineServicer):
    """The engine's Log RPC on 127.0.0.1, recording every request."""

    def __init__(self) -> None:
        self.requests: list[engine_pb2.LogRequest] = []
        self._lock = threading.Lock()
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        engine_pb2_grpc.add_EngineServicer_to_server(self, self._server)
        self.address = f"127.0.0.1:{self._server.add_insecure_port('127.0.0.1:0')}"

    def start(self) -> FakeEngine:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop(grace=None).wait()

    def Log(self, request: engine_pb2.LogRequest, context: Any) -> empty_pb2.Empty:
        with self._lock:
            self.requests.append(request)
        return empty_pb2.Empty()

    def ephemeral(self) -> list[str]:
        return [r.message for r in self.requests if r.ephemeral]

    def lasting(self) -> list[str]:
        return [r.message for r in self.requests if not r.ephemeral]


@pytest.fixture
def engine() -> Iterator[FakeEngine]:
    fake = FakeEngine().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    """Jobs queued 1 s, pending 1 s, on a manual clock."""
    with FakeVertex(queued_s=1.0, pending_s=1.0, clock=clock) as fake:
        yield fake


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status(state: str = states.RUNNING, **fields: Any) -> JobStatus:
    times = {
        "create_time": "2023-11-14T22:13:20Z",  # T0
        "start_time": "2023-11-14T22:13:30.123456789Z",  # T0 + 10.1 s
    }
    return JobStatus(name="projects/p/locations/r/customJobs/1", state=state, **{**times, **fields})


class TestEngineAddress:
    """engine_address: the last host:port argument of the provider host's command line."""

    def test_the_dynamic_host_command_line(self) -> None:
        """`python -m pulumi.dynamic ADDRESS` gives ADDRESS."""
        assert engine_address(["/x/pulumi/dynamic/__main__.py", "127.0.0.1:4321"]) == (
            "127.0.0.1:4321"
        )

    def test_flags_before_the_address(self) -> None:
        """Logging and tracing flags come before the address."""
        argv = ["host", "--logtostderr", "-v=9", "--tracing", "http://x:1/t", "127.0.0.1:99"]
        assert engine_address(argv) == "127.0.0.1:99"

    def test_no_address(self) -> None:
        """A process that is no plugin (pytest here) has none."""
        assert engine_address(["pytest", "tests/test_progress.py::TestX"]) is None


class TestLines:
    """The status line and the lasting line."""

    def test_status_line_names_state_and_elapsed_time(self) -> None:
        """Each job: its state and how long it has run (since created when not started)."""
        queued = status(states.QUEUED, start_time="")
        line = status_line({"train": status(), "eval": queued}, T0 + 10.2 + 42 * 60)
        assert line == "eval: QUEUED 42m; train: RUNNING 42m"
        assert status_line({"train": status()}, None) == "train: RUNNING"

    def test_durations(self) -> None:
        """Seconds under a minute, minutes under an hour, then hours and minutes."""
        assert [duration_text(s) for s in (5, 125, 3 * 3600 + 300)] == ["5s", "2m", "3h05m"]

    def test_a_job_that_never_started_says_so(self) -> None:
        """A job left QUEUED reads as never started and left submitted, not "running"."""
        status = JobStatus(name="j", state="QUEUED", create_time="2026-11-26T10:00:00Z")
        line = lasting_line("train", status, "console", "logs")
        assert line.startswith("train: QUEUED ")
        assert ", never started; left submitted;" in line and "left running" not in line

    def test_a_retried_jobs_lasting_line_names_its_attempt(self) -> None:
        """The attempt that ended, its own time, and the time since attempt 1."""
        status = JobStatus(
            name="projects/p/locations/europe-west4/customJobs/3",
            state="SUCCEEDED",
            create_time="2026-11-26T10:00:40Z",
            start_time="2026-11-26T10:00:50Z",
            end_time="2026-11-26T10:01:00Z",
        )
        line = lasting_line(
            "train",
            status,
            "console",
            "logs",
            attempt="attempt 3/3",
            first_created=epoch_s("2026-11-26T10:00:00Z"),
        )
        assert line.startswith(
            "train: attempt 3/3 SUCCEEDED after 20.0s (ran 10.0s), 1m00s since attempt 1 "
            "was submitted"
        )

    def test_tuning_jobs_show_trials_and_the_best(self) -> None:
        """A tuning job adds its trials done and running, and the best metric so far."""
        trials = [
            Trial("1", "SUCCEEDED", metrics={"accuracy": 0.91}),
            Trial("2", "SUCCEEDED", metrics={"accuracy": 0.87}),
            Trial("3", "INFEASIBLE"),
            Trial("4", "ACTIVE"),
        ]
        sweep = status(trials=trials, metric_id="accuracy", goal="MAXIMIZE")
        line = status_line({"sweep": sweep}, T0 + 10.2 + 60)
        assert line == "sweep: RUNNING 60s, 3 trials done, 1 running, best accuracy 0.91"
        of_eight = status(trials=trials, metric_id="accuracy", goal="MAXIMIZE", max_trials=8)
        line = status_line({"sweep": of_eight}, T0 + 10.2 + 60)
        assert line == "sweep: RUNNING 60s, 3/8 trials done, 1 running, best accuracy 0.91"

    def test_lasting_line_of_an_ended_job(self) -> None:
        """State, time from submission to end, time run, console and logs links."""
        ended = status(states.SUCCEEDED, end_time="2023-11-14T23:00:00Z")
        line = lasting_line("train", ended, "https://console/1", "https://logs/1")
        assert line == (
            "train: SUCCEEDED after 46m40s (ran 46m29s); "
            "console: https://console/1; logs: https://logs/1"
        )

    def test_lasting_line_of_a_job_left_running(self) -> None:
        """A job waited for until `running` is left running."""
        assert lasting_line("serve", status(), "c", "l") == (
            "serve: RUNNING, left running; console: c; logs: l"
        )


class TestProgress:
    """Progress sends the status line when it changes, elapsed-only changes sparingly."""

    def test_elapsed_only_changes_wait_for_the_refresh(self, engine: FakeEngine) -> None:
        """A new state is sent at once; a new elapsed time after STATUS_REFRESH_S."""
        progress = Progress(EngineLog(engine.address, URN))
        jobs = {"train": status()}
        progress.waiting(jobs, T0 + 20, 0.0)
        progress.waiting(jobs, T0 + 22, 2.0)  # only elapsed changed: not yet
        progress.waiting(jobs, T0 + 20 + STATUS_REFRESH_S, STATUS_REFRESH_S)
        progress.waiting({"train": status(states.CANCELLING)}, T0 + 31, 11.0)
        assert engine.ephemeral() == [
            "train: RUNNING 9s",
            "train: RUNNING 19s",
            "train: CANCELLING 20s",
        ]
        assert {r.urn for r in engine.requests} == {URN}


class TestWaiterProgress:
    """The waiter, against the fake Vertex service, reports to the engine."""

    def test_state_lines_and_one_lasting_line_per_ended_job(
        self, engine: FakeEngine, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """Ephemeral state lines for the waiter's URN; one lasting line per job at its end."""
        short, long = submit(fake, "short", 3.0), submit(fake, "long", 8.0)
        log = EngineLog(engine.address, URN)
        entries = {"short": entry(fake, short), "long": entry(fake, long)}
        assert run(entries, clock, fake, log=log) == {"short": "SUCCEEDED", "long": "SUCCEEDED"}

        assert {r.urn for r in engine.requests} == {URN}
        assert all(r.severity == engine_pb2.INFO for r in engine.requests)
        ephemeral = engine.ephemeral()
        assert ephemeral[0] == "long: QUEUED 0s; short: QUEUED 0s"
        assert "long: RUNNING 0s; short: RUNNING 0s" in ephemeral
        assert ephemeral[-1] == ""  # the row is cleared when the wait is over
        lasting = engine.lasting()
        assert len(lasting) == 2
        expected = (("short", short, "5.0s", "3.0s"), ("long", long, "10.0s", "8.0s"))
        for line, (job, name, took, ran) in zip(lasting, expected, strict=True):
            job_id = name.rsplit("/", 1)[-1]
            assert line.startswith(f"{job}: SUCCEEDED after {took} (ran {ran}); ")
            assert f"console: https://console.cloud.google.com/vertex-ai/locations/{REGION}" in line
            assert f"/training/{job_id}/cpu?project={PROJECT}" in line
            assert "; logs: https://console.cloud.google.com/logs/query;query=" in line
            assert f"job_id%3D%22{job_id}%22" in line

    def test_a_failed_job_leaves_its_line_too(
        self, engine: FakeEngine, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """A job that ends FAILED leaves a lasting line before the wait fails."""
        fake.script("doomed", run_s=1.0, outcome="FAILED")
        name = VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(body("doomed"))
        with pytest.raises(JobEndedError):
            run({"doomed": entry(fake, name.name)}, clock, fake, log=EngineLog(engine.address, URN))
        assert [line.split(" after ")[0] for line in engine.lasting()] == ["doomed: FAILED"]


class TestBackendNotices:
    """The backends' warnings (a quota that paces calls) reach the engine under the
    resource the thread works for, and only while it does."""

    def test_a_warning_is_kept_under_the_bound_resource(self, engine: FakeEngine) -> None:
        job = resource_urn("test", "TrainingJob", "train")
        assert (
            job
            == "urn:pulumi:test::vertex-training::pulumi-python:dynamic/vertex:TrainingJob::train"
        )
        pacing = logging.getLogger("vertex_training.backends.pacing")
        log = EngineLog(engine.address, job)
        with backend_notices(log):
            pacing.warning("Vertex AI refused a call for quota")
            pacing.info("pace changed")  # below WARNING: not shown
        pacing.warning("after the block: nobody's")
        log.close()
        assert engine.lasting() == ["Vertex AI refused a call for quota"]
        assert [r.urn for r in engine.requests] == [job]

    def test_each_thread_keeps_its_own_resource(self, engine: FakeEngine) -> None:
        pacing = logging.getLogger("vertex_training.backends.pacing")
        logs = {name: EngineLog(engine.address, name) for name in ("a", "b")}

        def warn(name: str) -> None:
            with backend_notices(logs[name]):
                pacing.warning(f"for {name}")

        threads = [threading.Thread(target=warn, args=(name,)) for name in logs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted((r.urn, r.message) for r in engine.requests) == [
            ("a", "for a"),
            ("b", "for b"),
        ]


class TestUnreachableEngine:
    """An engine that cannot be reached changes nothing: waiting works as without one."""

    def test_a_closed_port_is_silent_and_waiting_is_unchanged(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """Same states, same reads, no error, and no time lost."""
        names = {n: submit(fake, n, s) for n, s in (("a", 3.0), ("b", 30.0))}
        entries = {n: entry(fake, job) for n, job in names.items()}
        log = EngineLog(f"127.0.0.1:{closed_port()}", URN)
        started = time.monotonic()
        with_log = run(entries, clock, fake, log=log)
        elapsed = time.monotonic() - started
        assert not log.enabled
        reads_with = len(fake.calls)

        names = {n: submit(fake, n, s) for n, s in (("a", 3.0), ("b", 30.0))}
        entries = {n: entry(fake, job) for n, job in names.items()}
        before = len(fake.calls)
        assert run(entries, clock, fake) == with_log == {"a": "SUCCEEDED", "b": "SUCCEEDED"}
        assert len(fake.calls) - before == reads_with - 2  # the two submissions
        assert elapsed < LOG_TIMEOUT_S + 2.0

    def test_an_engine_that_never_answers_costs_one_timeout(self) -> None:
        """A peer that accepts and never answers costs LOG_TIMEOUT_S once, then nothing."""
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            log = EngineLog(f"127.0.0.1:{listener.getsockname()[1]}", URN, timeout_s=0.2)
            started = time.monotonic()
            for _ in range(20):
                log.status("train: RUNNING 1s")
            log.lasting("train: SUCCEEDED")
            assert time.monotonic() - started < 1.5
            assert not log.enabled

    def test_no_address_or_no_urn_sends_nothing(self, engine: FakeEngine) -> None:
        """Without an engine address or a URN the log is off from the start."""
        for log in (EngineLog(None, URN), EngineLog(engine.address, "")):
            log.status("x")
            assert not log.enabled
        assert engine.requests == []
