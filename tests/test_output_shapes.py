"""The outputs' shapes: one dataclass per output, whose fields (described) give the
plugin's schema types and properties; ``shapes.properties``, the one conversion of an
output to the schema's camelCase; and the producers' state naming, which stays as it was."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from tests.prices import PRICES
from vertex_training.api.failures import JobFailure, classify
from vertex_training.backends.base import (
    JobStatus,
    ModelVersion,
    RegisteredModel,
    Trial,
    TrialOutput,
)
from vertex_training.catalog import prices
from vertex_training.plugin import schema, shapes
from vertex_training.plugin.previews import PriceSnapshot
from vertex_training.resources.attempts import Attempt
from vertex_training.resources.pages import JobPages
from vertex_training.resources.records import AttemptOutput, JobObserved
from vertex_training.resources.state import OUTPUT_KEYS
from vertex_training.review import cost
from vertex_training.review.cost import CostEstimate
from vertex_training.stackconfig import StackSettings, parse_job

DOCS = Path(__file__).resolve().parent.parent / "docs"
SHAPES = (TrialOutput, ModelVersion, JobFailure, AttemptOutput, CostEstimate)
US = StackSettings(stack="dev", project="my-project", region="us-central1")
LOCAL = StackSettings(stack="local", backend="local")
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
TRIAL = Trial(
    "2",
    "SUCCEEDED",
    {"learning_rate": 0.01, "layer_size": 64},
    {"val_accuracy": 0.9},
    "2026-11-20T09:00:00Z",
    "2026-11-20T10:00:00Z",
)
MODEL = RegisteredModel(
    "projects/p/locations/us-central1/models/m", "2", ("default",), "gs://b/m", "m", "img"
)


class TestProperties:
    def test_a_jobs_outputs_are_camelcase_at_every_depth_but_a_maps_keys(self) -> None:
        """What a job's backend reports, in the state's naming, comes out in camelCase
        (its failure, attempts, model, trials and best trial too); the IDs of parameters
        and metrics and a replica's name are kept as written."""
        status = JobStatus("n", "JOB_STATE_FAILED", error="Internal error", error_code=13)
        observed = JobObserved(
            "n",
            state="JOB_STATE_FAILED",
            web_access_uris={"workerpool0-0": "https://w"},
            failure=classify(status.error_code, status.error).to_output(),
            attempts=(Attempt(1, "us-central1", "STANDARD", {}, {}).output(),),
            model=MODEL.output("projects/p/locations/us-central1/customJobs/1").to_output(),
            trials=(TRIAL.to_output("val_accuracy"),),
            best_trial=TRIAL.to_output("val_accuracy"),
        )
        given = shapes.properties(observed.outputs(()), JobObserved)
        assert set(given) == {
            "state",
            "webAccessUris",
            "failure",
            "attempts",
            "model",
            "trials",
            "bestTrial",
        }
        assert given["webAccessUris"] == {"workerpool0-0": "https://w"}
        assert set(given["failure"]) == set(schema.JOB_FAILURE_PROPERTIES)
        assert [set(a) for a in given["attempts"]] == [set(schema.ATTEMPT_PROPERTIES)]
        assert set(given["model"]) == set(schema.MODEL_VERSION_PROPERTIES)
        assert set(given["bestTrial"]) == set(schema.TRIAL_PROPERTIES)
        assert given["trials"] == [given["bestTrial"]]
        assert given["bestTrial"]["parameters"] == {"learning_rate": 0.01, "layer_size": 64}
        assert given["bestTrial"]["finalMetric"] == 0.9

    def test_a_dataclass_value_leaves_out_what_is_unset(self) -> None:
        """A shape's value given as its dataclass: a field at its ``unset`` value is left
        out (an unknown amount), any other kept (an amount of 0, an empty text)."""
        estimate = CostEstimate(0.0, None, 1.0, "STANDARD", None, None, ("why",), "local")
        assert shapes.properties(estimate) == {
            "hourlyUsd": 0.0,
            "hours": 1.0,
            "strategy": "STANDARD",
            "unknown": ["why"],
            "summary": "local",
        }
        assert "backingJob" not in shapes.properties(MODEL.output())
        assert shapes.properties(MODEL.output())["displayName"] == "m"

    def test_a_key_no_shape_names_is_kept_and_none_stays_none(self) -> None:
        """A key the shape does not know is given as written; no best trial is None."""
        given = shapes.properties({"best_trial": None, "extra_key": 1}, JobObserved)
        assert given == {"bestTrial": None, "extra_key": 1}

    def test_a_jobs_pages_are_its_derived_outputs(self) -> None:
        """The pages among a job's derived outputs, in camelCase."""
        derived = {
            "resource_name": "local/customJobs/1",
            "job_id": "1",
            "console_url": "c",
            "logs_url": "l",
            "output_directory": "o",
            "model_directory": "o/model",
        }
        assert shapes.properties(JobPages.of(derived)) == {
            "jobId": "1",
            "consoleUrl": "c",
            "logsUrl": "l",
            "modelDirectory": "o/model",
        }


