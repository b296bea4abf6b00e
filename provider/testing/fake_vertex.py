"""A fake Vertex AI JobService, served over real gRPC on loopback.

The real ``google.cloud.aiplatform_v1.JobServiceClient`` talks to it through an insecure
channel to ``FakeVertex.address``; nothing is mocked on the client side. The fake serves
the CustomJob and HyperparameterTuningJob methods of
``google.cloud.aiplatform.v1.JobService`` and ``GetOperation`` of
``google.longrunning.Operations`` (which the client polls for the Delete methods); other
methods answer UNIMPLEMENTED, as gRPC does for unregistered methods.

References cited beside each behaviour (all in github.com/googleapis/googleapis unless
a URL is given):

- ``google/cloud/aiplatform/v1/job_service.proto``: the RPCs and their requests.
- ``google/cloud/aiplatform/v1/custom_job.proto``: CustomJob, its spec and field rules.
- ``google/cloud/aiplatform/v1/hyperparameter_tuning_job.proto``: HyperparameterTuningJob.
- ``google/cloud/aiplatform/v1/study.proto``: StudySpec, Trial, Measurement.
- ``google/cloud/aiplatform/v1/job_state.proto``: the states.
- ``google/longrunning/operations.proto``: long-running operations.
- ``google/rpc/code.proto``: which error code means what.
- https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.customJobs
  (create, get, list, cancel, delete).
- https://google.aip.dev/158 (pagination) and https://google.aip.dev/160 (filtering).

Time is read from a clock (``time.time`` unless a ``ManualClock`` is given), and each
job's state is computed from it when read: QUEUED -> PENDING -> RUNNING -> an outcome,
with durations from the constructor or from a matching ``script``.

A hyperparameter tuning job runs trials, planned when it is created: the parameters come
from ``provider.sampling`` (grid enumeration for GRID_SEARCH, seeded random search
otherwise) over the StudySpec it was sent; at most ``parallel_trial_count`` trials run at
once, each for ``trial_s`` seconds, and a trial starts as soon as one ends, until
``max_trial_count`` trials have run (or the grid is exhausted). Each finished trial's
final measurement comes from a deterministic function of its parameters,
``default_trial_metric``: with u_p the position of parameter p's value in its feasible
space (0 to 1, on its scale; see ``provider.sampling.unit_position``),

    score = 1 - mean over the trial's parameters of (u_p - 0.7)**2

which a MAXIMIZE metric reports as is and a MINIMIZE metric as ``1 - score``: the best
trial is the one nearest 70% of every range. A test may pass its own ``trial_metric``;
a trial for which it returns None fails (INFEASIBLE). The job SUCCEEDS when its last trial
ends with at least one trial measured; it FAILS once ``max_failed_trial_count`` trials
have failed (with 0, only if no trial succeeded). Cancelling stops the running trials
(STOPPING while the job is CANCELLING, then INFEASIBLE).

Run from another process (a Pulumi engine test points a stack at it)::

    python -m provider.testing.fake_vertex --port 0 --run-seconds 2 --trial-seconds 0.5

prints the address (``127.0.0.1:PORT``) on its first line and serves until killed.
"""

from __future__ import annotations

import argparse
import fnmatch
import functools
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent import futures
from dataclasses import dataclass, field
from types import FrameType, TracebackType
from typing import Any, NamedTuple

import grpc
from google.cloud.aiplatform_v1.services.job_service import JobServiceClient
from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
from google.cloud.aiplatform_v1.types import hyperparameter_tuning_job as tuning_job_types
from google.cloud.aiplatform_v1.types import job_service
from google.cloud.aiplatform_v1.types import operation as operation_types
from google.cloud.aiplatform_v1.types import study as study_types
from google.cloud.aiplatform_v1.types.job_state import JobState
from google.longrunning import operations_pb2
from google.protobuf import empty_pb2, json_format, struct_pb2, timestamp_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, status_pb2

from provider import states
from provider.sampling import Suggester, unit_position

__all__ = ["Call", "FakeVertex", "ManualClock", "TrialMetric", "default_trial_metric", "main"]

JOB_SERVICE = "google.cloud.aiplatform.v1.JobService"
OPERATIONS_SERVICE = "google.longrunning.Operations"
LOOPBACK_HOST = "127.0.0.1"

#: Default phase durations, in seconds: short, so that tests run in well under a second.
DEFAULT_QUEUED_S = 0.05
DEFAULT_PENDING_S = 0.05
DEFAULT_RUN_S = 0.2
#: How long each trial of a tuning job runs.
DEFAULT_TRIAL_S = 0.1
#: Where the default trial metric peaks, as a position in each parameter's range.
TRIAL_METRIC_OPTIMUM = 0.7
#: How long a cancelled job stays CANCELLING, and a delete operation stays not done.
DEFAULT_CANCEL_S = 0.05
DEFAULT_DELETE_S = 0.05

#: AIP-158: the server picks the page size when none is given, and coerces larger ones.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000

#: custom_job.proto, CustomJob.display_name: "can be up to 128 characters long".
MAX_DISPLAY_NAME_CHARS = 128
#: custom_job.proto: ContainerSpec.env / PythonPackageSpec.env "Maximum limit is 100";
#: PythonPackageSpec.package_uris "The maximum number of package URIs is 100".
MAX_ENV_VARS = 100
MAX_PACKAGE_URIS = 100
#: Google Cloud label rules (https://cloud.google.com/resource-manager/docs/labels-overview):
#: at most 64 labels; keys 1-63 characters starting with a lowercase letter; values
#: 0-63 characters; lowercase letters, digits, "_" and "-" only (international allowed).
MAX_LABELS = 64
MAX_LABEL_CHARS = 63

