"""``dataset:``: the Vertex AI managed dataset a job reads (a job with it runs as a training
pipeline, ``vertex_training.api.pipelines``, whose ``inputDataConfig`` it is).

The keys as written (``DatasetConfig``), what the providers consume (``DatasetInput``,
with its REST ``InputDataConfig``), and the rules Google's reference gives them
(``google/cloud/aiplatform/v1/training_pipeline.proto``):

- ``id``: the dataset's ID, or its resource name ``projects/P/locations/R/datasets/ID``
  in the job's own project and region ("The Dataset must use the same ancestor Project
  and Location as the TrainingPipeline").
- ``split``: at most one of ``fractions``, ``filter``, ``predefined``, ``timestamp``,
  ``stratified``. Fractions "must sum to up to 1"; none given is "roughly 80% ... 10%
  ... 10%". A filter split needs all three filters; the last three need a ``key`` (a data
  column) and are for tabular datasets.
- ``destination``: where the pipeline exports the data for the trainer: ``gs://...``
  (``gcs_destination``) or ``bq://project[.dataset]`` (``bigquery_destination``). The
  trainer gets AIP_DATA_FORMAT and AIP_TRAINING_DATA_URI, AIP_VALIDATION_DATA_URI,
  AIP_TEST_DATA_URI.

The local backend has no managed datasets: a local job with ``dataset:`` is refused at
preview, naming the key and how to read the same data from files (docs/models.md).
"""

from __future__ import annotations

import re
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from vertex_training.errors import Issue
from vertex_training.stackconfig._arguments import Later
from vertex_training.stackconfig._issues import full_key, invalid
from vertex_training.stackconfig._rules import NonEmptyText

#: A dataset's resource name (dataset_service.proto's ``Dataset.name``).
DATASET_NAME_RE: Final = re.compile(
    r"projects/(?P<project>[^/]+)/locations/(?P<location>[^/]+)/datasets/(?P<id>\d+)"
)
#: Where the pipeline exports the data: Cloud Storage or BigQuery.
_DESTINATION_RE: Final = re.compile(r"(gs://[^/\s]+(/\S*)?|bq://[A-Za-z0-9_.:-]+)")
_SPLITS: Final = ("fractions", "filter", "predefined", "timestamp", "stratified")


class _ConfigModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FractionsConfig(_ConfigModel):
    """``{training: 0.8, validation: 0.1, test: 0.1}``: they sum to at most 1."""

    training: Later[float | None] = Field(
        None, ge=0, le=1, description="the share of the data for training, 0 to 1"
    )
    validation: Later[float | None] = Field(
        None, ge=0, le=1, description="the share of the data for validation, 0 to 1"
    )
    test: Later[float | None] = Field(
        None, ge=0, le=1, description="the share of the data for the test, 0 to 1"
    )

    @model_validator(mode="after")
    def _up_to_one(self) -> FractionsConfig:
        given = [f for f in (self.training, self.validation, self.test) if f is not None]
        if sum(given) > 1 + 1e-9:
            raise invalid(
                f"the fractions sum to {sum(given):g}: they must sum to at most 1 (the rest, "
                "if any, Vertex AI assigns); e.g. {training: 0.8, validation: 0.1, test: 0.1}"
            )
        return self

    def request_body(self) -> dict[str, float]:
        named = {
            "trainingFraction": self.training,
            "validationFraction": self.validation,
            "testFraction": self.test,
        }
        return {key: value for key, value in named.items() if value is not None}


class KeyedFractionsConfig(FractionsConfig):
    """``{key: <column>, training: 0.8, ...}``: a timestamp or stratified split."""

    key: Later[NonEmptyText] = Field(
        description="the column (a time column, or a category column for `stratified`)"
    )

    def request_body(self) -> dict[str, Any]:
        return {**super().request_body(), "key": self.key}


# ``{training: <filter>, validation: <filter>, test: <filter>}``: all three.
class FiltersConfig(_ConfigModel):
    """``{training: <filter>, validation: <filter>, test: <filter>}``."""

    training: Later[NonEmptyText] = Field(
        description="the data item filter of the training set, as Vertex AI's ListDataItems takes"
    )
    validation: Later[NonEmptyText] = Field(
        description="the data item filter of the validation set, as Vertex AI's ListDataItems takes"
    )
    test: Later[NonEmptyText] = Field(
        description="the data item filter of the test set, as Vertex AI's ListDataItems takes"
    )


