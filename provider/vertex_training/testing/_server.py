"""``FakeVertex``: the gRPC server on loopback and the wiring of the fake's parts into it.

It maps each served method of ``google.cloud.aiplatform.v1.JobService``,
``PipelineService`` (its TrainingPipeline methods), ``ModelService`` and
``google.longrunning.Operations`` to its handler (``_jobs``, ``_tuning``,
``fake_pipelines``, ``fake_models``, ``_operations``): one regional endpoint serves them
all, as Vertex AI's does. It records every call, refuses those over a request quota
(``_request_quotas``), answers the faults a test injected (``_faults``), and turns an
``RpcError`` into the call's status; it holds the one lock under which every handler runs.
It offers the test controls (``script``, ``fail_next``, ``stall_next``,
``fail_upload_next``) and views (``calls``, ``refused``, ``quota_windows``, ``jobs``,
``tuning_jobs``, ``pipelines``, ``models``).

It depends on ``_faults``, ``_request_quotas``, ``_jobs``, ``_tuning``,
``fake_pipelines`` and ``fake_models`` (and through them on the other parts); of the
fake, only ``fake_vertex`` depends on it.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import grpc
from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
from google.cloud.aiplatform_v1.types import hyperparameter_tuning_job as tuning_job_types
from google.cloud.aiplatform_v1.types import job_service, model_service, pipeline_service
from google.cloud.aiplatform_v1.types import model as model_types
from google.cloud.aiplatform_v1.types import training_pipeline as training_pipeline_types
from google.longrunning import operations_pb2
from google.protobuf.message import Message

from vertex_training.api import states
from vertex_training.testing._faults import Faults, RpcError, VertexMessage
from vertex_training.testing._jobs import (
    CUSTOM,
    DEFAULT_CANCEL_S,
    DEFAULT_DELETE_S,
    DEFAULT_FAILURE_CODE,
    DEFAULT_FAILURE_MESSAGE,
    DEFAULT_PENDING_S,
    DEFAULT_QUEUED_S,
    DEFAULT_RUN_S,
    SCRIPTABLE_OUTCOMES,
    TUNING,
    JobScript,
    JobStore,
    display_name_is,
)
from vertex_training.testing._logs import LogLine, log_lines
from vertex_training.testing._loopback import GrpcLoopbackServer
from vertex_training.testing._request_quotas import DEFAULT_WINDOW_S, QuotaWindow, RequestQuotas
from vertex_training.testing._scheduling import Scheduling
from vertex_training.testing._tuning import DEFAULT_TRIAL_S, TrialMetric, TuningJobs
from vertex_training.testing.fake_models import MODEL_SERVICE, ModelRegistry
from vertex_training.testing.fake_pipelines import PIPELINE_SERVICE, TrainingPipelines

JOB_SERVICE = "google.cloud.aiplatform.v1.JobService"
OPERATIONS_SERVICE = "google.longrunning.Operations"

_GRPC_WORKERS = 8


class Call(NamedTuple):
    """One RPC the fake received: its method name and its request (a protobuf message)."""

    method: str
    request: Message


class FakeVertex(GrpcLoopbackServer):
    """A fake JobService on 127.0.0.1, for the real client; a context manager.

    ``FakeVertex(queued_s=..., pending_s=..., run_s=...)`` sets every job's phase
    durations; ``script`` overrides them, and the outcome, for the jobs it matches;
    ``fail_next`` injects errors. ``calls``, ``jobs`` and ``tuning_jobs`` show what
    happened. Tuning jobs run trials of ``trial_s`` seconds whose metric is
    ``trial_metric`` (default: ``default_trial_metric``); ``script`` sets their queued
    and pending times, never their outcome (that comes from the trials).
    ``request_quotas`` (``{"submit": 60, "crud": 600}``: calls per ``request_window_s``
    and per project and region) refuses calls over them with RESOURCE_EXHAUSTED, as
    Vertex AI's request quotas do (``_request_quotas``); ``refused`` and
    ``quota_windows`` show what was refused. ``quotas`` is another thing: the
    custom-training quotas that keep jobs QUEUED (``set_quota``). ``token`` is the
    bearer token every call must carry, as ``require_token`` sets it (``_loopback``:
    UNAUTHENTICATED otherwise, before the call is recorded in ``calls``); ``bearers``
    shows each call's token.
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
        quotas: Mapping[str, Mapping[str, float]] | None = None,
        request_quotas: Mapping[str, int] | None = None,
        request_window_s: float = DEFAULT_WINDOW_S,
        serve_logging: bool = False,
        token: str | None = None,
    ) -> None:
        self._store = JobStore(
            default_script=JobScript(
                match=lambda job: True, queued_s=queued_s, pending_s=pending_s, run_s=run_s
            ),
            cancel_s=cancel_s,
            delete_s=delete_s,
            clock=clock,
        )
        self._scheduling = Scheduling(quotas)
        self._store.on_create = self._scheduling.created
        self._tuning = TuningJobs(self._store, trial_s=trial_s, trial_metric=trial_metric)
        self._models = ModelRegistry(
            operations=self._store.operations,
            take_number=self._store.take_number,
            delete_s=delete_s,
            clock=clock,
        )
        self._pipelines = TrainingPipelines(
            store=self._store, tuning=self._tuning, models=self._models, delete_s=delete_s
        )
        self._serve_logging = serve_logging
        super().__init__(port, workers=_GRPC_WORKERS, token=token)
        self._clock = clock
        self._lock = threading.Lock()
        self._faults = Faults()
        self._request_quotas = RequestQuotas(request_quotas, request_window_s)
        self._calls: list[Call] = []
        self._refused: list[Call] = []

    # -- lifecycle -------------------------------------------------------------------

    def _handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        """The JobService, and Cloud Logging when asked to serve it."""
        handlers = list(self._generic_handlers())
        if self._serve_logging:
            from vertex_training.testing.fake_logging import logging_handlers

            handlers += logging_handlers(self)
        return handlers

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
        predicate = display_name_is(match) if isinstance(match, str) else match
        default = self._store.default_script
        scripted = JobScript(
            match=predicate,
            queued_s=default.queued_s if queued_s is None else queued_s,
            pending_s=default.pending_s if pending_s is None else pending_s,
            run_s=default.run_s if run_s is None else run_s,
            outcome=outcome,
            error_code=error_code,
            error_message=error_message,
        )
        with self._lock:
            self._store.scripts.append(scripted)

    def stockout(self, region: str, *, times: int = 1) -> None:
        """Fail the next ``times`` jobs created in ``region`` before they run, with
        Vertex AI's "Resources are insufficient in region" (``_scheduling``)."""
        with self._lock:
            self._scheduling.stockouts[region] = self._scheduling.stockouts.get(region, 0) + times

    def preempt_spot(self, after_s: float, *, times: int = 1) -> None:
        """Preempt the next ``times`` SPOT jobs ``after_s`` seconds into running."""
        with self._lock:
            self._scheduling.preemptions.extend([after_s] * times)

    def flex_start_capacity_after(self, seconds: float) -> None:
        """FLEX_START jobs get their resources ``seconds`` after submission; one whose
        max_wait_duration is shorter fails when it runs out."""
        with self._lock:
            self._scheduling.flex_capacity_after_s = seconds

    def set_quota(self, region: str, **limits: float) -> None:
        """The region's custom-training quota: ``cpus=8``, ``NVIDIA_TESLA_T4=1``; jobs
        that would exceed it stay QUEUED until it fits."""
        with self._lock:
            self._scheduling.quotas[region] = dict(limits)

    def add_dataset(self, name: str) -> None:
        """A managed dataset (its resource name, ``projects/P/locations/R/datasets/ID``)
        that pipelines may read (``fake_pipelines``)."""
        with self._lock:
            self._pipelines.datasets.add(name)

    def fail_upload_next(self, reason: str | None = None, *, times: int = 1) -> None:
        """Make the model upload of the next ``times`` training pipelines whose backing job
        succeeds fail, as a bad serving image or an empty AIP_MODEL_DIR makes it fail: the
        pipeline ends FAILED with ``reason`` (by default Vertex AI's words for an empty
        model directory) and registers nothing (``fake_pipelines``)."""
        with self._lock:
            self._pipelines.upload_failures.extend([reason] * times)

    def log_entries(self) -> list[LogLine]:
        """The log lines the fake's jobs have written by now (invented; ``_logs``)."""
        with self._lock:
            now = self._clock()
            self._tick(now)
            return log_lines(self._store.jobs.values(), now)

    def stall_next(self, method: str, seconds: float) -> None:
        """Carry out the next call of ``method`` at once but answer it ``seconds`` later,
        as when the server acted and the reply is slow to arrive: a client killed in
        between never learns the job's name."""
        if method not in self._methods():
            raise ValueError(f"unknown method {method!r}; one of {sorted(self._methods())}")
        with self._lock:
            self._faults.stall_next(method, seconds)

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
        DEADLINE_EXCEEDED: "may be returned even if the operation has completed"); the
        reference leaves open whether INTERNAL and UNKNOWN took effect too, and warns
        that retrying after UNAVAILABLE "is not always safe", so all four are injectable
        either way. Without it (the default) the call fails before anything
        happens. Refusals (INVALID_ARGUMENT, NOT_FOUND, PERMISSION_DENIED,
        RESOURCE_EXHAUSTED) never take effect (``_faults.MAY_TAKE_EFFECT_CODES``).
        """
        if method not in self._methods():
            raise ValueError(f"unknown method {method!r}; one of {sorted(self._methods())}")
        with self._lock:
            self._faults.fail_next(
                method, code, times=times, message=message, take_effect=take_effect
            )

    @property
    def calls(self) -> list[Call]:
        """Every RPC received so far, failed ones included, oldest first."""
        with self._lock:
            return list(self._calls)

    @property
    def refused(self) -> list[Call]:
        """The calls refused for a request quota (RESOURCE_EXHAUSTED), oldest first; they
        are in ``calls`` too. Injected faults are not among them."""
        with self._lock:
            return list(self._refused)

    @property
    def quota_windows(self) -> list[QuotaWindow]:
        """Each request quota window in which a call came: its quota ("submit" or
        "crud"), project, region and start, and the calls it admitted and refused."""
        with self._lock:
            return self._request_quotas.windows()

    @property
    def jobs(self) -> dict[str, custom_job_types.CustomJob]:
        """The custom jobs that exist now (not deleted), by resource name, as a client
        sees them."""
        with self._lock:
            now = self._clock()
            self._tick(now)
            return {
                name: custom_job_types.CustomJob.wrap(self._store.render(record, now))
                for name, record in self._store.jobs.items()
                if record.kind is CUSTOM
            }

    @property
    def tuning_jobs(self) -> dict[str, tuning_job_types.HyperparameterTuningJob]:
        """The hyperparameter tuning jobs that exist now, by resource name, with trials."""
        with self._lock:
            now = self._clock()
            self._tick(now)
            return {
                name: tuning_job_types.HyperparameterTuningJob.wrap(self._store.render(record, now))
                for name, record in self._store.jobs.items()
                if record.kind is TUNING
            }

    @property
    def pipelines(self) -> dict[str, training_pipeline_types.TrainingPipeline]:
        """The training pipelines that exist now, by resource name, as a client sees them."""
        with self._lock:
            now = self._clock()
            self._tick(now)
            return {
                name: training_pipeline_types.TrainingPipeline.wrap(
                    self._pipelines.render(record, now)
                )
                for name, record in self._pipelines.pipelines.items()
            }

    @property
    def models(self) -> dict[str, list[model_types.Model]]:
        """The models that exist now, by resource name: each one's versions, oldest first."""
        with self._lock:
            self._tick(self._clock())
            return {
                name: [
                    model_types.Model.wrap(ModelRegistry.copy(v)) for v in record.versions.values()
                ]
                for name, record in self._models.models.items()
            }

    # -- gRPC plumbing ---------------------------------------------------------------

    def _methods(
        self,
    ) -> dict[str, tuple[str, type[Message], Callable[[VertexMessage], Message]]]:
        """Method name -> (service, request type, handler)."""
        store, tuning = self._store, self._tuning
        pipelines, models = self._pipelines, self._models
        return {
            "CreateCustomJob": (
                JOB_SERVICE,
                job_service.CreateCustomJobRequest.pb(),
                store.create_custom_job,
            ),
            "GetCustomJob": (
                JOB_SERVICE,
                job_service.GetCustomJobRequest.pb(),
                store.get_custom_job,
            ),
            "ListCustomJobs": (
                JOB_SERVICE,
                job_service.ListCustomJobsRequest.pb(),
                functools.partial(store.list_jobs, kind=CUSTOM),
            ),
            "CancelCustomJob": (
                JOB_SERVICE,
                job_service.CancelCustomJobRequest.pb(),
                functools.partial(store.cancel_job, kind=CUSTOM),
            ),
            "DeleteCustomJob": (
                JOB_SERVICE,
                job_service.DeleteCustomJobRequest.pb(),
                functools.partial(store.delete_job, kind=CUSTOM),
            ),
            "CreateHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.CreateHyperparameterTuningJobRequest.pb(),
                tuning.create_tuning_job,
            ),
            "GetHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.GetHyperparameterTuningJobRequest.pb(),
                tuning.get_tuning_job,
            ),
            "ListHyperparameterTuningJobs": (
                JOB_SERVICE,
                job_service.ListHyperparameterTuningJobsRequest.pb(),
                functools.partial(store.list_jobs, kind=TUNING),
            ),
            "CancelHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.CancelHyperparameterTuningJobRequest.pb(),
                functools.partial(store.cancel_job, kind=TUNING),
            ),
            "DeleteHyperparameterTuningJob": (
                JOB_SERVICE,
                job_service.DeleteHyperparameterTuningJobRequest.pb(),
                functools.partial(store.delete_job, kind=TUNING),
            ),
            "CreateTrainingPipeline": (
                PIPELINE_SERVICE,
                pipeline_service.CreateTrainingPipelineRequest.pb(),
                pipelines.create_training_pipeline,
            ),
            "GetTrainingPipeline": (
                PIPELINE_SERVICE,
                pipeline_service.GetTrainingPipelineRequest.pb(),
                pipelines.get_training_pipeline,
            ),
            "ListTrainingPipelines": (
                PIPELINE_SERVICE,
                pipeline_service.ListTrainingPipelinesRequest.pb(),
                pipelines.list_training_pipelines,
            ),
            "CancelTrainingPipeline": (
                PIPELINE_SERVICE,
                pipeline_service.CancelTrainingPipelineRequest.pb(),
                pipelines.cancel_training_pipeline,
            ),
            "DeleteTrainingPipeline": (
                PIPELINE_SERVICE,
                pipeline_service.DeleteTrainingPipelineRequest.pb(),
                pipelines.delete_training_pipeline,
            ),
            "GetModel": (MODEL_SERVICE, model_service.GetModelRequest.pb(), models.get_model),
            "ListModels": (
                MODEL_SERVICE,
                model_service.ListModelsRequest.pb(),
                models.list_models,
            ),
            "ListModelVersions": (
                MODEL_SERVICE,
                model_service.ListModelVersionsRequest.pb(),
                models.list_model_versions,
            ),
            "DeleteModelVersion": (
                MODEL_SERVICE,
                model_service.DeleteModelVersionRequest.pb(),
                models.delete_model_version,
            ),
            "DeleteModel": (
                MODEL_SERVICE,
                model_service.DeleteModelRequest.pb(),
                models.delete_model,
            ),
            "GetOperation": (
                OPERATIONS_SERVICE,
                operations_pb2.GetOperationRequest,
                store.operations.get_operation,
            ),
        }

    def _generic_handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        by_service: dict[str, dict[str, grpc.RpcMethodHandler[Message, Message]]] = {}
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
        self, method: str, handler: Callable[[VertexMessage], Message]
    ) -> Callable[[Message, grpc.ServicerContext], Message]:
        """Wrap a handler: record the call, refuse it over a request quota, inject faults,
        turn RpcError into a status."""

        def serve(request: Message, context: grpc.ServicerContext) -> Message:
            with self._lock:
                self._calls.append(Call(method, request))
                now = self._clock()
                self._tick(now)
                # A call over quota is refused before anything, injected faults included.
                refusal = self._request_quotas.refusal(method, request, now)
                if refusal is not None:
                    self._refused.append(Call(method, request))
                    context.abort(refusal.code, refusal.message)
                fault, stall_s = self._faults.take(method)
                try:
                    if fault is not None and not fault.take_effect:
                        raise RpcError(fault.code, fault.message)
                    response = handler(request)
                    if fault is not None:
                        raise RpcError(fault.code, fault.message)
                except RpcError as error:
                    context.abort(error.code, error.message)
            time.sleep(stall_s)
            return response

        return serve

    def _tick(self, now: float) -> None:
        """Bring the jobs to ``now``: pipelines whose job ended settled (their models
        registered), deleted ones gone, queued ones admitted. Lock held."""
        self._pipelines.settle(now)
        self._store.forget_deleted(now)
        self._pipelines.forget_deleted(now)
        self._models.forget_deleted(now)
        self._scheduling.admit(self._store.jobs.values(), now)


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()
