"""Hyperparameter tuning jobs through the fake Vertex JobService: the fake's trials, the
Vertex backend, and the HyperparameterTuningJob provider and the waiter, as the engine
calls them."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1 import JobServiceClient
from google.cloud.aiplatform_v1.types import HyperparameterTuningJob as HyperparameterTuningJobPb
from google.protobuf import json_format
from pulumi.dynamic.dynamic import serialize_provider

from tests.clients import (
    configured,
    job_service_client,
    reaching,
    registered,
    waited,
    waiter_for,
)
from vertex_training.api import states
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.backends.base import location_of
from vertex_training.backends.vertex import RetryPolicy, VertexBackend
from vertex_training.program.exports import latest_trials
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.submission import Owner, labelled_request
from vertex_training.resources.tuning_job import (
    HyperparameterTuningJob,
    HyperparameterTuningJobProvider,
    best_model_directory,
)
from vertex_training.resources.waiter import wait_for
from vertex_training.stackconfig import StackSettings, parse_job
from vertex_training.testing import FakeVertex, ManualClock
from vertex_training.testing.fake_vertex import default_trial_metric

pytestmark = pytest.mark.timeout(60)

REPO = Path(__file__).resolve().parent.parent
PROJECT, REGION = "test-project", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
STACK = StackSettings(stack="test", project=PROJECT, region=REGION)
FAST_RETRY = RetryPolicy(initial_s=0.01, max_s=0.05, multiplier=2.0, deadline_s=2.0)
FAST_POLLING = RetryPolicy(initial_s=0.01, max_s=0.05, multiplier=1.5, deadline_s=5.0)
QUEUED_S, PENDING_S, TRIAL_S, CANCEL_S, DELETE_S = 1.0, 1.0, 10.0, 1.0, 1.0

STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {
        "learning-rate": {"type": "double", "min": 0.001, "max": 1.0, "scale": "log"},
        "epochs": {"type": "integer", "min": 1, "max": 20},
    },
    "algorithm": "random",
    "max_trials": 5,
    "parallel_trials": 2,
}
GRID_STUDY: dict[str, Any] = {
    "metrics": [{"id": "loss", "goal": "MINIMIZE"}],
    "parameters": {
        "optimizer": {"type": "categorical", "values": ["sgd", "adam"]},
        "batch-size": {"type": "discrete", "values": [16, 64]},
    },
    "algorithm": "grid",
    "max_trials": 10,
    "parallel_trials": 3,
}


def tuning_config(study: dict[str, Any] | None = None, **keys: Any) -> dict[str, Any]:
    return {"image": IMAGE, "study": study or STUDY, **keys}


def tuning_body(study: dict[str, Any] | None = None, **keys: Any) -> dict[str, Any]:
    """A HyperparameterTuningJob REST body, as `render` prints it."""
    return parse_job("sweep", tuning_config(study, **keys), STACK).request_body()


# ----------------------------------------------------------------------- the fake itself


@pytest.fixture
def slow_fake(clock: ManualClock) -> Iterator[FakeVertex]:
    """A fake on a manual clock: 1 s queued, 1 s pending, 10 s per trial."""
    with FakeVertex(
        queued_s=QUEUED_S,
        pending_s=PENDING_S,
        trial_s=TRIAL_S,
        cancel_s=CANCEL_S,
        delete_s=DELETE_S,
        clock=clock,
    ) as fake:
        yield fake


@pytest.fixture
def client(slow_fake: FakeVertex) -> Iterator[JobServiceClient]:
    with job_service_client(slow_fake.address) as service:
        yield service


def as_message(body: dict[str, Any]) -> HyperparameterTuningJobPb:
    """A REST JSON body as the client's message type."""
    message = json_format.ParseDict(body, HyperparameterTuningJobPb.pb()())
    return HyperparameterTuningJobPb.wrap(message)


