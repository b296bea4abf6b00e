"""The Pulumi program's view of each job: which resource a job gets, and its stack outputs.

A job's state is read by two resources: its own (``TrainingJob.state``, recorded when it
is submitted, updated or refreshed) and the waiter (``JobWaiter.states``, recorded when
``pulumi up`` waited for it). This module is the one place that combines them: the
newer of the two is the job's ``state`` output (``latest_state``), and likewise a tuning
job's trials (``latest_trials``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from provider.api import states
from provider.backends import job_pages
from provider.backends.base import job_id_of
from provider.resources.state import model_directory_of
from provider.resources.training_job import TrainingJob
from provider.resources.tuning_job import HyperparameterTuningJob, best_model_directory
from provider.resources.waiter import JobWaiter
from provider.stackconfig.study import is_tuning_job


def job_resource(
    name: str,
    config: Mapping[str, Any],
    stack: Mapping[str, Any],
    opts: pulumi.ResourceOptions | None = None,
    *,
    secret: bool = False,
) -> TrainingJob:
    """The resource for one job of the stack config: a HyperparameterTuningJob for a job
    with a ``study:`` block (or a legacy ``training_input.hyperparameters``), else a
    TrainingJob. The arguments are TrainingJob's."""
    kind = HyperparameterTuningJob if is_tuning_job(config) else TrainingJob
    return kind(name, config, stack, opts, secret=secret)


def latest_trials(
    trials: list[dict[str, Any]] | None,
    best: dict[str, Any] | None,
    job_state: str,
    waited: Mapping[str, Any] | None,
    name: str,
) -> dict[str, Any]:
    """The newer of the trials the job's resource recorded and those the waiter last saw
    (as ``waiter.latest_state`` picks the state): ``trials`` and ``best_trial``."""
    seen = (waited or {}).get(name)
    if seen and job_state not in states.TERMINAL_STATES:
        # Pulumi drops null values from maps in state: a missing best_trial is None.
        return {"trials": seen.get("trials") or [], "best_trial": seen.get("best_trial")}
    return {"trials": trials or [], "best_trial": best}


def jobs_exports(
    jobs: Mapping[str, TrainingJob], waiter: JobWaiter, local_root: str
) -> pulumi.Output[dict[str, Any]]:
    """The ``jobs`` stack output: each job's view (``job_view``), by name. ``local_root``:
    where the local backend keeps its jobs (their pages are files there).

    One Output for the whole stack, gathered from every job's outputs at once: the
    SDK waits on each pending Output every time one resolves, so one Output per job
    would cost the program time that grows with the square of the number of jobs.
    """
    keys = {name: ("resource_name", *job.read_outputs) for name, job in jobs.items()}
    values = [
        job.id if key == "resource_name" else getattr(job, key)
        for name, job in jobs.items()
        for key in keys[name]
    ]
    seen = [waiter.states, waiter.attempts, waiter.trials]

    def views(resolved: list[Any]) -> dict[str, Any]:
        states, attempts, trials = resolved[-3:]
        waited = {"states": states, "attempts": attempts, "trials": trials}
        position, result = 0, {}
        for name in jobs:
            count = len(keys[name])
            recorded = dict(zip(keys[name], resolved[position : position + count], strict=True))
            result[name] = job_view(name, recorded, waited, local_root)
            position += count
        return result

    return pulumi.Output.all(*values, *seen).apply(views)


def job_view(
    name: str, recorded: Mapping[str, Any], seen: Mapping[str, Any], local_root: str
) -> dict[str, Any]:
    """A job's stack outputs from the outputs its resource ``recorded`` (its ID as
    ``resource_name``, and its ``read_outputs``) and what the waiter has ``seen`` (its
    ``states``, ``attempts`` and ``trials`` outputs): the newer of each. The job ID, its
    pages and its model directory are derived here, and recorded nowhere else."""
    attempts = latest_attempts(recorded.get("attempts"), seen.get("attempts"), name)
    state = latest_state(recorded.get("state") or "", seen.get("states"), name)
    output_directory = str(recorded.get("output_directory") or "")
    resource_name = str(recorded.get("resource_name") or "")
    derived = {
        **recorded,
        **(job_pages(resource_name, local_root) if resource_name else {}),
        "job_id": job_id_of(resource_name),
        "model_directory": model_directory_of(output_directory),
    }
    view: dict[str, Any] = {
        **{key: last_attempts(attempts, key) or derived.get(key) or "" for key in ATTEMPT_KEYS},
        "attempts": attempts,
        "state": state,
        "error": recorded.get("error") or "",
        "output_directory": output_directory,
        "model_directory": derived["model_directory"],
    }
    if "trials" in recorded:  # a tuning job
        trials = latest_trials(
            recorded.get("trials"),
            recorded.get("best_trial"),
            recorded.get("state") or "",
            seen.get("trials"),
            name,
        )
        view.update(trials)
        view["model_directory"] = best_model_directory(output_directory, trials["best_trial"])
    return view


#: A job's outputs that name the job it runs as: for a job with ``retry``, its last
#: attempt's (the waiter may have submitted it after the job's resource recorded one).
ATTEMPT_KEYS = ("resource_name", "job_id", "console_url", "logs_url")


def last_attempts(attempts: list[dict[str, Any]], key: str) -> str:
    """``key`` of the last of ``attempts``; "" when there are none (or it lacks it)."""
    return str(attempts[-1].get(key) or "") if attempts else ""


def latest_attempts(
    recorded: list[dict[str, Any]] | None, waited: Mapping[str, Any] | None, name: str
) -> list[dict[str, Any]]:
    """The newer of the attempts the job's resource recorded and those the waiter last
    saw (the waiter submits attempts after the resource's create): the list that reached
    the later attempt, the waiter's when both did (its states are newer)."""
    seen = list((waited or {}).get(name) or [])
    mine = list(recorded or [])
    return seen if seen and _last_attempt(seen) >= _last_attempt(mine) else mine


def _last_attempt(attempts: list[dict[str, Any]]) -> int:
    return int(attempts[-1]["attempt"]) if attempts else 0


def latest_state(job_state: str, waited: Mapping[str, str] | None, name: str) -> str:
    """The newer of what the job's resource last read and what the waiter last saw.

    A TrainingJob records its state when it is submitted or refreshed; the waiter, the
    state it waited for. A terminal state is never older than a non-terminal one.
    """
    seen = (waited or {}).get(name)
    if not seen or job_state in states.TERMINAL_STATES:
        return job_state
    return seen
