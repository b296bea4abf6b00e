"""Jobs that register their models, on the real engine: a stack file's job on this machine
and on Vertex AI (the fakes), and a TypeScript program on the plugin's SDK against the
fakes. Each registers version 1, then version 2 of the same model after its args change
(the aliases moved to it), and destroy keeps both versions and says so. A killed engine
leaves one pipeline; a tuning job registers its best trial's model; a failed upload
reads in the project's words.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.engine import Project, local_stack, tools_missing, vertex_stack
from tests.test_engine_sdks import missing as sdk_missing
from tests.test_engine_sdks import typescript_program
from vertex_training.backends.vertex import VertexBackend
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
SERVING = "us-docker.pkg.dev/test-project/repo/server:1"
OUTPUT = "gs://test-bucket/train"
PARENT = "projects/test-project/locations/us-central1"
MODEL = {"id": "churn", "aliases": ["prod"], "serving": {"image": SERVING}}
TRAINER_JOB = {
    "python_package": {"package_uris": ["trainer"], "module": "trainer.task"},
    "args": ["--epochs", "2"],
    "wait": "succeeded",
    "model": MODEL,
}


def vertex_job(epochs: str = "2", **keys: Any) -> dict[str, Any]:
    return {
        "display_name": "train",
        "image": IMAGE,
        "args": ["--epochs", epochs],
        "base_output_directory": OUTPUT,
        "wait": "succeeded",
        "model": MODEL,
        **keys,
    }


def versions(fake: FakeVertex, model_id: str = "churn") -> list[tuple[str, tuple[str, ...]]]:
    """Each version of the fake's model ``model_id``: its ID and aliases, oldest first."""
    held = fake.models.get(f"{PARENT}/models/{model_id}", [])
    return [(m.version_id, tuple(sorted(m.version_aliases))) for m in held]


def review_of(project: Project) -> str:
    """`vertex-training review` of the project's `pulumi preview --json` now."""
    preview = project.run("preview", "--json").check()
    path = project.root / "preview.json"
    path.write_text(preview.stdout)
    done = subprocess.run(
        [sys.executable, "-m", "vertex_training", "review", str(path)],
        cwd=project.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


class TestLocalStack:
    """A stack file's job on this machine registers in the local registry."""

    def test_a_retrain_is_version_2_and_destroy_keeps_both(self, project: Project) -> None:
        """Version 1, then 2 after an args change with the aliases moved; destroy keeps both."""
        project.write_stack(local_stack(example=TRAINER_JOB))
        up = project.up().check()
        assert "registered local/models/churn version 1 (default, prod)" in up.output
        first = project.outputs()["jobs"]["example"]["model"]
        assert (first["version_id"], first["aliases"]) == ("1", ["default", "prod"])

        project.write_stack(local_stack(example={**TRAINER_JOB, "args": ["--epochs", "3"]}))
        assert "version 2 of `local/models/churn` (the job's last is version 1)" in review_of(
            project
        )
        project.up().check()
        second = project.outputs()["jobs"]["example"]["model"]
        assert (second["resource_name"], second["version_id"]) == ("local/models/churn", "2")
        registry = project.root / ".local-jobs" / "models" / "churn" / "versions"
        assert sorted(p.name for p in registry.iterdir()) == ["1", "2"]
        old = json.loads((registry / "1" / "version.json").read_text())
        assert old["versionAliases"] == []

        destroyed = project.run("destroy", "--yes").check()
        assert "kept local/models/churn, which this job registered as version 2" in (
            destroyed.output
        )
        assert sorted(p.name for p in registry.iterdir()) == ["1", "2"]
        assert (registry / "2" / "artifacts" / "model.json").is_file()


class TestVertexStack:
    """A stack file's job on Vertex AI runs as a training pipeline (the fakes)."""

    def test_a_retrain_is_version_2_and_destroy_keeps_both(self, project: Project) -> None:
        """The pipeline registers churn@1, a retrain churn@2 with prod and default moved;
        destroy deletes the pipelines and keeps both versions."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            project.write_stack(vertex_stack(fake, train=vertex_job()))
            project.up().check()
            assert versions(fake) == [("1", ("default", "prod"))]
            project.write_stack(vertex_stack(fake, train=vertex_job("3")))
            up = project.up().check()
            assert f"registered {PARENT}/models/churn version 2 (default, prod)" in up.output
            assert versions(fake) == [("1", ()), ("2", ("default", "prod"))]
            assert len(fake.pipelines) == 1, "the replaced pipeline was not deleted"
            destroyed = project.run("destroy", "--yes").check()
            assert fake.pipelines == {}
            assert versions(fake) == [("1", ()), ("2", ("default", "prod"))]
            assert "gcloud ai models delete-version churn@<version>" in destroyed.output

    def test_a_stocked_out_pipeline_is_retried_in_the_fallback_region(
        self, project: Project
    ) -> None:
        """`retry` resubmits a pipeline whose job found no capacity, in the next region,
        where it registers the model (a model lives in one region)."""
        retry = {"when": ["capacity"], "attempts": 2, "regions": ["europe-west4"]}
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            fake.stockout("us-central1")
            project.write_stack(vertex_stack(fake, train=vertex_job(retry=retry)))
            project.up().check()
            job = project.outputs()["jobs"]["train"]
            assert [(a["region"], a["class"]) for a in job["attempts"]] == [
                ("us-central1", "capacity"),
                ("europe-west4", ""),
            ]
            assert "/locations/europe-west4/trainingPipelines/" in job["resource_name"]
            held = fake.models["projects/test-project/locations/europe-west4/models/churn"]
            assert [m.version_id for m in held] == ["1"]
            assert versions(fake) == []  # nothing registered where the job found no machine

    def test_refresh_drops_a_pipeline_deleted_outside_pulumi(self, project: Project) -> None:
        """A pipeline deleted outside Pulumi leaves the stack at `pulumi refresh`; its
        model stays."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            project.write_stack(vertex_stack(fake, train=vertex_job()))
            project.up().check()
            name = project.jobs_in_state()["train"]["id"]
            VertexBackend("test-project", "us-central1", api_endpoint=fake.address).delete(name)
            project.run("refresh", "--yes").check()
            assert "train" not in project.jobs_in_state()
            assert versions(fake) == [("1", ("default", "prod"))]

    def test_engine_killed_during_the_create_leaves_one_pipeline(self, project: Project) -> None:
        """A rerun after the engine was killed mid-create adopts the pipeline it had made."""
        with FakeVertex(run_s=2.0) as fake:
            fake.stall_next("CreateTrainingPipeline", 30.0)
            project.write_stack(vertex_stack(fake, train=vertex_job()))
            project.init()
            proc = project.start("up", "--yes", "--skip-preview")
            deadline = time.monotonic() + 120
            while not fake.pipelines and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.pipelines, "the pipeline was never submitted"
            project.kill_engine(proc)
            project.run("cancel", "--yes").check()
            project.up().check()
            creates = [c for c in fake.calls if c.method == "CreateTrainingPipeline"]
            assert len(creates) == 1 and len(fake.pipelines) == 1
            assert versions(fake) == [("1", ("default", "prod"))]

    def test_a_create_that_took_effect_then_failed_is_adopted(self, project: Project) -> None:
        """UNKNOWN after the service made the pipeline: the label lookup adopts it, and one
        pipeline registers one version."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            fake.fail_next("CreateTrainingPipeline", grpc.StatusCode.UNKNOWN, take_effect=True)
            project.write_stack(vertex_stack(fake, train=vertex_job()))
            project.up().check()
            assert [c.method for c in fake.calls].count("CreateTrainingPipeline") == 1
            [name] = fake.pipelines
            assert project.outputs()["jobs"]["train"]["resource_name"] == name
            assert versions(fake) == [("1", ("default", "prod"))]

    def test_a_tuning_job_registers_its_best_trials_model(self, project: Project) -> None:
        """A tuning pipeline runs the study, then registers the best trial's model."""
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.01, "max": 1.0}},
            "max_trials": 2,
            "parallel_trials": 2,
        }
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5, trial_s=0.3) as fake:
            project.write_stack(vertex_stack(fake, sweep=vertex_job(study=study)))
            project.up().check()
            job = project.outputs()["jobs"]["sweep"]
            best = job["best_trial"]["id"]
            [version] = fake.models[f"{PARENT}/models/churn"]
            assert version.artifact_uri.rstrip("/") == f"{OUTPUT}/{best}/model"
            assert job["model"]["version_id"] == "1"

    def test_a_failed_upload_reads_in_the_projects_words(self, project: Project) -> None:
        """The update fails with the class, the fix and the trainer's log, no traceback."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            fake.fail_upload_next()
            project.write_stack(vertex_stack(fake, train=vertex_job()))
            result = project.up()
            assert result.returncode != 0
            assert "(model_upload)" in result.output or "model_upload" in result.output
            assert "save the trained model under the directory AIP_MODEL_DIR names" in (
                result.output
            )
            assert "Traceback" not in result.output
            assert versions(fake) == []


TYPESCRIPT = """\
import * as pulumi from "@pulumi/pulumi";
import * as vertex from "vertex-training";

