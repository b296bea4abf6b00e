"""``model:``: the Model Registry entry a job's trained model becomes (a job with it runs as
a training pipeline, ``vertex_training.api.pipelines``).

The keys as written (``ModelConfig``), what the providers consume (``ModelUpload``, with
its REST ``modelToUpload``, ``modelId`` and ``parentModel``), and the rules Google's
reference gives them (``model.proto``, ``training_pipeline.proto``):

- ``id``, a new model's ID: at most 63 characters of ``[a-z0-9_-]``, not starting with a
  digit or a hyphen. A model of that ID that exists already gets the next version.
- ``parent``, the existing model the versions are added to: its ID, or its resource name
  ``projects/P/locations/R/models/M`` in the job's own project and region (a training
  pipeline registers in its own location only).
- ``aliases``: ``[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]``, so never a version number;
  ``default`` is Vertex AI's own, always on the newest version.
- ``display_name``: 1 to 128 characters (the job's display name by default).
- ``serving``: the container that serves predictions, ``image`` or the prebuilt
  prediction image of a ``framework`` (``vertex_training.catalog.prediction_images``).
"""

from __future__ import annotations

import datetime
import re
from typing import Annotated, Any, Final

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from vertex_training.api import image_refs
from vertex_training.api.labels import MAX_USER_LABELS
from vertex_training.api.pipelines import DEFAULT_ALIAS
from vertex_training.errors import Issue
from vertex_training.stackconfig._arguments import Later
from vertex_training.stackconfig._issues import full_key, invalid
from vertex_training.stackconfig._rules import (
    DisplayName,
    NonEmptyText,
    TextList,
    _labels_before,
)

#: model_id (training_pipeline.proto): "up to 63 characters ... [a-z0-9_-]. The first
#: character cannot be a number or hyphen."
MODEL_ID_RE: Final = re.compile(r"[a-z_][a-z0-9_-]{0,62}")
#: version_aliases (model.proto): "[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]", to tell an alias
#: from a version ID.
ALIAS_RE: Final = re.compile(r"[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]")
#: A model's resource name (model_service.proto's ``Model.name``).
MODEL_NAME_RE: Final = re.compile(
    r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/models/(?P<model>[^/@]+)"
)
#: Most labels a model's config may give: the rest are the owner labels it carries
#: (``vertex_training.api.pipelines.MODEL_OWNER_LABELS``).
MAX_MODEL_LABELS: Final = MAX_USER_LABELS


def _model_id(value: str) -> str:
    if MODEL_ID_RE.fullmatch(value):
        return value
    raise invalid(
        "a model ID has 1 to 63 lowercase letters, digits, _ or -, and starts with a "
        f"letter or _; write e.g. {_suggested_id(value)}"
    )


def _suggested_id(value: str) -> str:
    folded = re.sub(r"[^a-z0-9_-]+", "-", value.lower()).strip("-") or "model"
    return (folded if folded[0].isalpha() or folded[0] == "_" else f"m-{folded}")[:63]


def _alias(value: str) -> str:
    if ALIAS_RE.fullmatch(value):
        return value
    raise invalid(
        "a version alias has 2 to 128 letters, digits or -, starts with a lowercase letter "
        "and ends with one or a digit (so that it never reads as a version number); "
        "write e.g. production or candidate-2"
    )


ModelId = Annotated[str, AfterValidator(_model_id)]
Alias = Annotated[str, AfterValidator(_alias)]
ModelLabels = Annotated[
    dict[str, str], BeforeValidator(_labels_before), Field(max_length=MAX_MODEL_LABELS)
]


class _ConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ``serving: {framework: {name: sklearn, version: "1.5", gpu: false}}``: Google's prebuilt
# prediction image of that framework version, its GPU build with ``gpu: true`` (the machine
# that serves it is chosen at deployment, not here).
class ServingFrameworkConfig(_ConfigModel):
    """``framework: {name: sklearn, version: "1.5", gpu: false}``: Google's prebuilt
    prediction image."""

    name: Later[NonEmptyText] = Field(
        description=(
            "the framework: `tensorflow`, `pytorch`, `sklearn` or `xgboost`, as `framework.name`"
        )
    )
    version: Later[NonEmptyText] = Field(description="the framework's version, as text")
    gpu: Later[bool] = Field(
        False, description="whether to serve from the GPU build; default false"
    )