#: What a scripted FAILED job reports, in the form Vertex gives a replica's non-zero exit.
#: The reference does not fix the code of a failed job's error; scripts may choose it.
DEFAULT_FAILURE_MESSAGE = "The replica workerpool0-0 exited with a non-zero status of 1."
DEFAULT_FAILURE_CODE = code_pb2.INVALID_ARGUMENT
CANCELLED_MESSAGE = "The CustomJob was cancelled."
TUNING_CANCELLED_MESSAGE = "The HyperparameterTuningJob was cancelled."
#: Why a trial has no final measurement (Trial.infeasible_reason).
TRIAL_FAILED_REASON = "The trial's CustomJob failed: its replica workerpool0-0 exited with 1."
TRIAL_STOPPED_REASON = "The trial was stopped: the HyperparameterTuningJob ended."

#: Outcomes a script may give a job; CANCELLED comes only from CancelCustomJob.
SCRIPTABLE_OUTCOMES = (
    states.SUCCEEDED,
    states.FAILED,
    states.EXPIRED,
    states.PARTIALLY_SUCCEEDED,
)
#: Codes ``fail_next`` can inject.
INJECTABLE_CODES = (
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.INTERNAL,
)

_CustomJobPb = custom_job_types.CustomJob.pb()
_TuningJobPb = tuning_job_types.HyperparameterTuningJob.pb()
_TrialPb = study_types.Trial.pb()
_WorkerPoolSpecPb = custom_job_types.WorkerPoolSpec.pb()
_JOB_STATE_PREFIX = "JOB_STATE_"
_GRPC_WORKERS = 8
_FILTER_TERM = re.compile(
    r"""^(?P<field>[A-Za-z_]+(?:\.[^\s=!:<>]+)?)\s*(?P<op>!=|<=|>=|=|:|<|>)\s*"""
    r"""(?P<value>"[^"]*"|\S+)$"""
)
_FILTER_UNSUPPORTED = re.compile(r"(^|\s)(OR|NOT)(\s|$)|[()]|^-")
_QUOTED = re.compile(r'"[^"]*"')
#: AND between terms, outside double quotes (an even number of quotes follows it).
_FILTER_AND = re.compile(r'\s+AND\s+(?=(?:[^"]*"[^"]*")*[^"]*$)')


class ManualClock:
    """A clock that moves only when told to: deterministic job timelines in tests."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds``."""
        with self._lock:
            self._now += seconds


class Call(NamedTuple):
    """One RPC the fake received: its method name and its request (a protobuf message)."""

    method: str
    request: Message


#: A trial metric: (the trial's parameters, metric ID, its goal) -> value, or None when
#: the trial fails.
TrialMetric = Callable[[dict[str, Any], str, str], "float | None"]


@dataclass(frozen=True)
class _Kind:
    """One kind of job resource: its message name and its resource name helpers."""

    label: str
    path: Callable[[str, str, str], str]
    parse: Callable[[str], dict[str, str]]
    template: str


CUSTOM = _Kind(
    "CustomJob",
    JobServiceClient.custom_job_path,
    JobServiceClient.parse_custom_job_path,
    "projects/{project}/locations/{location}/customJobs/{custom_job}",
)
TUNING = _Kind(
    "HyperparameterTuningJob",
    JobServiceClient.hyperparameter_tuning_job_path,
    JobServiceClient.parse_hyperparameter_tuning_job_path,
    "projects/{project}/locations/{location}/hyperparameterTuningJobs/{hyperparameter_tuning_job}",
)


@dataclass
class _TrialPlan:
    """One trial of a tuning job: times are offsets from when the job started RUNNING."""

    id: str
    parameters: dict[str, Any]
    start: float
    end: float
    #: The final measurement by metric ID; None for a trial that fails or is stopped.
    metrics: dict[str, float] | None
    stopped: bool = False


@dataclass(frozen=True)
class _JobScript:
    """How the jobs a script matches behave: phase durations and outcome."""

    match: Callable[[custom_job_types.CustomJob], bool]
    queued_s: float
    pending_s: float
    run_s: float
    outcome: str = states.SUCCEEDED
    error_code: int = DEFAULT_FAILURE_CODE
    error_message: str = DEFAULT_FAILURE_MESSAGE


class _RpcError(Exception):
    """An RPC error to return: a gRPC status code and the message the client sees."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class _Fault:
    code: grpc.StatusCode
    message: str
    remaining: int
    take_effect: bool


@dataclass
class _JobRecord:
    """A job as created, and the times that decide its state when read."""

    job: Message
    number: int
    created_at: float
    script: _JobScript
    kind: _Kind = CUSTOM
    trials: list[_TrialPlan] = field(default_factory=list)
    cancel_at: float | None = None
    cancelled_at: float | None = None
    delete_operation: str | None = None
    deleted_at: float | None = None

    def phases(self) -> list[tuple[float, str]]:
        """(start time, state) pairs in order; the job is in the last one started."""
        start = self.created_at
        planned = [(start, states.QUEUED)]
        for duration, state in (
            (self.script.queued_s, states.PENDING),
            (self.script.pending_s, states.RUNNING),
            (self.script.run_s, self.script.outcome),
        ):
            start += duration
            planned.append((start, state))
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
        return self.created_at + self.script.queued_s + self.script.pending_s


def default_trial_metric(
    study_spec: dict[str, Any],
) -> Callable[[dict[str, Any], str, str], float | None]:
    """The fake's deterministic trial metric for a study (see the module docstring)."""
    specs = _parameter_specs(study_spec.get("parameters") or [])

    def metric(parameters: dict[str, Any], metric_id: str, goal: str) -> float | None:
        distances = [
            (unit_position(specs[pid], value) - TRIAL_METRIC_OPTIMUM) ** 2
            for pid, value in parameters.items()
            if pid in specs
        ]
        score = 1 - sum(distances) / len(distances) if distances else 1.0
        return 1 - score if goal == "MINIMIZE" else score

    return metric


