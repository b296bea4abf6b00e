"""The loop that waits: reads each job of a wait plan when it is due, asks its kind's
checker what to do, and tells the observers what it saw.

The parts apart:

- what to wait for: ``vertex_training.resources.wait_plan`` (a ``WaitPlan``, read once
  from whichever host's entries);
- whether a job is where its wait asks: ``vertex_training.resources.readiness`` (one
  pure checker per kind of job);
- a job's next attempt after a failure its ``retry`` names:
  ``vertex_training.resources.retries``;
- why a job waits or failed (reasons, failure classes, log lines):
  ``vertex_training.resources.why``;
- what is shown on the waiter's row and kept of the statuses seen: the observers
  (``WaitObserver``), which the loop tells and never asks.

The loop itself owns the schedule (each job read after ``poll_interval_s``, and no later
than when one of its timeouts runs out), the engine's deadline for the operation that
waits (its ``customTimeouts``, where the host is given one: the plugin), and the engine's
cancel (Ctrl-C), which ends the wait at once with ``WaitCancelledError``.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from vertex_training.errors import JobEndedError
from vertex_training.resources.cancellation import PROCESS, Cancellation, WaitCancelledError
from vertex_training.resources.progress import EngineLog, Progress, age_s
from vertex_training.resources.readiness import Problem, Shortfall, Verdict, readiness_of
from vertex_training.resources.retries import Retries
from vertex_training.resources.state import ProviderSettings
from vertex_training.resources.why import Why

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus
    from vertex_training.resources.wait_plan import JobWait, WaitPlan

#: Polling. Each job is read again after POLL_FRACTION of the time it has run (since it
#: started RUNNING; before that, since it was created), never sooner than POLL_MIN_S
#: after the last read and never later than POLL_MAX_S: a job's end is noticed within
#: max(2 s, 5% of its running time), and a job that has run for 20 minutes or more costs
#: one read (GetCustomJob or GetHyperparameterTuningJob) a minute.
#:
#: The quota this is designed for: Vertex AI's "Resource management (CRUD) requests",
#: 600 requests per minute per project and region by default (the request quotas table
#: of https://cloud.google.com/vertex-ai/docs/quotas; JobService reads count there: the
#: page gives no separate figure for them). At steady state a stack of N long jobs takes
#: N reads a minute (12 jobs: 2% of the quota). A job's first hour costs about 130 reads:
#: one every 2 s for its first 40 s, then one per 5% of its age, then one a minute from
#: minute 20. The burst is at the start, where N jobs submitted together read 30 times a
#: minute each for 40 s: 20 jobs started at once would use the region's whole quota for
#: those seconds (a read refused for quota, RESOURCE_EXHAUSTED, is retried with backoff
#: by the Vertex backend).
POLL_FRACTION = 0.05
POLL_MIN_S = 2.0
POLL_MAX_S = 60.0


def poll_interval_s(age: float | None) -> float:
    """Seconds until a job that has run ``age`` seconds is read again (POLL_MIN_S when
    its age is unknown)."""
    if age is None:
        return POLL_MIN_S
    return min(max(POLL_FRACTION * age, POLL_MIN_S), POLL_MAX_S)


@dataclass(frozen=True)
class Timing:
    """The clocks a wait reads, injectable for tests: ``clock`` (wall time, compared
    with the server's timestamps), ``monotonic`` (the schedule and the timeouts), and
    ``sleep`` (by default the cancel's pause, which ends at the cancel)."""

    clock: Callable[[], float] = time.time
    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] | None = None


class WaitObserver(Protocol):
    """What the loop tells of a wait as it goes; an observer decides nothing."""

    def read(self, job: JobWait, status: JobStatus | None) -> None:
        """``job`` was read: ``status`` (None: it is gone)."""

    def left(self, job: JobWait, status: JobStatus, backend: Backend) -> None:
        """``job`` left the wait in ``status``: it reached its state, ended, or timed out."""

    def waiting(self, latest: Mapping[str, JobStatus | None]) -> None:
        """A round of reads is done; ``latest``: each job still waited for, as last read."""


class SeenStatuses:
    """Keeps each job's last status read (a job that is gone keeps its last one)."""

    def __init__(self, seen: dict[str, Any]) -> None:
        self.seen = seen

    def read(self, job: JobWait, status: JobStatus | None) -> None:
        if status is not None:
            self.seen[job.name] = status

    def left(self, job: JobWait, status: JobStatus, backend: Backend) -> None:
        """Nothing more to keep."""

    def waiting(self, latest: Mapping[str, JobStatus | None]) -> None:
        """Nothing more to keep."""


class ShownProgress:
    """The waiter's row (``progress.Progress``): a status line after each round, with
    why jobs are not running yet and which attempt a retried job is at; a lasting line
    for each job that leaves the wait."""

    def __init__(self, progress: Progress, why: Why, retries: Retries, timing: Timing) -> None:
        self.progress = progress
        self.why = why
        self.retries = retries
        self.timing = timing

    def read(self, job: JobWait, status: JobStatus | None) -> None:
        """Shown with the round (``waiting``)."""

    def left(self, job: JobWait, status: JobStatus, backend: Backend) -> None:
        attempt, first_created = self.retries.which(job.name)
        self.progress.ended(
            job.name,
            status,
            backend.console_url(job.resource_name),
            backend.logs_url(job.resource_name),
            attempt=attempt,
            first_created=first_created,
        )

    def waiting(self, latest: Mapping[str, JobStatus | None]) -> None:
        reasons = self.retries.with_attempts(self.why.reasons)
        self.progress.waiting(latest, self.timing.clock(), self.timing.monotonic(), reasons)


class Backends:
    """The backend of each location a wait reads, connected once per location."""

    def __init__(self, connection: Mapping[str, Any]) -> None:
        self.connection = connection
        self._connected: dict[str, Backend] = {}

    def of(self, location: Mapping[str, Any]) -> Backend:
        from vertex_training.backends import connect

        key = json.dumps(location, sort_keys=True)
        if key not in self._connected:
            self._connected[key] = connect(location, self.connection)
        return self._connected[key]


@dataclass
class JobWatch:
    """One job while it is waited for: the attempt it follows, when that attempt began
    to be waited for, when it is read next, and what it was last read as."""

    job: JobWait
    started: float
    due: float
    status: JobStatus | None = None


def follow(
    plan: WaitPlan,
    seen: dict[str, Any] | None = None,
    *,
    report: dict[str, dict[str, Any]] | None = None,
    settings: ProviderSettings | None = None,
    log: EngineLog | None = None,
    timing: Timing | None = None,
    cancel: Cancellation = PROCESS,
    deadline_s: float | None = None,
    observers: Sequence[WaitObserver] = (),
) -> dict[str, str]:
    """Wait until each job of ``plan`` is where its wait asks; return each job's last
    state (``waiter.wait_for`` says what each argument holds). ``deadline_s``: the
    engine's timeout for the operation that waits (its ``customTimeouts``), in seconds
    from now; None or 0 for none. ``observers`` are told what the wait sees, after the
    waiter's row and ``seen``."""
    settings = settings or ProviderSettings(base_dir=str(Path.cwd()))
    timing = timing or Timing()
    progress = Progress(log or EngineLog(None, ""))
    report = {} if report is None else report
    why = Why(report)
    retries = Retries(plan, settings, progress, report)
    told: list[WaitObserver] = [ShownProgress(progress, why, retries, timing), *observers]
    if seen is not None:
        told.insert(0, SeenStatuses(seen))
    wait = _Wait(
        backends=Backends(settings.connection()),
        why=why,
        retries=retries,
        observers=told,
        timing=timing,
        cancel=cancel,
    )
    return wait.run(plan, deadline_s)


@dataclass
class _Wait:
    """One wait's loop (``follow``): what it reads with, reports to and heeds."""

    backends: Backends
    why: Why
    retries: Retries
    observers: list[WaitObserver]
    timing: Timing
    cancel: Cancellation
    #: The jobs that left the wait where it asks, by name: their last state.
    final: dict[str, str] = field(default_factory=dict)
    #: The engine's timeout for the wait (inf: none), and when it runs out (monotonic).
    deadline_s: float = math.inf
    ends: float = math.inf

    def run(self, plan: WaitPlan, deadline_s: float | None) -> dict[str, str]:
        monotonic = self.timing.monotonic
        start = monotonic()
        self.deadline_s = deadline_s or math.inf
        self.ends = start + self.deadline_s
        watches = {job.name: JobWatch(job, start, start) for job in plan.waited}
        while watches:
            for name in sorted(watches):
                if watches[name].due > monotonic():
                    continue
                if self._read(watches[name]):
                    del watches[name]
            latest = {name: watch.status for name, watch in watches.items()}
            for observer in self.observers:
                observer.waiting(latest)
            if watches:
                self._pause(min(watch.due for watch in watches.values()) - monotonic(), latest)
        if self.why.problems:
            raise JobEndedError("\n".join(self.why.problems.values()))
        return self.final

    def _read(self, watch: JobWatch) -> bool:
        """Read the job ``watch`` follows and act on its checker's decision; whether it
        left the wait."""
        job, monotonic = watch.job, self.timing.monotonic
        backend = self.backends.of(job.location)
        status = watch.status = backend.get(job.resource_name)
        for observer in self.observers:
            observer.read(job, status)
        self.why.observe(job.name, {"location": job.location}, status, self.timing.clock())
        decision = readiness_of(job.resource_name).check(job, status, monotonic() - watch.started)
        problem = decision.problem
        if decision.verdict is Verdict.RETRY and status is not None:
            moved = self.retries.after_failure(job, status)
            if moved is not None:
                # Its next attempt (or a live one an earlier run submitted): wait for that
                # one instead, from now.
                watch.job, watch.status = moved
                watch.due = watch.started = monotonic()
                self.why.left(job.name)
                return False
        if decision.verdict is Verdict.WAITING and status is not None:
            if monotonic() < self.ends:
                # Read again when due, and no later than when a timeout runs out.
                interval = poll_interval_s(age_s(status, self.timing.clock()))
                watch.due = min(monotonic() + interval, watch.started + decision.limit_s, self.ends)
                return False
            problem = Problem(Shortfall.ENGINE_TIMEOUT, status.state, "", self.deadline_s)
        self._leave(job, status, problem, backend)
        return True

    def _leave(
        self, job: JobWait, status: JobStatus | None, problem: Problem | None, backend: Backend
    ) -> None:
        """``job`` leaves the wait: reached (no ``problem``), or failed it."""
        if problem is not None:
            text = problem.text(job, backend.logs_url)
            if status is not None:
                text += self.why.failed(job.name, backend, status)
            self.why.problems[job.name] = text
        elif status is not None:
            self.final[job.name] = status.state
        self.why.left(job.name)
        if status is not None:
            self.retries.ended(job.name, status)
            for observer in self.observers:
                observer.left(job, status, backend)

    def _pause(self, seconds: float, latest: Mapping[str, JobStatus | None]) -> None:
        """Pause between reads (``Timing.sleep``, else the cancel's pause, which ends at
        the cancel). Once cancelled, ``WaitCancelledError`` with each job's last state
        (those that left the wait, and those still waited for, ``latest``), the jobs
        still waited for named as unfinished."""
        (self.timing.sleep or self.cancel.sleep)(max(0.0, seconds))
        if self.cancel.cancelled:
            last = {name: status.state for name, status in latest.items() if status is not None}
            raise WaitCancelledError({**self.final, **last}, sorted(latest))
