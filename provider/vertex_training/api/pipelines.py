"""Training pipelines (aiplatform v1 ``TrainingPipeline``): a custom job or a tuning job
that, once it succeeds, uploads the model its trainer wrote to the Model Registry.

A job with ``model:`` runs as a pipeline. Its request stays the job's own body (what runs,
what the review prices, what its identity label hashes); ``pipeline_body`` wraps the
labelled body in the TrainingPipeline body the backends submit, and ``task_body`` gives
back the job a pipeline body runs. Sources (github.com/googleapis/googleapis):
``google/cloud/aiplatform/v1/training_pipeline.proto`` (the pipeline, ``model_id``,
``parent_model``), ``model.proto`` (the model and its version aliases),
``pipeline_state.proto`` (the states), and the schemas the task definitions name
(``schema/trainingjob/definition/custom_task_1.0.0.yaml``: a CustomJobSpec;
``hyperparameter_tuning_task_1.0.0.yaml``: the tuning job's study, counts and
``trialJobSpec``).

A retrain is the next version of the same model: before a pipeline is submitted its model
is looked up (by ``modelId`` when the job names one, else by the owner labels the model
carries, those of the job), and an existing model becomes the pipeline's
``parentModel`` (``with_parent``). A registered model is never deleted by this project.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from vertex_training.api import states
from vertex_training.api.bodies import JOB_SPEC_KEY, TRIAL_JOB_SPEC_KEY, is_tuning_body
from vertex_training.api.labels import PROJECT_LABEL, RESOURCE_LABEL, STACK_LABEL

_DEFINITIONS: Final = "gs://google-cloud-aiplatform/schema/trainingjob/definition/"
#: The task definition of a pipeline that runs a custom job.
CUSTOM_TASK: Final = _DEFINITIONS + "custom_task_1.0.0.yaml"
#: The task definition of a pipeline that runs a hyperparameter tuning job.
TUNING_TASK: Final = _DEFINITIONS + "hyperparameter_tuning_task_1.0.0.yaml"
#: The file names that tell the two apart in whatever form the service echoes them.
_CUSTOM_TASK_FILE, _TUNING_TASK_FILE = "custom_task_", "hyperparameter_tuning_task_"
#: The keys of a tuning job's body that its task's inputs carry (beside the trial spec).
_TUNING_INPUT_KEYS: Final = (
    "studySpec",
    "maxTrialCount",
    "parallelTrialCount",
    "maxFailedTrialCount",
)
#: A pipeline body's keys for its task.
DEFINITION_KEY, INPUTS_KEY = "trainingTaskDefinition", "trainingTaskInputs"
MODEL_KEY, MODEL_ID_KEY, PARENT_KEY = "modelToUpload", "modelId", "parentModel"
#: A pipeline body's key for the managed dataset its job reads.
DATA_KEY: Final = "inputDataConfig"
#: The labels a model shares with the job that registered it first: a retrain finds its
#: model by them when the job names no model ID.
MODEL_OWNER_LABELS: Final = (PROJECT_LABEL, STACK_LABEL, RESOURCE_LABEL)
#: The alias Vertex AI keeps on a model's newest version unless told otherwise.
DEFAULT_ALIAS: Final = "default"

#: pipeline_state.proto's states, as the job states of the same meaning
#: (``vertex_training.api.states``): a pipeline is waited for as a job is.
PIPELINE_STATES: Final[Mapping[str, str]] = {
    "PIPELINE_STATE_QUEUED": states.QUEUED,
    "PIPELINE_STATE_PENDING": states.PENDING,
    "PIPELINE_STATE_RUNNING": states.RUNNING,
    "PIPELINE_STATE_SUCCEEDED": states.SUCCEEDED,
    "PIPELINE_STATE_FAILED": states.FAILED,
    "PIPELINE_STATE_CANCELLING": states.CANCELLING,
    "PIPELINE_STATE_CANCELLED": states.CANCELLED,
    "PIPELINE_STATE_PAUSED": states.PAUSED,
}


def is_pipeline_body(body: Any) -> bool:
    """Whether a request body is a TrainingPipeline's."""
    return isinstance(body, Mapping) and DEFINITION_KEY in body


def is_pipeline_name(name: str) -> bool:
    """Whether a resource name is a training pipeline's (``.../trainingPipelines/ID``)."""
    return name.rsplit("/", 2)[-2:-1] == ["trainingPipelines"]


def is_tuning_definition(definition: str) -> bool:
    """Whether a task definition (as sent, or as the service echoes it) is the tuning
    task's; ValueError for one that is neither task's."""
    name = definition.rsplit("/", 1)[-1]
    if name.startswith(_TUNING_TASK_FILE):
        return True
    if name.startswith(_CUSTOM_TASK_FILE):
        return False
    raise ValueError(f"{definition!r} is neither the custom task nor the tuning task")