def _parameter_specs(specs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every ParameterSpec (conditional ones too) by parameter ID."""
    found: dict[str, dict[str, Any]] = {}
    for spec in specs:
        found.setdefault(spec["parameterId"], spec)
        children = [c["parameterSpec"] for c in spec.get("conditionalParameterSpecs") or []]
        for pid, child in _parameter_specs(children).items():
            found.setdefault(pid, child)
    return found


def _plan_trials(
    job: Message, seed: int, trial_s: float, trial_metric: TrialMetric | None
) -> tuple[list[_TrialPlan], float, bool]:
    """Plan a tuning job's trials: (trials, how long they run in all, whether it fails).

    hyperparameter_tuning_job.proto: at most parallel_trial_count at once, max_trial_count
    in all; the job fails once max_failed_trial_count trials have failed ("the number of
    failed Trials that need to be seen before failing"); 0 lets "Vertex AI decide": here,
    the job fails only when no trial succeeds.
    """
    study_spec = json_format.MessageToDict(job.study_spec)
    metric = trial_metric or default_trial_metric(study_spec)
    metrics = [(m["metricId"], m.get("goal", "MAXIMIZE")) for m in study_spec.get("metrics", [])]
    suggester = Suggester(study_spec, seed)
    parallel = max(job.parallel_trial_count, 1)
    limit = job.max_failed_trial_count or None
    planned: list[_TrialPlan] = []
    running: list[_TrialPlan] = []
    now, failed = 0.0, 0
    while True:
        while len(running) < parallel and len(planned) < job.max_trial_count:
            point = suggester.suggest()
            if point is None:
                break
            values = {mid: metric(dict(point), mid, goal) for mid, goal in metrics}
            measured = None if any(v is None for v in values.values()) else values
            trial = _TrialPlan(str(len(planned) + 1), dict(point), now, now + trial_s, measured)
            planned.append(trial)
            running.append(trial)
        if not running:
            break
        now = min(t.end for t in running)
        finished = [t for t in running if t.end <= now]
        running = [t for t in running if t.end > now]
        failed += sum(1 for t in finished if t.metrics is None)
        if limit is not None and failed >= limit:
            for trial in running:
                trial.end, trial.stopped = now, True
            return planned, now, True
    succeeded = any(t.metrics is not None for t in planned)
    return planned, now, not succeeded


@dataclass
class _OperationRecord:
    name: str
    created_at: float
    done_at: float


class FakeVertex:
    """A fake JobService on 127.0.0.1, for the real client; a context manager.

    ``FakeVertex(queued_s=..., pending_s=..., run_s=...)`` sets every job's phase
    durations; ``script`` overrides them, and the outcome, for the jobs it matches;
    ``fail_next`` injects errors. ``calls``, ``jobs`` and ``tuning_jobs`` show what
    happened. Tuning jobs run trials of ``trial_s`` seconds whose metric is
    ``trial_metric`` (default: ``default_trial_metric``); ``script`` sets their queued
    and pending times, never their outcome (that comes from the trials).
    """

    def __init__(
        self,
        *,
        queued_s: float = DEFAULT_QUEUED_S,
        pending_s: float = DEFAULT_PENDING_S,
        run_s: float = DEFAULT_RUN_S,
        cancel_s: float = DEFAULT_CANCEL_S,
        delete_s: float = DEFAULT_DELETE_S,
        trial_s: float = DEFAULT_TRIAL_S,
        trial_metric: TrialMetric | None = None,
        port: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._default_script = _JobScript(
            match=lambda job: True, queued_s=queued_s, pending_s=pending_s, run_s=run_s
        )
        self._cancel_s = cancel_s
        self._delete_s = delete_s
        self._trial_s = trial_s
        self._trial_metric = trial_metric
        self._port = port
        self._clock = clock
        self._lock = threading.Lock()
        self._scripts: list[_JobScript] = []
        self._faults: dict[str, list[_Fault]] = {}
        self._stalls: dict[str, float] = {}
        self._calls: list[Call] = []
        self._jobs: dict[str, _JobRecord] = {}
        self._operations: dict[str, _OperationRecord] = {}
        # Server-chosen numeric IDs, increasing, unique across restarts of the fake.
        self._next_number = int(clock() * 1_000_000)
        self._server: grpc.Server | None = None
        self.address = ""

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> FakeVertex:
        """Start serving; ``address`` is then ``127.0.0.1:PORT``."""
        if self._server is not None:
            return self
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=_GRPC_WORKERS))
        server.add_generic_rpc_handlers(self._generic_handlers())
        port = server.add_insecure_port(f"{LOOPBACK_HOST}:{self._port}")
        server.start()
        self._server = server
        self.address = f"{LOOPBACK_HOST}:{port}"
        return self

    def stop(self) -> None:
        """Stop serving at once; calls in flight are cancelled."""
        if self._server is not None:
            self._server.stop(grace=None).wait()
            self._server = None

    def __enter__(self) -> FakeVertex:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- test controls ---------------------------------------------------------------

    def script(
        self,
        match: str | Callable[[custom_job_types.CustomJob], bool],
        *,
        queued_s: float | None = None,
        pending_s: float | None = None,
        run_s: float | None = None,
        outcome: str = states.SUCCEEDED,
        error_code: int = DEFAULT_FAILURE_CODE,
        error_message: str = DEFAULT_FAILURE_MESSAGE,
    ) -> None:
        """Script the jobs created from now on whose display name is ``match`` (or for
        which ``match(job)`` is true). Durations not given keep the fake's defaults;
        ``run_s=math.inf`` keeps a job RUNNING until it is cancelled. The latest
        matching script wins.
        """
        if outcome not in SCRIPTABLE_OUTCOMES:
            raise ValueError(f"outcome must be one of {SCRIPTABLE_OUTCOMES}, got {outcome!r}")
        predicate = _display_name_is(match) if isinstance(match, str) else match
        default = self._default_script
        scripted = _JobScript(
            match=predicate,
            queued_s=default.queued_s if queued_s is None else queued_s,
            pending_s=default.pending_s if pending_s is None else pending_s,
            run_s=default.run_s if run_s is None else run_s,
            outcome=outcome,
            error_code=error_code,
            error_message=error_message,
        )
        with self._lock:
            self._scripts.append(scripted)

    def stall_next(self, method: str, seconds: float) -> None:
        """Carry out the next call of ``method`` at once but answer it ``seconds`` later,
        as when the server acted and the reply is slow to arrive: a client killed in
        between never learns the job's name."""
        if method not in self._methods():
            raise ValueError(f"unknown method {method!r}; one of {sorted(self._methods())}")
        with self._lock:
            self._stalls[method] = seconds

    def fail_next(
        self,
        method: str,
        code: grpc.StatusCode,
        *,
        times: int = 1,
        message: str | None = None,
        take_effect: bool = False,
    ) -> None:
        """Make the next ``times`` calls of ``method`` (e.g. "CreateCustomJob") fail with
        ``code``. With ``take_effect`` the call is carried out before it fails, as when
        a deadline expires after the server acted (google/rpc/code.proto,
        DEADLINE_EXCEEDED: "may be returned even if the operation has completed").
        """
        if method not in self._methods():
            raise ValueError(f"unknown method {method!r}; one of {sorted(self._methods())}")
        if code not in INJECTABLE_CODES:
            raise ValueError(f"code must be one of {[c.name for c in INJECTABLE_CODES]}")
        fault = _Fault(
            code=code,
            message=message or f"Injected {code.name} for {method}.",
            remaining=times,
            take_effect=take_effect,
        )
        with self._lock:
            self._faults.setdefault(method, []).append(fault)

    @property
    def calls(self) -> list[Call]:
        """Every RPC received so far, failed ones included, oldest first."""
        with self._lock:
            return list(self._calls)

    @property
    def jobs(self) -> dict[str, custom_job_types.CustomJob]:
        """The custom jobs that exist now (not deleted), by resource name, as a client
        sees them."""
        with self._lock:
            now = self._clock()
            self._forget_deleted(now)
            return {
                name: custom_job_types.CustomJob.wrap(self._render(record, now))
                for name, record in self._jobs.items()
                if record.kind is CUSTOM
            }

    @property
    def tuning_jobs(self) -> dict[str, tuning_job_types.HyperparameterTuningJob]:
        """The hyperparameter tuning jobs that exist now, by resource name, with trials."""
        with self._lock:
            now = self._clock()
            self._forget_deleted(now)
            return {
                name: tuning_job_types.HyperparameterTuningJob.wrap(self._render(record, now))
                for name, record in self._jobs.items()
                if record.kind is TUNING
            }

    # -- gRPC plumbing ---------------------------------------------------------------

    def _methods(self) -> dict[str, tuple[str, type[Message], Callable[[Message], Message]]]:
        """Method name -> (service, request type, handler)."""
        return {
            "CreateCustomJob": (
                JOB_SERVICE,
                job_service.CreateCustomJobRequest.pb(),
                self._create_custom_job,
            ),
            "GetCustomJob": (
                JOB_SERVICE,
                job_service.GetCustomJobRequest.pb(),
                self._get_custom_job,
            ),
            "ListCustomJobs": (
                JOB_SERVICE,
                job_service.ListCustomJobsRequest.pb(),
                functools.partial(self._list_jobs, kind=CUSTOM),
            ),
            "CancelCustomJob": (
                JOB_SERVICE,
                job_service.CancelCustomJobRequest.pb(),
                functools.partial(self._cancel_job, kind=CUSTOM),
            ),
            "DeleteCustomJob": (
                JOB_SERVICE,
                job_service.DeleteCustomJobRequest.pb(),
                functools.partial(self._delete_job, kind=CUSTOM),
            ),
            "CreateHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.CreateHyperparameterTuningJobRequest.pb(),
                self._create_tuning_job,
            ),
            "GetHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.GetHyperparameterTuningJobRequest.pb(),
                self._get_tuning_job,
            ),
            "ListHyperparameterTuningJobs": (
                JOB_SERVICE,
                job_service.ListHyperparameterTuningJobsRequest.pb(),
                functools.partial(self._list_jobs, kind=TUNING),
            ),
            "CancelHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.CancelHyperparameterTuningJobRequest.pb(),
                functools.partial(self._cancel_job, kind=TUNING),
            ),
            "DeleteHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.DeleteHyperparameterTuningJobRequest.pb(),
                functools.partial(self._delete_job, kind=TUNING),
            ),
            "GetOperation": (
                OPERATIONS_SERVICE,
                operations_pb2.GetOperationRequest,
                self._get_operation,
            ),
        }

    def _generic_handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        by_service: dict[str, dict[str, grpc.RpcMethodHandler]] = {}
        for method, (service, request_type, handler) in self._methods().items():
            by_service.setdefault(service, {})[method] = grpc.unary_unary_rpc_method_handler(
                self._serve(method, handler),
                request_deserializer=request_type.FromString,
                response_serializer=_serialize,
            )
        return [
            grpc.method_handlers_generic_handler(service, handlers)
            for service, handlers in by_service.items()
        ]

    def _serve(
        self, method: str, handler: Callable[[Message], Message]
    ) -> Callable[[Message, grpc.ServicerContext], Message]:
        """Wrap a handler: record the call, inject faults, turn _RpcError into a status."""

        def serve(request: Message, context: grpc.ServicerContext) -> Message:
            with self._lock:
                self._calls.append(Call(method, request))
                self._forget_deleted(self._clock())
                fault = self._take_fault(method)
                stall_s = self._stalls.pop(method, 0.0)
                try:
                    if fault is not None and not fault.take_effect:
                        raise _RpcError(fault.code, fault.message)
                    response = handler(request)
                    if fault is not None:
                        raise _RpcError(fault.code, fault.message)
                except _RpcError as error:
                    context.abort(error.code, error.message)
            time.sleep(stall_s)
            return response

        return serve

    def _take_fault(self, method: str) -> _Fault | None:
        pending = self._faults.get(method)
        if not pending:
            return None
        fault = pending[0]
        fault.remaining -= 1
        if fault.remaining <= 0:
            pending.pop(0)
        return fault

    # -- JobService --------------------------------------------------------------------

    def _create_custom_job(self, request: Message) -> Message:
        # job_service.proto CreateCustomJob: returns the CustomJob itself, not an
        # operation ("A created CustomJob right away will be attempted to be run").
        location = _parse_location(request.parent)
        _validate_custom_job(request.custom_job)
        now = self._clock()
        number = self._take_number()
        job = _CustomJobPb()
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
        job.create_time.CopyFrom(_timestamp(now))
        wrapped = custom_job_types.CustomJob.wrap(job)
        script = next(
            (s for s in reversed(self._scripts) if s.match(wrapped)), self._default_script
        )
        record = _JobRecord(job=job, number=number, created_at=now, script=script)
        self._jobs[job.name] = record
        return self._render(record, now)

    def _get_custom_job(self, request: Message) -> Message:
        # REST projects.locations.customJobs.get: NOT_FOUND for a job that does not exist.
        return self._render(self._record(request.name), self._clock())

    def _create_tuning_job(self, request: Message) -> Message:
        # job_service.proto CreateHyperparameterTuningJob: returns the job itself, as
        # CreateCustomJob does; its trials are planned here and appear as time passes.
        location = _parse_location(request.parent)
        _validate_tuning_job(request.hyperparameter_tuning_job)
        now = self._clock()
        number = self._take_number()
        job = _TuningJobPb()
        job.CopyFrom(request.hyperparameter_tuning_job)
        # hyperparameter_tuning_job.proto: name, trials, state, times and error are
        # OUTPUT_ONLY.
        for output_only in ("trials", "state", "start_time", "end_time", "update_time", "error"):
            job.ClearField(output_only)
        job.name = TUNING.path(location["project"], location["location"], str(number))
        job.create_time.CopyFrom(_timestamp(now))
        wrapped = tuning_job_types.HyperparameterTuningJob.wrap(job)
        scripted = next(
            (s for s in reversed(self._scripts) if s.match(wrapped)), self._default_script
        )
        trials, run_s, fails = _plan_trials(job, number, self._trial_s, self._trial_metric)
        failed = sum(1 for t in trials if t.metrics is None and not t.stopped)
        script = _JobScript(
            match=scripted.match,
            queued_s=scripted.queued_s,
            pending_s=scripted.pending_s,
            run_s=run_s,
            outcome=states.FAILED if fails else states.SUCCEEDED,
            error_code=code_pb2.FAILED_PRECONDITION,
            error_message=f"{failed} of the job's trials failed.",
        )
        record = _JobRecord(
            job=job, number=number, created_at=now, script=script, kind=TUNING, trials=trials
        )
        self._jobs[job.name] = record
        return self._render(record, now)

    def _get_tuning_job(self, request: Message) -> Message:
        # REST projects.locations.hyperparameterTuningJobs.get.
        return self._render(self._record(request.name, TUNING), self._clock())

    def _list_jobs(self, request: Message, kind: _Kind) -> Message:
        # job_service.proto ListCustomJobsRequest.filter (AIP-160): display_name, state
        # and labels.KEY, joined with AND; page_size / page_token as in AIP-158. The same
        # for ListHyperparameterTuningJobsRequest, whose response leaves out the jobs'
        # trials ("HyperparameterTuningJob.trials of the jobs will be not be returned").
        location = _parse_location(request.parent)
        parent = JobServiceClient.common_location_path(location["project"], location["location"])
        matches = _parse_filter(request.filter)
        if request.page_size < 0:
            raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, "page_size must not be negative.")
        page_size = min(request.page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)
        after = _parse_page_token(request.page_token)
        now = self._clock()
        # Newest first. The page token is the number of the last job returned, so
        # pages stay stable while jobs are created between calls.
        records = sorted(self._jobs.values(), key=lambda r: r.number, reverse=True)
        rendered = (
            (record.number, self._render(record, now))
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

    def _cancel_job(self, request: Message, kind: _Kind) -> Message:
        # job_service.proto CancelCustomJob / CancelHyperparameterTuningJob: "Starts
        # asynchronous cancellation ... best effort"; on success the job is kept, with
        # state CANCELLED and an error whose code is 1 (Code.CANCELLED). Returns
        # google.protobuf.Empty.
        record = self._record(request.name, kind)
        now = self._clock()
        _, state = record.state_at(now)
        if state in states.TERMINAL_STATES:
            # google/rpc/code.proto FAILED_PRECONDITION: "the system is not in a state
            # required for the operation's execution". The reference does not list the
            # error; Vertex refuses to cancel a job that has already ended.
            raise _RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"Cannot cancel {kind.label} {record.job.name} in state "
                f"{_JOB_STATE_PREFIX}{state}: the job has already ended.",
            )
        if state != states.CANCELLING:
            record.cancel_at = now
            record.cancelled_at = now + self._cancel_s
        return empty_pb2.Empty()

    def _delete_job(self, request: Message, kind: _Kind) -> Message:
        # job_service.proto DeleteCustomJob / DeleteHyperparameterTuningJob: a
        # google.longrunning.Operation with DeleteOperationMetadata and an Empty response;
        # the job is gone once it is done.
        record = self._record(request.name, kind)
        now = self._clock()
        if record.delete_operation is not None:
            return self._render_operation(self._operations[record.delete_operation], now)
        _, state = record.state_at(now)
        if state not in states.TERMINAL_STATES:
            # google/rpc/code.proto FAILED_PRECONDITION ("the directory to be deleted is
            # non-empty" is its example). Vertex deletes only jobs that have ended, as
            # job_service.proto says outright of DeleteBatchPredictionJob.
            raise _RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"{kind.label} {record.job.name} is in state {_JOB_STATE_PREFIX}{state} "
                "and cannot be deleted: cancel it and wait for it to end first.",
            )
        parts = kind.parse(record.job.name)
        parent = JobServiceClient.common_location_path(parts["project"], parts["location"])
        operation = _OperationRecord(
            name=f"{parent}/operations/{self._take_number()}",
            created_at=now,
            done_at=now + self._delete_s,
        )
        self._operations[operation.name] = operation
        record.delete_operation = operation.name
        record.deleted_at = operation.done_at
        return self._render_operation(operation, now)

    # -- google.longrunning.Operations -----------------------------------------------

    def _get_operation(self, request: Message) -> Message:
        # google/longrunning/operations.proto GetOperation: "Clients can use this method
        # to poll the operation result at intervals".
        operation = self._operations.get(request.name)
        if operation is None:
            raise _RpcError(grpc.StatusCode.NOT_FOUND, f"Operation {request.name} is not found.")
        return self._render_operation(operation, self._clock())

    # -- state -------------------------------------------------------------------------

    def _take_number(self) -> int:
        number = self._next_number
        self._next_number += 1
        return number

    def _record(self, name: str, kind: _Kind = CUSTOM) -> _JobRecord:
        if not kind.parse(name):
            raise _RpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Invalid {kind.label} resource name {name!r}: expected {kind.template}.",
            )
        record = self._jobs.get(name)
        if record is None or record.kind is not kind:
            raise _RpcError(grpc.StatusCode.NOT_FOUND, f"{kind.label} {name} is not found.")
        return record

    def _forget_deleted(self, now: float) -> None:
        """Drop the jobs whose delete operation has finished."""
        gone = [
            name
            for name, record in self._jobs.items()
            if record.deleted_at is not None and record.deleted_at <= now
        ]
        for name in gone:
            del self._jobs[name]

    def _render(self, record: _JobRecord, now: float) -> Message:
        """The job as GetCustomJob (or GetHyperparameterTuningJob) returns it at ``now``
        (the output fields of custom_job.proto / hyperparameter_tuning_job.proto)."""
        entered_at, state = record.state_at(now)
        job = _CustomJobPb() if record.kind is CUSTOM else _TuningJobPb()
        job.CopyFrom(record.job)
        job.state = JobState[_JOB_STATE_PREFIX + state]
        job.update_time.CopyFrom(_timestamp(entered_at))
        reached = [(at, s) for at, s in record.phases() if at <= now]
        started = next((at for at, s in reached if s == states.RUNNING), None)
        if started is not None:
            # start_time: "Time when the CustomJob for the first time entered the
            # JOB_STATE_RUNNING state."
            job.start_time.CopyFrom(_timestamp(started))
        if state in states.TERMINAL_STATES:
            job.end_time.CopyFrom(_timestamp(entered_at))
        # error: "Only populated when job's state is JOB_STATE_FAILED or
        # JOB_STATE_CANCELLED."
        if state == states.FAILED:
            job.error.CopyFrom(
                status_pb2.Status(
                    code=record.script.error_code, message=record.script.error_message
                )
            )
        elif state == states.CANCELLED:
            message = CANCELLED_MESSAGE if record.kind is CUSTOM else TUNING_CANCELLED_MESSAGE
            job.error.CopyFrom(status_pb2.Status(code=code_pb2.CANCELLED, message=message))
        if record.kind is TUNING:
            job.trials.extend(_render_trials(record, now))
        elif state == states.RUNNING and job.job_spec.enable_web_access:
            job.web_access_uris.update(_web_access_uris(job))
        return job

    def _render_operation(self, operation: _OperationRecord, now: float) -> Message:
        done = now >= operation.done_at
        metadata = operation_types.DeleteOperationMetadata.pb()()
        metadata.generic_metadata.create_time.CopyFrom(_timestamp(operation.created_at))
        metadata.generic_metadata.update_time.CopyFrom(
            _timestamp(operation.done_at if done else operation.created_at)
        )
        result = operations_pb2.Operation(name=operation.name, done=done)
        result.metadata.Pack(metadata)
        if done:
            result.response.Pack(empty_pb2.Empty())
        return result


