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

Hyperparameter tuning jobs are waited for the same way; for them the waiter also keeps
the trials it last saw (``trials`` output: job name -> ``trials`` and ``best_trial``),
newer than what the job's resource recorded at submission.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CreateResult, DiffResult, ReadResult, ResourceProvider, UpdateResult

from provider import states
from provider.errors import JobEndedError

#: Polling: the first interval, the growth factor and the cap, in seconds.
POLL_INITIAL_S = 0.5
POLL_FACTOR = 1.5
POLL_MAX_S = 15.0

#: Wait policies, from the stack config's `wait` key.
SUBMITTED, RUNNING, SUCCEEDED = "submitted", "running", "succeeded"


def _reached(state: str, until: str) -> bool:
    if until == RUNNING:
        return state in states.STARTED_STATES
    return state == states.SUCCEEDED


def wait_for(
    entries: Mapping[str, Mapping[str, Any]], seen: dict[str, Any] | None = None
) -> dict[str, str]:
    """Wait until each job is where its policy asks; return each job's last state.

    ``entries`` maps a job's name to its ``resource_name``, ``wait`` policy
    (``until``, ``timeout_s``), ``location`` and ``connection``. Raises JobEndedError
    naming every job that failed or timed out, after all others were waited for.
    ``seen``, when given, receives each polled job's last ``JobStatus``.
    """
    from provider.backends import connect

    start = time.monotonic()
    pending = {name: e for name, e in entries.items() if e["wait"]["until"] != SUBMITTED}
    final: dict[str, str] = {}
    problems: list[str] = []
    backends: dict[str, Any] = {}
    interval = POLL_INITIAL_S
    while pending:
        for name, entry in sorted(pending.items()):
            key = json.dumps([entry["location"], entry["connection"]], sort_keys=True)
            if key not in backends:
                backends[key] = connect(entry["location"], entry["connection"])
            backend = backends[key]
            job = entry["resource_name"]
            until = entry["wait"]["until"]
            status = backend.get(job)
            if seen is not None and status is not None:
                seen[name] = status
            if status is None:
                problems.append(f"job {name} ({job}) no longer exists; run `pulumi refresh`")
            elif status.state not in states.FAILED_STATES and _reached(status.state, until):
                final[name] = status.state
            elif status.state in states.TERMINAL_STATES:
                problems.append(
                    f"job {name} ({job}) ended {status.state}: {status.error or 'no error given'}"
                    f"\n  logs: {backend.logs_url(job)}"
                )
            elif time.monotonic() - start > entry["wait"]["timeout_s"]:
                problems.append(
                    f"job {name} ({job}) is still {status.state} after waiting "
                    f"{entry['wait']['timeout_s']}s for it to be {until}; it keeps running "
                    "and stays in the stack, and the next `pulumi up` waits for it again"
                    f"\n  logs: {backend.logs_url(job)}"
                )
            else:
                continue
            del pending[name]
        if pending:
            time.sleep(interval)
            interval = min(interval * POLL_FACTOR, POLL_MAX_S)
    if problems:
        raise JobEndedError("\n".join(problems))
    return final


def latest_state(job_state: str, waited: Mapping[str, str] | None, name: str) -> str:
    """The newer of what the job's resource last read and what the waiter last saw.

    A TrainingJob records its state when it is submitted or refreshed; the waiter, the
    state it waited for. A terminal state is never older than a non-terminal one.
    """
    seen = (waited or {}).get(name)
    if not seen or job_state in states.TERMINAL_STATES:
        return job_state
    return seen


def _trials(seen: Mapping[str, Any]) -> dict[str, Any]:
    """The trials (and best trial) of each tuning job among the statuses seen."""
    return {name: status.trial_outputs() for name, status in seen.items() if status.metric_id}


def _changed(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    old_jobs = olds.get("jobs") or {}
    return {n: e for n, e in (news.get("jobs") or {}).items() if old_jobs.get(n) != e}


class JobWaiterProvider(ResourceProvider):
    """Waits in create and update, for the jobs that are new or changed."""

    def diff(self, _id: str, olds: Any, news: Any) -> DiffResult:
        return DiffResult(changes=olds.get("jobs") != news.get("jobs"), replaces=[])

    def create(self, props: Any) -> CreateResult:
        jobs = props.get("jobs") or {}
        seen: dict[str, Any] = {}
        reached = wait_for(jobs, seen)
        return CreateResult("jobs", {"jobs": jobs, "states": reached, "trials": _trials(seen)})

    def update(self, _id: str, olds: Any, news: Any) -> UpdateResult:
        jobs = news.get("jobs") or {}
        seen: dict[str, Any] = {}
        reached = wait_for(_changed(olds, news), seen)
        previous = {n: s for n, s in (olds.get("states") or {}).items() if n in jobs}
        trials = {n: t for n, t in (olds.get("trials") or {}).items() if n in jobs}
        return UpdateResult(
            {
                "jobs": jobs,
                "states": {**previous, **reached},
                "trials": {**trials, **_trials(seen)},
            }
        )

    def read(self, id_: str, props: Any) -> ReadResult:
        return ReadResult(
            id_,
            {
                "jobs": props.get("jobs") or {},
                "states": props.get("states"),
                "trials": props.get("trials"),
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
        props = {"jobs": dict(jobs), "states": None, "trials": None}
        super().__init__(JobWaiterProvider(), name, props, opts)
