"""The jobs the fake holds and their lifecycle: the CustomJob methods of JobService
(create, get, list, cancel, delete), and the list, cancel and delete that a
HyperparameterTuningJob shares with them.

Each job's state is computed from the clock when it is read: QUEUED -> PENDING ->
RUNNING -> an outcome, with durations from the fake's constructor or from a matching
``script``; a cancel makes it CANCELLING, then CANCELLED; a delete starts an operation
(``_operations``) and the job is gone once it is done. What only a tuning job has (its
trials) is ``_tuning``'s, which depends on this module.

It depends on ``_clock``, ``_faults``, ``_filters``, ``_operations`` and ``_validation``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
from google.cloud.aiplatform_v1.services.job_service import JobServiceClient
from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
from google.cloud.aiplatform_v1.types import hyperparameter_tuning_job as tuning_job_types
from google.cloud.aiplatform_v1.types import job_service
from google.cloud.aiplatform_v1.types.job_state import JobState
from google.protobuf import empty_pb2
from google.rpc import code_pb2, status_pb2

from vertex_training.api import states
from vertex_training.testing._clock import timestamp
from vertex_training.testing._faults import RpcError, VertexMessage
from vertex_training.testing._filters import parse_filter, parse_page_size, parse_page_token
from vertex_training.testing._operations import Operations
from vertex_training.testing._validation import validate_custom_job

#: Default phase durations, in seconds: short, so that tests run in well under a second.
DEFAULT_QUEUED_S = 0.05
DEFAULT_PENDING_S = 0.05
DEFAULT_RUN_S = 0.2
#: How long a cancelled job stays CANCELLING, and a delete operation stays not done.
DEFAULT_CANCEL_S = 0.05
DEFAULT_DELETE_S = 0.05

#: What a scripted FAILED job reports, in the form Vertex gives a replica's non-zero exit.
#: The reference does not fix the code of a failed job's error; scripts may choose it.
DEFAULT_FAILURE_MESSAGE = "The replica workerpool0-0 exited with a non-zero status of 1."
DEFAULT_FAILURE_CODE = code_pb2.INVALID_ARGUMENT
CANCELLED_MESSAGE = "The CustomJob was cancelled."
TUNING_CANCELLED_MESSAGE = "The HyperparameterTuningJob was cancelled."

#: Outcomes a script may give a job; CANCELLED comes only from CancelCustomJob.
SCRIPTABLE_OUTCOMES = (
    states.SUCCEEDED,
    states.FAILED,
    states.EXPIRED,
    states.PARTIALLY_SUCCEEDED,
)

_JOB_STATE_PREFIX = "JOB_STATE_"

#: A stockout, in the words Vertex AI uses (github.com/openreview/openreview-expertise
#: issue 401: "Resources are insufficient in region: us-central1"; the job fails before
#: it runs). The code is not recorded publicly; RESOURCE_EXHAUSTED is code.proto's
#: "Some resource has been exhausted".
STOCKOUT_MESSAGE = "Resources are insufficient in region: {region}."
STOCKOUT_CODE = code_pb2.RESOURCE_EXHAUSTED
#: A Spot VM reclaimed ("Spot VMs ... can be preempted at any time",
#: https://cloud.google.com/vertex-ai/docs/training/use-spot-vms). The fake's own words:
#: no message of Vertex AI's for it is recorded publicly.
PREEMPTED_MESSAGE = "The job was preempted: Compute Engine reclaimed its Spot VMs."
PREEMPTED_CODE = code_pb2.UNAVAILABLE
#: A FLEX_START job whose max_wait_duration ran out before its resources were found
#: (https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws: "the maximum
#: duration the job waits for the requested resources"). The fake's own words.
FLEX_EXPIRED_MESSAGE = (
    "The job could not get its resources within its max_wait_duration of {seconds}s."
)


@dataclass(frozen=True)
class Kind:
    """One kind of job resource: its message and its resource name helpers."""

    label: str
    message: type[VertexMessage]
    path: Callable[[str, str, str], str]
    parse: Callable[[str], dict[str, str]]
    template: str


CUSTOM = Kind(
    "CustomJob",
    custom_job_types.CustomJob.pb(),
    JobServiceClient.custom_job_path,
    JobServiceClient.parse_custom_job_path,
    "projects/{project}/locations/{location}/customJobs/{custom_job}",
)
TUNING = Kind(
    "HyperparameterTuningJob",
    tuning_job_types.HyperparameterTuningJob.pb(),
    JobServiceClient.hyperparameter_tuning_job_path,
    JobServiceClient.parse_hyperparameter_tuning_job_path,
    "projects/{project}/locations/{location}/hyperparameterTuningJobs/{hyperparameter_tuning_job}",
)


@dataclass(frozen=True)
class JobScript:
    """How the jobs a script matches behave: phase durations and outcome."""

    match: Callable[[custom_job_types.CustomJob], bool]
    queued_s: float
    pending_s: float
    run_s: float
    outcome: str = states.SUCCEEDED
    error_code: int = DEFAULT_FAILURE_CODE
    error_message: str = DEFAULT_FAILURE_MESSAGE


def display_name_is(display_name: str) -> Callable[[custom_job_types.CustomJob], bool]:
    """A script's match for the jobs whose display name is ``display_name``."""
    return lambda job: job.display_name == display_name


