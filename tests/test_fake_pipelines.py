"""The fake Vertex PipelineService and ModelService, driven by the real
PipelineServiceClient and ModelServiceClient over loopback gRPC.

A ManualClock drives the backing jobs' timelines, so each test moves time explicitly.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1 import (
    JobServiceClient,
    ModelServiceClient,
    PipelineServiceClient,
)
from google.cloud.aiplatform_v1.services.model_service.transports import ModelServiceGrpcTransport
from google.cloud.aiplatform_v1.services.pipeline_service.transports import (
    PipelineServiceGrpcTransport,
)
from google.cloud.aiplatform_v1.types import PipelineState, TrainingPipeline
from google.protobuf import json_format
from google.rpc import code_pb2

from tests.clients import job_service_client
from vertex_training.api import pipelines as api_pipelines
from vertex_training.testing import FakeVertex, ManualClock

pytestmark = pytest.mark.timeout(60)

PROJECT, REGION = "test-project", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
QUEUED_S, PENDING_S, RUN_S, TRIAL_S, CANCEL_S, DELETE_S = 1.0, 1.0, 10.0, 2.0, 1.0, 1.0
#: Long enough for any backing job of these tests to end (a tuning job runs 2 trials of
#: TRIAL_S at a time, 4 in all).
ENDED_S = 60.0
IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-6:latest"
OUTPUT = "gs://bucket/run"


def spec(**overrides: Any) -> dict[str, Any]:
    """A CustomJobSpec in REST JSON form, as a custom task's inputs."""
    body: dict[str, Any] = {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "n1-standard-4"},
                "replicaCount": 1,
                "containerSpec": {"imageUri": "gcr.io/p/trainer"},
            }
        ],
        "baseOutputDirectory": {"outputUriPrefix": OUTPUT},
    }
    body.update(overrides)
    return body


def tuning_inputs(**overrides: Any) -> dict[str, Any]:
    """A tuning task's inputs: a study of one integer parameter, 4 trials, 2 at a time."""
    inputs: dict[str, Any] = {
        "studySpec": {
            "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": [
                {"parameterId": "epochs", "integerValueSpec": {"minValue": 1, "maxValue": 10}}
            ],
        },
        "maxTrialCount": 4,
        "parallelTrialCount": 2,
        "trialJobSpec": spec(),
    }
    inputs.update(overrides)
    return inputs


def pipeline(
    display_name: str = "train",
    *,
    inputs: dict[str, Any] | None = None,
    definition: str = api_pipelines.CUSTOM_TASK,
    aliases: tuple[str, ...] = (),
    **fields: Any,
) -> dict[str, Any]:
    """A TrainingPipeline in the client's dict form: a custom task that uploads a model."""
    body: dict[str, Any] = {
        "display_name": display_name,
        "training_task_definition": definition,
        "training_task_inputs": spec() if inputs is None else inputs,
        "model_to_upload": {
            "display_name": "churn",
            "container_spec": {"image_uri": IMAGE},
            "version_aliases": list(aliases),
            "labels": {"owner": "me"},
        },
        "labels": {"team": "ml"},
    }
    body.update(fields)
    return body


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    with FakeVertex(
        queued_s=QUEUED_S,
        pending_s=PENDING_S,
        run_s=RUN_S,
        trial_s=TRIAL_S,
        cancel_s=CANCEL_S,
        delete_s=DELETE_S,
        clock=clock,
    ) as fake:
        yield fake


@pytest.fixture
def channel(fake: FakeVertex) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(fake.address) as channel:
        yield channel


@pytest.fixture
def pipelines(channel: grpc.Channel) -> PipelineServiceClient:
    return PipelineServiceClient(transport=PipelineServiceGrpcTransport(channel=channel))


@pytest.fixture
def models(channel: grpc.Channel) -> ModelServiceClient:
    return ModelServiceClient(transport=ModelServiceGrpcTransport(channel=channel))


