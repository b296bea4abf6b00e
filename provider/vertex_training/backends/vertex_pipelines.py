"""The pipeline and model half of the ``vertex`` backend: training pipelines through
``PipelineServiceClient``, the models they register through ``ModelServiceClient``.

``VertexBackend`` (``vertex``, which imports this module, never the other way round) hands
this module every call on a ``.../trainingPipelines/ID`` name, and every pipeline body
(``vertex_training.api.pipelines.is_pipeline_body``); its clients are made as the
backend's JobServiceClient is (same endpoint, credentials, loopback channel), and every
call goes through the backend's ``_invoke`` (pacing, retries, error mapping): what this
module needs of the backend is ``BackendCalls``.
Sources (github.com/googleapis/googleapis): ``google/cloud/aiplatform/v1/
pipeline_service.proto``, ``training_pipeline.proto``, ``model_service.proto``,
``model.proto``.

- ``submit``: CreateTrainingPipeline, which is no more idempotent than CreateCustomJob
  (no request ID, no caller-chosen ID): the same retries and ``UncertainError``. The
  body asks for ``default`` among the model's aliases itself
  (``vertex_training.stackconfig.ModelUpload.request_body``).
- ``get``: the pipeline as a ``JobStatus`` with the job states' names
  (``PIPELINE_STATES``), its backing job (``training_task_metadata``), the pools of its
  task's inputs, a tuning task's trials (read from its backing tuning job), and once
  SUCCEEDED the version it registered, read with GetModel of ``name@version`` (its
  aliases now, its artifact URI).
- ``listed``: the label lookup's pipelines beside its jobs. A pipeline's backing job is
  left out of the jobs: Vertex AI may give it the pipeline's labels, and it is never a
  job of its own.
- ``delete``: the pipeline's backing job (a record) and then the pipeline; never the
  model. ``cancel``: CancelTrainingPipeline, which cancels the backing job.
- ``find_model``, ``model_versions``: GetModel, ListModels and ListModelVersions.
- A pipeline's logs are its backing job's (``backing_job_of``).

It also reads a tuning study's metric and trials (``primary_metric``, ``trials_of``), for a
tuning job's status (``vertex``) and a tuning pipeline's (from its backing tuning job).

Google client libraries are imported inside the functions, as in ``vertex``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeVar, overload

from vertex_training.api import states
from vertex_training.api.pipelines import (
    PIPELINE_STATES,
    is_tuning_definition,
)
from vertex_training.api.scheduling import shape_of_spec
from vertex_training.backends.base import JobStatus, RegisteredModel, Trial
from vertex_training.errors import PermanentError

if TYPE_CHECKING:
    from google.api_core.retry import Retry
    from google.cloud.aiplatform_v1 import ModelServiceClient, PipelineServiceClient
    from google.protobuf.message import Message

_T = TypeVar("_T")

#: The collection of training pipelines in a resource name, and the segments it has.
PIPELINES: Final = "trainingPipelines"
_NAME_SEGMENTS = 6
#: training_task_metadata's keys for the backing jobs (the task definitions' schemas).
BACKING_CUSTOM_JOB, BACKING_TUNING_JOB = "backingCustomJob", "backingHyperparameterTuningJob"
_PIPELINE_PREFIX = "PIPELINE_"


def is_pipeline_name(name: str) -> bool:
    """Whether ``name`` is a TrainingPipeline's resource name (read without loading the
    client library)."""
    parts = name.split("/")
    return len(parts) == _NAME_SEGMENTS and parts[4] == PIPELINES


class BackendCalls(Protocol):
    """What ``PipelineCalls`` uses of its ``VertexBackend``."""

    project: str
    region: str

    @overload
    def _invoke(self, call: Callable[[Retry], _T]) -> _T: ...

    @overload
    def _invoke(self, call: Callable[[Retry], _T], *, tolerate: Collection[str]) -> _T | None: ...

    def create(self, call: Callable[[Retry], _T]) -> _T:
        """Make a Create call (paced as a submission; ``UncertainError``)."""

    def await_delete(self, method: Callable[..., Any], name: str) -> None:
        """Call a Delete method and wait for its operation; not found is done."""

    def delete(self, name: str) -> None:
        """Delete a job."""

    def _fetch(self, name: str) -> Any:
        """A job's message, or None."""

    def service_client(self, service: str) -> Any:
        """The client of ``service`` ("pipeline", "model")."""


