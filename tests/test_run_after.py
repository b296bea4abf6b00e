"""A job that runs after others (``run_after``): its create waits for them to succeed,
then submits it; one that did not succeed fails the create naming it, and nothing is
submitted. Against the fake JobService, through the TrainingJob provider as the engine
calls it (tests/test_engine_sdks.py runs a pipeline of three through the plugin)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.clients import configured
from tests.test_training_job import IMAGE, checked, viewed
from vertex_training import stackconfig
from vertex_training.backends.vertex import VertexBackend
from vertex_training.errors import BackendError, JobEndedError, SpecError
from vertex_training.resources.cancellation import Cancellation
from vertex_training.resources.job_arguments import UNKNOWN_TEXT
from vertex_training.resources.run_after import wait_to_run
from vertex_training.resources.submission import Owner, labelled_request
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.testing.fake_vertex import FakeVertex

STACK = stackconfig.StackSettings(stack="dev", project="p", region="us-central1")
ANOTHER = "projects/p/locations/us-central1/customJobs/1"


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.05, pending_s=0.05, run_s=0.4) as server:
        yield server


def create(fake: FakeVertex, name: str, **config: Any) -> Any:
    inputs = checked(fake, {"image": IMAGE, "display_name": name, **config}, name)
    return configured(TrainingJobProvider(), fake).create(inputs)


def submitted(fake: FakeVertex, name: str) -> Any:
    [job] = [job for job in fake.jobs.values() if job.display_name == name]
    return job


def refusals(config: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as caught:
        stackconfig.parse_job("train", {"image": IMAGE, **config}, STACK)
    return [str(issue) for issue in caught.value.issues]


class TestRules:
    def test_run_after_takes_job_resource_names_of_either_backend(self) -> None:
        names = [ANOTHER, "local/hyperparameterTuningJobs/7"]
        job = stackconfig.parse_job("train", {"image": IMAGE, "run_after": names}, STACK)
        assert job.run_after == names
        assert job.settings()["run_after"] == names

    def test_a_job_that_runs_after_none_records_no_run_after(self) -> None:
        """So the settings of every job written before the key existed read the same."""
        job = stackconfig.parse_job("train", {"image": IMAGE}, STACK)
        assert "run_after" not in job.settings()

    def test_a_job_name_is_refused_with_the_form_to_write(self) -> None:
        [refusal] = refusals({"run_after": ["prepare"]})
        assert refusal.startswith("vertex-training:jobs.train.run_after[0]: must be a job's")
        assert "projects/p/locations/us-central1/customJobs/ID" in refusal
        assert "pass the other job's ID" in refusal and "(got 'prepare')" in refusal

    def test_a_job_listed_twice_is_refused(self) -> None:
        [refusal] = refusals({"run_after": [ANOTHER, ANOTHER]})
        assert refusal.startswith("vertex-training:jobs.train.run_after[1]: is listed twice")

    def test_an_adopted_job_runs_after_nothing(self) -> None:
        adopted = "projects/p/locations/us-central1/customJobs/2"
        [refusal] = refusals({"run_after": [ANOTHER], "adopt": adopted})
        assert refusal.startswith("vertex-training:jobs.train.run_after: an adopted job")
        assert "remove run_after, or remove adopt" in refusal


class TestDiff:
    def test_a_new_id_to_run_after_updates_the_job_in_place_even_unknown(self) -> None:
        """The job it runs after was replaced: its new ID, unknown in a preview, is no
        reason to submit this one again."""
        old = checked(None, {"image": IMAGE, "run_after": [ANOTHER]})
        for after in (UNKNOWN_TEXT, "projects/p/locations/us-central1/customJobs/2"):
            new = {**old, "config": {**old["config"], "run_after": [after]}}
            diff = TrainingJobProvider().diff("id", old, new)
            assert (diff.changes, diff.replaces) == (True, []), after


class TestCreate:
    def test_a_job_is_submitted_only_once_the_jobs_it_runs_after_succeeded(
        self, fake: FakeVertex
    ) -> None:
        prepare = create(fake, "prepare")
        fake.script("clean", run_s=0.8)
        clean = create(fake, "clean")
        train = create(fake, "train", run_after=[prepare.id, clean.id])
        assert train.outs["state"] == "QUEUED"
        first, second, then = (submitted(fake, n) for n in ("prepare", "clean", "train"))
        assert first.state.name == second.state.name == "JOB_STATE_SUCCEEDED"
        assert then.create_time >= max(first.end_time, second.end_time)

    def test_one_that_failed_fails_the_create_naming_it_and_submits_nothing(
        self, fake: FakeVertex
    ) -> None:
        fake.script("prepare", outcome="FAILED", error_message="replica workerpool0-0 exited 3")
        prepare = create(fake, "prepare")
        with pytest.raises(JobEndedError) as caught:
            create(fake, "train", run_after=[prepare.id])
        message = str(caught.value)
        assert message.startswith(
            "job train runs after a job that did not succeed, so it was not submitted; once "
            "that job is submitted again (change it, or bump its `rerun`)"
        )
        # Named by its Pulumi resource (its labels), with its failure.
        assert f"job prepare ({prepare.id}) ended FAILED" in message
        assert "replica workerpool0-0 exited 3" in message
        assert [job.display_name for job in fake.jobs.values()] == ["prepare"]

    def test_one_that_is_gone_fails_the_create_at_once(self, fake: FakeVertex) -> None:
        gone = "projects/test-project/locations/us-central1/customJobs/999"
        with pytest.raises(
            BackendError, match=r"job train runs after .*/999, which does not exist"
        ):
            create(fake, "train", run_after=[gone])
        assert fake.jobs == {}

    def test_an_adopted_or_rerun_job_does_not_wait_for_ended_jobs_again(
        self, fake: FakeVertex
    ) -> None:
        """The second create of the same job (a rerun after a killed engine) finds the
        jobs it runs after ended and takes over the job the first submitted."""
        prepare = create(fake, "prepare")
        first = create(fake, "train", run_after=[prepare.id])
        again = create(fake, "train", run_after=[prepare.id])
        assert again.id == first.id
        assert len(fake.jobs) == 2


class TestStop:
    def test_the_engines_cancel_stops_the_wait_and_nothing_is_submitted(
        self, fake: FakeVertex
    ) -> None:
        fake.script("prepare", queued_s=0, pending_s=0, run_s=math.inf)
        prepare = create(fake, "prepare")
        cancel = Cancellation()
        threading.Timer(0.5, cancel.cancel).start()
        settings = configured(TrainingJobProvider(), fake).settings
        with pytest.raises(BackendError) as caught:
            wait_to_run("train", [prepare.id], settings, cancel=cancel)
        assert str(caught.value) == (
            "the wait of job train for the jobs it runs after was stopped (Ctrl-C); last "
            "seen: prepare RUNNING; it was not submitted, and the next `pulumi up` waits for "
            "them again"
        )


class TestRetries:
    def test_a_failed_job_is_followed_to_the_attempt_its_resource_submitted_after_it(
        self, fake: FakeVertex
    ) -> None:
        """The ID ``run_after`` names is the first attempt's; when that failed, the newer
        job of the same resource (its retry's next attempt) is waited for instead."""
        fake.script(lambda job: job.labels.get("try") == "1", outcome="FAILED")
        prepare = create(fake, "prepare", labels={"try": "1"})
        backend = VertexBackend("test-project", "us-central1", api_endpoint=fake.address)
        deadline = time.monotonic() + 10
        while backend.get(prepare.id).state != "FAILED" and time.monotonic() < deadline:
            time.sleep(0.05)
        inputs = viewed(fake, {"image": IMAGE, "display_name": "prepare"}, "prepare")
        again = backend.submit(labelled_request(inputs["request"], Owner("test"), "prepare", 2))
        train = create(fake, "train", run_after=[prepare.id])
        assert train.outs["state"] == "QUEUED"
        assert submitted(fake, "train").create_time >= fake.jobs[again.name].end_time
