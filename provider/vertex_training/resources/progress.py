"""Progress of the jobs the waiter waits for, shown by `pulumi up` on the waiter's row.

Pulumi's dynamic provider host gives a provider no way to log. It is launched as
``python -m pulumi.dynamic [flags] <engine address>``, though, so the engine's address is
in the provider process's ``sys.argv``, and the engine's ``Log`` RPC (``pulumirpc.Engine``,
``LogRequest``: severity, message, urn, streamId, ephemeral) takes the URN of the resource
a message belongs to:

- an *ephemeral* message replaces the status shown on that resource's row of the
  interactive display and is not kept: the waiter sends one line for all its jobs (state
  and elapsed time, trials of a tuning job) whenever that line changes;
- a *lasting* (non-ephemeral) message is kept: the interactive display lists it under
  the resource at the end, and the non-interactive display (CI logs) prints it. The
  waiter sends one per job that ends: final state, duration, console and logs links.

The backends tell the user what slows them down through Python's ``logging`` (a Vertex
AI request quota that paces every call: ``vertex_training.backends.pacing``); the host shows no
log. ``backend_notices`` sends those warnings, while a create or a wait runs, under the
resource the thread works for: the job being created, or the waiter.

``EngineLog`` connects lazily, gives each ``Log`` call ``LOG_TIMEOUT_S``, and turns every
failure into silence: after the first failed call it sends nothing more, so an engine it
cannot reach costs a wait at most one timeout, and never fails it. The line formats are
plain functions (``status_line``, ``lasting_line``) so that tests read them directly.
"""

from __future__ import annotations

import contextlib
import logging
import math
import re
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from vertex_training.api import states
from vertex_training.api.times import epoch_s
from vertex_training.backend_kinds import kind_of
from vertex_training.backends.base import (
    TRIAL_ACTIVE,
    TRIAL_INFEASIBLE,
    TRIAL_SUCCEEDED,
    JobStatus,
    RegisteredModel,
    location_of,
)
from vertex_training.keys import CONFIG_NAMESPACE
from vertex_training.urns import urn_of

#: Each Log call's deadline, in seconds: the engine is a local process and answers in
#: about a millisecond; a call this slow means it is gone.
LOG_TIMEOUT_S = 0.5

#: The status line is sent again when a job's state or trials change, and otherwise (its
#: elapsed times only) at most this often, in seconds: the non-interactive display prints
#: every status it is sent, one CI log line each.
STATUS_REFRESH_S = 10.0

#: The logger under which the backends warn the user (``vertex_training.backends.pacing``).
BACKENDS_LOGGER = "vertex_training.backends"

#: An engine address as the CLI passes it to a plugin: host:port (IPv6 in brackets).
_ADDRESS = re.compile(r"^(\[[0-9a-fA-F:]+\]|[\w.-]+):\d{1,5}$")


def engine_address(argv: Sequence[str] | None = None) -> str | None:
    """The engine's address from a plugin's command line (``sys.argv`` by default): the
    last argument that is ``host:port``; the CLI puts its flags (``--logtostderr``,
    ``-v=9``, ``--tracing URL``) before it. None when there is none (not a plugin)."""
    args = list(sys.argv if argv is None else argv)[1:]
    for arg in reversed(args):
        if _ADDRESS.match(arg):
            return arg
    return None


class EngineLog:
    """Sends progress messages for one resource to the engine; silent on any failure.

    ``EngineLog(None, urn)`` (no engine) and ``EngineLog(address, "")`` (no URN) send
    nothing. Not shared between threads: each wait makes its own.
    """

    def __init__(self, address: str | None, urn: str, timeout_s: float = LOG_TIMEOUT_S) -> None:
        self.address = address
        self.urn = urn
        self.timeout_s = timeout_s
        self._channel: Any = None
        self._stub: Any = None
        self._broken = not (address and urn)

    @classmethod
    def from_process(cls, urn: str | None) -> EngineLog:
        """The log of the resource ``urn``, through the engine this provider process was
        launched for (see ``engine_address``)."""
        return cls(engine_address(), urn or "")

    @property
    def enabled(self) -> bool:
        """Whether messages are still being sent (no failure so far)."""
        return not self._broken

    def status(self, message: str) -> None:
        """Show ``message`` on the resource's row for now (ephemeral)."""
        self._send(message, ephemeral=True)

    def lasting(self, message: str) -> None:
        """Keep ``message`` under the resource, in both displays (non-ephemeral)."""
        self._send(message, ephemeral=False)

    def warning(self, message: str) -> None:
        """Keep ``message`` under the resource as a warning."""
        self._send(message, ephemeral=False, warning=True)

    def close(self) -> None:
        if self._channel is not None:
            with contextlib.suppress(Exception):  # closing must never fail a wait
                self._channel.close()
            self._channel = self._stub = None

    def _send(self, message: str, *, ephemeral: bool, warning: bool = False) -> None:
        if self._broken:
            return
        try:
            from pulumi.runtime.proto import engine_pb2

            if self._stub is None:
                import grpc
                from pulumi.runtime.proto import engine_pb2_grpc

                self._channel = grpc.insecure_channel(self.address or "")
                self._stub = engine_pb2_grpc.EngineStub(self._channel)
            request = engine_pb2.LogRequest(
                severity=engine_pb2.WARNING if warning else engine_pb2.INFO,
                message=message,
                urn=self.urn,
                ephemeral=ephemeral,
            )
            self._stub.Log(request, timeout=self.timeout_s)
        except Exception:  # noqa: BLE001 - progress is best effort: any failure means silence
            self._broken = True
            self.close()


