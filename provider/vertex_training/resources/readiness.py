"""Whether a job is where its wait asks: one pure checker per kind of job.

A checker is a function of what the wait asked (``wait_plan.JobWait``: ``until``, the
timeouts, whether the job has ``retry``), the job's latest status (``JobStatus``, None
when the job is gone) and how long this attempt has been waited for; it gives a
``Decision``: keep waiting (and until when at most), reached, failed (with a ``Problem``
that carries what fell short, the job's state, its error, the timeout), or retry (a FAILED job
whose ``retry`` may submit its next attempt: the loop asks ``retries``, and fails it with
the same problem when there is none). No checker reads a clock or a service: the loop
(``vertex_training.resources.wait_loop``) does both, and the texts that name a job's logs
are written from a problem once the loop knows them (``Problem.text``).

The three kinds Vertex AI runs (``CustomJob``, ``HyperparameterTuningJob``,
``TrainingPipeline``) are each read by their backend as the job states of the same
meaning (``vertex_training.api.states``; a pipeline's ``PIPELINE_STATE_*`` through
``vertex_training.api.pipelines.PIPELINE_STATES``), so their checkers share one rule;
what differs is the vocabulary each answers in, kept beside its checker with the REST
reference that gives it, and each is tested against that kind's recorded responses.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from vertex_training.api import states
from vertex_training.api.pipelines import PIPELINE_STATES
from vertex_training.keys import job_key
from vertex_training.resources.why import failure_of
from vertex_training.stackconfig import WAITED

if TYPE_CHECKING:
    from vertex_training.backends.base import JobStatus
    from vertex_training.resources.wait_plan import JobWait

#: The wait that a job's start satisfies (``wait: running``; the other, ``succeeded``).
RUNNING = WAITED[0]


class Verdict(enum.Enum):
    """What the wait does with a job after a read."""

    #: Read it again when due.
    WAITING = "waiting"
    #: It is where its wait asks: it leaves the wait.
    REACHED = "reached"
    #: It fails the wait (``Decision.problem`` says why).
    FAILED = "failed"
    #: It ended FAILED and has ``retry``: its next attempt may be waited for instead.
    RETRY = "retry"


class Shortfall(enum.Enum):
    """Why a job fails the wait."""

    #: The job no longer exists.
    GONE = "gone"
    #: It ended in a state its wait does not ask for (FAILED, CANCELLED, EXPIRED, ...).
    ENDED = "ended"
    #: It had not started running when its ``start_timeout_s`` ran out.
    NOT_STARTED = "not_started"
    #: It was not where its wait asks when its ``timeout_s`` ran out.
    TIMED_OUT = "timed_out"
    #: It was not where its wait asks when the engine's timeout for the operation that
    #: waits (``customTimeouts``) ran out.
    ENGINE_TIMEOUT = "engine_timeout"


@dataclass(frozen=True)
class Problem:
    """Why a job fails the wait, as data: what fell short, the job's state then, its
    error (a failed job's), and the timeout that ran out, in seconds as it was given."""

    shortfall: Shortfall
    state: str = ""
    error: str = ""
    after_s: float = 0.0

    def text(self, job: JobWait, logs_url: Callable[[str], str]) -> str:
        """The wait's error for the job (``logs_url``: its backend's, called only for
        the texts that link the logs)."""
        name, resource_name = job.name, job.resource_name
        head = f"job {name} ({resource_name})"
        if self.shortfall is Shortfall.GONE:
            return f"{head} no longer exists; run `pulumi refresh`"
        if self.shortfall is Shortfall.ENDED:
            said = f"{head} ended {self.state}: {self.error or 'no error given'}"
        elif self.shortfall is Shortfall.NOT_STARTED:
            said = (
                f"{head} is still {self.state} after {self.after_s}s, the "
                f"{job_key(name, 'wait', 'start_timeout')} it may take to start running; it "
                f"stays submitted and in the stack, and the next `pulumi up` waits for it "
                f"again (cancel it with `pulumi destroy`, or raise start_timeout)"
            )
        elif self.shortfall is Shortfall.TIMED_OUT:
            said = (
                f"{head} is still {self.state} after waiting {self.after_s}s for it to be "
                f"{job.until}; it keeps running and stays in the stack, and the next "
                f"`pulumi up` waits for it again"
            )
        else:
            said = (
                f"{head} is still {self.state} after waiting {self.after_s:g}s for it to be "
                f"{job.until}, the time the engine gave this step (its `customTimeouts`); it "
                f"keeps running and stays in the stack, and the next `pulumi up` waits for "
                f"it again"
            )
        return f"{said}\n  logs: {logs_url(resource_name)}"


@dataclass(frozen=True)
class Decision:
    """A checker's answer for one read of one job."""

    verdict: Verdict
    #: Why it fails the wait (FAILED, and RETRY should no attempt follow); else None.
    problem: Problem | None = None
    #: WAITING: when a timeout runs out, in seconds from when this attempt began to be
    #: waited for (the job is read again no later).
    limit_s: float = math.inf


def reached(state: str, until: str) -> bool:
    """Whether a job in ``state`` is where ``until`` asks (``running``: any state it is in
    once it has started running; else SUCCEEDED)."""
    if until == RUNNING:
        return state in states.STARTED_STATES
    return state == states.SUCCEEDED


def check_job(job: JobWait, status: JobStatus | None, waited_s: float) -> Decision:
    """The rule every kind of job is waited for by: ``job``'s latest ``status`` (None:
    gone) after its current attempt has been waited for ``waited_s`` seconds."""
    if status is None:
        return Decision(Verdict.FAILED, Problem(Shortfall.GONE))
    state = status.state
    if state not in states.FAILED_STATES and reached(state, job.until):
        return Decision(Verdict.REACHED)
    if state in states.TERMINAL_STATES:
        failure = failure_of(status)
        # A failed job's message alone: the local backend appends its log, which the
        # failure shows apart (``why.failure_text``).
        error = failure.summary if failure is not None else status.error
        problem = Problem(Shortfall.ENDED, state, error)
        verdict = Verdict.RETRY if state == states.FAILED and job.retries else Verdict.FAILED
        return Decision(verdict, problem)
    started = state in states.STARTED_STATES
    if job.start_timeout_s and not started and waited_s >= job.start_timeout_s:
        late = Problem(Shortfall.NOT_STARTED, state, after_s=job.start_timeout_s)
        return Decision(Verdict.FAILED, late)
    if waited_s >= job.timeout_s:
        return Decision(Verdict.FAILED, Problem(Shortfall.TIMED_OUT, state, after_s=job.timeout_s))
    return Decision(Verdict.WAITING, limit_s=job.limit_s(started))


@dataclass(frozen=True)
class Readiness:
    """The checker of one kind of job: its resource collection, the REST reference
    that gives its states, and those states as the job states the backend reads them as."""

    kind: str
    collection: str
    reference: str
    #: The kind's states in the REST API (``JOB_STATE_RUNNING``...) -> job state.
    service_states: Mapping[str, str]

    def check(self, job: JobWait, status: JobStatus | None, waited_s: float) -> Decision:
        """``check_job``: the three kinds share its rule."""
        return check_job(job, status, waited_s)


#: JobState (google/cloud/aiplatform/v1/job_state.proto), which custom jobs and tuning
#: jobs report, without its UNSPECIFIED.
JOB_STATES: Final[Mapping[str, str]] = {
    f"JOB_STATE_{state}": state
    for state in (
        states.QUEUED,
        states.PENDING,
        states.RUNNING,
        states.SUCCEEDED,
        states.FAILED,
        states.CANCELLING,
        states.CANCELLED,
        states.PAUSED,
        states.EXPIRED,
        states.UPDATING,
        states.PARTIALLY_SUCCEEDED,
    )
}

_REST = "https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations."
CUSTOM_JOB = Readiness("CustomJob", "customJobs", f"{_REST}customJobs", JOB_STATES)
TUNING_JOB = Readiness(
    "HyperparameterTuningJob",
    "hyperparameterTuningJobs",
    f"{_REST}hyperparameterTuningJobs",
    JOB_STATES,
)
TRAINING_PIPELINE = Readiness(
    "TrainingPipeline", "trainingPipelines", f"{_REST}trainingPipelines", PIPELINE_STATES
)
#: Each kind's checker, by the collection its resource names are in (a local job's
#: names use the same collections: ``local/customJobs/7``).
CHECKERS: Final[Mapping[str, Readiness]] = {
    checker.collection: checker for checker in (CUSTOM_JOB, TUNING_JOB, TRAINING_PIPELINE)
}


def readiness_of(resource_name: str) -> Readiness:
    """The checker of the job ``resource_name`` names (a custom job's for a name in no
    collection it knows)."""
    parts = resource_name.split("/")
    return CHECKERS.get(parts[-2] if len(parts) >= 2 else "", CUSTOM_JOB)