@dataclass(frozen=True)
class Ending:
    """How the scheduling model ends a job instead of its script: FAILED with ``code``
    and ``message``, ``after_s`` seconds after its creation when ``before_run`` (a
    stockout, an expired FLEX_START wait), else after it started running (a preemption)."""

    after_s: float
    code: int
    message: str
    before_run: bool


@dataclass
class JobRecord:
    """A job as created, and the times that decide its state when read.

    ``admitted_at`` is when the scheduling model (``Scheduling``) let a job that waited
    for quota leave QUEUED (None: not yet; ``created_at + queued_s`` for a job no quota
    holds back; ``held_back`` while it waits). ``ending`` overrides the script's
    outcome: a stockout, a preemption, an expired FLEX_START wait.
    """

    job: VertexMessage
    number: int
    created_at: float
    script: JobScript
    kind: Kind = CUSTOM
    cancel_at: float | None = None
    cancelled_at: float | None = None
    delete_operation: str | None = None
    deleted_at: float | None = None
    admitted_at: float | None = None
    held_back: bool = False
    ending: Ending | None = None

    def phases(self) -> list[tuple[float, str]]:
        """(start time, state) pairs in order; the job is in the last one started."""
        start = self.created_at
        planned = [(start, states.QUEUED)]
        if self.held_back and self.admitted_at is None:
            return self._cancelled(planned)
        if self.ending is not None and self.ending.before_run:
            # It ends before it runs: a stockout, or a FLEX_START wait that ran out.
            if self.ending.after_s > self.script.queued_s:
                planned.append((self.created_at + self.script.queued_s, states.PENDING))
            return self._cancelled(
                [*planned, (self.created_at + self.ending.after_s, states.FAILED)]
            )
        start = self.admitted_at if self.admitted_at is not None else start + self.script.queued_s
        planned.append((start, states.PENDING))
        start += self.script.pending_s
        planned.append((start, states.RUNNING))
        if self.ending is not None:
            planned.append((start + self.ending.after_s, states.FAILED))
        else:
            planned.append((start + self.script.run_s, self.script.outcome))
        return self._cancelled(planned)

    def error(self) -> tuple[int, str]:
        """The code and message of the job's FAILED state."""
        if self.ending is not None:
            return self.ending.code, self.ending.message
        return self.script.error_code, self.script.error_message

    def _cancelled(self, planned: list[tuple[float, str]]) -> list[tuple[float, str]]:
        if self.cancel_at is None or self.cancelled_at is None:
            return planned
        before = [(at, state) for at, state in planned if at <= self.cancel_at]
        return [*before, (self.cancel_at, states.CANCELLING), (self.cancelled_at, states.CANCELLED)]

    def state_at(self, now: float) -> tuple[float, str]:
        """The state at ``now`` and when the job entered it."""
        return [(at, state) for at, state in self.phases() if at <= now][-1]

    @property
    def running_at(self) -> float:
        """When the job enters RUNNING (its trials' times count from here)."""
        admitted = self.admitted_at
        if admitted is None:
            admitted = self.created_at + self.script.queued_s
        return admitted + self.script.pending_s

    def render_kind_fields(self, job: VertexMessage, state: str, now: float) -> None:
        """Set the output fields only this kind of job has on ``job``, the job as read
        at ``now`` in ``state``: for a CustomJob, web_access_uris while it runs."""
        if state == states.RUNNING and job.job_spec.enable_web_access:
            job.web_access_uris.update(_web_access_uris(job))


