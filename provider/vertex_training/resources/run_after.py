"""A job submitted after others (``run_after``): its create waits until each has
succeeded, then submits it.

The jobs it runs after are named by resource name (in a program, the other jobs' IDs,
which also make the engine create them first). Its create reads each, names it by the
Pulumi resource its labels give (or its ID), and waits for them all as the waiter waits
(``waiter.wait_for``: each read on its own schedule, the state of each on the job's row
of `pulumi up`). When one ends FAILED, CANCELLED or EXPIRED, or no longer exists, the
create fails naming it and its failure, and nothing is submitted; so it does at the
engine's cancel (Ctrl-C, through the plugin). The next `pulumi up` tries again.

A job it runs after that ended FAILED, CANCELLED or EXPIRED is followed to the newest job
its resource submitted after it in the same location (by their labels): the attempt its
``retry`` made, which the resource's ID (the first attempt's) does not name.

The wait has no timeout of its own: the jobs it waits for end by their own
``scheduling.timeout`` (Vertex AI's default is 7 days). In the Python dynamic provider
host, a create that waits holds one of its four threads; jobs that run after others are
few in a stack (a pipeline's later steps), and the engine does not create them before the
jobs they run after anyway.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from vertex_training.api import states
from vertex_training.api.labels import RESOURCE_LABEL
from vertex_training.api.times import epoch_s
from vertex_training.backends.base import job_id_of, location_of
from vertex_training.errors import BackendError, JobEndedError
from vertex_training.resources.cancellation import PROCESS, Cancellation, WaitCancelledError
from vertex_training.resources.submission import owns

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus
    from vertex_training.resources.progress import EngineLog
    from vertex_training.resources.state import ProviderSettings

#: What the create's message says of a job it did not submit.
NOT_SUBMITTED = "it was not submitted"


def wait_to_run(
    name: str,
    run_after: Sequence[str],
    settings: ProviderSettings,
    log: EngineLog | None = None,
    *,
    cancel: Cancellation = PROCESS,
    **timing: Any,
) -> dict[str, str]:
    """Wait until every job of ``run_after`` (resource names) has succeeded; return each
    one's final state by the name it is shown under. ``name`` is the job that runs after
    them. A job that failed, was cancelled, expired or is gone, or a stop (Ctrl-C), raises
    BackendError naming it and saying that ``name`` was not submitted. ``timing``
    (``clock``, ``monotonic``, ``sleep``) goes to ``waiter.wait_for``, for tests."""
    from vertex_training.backends import connect
    from vertex_training.resources.waiter import SUCCEEDED, wait_for

    connection = settings.connection()
    entries: dict[str, dict[str, Any]] = {}
    for resource_name in run_after:
        location = location_of(resource_name)
        backend = connect(location, connection)
        status = backend.get(resource_name)
        if status is None:
            raise BackendError(
                f"job {name} runs after {resource_name}, which does not exist; "
                f"{NOT_SUBMITTED}. Run `pulumi refresh` if that job was deleted, or no longer "
                "list it among the jobs this one runs after"
            )
        if status.state in states.FAILED_STATES:
            status = latest_submission(backend, status)
        shown = status.labels.get(RESOURCE_LABEL) or job_id_of(resource_name)
        until = {"until": SUCCEEDED, "timeout_s": math.inf}
        entries[shown] = {"resource_name": status.name, "wait": until, "location": location}
    try:
        return wait_for(entries, settings=settings, log=log, cancel=cancel, **timing)
    except WaitCancelledError as stopped:
        seen = ", ".join(f"{job} {state}" for job, state in sorted(stopped.last_states.items()))
        raise BackendError(
            f"the wait of job {name} for the jobs it runs after was stopped (Ctrl-C)"
            + (f"; last seen: {seen}" if seen else "")
            + f"; {NOT_SUBMITTED}, and the next `pulumi up` waits for them again"
        ) from stopped
    except JobEndedError as ended:
        raise JobEndedError(
            f"job {name} runs after a job that did not succeed, so {NOT_SUBMITTED}; once "
            "that job is submitted again (change it, or bump its `rerun`) and succeeds, the "
            f"next `pulumi up` submits this one:\n{ended}"
        ) from ended


def latest_submission(backend: Backend, failed: JobStatus) -> JobStatus:
    """The newest job of the Pulumi resource that submitted ``failed`` (the same project,
    stack and resource labels) in its location, if newer than it: the attempt a job's
    ``retry`` submitted after it, which its resource's ID does not name. Else ``failed``."""
    resource = failed.labels.get(RESOURCE_LABEL)
    if not resource:
        return failed
    jobs = [
        job for job in backend.find_by_label(RESOURCE_LABEL, resource) if owns(failed.labels, job)
    ]
    newer = [job for job in jobs if _created(job) > _created(failed)]
    return max(newer, key=_created) if newer else failed


def _created(job: JobStatus) -> float:
    return epoch_s(job.create_time) or 0.0


def runs_after(inputs: Mapping[str, Any]) -> list[str]:
    """The jobs a job's view (``state.JobView``) runs after; [] for none, and for an
    adopted job (already submitted)."""
    return [] if inputs.get("adopt") else list(inputs.get("run_after") or [])
