"""JobWaiter: one resource that waits for all of a stack's jobs in a single call.

The Python dynamic provider host serves every dynamic resource of a program from one
process with four threads. If each TrainingJob waited in its own create, a stack of
twelve jobs would run in batches of four. Instead a TrainingJob's create returns as soon
as the job is submitted, and this resource, which depends on every job, polls them all
together: `pulumi up` takes about as long as the longest job.

A job that ends FAILED, CANCELLED or EXPIRED, or that is not where its policy asks when
its timeout runs out, fails the update with the job's error and a link to its logs. The
jobs themselves are already in the stack's state at that point, so nothing is left
running outside it; the next `pulumi up` waits for them again.

Each job is read on its own schedule (``poll_interval_s``): after 5% of the time it has
run, between 2 s and 60 s. While it waits, the waiter shows each job's state on its row
of `pulumi up`, and leaves a lasting line for each job that leaves the wait
(``provider.resources.progress``).

Hyperparameter tuning jobs are waited for the same way; for them the waiter also keeps
the trials it last saw (``trials`` output: job name -> ``trials`` and ``best_trial``),
newer than what the job's resource recorded at submission.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import (
    CreateResult,
    DiffResult,
    ReadResult,
    UpdateResult,
)

from provider.api import states
from provider.errors import JobEndedError
from provider.resources.progress import EngineLog, Progress, age_s

if TYPE_CHECKING:
    from provider.backends.base import Backend, JobStatus
from provider.resources.state import ConfiguredProvider, ProviderSettings, migrate_waiter

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

#: The waiter's input that holds its own URN, which progress messages name (the name
#: `urn` itself is the Resource attribute of the same name).
URN_INPUT = "progress_urn"

#: Wait policies, from the stack config's `wait` key.
SUBMITTED, RUNNING, SUCCEEDED = "submitted", "running", "succeeded"


def poll_interval_s(age: float | None) -> float:
    """Seconds until a job that has run ``age`` seconds is read again (POLL_MIN_S when
    its age is unknown)."""
    if age is None:
        return POLL_MIN_S
    return min(max(POLL_FRACTION * age, POLL_MIN_S), POLL_MAX_S)


def _reached(state: str, until: str) -> bool:
    if until == RUNNING:
        return state in states.STARTED_STATES
    return state == states.SUCCEEDED


def _problem(
    name: str,
    entry: Mapping[str, Any],
    status: JobStatus | None,
    backend: Backend,
    waited_s: float,
) -> str | None:
    """Why the job fails the wait, "" when it reached its policy, or None when it is to be
    read again."""
    job, until, timeout_s = (
        entry["resource_name"],
        entry["wait"]["until"],
        entry["wait"]["timeout_s"],
    )
    if status is None:
        return f"job {name} ({job}) no longer exists; run `pulumi refresh`"
    if status.state not in states.FAILED_STATES and _reached(status.state, until):
        return ""
    if status.state in states.TERMINAL_STATES:
        return (
            f"job {name} ({job}) ended {status.state}: {status.error or 'no error given'}"
            f"\n  logs: {backend.logs_url(job)}"
        )
    if waited_s >= timeout_s:
        return (
            f"job {name} ({job}) is still {status.state} after waiting {timeout_s}s for it "
            f"to be {until}; it keeps running and stays in the stack, and the next "
            f"`pulumi up` waits for it again\n  logs: {backend.logs_url(job)}"
        )
    return None


def wait_for(
    entries: Mapping[str, Mapping[str, Any]],
    seen: dict[str, Any] | None = None,
    *,
    settings: ProviderSettings | None = None,
    log: EngineLog | None = None,
    clock: Callable[[], float] = time.time,
    monotonic: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, str]:
    """Wait until each job is where its policy asks; return each job's last state.

    ``entries`` maps a job's name to its ``resource_name``, ``wait`` policy
    (``until``, ``timeout_s``) and ``location`` (a ``WaitEntry``); ``settings`` say how
    this machine reaches the backends (default: the current directory's project, no
    endpoint override). Raises JobEndedError
    naming every job that failed or timed out, after all others were waited for.
    ``seen``, when given, receives each polled job's last ``JobStatus``. ``log`` shows the
    progress on the waiter's row (``provider.resources.progress``): a status line while jobs are
    waited for, a lasting line for each job as it leaves the wait. A job is read only
    when its next read is due (``poll_interval_s``). ``clock`` (wall time, compared with
    the server's timestamps), ``monotonic`` and ``sleep`` are injectable for tests.
    """
    from provider.backends import connect

    connection = (settings or ProviderSettings(base_dir=str(Path.cwd()))).connection()
    progress = Progress(log or EngineLog(None, ""))
    start = monotonic()
    pending = {name: e for name, e in entries.items() if e["wait"]["until"] != SUBMITTED}
    due = dict.fromkeys(pending, start)
    latest: dict[str, Any] = {}
    final: dict[str, str] = {}
    problems: list[str] = []
    backends: dict[str, Any] = {}
    while pending:
        for name, entry in sorted(pending.items()):
            if due[name] > monotonic():
                continue
            key = json.dumps(entry["location"], sort_keys=True)
            if key not in backends:
                backends[key] = connect(entry["location"], connection)
            backend, job = backends[key], entry["resource_name"]
            status = latest[name] = backend.get(job)
            if seen is not None and status is not None:
                seen[name] = status
            problem = _problem(name, entry, status, backend, monotonic() - start)
            if problem is None:
                # Read again when due, and no later than when the timeout runs out.
                interval = poll_interval_s(age_s(status, clock()))
                due[name] = min(monotonic() + interval, start + entry["wait"]["timeout_s"])
                continue
            if problem:
                problems.append(problem)
            else:
                final[name] = status.state
            del pending[name], latest[name], due[name]
            if status is not None:
                progress.ended(name, status, backend.console_url(job), backend.logs_url(job))
        progress.waiting(latest, clock(), monotonic())
        if pending:
            sleep(max(0.0, min(due.values()) - monotonic()))
    if problems:
        raise JobEndedError("\n".join(problems))
    return final


def _trials(seen: Mapping[str, Any]) -> dict[str, Any]:
    """The trials (and best trial) of each tuning job among the statuses seen."""
    return {name: status.trial_outputs() for name, status in seen.items() if status.metric_id}


def _changed(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    old_jobs = olds.get("jobs") or {}
    return {n: e for n, e in (news.get("jobs") or {}).items() if old_jobs.get(n) != e}


def _wait(
    entries: Mapping[str, Any], props: Mapping[str, Any], settings: ProviderSettings
) -> tuple[dict[str, str], dict[str, Any]]:
    """Wait for ``entries``, showing progress on the row of the waiter ``props`` belong to;
    return the states reached and the tuning jobs' trials."""
    seen: dict[str, Any] = {}
    log = EngineLog.from_process(props.get(URN_INPUT))
    try:
        reached = wait_for(entries, seen, settings=settings, log=log)
    finally:
        log.close()
    return reached, _trials(seen)


class JobWaiterProvider(ConfiguredProvider):
    """Waits in create and update, for the jobs that are new or changed."""

    def diff(self, _id: str, olds: Any, news: Any) -> DiffResult:
        olds = migrate_waiter(olds)
        return DiffResult(changes=olds.get("jobs") != news.get("jobs"), replaces=[])

    def create(self, props: Any) -> CreateResult:
        jobs = props.get("jobs") or {}
        reached, trials = _wait(jobs, props, self.settings)
        outs = {"jobs": jobs, "states": reached, "trials": trials, URN_INPUT: props.get(URN_INPUT)}
        return CreateResult("jobs", outs)

    def update(self, _id: str, olds: Any, news: Any) -> UpdateResult:
        jobs = news.get("jobs") or {}
        olds = migrate_waiter(olds)
        reached, seen_trials = _wait(_changed(olds, news), news, self.settings)
        previous = {n: s for n, s in (olds.get("states") or {}).items() if n in jobs}
        trials = {n: t for n, t in (olds.get("trials") or {}).items() if n in jobs}
        return UpdateResult(
            {
                "jobs": jobs,
                "states": {**previous, **reached},
                "trials": {**trials, **seen_trials},
                URN_INPUT: news.get(URN_INPUT),
            }
        )

    def read(self, id_: str, props: Any) -> ReadResult:
        return ReadResult(
            id_,
            {
                "jobs": props.get("jobs") or {},
                "states": props.get("states"),
                "trials": props.get("trials"),
                URN_INPUT: props.get(URN_INPUT),
            },
        )


class JobWaiter(pulumi.dynamic.Resource, module="vertex", name="JobWaiter"):
    """Waits for every job of the stack that asks to be waited for."""

    states: pulumi.Output[dict[str, str]]
    trials: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        jobs: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        # The provider's create and update get the resource's properties, not its URN,
        # and progress messages must name it. So the waiter is given its own URN as an
        # input, computed here by the SDK's `create_urn` from the same name, type and
        # parent the registration below uses (a parent given in `opts` included, and the
        # stack and project of this very run), so it cannot drift from the URN the engine
        # assigns, and it is known at preview. `diff` ignores it: a renamed stack or
        # project changes it without making the waiter wait again.
        urn = pulumi.resource.create_urn(
            name, f"pulumi-python:{self._resource_type_name}", opts.parent if opts else None
        )
        props = {"jobs": dict(jobs), "states": None, "trials": None, URN_INPUT: urn}
        super().__init__(JobWaiterProvider(), name, props, opts)