def pipeline_body(
    job: Mapping[str, Any],
    model: Mapping[str, Any] | None,
    dataset: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The TrainingPipeline body that runs ``job`` (a CustomJob or HyperparameterTuningJob
    body, labelled as submitted), on the managed ``dataset`` it reads when it names one
    (a job's ``dataset`` input: ``inputDataConfig``), then uploads its model: ``model`` is
    a job's ``model`` input (``vertex_training.stackconfig.ModelUpload.request_body``:
    ``modelToUpload`` and ``modelId`` or ``parentModel``), None for a job that registers
    none. The model carries the job's owner labels."""
    job = json.loads(json.dumps(job))
    labels: dict[str, str] = dict(job.get("labels") or {})
    if is_tuning_body(job):
        inputs = {key: job[key] for key in _TUNING_INPUT_KEYS if key in job}
        inputs[TRIAL_JOB_SPEC_KEY] = job[TRIAL_JOB_SPEC_KEY]
        definition = TUNING_TASK
    else:
        inputs, definition = job[JOB_SPEC_KEY], CUSTOM_TASK
    body: dict[str, Any] = {
        "displayName": job["displayName"],
        DEFINITION_KEY: definition,
        INPUTS_KEY: inputs,
    }
    if dataset:
        body[DATA_KEY] = dict(dataset[DATA_KEY])
    if model:
        upload = dict(model[MODEL_KEY])
        owner = {key: labels[key] for key in MODEL_OWNER_LABELS if key in labels}
        upload["labels"] = {**dict(upload.get("labels") or {}), **owner}
        body[MODEL_KEY] = upload
        body.update({key: model[key] for key in (MODEL_ID_KEY, PARENT_KEY) if model.get(key)})
    if labels:
        body["labels"] = labels
    if "encryptionSpec" in job:
        body["encryptionSpec"] = job["encryptionSpec"]
    return body


def task_body(pipeline: Mapping[str, Any]) -> dict[str, Any]:
    """The CustomJob or HyperparameterTuningJob body a pipeline body runs (what
    ``pipeline_body`` wrapped), with the pipeline's display name and labels."""
    inputs = dict(pipeline.get(INPUTS_KEY) or {})
    job: dict[str, Any] = {"displayName": pipeline.get("displayName", "")}
    if is_tuning_definition(str(pipeline.get(DEFINITION_KEY, ""))):
        job.update({key: inputs[key] for key in _TUNING_INPUT_KEYS if key in inputs})
        job[TRIAL_JOB_SPEC_KEY] = inputs.get(TRIAL_JOB_SPEC_KEY) or {}
    else:
        job[JOB_SPEC_KEY] = inputs
    if pipeline.get("labels"):
        job["labels"] = dict(pipeline["labels"])
    if "encryptionSpec" in pipeline:
        job["encryptionSpec"] = pipeline["encryptionSpec"]
    return job


def model_owner_labels(pipeline: Mapping[str, Any]) -> dict[str, str]:
    """The owner labels a pipeline body's model carries (what finds it again)."""
    labels = (pipeline.get(MODEL_KEY) or {}).get("labels") or {}
    return {key: labels[key] for key in MODEL_OWNER_LABELS if key in labels}


def with_parent(pipeline: Mapping[str, Any], parent: str | None) -> dict[str, Any]:
    """``pipeline`` registering the next version of the model ``parent`` (its resource
    name), or as it is when there is none: a new model, of ``modelId`` if it names one."""
    body = dict(pipeline)
    if parent:
        body.pop(MODEL_ID_KEY, None)
        body[PARENT_KEY] = parent
    return body


def model_config_of(pipeline: Mapping[str, Any]) -> dict[str, Any]:
    """The ``model:`` keys of a job that runs as ``pipeline`` (a TrainingPipeline's body as
    the server returns it): the inverse of ``ModelUpload.request_body``. The model's ID is
    the one the pipeline registered (else the one it names), so that the job's next run
    registers the next version of that model; ``default`` and the owner labels, which
    every upload carries, are left out."""
    upload = dict(pipeline.get(MODEL_KEY) or {})
    registered = str(upload.get("name") or pipeline.get(PARENT_KEY) or "")
    model_id = (
        registered.rsplit("/", 1)[-1] if registered else str(pipeline.get(MODEL_ID_KEY) or "")
    )
    config: dict[str, Any] = {"display_name": upload.get("displayName", "")}
    if model_id:
        config["id"] = model_id
    for key, field in (
        ("description", "description"),
        ("version_description", "versionDescription"),
    ):
        if upload.get(field):
            config[key] = upload[field]
    labels = {k: v for k, v in (upload.get("labels") or {}).items() if k not in MODEL_OWNER_LABELS}
    if labels:
        config["labels"] = labels
    aliases = [a for a in upload.get("versionAliases") or [] if a != DEFAULT_ALIAS]
    if aliases:
        config["aliases"] = aliases
    container = dict(upload.get("containerSpec") or {})
    serving: dict[str, Any] = {"image": container.get("imageUri", "")}
    for key, field in (("command", "command"), ("args", "args")):
        if container.get(field):
            serving[key] = list(container[field])
    if container.get("env"):
        serving["env"] = {e["name"]: e.get("value", "") for e in container["env"]}
    if container.get("ports"):
        serving["port"] = int(container["ports"][0]["containerPort"])
    for key, field in (("predict_route", "predictRoute"), ("health_route", "healthRoute")):
        if container.get(field):
            serving[key] = container[field]
    config["serving"] = serving
    return config