def create(client: JobServiceClient, study: dict[str, Any] | None = None) -> Any:
    return client.create_hyperparameter_tuning_job(
        parent=PARENT, hyperparameter_tuning_job=as_message(tuning_body(study))
    )


def trial_states(client: JobServiceClient, name: str) -> list[str]:
    job = client.get_hyperparameter_tuning_job(name=name)
    return [t.state.name for t in job.trials]


class TestFakeTuningJobs:
    """The fake serves Create/Get/List/Cancel/DeleteHyperparameterTuningJob and runs trials."""

    def test_create_returns_the_job_queued_with_a_server_chosen_name(
        self, client: JobServiceClient
    ) -> None:
        """The job comes back QUEUED, named in the hyperparameterTuningJobs collection."""
        job = create(client)
        assert job.state.name == "JOB_STATE_QUEUED"
        parts = JobServiceClient.parse_hyperparameter_tuning_job_path(job.name)
        assert parts["project"] == PROJECT and parts["hyperparameter_tuning_job"].isdigit()
        assert list(job.trials) == []

    def test_trials_run_at_most_parallel_at_once_until_max_trials(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """Two trials run at a time, five in all; then the job SUCCEEDED."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S)
        assert trial_states(client, name) == ["ACTIVE", "ACTIVE"]
        assert client.get_hyperparameter_tuning_job(name=name).state.name == "JOB_STATE_RUNNING"
        clock.advance(TRIAL_S)
        assert trial_states(client, name) == ["SUCCEEDED", "SUCCEEDED", "ACTIVE", "ACTIVE"]
        clock.advance(2 * TRIAL_S)
        job = client.get_hyperparameter_tuning_job(name=name)
        assert [t.state.name for t in job.trials] == ["SUCCEEDED"] * 5
        assert job.state.name == "JOB_STATE_SUCCEEDED"
        assert job.end_time.timestamp() - job.start_time.timestamp() == pytest.approx(3 * TRIAL_S)

    def test_trial_parameters_are_in_range_and_metrics_deterministic(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """Each trial's parameters lie in their ranges; its metric is the documented function."""
        job = create(client)
        clock.advance(100)
        job = client.get_hyperparameter_tuning_job(name=job.name)
        metric = default_trial_metric(json_format.MessageToDict(type(job).pb(job).study_spec))
        for trial in job.trials:
            params = {p.parameter_id: p.value for p in trial.parameters}
            assert 0.001 <= params["learning-rate"] <= 1.0
            assert 1 <= params["epochs"] <= 20 and float(params["epochs"]).is_integer()
            [measured] = trial.final_measurement.metrics
            assert measured.metric_id == "accuracy"
            assert measured.value == pytest.approx(metric(params, "accuracy", "MAXIMIZE"))

    def test_grid_search_enumerates_then_ends(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A 2x2 grid runs its four points once, then the job ends though max_trials is 10."""
        job = create(client, GRID_STUDY)
        clock.advance(100)
        job = client.get_hyperparameter_tuning_job(name=job.name)
        points = {
            (p["optimizer"], p["batch-size"])
            for p in ({x.parameter_id: x.value for x in t.parameters} for t in job.trials)
        }
        assert points == {("sgd", 16), ("sgd", 64), ("adam", 16), ("adam", 64)}
        assert len(job.trials) == 4 and job.state.name == "JOB_STATE_SUCCEEDED"

    def test_list_leaves_out_trials_and_filters_on_labels(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """ListHyperparameterTuningJobs returns jobs without trials; custom jobs stay apart."""
        job = client.create_hyperparameter_tuning_job(
            parent=PARENT, hyperparameter_tuning_job=as_message(tuning_body(labels={"team": "a"}))
        )
        clock.advance(100)
        listed = list(
            client.list_hyperparameter_tuning_jobs(
                request={"parent": PARENT, "filter": 'labels.team="a"'}
            )
        )
        assert [j.name for j in listed] == [job.name]
        assert list(listed[0].trials) == []
        assert list(client.list_custom_jobs(parent=PARENT)) == []
        none = client.list_hyperparameter_tuning_jobs(
            request={"parent": PARENT, "filter": 'labels.team="b"'}
        )
        assert list(none) == []

    def test_failed_trials_fail_the_job_at_max_failed_trial_count(self, clock: ManualClock) -> None:
        """Trials whose metric is None are INFEASIBLE; two of them fail the job."""

        def metric(params: dict[str, Any], metric_id: str, goal: str) -> float | None:
            return None if params["epochs"] > 10 else 0.5

        with FakeVertex(
            queued_s=0, pending_s=0, trial_s=1.0, clock=clock, trial_metric=metric
        ) as fake:
            backend = VertexBackend(PROJECT, REGION, api_endpoint=fake.address)
            study = {
                **STUDY,
                "max_trials": 20,
                "parallel_trials": 1,
                "max_failed_trials": 2,
                "parameters": {"epochs": {"type": "integer", "min": 1, "max": 20}},
            }
            name = backend.submit(tuning_body(study)).name
            clock.advance(100)
            status = backend.get(name)
        assert status.state == states.FAILED
        assert "2 of the job's trials failed" in status.error
        failed = [t for t in status.trials if t.state == "INFEASIBLE"]
        assert len(failed) == 2 and all(t.parameters["epochs"] > 10 for t in failed)
        assert all(t.infeasible_reason for t in failed)

    def test_cancel_stops_running_trials(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """Cancel: trials go STOPPING, then INFEASIBLE; the job ends CANCELLED with code 1."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S + TRIAL_S / 2)
        client.cancel_hyperparameter_tuning_job(name=name)
        assert trial_states(client, name) == ["STOPPING", "STOPPING"]
        clock.advance(CANCEL_S)
        job = client.get_hyperparameter_tuning_job(name=name)
        assert job.state.name == "JOB_STATE_CANCELLED"
        assert job.error.code == 1
        assert [t.state.name for t in job.trials] == ["INFEASIBLE", "INFEASIBLE"]
        clock.advance(100)
        assert len(client.get_hyperparameter_tuning_job(name=name).trials) == 2

    def test_delete_needs_an_ended_job(self, client: JobServiceClient, clock: ManualClock) -> None:
        """Deleting a running job is FAILED_PRECONDITION; once cancelled it is deleted."""
        name = create(client).name
        with pytest.raises(exceptions.FailedPrecondition):
            client.delete_hyperparameter_tuning_job(name=name)
        client.cancel_hyperparameter_tuning_job(name=name)
        clock.advance(CANCEL_S)
        operation = client.delete_hyperparameter_tuning_job(name=name)
        clock.advance(DELETE_S)
        operation.result(timeout=5)
        with pytest.raises(exceptions.NotFound):
            client.get_hyperparameter_tuning_job(name=name)

    def test_invalid_jobs_are_refused(self, client: JobServiceClient) -> None:
        """No metrics, a grid over a double, zero trials: INVALID_ARGUMENT naming the fields."""
        body = tuning_body()
        body["studySpec"]["metrics"] = []
        body["studySpec"]["algorithm"] = "GRID_SEARCH"
        body["maxTrialCount"] = 0
        with pytest.raises(exceptions.InvalidArgument) as caught:
            client.create_hyperparameter_tuning_job(
                parent=PARENT, hyperparameter_tuning_job=as_message(body)
            )
        message = str(caught.value)
        assert "study_spec.metrics" in message
        assert "Grid search does not support DOUBLE" in message
        assert "max_trial_count" in message

    def test_a_custom_job_name_is_not_a_tuning_job(self, client: JobServiceClient) -> None:
        """GetHyperparameterTuningJob of a custom job name is INVALID_ARGUMENT."""
        with pytest.raises(exceptions.InvalidArgument):
            client.get_hyperparameter_tuning_job(name=f"{PARENT}/customJobs/1")


# ------------------------------------------------------------------ the Vertex backend


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(
        queued_s=0.02, pending_s=0.02, run_s=0.1, trial_s=0.05, cancel_s=0.02, delete_s=0.02
    ) as fake:
        yield fake


@pytest.fixture
def backend(fake: FakeVertex) -> VertexBackend:
    return VertexBackend(
        PROJECT, REGION, api_endpoint=fake.address, retry=FAST_RETRY, polling=FAST_POLLING
    )


def until_ended(backend: VertexBackend, name: str) -> Any:
    entry = {
        "resource_name": name,
        "location": {"backend": "vertex", "project": PROJECT, "region": REGION},
        "wait": {"until": "succeeded", "timeout_s": 20},
    }
    seen: dict[str, Any] = {}
    wait_for({"sweep": entry}, seen, settings=reaching(backend.api_endpoint))
    return seen["sweep"]


class TestVertexBackendTuning:
    """VertexBackend takes tuning jobs through the same calls as custom jobs."""

    def test_submit_runs_trials_and_finds_the_best(self, backend: VertexBackend) -> None:
        """A submitted study runs five trials; the best trial has the highest accuracy."""
        submitted = backend.submit(tuning_body())
        assert "/hyperparameterTuningJobs/" in submitted.name
        assert submitted.state == states.QUEUED and submitted.trials == []
        status = until_ended(backend, submitted.name)
        assert status.state == states.SUCCEEDED
        assert [t.id for t in status.trials] == ["1", "2", "3", "4", "5"]
        assert all(isinstance(t.parameters["epochs"], int) for t in status.trials)
        assert all(isinstance(t.parameters["learning-rate"], float) for t in status.trials)
        assert (status.metric_id, status.goal) == ("accuracy", "MAXIMIZE")
        best = status.best_trial
        assert best is not None
        assert best.metrics["accuracy"] == max(t.metrics["accuracy"] for t in status.trials)
        outputs = status.trial_outputs()
        assert outputs["best_trial"]["final_metric"] == best.metrics["accuracy"]
        assert len(outputs["trials"]) == 5

    def test_minimize_picks_the_lowest(self, backend: VertexBackend) -> None:
        """With goal MINIMIZE the best trial has the lowest value."""
        status = until_ended(backend, backend.submit(tuning_body(GRID_STUDY)).name)
        assert status.best_trial.metrics["loss"] == min(t.metrics["loss"] for t in status.trials)

    def test_find_by_label_looks_among_both_kinds(self, backend: VertexBackend) -> None:
        """Label lookup returns custom and tuning jobs, newest first."""
        custom_body = {
            "displayName": "t",
            "labels": {"key": "x"},
            "jobSpec": tuning_body()["trialJobSpec"],
        }
        custom = backend.submit(custom_body)
        tuning = backend.submit(tuning_body(labels={"key": "x"}))
        found = backend.find_by_label("key", "x")
        assert [s.name for s in found] == [tuning.name, custom.name]

    def test_cancel_then_delete(self, backend: VertexBackend, fake: FakeVertex) -> None:
        """Cancel ends the job CANCELLED; delete removes it; a second delete is a no-op."""
        with FakeVertex(
            queued_s=0, pending_s=0, trial_s=math.inf, cancel_s=0.02, delete_s=0.02
        ) as slow:
            backend = VertexBackend(
                PROJECT, REGION, api_endpoint=slow.address, retry=FAST_RETRY, polling=FAST_POLLING
            )
            name = backend.submit(tuning_body()).name
            assert [t.state for t in backend.get(name).trials] == ["ACTIVE", "ACTIVE"]
            from vertex_training.resources.attempts import stop

            stop(backend, name)
            status = backend.get(name)
            assert status.state == states.CANCELLED
            assert [t.state for t in status.trials] == ["INFEASIBLE", "INFEASIBLE"]
            backend.delete(name)
            assert backend.get(name) is None
            backend.delete(name)
            methods = [c.method for c in slow.calls]
            assert methods.index("CancelHyperparameterTuningJob") < methods.index(
                "DeleteHyperparameterTuningJob"
            )

    def test_urls(self, backend: VertexBackend) -> None:
        """Console and logs URLs name the tuning job's ID."""
        name = f"{PARENT}/hyperparameterTuningJobs/77"
        assert backend.console_url(name) == (
            "https://console.cloud.google.com/vertex-ai/locations/us-central1/training/77"
            "?project=test-project"
        )
        assert "job_id%3D%2277%22" in backend.logs_url(name)


# ------------------------------------------------------------ the provider and the waiter


def tuning(fake: FakeVertex) -> HyperparameterTuningJobProvider:
    """A tuning job's provider, configured to reach ``fake``."""
    return configured(HyperparameterTuningJobProvider(), fake)


def checked(fake: FakeVertex, config: dict[str, Any]) -> dict[str, Any]:
    result = tuning(fake).check({}, registered(fake, "sweep", config))
    assert not result.failures, [f.reason for f in result.failures]
    return result.inputs


def viewed(fake: FakeVertex, config: dict[str, Any]) -> dict[str, Any]:
    """The checked inputs with what the provider's operations derive from them."""
    return recorded_view(checked(fake, config))


def waiter_entry(created: Any, until: str = "succeeded") -> dict[str, Any]:
    return {
        "resource_name": created.id,
        "location": location_of(created.id),
        "wait": {"until": until, "timeout_s": 20},
    }


class TestTuningJobProvider:
    """HyperparameterTuningJob's provider: TrainingJob's lifecycle, plus trials."""

    def test_check_gives_the_tuning_request(self, fake: FakeVertex) -> None:
        """The checked request is the REST HyperparameterTuningJob; study keys are inputs."""
        inputs = viewed(fake, tuning_config(wait="succeeded"))
        assert inputs["request"]["maxTrialCount"] == 5
        assert "trialJobSpec" in inputs["request"]
        assert inputs["study"] == STUDY
        assert inputs["wait"]["until"] == "succeeded"

    def test_check_reports_study_mistakes_at_the_study_key(self, fake: FakeVertex) -> None:
        """A study mistake is a check failure on `study`, naming the full key."""
        config = tuning_config({**STUDY, "parallel_trials": 9})
        [failure] = tuning(fake).check({}, registered(fake, "sweep", config)).failures
        assert failure.property == "study"
        assert "vertex-training:jobs.sweep.study.parallel_trials" in failure.reason

    def test_check_refuses_a_job_without_a_study(self, fake: FakeVertex) -> None:
        """The tuning resource refuses a config without study (it would be a training job)."""
        [failure] = tuning(fake).check({}, registered(fake, "sweep", {"image": IMAGE})).failures
        assert "study" in failure.reason

    def test_a_study_change_replaces_and_wait_updates(self, fake: FakeVertex) -> None:
        """Changing the study replaces the job naming `study`; changing `wait` does not."""
        old = checked(fake, tuning_config())
        new = checked(fake, tuning_config({**STUDY, "max_trials": 6}))
        diff = tuning(fake).diff("id", old, new)
        assert diff.replaces == ["request", "study"]
        waited = checked(fake, tuning_config(wait="succeeded"))
        assert tuning(fake).diff("id", old, waited).replaces == []

    def test_the_order_of_the_parameters_mapping_changes_nothing(self, fake: FakeVertex) -> None:
        """The engine hands check the config's mappings in no fixed order: any order gives
        the same request, the same identity label, and no diff."""
        conditional = {
            "type": "categorical",
            "values": ["sgd", "adam"],
            "conditional": [
                {
                    "when": ["adam"],
                    "parameters": {
                        "beta2": {"type": "double", "min": 0.9, "max": 0.999},
                        "beta1": {"type": "double", "min": 0.8, "max": 0.99},
                    },
                }
            ],
        }
        parameters = {**STUDY["parameters"], "optimizer": conditional}
        reordered = {
            "optimizer": {
                **conditional,
                "conditional": [
                    {
                        "when": ["adam"],
                        "parameters": dict(
                            reversed(conditional["conditional"][0]["parameters"].items())
                        ),
                    }
                ],
            },
            **dict(reversed(STUDY["parameters"].items())),
        }
        one = viewed(fake, tuning_config({**STUDY, "parameters": parameters}))
        other = viewed(fake, tuning_config({**STUDY, "parameters": reordered}))
        assert one["request"] == other["request"]
        assert [p["parameterId"] for p in one["request"]["studySpec"]["parameters"]] == [
            "epochs",
            "learning-rate",
            "optimizer",
        ]
        labels = [
            labelled_request(i["request"], Owner("test"), "sweep")["labels"] for i in (one, other)
        ]
        assert labels[0][IDENTITY_LABEL] == labels[1][IDENTITY_LABEL]
        assert not tuning(fake).diff("id", one, other).changes

    def test_a_request_recorded_in_config_order_is_no_change(self, fake: FakeVertex) -> None:
        """A state written by a release that kept the config's parameter order is no
        change, so upgrading never resubmits a tuning job."""
        checked_new = checked(fake, tuning_config())
        new = recorded_view(checked_new)
        study = new["request"]["studySpec"]
        old_request = {
            **new["request"],
            "studySpec": {**study, "parameters": list(reversed(study["parameters"]))},
        }
        assert old_request != new["request"]
        # Schema 2 recorded the derived view (and no stack settings).
        old = {**new, "request": old_request, "schema": 2}
        del old["stack"]
        assert not tuning(fake).diff("id", old, checked_new).changes
        assert labelled_request(old_request, Owner("test"), "sweep") == labelled_request(
            new["request"], Owner("test"), "sweep"
        ) | {"studySpec": old_request["studySpec"]}

    def test_outputs_in_state_are_not_changes(self, fake: FakeVertex) -> None:
        """trials and best_trial in the old state never count as changes."""
        old = {**checked(fake, tuning_config()), "trials": [{"id": "1"}], "best_trial": None}
        assert not tuning(fake).diff("id", old, checked(fake, tuning_config())).changes

    def test_create_labels_and_adopts_after_a_timed_out_create(self, fake: FakeVertex) -> None:
        """DEADLINE_EXCEEDED after the server acted leaves one job, with the identity label."""
        fake.fail_next(
            "CreateHyperparameterTuningJob", grpc.StatusCode.DEADLINE_EXCEEDED, take_effect=True
        )
        result = tuning(fake).create(checked(fake, tuning_config()))
        [job] = fake.tuning_jobs.values()
        assert result.id == job.name
        assert len(job.labels[IDENTITY_LABEL]) == 40 and job.labels["pulumi_resource"] == "sweep"
        assert result.outs["trials"] == [] and result.outs["best_trial"] is None

    def test_create_adopts_what_an_interrupted_run_submitted(self, fake: FakeVertex) -> None:
        """A tuning job already carrying this identity is taken over, not submitted again."""
        inputs = checked(fake, tuning_config())
        earlier = VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(
            labelled_request(recorded_view(inputs)["request"], Owner("test"), "sweep")
        )
        assert tuning(fake).create(inputs).id == earlier.name
        creates = [c for c in fake.calls if c.method == "CreateHyperparameterTuningJob"]
        assert len(creates) == 1

    def test_adopt_key_takes_over_a_named_tuning_job(self, fake: FakeVertex) -> None:
        """`adopt:` names an existing tuning job; nothing is submitted."""
        existing = VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(tuning_body())
        created = tuning(fake).create(checked(fake, tuning_config(adopt=existing.name)))
        assert created.id == existing.name and len(fake.tuning_jobs) == 1

    def test_read_brings_back_trials_and_the_best(self, fake: FakeVertex) -> None:
        """Refresh reports every trial and the best trial, whose model directory is given."""
        provider = tuning(fake)
        created = provider.create(
            checked(fake, tuning_config(base_output_directory="gs://bucket/sweep"))
        )
        wait_for({"sweep": waiter_entry(created)}, settings=reaching(fake))
        read = provider.read(created.id, created.outs)
        assert read.outs["state"] == "SUCCEEDED"
        trials = read.outs["trials"]
        assert [t["id"] for t in trials] == ["1", "2", "3", "4", "5"]
        assert {"id", "state", "parameters", "final_metric"} <= set(trials[0])
        best = read.outs["best_trial"]
        assert best["final_metric"] == max(t["final_metric"] for t in trials)
        assert read.outs["output_directory"] == "gs://bucket/sweep"
        model = best_model_directory(read.outs["output_directory"], best)
        assert model == f"gs://bucket/sweep/{best['id']}/model"

    def test_delete_cancels_a_running_tuning_job_first(self) -> None:
        """A running tuning job is cancelled, waited for, then deleted."""
        with FakeVertex(
            queued_s=0, pending_s=0, trial_s=math.inf, cancel_s=0.02, delete_s=0.02
        ) as fake:
            provider = tuning(fake)
            created = provider.create(checked(fake, tuning_config()))
            provider.delete(created.id, created.outs)
            methods = [c.method for c in fake.calls]
            assert methods.index("CancelHyperparameterTuningJob") < methods.index(
                "DeleteHyperparameterTuningJob"
            )
            assert fake.tuning_jobs == {}

    def test_waiter_keeps_the_trials_it_saw(self, fake: FakeVertex) -> None:
        """The waiter's outputs carry each tuning job's trials and best trial."""
        created = tuning(fake).create(checked(fake, tuning_config()))
        waiter = waiter_for(fake, {"sweep": tuning_config(wait="succeeded")})
        stack = registered(fake, "sweep", {})["job"]["stack"]
        result = waiter.create({"jobs": {"sweep": waited(created.id)}, "stack": stack})
        assert result.outs["states"] == {"sweep": "SUCCEEDED"}
        seen = result.outs["trials"]["sweep"]
        assert len(seen["trials"]) == 5 and seen["best_trial"]["state"] == "SUCCEEDED"
        latest = latest_trials([], None, "QUEUED", result.outs["trials"], "sweep")
        assert latest == seen
        assert latest_trials([{"id": "1"}], None, "SUCCEEDED", result.outs["trials"], "sweep")[
            "trials"
        ] == [{"id": "1"}]

    def test_check_and_diff_load_no_google_client(self) -> None:
        """A no-change preview of a tuning job (check, then diff) imports no Google client."""
        stack = {"stack": "test", "project": PROJECT, "region": REGION, "backend": "vertex"}
        props = {"job": {"name": "sweep", "config": tuning_config(), "stack": stack}}
        script = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from vertex_training.resources.tuning_job import HyperparameterTuningJobProvider
provider = HyperparameterTuningJobProvider()
result = provider.check({{}}, {props!r})
assert not result.failures, [f.reason for f in result.failures]
assert not provider.diff("id", result.inputs, result.inputs).changes
loaded = [m for m in sys.modules if m.startswith(("google.cloud.aiplatform", "google.api_core"))]
print(loaded[:5])
sys.exit(1 if loaded else 0)
"""
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr

    def test_provider_pickles_small_and_stable(self) -> None:
        """The serialized provider is deterministic and small, like TrainingJob's."""
        first = serialize_provider(HyperparameterTuningJobProvider())
        assert first == serialize_provider(HyperparameterTuningJobProvider())
        assert len(first) < 300

    def test_resource_type_name(self) -> None:
        """The resource is its own Pulumi type."""
        assert HyperparameterTuningJob._resource_type_name == (
            "dynamic/vertex:HyperparameterTuningJob"
        )
