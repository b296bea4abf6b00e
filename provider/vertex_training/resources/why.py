"""Why a job waits, or failed the wait: the texts the waiter gives (``waiter``).

A QUEUED or PENDING job that has been so for long enough is given a reason: the quotas it
consumes, or how long its machines have been provisioned
(``vertex_training.api.scheduling``). A job that ended FAILED is given its class and fix
(``vertex_training.api.failures``) and the failing replica's last log lines, or why they
could not be read. ``Why`` keeps both for the status line, the lasting lines and the
waiter's outputs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vertex_training.api import states
from vertex_training.api.failures import Failure, classify
from vertex_training.api.scheduling import PoolShape, waiting_reason
from vertex_training.api.times import epoch_s
from vertex_training.backend_kinds import kind_of
from vertex_training.errors import BackendError

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus

#: How many of the failing replica's last log lines a failure shows: enough for a Python
#: traceback's end, short enough for a terminal.
FAILURE_LOG_LINES = 20


def failure_of(status: JobStatus) -> Failure | None:
    """The classified error of a job that ended FAILED, else None."""
    if status.state != states.FAILED:
        return None
    return classify(status.error_code, status.error)


def failure_text(failure: Failure, log_lines: list[str] | str) -> str:
    """What a `pulumi up` failure says of a failed job, after its first line: the class
    and the fix, then the failing replica's last log lines (or why they could not be
    read)."""
    text = f"\n  class: {failure.kind}\n  fix: {failure.fix}"
    if isinstance(log_lines, str):
        return text + f"\n  {log_lines}"
    if log_lines:
        body = "\n".join(f"    {line}" for line in log_lines)
        text += f"\n  last {len(log_lines)} lines of {failure.replica}'s log:\n{body}"
    return text


def replica_log(
    backend: Backend, job: str, failure: Failure, end_time: str, lines: int = FAILURE_LOG_LINES
) -> list[str] | str:
    """The failing replica's last ``lines`` log lines, or a sentence saying why they
    could not be read: reading a log never fails a wait."""
    if not failure.replica:
        return []
    try:
        return backend.log_tail(job, failure.replica, lines, end_time)
    except BackendError as exc:
        return f"logs could not be read: {exc}"
    except Exception as exc:  # noqa: BLE001 - a log is a courtesy: nothing may fail the update
        return f"logs could not be read: {type(exc).__name__}: {exc}"


def not_running_reason(
    entry: Mapping[str, Any], status: JobStatus, now: float, pending_since: float | None
) -> str:
    """Why a QUEUED or PENDING job is not running yet, once it has been so long enough
    (``vertex_training.api.scheduling``), else "". A QUEUED job's time counts from its
    creation; a PENDING one's from when the waiter first saw it PENDING."""
    location = entry["location"]
    if status.state == states.QUEUED:
        created = epoch_s(status.create_time)
        if not kind_of(location.get("backend")).cloud or created is None:
            return ""
        quotas, page = quota_texts(status.pools, status.strategy, location.get("project") or "")
        return waiting_reason(
            status.state, now - created, location.get("region") or "", quotas, page
        )
    if status.state == states.PENDING and pending_since is not None:
        return waiting_reason(status.state, now - pending_since, "", [], "")
    return ""


def quota_texts(pools: Sequence[PoolShape], strategy: str, project: str) -> tuple[list[str], str]:
    """The custom-training quotas a job's pools consume under ``strategy``, each with the
    amount when the machine's vCPUs are known ("custom_model_training_cpus (4)"), and the
    console page of the first (``vertex_training.catalog.quotas``: the names and their sources)."""
    from vertex_training.catalog import quotas

    amounts: dict[str, float] = {}
    named: dict[str, Any] = {}
    unknown: set[str] = set()
    for pool in pools:
        if not pool.machine_type or pool.replica_count <= 0:
            continue
        family = pool.machine_type.partition("-")[0]
        if not pool.machine_type.startswith("ct"):  # TPU machines hold their TPU quota only
            cpu = quotas.cpu_quota(family, strategy or quotas.STANDARD)
            named[cpu.name] = cpu
            vcpus = quotas.catalogue_vcpus(pool.machine_type)
            if vcpus is None:
                unknown.add(cpu.name)
            else:
                amounts[cpu.name] = amounts.get(cpu.name, 0.0) + vcpus[0] * pool.replica_count
        accelerator = quotas.accelerator_quota(pool.accelerator_type, strategy or quotas.STANDARD)
        if accelerator is not None and pool.accelerator_count:
            named[accelerator.name] = accelerator
            amounts[accelerator.name] = (
                amounts.get(accelerator.name, 0.0) + pool.accelerator_count * pool.replica_count
            )
    texts = [
        name if name in unknown or name not in amounts else f"{name} ({amounts[name]:g})"
        for name in named
    ]
    page = quotas.quota_page(project, next(iter(named.values()))) if named else ""
    return texts, page


class Why:
    """Why jobs are not running yet, and why they failed: kept for the status line and
    given to ``report`` (``reasons``, ``failures``, and ``problems``: why a job failed the
    wait, by job name, as the wait's error names it)."""

    def __init__(self, report: dict[str, dict[str, Any]]) -> None:
        self.reasons: dict[str, str] = {}
        self.problems: dict[str, str] = report.setdefault("problems", {})
        self._pending_since: dict[str, float] = {}
        self._report = report
        report.setdefault("reasons", {})
        report.setdefault("failures", {})

    def observe(
        self, name: str, entry: Mapping[str, Any], status: JobStatus | None, now: float
    ) -> None:
        """A job was read at ``now``."""
        if status is not None and status.state == states.PENDING:
            self._pending_since.setdefault(name, now)
        reason = (
            ""
            if status is None
            else not_running_reason(entry, status, now, self._pending_since.get(name))
        )
        if reason:
            self.reasons[name] = self._report["reasons"][name] = reason
        else:
            self.reasons.pop(name, None)

    def failed(self, name: str, backend: Backend, status: JobStatus) -> str:
        """What a problem adds: for a job that ended FAILED, its class, fix and the failing
        replica's last log lines; for one that never started, why it had not."""
        failure = failure_of(status)
        if failure is None:
            reason = self.reasons.get(name)
            waiting = status.state not in states.STARTED_STATES
            return f"\n  why it has not started: {reason}" if reason and waiting else ""
        lines = replica_log(backend, status.name, failure, status.end_time)
        self._report["failures"][name] = {
            **failure.to_output(),
            "log": lines if isinstance(lines, list) else [lines],
        }
        return failure_text(failure, lines)

    def left(self, name: str) -> None:
        """A job left the wait."""
        self.reasons.pop(name, None)
