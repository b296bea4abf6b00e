"""The wait plan: what the waiter follows for each job, read once from whichever host gave it.

A JobWaiter's entries come in three forms, each read here and nowhere else:

- a stack config job's (a dynamic waiter of a YAML stack): its resource name and
  ``until``; its wait policy, location and (with ``retry``) what its next attempt takes
  are read from the stack config the engine handed the provider;
- a job a program gave as arguments (``wait_for_jobs``), a plugin job with ``retry``, and
  a plugin tuning job that waits in its own create: its ``config`` and ``stack`` beside
  its resource name and ``until``;
- a plugin job's ``waiterEntry`` without ``retry``: its plan alone (``timeout_s``,
  ``start_timeout_s``), its location read from its resource name.

Each becomes one ``JobWait`` (a frozen dataclass), and a stack's jobs one ``WaitPlan``: the
loop that waits (``vertex_training.resources.wait_loop``) reads fields, never keys.
Callers that hold what ``wait_for`` took before the plan (a ``WaitEntry`` each: the jobs a
create runs after, tests) give it through ``WaitPlan.of_entries``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from vertex_training.backends.base import location_of
from vertex_training.errors import BackendError
from vertex_training.keys import job_key
from vertex_training.resources.state import (
    OWNER_VIEW_KEYS,
    RESUBMISSION_KEYS,
    view_of,
    whole_numbers,
)
from vertex_training.stackconfig import NOT_WAITED

#: The resubmission keys every job with ``retry`` has (``model``, ``dataset`` and its
#: owner's Pulumi project and organization only some).
_ATTEMPT_KEYS = ("request", "stack_name", "retry")


@dataclass(frozen=True)
class JobWait:
    """One job as the waiter follows it: the submission it reads, the state it waits for,
    how long it may wait, where it runs, and (a job with ``retry``) what submitting its
    next attempt takes.

    The timeouts are kept as they were given (an int stays an int), so that the texts
    that name them read as they did."""

    name: str
    resource_name: str
    #: ``running``, ``succeeded``, or ``submitted`` (never read).
    until: str
    #: Seconds the wait may last, from when this attempt began to be waited for.
    timeout_s: float
    #: Seconds the job may take to start running; None (or 0) when only ``timeout_s``
    #: bounds the wait.
    start_timeout_s: float | None
    #: Where this attempt runs (``backend``, ``project``, ``region``).
    location: Mapping[str, Any]
    #: A job with ``retry``: its checked inputs that ``Attempts`` submits its next
    #: attempts from (``RESUBMISSION_KEYS``, and its first attempt's location); None
    #: for a job without.
    resubmission: Mapping[str, Any] | None = None

    @property
    def waited(self) -> bool:
        """Whether the job is read at all (a job waited for ``submitted`` is not)."""
        return bool(self.until != NOT_WAITED)

    @property
    def retries(self) -> bool:
        """Whether a failure may be followed by another attempt (its ``retry``)."""
        return self.resubmission is not None and bool(self.resubmission.get("retry"))

    def limit_s(self, started: bool) -> float:
        """How long the wait for this attempt may last from its start: its
        ``start_timeout_s`` while it has not ``started`` running (when that is the
        sooner), else its ``timeout_s``."""
        if self.start_timeout_s and not started:
            return float(min(self.start_timeout_s, self.timeout_s))
        return float(self.timeout_s)

    def policy(self) -> dict[str, Any]:
        """Its wait policy as a job's view gives it (``state.WaitPolicy``)."""
        policy: dict[str, Any] = {"until": self.until, "timeout_s": self.timeout_s}
        if self.start_timeout_s is not None:
            policy["start_timeout_s"] = self.start_timeout_s
        return policy

    def attempt(self, resource_name: str, location: Mapping[str, Any]) -> JobWait:
        """The same job, following another of its attempts (submitted in ``location``)."""
        return replace(self, resource_name=resource_name, location=dict(location))

    def attempt_inputs(self) -> dict[str, Any]:
        """What ``Attempts`` needs of a job with ``retry``: its checked inputs, its first
        attempt's location and its wait policy."""
        kept = self.resubmission or {}
        return {
            "name": kept.get("name") or self.name,
            **{key: kept[key] for key in _ATTEMPT_KEYS},
            "location": kept.get("location", self.location),
            "wait": self.policy(),
            **{key: kept[key] for key in (*OWNER_VIEW_KEYS, "model", "dataset") if key in kept},
        }

    def entry(self) -> dict[str, Any]:
        """The job as a ``WaitEntry`` (``state.WaitEntry``), the form ``wait_for`` took
        before the plan."""
        entry: dict[str, Any] = {
            "resource_name": self.resource_name,
            "wait": self.policy(),
            "location": dict(self.location),
        }
        if self.resubmission is not None:
            entry.update(
                (key, value) for key, value in self.resubmission.items() if key != "location"
            )
        return entry

    @classmethod
    def of_entry(cls, name: str, entry: Mapping[str, Any]) -> JobWait:
        """A job from its ``WaitEntry``: ``resource_name``, ``wait`` (``until``,
        ``timeout_s``, ``start_timeout_s``), ``location``, and with ``retry`` what
        resubmitting it takes."""
        wait, until = entry["wait"], entry["wait"]["until"]
        return cls(
            name=name,
            resource_name=entry["resource_name"],
            until=until,
            # A job waited for ``submitted`` is never read: it needs no timeout.
            timeout_s=wait.get("timeout_s", 0) if until == NOT_WAITED else wait["timeout_s"],
            start_timeout_s=wait.get("start_timeout_s"),
            location=entry["location"],
            resubmission=_resubmission(entry),
        )

    @classmethod
    def planned(cls, name: str, waits: Mapping[str, Any]) -> JobWait:
        """A job given by its wait plan (a plugin job's ``waiterEntry`` as a
        ``state.Waited``): where it runs is read from its resource name
        (``projects/P/locations/R/...``, or a local job's)."""
        return cls(
            name=name,
            resource_name=waits["resource_name"],
            until=waits["until"],
            timeout_s=waits["timeout_s"],
            start_timeout_s=waits.get("start_timeout_s"),
            location=location_of(str(waits["resource_name"])),
        )