def resource_urn(stack: str, type_name: str, name: str, project: str = "") -> str:
    """The URN of the dynamic resource ``name`` of type ``type_name`` (``TrainingJob``,
    ``HyperparameterTuningJob``), at the root of ``stack`` of the Pulumi ``project`` (by
    default, and for a job recorded by a release up to 0.3.0, this repository's)."""
    type_token = f"pulumi-python:dynamic/vertex:{type_name}"
    return urn_of(stack, project or CONFIG_NAMESPACE, type_token, name)


#: The log each thread's backend warnings go to (``backend_notices``).
_BOUND = threading.local()
_INSTALL_LOCK = threading.Lock()


class _ToEngine(logging.Handler):
    """Sends a backend's warning to the log bound to the thread that logged it."""

    def emit(self, record: logging.LogRecord) -> None:
        log: EngineLog | None = getattr(_BOUND, "log", None)
        if log is not None:
            log.lasting(record.getMessage())


@contextlib.contextmanager
def backend_notices(log: EngineLog) -> Iterator[None]:
    """While the block runs in this thread, the backends' warnings (``BACKENDS_LOGGER``)
    are kept under ``log``'s resource (a lasting line each)."""
    logger = logging.getLogger(BACKENDS_LOGGER)
    with _INSTALL_LOCK:
        if not any(isinstance(h, _ToEngine) for h in logger.handlers):
            handler = _ToEngine(logging.WARNING)
            logger.addHandler(handler)
    previous = getattr(_BOUND, "log", None)
    _BOUND.log = log
    try:
        yield
    finally:
        _BOUND.log = previous


class Progress:
    """What the waiter shows: a status line while it waits, one lasting line per job that
    leaves the wait. Sends the status line when a state or trial count changed, or when
    only elapsed times did and STATUS_REFRESH_S passed since it was last sent."""

    def __init__(self, log: EngineLog) -> None:
        self.log = log
        self._shown = ""
        self._shown_states = ""
        self._shown_at = -math.inf

    def waiting(
        self,
        statuses: Mapping[str, JobStatus | None],
        now: float,
        mono: float,
        reasons: Mapping[str, str] | None = None,
    ) -> None:
        """The jobs still waited for, as of ``now`` (wall clock) and ``mono`` (monotonic),
        with why some are not running yet (``reasons``, by job name)."""
        line = status_line(statuses, now, reasons)
        changed = status_line(statuses, None, reasons)
        if line == self._shown:
            return
        if changed == self._shown_states and mono - self._shown_at < STATUS_REFRESH_S:
            return
        self.log.status(line)
        self._shown, self._shown_states, self._shown_at = line, changed, mono

    def note(self, message: str) -> None:
        """A lasting line about a job that stays waited for (an attempt that ended, the
        next one submitted)."""
        self.log.lasting(message)

    def ended(
        self,
        name: str,
        status: JobStatus,
        console_url: str,
        logs_url: str,
        *,
        attempt: str = "",
        first_created: float | None = None,
    ) -> None:
        """A job left the wait: it ended, reached its policy or timed out."""
        self.log.lasting(
            lasting_line(
                name, status, console_url, logs_url, attempt=attempt, first_created=first_created
            )
        )


# -- the lines --------------------------------------------------------------------------


def age_s(status: JobStatus, now: float) -> float | None:
    """How long the job has been in its current phase at ``now`` (epoch seconds): since
    it started running when it has, else since it was created; None when the backend gave
    no time. Never negative (a clock behind the server's reads as 0)."""
    since = epoch_s(status.start_time) or epoch_s(status.create_time)
    return None if since is None else max(0.0, now - since)


