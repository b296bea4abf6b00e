"""``pulumi import`` of a job made outside Pulumi: its inputs, read from the server.

The job's keys come from its REST body (``vertex_training.api.job_config``); before they
are given to the engine, they are parsed as the job's check will parse them, and the
request they make must be the job the server holds (its fields as the server returns
them, the provider's own labels aside). A job whose keys would make another request is
refused, naming the fields that differ: it is never imported as something else.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vertex_training.api.labels import ATTRIBUTION_LABEL_KEYS, SUBMISSION_LABEL_KEYS
from vertex_training.api.pipelines import (
    is_pipeline_name,
    is_tuning_definition,
    model_config_of,
    task_body,
)
from vertex_training.backend_kinds import VERTEX
from vertex_training.errors import BackendError, SpecError
from vertex_training.plugin import schema, shapes
from vertex_training.resources.arguments import TrainingJobArgs
from vertex_training.resources.job_arguments import PROGRAM
from vertex_training.resources.state import ProviderSettings

#: The labels the provider gives every job it submits, and those other tools give what
#: they create (not the user's keys).
PROVIDER_LABELS = (*SUBMISSION_LABEL_KEYS, *ATTRIBUTION_LABEL_KEYS)


def imported_inputs(
    type_: str, name: str, resource_name: str, settings: ProviderSettings
) -> dict[str, Any]:
    """The inputs of the job ``resource_name``, imported as the resource ``name`` of type
    ``type_``: its keys in the schema's naming, its project, region and backend."""
    from vertex_training.api.job_config import config_of_request
    from vertex_training.backends import connect
    from vertex_training.backends.base import location_of
    from vertex_training.backends.vertex import VertexBackend

    pipeline = is_pipeline_name(resource_name)
    tuning = "/hyperparameterTuningJobs/" in resource_name
    kind = "hyperparameterTuningJobs" if type_ == schema.TUNING_JOB else "customJobs"
    if not pipeline and tuning != (type_ == schema.TUNING_JOB):
        raise BackendError(
            f"{resource_name} is not a {type_} ID: import "
            f"projects/P/locations/R/{kind}/ID as {type_}, or import this one as "
            f"{schema.TUNING_JOB if tuning else schema.TRAINING_JOB}"
        )
    try:
        location = location_of(resource_name)
    except ValueError as exc:
        raise BackendError(
            f"{resource_name} is not a job's resource name; import projects/P/locations/R/{kind}/ID"
        ) from exc
    backend = connect(location, settings.connection())
    if not isinstance(backend, VertexBackend):
        raise BackendError(
            f"{resource_name} runs on this machine: only Vertex AI jobs can be imported"
        )
    body = backend.get_body(resource_name)
    if body is None:
        raise BackendError(f"{resource_name} does not exist; check the ID and the region")
    model: dict[str, Any] | None = None
    if pipeline:  # a job with model: its job is the pipeline's task
        model, body = model_config_of(body), _pipeline_task(resource_name, body, type_)
    try:
        config = config_of_request(body, name=name)
    except ValueError as exc:
        raise BackendError(f"{resource_name} cannot be imported: {exc}") from exc
    if model is not None:
        config["model"] = model
    project, region = str(location["project"]), str(location["region"])
    _same_job(resource_name, body, _request_of(name, config, project, region))
    return {
        "job": shapes.to_arguments(config, TrainingJobArgs),
        "project": project,
        "region": region,
        "backend": VERTEX.name,
    }


def _pipeline_task(resource_name: str, pipeline: Mapping[str, Any], type_: str) -> dict[str, Any]:
    """The job a training pipeline runs (its task, as a job's body), refused when it is
    not of the resource type it is imported as."""
    try:
        tuning = is_tuning_definition(str(pipeline.get("trainingTaskDefinition", "")))
    except ValueError as exc:
        raise BackendError(
            f"{resource_name} cannot be imported: it runs neither a custom job nor a tuning "
            f"job ({exc})"
        ) from exc
    if tuning != (type_ == schema.TUNING_JOB):
        wanted = schema.TUNING_JOB if tuning else schema.TRAINING_JOB
        raise BackendError(
            f"{resource_name} runs a {'tuning' if tuning else 'custom'} job: import it as {wanted}"
        )
    return task_body(pipeline)


def _request_of(name: str, config: Mapping[str, Any], project: str, region: str) -> dict[str, Any]:
    """The request the imported keys make, as the job's check will parse them."""
    from vertex_training import stackconfig

    stack = stackconfig.StackSettings(
        stack="import", project=project, region=region, config_from=PROGRAM
    )
    try:
        request: dict[str, Any] = stackconfig.parse_job(name, dict(config), stack).request_body()
    except SpecError as exc:
        raise BackendError(f"the job's keys as read are refused: {exc}") from exc
    return request


def _with_api_disks(job: Mapping[str, Any]) -> dict[str, Any]:
    """``job`` (a body as the server returns it) with each pool's boot disk as the API
    gives a pool that names none (DiskSpec: pd-ssd, 100 GB) where it names none: the
    keys always name the disk, a job made elsewhere may not."""
    from vertex_training.api.job_config import API_DISK_SIZE_GB, API_DISK_TYPE

    filled = json.loads(json.dumps(job))
    for spec_key in ("jobSpec", "trialJobSpec"):
        for pool in (filled.get(spec_key) or {}).get("workerPoolSpecs") or []:
            if pool:
                disk = pool.setdefault("diskSpec", {})
                disk.setdefault("bootDiskType", API_DISK_TYPE)
                disk.setdefault("bootDiskSizeGb", API_DISK_SIZE_GB)
    result: dict[str, Any] = filled
    return result


def _same_job(resource_name: str, body: Mapping[str, Any], request: Mapping[str, Any]) -> None:
    """Refuse keys whose request is not the job the server holds (compared as the
    server returns a job: through its message, so that defaults and number forms agree)."""
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format

    tuning = "studySpec" in body
    message = aiplatform_v1.HyperparameterTuningJob if tuning else aiplatform_v1.CustomJob
    made = json_format.MessageToDict(json_format.ParseDict(request, message.pb(message())))
    held = {key: value for key, value in body.items() if key in made or key in ("labels",)}
    made, held = _with_api_disks(made), _with_api_disks(held)
    labels = {k: v for k, v in (held.pop("labels", None) or {}).items() if k not in PROVIDER_LABELS}
    if labels:
        held["labels"] = labels
    differing = sorted(key for key in set(made) | set(held) if made.get(key) != held.get(key))
    if differing:
        raise BackendError(
            f"{resource_name} cannot be imported: the keys read from it would make another "
            f"job (its {', '.join(differing)} differ); declare it in the program and adopt "
            "it with `adopt:` instead, or report the job's fields as a bug"
        )