def _resubmission(job: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a job with ``retry`` is resubmitted from, of its view or ``WaitEntry``: its
    ``RESUBMISSION_KEYS`` and its first attempt's location; None without ``retry``."""
    if "retry" not in job:
        return None
    return {
        **{key: value for key, value in job.items() if key in RESUBMISSION_KEYS},
        "location": job["location"],
    }


@dataclass(frozen=True)
class WaitPlan:
    """The jobs of one wait, each with what the waiter follows (``JobWait``)."""

    jobs: tuple[JobWait, ...]

    @property
    def waited(self) -> tuple[JobWait, ...]:
        """The jobs that are read (those waited for ``submitted`` left out)."""
        return tuple(job for job in self.jobs if job.waited)

    @classmethod
    def of_entries(cls, entries: Mapping[str, Mapping[str, Any]]) -> WaitPlan:
        """The plan of jobs given as ``WaitEntry`` dicts, by name."""
        return cls(tuple(JobWait.of_entry(name, entry) for name, entry in entries.items()))

    def entries(self) -> dict[str, dict[str, Any]]:
        """Each job as a ``WaitEntry``, by name."""
        return {job.name: job.entry() for job in self.jobs}


def read_plan(
    waited: Mapping[str, Mapping[str, Any]],
    stack: Mapping[str, Any],
    keys: Mapping[str, Any],
    project_dir: Path,
) -> WaitPlan:
    """The wait plan of a waiter's input (``waited``: job name -> the ``resource_name`` it
    waits for and ``until``, a ``state.Waited``), whichever host gave it.

    The waiter records no other copy of a stack config job: its wait policy, location
    and (for a job with ``retry``) what submitting its next attempt takes are read here
    from the stack config the engine handed the provider (``keys``) by the loader the
    program used, and each job is parsed as its resource's ``check`` parsed it, against
    the stack settings the jobs were given (``stack``): the same request, so the same
    labels. A job a program gave as arguments has its ``config`` and ``stack`` in its
    entry (``vertex_training.program.library.wait_for_jobs``), or, a plugin job without
    ``retry``, its wait plan (``timeout_s``; its location is its resource name's).
    """
    if not waited:
        return WaitPlan(())
    from vertex_training import stackconfig

    stack_jobs: dict[str, Any] = {}
    if any("config" not in waits and "timeout_s" not in waits for waits in waited.values()):
        loaded = stackconfig.load_stack(keys, str(stack["stack"]), project_dir=project_dir)
        stack_jobs = {name: job.config for name, job in loaded.jobs.items()}
    jobs = []
    for name, waits in waited.items():
        if "config" not in waits and "timeout_s" in waits:  # a plugin job's wait plan
            jobs.append(JobWait.planned(name, waits))
            continue
        if "config" in waits:  # a job a program gave as arguments (``wait_for_jobs``)
            settings, config = stackconfig.StackSettings(**waits["stack"]), waits["config"]
        elif name in stack_jobs:
            settings, config = stackconfig.StackSettings(**stack), stack_jobs[name]
        else:
            raise BackendError(
                f"{job_key(name)} is not in the stack config the provider was given; "
                "run `pulumi up` again"
            )
        spec = stackconfig.parse_job(name, whole_numbers(config), settings)
        view: Mapping[str, Any] = view_of(spec, settings)
        wait = view["wait"]
        jobs.append(
            JobWait(
                name=name,
                resource_name=waits["resource_name"],
                until=waits["until"],
                timeout_s=wait["timeout_s"],
                start_timeout_s=wait.get("start_timeout_s"),
                location=view["location"],
                resubmission=_resubmission(view),
            )
        )
    return WaitPlan(tuple(jobs))