# -- trials (HyperparameterTuningJob) ---------------------------------------------------


def _render_trials(record: _JobRecord, now: float) -> list[Message]:
    """The trials that have started by ``now`` (study.proto Trial): ACTIVE while running,
    SUCCEEDED with a final measurement, or INFEASIBLE when failed or stopped; STOPPING
    while the job is being cancelled."""
    base = record.running_at
    cancel_at = record.cancel_at if record.cancel_at is not None else float("inf")
    cancelled_at = record.cancelled_at if record.cancelled_at is not None else float("inf")
    rendered = []
    for plan in record.trials:
        start = base + plan.start
        if start > now or start >= cancel_at:
            continue
        trial = _TrialPb(id=plan.id)
        trial.start_time.CopyFrom(_timestamp(start))
        for pid, value in plan.parameters.items():
            parameter = trial.parameters.add(parameter_id=pid)
            if isinstance(value, str):
                parameter.value.CopyFrom(struct_pb2.Value(string_value=value))
            else:
                parameter.value.CopyFrom(struct_pb2.Value(number_value=float(value)))
        end = base + plan.end
        if end <= now and end <= cancel_at:
            trial.end_time.CopyFrom(_timestamp(end))
            if plan.metrics is not None and not plan.stopped:
                trial.state = _TrialPb.State.SUCCEEDED
                measurement = trial.final_measurement
                measurement.step_count = 1
                for metric_id, value in plan.metrics.items():
                    measurement.metrics.add(metric_id=metric_id, value=value)
            else:
                trial.state = _TrialPb.State.INFEASIBLE
                trial.infeasible_reason = (
                    TRIAL_STOPPED_REASON if plan.stopped else TRIAL_FAILED_REASON
                )
        elif cancel_at <= now < cancelled_at:
            trial.state = _TrialPb.State.STOPPING
        elif cancelled_at <= now:
            trial.state = _TrialPb.State.INFEASIBLE
            trial.end_time.CopyFrom(_timestamp(cancelled_at))
            trial.infeasible_reason = TRIAL_STOPPED_REASON
        else:
            trial.state = _TrialPb.State.ACTIVE
        rendered.append(trial)
    return rendered


