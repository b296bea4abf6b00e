"""A fake Vertex AI PipelineService (its TrainingPipeline methods), on the same server as
the fake JobService and ModelService (``FakeVertex``: the regional endpoint serves every
service).

References, cited beside the code too (github.com/googleapis/googleapis, and the
client's ``types/training_pipeline.py`` and ``types/pipeline_service.py``, which carry
the same text):

- ``google/cloud/aiplatform/v1/pipeline_service.proto``: CreateTrainingPipeline ("A
  created TrainingPipeline right away will be attempted to be run"; it returns the
  pipeline, not an operation, and its request has no caller-chosen ID),
  GetTrainingPipeline, ListTrainingPipelines (filter, AIP-160, and paging, AIP-158),
  CancelTrainingPipeline (asynchronous, best effort; a cancelled pipeline is kept,
  ``CANCELLED`` with an error of code 1, ``Code.CANCELLED``), DeleteTrainingPipeline (a
  long-running operation).
- ``training_pipeline.proto``: ``display_name``, ``training_task_definition`` and
  ``training_task_inputs`` are required; ``model_id`` is "up to 63 characters, and valid
  characters are [a-z0-9_-]. The first character cannot be a number or hyphen";
  ``parent_model``: "the model_to_upload will not be uploaded as a new model, instead, it
  will become a new version of this parent_model"; ``model_to_upload``: "When the
  Pipeline's state becomes PIPELINE_STATE_SUCCEEDED and the trained Model had been
  uploaded into Vertex AI, then the model_to_upload's resource name is populated. The
  Model is always uploaded into the Project and Location in which this pipeline is";
  ``training_task_definition``: "The URI given on output will be immutable and probably
  different, including the URI scheme, than the one given on input".
- ``pipeline_state.proto``: the states.
- The task definitions' schemas (``gs://google-cloud-aiplatform/schema/trainingjob/
  definition/custom_task_1.0.0.yaml``: a CustomJobSpec, metadata ``backingCustomJob``;
  ``hyperparameter_tuning_task_1.0.0.yaml``: ``studySpec``, the trial counts and
  ``trialJobSpec``, metadata ``backingHyperparameterTuningJob`` and
  ``bestTrialBackingCustomJob``).

How a pipeline runs here. CreateTrainingPipeline validates the pipeline, then creates its
backing job through the fake's own JobService machinery (``_jobs``, ``_tuning``), so the
job follows the fake's timings, its ``script`` (matched on the pipeline's display name,
which the job takes), its stockouts, preemptions and quotas; the job also takes the
pipeline's labels (the reference does not say whether Vertex AI copies them: a backend
must not mistake a backing job for a job of its own). The pipeline's state is its
backing job's (QUEUED, PENDING, RUNNING, CANCELLING) until the job ends; then, read at
any later call, the pipeline settles at the job's end time: a job that SUCCEEDED uploads
the model (``fake_models.ModelRegistry.register``: a new model, of ``model_id`` or a
server-chosen ID, or the next version of ``parent_model``), filling
``model_to_upload.name`` and ``.version_id``, and the pipeline SUCCEEDED; a job that
FAILED (or EXPIRED) fails the pipeline with the job's error; a CANCELLED job cancels it.
The artifacts uploaded are ``model_to_upload.artifact_uri``, else
``<baseOutputDirectory>/model`` (the trainer's AIP_MODEL_DIR); a tuning task uploads its
best trial's, ``<trialJobSpec.baseOutputDirectory>/<trial ID>/model``. A test makes the
next upload fail with ``FakeVertex.fail_upload_next`` (a bad serving image, an empty
AIP_MODEL_DIR): the backing job succeeds and the pipeline FAILS with that reason.

What the fake chooses where the reference is silent: the echoed
``training_task_definition`` is the same file's public HTTPS URL
(``https://storage.googleapis.com/google-cloud-aiplatform/schema/...``); the echoed
``training_task_inputs`` are the inputs read into their messages (CustomJobSpec, or the
tuning job's fields) and written back as REST JSON, so int64 values come back as strings
and unknown keys are refused; ``model_id`` with ``parent_model`` is refused; a custom task
with a model to upload and neither ``baseOutputDirectory`` nor ``artifact_uri`` is
refused (its trainer would get no AIP_MODEL_DIR); a tuning task without
``trialJobSpec.baseOutputDirectory`` is refused; ``bestTrialBackingCustomJob`` names a
custom job the fake does not hold (its trials run no jobs of their own); deleting a
pipeline deletes its record only, never its backing job nor its model; a delete of a
pipeline that has not ended is refused (FAILED_PRECONDITION), as for jobs; an upload
failure's error code is INVALID_ARGUMENT.

It depends on ``_clock``, ``_faults``, ``_filters``, ``_jobs``, ``_tuning``,
``_validation`` and ``fake_models``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import grpc
from google.cloud.aiplatform_v1.services.pipeline_service import PipelineServiceClient
from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
from google.cloud.aiplatform_v1.types import hyperparameter_tuning_job as tuning_job_types
from google.cloud.aiplatform_v1.types import job_service, pipeline_service
from google.cloud.aiplatform_v1.types import training_pipeline as training_pipeline_types
from google.cloud.aiplatform_v1.types.pipeline_state import PipelineState
from google.protobuf import empty_pb2, json_format, struct_pb2
from google.rpc import code_pb2, status_pb2

from vertex_training.api import states
from vertex_training.testing._clock import timestamp
from vertex_training.testing._faults import RpcError, VertexMessage
from vertex_training.testing._filters import parse_filter, parse_page_size, parse_page_token
from vertex_training.testing._jobs import CUSTOM, TUNING, JobRecord, JobStore, parse_location
from vertex_training.testing._operations import Operations
from vertex_training.testing._tuning import TuningJobs
from vertex_training.testing._validation import MAX_DISPLAY_NAME_CHARS, label_problems
from vertex_training.testing.fake_models import ALIAS_RE, MODEL_ID_RE, ModelRegistry

PIPELINE_SERVICE: Final = "google.cloud.aiplatform.v1.PipelineService"
#: The folder of the task definitions (training_pipeline.proto), and the form the fake
#: echoes them in (its own choice: the same object over HTTPS).
DEFINITIONS: Final = "gs://google-cloud-aiplatform/schema/trainingjob/definition/"
ECHOED_DEFINITIONS: Final = (
    "https://storage.googleapis.com/google-cloud-aiplatform/schema/trainingjob/definition/"
)
CUSTOM_TASK_FILE: Final = "custom_task_1.0.0.yaml"
TUNING_TASK_FILE: Final = "hyperparameter_tuning_task_1.0.0.yaml"
#: The keys of a tuning task's inputs (hyperparameter_tuning_task_1.0.0.yaml).
TUNING_INPUT_KEYS: Final = (
    "studySpec",
    "maxTrialCount",
    "parallelTrialCount",
    "maxFailedTrialCount",
    "trialJobSpec",
)
#: A model's display name: "can be up to 128 characters long" (model.proto).
MAX_MODEL_DISPLAY_NAME_CHARS: Final = 128
#: What a failed upload reports by default: Vertex AI's words when AIP_MODEL_DIR is empty.
EMPTY_MODEL_DIR_MESSAGE: Final = 'There are no files under "{artifact_uri}" to copy.'
UPLOAD_FAILURE_CODE: Final = code_pb2.INVALID_ARGUMENT
CANCELLED_MESSAGE: Final = "The TrainingPipeline was cancelled."
_STATE_PREFIX = "PIPELINE_STATE_"
_PipelinePb = training_pipeline_types.TrainingPipeline.pb()

#: The pipeline's state while its backing job is in each state that is not an ending.
_WHILE_JOB = {
    states.QUEUED: "QUEUED",
    states.PENDING: "PENDING",
    states.RUNNING: "RUNNING",
    states.CANCELLING: "CANCELLING",
}


@dataclass(frozen=True)
class Outcome:
    """How a pipeline ended: its state, when, and its error (code 0 for none)."""

    state: str
    at: float
    started_at: float | None
    code: int = 0
    message: str = ""


@dataclass
class PipelineRecord:
    """A pipeline as created (definition and inputs as echoed), its backing job, and how
    it ended once it has."""

    pipeline: VertexMessage
    number: int
    created_at: float
    location: dict[str, str]
    backing_job: str
    tuning: bool
    outcome: Outcome | None = None
    best_trial_job: str = ""
    delete_operation: str | None = None
    deleted_at: float | None = None


class TrainingPipelines:
    """The training pipelines that exist, and the PipelineService methods on them.

    Not thread-safe: the fake calls it with its lock held.
    """

    def __init__(
        self,
        *,
        store: JobStore,
        tuning: TuningJobs,
        models: ModelRegistry,
        delete_s: float,
    ) -> None:
        self.pipelines: dict[str, PipelineRecord] = {}
        #: The reasons the next uploads fail with, oldest first (``fail_upload_next``).
        self.upload_failures: list[str | None] = []
        #: The managed datasets that exist, by resource name (``add_dataset``): the fake
        #: serves no DatasetService, so a test names the ones its pipelines read.
        self.datasets: set[str] = set()
        self._store = store
        self._tuning = tuning
        self._models = models
        self._delete_s = delete_s
        self._operations: Operations = store.operations
        self._clock: Callable[[], float] = store.clock

    def _check_dataset(self, parent: str, pipeline: VertexMessage) -> None:
        """A pipeline that reads a managed dataset reads one that exists in its own
        location: training_pipeline.proto InputDataConfig.dataset_id, "The Dataset must use
        the same ancestor Project and Location as the TrainingPipeline"; a dataset that
        does not exist is NOT_FOUND, as every Get of a missing resource is (AIP-131). Its
        destination is required (``gcs_destination`` or ``bigquery_destination``: "Only
        one of ... can be set", and the custom training docs write the data there)."""
        if not pipeline.HasField("input_data_config"):
            return
        data = pipeline.input_data_config
        name = f"{parent}/datasets/{data.dataset_id}"
        if name not in self.datasets:
            raise RpcError(grpc.StatusCode.NOT_FOUND, f"Dataset {name} is not found.")
        if not (data.HasField("gcs_destination") or data.HasField("bigquery_destination")):
            raise RpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                "training_pipeline.input_data_config: a destination (gcs_destination or "
                "bigquery_destination) is required.",
            )

    # -- PipelineService ------------------------------------------------------------------

    def create_training_pipeline(self, request: VertexMessage) -> VertexMessage:
        # pipeline_service.proto CreateTrainingPipeline: returns the TrainingPipeline
        # itself, started ("right away will be attempted to be run"); no caller-chosen ID.
        location = parse_location(request.parent)
        sent = request.training_pipeline
        tuning, echoed_inputs, job = _checked(sent, location)
        self._models.check_target(location, sent.model_id, sent.parent_model)
        self._check_dataset(request.parent, sent)
        # The backing job, made as CreateCustomJob / CreateHyperparameterTuningJob make
        # one (its own validation, script, scheduling); nothing is kept if it is refused.
        if tuning:
            backing = self._tuning.create_tuning_job(
                job_service.CreateHyperparameterTuningJobRequest.pb()(
                    parent=request.parent, hyperparameter_tuning_job=job
                )
            )
        else:
            backing = self._store.create_custom_job(
                job_service.CreateCustomJobRequest.pb()(parent=request.parent, custom_job=job)
            )
        now = self._clock()
        number = self._store.take_number()
        pipeline = _PipelinePb()
        pipeline.CopyFrom(sent)
        # training_pipeline.proto: name, training_task_metadata, state, error and the
        # times are OUTPUT_ONLY; so are model_to_upload's name and version_id (model.proto).
        for output_only in (
            "name",
            "training_task_metadata",
            "state",
            "error",
            "create_time",
            "start_time",
            "end_time",
            "update_time",
        ):
            pipeline.ClearField(output_only)
        for output_only in ("name", "version_id"):
            pipeline.model_to_upload.ClearField(output_only)
        pipeline.name = PipelineServiceClient.training_pipeline_path(
            location["project"], location["location"], str(number)
        )
        pipeline.training_task_definition = ECHOED_DEFINITIONS + (
            TUNING_TASK_FILE if tuning else CUSTOM_TASK_FILE
        )
        pipeline.training_task_inputs.CopyFrom(
            json_format.ParseDict(echoed_inputs, struct_pb2.Value())
        )
        pipeline.create_time.CopyFrom(timestamp(now))
        record = PipelineRecord(
            pipeline=pipeline,
            number=number,
            created_at=now,
            location=location,
            backing_job=backing.name,
            tuning=tuning,
        )
        self.pipelines[pipeline.name] = record
        return self.render(record, now)

    def get_training_pipeline(self, request: VertexMessage) -> VertexMessage:
        # REST projects.locations.trainingPipelines.get: NOT_FOUND for one that does not exist.
        return self.render(self.record(request.name), self._clock())

    def list_training_pipelines(self, request: VertexMessage) -> VertexMessage:
        # ListTrainingPipelinesRequest.filter: display_name, state (PipelineState names),
        # labels.KEY, joined with AND; page_size / page_token as the job lists have them.
        location = parse_location(request.parent)
        parent = PipelineServiceClient.common_location_path(
            location["project"], location["location"]
        )
        matches = parse_filter(request.filter, states=PipelineState)
        page_size = parse_page_size(request.page_size)
        after = parse_page_token(request.page_token)
        now = self._clock()
        records = sorted(self.pipelines.values(), key=lambda r: r.number, reverse=True)
        rendered = (
            (record.number, self.render(record, now))
            for record in records
            if record.pipeline.name.startswith(parent + "/")
            and (after is None or record.number < after)
        )
        selected = [(n, pipeline) for n, pipeline in rendered if all(m(pipeline) for m in matches)]
        page = selected[:page_size]
        response = pipeline_service.ListTrainingPipelinesResponse.pb()()
        response.training_pipelines.extend(pipeline for _, pipeline in page)
        if len(selected) > page_size:
            response.next_page_token = str(page[-1][0])
        return response

    def cancel_training_pipeline(self, request: VertexMessage) -> VertexMessage:
        # pipeline_service.proto CancelTrainingPipeline: "Starts asynchronous cancellation
        # ... best effort"; on success the pipeline is kept, CANCELLED, error code 1. It
        # cancels the backing job, and ends CANCELLED when the job does.
        record = self.record(request.name)
        if record.outcome is not None:
            # google/rpc/code.proto FAILED_PRECONDITION, as for a job that has ended.
            raise RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"Cannot cancel TrainingPipeline {record.pipeline.name} in state "
                f"{_STATE_PREFIX}{record.outcome.state}: the pipeline has already ended.",
            )
        kind = TUNING if record.tuning else CUSTOM
        cancel = job_service.CancelCustomJobRequest.pb()(name=record.backing_job)
        self._store.cancel_job(cancel, kind)
        return empty_pb2.Empty()

    def delete_training_pipeline(self, request: VertexMessage) -> VertexMessage:
        # pipeline_service.proto DeleteTrainingPipeline: a google.longrunning.Operation
        # (DeleteOperationMetadata, Empty); the pipeline's record is gone once it is done.
        record = self.record(request.name)
        now = self._clock()
        if record.delete_operation is not None:
            return self._operations[record.delete_operation].render(now)
        if record.outcome is None:
            state = self.render(record, now).state
            raise RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"TrainingPipeline {record.pipeline.name} is in state "
                f"{PipelineState(state).name} and cannot be deleted: cancel it and wait "
                "for it to end first.",
            )
        parent = PipelineServiceClient.common_location_path(
            record.location["project"], record.location["location"]
        )
        operation = self._operations.start(
            f"{parent}/operations/{self._store.take_number()}", now, self._delete_s
        )
        record.delete_operation = operation.name
        record.deleted_at = operation.done_at
        return operation.render(now)

    # -- state ----------------------------------------------------------------------------

    def record(self, name: str) -> PipelineRecord:
        """The pipeline named ``name``; INVALID_ARGUMENT or NOT_FOUND if none."""
        if not PipelineServiceClient.parse_training_pipeline_path(name):
            raise RpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Invalid TrainingPipeline resource name {name!r}: expected "
                "projects/{project}/locations/{location}/trainingPipelines/{training_pipeline}.",
            )
        record = self.pipelines.get(name)
        if record is None:
            raise RpcError(grpc.StatusCode.NOT_FOUND, f"TrainingPipeline {name} is not found.")
        return record

    def settle(self, now: float) -> None:
        """End the pipelines whose backing job has ended by ``now``, in the order the jobs
        ended (so that versions and aliases follow that order): upload the model of each
        whose job succeeded."""
        ended: list[tuple[float, PipelineRecord, JobRecord]] = []
        for record in self.pipelines.values():
            if record.outcome is not None:
                continue
            job = self._store.jobs.get(record.backing_job)
            if job is None:
                record.outcome = Outcome(
                    states.FAILED, now, None, code_pb2.NOT_FOUND, "The backing job was deleted."
                )
                continue
            at, state = job.state_at(now)
            if state in states.TERMINAL_STATES:
                ended.append((at, record, job))
        for at, record, job in sorted(ended, key=lambda item: (item[0], item[1].number)):
            record.outcome = self._ending(record, job, at)

    def forget_deleted(self, now: float) -> None:
        """Drop the pipelines whose delete operation has finished."""
        for name, record in list(self.pipelines.items()):
            if record.deleted_at is not None and record.deleted_at <= now:
                del self.pipelines[name]

    def render(self, record: PipelineRecord, now: float) -> VertexMessage:
        """The pipeline as GetTrainingPipeline returns it at ``now``."""
        pipeline = _PipelinePb()
        pipeline.CopyFrom(record.pipeline)
        metadata: dict[str, Any] = (
            {"backingHyperparameterTuningJob": record.backing_job}
            if record.tuning
            else {"backingCustomJob": record.backing_job}
        )
        outcome = record.outcome
        if outcome is None:
            job = self._store.jobs[record.backing_job]
            entered_at, job_state = job.state_at(now)
            state = _WHILE_JOB.get(job_state, "RUNNING")
            started_at = _running_since(job, now)
        else:
            state, entered_at, started_at = outcome.state, outcome.at, outcome.started_at
            pipeline.end_time.CopyFrom(timestamp(outcome.at))
            if outcome.code:
                pipeline.error.CopyFrom(
                    status_pb2.Status(code=outcome.code, message=outcome.message)
                )
            if record.best_trial_job:
                metadata["bestTrialBackingCustomJob"] = record.best_trial_job
        pipeline.state = PipelineState.__members__[_STATE_PREFIX + state]
        pipeline.update_time.CopyFrom(timestamp(entered_at))
        if started_at is not None:
            # start_time: "Time when the pipeline for the first time entered the
            # PIPELINE_STATE_RUNNING state."
            pipeline.start_time.CopyFrom(timestamp(started_at))
        pipeline.training_task_metadata.CopyFrom(
            json_format.ParseDict(metadata, struct_pb2.Value())
        )
        return pipeline

    def _ending(self, record: PipelineRecord, job: JobRecord, at: float) -> Outcome:
        """How the pipeline ends when its backing job ended at ``at``."""
        rendered = self._store.render(job, at)
        started_at = _running_since(job, at)
        _, job_state = job.state_at(at)
        if job_state == states.CANCELLED:
            return Outcome(states.CANCELLED, at, started_at, code_pb2.CANCELLED, CANCELLED_MESSAGE)
        if job_state != states.SUCCEEDED:
            code = rendered.error.code or code_pb2.UNKNOWN
            message = rendered.error.message or f"The backing job ended {job_state}."
            return Outcome(states.FAILED, at, started_at, code, message)
        if not record.pipeline.HasField("model_to_upload"):
            return Outcome(states.SUCCEEDED, at, started_at)
        code, message = self._upload(record, rendered, at)
        return Outcome(states.FAILED if code else states.SUCCEEDED, at, started_at, code, message)

    def _upload(self, record: PipelineRecord, job: VertexMessage, at: float) -> tuple[int, str]:
        """Upload the model of a pipeline whose backing job (``job``, as read when it
        ended) succeeded at ``at``: (0, "") once registered, else the error's code and
        message."""
        pipeline = record.pipeline
        upload = type(pipeline.model_to_upload)()
        upload.CopyFrom(pipeline.model_to_upload)
        if record.tuning:
            best = _best_trial(job)
            if best is None:
                return (
                    code_pb2.FAILED_PRECONDITION,
                    "No trial of the HyperparameterTuningJob reported its metric: there is "
                    "no best trial's model to upload.",
                )
            base = job.trial_job_spec.base_output_directory.output_uri_prefix
            upload.artifact_uri = f"{base.rstrip('/')}/{best}/model"
            # The trial's own custom job: a name only, the fake's trials run no jobs.
            record.best_trial_job = CUSTOM.path(
                record.location["project"],
                record.location["location"],
                str(self._store.take_number()),
            )
        elif not upload.artifact_uri:
            base = job.job_spec.base_output_directory.output_uri_prefix
            upload.artifact_uri = f"{base.rstrip('/')}/model"
        if self.upload_failures:
            reason = self.upload_failures.pop(0)
            message = reason or EMPTY_MODEL_DIR_MESSAGE.format(artifact_uri=upload.artifact_uri)
            return UPLOAD_FAILURE_CODE, f"Failed to upload the model: {message}"
        try:
            version = self._models.register(
                record.location,
                upload,
                model_id=pipeline.model_id,
                parent_model=pipeline.parent_model,
                training_pipeline=pipeline.name,
                at=at,
            )
        except RpcError as error:
            return getattr(
                code_pb2, error.code.name
            ), f"Failed to upload the model: {error.message}"
        pipeline.model_to_upload.name = version.name
        pipeline.model_to_upload.version_id = version.version_id
        pipeline.model_to_upload.artifact_uri = version.artifact_uri
        return 0, ""