@pytest.fixture
def jobs(fake: FakeVertex) -> Iterator[JobServiceClient]:
    with job_service_client(fake.address) as client:
        yield client


def create(client: PipelineServiceClient, **fields: Any) -> TrainingPipeline:
    return client.create_training_pipeline(parent=PARENT, training_pipeline=pipeline(**fields))


def run(client: PipelineServiceClient, clock: ManualClock, **fields: Any) -> TrainingPipeline:
    """Create a pipeline and move time until it has ended."""
    created = create(client, **fields)
    clock.advance(ENDED_S)
    return client.get_training_pipeline(name=created.name)


def metadata(pipeline: TrainingPipeline) -> dict[str, Any]:
    value: dict[str, Any] = json_format.MessageToDict(
        TrainingPipeline.pb(pipeline).training_task_metadata
    )
    return value


def invalid_fields(excinfo: pytest.ExceptionInfo[exceptions.InvalidArgument]) -> str:
    return str(excinfo.value.message)


class TestCreateTrainingPipeline:
    def test_returns_the_pipeline_queued_with_a_server_chosen_id(
        self, pipelines: PipelineServiceClient
    ) -> None:
        """CreateTrainingPipeline answers at once with the pipeline, QUEUED, a numeric ID."""
        created = create(pipelines)
        parts = pipelines.parse_training_pipeline_path(created.name)
        assert (parts["project"], parts["location"]) == (PROJECT, REGION)
        assert parts["training_pipeline"].isdecimal()
        assert created.state == PipelineState.PIPELINE_STATE_QUEUED
        assert (created.display_name, dict(created.labels)) == ("train", {"team": "ml"})
        assert created.model_to_upload.name == ""

    def test_runs_a_backing_custom_job_named_in_its_metadata(
        self, fake: FakeVertex, pipelines: PipelineServiceClient, jobs: JobServiceClient
    ) -> None:
        """The pipeline's custom job exists in the JobService and is its backingCustomJob."""
        created = create(pipelines)
        backing = metadata(created)["backingCustomJob"]
        job = jobs.get_custom_job(name=backing)
        assert job.display_name == "train"
        assert job.job_spec.base_output_directory.output_uri_prefix == OUTPUT

    def test_follows_its_backing_job_through_the_states(
        self, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """QUEUED, PENDING, RUNNING as its job is; start_time when it runs."""
        created = create(pipelines)
        seen = []
        for step in (0.0, QUEUED_S, PENDING_S):
            clock.advance(step)
            got = pipelines.get_training_pipeline(name=created.name)
            seen.append(got.state.name.removeprefix("PIPELINE_STATE_"))
        assert seen == ["QUEUED", "PENDING", "RUNNING"]
        assert got.start_time == got.update_time

    def test_echoes_the_definition_in_another_form_that_still_reads(
        self, pipelines: PipelineServiceClient
    ) -> None:
        """The definition comes back as another URI of the same file; the task still reads."""
        created = create(pipelines)
        assert created.training_task_definition != api_pipelines.CUSTOM_TASK
        assert created.training_task_definition.startswith("https://")
        assert api_pipelines.is_tuning_definition(created.training_task_definition) is False

    def test_echoes_int64_task_inputs_as_strings(self, pipelines: PipelineServiceClient) -> None:
        """replicaCount (int64) sent as a number comes back as a string."""
        created = create(pipelines)
        inputs = json_format.MessageToDict(TrainingPipeline.pb(created).training_task_inputs)
        assert inputs["workerPoolSpecs"][0]["replicaCount"] == "1"

    def test_a_backing_job_script_applies_by_display_name(
        self, fake: FakeVertex, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """A script for the pipeline's display name scripts its backing job."""
        fake.script("doomed", outcome="FAILED", error_message="exit 3")
        ended = run(pipelines, clock, display_name="doomed")
        assert ended.state == PipelineState.PIPELINE_STATE_FAILED
        assert ended.error.message == "exit 3"
        assert ended.model_to_upload.name == ""


class TestModelRegistration:
    def test_a_succeeded_pipeline_registers_version_1_as_default(
        self,
        fake: FakeVertex,
        clock: ManualClock,
        pipelines: PipelineServiceClient,
        models: ModelServiceClient,
    ) -> None:
        """SUCCEEDED fills model_to_upload's name and version 1, aliased default."""
        ended = run(pipelines, clock, model_id="churn")
        assert ended.state == PipelineState.PIPELINE_STATE_SUCCEEDED
        assert ended.model_to_upload.name == f"{PARENT}/models/churn"
        assert ended.model_to_upload.version_id == "1"
        model = models.get_model(name=f"{PARENT}/models/churn@1")
        assert list(model.version_aliases) == ["default"]
        assert model.artifact_uri == f"{OUTPUT}/model"
        assert model.training_pipeline == ended.name
        assert model.container_spec.image_uri == IMAGE

    def test_without_a_model_id_the_server_chooses_one(
        self, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """A model with no model_id gets a numeric, server-chosen ID."""
        ended = run(pipelines, clock)
        assert ModelServiceClient.parse_model_path(ended.model_to_upload.name)["model"].isdecimal()

    def test_parent_model_gets_version_2_and_named_aliases_move(
        self, clock: ManualClock, pipelines: PipelineServiceClient, models: ModelServiceClient
    ) -> None:
        """A pipeline with parent_model adds version 2; the aliases it names leave v1."""
        first = run(pipelines, clock, model_id="churn", aliases=("prod",))
        parent = first.model_to_upload.name
        second = run(pipelines, clock, parent_model=parent, aliases=("default", "prod"))
        assert (second.model_to_upload.name, second.model_to_upload.version_id) == (parent, "2")
        versions = models.list_model_versions(name=parent)
        assert [(v.version_id, list(v.version_aliases)) for v in versions] == [
            ("1", []),
            ("2", ["default", "prod"]),
        ]
        assert models.get_model(name=parent).version_id == "2"
        assert models.get_model(name=f"{parent}@prod").version_id == "2"

    def test_default_stays_unless_the_new_version_names_it(
        self, clock: ManualClock, pipelines: PipelineServiceClient, models: ModelServiceClient
    ) -> None:
        """A version 2 that does not name default leaves it on version 1."""
        parent = run(pipelines, clock, model_id="churn").model_to_upload.name
        run(pipelines, clock, parent_model=parent, aliases=("canary",))
        assert models.get_model(name=parent).version_id == "1"
        assert list(models.get_model(name=f"{parent}@2").version_aliases) == ["canary"]

    def test_a_tuning_pipeline_registers_the_best_trials_model(
        self,
        clock: ManualClock,
        pipelines: PipelineServiceClient,
        models: ModelServiceClient,
        jobs: JobServiceClient,
    ) -> None:
        """The tuning task uploads <base>/<best trial>/model and names its jobs."""
        ended = run(
            pipelines,
            clock,
            definition=api_pipelines.TUNING_TASK,
            inputs=tuning_inputs(),
            model_id="tuned",
        )
        assert ended.state == PipelineState.PIPELINE_STATE_SUCCEEDED
        found = metadata(ended)
        tuning_job = jobs.get_hyperparameter_tuning_job(
            name=found["backingHyperparameterTuningJob"]
        )
        best = max(
            (t for t in tuning_job.trials if t.final_measurement.metrics),
            key=lambda t: (t.final_measurement.metrics[0].value, -int(t.id)),
        )
        model = models.get_model(name=f"{ended.model_to_upload.name}@1")
        assert model.artifact_uri == f"{OUTPUT}/{best.id}/model"
        assert JobServiceClient.parse_custom_job_path(found["bestTrialBackingCustomJob"])
        assert api_pipelines.is_tuning_definition(ended.training_task_definition)

    def test_a_failed_upload_fails_the_pipeline_and_registers_nothing(
        self,
        fake: FakeVertex,
        clock: ManualClock,
        pipelines: PipelineServiceClient,
        jobs: JobServiceClient,
    ) -> None:
        """fail_upload_next: the job succeeds, the pipeline FAILS with the reason."""
        fake.fail_upload_next("The serving image cannot be pulled.")
        ended = run(pipelines, clock, model_id="churn")
        assert ended.state == PipelineState.PIPELINE_STATE_FAILED
        assert "The serving image cannot be pulled." in ended.error.message
        assert jobs.get_custom_job(name=metadata(ended)["backingCustomJob"]).state.name == (
            "JOB_STATE_SUCCEEDED"
        )
        assert fake.models == {}

    def test_the_default_upload_failure_names_the_empty_model_directory(
        self, fake: FakeVertex, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """With no reason, the error is Vertex AI's for an empty AIP_MODEL_DIR."""
        fake.fail_upload_next()
        ended = run(pipelines, clock)
        assert f'There are no files under "{OUTPUT}/model" to copy.' in ended.error.message

    def test_a_model_id_taken_meanwhile_fails_the_later_pipeline(
        self, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """Two pipelines for one new model ID: the second to end FAILS (ALREADY_EXISTS)."""
        first, second = create(pipelines, model_id="churn"), create(pipelines, model_id="churn")
        clock.advance(ENDED_S)
        assert pipelines.get_training_pipeline(name=first.name).state.name.endswith("SUCCEEDED")
        later = pipelines.get_training_pipeline(name=second.name)
        assert later.state == PipelineState.PIPELINE_STATE_FAILED
        assert later.error.code == code_pb2.ALREADY_EXISTS


class TestValidation:
    @pytest.mark.parametrize(
        ("fields", "named"),
        [
            ({"display_name": ""}, "training_pipeline.display_name"),
            ({"definition": ""}, "training_task_definition"),
            ({"definition": "gs://elsewhere/task.yaml"}, "training_task_definition"),
            ({"inputs": {}}, "training_task_inputs"),
            ({"inputs": spec(colour="red")}, "training_task_inputs"),
            ({"model_id": "1churn"}, "model_id"),
            ({"model_id": "-churn"}, "model_id"),
            ({"model_id": "c" * 64}, "model_id"),
            ({"model_id": "Churn"}, "model_id"),
            ({"aliases": ("42",)}, "version_aliases[0]"),
            ({"aliases": ("Prod",)}, "version_aliases[0]"),
            ({"aliases": ("prod-",)}, "version_aliases[0]"),
            (
                {"definition": api_pipelines.TUNING_TASK, "inputs": tuning_inputs(trialJobSpec={})},
                "trialJobSpec.baseOutputDirectory",
            ),
            (
                {"parent_model": "projects/other/locations/us-central1/models/m"},
                "parent_model",
            ),
            ({"parent_model": "models/m"}, "parent_model"),
        ],
    )
    def test_a_broken_rule_is_invalid_argument_naming_the_field(
        self, fake: FakeVertex, pipelines: PipelineServiceClient, fields: Any, named: str
    ) -> None:
        """Each rule of training_pipeline.proto broken: INVALID_ARGUMENT naming the field."""
        with pytest.raises(exceptions.InvalidArgument) as excinfo:
            create(pipelines, **fields)
        assert named in invalid_fields(excinfo)
        assert fake.pipelines == {} and fake.jobs == {}

    def test_a_valid_model_id_of_63_characters_is_accepted(
        self, pipelines: PipelineServiceClient
    ) -> None:
        """63 characters of [a-z0-9_-], starting with a letter or _, is a model ID."""
        assert create(pipelines, model_id="_" + "a-9" * 20 + "zz").name

    def test_a_parent_model_that_does_not_exist_is_not_found(
        self, fake: FakeVertex, pipelines: PipelineServiceClient
    ) -> None:
        """parent_model must exist: NOT_FOUND, and no backing job is made."""
        with pytest.raises(exceptions.NotFound):
            create(pipelines, parent_model=f"{PARENT}/models/missing")
        assert fake.jobs == {}

    def test_an_existing_model_id_is_already_exists(
        self, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """A model_id that names an existing model is refused: it is the parent's job."""
        run(pipelines, clock, model_id="churn")
        with pytest.raises(exceptions.AlreadyExists):
            create(pipelines, model_id="churn")

    def test_an_invalid_backing_job_is_refused_and_nothing_made(
        self, fake: FakeVertex, pipelines: PipelineServiceClient
    ) -> None:
        """The task's CustomJobSpec is validated as a custom job is."""
        with pytest.raises(exceptions.InvalidArgument, match="worker_pool_specs"):
            create(pipelines, inputs=spec(workerPoolSpecs=[]))
        assert fake.pipelines == {}


class TestCancelTrainingPipeline:
    def test_a_running_pipeline_ends_cancelled_with_code_1(
        self,
        fake: FakeVertex,
        clock: ManualClock,
        pipelines: PipelineServiceClient,
        jobs: JobServiceClient,
    ) -> None:
        """Cancel: CANCELLING, then CANCELLED with Code.CANCELLED; its job cancelled too."""
        fake.script("train", run_s=math.inf)
        created = create(pipelines)
        clock.advance(QUEUED_S + PENDING_S)
        pipelines.cancel_training_pipeline(name=created.name)
        assert pipelines.get_training_pipeline(name=created.name).state.name.endswith("CANCELLING")
        clock.advance(CANCEL_S)
        ended = pipelines.get_training_pipeline(name=created.name)
        assert ended.state == PipelineState.PIPELINE_STATE_CANCELLED
        assert ended.error.code == code_pb2.CANCELLED
        backing = jobs.get_custom_job(name=metadata(ended)["backingCustomJob"])
        assert backing.state.name == "JOB_STATE_CANCELLED"
        assert fake.models == {}

    def test_a_finished_pipeline_refuses_with_failed_precondition(
        self, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """Cancelling a SUCCEEDED pipeline is FAILED_PRECONDITION."""
        ended = run(pipelines, clock)
        with pytest.raises(exceptions.FailedPrecondition):
            pipelines.cancel_training_pipeline(name=ended.name)


class TestDeleteTrainingPipeline:
    def test_deletes_the_pipeline_and_keeps_its_model(
        self,
        fake: FakeVertex,
        clock: ManualClock,
        pipelines: PipelineServiceClient,
        models: ModelServiceClient,
    ) -> None:
        """The delete operation removes the pipeline; its model stays."""
        ended = run(pipelines, clock, model_id="churn")
        operation = pipelines.delete_training_pipeline(name=ended.name)
        clock.advance(DELETE_S)
        operation.result(timeout=5)
        with pytest.raises(exceptions.NotFound):
            pipelines.get_training_pipeline(name=ended.name)
        assert models.get_model(name=ended.model_to_upload.name).version_id == "1"

    def test_a_running_pipeline_is_refused(self, pipelines: PipelineServiceClient) -> None:
        """A pipeline that has not ended cannot be deleted: FAILED_PRECONDITION."""
        created = create(pipelines)
        with pytest.raises(exceptions.FailedPrecondition, match="cancel it"):
            pipelines.delete_training_pipeline(name=created.name)


class TestListTrainingPipelines:
    def test_filters_on_labels_newest_first(self, pipelines: PipelineServiceClient) -> None:
        """labels.KEY=VALUE selects pipelines, newest first."""
        older = create(pipelines, labels={"team": "ml"})
        create(pipelines, labels={"team": "ops"})
        newer = create(pipelines, labels={"team": "ml"})
        found = pipelines.list_training_pipelines(
            request={"parent": PARENT, "filter": 'labels.team="ml"'}
        )
        assert [p.name for p in found] == [newer.name, older.name]

    def test_filters_on_pipeline_state(
        self, clock: ManualClock, pipelines: PipelineServiceClient
    ) -> None:
        """state=PIPELINE_STATE_SUCCEEDED selects the pipelines that succeeded."""
        ended = run(pipelines, clock)
        create(pipelines)
        found = pipelines.list_training_pipelines(
            request={"parent": PARENT, "filter": "state=PIPELINE_STATE_SUCCEEDED"}
        )
        assert [p.name for p in found] == [ended.name]

    def test_pages_through_every_pipeline(self, pipelines: PipelineServiceClient) -> None:
        """page_size 2 over 3 pipelines: the pager follows next_page_token to all 3."""
        made = [create(pipelines).name for _ in range(3)]
        pager = pipelines.list_training_pipelines(request={"parent": PARENT, "page_size": 2})
        assert [p.name for p in pager] == made[::-1]


class TestModelService:
    def test_list_models_filters_on_labels(
        self, clock: ManualClock, pipelines: PipelineServiceClient, models: ModelServiceClient
    ) -> None:
        """ListModels filters on the models' labels and on the model ID."""
        run(pipelines, clock, model_id="churn")
        found = models.list_models(request={"parent": PARENT, "filter": 'labels.owner="me"'})
        assert [m.name for m in found] == [f"{PARENT}/models/churn"]
        assert list(models.list_models(request={"parent": PARENT, "filter": "model=other"})) == []

    def test_get_model_by_alias_and_unknown_version(
        self, clock: ManualClock, pipelines: PipelineServiceClient, models: ModelServiceClient
    ) -> None:
        """models/M@default is version 1; models/M@9 is NOT_FOUND."""
        name = run(pipelines, clock, model_id="churn").model_to_upload.name
        assert models.get_model(name=f"{name}@default").version_id == "1"
        with pytest.raises(exceptions.NotFound):
            models.get_model(name=f"{name}@9")

    def test_delete_model_version_refuses_the_only_version(
        self, clock: ManualClock, pipelines: PipelineServiceClient, models: ModelServiceClient
    ) -> None:
        """The only version of a model cannot be deleted: FAILED_PRECONDITION."""
        name = run(pipelines, clock, model_id="churn").model_to_upload.name
        with pytest.raises(exceptions.FailedPrecondition, match="only version"):
            models.delete_model_version(name=f"{name}@1")

    def test_delete_model_version_refuses_the_default_and_deletes_another(
        self,
        fake: FakeVertex,
        clock: ManualClock,
        pipelines: PipelineServiceClient,
        models: ModelServiceClient,
    ) -> None:
        """The default version is refused; another version is deleted by its operation."""
        name = run(pipelines, clock, model_id="churn").model_to_upload.name
        run(pipelines, clock, parent_model=name)
        with pytest.raises(exceptions.FailedPrecondition, match="default"):
            models.delete_model_version(name=f"{name}@1")
        operation = models.delete_model_version(name=f"{name}@2")
        clock.advance(DELETE_S)
        operation.result(timeout=5)
        assert [v.version_id for v in fake.models[name]] == ["1"]

    def test_delete_model_removes_every_version(
        self, clock: ManualClock, pipelines: PipelineServiceClient, models: ModelServiceClient
    ) -> None:
        """DeleteModel's operation removes the model; GetModel is then NOT_FOUND."""
        name = run(pipelines, clock, model_id="churn").model_to_upload.name
        operation = models.delete_model(name=name)
        clock.advance(DELETE_S)
        operation.result(timeout=5)
        with pytest.raises(exceptions.NotFound):
            models.get_model(name=name)

    def test_upload_model_is_not_served(self, models: ModelServiceClient) -> None:
        """UploadModel answers UNIMPLEMENTED: models come from pipelines here."""
        with pytest.raises(exceptions.MethodNotImplemented):
            models.upload_model(
                parent=PARENT, model={"display_name": "m", "container_spec": {"image_uri": IMAGE}}
            )