def _validate_tuning_job(job: Message) -> None:
    """Raise INVALID_ARGUMENT listing every rule of hyperparameter_tuning_job.proto and
    study.proto the job breaks (required fields, counts, grid search parameter types),
    and those of its trial job spec as for a CustomJob."""
    problems = list(_tuning_job_problems(job))
    if problems:
        listed = "".join(
            f"{index}.Field: {field}; Message: {message}\t"
            for index, (field, message) in enumerate(problems, start=1)
        )
        raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"List of found errors:\t{listed}")


def _tuning_job_problems(job: Message) -> Iterator[tuple[str, str]]:
    prefix = "hyperparameter_tuning_job"
    if not job.display_name:
        yield f"{prefix}.display_name", "Required field is not set."
    elif len(job.display_name) > MAX_DISPLAY_NAME_CHARS:
        yield (
            f"{prefix}.display_name",
            f"The display name must be at most {MAX_DISPLAY_NAME_CHARS} characters long.",
        )
    # max_trial_count, parallel_trial_count: "Required".
    for count in ("max_trial_count", "parallel_trial_count"):
        if getattr(job, count) <= 0:
            yield f"{prefix}.{count}", "Required field must be a positive number."
    if job.max_failed_trial_count < 0:
        yield f"{prefix}.max_failed_trial_count", "Must not be negative."
    yield from _study_spec_problems(f"{prefix}.study_spec", job.study_spec)
    pools = job.trial_job_spec.worker_pool_specs
    if not pools:
        yield f"{prefix}.trial_job_spec.worker_pool_specs", "Required field is not set."
    for index, pool in enumerate(pools):
        field_name = f"{prefix}.trial_job_spec.worker_pool_specs[{index}]"
        if pool == _WorkerPoolSpecPb():
            if index == 0:
                yield field_name, "The first worker pool spec (the primary replica) must be set."
            continue
        yield from _worker_pool_problems(field_name, index, pool)
    yield from _label_problems(job.labels, prefix)