class PipelineCalls:
    """The training pipeline and Model Registry calls of one ``VertexBackend``.

    ``timeout_s`` is each call's deadline; ``pipeline_client`` and ``model_client`` are
    the backend's injected clients, if any; otherwise they are made on first use as its
    JobServiceClient is.
    """

    def __init__(
        self,
        backend: BackendCalls,
        timeout_s: float,
        pipeline_client: PipelineServiceClient | None = None,
        model_client: ModelServiceClient | None = None,
    ) -> None:
        self._backend = backend
        self._timeout_s = timeout_s
        self._pipeline_client = pipeline_client
        self._model_client = model_client

    # -- pipelines ------------------------------------------------------------------------

    def submit(self, body: Mapping[str, Any]) -> JobStatus:
        """Create the TrainingPipeline of a REST JSON body; return it as created."""
        from google.cloud.aiplatform_v1.types import TrainingPipeline
        from google.protobuf import json_format

        client = self.pipeline_client()
        message = TrainingPipeline.pb()()
        try:
            json_format.ParseDict(dict(body), message)
        except json_format.ParseError as exc:
            raise PermanentError(
                f"The request body is not a valid TrainingPipeline: {exc}"
            ) from exc
        pipeline = TrainingPipeline.wrap(message)
        created = self._backend.create(
            lambda retry: client.create_training_pipeline(
                parent=client.common_location_path(self._backend.project, self._backend.region),
                training_pipeline=pipeline,
                retry=retry,
                timeout=self._timeout_s,
            )
        )
        return pipeline_status(created)

    def fetch(self, name: str) -> Any:
        """The pipeline's message, or None when it does not exist."""
        client = self.pipeline_client()
        return self._backend._invoke(
            lambda retry: client.get_training_pipeline(
                name=name, retry=retry, timeout=self._timeout_s
            ),
            tolerate={"NOT_FOUND"},
        )

    def get(self, name: str) -> JobStatus | None:
        """The pipeline with its backing job, a tuning task's trials and, once it has
        succeeded, the model version it registered; None when it does not exist."""
        pipeline = self.fetch(name)
        if pipeline is None:
            return None
        message = type(pipeline).pb(pipeline)
        backing = backing_job(pipeline)
        trials: list[Trial] = []
        if backing and _is_tuning(message):
            tuning_job = self._backend._fetch(backing)
            trials = [] if tuning_job is None else trials_of(type(tuning_job).pb(tuning_job))
        model = None
        upload = message.model_to_upload
        if message.state == _succeeded() and upload.name:
            version = self._model(f"{upload.name}@{upload.version_id}")
            model = _registered(upload, aliases=False) if version is None else _registered(version)
        return pipeline_status(pipeline, model=model, trials=trials)

    def listed(self, filter_: str, jobs: list[JobStatus]) -> list[JobStatus]:
        """``jobs`` (a lookup's jobs, newest first) and the pipelines ``filter_`` selects,
        newest first, without the pipelines' backing jobs. A pipeline's model is what the
        pipeline names (its aliases are left out: ``get`` reads them)."""
        client = self.pipeline_client()
        request = {
            "parent": client.common_location_path(self._backend.project, self._backend.region),
            "filter": filter_,
        }
        found = self._backend._invoke(
            lambda retry: list(
                client.list_training_pipelines(
                    request=request, retry=retry, timeout=self._timeout_s
                )
            ),
        )
        pipelines = [pipeline_status(pipeline) for pipeline in found]
        backing = {status.backing_job for status in pipelines}
        kept = [job for job in jobs if job.name not in backing]
        return sorted([*kept, *pipelines], key=lambda s: _nanoseconds(s.create_time), reverse=True)

    def cancel(self, name: str) -> None:
        """Ask Vertex AI to cancel the pipeline (and so its backing job); not found or
        already ended is not an error."""
        client = self.pipeline_client()
        self._backend._invoke(
            lambda retry: client.cancel_training_pipeline(
                name=name, retry=retry, timeout=self._timeout_s
            ),
            tolerate={"NOT_FOUND", "FAILED_PRECONDITION"},
        )

    def delete(self, name: str) -> None:
        """Delete an ended pipeline's backing job, then the pipeline, waiting for each
        operation; never its model. Not found is done; a pipeline that has not ended is
        refused (FAILED_PRECONDITION -> PermanentError): cancel it and wait first."""
        pipeline = self.fetch(name)
        if pipeline is None:
            return
        state = type(pipeline).pb(pipeline).state
        backing = backing_job(pipeline)
        if backing and _state_name(state) in states.TERMINAL_STATES:
            self._backend.delete(backing)
        self._backend.await_delete(self.pipeline_client().delete_training_pipeline, name)

    def output_directory(self, name: str) -> str:
        """The base output directory of the pipeline's task ("" when it names none): a
        tuning task's trials write under ``<it>/<trial ID>``."""
        pipeline = self.fetch(name)
        if pipeline is None:
            return ""
        message = type(pipeline).pb(pipeline)
        spec = _task_spec(message)
        return str((spec.get("baseOutputDirectory") or {}).get("outputUriPrefix") or "")

    def backing_job_of(self, name: str) -> str:
        """The pipeline's backing job's resource name ("" before it has one)."""
        pipeline = self.fetch(name)
        return "" if pipeline is None else backing_job(pipeline)

    # -- models ---------------------------------------------------------------------------

    def find_model(self, model_id: str, owner_filter: str) -> str | None:
        """The model ``model_id`` (GetModel), else the newest model ``owner_filter`` (a
        ListModels filter on the owner labels) selects; None when there is none (or
        nothing to look for)."""
        client = self.model_client()
        backend = self._backend
        if model_id:
            name = client.model_path(backend.project, backend.region, model_id)
            return None if self._model(name) is None else name
        if not owner_filter:
            return None
        request = {
            "parent": client.common_location_path(backend.project, backend.region),
            "filter": owner_filter,
        }
        found = backend._invoke(
            lambda retry: list(
                client.list_models(request=request, retry=retry, timeout=self._timeout_s)
            ),
        )
        if not found:
            return None
        newest = max(found, key=lambda model: type(model).pb(model).create_time.ToNanoseconds())
        return str(newest.name)

    def model_versions(self, model: str) -> list[RegisteredModel]:
        """Every version of ``model`` (ListModelVersions), oldest first; [] when it does
        not exist."""
        client = self.model_client()
        found = self._backend._invoke(
            lambda retry: list(
                client.list_model_versions(name=model, retry=retry, timeout=self._timeout_s)
            ),
            tolerate={"NOT_FOUND"},
        )
        versions = [_registered(type(v).pb(v)) for v in found or []]
        return sorted(versions, key=lambda v: int(v.version_id) if v.version_id.isdecimal() else 0)

    def _model(self, name: str) -> Any:
        """GetModel's raw message for ``name`` (``models/M`` or ``models/M@V``), or None."""
        client = self.model_client()
        model = self._backend._invoke(
            lambda retry: client.get_model(name=name, retry=retry, timeout=self._timeout_s),
            tolerate={"NOT_FOUND"},
        )
        return None if model is None else type(model).pb(model)

    # -- clients --------------------------------------------------------------------------

    def pipeline_client(self) -> PipelineServiceClient:
        """The PipelineServiceClient: the injected one, else the backend's kind."""
        if self._pipeline_client is None:
            self._pipeline_client = self._backend.service_client("pipeline")
        return self._pipeline_client

    def model_client(self) -> ModelServiceClient:
        """The ModelServiceClient: the injected one, else the backend's kind."""
        if self._model_client is None:
            self._model_client = self._backend.service_client("model")
        return self._model_client