def _running_since(job: JobRecord, now: float) -> float | None:
    """When the job first entered RUNNING, if it has by ``now``."""
    return next((at for at, state in job.phases() if state == states.RUNNING and at <= now), None)


def _best_trial(job: VertexMessage) -> str | None:
    """The ID of a tuning job's best SUCCEEDED trial on its study's first metric (the
    lowest ID on a tie); None when no trial has it."""
    metric = job.study_spec.metrics[0]
    minimize = metric.goal == type(metric).GoalType.MINIMIZE
    measured = []
    for trial in job.trials:
        values = {m.metric_id: m.value for m in trial.final_measurement.metrics}
        if trial.state == type(trial).State.SUCCEEDED and metric.metric_id in values:
            value = values[metric.metric_id]
            measured.append((value if minimize else -value, int(trial.id), trial.id))
    return min(measured)[2] if measured else None


# -- validation ------------------------------------------------------------------------------


def _checked(
    pipeline: VertexMessage, location: dict[str, str]
) -> tuple[bool, dict[str, Any], VertexMessage]:
    """Whether a pipeline to create runs a tuning task, its inputs as echoed, and its
    backing job's message; INVALID_ARGUMENT listing every rule it breaks (as
    ``_validation`` lists a job's), UNIMPLEMENTED for a task the fake does not run."""
    problems: list[tuple[str, str]] = []
    prefix = "training_pipeline"
    # training_pipeline.proto display_name: "Required".
    if not pipeline.display_name:
        problems.append((f"{prefix}.display_name", "Required field is not set."))
    elif len(pipeline.display_name) > MAX_DISPLAY_NAME_CHARS:
        problems.append(
            (
                f"{prefix}.display_name",
                f"The display name must be at most {MAX_DISPLAY_NAME_CHARS} characters long.",
            )
        )
    tuning = _task(pipeline.training_task_definition, problems)
    inputs: Any = None
    if not pipeline.HasField("training_task_inputs"):
        problems.append((f"{prefix}.training_task_inputs", "Required field is not set."))
    else:
        inputs = json_format.MessageToDict(pipeline.training_task_inputs)
        if not isinstance(inputs, dict) or not inputs:
            problems.append(
                (f"{prefix}.training_task_inputs", "The task inputs must be a non-empty object.")
            )
            inputs = None
    job: VertexMessage = None
    echoed: dict[str, Any] = {}
    if inputs is not None and tuning is not None:
        job, echoed = _backing_job(pipeline, inputs, tuning, problems)
    problems += _model_problems(pipeline, location, tuning, echoed)
    problems += label_problems(dict(pipeline.labels), prefix)
    if problems:
        listed = "".join(
            f"{index}.Field: {field}; Message: {message}\t"
            for index, (field, message) in enumerate(problems, start=1)
        )
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"List of found errors:\t{listed}")
    assert tuning is not None
    return tuning, echoed, job