def _study_spec_problems(prefix: str, study: Message) -> Iterator[tuple[str, str]]:
    # study.proto StudySpec: metrics and parameters are "Required".
    if not study.metrics:
        yield f"{prefix}.metrics", "Required field is not set."
    if not study.parameters:
        yield f"{prefix}.parameters", "Required field is not set."
    grid = study.algorithm == study_types.StudySpec.Algorithm.GRID_SEARCH
    for index, spec in enumerate(study.parameters):
        field_name = f"{prefix}.parameters[{index}]"
        kind = spec.WhichOneof("parameter_value_spec")
        if kind is None:
            yield field_name, "One of the parameter value specs must be set."
        elif grid and kind == "double_value_spec":
            # study.proto Algorithm.GRID_SEARCH: "all parameters must be INTEGER,
            # CATEGORICAL, or DISCRETE".
            yield field_name, "Grid search does not support DOUBLE parameters."


# -- validation (CreateCustomJob) -------------------------------------------------------


def _validate_custom_job(job: Message) -> None:
    """Raise INVALID_ARGUMENT listing every rule of custom_job.proto the job breaks.

    The message lists one "Field: ...; Message: ..." entry per problem, as Vertex's
    INVALID_ARGUMENT messages do.
    """
    problems = list(_custom_job_problems(job))
    if problems:
        listed = "".join(
            f"{index}.Field: {field}; Message: {message}\t"
            for index, (field, message) in enumerate(problems, start=1)
        )
        raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"List of found errors:\t{listed}")


