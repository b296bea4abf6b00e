"""VertexBackend's training pipelines and models against the fake Vertex AI service, over
loopback gRPC (``vertex_training.backends.vertex_pipelines``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from tests.test_vertex_backend import (
    FAST_PACING,
    FAST_POLLING,
    FAST_RETRY,
    PROJECT,
    REGION,
    wait_until,
)
from vertex_training.api import pipelines, states
from vertex_training.api.labels import IDENTITY_LABEL, PROJECT_LABEL, RESOURCE_LABEL, STACK_LABEL
from vertex_training.backends.base import JobStatus
from vertex_training.backends.vertex import VertexBackend
from vertex_training.errors import BackendError, PermanentError, UncertainError
from vertex_training.testing import FakeVertex

pytestmark = pytest.mark.timeout(60)

PARENT = f"projects/{PROJECT}/locations/{REGION}"
WAIT_S = 10.0
OUTPUT = "gs://bucket/run"
IMAGE = "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-6:latest"
OWNER = {PROJECT_LABEL: "p", STACK_LABEL: "s", RESOURCE_LABEL: "r"}


def job(display_name: str = "train", *, identity: str = "id-1") -> dict[str, Any]:
    """A CustomJob body in REST JSON form, labelled as the providers label it."""
    return {
        "displayName": display_name,
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": "1",
                    "containerSpec": {"imageUri": "gcr.io/p/trainer"},
                }
            ],
            "baseOutputDirectory": {"outputUriPrefix": OUTPUT},
        },
        "labels": {**OWNER, IDENTITY_LABEL: identity},
    }


def tuning_job(display_name: str = "tune") -> dict[str, Any]:
    """A HyperparameterTuningJob body: 3 trials of one integer parameter."""
    return {
        "displayName": display_name,
        "studySpec": {
            "metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
            "parameters": [
                {"parameterId": "epochs", "integerValueSpec": {"minValue": "1", "maxValue": "9"}}
            ],
        },
        "maxTrialCount": 3,
        "parallelTrialCount": 3,
        "trialJobSpec": job()["jobSpec"],
        "labels": {**OWNER, IDENTITY_LABEL: "id-tune"},
    }


def model(**fields: Any) -> dict[str, Any]:
    """A job's ``model`` input (ModelUpload.request_body's form)."""
    upload = {
        "displayName": "churn",
        "containerSpec": {"imageUri": IMAGE},
        "versionAliases": [pipelines.DEFAULT_ALIAS],
    }
    return {"modelToUpload": upload, **fields}


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(
        queued_s=0.02, pending_s=0.02, run_s=0.1, trial_s=0.05, cancel_s=0.02, delete_s=0.02
    ) as fake:
        yield fake


@pytest.fixture
def backend(fake: FakeVertex) -> VertexBackend:
    return VertexBackend(
        PROJECT,
        REGION,
        api_endpoint=fake.address,
        retry=FAST_RETRY,
        polling=FAST_POLLING,
        pacing=FAST_PACING,
    )


def ended(backend: VertexBackend, name: str) -> JobStatus:
    return wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)


def trained(backend: VertexBackend, body: dict[str, Any]) -> JobStatus:
    """Submit a pipeline body and wait for it to end."""
    return ended(backend, backend.submit(body).name)


class TestSubmit:
    def test_a_pipeline_body_creates_a_training_pipeline(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A pipeline body is CreateTrainingPipeline's: the status has the job states."""
        status = backend.submit(pipelines.pipeline_body(job(), model(modelId="churn")))
        assert status.name.startswith(f"{PARENT}/trainingPipelines/")
        assert status.state == states.QUEUED
        assert status.labels[IDENTITY_LABEL] == "id-1"
        assert [c.method for c in fake.calls] == ["CreateTrainingPipeline"]

    def test_the_model_is_sent_with_its_aliases_as_given(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """The sent model names the aliases of the body (default first, as a job's has it)."""
        upload = model()
        upload["modelToUpload"]["versionAliases"] = [pipelines.DEFAULT_ALIAS, "prod"]
        backend.submit(pipelines.pipeline_body(job(), upload))
        (call,) = [c for c in fake.calls if c.method == "CreateTrainingPipeline"]
        assert list(call.request.training_pipeline.model_to_upload.version_aliases) == [
            pipelines.DEFAULT_ALIAS,
            "prod",
        ]

    def test_an_invalid_pipeline_is_permanent_with_the_api_message(
        self, backend: VertexBackend
    ) -> None:
        """INVALID_ARGUMENT from the service: PermanentError naming the field."""
        with pytest.raises(PermanentError, match="model_id"):
            backend.submit(pipelines.pipeline_body(job(), model(modelId="9lives")))

    def test_an_ambiguous_create_failure_is_uncertain(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """DEADLINE_EXCEEDED after the pipeline was made: UncertainError, no second call."""
        fake.fail_next(
            "CreateTrainingPipeline", grpc.StatusCode.DEADLINE_EXCEEDED, take_effect=True
        )
        with pytest.raises(UncertainError):
            backend.submit(pipelines.pipeline_body(job(), model()))
        assert sum(c.method == "CreateTrainingPipeline" for c in fake.calls) == 1
        assert len(fake.pipelines) == 1


class TestGet:
    def test_a_succeeded_pipeline_reports_its_backing_job_and_model(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """SUCCEEDED: backing job, model version 1 with default, artifacts, pools."""
        status = trained(backend, pipelines.pipeline_body(job(), model(modelId="churn")))
        assert status.state == states.SUCCEEDED
        assert status.backing_job in fake.jobs
        assert status.model is not None
        assert (status.model.name, status.model.version_id) == (f"{PARENT}/models/churn", "1")
        assert status.model.aliases == (pipelines.DEFAULT_ALIAS,)
        assert status.model.artifact_uri == f"{OUTPUT}/model"
        assert status.model.image_uri == IMAGE
        assert [(p.machine_type, p.replica_count) for p in status.pools] == [("n1-standard-4", 1)]

    def test_a_running_pipeline_has_no_model_yet(self, backend: VertexBackend) -> None:
        """Before it succeeds a pipeline's model is None."""
        status = backend.submit(pipelines.pipeline_body(job(), model()))
        assert status.model is None

    def test_a_failed_backing_job_fails_the_pipeline_with_its_error(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """The backing job's error is the pipeline's; no model."""
        fake.script("broken", outcome=states.FAILED, error_message="exit 7")
        status = trained(backend, pipelines.pipeline_body(job("broken"), model()))
        assert (status.state, status.error, status.model) == (states.FAILED, "exit 7", None)

    def test_a_failed_upload_fails_the_pipeline(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """An upload that fails: FAILED with its reason, nothing registered."""
        fake.fail_upload_next("bad serving image")
        status = trained(backend, pipelines.pipeline_body(job(), model(modelId="churn")))
        assert status.state == states.FAILED
        assert "bad serving image" in status.error
        assert backend.find_model("churn", {}) is None

    def test_a_tuning_pipeline_reports_trials_and_the_best_trials_model(
        self, backend: VertexBackend
    ) -> None:
        """A tuning task: its trials, metric and goal, and the best trial's model."""
        status = trained(backend, pipelines.pipeline_body(tuning_job(), model()))
        assert status.state == states.SUCCEEDED
        assert (status.metric_id, status.goal, status.max_trials) == ("loss", "MINIMIZE", 3)
        assert len(status.trials) == 3
        best = status.best_trial
        assert best is not None and status.model is not None
        assert status.model.artifact_uri == f"{OUTPUT}/{best.id}/model"

    def test_an_unknown_pipeline_is_none(self, backend: VertexBackend) -> None:
        """A pipeline that does not exist is None."""
        assert backend.get(f"{PARENT}/trainingPipelines/404") is None


class TestFindByLabel:
    def test_finds_pipelines_beside_jobs_without_their_backing_jobs(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """The lookup lists the pipeline and a plain job, never the pipeline's own job."""
        plain = backend.submit(job("plain", identity="same"))
        pipeline = backend.submit(pipelines.pipeline_body(job(identity="same"), model()))
        found = backend.find_by_label(IDENTITY_LABEL, "same")
        assert [s.name for s in found] == [pipeline.name, plain.name]
        assert len(fake.jobs) == 2  # the pipeline's backing job carries the label too


class TestCancel:
    def test_a_running_pipeline_ends_cancelled(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """cancel: the pipeline and its backing job end CANCELLED."""
        fake.script("train", run_s=float("inf"))
        status = backend.submit(pipelines.pipeline_body(job(), model()))
        wait_until(backend, status.name, lambda s: s.state == states.RUNNING)
        backend.cancel(status.name)
        cancelled = ended(backend, status.name)
        assert (cancelled.state, cancelled.error_code) == (states.CANCELLED, 1)
        assert fake.jobs[cancelled.backing_job].state.name == "JOB_STATE_CANCELLED"

    def test_an_ended_or_unknown_pipeline_is_fine(self, backend: VertexBackend) -> None:
        """cancel of a finished pipeline, or of none, is not an error."""
        status = trained(backend, pipelines.pipeline_body(job(), model()))
        backend.cancel(status.name)
        backend.cancel(f"{PARENT}/trainingPipelines/404")


class TestDelete:
    def test_deletes_the_pipeline_and_its_backing_job_never_the_model(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """delete: pipeline and backing job gone; the model and its version stay."""
        status = trained(backend, pipelines.pipeline_body(job(), model(modelId="churn")))
        backend.delete(status.name)
        assert backend.get(status.name) is None
        assert status.backing_job not in fake.jobs
        assert [v.version_id for v in backend.model_versions(f"{PARENT}/models/churn")] == ["1"]

    def test_a_running_pipeline_is_refused(self, backend: VertexBackend) -> None:
        """A pipeline that has not ended cannot be deleted: PermanentError."""
        status = backend.submit(pipelines.pipeline_body(job(), model()))
        with pytest.raises(PermanentError, match="cancel it"):
            backend.delete(status.name)

    def test_an_unknown_pipeline_is_done(self, backend: VertexBackend) -> None:
        """Deleting a pipeline that does not exist is done."""
        backend.delete(f"{PARENT}/trainingPipelines/404")


class TestModels:
    def test_find_model_by_id_and_by_owner_labels(self, backend: VertexBackend) -> None:
        """find_model: the model of an ID, else the one carrying the owner labels."""
        status = trained(backend, pipelines.pipeline_body(job(), model()))
        assert status.model is not None
        assert backend.find_model("", OWNER) == status.model.name
        assert backend.find_model(status.model.model_id, {}) == status.model.name
        assert backend.find_model("missing", OWNER) is None
        assert backend.find_model("", {**OWNER, RESOURCE_LABEL: "other"}) is None

    def test_a_retrain_registers_version_2_which_takes_default(
        self, backend: VertexBackend
    ) -> None:
        """with_parent of the found model: version 2, default moved to it, oldest first."""
        body = pipelines.pipeline_body(job(), model(modelId="churn"))
        trained(backend, body)
        parent = backend.find_model("churn", pipelines.model_owner_labels(body))
        retrain = trained(backend, pipelines.with_parent(body, parent))
        assert retrain.model is not None
        assert (retrain.model.version_id, retrain.model.aliases) == ("2", ("default",))
        versions = backend.model_versions(f"{PARENT}/models/churn")
        assert [(v.version_id, v.aliases) for v in versions] == [("1", ()), ("2", ("default",))]

    def test_versions_of_an_unknown_model_are_empty(self, backend: VertexBackend) -> None:
        """model_versions of a model that does not exist is []."""
        assert backend.model_versions(f"{PARENT}/models/missing") == []


class TestPipelineUrls:
    def test_output_directory_is_the_tasks_base_output_directory(
        self, backend: VertexBackend
    ) -> None:
        """A pipeline's output directory is its task's baseOutputDirectory."""
        status = backend.submit(pipelines.pipeline_body(job(), model()))
        assert backend.output_directory(status.name) == OUTPUT

    def test_logs_are_the_backing_jobs(self, backend: VertexBackend) -> None:
        """logs_url filters on the backing custom job's ID; console_url names the pipeline."""
        status = backend.submit(pipelines.pipeline_body(job(), model()))
        backing_id = status.backing_job.rsplit("/", 1)[-1]
        assert backing_id in backend.logs_url(status.name)
        assert status.job_id in backend.console_url(status.name)


class TestImport:
    def test_a_pipeline_imports_as_its_job_with_its_model(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """`pulumi import` of a pipeline: its task's keys and the model it registered, with
        the model's ID so that the next run registers the model's next version."""
        from vertex_training.plugin import schema
        from vertex_training.plugin.importing import imported_inputs
        from vertex_training.resources.state import ProviderSettings

        upload = model(modelId="churn")
        upload["modelToUpload"]["versionAliases"] = [pipelines.DEFAULT_ALIAS, "prod"]
        done = trained(backend, pipelines.pipeline_body(job(), upload))
        settings = ProviderSettings(api_endpoint=fake.address)
        inputs = imported_inputs(schema.TRAINING_JOB, "train", done.name, settings)
        assert inputs["job"]["model"] == {
            "displayName": "churn",
            "id": "churn",
            "aliases": ["prod"],
            "serving": {"image": IMAGE},
        }
        assert inputs["job"]["baseOutputDirectory"] == OUTPUT
        with pytest.raises(BackendError, match="runs a custom job: import it as"):
            imported_inputs(schema.TUNING_JOB, "train", done.name, settings)


class TestDatasets:
    def test_a_pipeline_reads_a_dataset_of_its_location(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """The dataset reaches the service; a dataset that does not exist is refused."""
        data = {
            "inputDataConfig": {"datasetId": "7", "gcsDestination": {"outputUriPrefix": OUTPUT}}
        }
        with pytest.raises(PermanentError, match="datasets/7 is not found"):
            backend.submit(pipelines.pipeline_body(job(), model(), data))
        fake.add_dataset(f"{PARENT}/datasets/7")
        done = trained(backend, pipelines.pipeline_body(job(), model(), data))
        assert done.state == states.SUCCEEDED
        (sent,) = fake.pipelines.values()
        assert sent.input_data_config.dataset_id == "7"