def _task(definition: str, problems: list[tuple[str, str]]) -> bool | None:
    """Whether ``definition`` is the tuning task (False: the custom task); None, with the
    problem noted, when it is neither."""
    field = "training_pipeline.training_task_definition"
    if not definition:
        problems.append((field, "Required field is not set."))
        return None
    if definition == DEFINITIONS + TUNING_TASK_FILE:
        return True
    if definition == DEFINITIONS + CUSTOM_TASK_FILE:
        return False
    if definition.startswith(DEFINITIONS):
        # An AutoML task, say: valid for Vertex AI, not run by this fake.
        raise RpcError(
            grpc.StatusCode.UNIMPLEMENTED,
            f"The fake PipelineService runs only {CUSTOM_TASK_FILE} and {TUNING_TASK_FILE}, "
            f"not {definition}.",
        )
    problems.append((field, f"{definition!r} is not a training task definition of {DEFINITIONS}."))
    return None


def _backing_job(
    pipeline: VertexMessage, inputs: dict[str, Any], tuning: bool, problems: list[tuple[str, str]]
) -> tuple[VertexMessage, dict[str, Any]]:
    """The backing job's message read from the task's inputs, and the inputs as the
    service echoes them (REST JSON of those messages: int64 values as strings)."""
    field = "training_pipeline.training_task_inputs"
    if tuning:
        job = tuning_job_types.HyperparameterTuningJob.pb()()
        unknown = sorted(set(inputs) - set(TUNING_INPUT_KEYS))
        if unknown:
            problems.append((field, f"Unknown keys of a tuning task's inputs: {unknown}."))
            return None, {}
        try:
            json_format.ParseDict(inputs, job)
        except json_format.ParseError as exc:
            problems.append((field, f"The inputs are not the tuning task's: {exc}"))
            return None, {}
        # hyperparameter_tuning_task: the trials' AIP_MODEL_DIR is
        # <baseOutputDirectory>/<trial ID>/model, from which the best trial's model is
        # uploaded, so the trial job spec needs a base output directory.
        if not job.trial_job_spec.base_output_directory.output_uri_prefix:
            problems.append(
                (
                    f"{field}.trialJobSpec.baseOutputDirectory",
                    "Required field is not set: the best trial's model is read from it.",
                )
            )
        echoed = {
            key: value
            for key, value in json_format.MessageToDict(job).items()
            if key in TUNING_INPUT_KEYS
        }
    else:
        job = custom_job_types.CustomJob.pb()()
        try:
            json_format.ParseDict(inputs, job.job_spec)
        except json_format.ParseError as exc:
            problems.append((field, f"The inputs are not a CustomJobSpec: {exc}"))
            return None, {}
        echoed = json_format.MessageToDict(job.job_spec)
    job.display_name = pipeline.display_name
    job.labels.update(pipeline.labels)
    if pipeline.HasField("encryption_spec"):
        job.encryption_spec.CopyFrom(pipeline.encryption_spec)
    return job, echoed