# ``split:``: how the dataset's items are assigned to training, validation and test.
class SplitConfig(_ConfigModel):
    """``split:``: one of ``fractions``, ``filter``, ``predefined``, ``timestamp``,
    ``stratified``."""

    fractions: FractionsConfig | None = Field(
        None, description="`{training, validation, test}`, each 0 to 1, summing to at most 1"
    )
    filter: FiltersConfig | None = Field(
        None,
        description=(
            "`{training, validation, test}`: the filter that selects each set's data items "
            "(all three)"
        ),
    )
    predefined: Later[NonEmptyText | None] = Field(
        None, description="the column that names each row's set (tabular datasets)"
    )
    timestamp: KeyedFractionsConfig | None = Field(
        None,
        description=(
            "`{key, training, validation, test}`: fractions by a time column (tabular datasets)"
        ),
    )
    stratified: KeyedFractionsConfig | None = Field(
        None,
        description=(
            "`{key, training, validation, test}`: fractions keeping a category column's "
            "distribution (tabular datasets)"
        ),
    )

    @model_validator(mode="after")
    def _at_most_one(self) -> SplitConfig:
        given = [name for name in _SPLITS if getattr(self, name) is not None]
        if len(given) > 1:
            raise invalid(
                f"give one split, not {' and '.join(given)}: fractions, filter, predefined, "
                "timestamp or stratified"
            )
        return self

    def request_body(self) -> dict[str, Any]:
        """The split's REST field (none: Vertex AI's default fractions)."""
        if self.fractions is not None:
            return {"fractionSplit": self.fractions.request_body()}
        if self.filter is not None:
            f = self.filter
            return {
                "filterSplit": {
                    "trainingFilter": f.training,
                    "validationFilter": f.validation,
                    "testFilter": f.test,
                }
            }
        if self.predefined is not None:
            return {"predefinedSplit": {"key": self.predefined}}
        if self.timestamp is not None:
            return {"timestampSplit": self.timestamp.request_body()}
        if self.stratified is not None:
            return {"stratifiedSplit": self.stratified.request_body()}
        return {}


class DatasetConfig(_ConfigModel):
    """``dataset:``: the Vertex AI managed dataset the job reads (it runs as a training
    pipeline; docs/models.md)."""

    id: Later[NonEmptyText] = Field(
        description=(
            "the dataset's numeric ID, or its resource name in the job's own project and region"
        )
    )
    destination: Later[NonEmptyText] = Field(
        description=(
            "where the data is exported for the trainer: `gs://<bucket>/<folder>` or "
            "`bq://<project>[.<dataset>]`"
        )
    )
    split: SplitConfig | None = Field(
        None,
        description=(
            "one of `fractions`, `filter`, `predefined`, `timestamp`, `stratified`; none: "
            "about 80/10/10"
        ),
    )
    annotations_filter: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "which annotations go with the data, as the API's InputDataConfig's `annotationsFilter`"
        ),
    )
    annotation_schema_uri: Later[NonEmptyText | None] = Field(
        None,
        description="the annotations' schema, as the API's InputDataConfig's `annotationSchemaUri`",
    )
    saved_query_id: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "a saved query that selects the annotations, as the API's InputDataConfig's "
            "`savedQueryId`"
        ),
    )
    persist_ml_use_assignment: Later[bool] = Field(
        False, description="keep each item's split in the dataset (its `ml_use` label)"
    )


class DatasetInput(BaseModel):
    """The dataset a job reads, resolved: its pipeline's ``inputDataConfig``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    body: dict[str, Any]

    def request_body(self) -> dict[str, Any]:
        """``{"inputDataConfig": ...}`` of a TrainingPipeline."""
        return {"inputDataConfig": dict(self.body)}


def resolve_dataset(
    base: str, config: DatasetConfig, *, where: tuple[str | None, str, bool]
) -> tuple[DatasetInput | None, list[Issue]]:
    """``config`` resolved for the job ``base`` (its key) ``where`` it runs (its project,
    region, and whether on this machine): the dataset's ID, its split and destination.
    Returns the input, or None with the issues."""
    project, region, local = where
    key = full_key(base, ("dataset",))
    if local:
        return None, [
            Issue(
                key,
                config.model_dump(exclude_defaults=True),
                "the local backend has no Vertex AI managed datasets: on the local stack "
                "leave dataset out and name the data's files in the job's args (e.g. args: "
                "[--train, data/train.csv]), as the trainer reads AIP_TRAINING_DATA_URI on "
                "Vertex AI; or run the job on Vertex AI",
            )
        ]
    issues: list[Issue] = []
    dataset_id = config.id
    if match := DATASET_NAME_RE.fullmatch(config.id):
        if (match["project"], match["location"]) != (project, region):
            issues.append(
                Issue(
                    f"{key}.id",
                    config.id,
                    f"a training pipeline reads a dataset of its own project and region "
                    f"({project}, {region}): name a dataset there, or move the job to the "
                    "dataset's region",
                )
            )
        dataset_id = match["id"]
    elif not config.id.isdigit():
        issues.append(
            Issue(
                f"{key}.id",
                config.id,
                "write the dataset's numeric ID (the last segment of projects/P/locations/R/"
                "datasets/ID), or that resource name",
            )
        )
    if not _DESTINATION_RE.fullmatch(config.destination):
        issues.append(
            Issue(
                f"{key}.destination",
                config.destination,
                "write where the pipeline exports the data for the trainer: gs://<bucket>/"
                "<folder> or bq://<project>[.<dataset>]",
            )
        )
    if issues:
        return None, issues
    body: dict[str, Any] = {"datasetId": dataset_id}
    if config.split is not None:
        body.update(config.split.request_body())
    if config.destination.startswith("gs://"):
        body["gcsDestination"] = {"outputUriPrefix": config.destination}
    else:
        body["bigqueryDestination"] = {"outputUri": config.destination}
    optional = {
        "annotationsFilter": config.annotations_filter,
        "annotationSchemaUri": config.annotation_schema_uri,
        "savedQueryId": config.saved_query_id,
    }
    body.update({k: v for k, v in optional.items() if v})
    if config.persist_ml_use_assignment:
        body["persistMlUseAssignment"] = True
    return DatasetInput(body=body), []
