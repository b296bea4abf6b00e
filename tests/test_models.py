"""A job that registers its model: the ``model:`` keys, the training pipeline body they
make, and the local backend's registry (real processes, real files)."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.packages import write_package
from vertex_training import models, stackconfig
from vertex_training.api import states
from vertex_training.api.failures import classify
from vertex_training.api.pipelines import (
    CUSTOM_TASK,
    TUNING_TASK,
    is_tuning_definition,
    pipeline_body,
    task_body,
    with_parent,
)
from vertex_training.backends.base import JobStatus
from vertex_training.backends.local import LocalBackend
from vertex_training.backends.local._registry import LocalRegistry
from vertex_training.errors import SpecError
from vertex_training.preview.review import waited_models
from vertex_training.resources.submission import next_version
from vertex_training.review.plan import registers_text

#: The day the prediction images' dates are judged on (the table's reading day).
TODAY = datetime.date(2026, 11, 29)
VERTEX = stackconfig.StackSettings(
    stack="dev", backend="vertex", project="acme", region="us-central1", output_root="gs://b"
)
LOCAL = stackconfig.StackSettings(stack="local", backend="local", region="us-central1")
IMAGE = "us-docker.pkg.dev/acme/serve/server:1"
JOB_END_S = 45.0


def parse(model: dict[str, Any], stack: stackconfig.StackSettings = VERTEX) -> Any:
    """The job ``train`` with ``model``, parsed."""
    job = {"image": "us-docker.pkg.dev/acme/train/trainer:1", "model": model}
    return stackconfig.parse_job("train", job, stack, today=TODAY)


def refusals(model: dict[str, Any], stack: stackconfig.StackSettings = VERTEX) -> list[str]:
    """The keys of the issues ``model`` is refused with."""
    with pytest.raises(SpecError) as refused:
        parse(model, stack)
    return [issue.key for issue in refused.value.issues]


class TestModelKeys:
    """``model:`` resolved into the pipeline's ``modelToUpload`` and its model."""

    def test_a_new_model_takes_its_id_and_the_jobs_display_name(self) -> None:
        """With ``id``, the pipeline names the new model; its display name is the job's."""
        spec = parse({"id": "churn", "aliases": ["prod"], "serving": {"image": IMAGE}})
        assert spec.run_inputs()["model"] == {
            "modelToUpload": {
                "displayName": "train",
                "containerSpec": {"imageUri": IMAGE},
                "versionAliases": ["default", "prod"],
            },
            "modelId": "churn",
        }

    def test_a_parent_by_id_is_named_in_the_jobs_project_and_region(self) -> None:
        """A parent written as an ID is that model of the job's own location."""
        spec = parse({"parent": "churn", "serving": {"image": IMAGE}})
        assert spec.run_inputs()["model"]["parentModel"] == (
            "projects/acme/locations/us-central1/models/churn"
        )

    def test_a_framework_names_googles_prediction_image_of_the_region(self) -> None:
        """``serving.framework`` is the prebuilt prediction image, from the region's host."""
        spec = parse({"serving": {"framework": {"name": "sklearn", "version": "1.6"}}})
        image = spec.run_inputs()["model"]["modelToUpload"]["containerSpec"]["imageUri"]
        assert image == "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-6:latest"

    def test_a_job_without_model_has_no_model_input(self) -> None:
        """A job that registers nothing keeps the inputs it had before models were."""
        job = {"image": "us-docker.pkg.dev/acme/train/trainer:1"}
        spec = stackconfig.parse_job("train", job, VERTEX)
        assert set(spec.run_inputs()) == {"request", "location"}

    @pytest.mark.parametrize(
        ("model", "key"),
        [
            ({"id": "9churn", "serving": {"image": IMAGE}}, "model.id"),
            ({"id": "Churn", "serving": {"image": IMAGE}}, "model.id"),
            ({"aliases": ["1"], "serving": {"image": IMAGE}}, "model.aliases[0]"),
            ({"aliases": ["Prod"], "serving": {"image": IMAGE}}, "model.aliases[0]"),
            ({"serving": {}}, "model.serving"),
            ({"serving": {"image": IMAGE, "framework": {"name": "x", "version": "1"}}}, None),
            ({"id": "a", "parent": "b", "serving": {"image": IMAGE}}, "model.id"),
            (
                {"parent": "projects/other/locations/us-central1/models/m", "serving": {}},
                "model.serving",
            ),
            (
                {
                    "parent": "projects/acme/locations/europe-west4/models/m",
                    "serving": {"image": IMAGE},
                },
                "model.parent",
            ),
            (
                {"serving": {"framework": {"name": "pytorch", "version": "1.9"}}},
                "model.serving.framework.version",
            ),
            (
                {"serving": {"framework": {"name": "sklearn", "version": "1.6", "gpu": True}}},
                "model.serving.framework.gpu",
            ),
            ({"serving": {"image": IMAGE}, "colour": "red"}, "model.colour"),
            ({"serving": {"image": "https://us-docker.pkg.dev/a/b/c:1"}}, "model.serving.image"),
        ],
    )
    def test_each_mistake_is_refused_naming_its_key(
        self, model: dict[str, Any], key: str | None
    ) -> None:
        """A bad model key is refused at preview, naming the key under the job."""
        keys = refusals(model)
        expected = f"vertex-training:jobs.train.{key or 'model.serving'}"
        assert expected in keys

    def test_a_parent_in_another_region_says_where_it_must_be(self) -> None:
        """The refusal of a parent elsewhere names the job's project and region."""
        with pytest.raises(SpecError) as refused:
            parse(
                {
                    "parent": "projects/acme/locations/europe-west4/models/m",
                    "serving": {"image": IMAGE},
                }
            )
        assert "registers in its own project and region (acme, us-central1)" in str(refused.value)

    def test_a_vertex_job_without_an_output_directory_is_refused(self) -> None:
        """The pipeline uploads from the output directory: a job with none is refused."""
        stack = stackconfig.StackSettings(
            stack="dev", backend="vertex", project="acme", region="us-central1"
        )
        assert refusals({"serving": {"image": IMAGE}}, stack) == [
            "vertex-training:jobs.train.model"
        ]

    def test_a_local_parent_is_a_model_id(self) -> None:
        """On the local backend a parent is a local model's ID; a resource name is refused."""
        spec = parse({"parent": "churn", "serving": {"image": IMAGE}}, LOCAL)
        assert spec.run_inputs()["model"]["parentModel"] == "local/models/churn"
        keys = refusals(
            {"parent": "projects/acme/locations/us-central1/models/m", "serving": {"image": IMAGE}},
            LOCAL,
        )
        assert keys == ["vertex-training:jobs.train.model.parent"]

    def test_a_model_change_replaces_the_job(self) -> None:
        """Changing what the job registers is a change of what runs."""
        from vertex_training.api.bodies import runs_differently

        one = parse({"aliases": ["a1"], "serving": {"image": IMAGE}}).run_inputs()
        two = parse({"aliases": ["a2"], "serving": {"image": IMAGE}}).run_inputs()
        assert runs_differently(one, two)
        assert not runs_differently(one, dict(one))