def duration_text(seconds: float) -> str:
    """``42s``, ``95s``, ``42m``, ``3h05m``: seconds under two minutes (a line that moves
    by whole minutes looks hung), minutes under an hour."""
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _trial_text(status: JobStatus) -> str:
    done = sum(t.state in (TRIAL_SUCCEEDED, TRIAL_INFEASIBLE) for t in status.trials)
    active = sum(t.state == TRIAL_ACTIVE for t in status.trials)
    of = f"/{status.max_trials}" if status.max_trials else ""
    text = f"{done}{of} trial{'s' if done != 1 or of else ''} done"
    if active:
        text += f", {active} running"
    best = status.best_trial
    if best is not None:
        text += f", best {status.metric_id} {best.metrics[status.metric_id]:.4g}"
    return text


def job_text(name: str, status: JobStatus | None, now: float | None, reason: str = "") -> str:
    """One job in the waiter's status line: ``example: RUNNING 42m`` or, for a tuning job,
    ``sweep: RUNNING 5m, 3/8 trials done, 2 running, best accuracy 0.91``; without the
    elapsed time when ``now`` is None; ``example: QUEUED 5m (queued for quota: ...)``
    with a ``reason`` it is not running yet."""
    if status is None:
        return f"{name}: not found"
    age = None if now is None else age_s(status, now)
    text = f"{name}: {status.state}" + (f" {duration_text(age)}" if age is not None else "")
    if status.metric_id:
        text += f", {_trial_text(status)}"
    if reason:
        text += f" ({reason})"
    return text


def status_line(
    statuses: Mapping[str, JobStatus | None],
    now: float | None,
    reasons: Mapping[str, str] | None = None,
) -> str:
    """The waiter's row while it waits: every job still waited for, by name (without
    elapsed times when ``now`` is None), each with why it is not running yet when there
    is a reason."""
    reasons = reasons or {}
    return "; ".join(
        job_text(name, statuses[name], now, reasons.get(name, "")) for name in sorted(statuses)
    )


def lasting_line(
    name: str,
    status: JobStatus,
    console_url: str,
    logs_url: str,
    *,
    attempt: str = "",
    first_created: float | None = None,
) -> str:
    """The line a job leaves when it leaves the wait: its state (naming the ``attempt`` of
    a retried job), and how long it took from submission to its end (and how long it ran;
    for a retried job, how long since attempt 1 was submitted, ``first_created``) when it
    ended, or that it was left running (its policy was `running`, or its wait timed out);
    then where to look."""
    created, started, ended = (
        epoch_s(status.create_time),
        epoch_s(status.start_time),
        epoch_s(status.end_time),
    )
    text = f"{name}: {attempt + ' ' if attempt else ''}{status.state}"
    if created is not None and ended is not None:
        text += f" after {_exact(ended - created)}"
        if started is not None:
            text += f" (ran {_exact(ended - started)})"
        if first_created is not None and attempt:
            text += f", {_exact(ended - first_created)} since attempt 1 was submitted"
    elif status.state not in states.STARTED_STATES:
        waited = f" {_exact(time.time() - created)}" if created is not None else ""
        text += f"{waited}, never started; left submitted"
    elif status.state not in states.TERMINAL_STATES:
        text += ", left running"
    if status.metric_id:
        text += f"; {_trial_text(status)}"
    if status.model is not None:
        text += f"; {registered_text(status.model)}"
    return f"{text}; console: {console_url}; logs: {logs_url}"


def registered_text(model: RegisteredModel) -> str:
    """What a training pipeline registered, as its lasting line says it."""
    aliases = f" ({', '.join(model.aliases)})" if model.aliases else ""
    return f"registered {model.name} version {model.version_id}{aliases}"


def kept_text(model: RegisteredModel, versions: list[RegisteredModel]) -> str:
    """What a destroyed or replaced training pipeline leaves: its model's versions, and
    how to delete one if that is meant (this project never does)."""
    listed = ", ".join(
        v.version_id + (f" ({', '.join(v.aliases)})" if v.aliases else "") for v in versions
    )
    text = (
        f"kept {model.name}, which this job registered as version {model.version_id}: "
        f"versions {listed or model.version_id} stay in the registry (a destroy or replace "
        "never deletes a registered model); to delete one, "
    )
    place = location_of(model.name)
    if not kind_of(place["backend"]).cloud:
        folder = Path(model.artifact_uri).parent
        return text + f"remove its folder ({folder.parent}/<version>)"
    return text + (
        f"run `gcloud ai models delete-version {model.model_id}@<version> "
        f"--project={place['project']} --region={place['region']}`"
    )


def _exact(seconds: float) -> str:
    """``12.3s``, ``42m10s``, ``3h05m10s``: the lasting line's durations."""
    if seconds < 60:
        return f"{max(0.0, seconds):.1f}s"
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m{whole % 60:02d}s"
