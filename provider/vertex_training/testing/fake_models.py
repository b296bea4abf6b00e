"""A fake Vertex AI ModelService (the Model Registry), on the same server as the fake
JobService (``FakeVertex``: the regional endpoint serves every service).

Models are made here by training pipelines (``fake_pipelines``): a pipeline that succeeds
registers a new model, or the next version of its ``parent_model`` (``register``).
UploadModel is not served (UNIMPLEMENTED, as gRPC answers an unregistered method): the
project registers models through pipelines only. Served, each cited from
``google/cloud/aiplatform/v1/model_service.proto`` and ``model.proto`` (the client's
``types/model_service.py`` and ``types/model.py`` carry the same text):

- GetModel: ``models/M`` is the version holding the ``default`` alias ("If no version ID
  or alias is specified, the "default" version will be returned"); ``models/M@2`` a
  version by ID, ``models/M@golden`` by alias. Each version is a ``Model`` of its own:
  ``name`` without the version, ``version_id``, ``version_aliases``.
- ListModels: one entry per model (its default version), newest first; the filter
  (AIP-160) on ``model`` (the model ID), ``display_name`` / ``displayName`` and
  ``labels.KEY`` ("For field names both snake_case and camelCase are supported");
  pagination as the fake's other list methods (``_filters``).
- ListModelVersions: every version of a model, oldest first (the reference promises no
  order; ``order_by`` is not implemented), filter on ``labels.KEY``.
- DeleteModelVersion: a long-running operation, on a name "with a version ID explicitly
  included". "Deleting the only version in the Model is not allowed. Use DeleteModel for
  deleting the Model instead" (FAILED_PRECONDITION here, google/rpc/code.proto: "the
  system is not in a state required for the operation's execution"); a version holding
  ``default`` is refused the same way ("there must be exactly one default version alias
  for a model": deleting it would leave none). Deployed versions do not exist in this
  fake (no endpoints), so that refusal is never given.
- DeleteModel: a long-running operation; the model and all its versions are gone once it
  is done.

Versions and aliases (``model.proto``): ``version_id`` "is an auto-incrementing decimal
number in string representation" ("1", "2", ...; never reused here). Aliases match
``[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]`` "to distinguish from version_id"; "A default version
alias will be created for the first version of the model, and there must be exactly one
default version alias for a model". A later version takes ``default`` only when it names
it among its aliases: the Python SDK adds it itself (``is_default_version=True``, "When set
to False, the "default" alias will not be moved", google-cloud-aiplatform
``aiplatform/models.py``). An alias a new version names is removed from the model's other
versions (an alias names one version).

It depends on ``_clock``, ``_faults``, ``_filters``, ``_jobs`` (``parse_location``) and
``_operations``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import grpc
from google.cloud.aiplatform_v1.services.model_service import ModelServiceClient
from google.cloud.aiplatform_v1.types import model as model_types
from google.cloud.aiplatform_v1.types import model_service

from vertex_training.testing._clock import timestamp
from vertex_training.testing._faults import RpcError, VertexMessage
from vertex_training.testing._filters import parse_filter, parse_page_size, parse_page_token
from vertex_training.testing._jobs import parse_location
from vertex_training.testing._operations import Operations

MODEL_SERVICE: Final = "google.cloud.aiplatform.v1.ModelService"
#: The alias the first version takes, and any version that names it.
DEFAULT_ALIAS: Final = "default"
#: model.proto version_aliases: "[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]" (a version ID, all
#: digits, never matches it).
ALIAS_RE: Final = re.compile(r"[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]")
#: training_pipeline.proto model_id: "up to 63 characters, and valid characters are
#: [a-z0-9_-]. The first character cannot be a number or hyphen."
MODEL_ID_RE: Final = re.compile(r"[a-z_][a-z0-9_-]{0,62}")

_ModelPb = model_types.Model.pb()
#: ListModels: "For field names both snake_case and camelCase are supported".
_MODEL_FIELDS = {
    "model": lambda model: str(ModelServiceClient.parse_model_path(model.name).get("model", "")),
    "display_name": lambda model: str(model.display_name),
    "displayName": lambda model: str(model.display_name),
}


@dataclass
class ModelRecord:
    """A model: its versions by ID, in the order they were made, and its deletion."""

    name: str
    number: int
    created_at: float
    versions: dict[str, VertexMessage] = field(default_factory=dict)
    last_version: int = 0
    delete_operation: str | None = None
    deleted_at: float | None = None
    #: Version ID -> when its delete operation is done.
    version_deletes: dict[str, float] = field(default_factory=dict)
    version_operations: dict[str, str] = field(default_factory=dict)

    def default_version(self) -> VertexMessage:
        """The version holding ``default`` (there is exactly one)."""
        return next(
            version
            for version in self.versions.values()
            if DEFAULT_ALIAS in version.version_aliases
        )


class ModelRegistry:
    """The models that exist, and the ModelService methods on them.

    Not thread-safe: the fake calls it with its lock held.
    """

    def __init__(
        self,
        *,
        operations: Operations,
        take_number: Callable[[], int],
        delete_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.models: dict[str, ModelRecord] = {}
        self._operations = operations
        self._take_number = take_number
        self._delete_s = delete_s
        self._clock = clock

    # -- what training pipelines use ------------------------------------------------------

    def check_target(self, location: dict[str, str], model_id: str, parent_model: str) -> None:
        """Refuse a pipeline whose model cannot be registered: a ``parent_model`` that does
        not exist (NOT_FOUND), a ``model_id`` taken already (ALREADY_EXISTS)."""
        if parent_model:
            self.record(parent_model)
        elif model_id:
            name = ModelServiceClient.model_path(
                location["project"], location["location"], model_id
            )
            if name in self.models:
                # google/rpc/code.proto ALREADY_EXISTS: "The entity that a client attempted
                # to create ... already exists". The reference does not give Vertex AI's
                # words for a taken model ID; these are the fake's.
                raise RpcError(grpc.StatusCode.ALREADY_EXISTS, f"Model {name} already exists.")

    def register(
        self,
        location: dict[str, str],
        upload: VertexMessage,
        *,
        model_id: str,
        parent_model: str,
        training_pipeline: str,
        at: float,
    ) -> VertexMessage:
        """Register ``upload`` (a Model as a pipeline's ``model_to_upload`` gives it, its
        ``artifact_uri`` set) as a new model, of ``model_id`` or a server-chosen ID, or as
        the next version of ``parent_model``; return the version as GetModel would.
        RpcError when it cannot be (the parent gone, the ID taken meanwhile)."""
        self.check_target(location, model_id, parent_model)
        if parent_model:
            record = self.record(parent_model)
        else:
            number = self._take_number()
            name = ModelServiceClient.model_path(
                location["project"], location["location"], model_id or str(number)
            )
            record = ModelRecord(name=name, number=number, created_at=at)
            self.models[name] = record
        record.last_version += 1
        version = _ModelPb()
        version.CopyFrom(upload)
        version.name = record.name
        version.version_id = str(record.last_version)
        version.training_pipeline = training_pipeline
        for stamp in ("create_time", "update_time"):
            getattr(version, stamp).CopyFrom(timestamp(record.created_at))
        for stamp in ("version_create_time", "version_update_time"):
            getattr(version, stamp).CopyFrom(timestamp(at))
        aliases = list(dict.fromkeys(upload.version_aliases))
        if not record.versions and DEFAULT_ALIAS not in aliases:
            aliases.insert(0, DEFAULT_ALIAS)
        for other in record.versions.values():
            kept = [alias for alias in other.version_aliases if alias not in aliases]
            if len(kept) != len(other.version_aliases):
                del other.version_aliases[:]
                other.version_aliases.extend(kept)
                other.version_update_time.CopyFrom(timestamp(at))
        del version.version_aliases[:]
        version.version_aliases.extend(aliases)
        record.versions[version.version_id] = version
        return self.copy(version)

    # -- ModelService -------------------------------------------------------------------

    def get_model(self, request: VertexMessage) -> VertexMessage:
        # GetModelRequest.name: models/M (the default version), models/M@2 (a version ID)
        # or models/M@golden (an alias).
        name, _, version = request.name.partition("@")
        record = self.record(name)
        if not version:
            return self.copy(record.default_version())
        return self.copy(self._version(record, version, by_alias=True))

    def list_models(self, request: VertexMessage) -> VertexMessage:
        # ListModelsRequest: filter on model, display_name and labels; standard paging.
        location = parse_location(request.parent)
        parent = ModelServiceClient.common_location_path(location["project"], location["location"])
        matches = parse_filter(request.filter, states=None, fields=_MODEL_FIELDS)
        page_size = parse_page_size(request.page_size)
        after = parse_page_token(request.page_token)
        records = sorted(self.models.values(), key=lambda r: r.number, reverse=True)
        selected = [
            (record.number, self.copy(record.default_version()))
            for record in records
            if record.name.startswith(parent + "/") and (after is None or record.number < after)
        ]
        selected = [(number, model) for number, model in selected if all(m(model) for m in matches)]
        response = model_service.ListModelsResponse.pb()()
        response.models.extend(model for _, model in selected[:page_size])
        if len(selected) > page_size:
            response.next_page_token = str(selected[page_size - 1][0])
        return response

    def list_model_versions(self, request: VertexMessage) -> VertexMessage:
        # ListModelVersionsRequest: the model's versions; filter on labels; standard paging.
        record = self.record(request.name)
        matches = parse_filter(request.filter, states=None, fields={})
        page_size = parse_page_size(request.page_size)
        after = parse_page_token(request.page_token)
        selected = [
            version
            for version in record.versions.values()
            if (after is None or int(version.version_id) > after)
            and all(m(version) for m in matches)
        ]
        response = model_service.ListModelVersionsResponse.pb()()
        response.models.extend(self.copy(version) for version in selected[:page_size])
        if len(selected) > page_size:
            response.next_page_token = selected[page_size - 1].version_id
        return response

    def delete_model_version(self, request: VertexMessage) -> VertexMessage:
        # DeleteModelVersionRequest.name: "with a version ID explicitly included".
        name, _, version_id = request.name.partition("@")
        if not version_id.isdecimal():
            raise RpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Invalid model version name {request.name!r}: expected "
                "projects/{project}/locations/{location}/models/{model}@{version_id}.",
            )
        record = self.record(name)
        version = self._version(record, version_id, by_alias=False)
        now = self._clock()
        if version_id in record.version_operations:
            return self._operations[record.version_operations[version_id]].render(now)
        remaining = [v for v in record.versions if v not in record.version_deletes]
        if remaining == [version_id]:
            raise RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"Model version {request.name} is the only version of the model: deleting "
                "the only version in the Model is not allowed. Use DeleteModel for "
                "deleting the Model instead.",
            )
        if DEFAULT_ALIAS in version.version_aliases:
            raise RpcError(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"Model version {request.name} holds the {DEFAULT_ALIAS!r} alias and cannot "
                "be deleted: give another version the alias first.",
            )
        operation = self._start_delete(record.name, now)
        record.version_operations[version_id] = operation.name
        record.version_deletes[version_id] = operation.done_at
        return operation.render(now)

    def delete_model(self, request: VertexMessage) -> VertexMessage:
        # model_service.proto DeleteModel: a long-running operation (Empty response,
        # DeleteOperationMetadata); the model is gone once it is done.
        record = self.record(request.name)
        now = self._clock()
        if record.delete_operation is not None:
            return self._operations[record.delete_operation].render(now)
        operation = self._start_delete(record.name, now)
        record.delete_operation = operation.name
        record.deleted_at = operation.done_at
        return operation.render(now)

    # -- state --------------------------------------------------------------------------

    def record(self, name: str) -> ModelRecord:
        """The model named ``name`` (no version); INVALID_ARGUMENT or NOT_FOUND if none."""
        if not ModelServiceClient.parse_model_path(name):
            raise RpcError(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"Invalid Model resource name {name!r}: expected "
                "projects/{project}/locations/{location}/models/{model}.",
            )
        record = self.models.get(name)
        if record is None:
            raise RpcError(grpc.StatusCode.NOT_FOUND, f"Model {name} is not found.")
        return record

    def forget_deleted(self, now: float) -> None:
        """Drop the models and versions whose delete operation has finished."""
        for name, record in list(self.models.items()):
            if record.deleted_at is not None and record.deleted_at <= now:
                del self.models[name]
                continue
            for version_id, done_at in list(record.version_deletes.items()):
                if done_at <= now:
                    record.versions.pop(version_id, None)
                    del record.version_deletes[version_id]

    def _version(self, record: ModelRecord, version: str, *, by_alias: bool) -> VertexMessage:
        found = record.versions.get(version)
        if found is None and by_alias:
            found = next(
                (v for v in record.versions.values() if version in v.version_aliases), None
            )
        if found is None:
            raise RpcError(
                grpc.StatusCode.NOT_FOUND, f"Model {record.name}@{version} is not found."
            )
        return found

    def _start_delete(self, model: str, now: float) -> VertexMessage:
        parts = ModelServiceClient.parse_model_path(model)
        parent = ModelServiceClient.common_location_path(parts["project"], parts["location"])
        return self._operations.start(
            f"{parent}/operations/{self._take_number()}", now, self._delete_s
        )

    @staticmethod
    def copy(version: VertexMessage) -> VertexMessage:
        """A copy of a version's message, to hand out."""
        copied = _ModelPb()
        copied.CopyFrom(version)
        return copied