CUSTOM_JOB = {
    "displayName": "train",
    "jobSpec": {"workerPoolSpecs": [{"replicaCount": "1"}]},
    "labels": {"pulumi_stack": "dev", "pulumi_resource": "train", "team": "ml"},
}
UPLOAD = {"modelToUpload": {"displayName": "m", "containerSpec": {"imageUri": IMAGE}}}


class TestPipelineBody:
    """A job's body wrapped in a TrainingPipeline, and back."""

    def test_a_custom_job_runs_as_the_custom_task(self) -> None:
        """The task inputs are the job's CustomJobSpec; the labels stay the pipeline's."""
        body = pipeline_body(CUSTOM_JOB, {**UPLOAD, "modelId": "churn"})
        assert body["trainingTaskDefinition"] == CUSTOM_TASK
        assert body["trainingTaskInputs"] == CUSTOM_JOB["jobSpec"]
        assert body["labels"] == CUSTOM_JOB["labels"]
        assert body["modelId"] == "churn"
        assert task_body(body) == CUSTOM_JOB

    def test_the_model_carries_the_jobs_owner_labels_only(self) -> None:
        """A retrain finds its model by the job's owner labels, not by the user's."""
        body = pipeline_body(CUSTOM_JOB, UPLOAD)
        assert body["modelToUpload"]["labels"] == {
            "pulumi_stack": "dev",
            "pulumi_resource": "train",
        }

    def test_a_tuning_job_runs_as_the_tuning_task(self) -> None:
        """A tuning job's study, counts and trial spec are the tuning task's inputs."""
        tuning = {
            "displayName": "sweep",
            "studySpec": {"metrics": [{"metricId": "a", "goal": "MAXIMIZE"}]},
            "maxTrialCount": 4,
            "parallelTrialCount": 2,
            "trialJobSpec": {"workerPoolSpecs": []},
        }
        body = pipeline_body(tuning, UPLOAD)
        assert body["trainingTaskDefinition"] == TUNING_TASK
        assert set(body["trainingTaskInputs"]) == {
            "studySpec",
            "maxTrialCount",
            "parallelTrialCount",
            "trialJobSpec",
        }
        assert task_body(body) == tuning

    def test_an_echoed_definition_still_reads(self) -> None:
        """The service's echo of a definition, in another form, names the same task."""
        echoed = "https://storage.googleapis.com/google-cloud-aiplatform/schema/trainingjob/definition/hyperparameter_tuning_task_1.0.0.yaml"
        assert is_tuning_definition(echoed)
        assert not is_tuning_definition(CUSTOM_TASK)
        with pytest.raises(ValueError, match="neither"):
            is_tuning_definition("gs://x/automl_tables_1.0.0.yaml")

    def test_a_parent_replaces_the_new_models_id(self) -> None:
        """Once the model exists, the pipeline registers its next version."""
        body = with_parent(pipeline_body(CUSTOM_JOB, {**UPLOAD, "modelId": "churn"}), "m/x")
        assert "modelId" not in body
        assert body["parentModel"] == "m/x"