class TestSchemaTypes:
    def test_each_output_type_is_its_shapes(self) -> None:
        """The schema's output types are written from their shapes: properties, their
        descriptions, and the required ones."""
        written = json.loads(schema.SCHEMA_FILE.read_text())["types"]
        for shape in SHAPES:
            types: dict[str, dict[str, Any]] = {}
            assert written[shapes.type_token(shape)] == shapes.output_type(shape, types)

    def test_every_output_is_described(self) -> None:
        """Each field of an output's shape has a description (JobObserved's ID aside)."""
        for shape in (*SHAPES, JobObserved, JobPages, schema.PluginJobOutputs):
            undescribed = [
                f.name for f in dataclasses.fields(shape) if "description" not in f.metadata
            ]
            assert undescribed == (["resource_name"] if shape is JobObserved else [])

    def test_a_job_resources_outputs_are_its_shapes(self) -> None:
        """A job's outputs: what its job reports (the state's outputs in camelCase), its
        pages, and what the plugin adds; a tuning job's, its trials beside them."""
        assert list(schema.JOB_OUTPUTS) == [
            *(shapes.camel(key) for key in OUTPUT_KEYS),
            "jobId",
            "consoleUrl",
            "logsUrl",
            "modelDirectory",
            "waiterEntry",
            "request",
            "estimate",
        ]
        assert list(schema.TUNING_OUTPUTS) == ["trials", "bestTrial"]


class TestStateNaming:
    """The dynamic resources' outputs, made through the shapes, are as they were."""

    def test_a_trial(self) -> None:
        """A trial's output keys and values."""
        assert TRIAL.to_output("val_accuracy") == {
            "id": "2",
            "state": "SUCCEEDED",
            "parameters": {"learning_rate": 0.01, "layer_size": 64},
            "final_metric": 0.9,
            "metrics": {"val_accuracy": 0.9},
            "start_time": "2026-11-20T09:00:00Z",
            "end_time": "2026-11-20T10:00:00Z",
            "infeasible_reason": "",
        }
        assert TRIAL.to_output("loss")["final_metric"] is None

    def test_a_failure(self) -> None:
        """A failure's output: its class under ``class``, its message's first line."""
        failure = classify(13, "Internal error\nlog")
        assert failure.to_output() == {
            "class": failure.kind,
            "code": 13,
            "message": "Internal error",
            "fix": failure.fix,
            "replica": "",
        }

    def test_a_model_version_with_and_without_its_backing_job(self) -> None:
        """A model's output has its backing job only when it has one; a pipeline with a
        backing job and no model yet has only that; a job, nothing."""
        version = {
            "resource_name": MODEL.name,
            "model_id": "m",
            "version_id": "2",
            "version_name": f"{MODEL.name}@2",
            "aliases": ["default"],
            "artifact_uri": "gs://b/m",
            "display_name": "m",
            "image_uri": "img",
        }
        assert MODEL.to_output() == version
        status = JobStatus("n", "JOB_STATE_SUCCEEDED", backing_job="j", model=MODEL)
        assert status.model_output() == {**version, "backing_job": "j"}
        assert JobStatus("n", "JOB_STATE_RUNNING", backing_job="j").model_output() == {
            "backing_job": "j"
        }
        assert JobStatus("n", "JOB_STATE_RUNNING").model_output() == {}

    def test_an_attempt_has_its_shapes_keys(self) -> None:
        """An attempt's output (``Attempt.output``) has the keys of ``AttemptOutput``."""
        attempt = Attempt(1, "us-central1", "STANDARD", {}, {})
        assert list(attempt.output()) == list(shapes.output_fields(AttemptOutput))


class TestEstimate:
    def test_the_previews_estimate_is_its_shapes(self, tmp_path: Path) -> None:
        """A job's estimate as a preview gives it is its ``CostEstimate`` in camelCase."""
        prices.save_snapshot(PRICES, tmp_path / "prices" / "snapshot.json")
        priced = PriceSnapshot(tmp_path)
        snapshot, _ = priced.read()
        job = parse_job("mnist", {"image": IMAGE, "machine": "n1-standard-4"}, US)
        assert priced.estimate(job) == shapes.properties(
            CostEstimate.of(cost.estimate(job, snapshot), snapshot)
        )

    def test_a_local_jobs_estimate_is_its_shapes(self, tmp_path: Path) -> None:
        """A local job's estimate (no snapshot read) is its ``CostEstimate`` too."""
        job = parse_job("mnist", {"image": IMAGE}, LOCAL)
        assert PriceSnapshot(tmp_path).estimate(job) == shapes.properties(
            CostEstimate.of(cost.estimate(job, None), None)
        )