def _custom_job_problems(job: Message) -> Iterator[tuple[str, str]]:
    # CustomJob.display_name: "Required ... can be up to 128 characters long".
    if not job.display_name:
        yield "custom_job.display_name", "Required field is not set."
    elif len(job.display_name) > MAX_DISPLAY_NAME_CHARS:
        yield (
            "custom_job.display_name",
            f"The display name must be at most {MAX_DISPLAY_NAME_CHARS} characters long.",
        )
    # CustomJobSpec.worker_pool_specs: "Required ... All worker pools except the first
    # one are optional and can be skipped by providing an empty value."
    pools = job.job_spec.worker_pool_specs
    if not pools:
        yield "custom_job.job_spec.worker_pool_specs", "Required field is not set."
    for index, pool in enumerate(pools):
        field = f"custom_job.job_spec.worker_pool_specs[{index}]"
        if pool == _WorkerPoolSpecPb():
            if index == 0:
                yield field, "The first worker pool spec (the primary replica) must be set."
            continue
        yield from _worker_pool_problems(field, index, pool)
    yield from _label_problems(job.labels)


def _worker_pool_problems(field: str, index: int, pool: Message) -> Iterator[tuple[str, str]]:
    # WorkerPoolSpec: "oneof task { container_spec; python_package_spec }". Both at
    # once cannot be sent (a oneof); neither is refused.
    task = pool.WhichOneof("task")
    if task is None:
        yield field, "Exactly one of container_spec or python_package_spec must be set."
    elif task == "container_spec":
        spec = pool.container_spec
        if not spec.image_uri:
            yield f"{field}.container_spec.image_uri", "Required field is not set."
        if len(spec.env) > MAX_ENV_VARS:
            yield f"{field}.container_spec.env", f"At most {MAX_ENV_VARS} are allowed."
    else:
        spec = pool.python_package_spec
        for required in ("executor_image_uri", "python_module"):
            if not getattr(spec, required):
                yield f"{field}.python_package_spec.{required}", "Required field is not set."
        if not spec.package_uris:
            yield f"{field}.python_package_spec.package_uris", "Required field is not set."
        elif len(spec.package_uris) > MAX_PACKAGE_URIS:
            yield (
                f"{field}.python_package_spec.package_uris",
                f"At most {MAX_PACKAGE_URIS} are allowed.",
            )
        if len(spec.env) > MAX_ENV_VARS:
            yield f"{field}.python_package_spec.env", f"At most {MAX_ENV_VARS} are allowed."
    # The primary pool (index 0) runs exactly one replica (the chief).
    if index == 0 and pool.replica_count != 1:
        yield f"{field}.replica_count", "The primary worker pool must have exactly 1 replica."
    elif pool.replica_count < 1:
        yield f"{field}.replica_count", "The replica count must be at least 1."