class JobStore:
    """The jobs that exist, the scripts that decide how new ones behave, and the
    JobService methods on them.

    Not thread-safe: the fake calls it with its lock held.
    """

    def __init__(
        self,
        *,
        default_script: JobScript,
        cancel_s: float,
        delete_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.default_script = default_script
        self.scripts: list[JobScript] = []
        self.jobs: dict[str, JobRecord] = {}
        self.operations = Operations(clock)
        self.clock = clock
        #: Called with each new custom job's record (the scheduling model's hook).
        self.on_create: Callable[[JobRecord], None] | None = None
        self._cancel_s = cancel_s
        self._delete_s = delete_s
        # Server-chosen numeric IDs, increasing, unique across restarts of the fake.
        self._next_number = int(clock() * 1_000_000)

    # -- JobService --------------------------------------------------------------------

    def create_custom_job(self, request: VertexMessage) -> VertexMessage:
        # job_service.proto CreateCustomJob: returns the CustomJob itself, not an
        # operation ("A created CustomJob right away will be attempted to be run").
        location = parse_location(request.parent)
        validate_custom_job(request.custom_job)
        now = self.clock()
        number = self.take_number()
        job = CUSTOM.message()
        job.CopyFrom(request.custom_job)
        # custom_job.proto: name, state, times, error and web_access_uris are OUTPUT_ONLY;
        # the service sets them whatever the request says. The ID is server-chosen.
        for output_only in (
            "state",
            "start_time",
            "end_time",
            "update_time",
            "error",
            "web_access_uris",
        ):
            job.ClearField(output_only)
        job.name = JobServiceClient.custom_job_path(
            location["project"], location["location"], str(number)
        )
        job.create_time.CopyFrom(timestamp(now))
        script = self.script_for(custom_job_types.CustomJob.wrap(job))
        record = JobRecord(job=job, number=number, created_at=now, script=script)
        if self.on_create is not None:
            self.on_create(record)
        self.jobs[job.name] = record
        return self.render(record, now)

    def get_custom_job(self, request: VertexMessage) -> VertexMessage:
        # REST projects.locations.customJobs.get: NOT_FOUND for a job that does not exist.
        return self.render(self.record(request.name), self.clock())

    def list_jobs(self, request: VertexMessage, kind: Kind) -> VertexMessage:
        # job_service.proto ListCustomJobsRequest.filter (AIP-160): display_name, state
        # and labels.KEY, joined with AND; page_size / page_token as in AIP-158. The same
        # for ListHyperparameterTuningJobsRequest, whose response leaves out the jobs'
        # trials ("HyperparameterTuningJob.trials of the jobs will be not be returned").
        location = parse_location(request.parent)
        parent = JobServiceClient.common_location_path(location["project"], location["location"])
        matches = parse_filter(request.filter)
        page_size = parse_page_size(request.page_size)
        after = parse_page_token(request.page_token)
        now = self.clock()
        # Newest first. The page token is the number of the last job returned, so
        # pages stay stable while jobs are created between calls.
        records = sorted(self.jobs.values(), key=lambda r: r.number, reverse=True)
        rendered = (
            (record.number, self.render(record, now))
            for record in records
            if record.kind is kind
            and record.job.name.startswith(parent + "/")
            and (after is None or record.number < after)
        )
        selected = [(number, job) for number, job in rendered if all(m(job) for m in matches)]
        page = selected[:page_size]
        if kind is TUNING:
            response = job_service.ListHyperparameterTuningJobsResponse.pb()()
            for _, job in page:
                job.ClearField("trials")
            response.hyperparameter_tuning_jobs.extend(job for _, job in page)
        else:
            response = job_service.ListCustomJobsResponse.pb()()
            response.custom_jobs.extend(job for _, job in page)
        if len(selected) > page_size:
            response.next_page_token = str(page[-1][0])
        return response

    def cancel_job(self, request: VertexMessage, kind: Kind) -> VertexMessage:
        # job_service.proto CancelCustomJob / CancelHyperparameterTuningJob: "Starts
        # asynchronous cancellation ... best effort"; on success the job is kept, with
        # state CANCELLED and an error whose code is 1 (Code.CANCELLED). Returns
        # google.protobuf.Empty.
        record = self.record(request.name, kind)
        now = self.clock()
        _, state = record.state_at(now)
        if state in states.TERMINAL_STATES:
            # google/rpc/code.proto FAILED_PRECONDITION: "the system is not in a state
            # required for the operation's execution". The reference does not list the
            # error; Vertex refuses to cancel a job that has already ended.
            raise RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"Cannot cancel {kind.label} {record.job.name} in state "
                f"{_JOB_STATE_PREFIX}{state}: the job has already ended.",
            )
        if state != states.CANCELLING:
            record.cancel_at = now
            record.cancelled_at = now + self._cancel_s
        return empty_pb2.Empty()

    def delete_job(self, request: VertexMessage, kind: Kind) -> VertexMessage:
        # job_service.proto DeleteCustomJob / DeleteHyperparameterTuningJob: a
        # google.longrunning.Operation with DeleteOperationMetadata and an Empty response;
        # the job is gone once it is done.
        record = self.record(request.name, kind)
        now = self.clock()
        if record.delete_operation is not None:
            return self.operations[record.delete_operation].render(now)
        _, state = record.state_at(now)
        if state not in states.TERMINAL_STATES:
            # google/rpc/code.proto FAILED_PRECONDITION ("the directory to be deleted is
            # non-empty" is its example). Vertex deletes only jobs that have ended, as
            # job_service.proto says outright of DeleteBatchPredictionJob.
            raise RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"{kind.label} {record.job.name} is in state {_JOB_STATE_PREFIX}{state} "
                "and cannot be deleted: cancel it and wait for it to end first.",
            )
        parts = kind.parse(record.job.name)
        parent = JobServiceClient.common_location_path(parts["project"], parts["location"])
        operation = self.operations.start(
            f"{parent}/operations/{self.take_number()}", now, self._delete_s
        )
        record.delete_operation = operation.name
        record.deleted_at = operation.done_at
        return operation.render(now)

    # -- state -------------------------------------------------------------------------

    def take_number(self) -> int:
        """The next server-chosen number: a new job's ID, or an operation's."""
        number = self._next_number
        self._next_number += 1
        return number

    def script_for(
        self, job: custom_job_types.CustomJob | tuning_job_types.HyperparameterTuningJob
    ) -> JobScript:
        """The script a new job follows: the latest that matches it, or the default."""
        return next((s for s in reversed(self.scripts) if s.match(job)), self.default_script)

    def record(self, name: str, kind: Kind = CUSTOM) -> JobRecord:
        """The job of this kind named ``name``; INVALID_ARGUMENT or NOT_FOUND if none."""
        if not kind.parse(name):
            raise RpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Invalid {kind.label} resource name {name!r}: expected {kind.template}.",
            )
        record = self.jobs.get(name)
        if record is None or record.kind is not kind:
            raise RpcError(grpc.StatusCode.NOT_FOUND, f"{kind.label} {name} is not found.")
        return record

    def forget_deleted(self, now: float) -> None:
        """Drop the jobs whose delete operation has finished."""
        gone = [
            name
            for name, record in self.jobs.items()
            if record.deleted_at is not None and record.deleted_at <= now
        ]
        for name in gone:
            del self.jobs[name]

    def render(self, record: JobRecord, now: float) -> VertexMessage:
        """The job as GetCustomJob (or GetHyperparameterTuningJob) returns it at ``now``
        (the output fields of custom_job.proto / hyperparameter_tuning_job.proto)."""
        entered_at, state = record.state_at(now)
        job = record.kind.message()
        job.CopyFrom(record.job)
        job.state = JobState.__members__[_JOB_STATE_PREFIX + state]
        job.update_time.CopyFrom(timestamp(entered_at))
        reached = [(at, s) for at, s in record.phases() if at <= now]
        started = next((at for at, s in reached if s == states.RUNNING), None)
        if started is not None:
            # start_time: "Time when the CustomJob for the first time entered the
            # JOB_STATE_RUNNING state."
            job.start_time.CopyFrom(timestamp(started))
        if state in states.TERMINAL_STATES:
            job.end_time.CopyFrom(timestamp(entered_at))
        # error: "Only populated when job's state is JOB_STATE_FAILED or
        # JOB_STATE_CANCELLED."
        if state == states.FAILED:
            code, message = record.error()
            job.error.CopyFrom(status_pb2.Status(code=code, message=message))
        elif state == states.CANCELLED:
            message = CANCELLED_MESSAGE if record.kind is CUSTOM else TUNING_CANCELLED_MESSAGE
            job.error.CopyFrom(status_pb2.Status(code=code_pb2.CANCELLED, message=message))
        record.render_kind_fields(job, state, now)
        return job


def parse_location(parent: str) -> dict[str, str]:
    """A request's ``parent`` as project and location; INVALID_ARGUMENT if it is not one."""
    location = JobServiceClient.parse_common_location_path(parent)
    if not location:
        raise RpcError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"Invalid parent {parent!r}: expected projects/{{project}}/locations/{{location}}.",
        )
    return location


def _web_access_uris(job: VertexMessage) -> dict[str, str]:
    """custom_job.proto web_access_uris: one per node, keyed "workerpool{i}-{replica}"."""
    parts = JobServiceClient.parse_custom_job_path(job.name)
    uris = {}
    for index, pool in enumerate(job.job_spec.worker_pool_specs):
        for replica in range(pool.replica_count):
            uris[f"workerpool{index}-{replica}"] = (
                f"https://{parts['custom_job']}-{index}-{replica}-dot-{parts['location']}"
                ".aiplatform-training.googleusercontent.com"
            )
    return uris