# ``model.serving``: the container Vertex AI serves the model's predictions from.
class ServingConfig(_ConfigModel):
    """``serving:``: the container that serves the model's predictions, ``image`` or
    ``framework``."""

    image: Later[NonEmptyText | None] = Field(None, description="the serving image's URI")
    framework: ServingFrameworkConfig | None = Field(
        None,
        description=(
            "`{name, version, gpu}`: Google's prebuilt prediction image of that framework "
            "version (its GPU build with `gpu: true`)"
        ),
    )
    command: Later[TextList | None] = Field(
        None, description="the serving container's entrypoint (list)"
    )
    args: Later[TextList | None] = Field(
        None, description="the serving container's arguments (list)"
    )
    env: Later[dict[str, str] | None] = Field(
        None, description="the serving container's environment (map)"
    )
    port: Later[int | None] = Field(
        None, ge=1, le=65535, description="the port the server listens on; default 8080"
    )
    predict_route: Later[NonEmptyText | None] = Field(
        None, description="the HTTP path of prediction requests"
    )
    health_route: Later[NonEmptyText | None] = Field(
        None, description="the HTTP path of health checks"
    )

    @model_validator(mode="after")
    def _one_image(self) -> ServingConfig:
        if (self.image is None) == (self.framework is None):
            raise invalid(
                "name the serving container once: image: <registry>/<image>:<tag>, or "
                'framework: {name: sklearn, version: "1.5"} for Google\'s prebuilt '
                "prediction image"
            )
        return self


class ModelConfig(_ConfigModel):
    """``model:``: the Model Registry entry the trained model becomes (the job runs as a
    training pipeline; docs/models.md)."""

    display_name: Later[DisplayName | None] = Field(
        None,
        description="the model's display name, 1 to 128 characters; default the job's display name",
    )
    id: Later[ModelId | None] = Field(
        None,
        description=(
            "a new model's ID: at most 63 lowercase letters, digits, `_` or `-`, not "
            "starting with a digit or `-`; a model of that ID that exists gets the next "
            "version; default Vertex AI picks one, and retrains find it by the job's labels"
        ),
    )
    parent: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "an existing model the versions are added to: its ID, or its resource name in "
            "the job's own project and region; instead of `id`"
        ),
    )
    description: Later[str | None] = Field(None, description="the model's description")
    version_description: Later[str | None] = Field(None, description="each version's description")
    labels: Later[ModelLabels | None] = Field(
        None,
        description=(
            "the model's labels, as a job's labels; the model also carries the job's "
            "`pulumi_project`, `pulumi_stack` and `pulumi_resource` labels"
        ),
    )
    aliases: Later[list[Alias] | None] = Field(
        None,
        description=(
            "version aliases that move to each new version "
            "(`[a-z][a-zA-Z0-9-]{0,126}[a-z0-9]`); `default` is always on the newest"
        ),
    )
    serving: ServingConfig = Field(
        description="the container Vertex AI serves predictions from: `image`, or `framework`"
    )


class _SpecModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServingContainer(_SpecModel):
    """REST ``ModelContainerSpec``, resolved."""

    image: str
    command: list[str] = []
    args: list[str] = []
    env: dict[str, str] = {}
    port: int | None = None
    predict_route: str | None = None
    health_route: str | None = None

    def request_body(self) -> dict[str, Any]:
        """REST ``ModelContainerSpec`` (unset omitted)."""
        body: dict[str, Any] = {"imageUri": self.image}
        if self.command:
            body["command"] = list(self.command)
        if self.args:
            body["args"] = list(self.args)
        if self.env:
            body["env"] = [{"name": k, "value": v} for k, v in sorted(self.env.items())]
        if self.port is not None:
            body["ports"] = [{"containerPort": self.port}]
        if self.predict_route:
            body["predictRoute"] = self.predict_route
        if self.health_route:
            body["healthRoute"] = self.health_route
        return body


class ModelUpload(_SpecModel):
    """The model a job registers, resolved: what ``request_body`` puts in its pipeline."""

    display_name: str
    id: str | None = None
    #: The existing model's resource name the versions are added to.
    parent: str | None = None
    description: str | None = None
    version_description: str | None = None
    labels: dict[str, str] = {}
    aliases: list[str] = []
    serving: ServingContainer

    def request_body(self) -> dict[str, Any]:
        """``modelToUpload`` and ``modelId`` or ``parentModel`` of a TrainingPipeline."""
        upload: dict[str, Any] = {
            "displayName": self.display_name,
            "containerSpec": self.serving.request_body(),
        }
        if self.description:
            upload["description"] = self.description
        if self.version_description:
            upload["versionDescription"] = self.version_description
        if self.labels:
            upload["labels"] = dict(sorted(self.labels.items()))
        # Vertex AI gives `default` to a model's first version only, and moves it to a
        # later one only when asked (google-cloud-aiplatform's `is_default_version`: "When
        # set to False, the 'default' alias will not be moved"): every version asks.
        upload["versionAliases"] = list(dict.fromkeys([DEFAULT_ALIAS, *self.aliases]))
        body: dict[str, Any] = {"modelToUpload": upload}
        if self.parent:
            body["parentModel"] = self.parent
        elif self.id:
            body["modelId"] = self.id
        return body