TRAINER = {
    "train": """
        import os, sys
        from pathlib import Path
        model = Path(os.environ["AIP_MODEL_DIR"])
        model.mkdir(parents=True, exist_ok=True)
        (model / "weights.txt").write_text(" ".join(sys.argv[1:]))
    """,
    "no_model": "print('trained, saved nothing')\n",
}


@pytest.fixture(scope="module")
def trainer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_package(tmp_path_factory.mktemp("trainer"), "probe", TRAINER)


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[LocalBackend]:
    yield LocalBackend(tmp_path / "jobs")


def job(trainer: Path, module: str, args: list[str]) -> dict[str, Any]:
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "pythonPackageSpec": {
            "packageUris": [str(trainer)],
            "pythonModule": f"probe.{module}",
            "args": args,
        },
    }
    return {
        "displayName": module,
        "jobSpec": {"workerPoolSpecs": [pool]},
        "labels": {"pulumi_stack": "local", "pulumi_resource": "train"},
    }


def run(backend: LocalBackend, body: dict[str, Any]) -> JobStatus:
    """Submit ``body`` as a retrain would (``next_version``) and wait for its end."""
    status = backend.submit(dict(next_version(backend, body)))
    deadline = time.monotonic() + JOB_END_S
    while True:
        found = backend.get(status.name)
        assert found is not None
        if found.state in states.TERMINAL_STATES:
            return found
        assert time.monotonic() < deadline, f"{status.name} still {found.state}"
        time.sleep(0.1)


class TestLocalRegistry:
    """The local backend's pipelines register versions of one model."""

    def test_a_retrain_is_the_next_version_with_the_aliases_moved(
        self, backend: LocalBackend, trainer: Path
    ) -> None:
        """Version 1, then version 2 of the same model, which takes default and prod."""
        upload = {
            **UPLOAD,
            "modelToUpload": {**UPLOAD["modelToUpload"], "versionAliases": ["prod"]},
        }
        first = run(backend, pipeline_body(job(trainer, "train", ["--epochs", "1"]), upload))
        second = run(backend, pipeline_body(job(trainer, "train", ["--epochs", "2"]), upload))
        assert first.name.startswith("local/trainingPipelines/")
        assert (first.state, second.state) == (states.SUCCEEDED, states.SUCCEEDED)
        assert first.model is not None and second.model is not None
        assert second.model.name == first.model.name
        assert (first.model.version_id, second.model.version_id) == ("1", "2")
        versions = backend.model_versions(first.model.name)
        assert [v.aliases for v in versions] == [(), ("default", "prod")]
        weights = Path(versions[1].artifact_uri) / "weights.txt"
        assert weights.read_text() == "--epochs 2"

    def test_deleting_a_pipeline_keeps_its_model(
        self, backend: LocalBackend, trainer: Path
    ) -> None:
        """A replaced or destroyed pipeline's record goes; the version it registered stays."""
        done = run(backend, pipeline_body(job(trainer, "train", []), {**UPLOAD, "modelId": "kept"}))
        backend.delete(done.name)
        assert backend.get(done.name) is None
        assert [v.version_name for v in backend.model_versions("local/models/kept")] == [
            "local/models/kept@1"
        ]

    def test_a_trainer_that_saves_no_model_fails_the_pipeline(
        self, backend: LocalBackend, trainer: Path
    ) -> None:
        """Nothing in AIP_MODEL_DIR: the pipeline FAILED, saying where to save the model."""
        failed = run(backend, pipeline_body(job(trainer, "no_model", []), UPLOAD))
        assert failed.state == states.FAILED
        assert "the trainer wrote no model to AIP_MODEL_DIR" in failed.error
        assert failed.model is None

    def test_another_resource_registers_a_model_of_its_own(
        self, backend: LocalBackend, trainer: Path
    ) -> None:
        """Models are found by their owner labels: another resource's job makes its own."""
        mine = run(backend, pipeline_body(job(trainer, "train", []), UPLOAD))
        other = job(trainer, "train", [])
        other["labels"] = {**other["labels"], "pulumi_resource": "other"}
        theirs = run(backend, pipeline_body(other, UPLOAD))
        assert mine.model is not None and theirs.model is not None
        assert mine.model.name != theirs.model.name
        assert (
            LocalRegistry(backend.root).find("", {"pulumi_resource": "other"}) == theirs.model.name
        )


