"""Waiting for a program's jobs: one JobWaiter for every job that asks to be waited for.

A job's ``wait`` key (``submitted``, the default, ``running`` or ``succeeded``, or
``{until, timeout, start_timeout}``) says what ``pulumi up`` waits for. The jobs a
program makes are waited for together by one ``JobWaiter`` (a stack of many jobs is not
waited for in batches of the provider host's threads), which ``wait_for_jobs`` makes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pulumi

from vertex_training.resources.training_job import TrainingJob, waiter_input
from vertex_training.resources.unwaited import wait_until
from vertex_training.resources.waiter import JobWaiter
from vertex_training.stackconfig import NOT_WAITED


def wait_for_jobs(
    name: str,
    jobs: Iterable[TrainingJob],
    opts: pulumi.ResourceOptions | None = None,
) -> JobWaiter:
    """A JobWaiter named ``name`` for each of ``jobs`` that asks to be waited for.

    ``pulumi up`` then ends when every such job has reached its state, or fails naming
    each job that did not (with its reason and the last lines of its logs), once the
    waiter and the program's stack outputs are recorded; the waiter's ``states``,
    ``reasons``, ``attempts`` and ``problems`` outputs hold what it saw, by job name.
    """
    entries: dict[str, Any] = {}
    for job in jobs:
        until = wait_until(job.config)
        if until == NOT_WAITED:
            continue
        config: Any = pulumi.Output.secret(job.config) if job.secret else job.config
        entries[job.job_name] = {
            **waiter_input(job, until),
            "config": config,
            "stack": job.settings,
        }
    return JobWaiter(name, entries, {}, opts)