const config = new pulumi.Config();
const train = new vertex.TrainingJob("train", {
    job: {
        image: "%(image)s",
        args: ["--epochs", config.get("epochs") ?? "2"],
        baseOutputDirectory: "%(output)s",
        wait: "succeeded",
        model: { id: "churn", aliases: ["prod"], serving: { image: "%(serving)s" } },
    },
});
const waiter = new vertex.JobWaiter("wait-for-jobs", { jobs: [train.waiterEntry] });

export const version = waiter.models.apply((models) => models?.["train"]?.versionName);
"""


class TestTypeScriptProgram:
    def test_a_typescript_program_registers_version_2_and_destroy_keeps_both(
        self, tmp_path: Path, nodejs_sdk: Path
    ) -> None:
        """The plugin's job registers churn@1, then churn@2 after an args change; the
        review of that change names the version; destroy keeps both."""
        if reason := sdk_missing("nodejs"):
            pytest.skip(reason)
        source = TYPESCRIPT % {"image": IMAGE, "output": OUTPUT, "serving": SERVING}
        project = typescript_program(tmp_path, nodejs_sdk, source)
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            for key, value in (
                ("vertex-training:apiEndpoint", fake.address),
                ("vertex-training:project", "test-project"),
                ("vertex-training:region", "us-central1"),
            ):
                project.run("config", "set", key, value).check()
            project.run("up", "--yes", "--skip-preview").check()
            assert project.outputs()["version"] == f"{PARENT}/models/churn@1"

            project.run("config", "set", "epochs", "3").check()
            review = review_of(project)
            assert (
                f"version 2 of `{PARENT}/models/churn` (the job's last is version 1)" in review
            ), review
            assert "moves `default`, `prod` to it" in review
            project.run("up", "--yes", "--skip-preview").check()
            assert project.outputs()["version"] == f"{PARENT}/models/churn@2"
            assert versions(fake) == [("1", ()), ("2", ("default", "prod"))]

            destroyed = project.run("destroy", "--yes").check()
            assert f"kept {PARENT}/models/churn" in destroyed.output
            assert fake.pipelines == {}
            assert versions(fake) == [("1", ()), ("2", ("default", "prod"))]