class TestStackModels:
    """``vertex-training models``: a stack's models from its state, with their versions."""

    def test_a_jobs_model_output_and_a_waiters_are_read(self) -> None:
        """A job's own ``model`` output wins over the waiter's; either names the model."""
        deployment = {
            "resources": [
                {
                    "urn": "urn:pulumi:dev::p::vertex-training:index:TrainingJob::train",
                    "outputs": {"model": {"resourceName": "local/models/a", "versionId": "2"}},
                },
                {
                    "urn": "urn:pulumi:dev::p::pulumi-python:dynamic/vertex:JobWaiter::wait",
                    "outputs": {
                        "models": {
                            "train": {"resource_name": "local/models/a", "version_id": "1"},
                            "other": {"resource_name": "local/models/b", "version_id": "4"},
                        }
                    },
                },
            ]
        }
        assert models.stack_models(deployment) == [
            models.StackModel("other", "local/models/b", "4"),
            models.StackModel("train", "local/models/a", "2"),
        ]

    def test_the_listing_marks_the_version_each_job_tracks(
        self, backend: LocalBackend, trainer: Path
    ) -> None:
        """Every version is listed, the one the job tracks marked with the job's name."""
        upload = {**UPLOAD, "modelId": "listed"}
        run(backend, pipeline_body(job(trainer, "train", []), upload))
        second = run(backend, pipeline_body(job(trainer, "train", ["x"]), upload))
        assert second.model is not None
        tracked = [models.StackModel("train", second.model.name, second.model.version_id)]
        listed = list(models.versions_of(tracked, lambda _place: backend))
        text = models.to_text(listed)
        assert "local/models/listed (registered by train)" in text
        assert "  version 1: " in text
        assert text.rstrip().endswith("<- train")
        assert models.to_json(listed)[0]["jobs"] == {"train": "2"}


class TestReviewWords:
    """What a review says a job registers."""

    def test_a_retrain_names_the_next_version_of_the_jobs_model(self) -> None:
        """With the job's last version known, the review names the version to come."""
        spec = parse({"id": "churn", "aliases": ["prod"], "serving": {"image": IMAGE}})
        last = {
            "resourceName": "projects/acme/locations/us-central1/models/churn",
            "versionId": "2",
        }
        text = registers_text(spec.model, last)
        assert text == (
            "registers `train`: version 3 of `projects/acme/locations/us-central1/models/churn` "
            "(the job's last is version 2); moves `default`, `prod` to it; serves from "
            f"`{IMAGE}`"
        )

    def test_without_a_state_the_review_says_what_it_cannot_know(self) -> None:
        """A stack file's review knows no version: a new model, or its next version."""
        spec = parse({"id": "churn", "serving": {"image": IMAGE}})
        assert "version 1 of a new model `churn`, or its next version if it exists" in (
            registers_text(spec.model, {})
        )

    def test_a_waiters_models_in_the_old_state_are_read(self) -> None:
        """A dynamic job's model is in its waiter's outputs: the review reads them."""
        steps = [
            {"op": "same", "oldState": {"outputs": {"models": {"train": {"version_id": "1"}}}}},
            {"op": "update", "oldState": {"outputs": {"state": "SUCCEEDED"}}},
            {"op": "create"},
        ]
        assert waited_models(steps) == {"train": {"version_id": "1"}}


class TestFailedUpload:
    """A pipeline whose upload failed reads as such, with the trainer's log."""

    def test_the_local_backends_words_are_a_model_upload_failure(self) -> None:
        """Nothing in AIP_MODEL_DIR: class model_upload, its fix, the primary's log."""
        failure = classify(
            0, "the model upload failed: the trainer wrote no model to AIP_MODEL_DIR (/x/model)"
        )
        assert (failure.kind, failure.replica) == ("model_upload", "workerpool0-0")
        assert "save the trained model under the directory AIP_MODEL_DIR names" in failure.fix

    def test_a_replicas_exit_stays_user_code(self) -> None:
        """A trainer that crashed is its own failure, whatever its log says of models."""
        failure = classify(
            3, "The replica workerpool0-0 exited with a non-zero status of 1.\nAIP_MODEL_DIR"
        )
        assert failure.kind == "user_code"