def _label_problems(
    labels: dict[str, str], prefix: str = "custom_job"
) -> Iterator[tuple[str, str]]:
    if len(labels) > MAX_LABELS:
        yield f"{prefix}.labels", f"At most {MAX_LABELS} labels are allowed."
    for key, value in sorted(labels.items()):
        key_ok = 1 <= len(key) <= MAX_LABEL_CHARS and _is_label_start(key[0])
        if not key_ok or not all(_is_label_char(c) for c in key):
            yield (
                f"{prefix}.labels[{key!r}]",
                "Label keys must be 1-63 characters, start with a lowercase letter and "
                "contain only lowercase letters, digits, '_' and '-'.",
            )
        if len(value) > MAX_LABEL_CHARS or not all(_is_label_char(c) for c in value):
            yield (
                f"{prefix}.labels[{key!r}]",
                "Label values must be at most 63 characters of lowercase letters, digits, "
                "'_' and '-'.",
            )


def _is_label_start(char: str) -> bool:
    return char.isalpha() and not char.isupper()


def _is_label_char(char: str) -> bool:
    return _is_label_start(char) or char.isdecimal() or char in "_-"


# -- filters, names, paging ----------------------------------------------------------------


def _parse_filter(text: str) -> list[Callable[[Message], bool]]:
    """Parse an AIP-160 filter made of ``field op value`` terms joined by AND.

    Supported, as job_service.proto ListCustomJobsRequest.filter lists them:
    ``display_name`` (=, !=, : with * wildcards), ``state`` (=, !=) and ``labels.KEY``
    (=, !=, ``:*`` for existence). OR, NOT, parentheses and create_time comparisons are
    valid Vertex filters that this fake does not implement (UNIMPLEMENTED).
    """
    text = text.strip()
    if not text:
        return []
    if _FILTER_UNSUPPORTED.search(_QUOTED.sub('""', text)):
        raise _RpcError(
            grpc.StatusCode.UNIMPLEMENTED,
            f"The fake JobService supports only terms joined by AND, got filter {text!r}.",
        )
    return [_parse_term(term) for term in _FILTER_AND.split(text)]


def _parse_term(term: str) -> Callable[[Message], bool]:
    parsed = _FILTER_TERM.match(term.strip())
    if parsed is None:
        raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid filter term {term!r}.")
    field, op, value = parsed["field"], parsed["op"], parsed["value"].strip('"')
    if field == "create_time":
        raise _RpcError(
            grpc.StatusCode.UNIMPLEMENTED,
            "The fake JobService does not filter on create_time.",
        )
    if op in ("<", "<=", ">", ">="):
        raise _RpcError(
            grpc.StatusCode.INVALID_ARGUMENT, f"{field} does not support {op} ({term!r})."
        )
    negate = op == "!="
    if field == "display_name":
        if op == ":":
            return lambda job: fnmatch.fnmatchcase(job.display_name, value)
        return lambda job: (job.display_name == value) != negate
    if field == "state" and op != ":":
        if value not in JobState.__members__:
            raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid job state {value!r}.")
        number = JobState[value]
        return lambda job: (job.state == number) != negate
    if field.startswith("labels."):
        key = field.removeprefix("labels.")
        if op == ":":
            if value != "*":
                raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid filter term {term!r}.")
            return lambda job: key in job.labels
        return lambda job: (job.labels.get(key) == value) != negate
    raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Unsupported filter field {field!r}.")


def _parse_location(parent: str) -> dict[str, str]:
    location = JobServiceClient.parse_common_location_path(parent)
    if not location:
        raise _RpcError(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"Invalid parent {parent!r}: expected projects/{{project}}/locations/{{location}}.",
        )
    return location


def _parse_page_token(token: str) -> int | None:
    if not token:
        return None
    if not token.isdecimal():
        raise _RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid page token {token!r}.")
    return int(token)


def _display_name_is(display_name: str) -> Callable[[custom_job_types.CustomJob], bool]:
    return lambda job: job.display_name == display_name


def _web_access_uris(job: Message) -> dict[str, str]:
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


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


def _timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(round(seconds * 1e9))
    return stamp


# -- command line ---------------------------------------------------------------------------


def _parse_script(text: str) -> tuple[str, str, float | None]:
    """DISPLAY_NAME=OUTCOME[@RUN_SECONDS] -> (display name, outcome, run seconds)."""
    display_name, sep, rest = text.rpartition("=")
    if not sep or not display_name:
        raise argparse.ArgumentTypeError(f"expected DISPLAY_NAME=OUTCOME[@SECONDS], got {text!r}")
    outcome, _, seconds = rest.partition("@")
    if outcome not in SCRIPTABLE_OUTCOMES:
        raise argparse.ArgumentTypeError(f"outcome must be one of {SCRIPTABLE_OUTCOMES}")
    return display_name, outcome, float(seconds) if seconds else None


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake JobService until SIGTERM or SIGINT; print its address first."""
    parser = argparse.ArgumentParser(
        prog="python -m provider.testing.fake_vertex", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--queued-seconds", type=float, default=DEFAULT_QUEUED_S)
    parser.add_argument("--pending-seconds", type=float, default=DEFAULT_PENDING_S)
    parser.add_argument(
        "--run-seconds",
        type=float,
        default=DEFAULT_RUN_S,
        help="how long each job stays RUNNING ('inf': until cancelled)",
    )
    parser.add_argument(
        "--trial-seconds",
        type=float,
        default=DEFAULT_TRIAL_S,
        help="how long each trial of a hyperparameter tuning job runs",
    )
    parser.add_argument(
        "--script",
        type=_parse_script,
        action="append",
        default=[],
        metavar="DISPLAY_NAME=OUTCOME[@SECONDS]",
        help="give jobs with this display name this outcome (and run time); repeatable",
    )
    args = parser.parse_args(argv)
    stopped = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    fake = FakeVertex(
        queued_s=args.queued_seconds,
        pending_s=args.pending_seconds,
        run_s=args.run_seconds,
        trial_s=args.trial_seconds,
        port=args.port,
    )
    for display_name, outcome, run_s in args.script:
        fake.script(display_name, outcome=outcome, run_s=run_s)
    with fake:
        print(fake.address, flush=True)
        stopped.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
