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

from vertex_training.api import states
from vertex_training.api.bodies import named_output_directory
from vertex_training.backends import job_places
from vertex_training.resources.pages import job_outputs
from vertex_training.resources.training_job import TrainingJob
from vertex_training.resources.tuning_job import HyperparameterTuningJob
from vertex_training.resources.waiter import JobWaiter
from vertex_training.stackconfig import Stack
from vertex_training.stackconfig.study import is_tuning_job


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
    return kind(name, config, opts, stack=stack, secret=secret)


def named_outputs(stack: Stack) -> dict[str, str]:
    """The base output directory each job's request names ("" for none, or for a job
    that does not parse: its check reports it)."""
    return {
        name: named_output_directory(loaded.job.request_body()) if loaded.job else ""
        for name, loaded in stack.jobs.items()
    }


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
    jobs: Mapping[str, TrainingJob], waiter: JobWaiter, local_root: str, stack: Stack
) -> pulumi.Output[dict[str, Any]]:
    """The ``jobs`` stack output: each job's view (``job_view``), by name. ``local_root``:
    where the local backend keeps its jobs (their pages and outputs are files there);
    ``stack``: the stack config the jobs were made from.

    Unknown in a preview (``preview_unknown``), where a job registers no placeholder
    for the outputs this reads (``TrainingJob.read_outputs`` is empty). In an update,
    one Output for the whole stack, gathered from every job's outputs at once: the SDK
    waits on each pending Output every time one resolves, so one Output per job would
    cost the program time that grows with the square of the number of jobs.
    """
    if pulumi.runtime.is_dry_run():
        return preview_unknown()
    outputs = named_outputs(stack)
    keys = {name: ("resource_name", *job.read_outputs) for name, job in jobs.items()}
    values = [
        job.id if key == "resource_name" else getattr(job, key)
        for name, job in jobs.items()
        for key in keys[name]
    ]
    seen = [getattr(waiter, key) for key in WAITER_OUTPUTS]

    def views(resolved: list[Any]) -> dict[str, Any]:
        waited = dict(zip(WAITER_OUTPUTS, resolved[-len(WAITER_OUTPUTS) :], strict=True))
        position, result = 0, {}
        for name in jobs:
            count = len(keys[name])
            recorded = dict(zip(keys[name], resolved[position : position + count], strict=True))
            named = outputs.get(name, "")
            result[name] = job_view(name, recorded, waited, local_root, named)
            position += count
        return result

    return gathered([*values, *seen]).apply(views)


#: The waiter's outputs a job's stack outputs read (``job_view``).
WAITER_OUTPUTS = ("states", "attempts", "trials", "reasons", "problems", "models")


def preview_unknown() -> pulumi.Output[Any]:
    """An Output that is unknown, as the ``jobs`` stack output is in a preview.

    A preview does not show the stack outputs it computes: ``pulumi preview``, with or
    without ``--diff``, and its ``--json`` print none (``--show-sames`` prints them
    after the recorded ones); ``pulumi up`` prints them once it has run. And a preview
    where a job changes leaves the ``jobs`` output unknown anyway (that job's state
    is). Where nothing changes, computing it would repeat the recorded one, at a cost
    that grows with the stack: the program would await every job's outputs, and the
    engine receive, compare and log the whole map.
    """

    async def no_resources() -> set[pulumi.Resource]:
        return set()

    async def no_value() -> None:
        return None

    async def unknown() -> bool:
        return False

    return pulumi.Output(no_resources(), no_value(), unknown())


def gathered(outputs: list[pulumi.Output[Any]]) -> pulumi.Output[list[Any]]:
    """One Output of the values of ``outputs``, in order: known when all are, secret when
    any is, depending on every resource they do.

    ``Output.all`` would do the same with two more Outputs per value (each argument goes
    through ``Output.from_input``, which applies to it), and the SDK's wait for the
    program's end goes over every pending Output each time one resolves: for the
    ``jobs`` output of 400 jobs, 3,200 Outputs more to go over. This awaits each
    Output's value as it is (the values here are the engine's plain outputs, with no
    Output inside to unwrap).
    """

    async def resources() -> set[pulumi.Resource]:
        found: set[pulumi.Resource] = set()
        for output in outputs:
            found |= await output.resources()
        return found

    async def values() -> list[Any]:
        return [await output.future(with_unknowns=True) for output in outputs]

    async def known() -> bool:
        return all([await output.is_known() for output in outputs])

    async def secret() -> bool:
        return any([await output.is_secret() for output in outputs])

    return pulumi.Output(resources(), values(), known(), secret())


def job_view(
    name: str,
    recorded: Mapping[str, Any],
    seen: Mapping[str, Any],
    local_root: str,
    named_output: str = "",
) -> dict[str, Any]:
    """A job's stack outputs from the outputs its resource ``recorded`` (its ID as
    ``resource_name``, and its ``read_outputs``) and what the waiter has ``seen`` (its
    ``WAITER_OUTPUTS``): the newer of each. ``error`` is the job's own, else why it
    failed the last wait; ``waiting_reason``, why it was not running yet, the last reason
    the wait gave (both recorded when the wait fails: the program fails the update
    after the stack outputs are recorded). The job ID, its pages, its output directory
    (from ``named_output``, what its request names) and its model directory are those of
    the job it runs as (``resources.pages.job_outputs``: its last attempt, with
    ``retry``), as the plugin's job outputs give them."""
    attempts = latest_attempts(recorded.get("attempts"), seen.get("attempts"), name)
    state = latest_state(recorded.get("state") or "", seen.get("states"), name)
    waited = (seen.get("states") or {}).get(name)
    if waited and attempts and attempts[-1].get("state") not in states.TERMINAL_STATES:
        # The waiter lists attempts only once one has failed: a job that ended on its
        # first attempt has that attempt as its resource recorded it when submitted.
        attempts = [*attempts[:-1], {**attempts[-1], "state": waited}]
    view: dict[str, Any] = {
        "attempts": attempts,
        "state": state,
        "error": recorded.get("error") or (seen.get("problems") or {}).get(name) or "",
        "waiting_reason": (seen.get("reasons") or {}).get(name) or "",
    }
    if "model" in recorded:  # a job that registers its model: the version, once it has
        view["model"] = (seen.get("models") or {}).get(name) or recorded.get("model") or {}
    trials: dict[str, Any] = {}
    if "trials" in recorded:  # a tuning job
        trials = latest_trials(
            recorded.get("trials"),
            recorded.get("best_trial"),
            recorded.get("state") or "",
            seen.get("trials"),
            name,
        )
        view.update(trials)
    named = job_outputs(
        attempts,
        str(recorded.get("resource_name") or ""),
        local_root,
        named_output,
        trials.get("best_trial"),
        tuning="trials" in recorded,
    )
    if backing := (view.get("model") or {}).get("backing_job"):
        # A pipeline's logs are its backing job's, once it has one.
        named["logs_url"] = job_places(backing, local_root, named_output)["logs_url"]
    return {**named, **view}


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