DATASET = {"id": "123", "destination": "gs://b/exports"}


class TestDatasetKeys:
    """``dataset:`` resolved into the pipeline's ``inputDataConfig``."""

    def test_a_dataset_with_fractions_is_the_pipelines_input_data(self) -> None:
        """The ID, the fraction split and the Cloud Storage destination, in REST form."""
        split = {"fractions": {"training": 0.8, "validation": 0.1, "test": 0.1}}
        spec = stackconfig.parse_job(
            "train", {"image": IMAGE, "dataset": {**DATASET, "split": split}}, VERTEX
        )
        assert spec.run_inputs()["dataset"] == {
            "inputDataConfig": {
                "datasetId": "123",
                "fractionSplit": {
                    "trainingFraction": 0.8,
                    "validationFraction": 0.1,
                    "testFraction": 0.1,
                },
                "gcsDestination": {"outputUriPrefix": "gs://b/exports"},
            }
        }

    def test_a_resource_name_and_a_bigquery_destination_read_as_such(self) -> None:
        """A dataset named by resource name in the job's location; a bq:// destination."""
        dataset = {
            "id": "projects/acme/locations/us-central1/datasets/7",
            "destination": "bq://acme.exports",
            "split": {"stratified": {"key": "label", "training": 0.7}},
        }
        spec = stackconfig.parse_job("train", {"image": IMAGE, "dataset": dataset}, VERTEX)
        data = spec.run_inputs()["dataset"]["inputDataConfig"]
        assert data["datasetId"] == "7"
        assert data["bigqueryDestination"] == {"outputUri": "bq://acme.exports"}
        assert data["stratifiedSplit"] == {"trainingFraction": 0.7, "key": "label"}

    @pytest.mark.parametrize(
        ("dataset", "key"),
        [
            ({**DATASET, "id": "churn"}, "dataset.id"),
            ({**DATASET, "id": "projects/acme/locations/europe-west4/datasets/1"}, "dataset.id"),
            ({**DATASET, "destination": "s3://b"}, "dataset.destination"),
            (
                {**DATASET, "split": {"fractions": {"training": 0.9, "test": 0.2}}},
                "dataset.split.fractions",
            ),
            ({**DATASET, "split": {"predefined": "a", "timestamp": {"key": "t"}}}, "dataset.split"),
            (
                {**DATASET, "split": {"filter": {"training": "a"}}},
                "dataset.split.filter.validation",
            ),
            ({"id": "1"}, "dataset.destination"),
        ],
    )
    def test_each_mistake_is_refused_naming_its_key(
        self, dataset: dict[str, Any], key: str
    ) -> None:
        """A bad dataset key is refused at preview, naming the key under the job."""
        with pytest.raises(SpecError) as refused:
            stackconfig.parse_job("train", {"image": IMAGE, "dataset": dataset}, VERTEX)
        assert f"vertex-training:jobs.train.{key}" in [i.key for i in refused.value.issues]

    def test_the_local_backend_refuses_a_dataset_saying_what_to_write(self) -> None:
        """No managed datasets here: the refusal says to name the files in args instead."""
        with pytest.raises(SpecError) as refused:
            stackconfig.parse_job("train", {"image": IMAGE, "dataset": DATASET}, LOCAL)
        [issue] = refused.value.issues
        assert issue.key == "vertex-training:jobs.train.dataset"
        assert "name the data's files in the job's args" in issue.message

    def test_a_dataset_alone_runs_as_a_pipeline_that_registers_nothing(self) -> None:
        """A pipeline body with the dataset and no model to upload."""
        body = pipeline_body(CUSTOM_JOB, None, {"inputDataConfig": {"datasetId": "1"}})
        assert body["inputDataConfig"] == {"datasetId": "1"}
        assert "modelToUpload" not in body

    def test_the_review_names_the_dataset_a_job_reads(self) -> None:
        """A submitted job's details name its dataset and where it is exported."""
        from vertex_training.review.plan import SUBMIT, JobPlan, _details

        spec = stackconfig.parse_job("train", {"image": IMAGE, "dataset": DATASET}, VERTEX)
        lines = _details(JobPlan("train", SUBMIT, job=spec))
        assert "- `train` reads the managed dataset `123`, exported to `gs://b/exports`" in lines
