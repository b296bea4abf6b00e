"""A Python program's job whose ``wait`` no waiter performs, said on the job's row.

A job's own create returns once the job is submitted: only a JobWaiter that lists it
waits for it (``vertex_training.program.waiting.wait_for_jobs``; a stack config's jobs
get one). So a ``TrainingJob`` made with a ``wait`` beyond ``submitted`` that no waiter
takes would let `pulumi up` end with the job still running, saying nothing. A program
makes its waiter in the same run of its code as the jobs it takes; so when that code has
run (the SDK's event loop turns: ``call_soon``), each job no waiter took is warned about
on its own row, in `pulumi preview` as in `pulumi up`, naming what to add. (A waiter made
later, inside an ``apply``, comes too late for this: its jobs are warned about although
it waits for them.)
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Mapping
from typing import Any

import pulumi

from vertex_training.stackconfig import NOT_WAITED, WAITED

#: The jobs made with a wait that no waiter has taken yet, by ``id``: (job, name, until).
_UNTAKEN: dict[int, tuple[pulumi.Resource, str, str]] = {}


def wait_until(config: Mapping[str, Any]) -> str:
    """The state ``pulumi up`` waits for a job with this config (its keys, either
    naming) to reach (its ``wait.until``); a ``wait`` the job's check refuses counts as
    not waiting."""
    wait = config.get("wait")
    if isinstance(wait, Mapping):
        wait = wait.get("until", NOT_WAITED)
    return str(wait) if wait in WAITED else NOT_WAITED


def untaken_text(name: str, until: str) -> str:
    """The warning on a job with a ``wait`` no waiter takes."""
    return (
        f"job {name} asks to be waited for (`wait: {until}`), but no JobWaiter lists it, so "
        "`pulumi up` only submits it: pass it to `vt.wait_for_jobs(...)` with the program's "
        "other jobs, or leave its `wait` at `submitted`"
    )


def expect_waiter(job: pulumi.Resource, name: str, config: Mapping[str, Any]) -> None:
    """Warn on ``job`` (named ``name``) once the program's code has run, unless a waiter
    took it by then (``taken``); nothing for a job with no wait, or made outside a
    program's run (no event loop: a test's own code)."""
    until = wait_until(config)
    if until == NOT_WAITED:
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    if not _UNTAKEN:
        loop.call_soon(_warn_untaken)
    _UNTAKEN[id(job)] = (job, name, until)


def taken(job: pulumi.Resource) -> None:
    """A waiter waits for ``job``: no warning for it."""
    _UNTAKEN.pop(id(job), None)


def _warn_untaken() -> None:
    untaken = list(_UNTAKEN.values())
    _UNTAKEN.clear()
    for job, name, until in untaken:
        # On the job's row once its URN is known (the engine's, in a preview as well);
        # an output the SDK waits for before the program ends.
        job.urn.apply(functools.partial(_warn, untaken_text(name, until)))


def _warn(message: str, urn: str) -> None:
    from pulumi.runtime.proto import engine_pb2
    from pulumi.runtime.settings import get_engine

    engine = get_engine()
    if engine is None or not urn:
        pulumi.log.warn(message)
        return
    # Sent now, not by a task of its own (``pulumi.log.warn`` with a resource): the
    # program may end before such a task runs.
    engine.Log(engine_pb2.LogRequest(severity=engine_pb2.WARNING, message=message, urn=urn))