def backing_job(pipeline: Any) -> str:
    """The backing job's name in a pipeline's ``training_task_metadata`` ("" for none)."""
    from google.protobuf import json_format

    message = type(pipeline).pb(pipeline) if hasattr(type(pipeline), "pb") else pipeline
    # A google.protobuf.Value: an object here, but any JSON value in general.
    metadata: Any = json_format.MessageToDict(message.training_task_metadata)
    if not isinstance(metadata, dict):
        return ""
    return str(metadata.get(BACKING_CUSTOM_JOB) or metadata.get(BACKING_TUNING_JOB) or "")


def pipeline_status(
    pipeline: Any, *, model: RegisteredModel | None = None, trials: list[Trial] | None = None
) -> JobStatus:
    """A TrainingPipeline as a ``JobStatus``: its state as the job state of the same
    meaning, its task's pools, and ``model`` (by default: what the pipeline names once it
    has SUCCEEDED); a tuning task's ``trials``, read from its backing job."""
    message = type(pipeline).pb(pipeline)

    def rfc3339(field: str) -> str:
        return getattr(message, field).ToJsonString() if message.HasField(field) else ""

    state = _state_name(message.state)
    upload = message.model_to_upload
    if model is None and state == states.SUCCEEDED and upload.name:
        model = _registered(upload, aliases=False)
    spec = _task_spec(message)
    pools, strategy = shape_of_spec(spec)
    metric_id, goal, max_trials = _study(message)
    return JobStatus(
        name=message.name,
        state=state,
        display_name=message.display_name,
        error=message.error.message if message.HasField("error") else "",
        error_code=message.error.code if message.HasField("error") else 0,
        create_time=rfc3339("create_time"),
        start_time=rfc3339("start_time"),
        end_time=rfc3339("end_time"),
        labels=dict(message.labels),
        trials=list(trials or []),
        metric_id=metric_id,
        goal=goal,
        max_trials=max_trials,
        pools=pools,
        strategy=strategy,
        backing_job=backing_job(message),
        model=model,
    )


def _state_name(state: int) -> str:
    """A PipelineState number as the job state of the same meaning."""
    from google.cloud.aiplatform_v1.types import PipelineState

    name = PipelineState(state).name
    return PIPELINE_STATES.get(name, name.removeprefix(_PIPELINE_PREFIX))


