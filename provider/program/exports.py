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


def job_exports(name: str, job: TrainingJob, waiter: JobWaiter) -> dict[str, Any]:
    """The stack outputs of one job: what its resource and the waiter last saw of it."""
    attempts = pulumi.Output.all(job.attempts, waiter.attempts).apply(
        lambda pair: latest_attempts(pair[0], pair[1], name)
    )
    return {
        **{key: _of_last_attempt(getattr(job, key), attempts, key) for key in ATTEMPT_KEYS},
        "attempts": attempts,
        "state": pulumi.Output.all(job.state, waiter.states).apply(
            lambda pair: latest_state(pair[0], pair[1], name)
        ),
        "error": job.error,
        "output_directory": job.output_directory,
        "model_directory": job.model_directory,
        **tuning_exports(name, job, waiter),
    }


def tuning_exports(name: str, job: TrainingJob, waiter: JobWaiter) -> dict[str, Any]:
    """The stack outputs a tuning job adds to a training job's ({} for a training job):
    ``trials``, ``best_trial``, and the best trial's ``model_directory``."""
    if not isinstance(job, HyperparameterTuningJob):
        return {}
    latest = pulumi.Output.all(job.trials, job.best_trial, job.state, waiter.trials).apply(
        lambda a: latest_trials(a[0], a[1], a[2], a[3], name)
    )
    return {
        "trials": latest.apply(lambda t: t["trials"]),
        "best_trial": latest.apply(lambda t: t["best_trial"]),
        "model_directory": pulumi.Output.all(job.output_directory, latest).apply(
            lambda a: best_model_directory(a[0], a[1]["best_trial"])
        ),
    }


#: A job's outputs that name the job it runs as: for a job with ``retry``, its last
#: attempt's (the waiter may have submitted it after the job's resource recorded one).
ATTEMPT_KEYS = ("resource_name", "job_id", "console_url", "logs_url")


def last_attempts(attempts: list[dict[str, Any]], key: str) -> str:
    """``key`` of the last of ``attempts``; "" when there are none (or it lacks it)."""
    return str(attempts[-1].get(key) or "") if attempts else ""


def _of_last_attempt(recorded: Any, attempts: Any, key: str) -> Any:
    """The output ``key``: the last attempt's when the job has attempts, else ``recorded``."""
    return pulumi.Output.all(recorded, attempts).apply(
        lambda pair: last_attempts(pair[1], key) or pair[0]
    )


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
