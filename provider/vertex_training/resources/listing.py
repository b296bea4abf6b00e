"""The jobs a stack already has, listed once per location for a whole `pulumi up`.

Before it submits a job, a create looks for a job that already carries the job's
identity label (an interrupted `pulumi up` may have submitted it): without this module,
one label lookup per job, which for Vertex AI is a ListCustomJobs call per job on top of
the CreateCustomJob, and counts against the region's request quota.

Every job of a stack carries the stack's label too (``vertex_training.api.labels``), as
does every job of another Pulumi project's stack of the same name: the listing holds them
all, and a create takes only a job whose project, stack and resource labels are its own.
So the first create of a `pulumi up` in a location lists the stack's jobs there once, and every
create after it finds the identity label in that listing. The listing is exact for what
it is used for: the engine holds the stack's lock for the whole update, so no other
update of this stack submits jobs meanwhile, and a job this process submits after the
listing has an identity no later create of this process looks for (each resource's
identity is its own; a replacement of an unchanged job takes over a job submitted before
the update began, which the listing holds). Whatever may have changed during the update
is looked up afresh, never here: the attempts of a job with ``retry`` (the waiter submits
them), and the lookups after a submission that may or may not have created the job.

The listing belongs to the provider object the provider host made from the state (one
per kind of job, configured once, serving the whole update and ending with it); it is
made in ``configure``, after the provider was pickled, so it is never part of the state.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from vertex_training.api.labels import IDENTITY_LABEL, STACK_LABEL
from vertex_training.resources.submission import owns

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus


class StackListing:
    """The jobs of each stack in each location, by identity label, listed on first use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listed: dict[str, dict[str, list[JobStatus]]] = {}

    def find(
        self, backend: Backend, location: Mapping[str, Any], labels: Mapping[str, str]
    ) -> JobStatus | None:
        """The job in ``location`` of a submission with ``labels``: the newest that carries
        its identity label and its project, stack and resource labels
        (``submission.owns``), or None. The first call for a stack and location lists its
        jobs (``backend.find_by_label`` on the stack's label); the others wait for that
        listing rather than list again."""
        stack = labels[STACK_LABEL]
        key = json.dumps([location, stack], sort_keys=True)
        with self._lock:
            listed = self._listed.get(key)
            if listed is None:
                listed = {}
                # Newest first, as listed.
                for job in backend.find_by_label(STACK_LABEL, stack):
                    listed.setdefault(job.labels.get(IDENTITY_LABEL, ""), []).append(job)
                self._listed[key] = listed
        found = listed.get(labels[IDENTITY_LABEL], [])
        return next((job for job in found if owns(labels, job)), None)