def _succeeded() -> int:
    from google.cloud.aiplatform_v1.types import PipelineState

    return int(PipelineState.PIPELINE_STATE_SUCCEEDED)


def _is_tuning(message: Any) -> bool:
    """Whether the pipeline runs the tuning task (False for any other task)."""
    try:
        return is_tuning_definition(message.training_task_definition)
    except ValueError:
        return False


def _inputs(message: Any) -> dict[str, Any]:
    from google.protobuf import json_format

    inputs: Any = json_format.MessageToDict(message.training_task_inputs)
    return inputs if isinstance(inputs, dict) else {}


def _task_spec(message: Any) -> dict[str, Any]:
    """The CustomJobSpec (REST JSON) the pipeline's task runs: a custom task's inputs, a
    tuning task's ``trialJobSpec``; {} for another task."""
    inputs = _inputs(message)
    if _is_tuning(message):
        spec = inputs.get("trialJobSpec")
        return spec if isinstance(spec, dict) else {}
    return inputs if "workerPoolSpecs" in inputs else {}


def _study(message: Any) -> tuple[str, str, int]:
    """A tuning task's first metric, its goal and maxTrialCount; ("", "", 0) otherwise."""
    if not _is_tuning(message):
        return "", "", 0
    inputs = _inputs(message)
    metrics = (inputs.get("studySpec") or {}).get("metrics") or [{}]
    goal = "MINIMIZE" if metrics[0].get("goal") == "MINIMIZE" else "MAXIMIZE"
    return str(metrics[0].get("metricId") or ""), goal, int(inputs.get("maxTrialCount") or 0)


def _registered(model: Any, *, aliases: bool = True) -> RegisteredModel:
    """A Model message as a ``RegisteredModel``: a version as the registry holds it, or
    (not ``aliases``) a pipeline's ``model_to_upload``, whose aliases are those it asked
    for, not those the version holds now."""
    return RegisteredModel(
        name=model.name,
        version_id=model.version_id,
        aliases=tuple(model.version_aliases) if aliases else (),
        artifact_uri=model.artifact_uri,
        display_name=model.display_name,
        image_uri=model.container_spec.image_uri,
    )


def _nanoseconds(rfc3339: str) -> int:
    """An RFC 3339 time as nanoseconds since the epoch (0 for "")."""
    from google.protobuf import timestamp_pb2

    if not rfc3339:
        return 0
    stamp = timestamp_pb2.Timestamp()
    stamp.FromJsonString(rfc3339)
    return int(stamp.ToNanoseconds())


# -- tuning studies ---------------------------------------------------------------------


def primary_metric(study_spec: Any) -> tuple[str, str]:
    """The study's first metric and its goal (GOAL_TYPE_UNSPECIFIED "will default to
    maximize", study.proto)."""
    if not study_spec.metrics:
        return "", ""
    metric = study_spec.metrics[0]
    goal = type(metric).GoalType.Name(metric.goal)
    return metric.metric_id, "MINIMIZE" if goal == "MINIMIZE" else "MAXIMIZE"


def trials_of(job: Any) -> list[Trial]:
    """A tuning job's trials. Trial.Parameter.value is a number for integer, double and
    discrete parameters (study.proto): those of integer parameters become ints here."""
    integers = _integer_parameters(job.study_spec.parameters)
    trials = []
    for trial in job.trials:
        parameters: dict[str, int | float | str] = {}
        for parameter in trial.parameters:
            kind = parameter.value.WhichOneof("kind")
            value: int | float | str = (
                parameter.value.number_value
                if kind == "number_value"
                else parameter.value.string_value
            )
            if parameter.parameter_id in integers and isinstance(value, float):
                value = int(value)
            parameters[parameter.parameter_id] = value
        metrics = (
            {m.metric_id: m.value for m in trial.final_measurement.metrics}
            if trial.HasField("final_measurement")
            else {}
        )

        def rfc3339(field: str, trial: Message = trial) -> str:
            return getattr(trial, field).ToJsonString() if trial.HasField(field) else ""

        trials.append(
            Trial(
                id=trial.id,
                state=type(trial).State.Name(trial.state),
                parameters=parameters,
                metrics=metrics,
                start_time=rfc3339("start_time"),
                end_time=rfc3339("end_time"),
                infeasible_reason=trial.infeasible_reason,
            )
        )
    return trials


def _integer_parameters(specs: Any) -> set[str]:
    """IDs of the INTEGER parameters among ``specs`` and their conditional parameters."""
    found = set()
    for spec in specs:
        if spec.WhichOneof("parameter_value_spec") == "integer_value_spec":
            found.add(spec.parameter_id)
        found |= _integer_parameters(c.parameter_spec for c in spec.conditional_parameter_specs)
    return found