def serving_framework_image(
    base: str,
    framework: ServingFrameworkConfig,
    region: str,
    issues: list[Issue],
    today: datetime.date | None = None,
) -> tuple[str | None, list[str]]:
    """The prebuilt prediction image of ``framework`` for ``region``'s registry with its
    warnings (end of support near or past), or None with an issue naming the versions
    that have one."""
    from vertex_training.catalog import prediction_images

    key = full_key(base, ("model", "serving", "framework"))
    found = prediction_images.prediction_image(
        framework.name,
        framework.version,
        region=region,
        gpu=framework.gpu,
        today=today or datetime.date.today(),
    )
    if isinstance(found, prediction_images.PredictionRefusal):
        issues.append(Issue(f"{key}.{found.field}", framework.model_dump(), found.message))
        return None, []
    return found.uri, list(found.warnings)


def model_name(model_id: str, project: str | None, region: str, *, local: bool) -> str:
    """The resource name of the model ``model_id`` where a job registers it."""
    if local:
        return f"local/models/{model_id}"
    return f"projects/{project}/locations/{region}/models/{model_id}"


def resolve_model(
    base: str,
    config: ModelConfig,
    *,
    display_name: str,
    where: tuple[str | None, str, bool],
    output: str | None,
    today: datetime.date | None = None,
) -> tuple[ModelUpload | None, list[Issue], list[Issue]]:
    """``config`` resolved for the job ``base`` (its key) of ``display_name``, ``where``
    it runs (its project, region, and whether on this machine), writing under ``output``
    (its base output directory): the parent as a resource name, the display name
    defaulted, the serving framework's prediction image picked. Returns the upload (None
    when there are issues), the issues and the warnings."""
    project, region, local = where
    key = full_key(base, ("model",))
    issues: list[Issue] = []
    warnings: list[Issue] = []
    if not local and output is None:
        issues.append(
            Issue(
                key,
                config.model_dump(exclude_unset=True),
                "the pipeline uploads what the trainer writes to AIP_MODEL_DIR, under the "
                "job's base_output_directory, and this job has none: write "
                "base_output_directory: gs://<bucket>/<folder>, or give the stack a "
                "platform bucket (vertex-training:platform)",
            )
        )
    image = config.serving.image
    if image is not None and isinstance(found := image_refs.parse(image), image_refs.NotAReference):
        issues.append(image_refs.image_issue(f"{key}.serving.image", image, found))
    if config.serving.framework is not None:
        framework = config.serving.framework
        image, notes = serving_framework_image(base, framework, region, issues, today)
        where_key = f"{key}.serving.framework"
        warnings += [Issue(where_key, framework.model_dump(), note) for note in notes]
    parent = None
    if config.parent is not None and config.id is not None:
        issues.append(
            Issue(
                f"{key}.id",
                config.id,
                "id names a new model and parent an existing one: keep one (a model of "
                "that ID that exists already gets the next version with id alone)",
            )
        )
    elif config.parent is not None:
        parent = _parent(
            f"{key}.parent", config.parent, project, region, local=local, issues=issues
        )
    if issues or image is None:
        return None, issues, warnings
    serving = config.serving
    upload = ModelUpload(
        display_name=config.display_name or display_name,
        id=config.id,
        parent=parent,
        description=config.description,
        version_description=config.version_description,
        labels=dict(config.labels or {}),
        aliases=list(config.aliases or []),
        serving=ServingContainer(
            image=image,
            command=list(serving.command or []),
            args=list(serving.args or []),
            env=dict(serving.env or {}),
            port=serving.port,
            predict_route=serving.predict_route,
            health_route=serving.health_route,
        ),
    )
    return upload, [], warnings


def _parent(
    key: str, written: str, project: str | None, region: str, *, local: bool, issues: list[Issue]
) -> str | None:
    """The parent model's resource name, or None with an issue."""
    if MODEL_ID_RE.fullmatch(written):
        return model_name(written, project, region, local=local)
    match = MODEL_NAME_RE.fullmatch(written)
    if match is None or local:
        where = "this machine's registry" if local else f"{project}/{region}"
        issues.append(
            Issue(
                key,
                written,
                f"write the ID of a model in {where} (its last segment, e.g. churn-model)"
                + (
                    ""
                    if local
                    else f", or its resource name projects/{project}/locations/{region}/models/<ID>"
                ),
            )
        )
        return None
    if (match["project"], match["location"]) != (project, region):
        issues.append(
            Issue(
                key,
                written,
                f"a training pipeline registers in its own project and region "
                f"({project}, {region}), and this model is in {match['project']}, "
                f"{match['location']}: name a model of {project} in {region}, or move the "
                "job to the model's region",
            )
        )
        return None
    if not MODEL_ID_RE.fullmatch(match["model"]):
        issues.append(Issue(key, written, "the model ID at its end breaks Google's pattern"))
        return None
    return written