def _model_problems(
    pipeline: VertexMessage, location: dict[str, str], tuning: bool | None, echoed: dict[str, Any]
) -> list[tuple[str, str]]:
    """The rules of model_id, parent_model and model_to_upload the pipeline breaks."""
    problems: list[tuple[str, str]] = []
    prefix = "training_pipeline"
    if pipeline.model_id and not MODEL_ID_RE.fullmatch(pipeline.model_id):
        problems.append(
            (
                f"{prefix}.model_id",
                "The model ID may be up to 63 characters of [a-z0-9_-], and cannot start "
                "with a number or hyphen.",
            )
        )
    if pipeline.model_id and pipeline.parent_model:
        problems.append(
            (f"{prefix}.model_id", "A new model's ID cannot be given with a parent_model.")
        )
    if pipeline.parent_model:
        parent = PipelineServiceClient.parse_model_path(pipeline.parent_model)
        if not parent:
            problems.append(
                (
                    f"{prefix}.parent_model",
                    f"Invalid Model resource name {pipeline.parent_model!r}: expected "
                    "projects/{project}/locations/{location}/models/{model}.",
                )
            )
        elif (parent["project"], parent["location"]) != (location["project"], location["location"]):
            # model_to_upload: "The Model is always uploaded into the Project and Location
            # in which this pipeline is."
            problems.append(
                (
                    f"{prefix}.parent_model",
                    "The parent model must be in the pipeline's project and location "
                    f"(projects/{location['project']}/locations/{location['location']}).",
                )
            )
    if not pipeline.HasField("model_to_upload"):
        return problems
    model = pipeline.model_to_upload
    where = f"{prefix}.model_to_upload"
    # model.proto Model.display_name: "Required ... can be up to 128 characters long".
    if not model.display_name:
        problems.append((f"{where}.display_name", "Required field is not set."))
    elif len(model.display_name) > MAX_MODEL_DISPLAY_NAME_CHARS:
        problems.append(
            (
                f"{where}.display_name",
                f"The display name must be at most {MAX_MODEL_DISPLAY_NAME_CHARS} characters.",
            )
        )
    # ModelContainerSpec.image_uri: "Required"; a custom-trained model needs its container.
    if not model.container_spec.image_uri:
        problems.append((f"{where}.container_spec.image_uri", "Required field is not set."))
    for index, alias in enumerate(model.version_aliases):
        if not ALIAS_RE.fullmatch(alias):
            problems.append(
                (
                    f"{where}.version_aliases[{index}]",
                    f"{alias!r} must match [a-z][a-zA-Z0-9-]{{0,126}}[a-z0-9] (so that it "
                    "cannot be mistaken for a version ID).",
                )
            )
    has_output = bool((echoed.get("baseOutputDirectory") or {}).get("outputUriPrefix"))
    if tuning is False and not (has_output or model.artifact_uri):
        problems.append(
            (
                f"{prefix}.training_task_inputs.baseOutputDirectory",
                "A model to upload needs the job's baseOutputDirectory (its model is read "
                "from <baseOutputDirectory>/model) or model_to_upload.artifact_uri.",
            )
        )
    return problems
