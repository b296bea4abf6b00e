"""The readiness checkers (``vertex_training.resources.readiness``): what the wait does
with a job after each read, against Vertex AI's REST resources and the fake service.

The responses under tests/recorded/vertex-rest/ are the three kinds of job the waiter
waits for, in their states, each shaped as the v1 REST reference gives the resource:

- CustomJob:
  https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.customJobs
- HyperparameterTuningJob: https://cloud.google.com/vertex-ai/docs/reference/rest/v1/
  projects.locations.hyperparameterTuningJobs
- TrainingPipeline: https://cloud.google.com/vertex-ai/docs/reference/rest/v1/
  projects.locations.trainingPipelines
- their states: https://cloud.google.com/vertex-ai/docs/reference/rest/v1/JobState and
  https://cloud.google.com/vertex-ai/docs/reference/rest/v1/PipelineState; a failed
  job's ``error`` is a google.rpc.Status (``code``, ``message``).

They were written from the reference's fields (no test reaches a live project), with
the error messages of the public reports ``vertex_training.api.failures`` cites. The
client library parses each strictly (an unknown field fails the test), and each goes
through the backends' own conversion to a ``JobStatus``, as ``get`` converts what the
service answers. The same requests are then submitted to the fake Vertex service, whose
answers the same checkers read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from vertex_training.api import states
from vertex_training.backends.base import JobStatus, location_of
from vertex_training.backends.vertex import VertexBackend, logs_url_of
from vertex_training.resources.readiness import (
    CHECKERS,
    CUSTOM_JOB,
    TRAINING_PIPELINE,
    TUNING_JOB,
    Decision,
    Shortfall,
    Verdict,
    readiness_of,
)
from vertex_training.resources.wait_plan import JobWait
from vertex_training.testing import FakeVertex, ManualClock

RECORDED = Path(__file__).resolve().parent / "recorded" / "vertex-rest"
HOUR_S = 3600.0


def recorded(file: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((RECORDED / file).read_text())
    return body


def status_of(body: dict[str, Any]) -> JobStatus:
    """A recorded resource as the backend reads it (``VertexBackend.get``)."""
    from google.cloud.aiplatform_v1.types import (
        CustomJob,
        HyperparameterTuningJob,
        TrainingPipeline,
    )

    from vertex_training.backends.vertex import _job_status
    from vertex_training.backends.vertex_pipelines import pipeline_status

    text = json.dumps(body)
    kind = readiness_of(body["name"])
    if kind is TRAINING_PIPELINE:
        return pipeline_status(TrainingPipeline.from_json(text))
    message = CustomJob if kind is CUSTOM_JOB else HyperparameterTuningJob
    return _job_status(message.from_json(text))


def asked(
    resource_name: str,
    until: str = "succeeded",
    timeout_s: float = 24 * HOUR_S,
    start_timeout_s: float | None = None,
    retry: bool = False,
) -> JobWait:
    """A wait for the job ``resource_name``, as a plan gives it."""
    resubmission = {"retry": {"when": ["capacity"], "attempts": []}} if retry else None
    return JobWait(
        name="train",
        resource_name=resource_name,
        until=until,
        timeout_s=timeout_s,
        start_timeout_s=start_timeout_s,
        location=location_of(resource_name),
        resubmission=resubmission,
    )


def decide(file: str, until: str = "succeeded", waited_s: float = 60.0, **wait: Any) -> Decision:
    body = recorded(file)
    return readiness_of(body["name"]).check(
        asked(body["name"], until, **wait), status_of(body), waited_s
    )


class TestRecordedResponses:
    """Each kind's checker on its recorded responses."""

    @pytest.mark.parametrize(
        ("file", "until", "verdict"),
        [
            ("custom-job-pending.json", "running", Verdict.WAITING),
            ("custom-job-running.json", "running", Verdict.REACHED),
            ("custom-job-running.json", "succeeded", Verdict.WAITING),
            ("custom-job-succeeded.json", "succeeded", Verdict.REACHED),
            ("custom-job-succeeded.json", "running", Verdict.REACHED),
            ("custom-job-failed.json", "running", Verdict.FAILED),
            ("custom-job-failed.json", "succeeded", Verdict.FAILED),
            ("tuning-job-running.json", "running", Verdict.REACHED),
            ("tuning-job-running.json", "succeeded", Verdict.WAITING),
            ("tuning-job-succeeded.json", "succeeded", Verdict.REACHED),
            ("tuning-job-failed.json", "succeeded", Verdict.FAILED),
            ("training-pipeline-pending.json", "running", Verdict.WAITING),
            ("training-pipeline-running.json", "running", Verdict.REACHED),
            ("training-pipeline-running.json", "succeeded", Verdict.WAITING),
            ("training-pipeline-succeeded.json", "succeeded", Verdict.REACHED),
            ("training-pipeline-failed.json", "succeeded", Verdict.FAILED),
            ("training-pipeline-cancelled.json", "running", Verdict.FAILED),
        ],
    )
    def test_each_state_gives_its_verdict(self, file: str, until: str, verdict: Verdict) -> None:
        """Waiting until started, until succeeded, or failed: whatever ``until`` asks of
        a job that ended FAILED or CANCELLED, it fails the wait."""
        assert decide(file, until).verdict is verdict

    @pytest.mark.parametrize("file", sorted(path.name for path in RECORDED.glob("*.json")))
    def test_each_response_is_its_kinds_and_reads_as_its_state(self, file: str) -> None:
        """The REST state is one of its kind's states, read as the job state of the
        same meaning; its collection names its checker."""
        body = recorded(file)
        checker = readiness_of(body["name"])
        prefixes = {
            "customJobs": "custom-job-",
            "hyperparameterTuningJobs": "tuning-job-",
            "trainingPipelines": "training-pipeline-",
        }
        assert file.startswith(prefixes[checker.collection])
        assert status_of(body).state == checker.service_states[body["state"]]

    def test_a_failed_job_fails_with_its_error_and_logs(self) -> None:
        """The problem carries the state and the error's message; its text is the wait's."""
        body = recorded("custom-job-failed.json")
        decision = decide("custom-job-failed.json")
        assert decision.problem is not None
        assert decision.problem.shortfall is Shortfall.ENDED
        assert decision.problem.state == states.FAILED
        assert decision.problem.error == body["error"]["message"]
        text = decision.problem.text(asked(body["name"]), logs_url_of)
        assert text == (
            f"job train ({body['name']}) ended FAILED: {body['error']['message']}"
            f"\n  logs: {logs_url_of(body['name'])}"
        )

    def test_a_cancelled_pipeline_without_an_error_says_none_was_given(self) -> None:
        decision = decide("training-pipeline-cancelled.json")
        assert decision.problem is not None
        assert decision.problem.state == states.CANCELLED
        name = recorded("training-pipeline-cancelled.json")["name"]
        assert "ended CANCELLED: no error given" in decision.problem.text(asked(name), str)

    def test_a_stockout_of_a_job_with_retry_may_be_retried(self) -> None:
        """A FAILED job with ``retry`` is RETRY, carrying the problem it fails with should
        no attempt follow; without ``retry`` it fails."""
        retried = decide("custom-job-failed-capacity.json", retry=True)
        assert retried.verdict is Verdict.RETRY
        assert retried.problem is not None and retried.problem.error.startswith("Resources are")
        assert decide("custom-job-failed-capacity.json").verdict is Verdict.FAILED

    def test_a_cancelled_job_with_retry_is_not_retried(self) -> None:
        """Only FAILED is retried: a CANCELLED job is someone's decision."""
        decision = decide("training-pipeline-cancelled.json", retry=True)
        assert decision.verdict is Verdict.FAILED

    def test_each_kinds_states_are_the_client_librarys(self) -> None:
        """JobState for custom and tuning jobs, PipelineState for pipelines (their
        UNSPECIFIED aside), each read as the job state the backend gives."""
        from google.cloud.aiplatform_v1.types import JobState, PipelineState

        for checker, enum in ((CUSTOM_JOB, JobState), (TUNING_JOB, JobState)):
            assert set(checker.service_states) == {s.name for s in enum if s.value}
        pipelines = {s.name for s in PipelineState if s.value}
        assert set(TRAINING_PIPELINE.service_states) == pipelines

    def test_the_checkers_are_one_per_collection(self) -> None:
        """Custom jobs, tuning jobs and pipelines, on Vertex AI and on this machine."""
        assert set(CHECKERS) == {"customJobs", "hyperparameterTuningJobs", "trainingPipelines"}
        assert readiness_of("local/trainingPipelines/3") is TRAINING_PIPELINE
        assert readiness_of("local/hyperparameterTuningJobs/2") is TUNING_JOB
        assert readiness_of("projects/p/locations/r/customJobs/1") is CUSTOM_JOB
        for checker in CHECKERS.values():
            assert checker.reference.endswith(checker.collection)


class TestTimeouts:
    """The timeouts, from how long the attempt has been waited for (no clock read)."""

    NAME = "projects/123456789012/locations/us-central1/customJobs/8473629105738291200"

    def test_a_job_not_started_in_its_start_timeout_fails(self) -> None:
        decision = decide("custom-job-pending.json", "running", 600, start_timeout_s=600)
        assert decision.problem is not None
        assert decision.problem.shortfall is Shortfall.NOT_STARTED
        text = decision.problem.text(asked(self.NAME, start_timeout_s=600), str)
        assert text.startswith(
            f"job train ({self.NAME}) is still PENDING after 600s, the "
            "vertex-training:jobs.train.wait.start_timeout it may take to start running; it "
            "stays submitted"
        )

    def test_a_running_job_is_past_its_start_timeout(self) -> None:
        """A job that started is bound by its timeout alone."""
        decision = decide("custom-job-running.json", "succeeded", 601, start_timeout_s=600)
        assert decision.verdict is Verdict.WAITING
        assert decision.limit_s == 24 * HOUR_S

    def test_a_job_not_there_in_its_timeout_fails(self) -> None:
        decision = decide("tuning-job-running.json", "succeeded", 3630, timeout_s=3630)
        assert decision.problem is not None
        assert decision.problem.shortfall is Shortfall.TIMED_OUT
        name = recorded("tuning-job-running.json")["name"]
        text = decision.problem.text(asked(name, timeout_s=3630), lambda _: "LOGS")
        assert text == (
            f"job train ({name}) is still RUNNING after waiting 3630s for it to be "
            "succeeded; it keeps running and stays in the stack, and the next `pulumi up` "
            "waits for it again\n  logs: LOGS"
        )

    def test_a_waiting_job_is_read_again_before_its_next_timeout(self) -> None:
        """A job yet to start: no later than its start timeout, when that is the sooner."""
        pending = decide("training-pipeline-pending.json", "succeeded", 5, start_timeout_s=900)
        assert (pending.verdict, pending.limit_s) == (Verdict.WAITING, 900)
        assert decide("training-pipeline-pending.json").limit_s == 24 * HOUR_S

    def test_a_job_that_is_gone_fails_with_a_refresh(self) -> None:
        decision = CUSTOM_JOB.check(asked(self.NAME), None, 0.0)
        assert decision.problem is not None
        assert decision.problem.text(asked(self.NAME), str) == (
            f"job train ({self.NAME}) no longer exists; run `pulumi refresh`"
        )


def request_of(file: str) -> dict[str, Any]:
    """A recorded resource's request: what a create sends (no output-only field)."""
    output_only = {
        "name",
        "state",
        "createTime",
        "startTime",
        "endTime",
        "updateTime",
        "error",
        "trials",
        "webAccessUris",
        "trainingTaskMetadata",
        "modelId",
    }
    body = {key: value for key, value in recorded(file).items() if key not in output_only}
    if "modelToUpload" in body:
        upload = body["modelToUpload"]
        body["modelToUpload"] = {"displayName": upload["displayName"]} | {
            "containerSpec": upload["containerSpec"]
        }
    return body


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    """A fake on a manual clock: 10 s queued, 10 s pending, 100 s running, a trial 30 s."""
    with FakeVertex(queued_s=10, pending_s=10, run_s=100, trial_s=30, clock=clock) as fake:
        yield fake


class TestAgainstTheFake:
    """The same requests, submitted to the fake; its answers read by the same checkers."""

    @pytest.mark.parametrize(
        "file",
        ["custom-job-running.json", "tuning-job-running.json", "training-pipeline-running.json"],
    )
    def test_a_job_is_waited_for_until_it_succeeds(
        self, fake: FakeVertex, clock: ManualClock, file: str
    ) -> None:
        """Waiting while queued, pending and running; reached once it has succeeded, and
        from RUNNING on for a wait until it runs."""
        backend = VertexBackend("123456789012", "us-central1", api_endpoint=fake.address)
        name = backend.submit(request_of(file)).name
        checker = readiness_of(name)
        assert checker is readiness_of(recorded(file)["name"])
        seen: list[tuple[str, Verdict, Verdict]] = []
        for _ in range(100):
            status = backend.get(name)
            assert status is not None
            running = checker.check(asked(name, "running"), status, 0.0).verdict
            succeeded = checker.check(asked(name), status, 0.0).verdict
            if not seen or seen[-1][0] != status.state:
                seen.append((status.state, running, succeeded))
            if status.state in states.TERMINAL_STATES:
                break
            clock.advance(5)
        assert seen[0] == (states.QUEUED, Verdict.WAITING, Verdict.WAITING)
        assert (states.RUNNING, Verdict.REACHED, Verdict.WAITING) in seen
        assert seen[-1] == (states.SUCCEEDED, Verdict.REACHED, Verdict.REACHED)

    def test_a_job_that_fails_fails_the_wait_with_the_fakes_error(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        message = recorded("custom-job-failed.json")["error"]["message"]
        fake.script("train", outcome=states.FAILED, error_message=message)
        backend = VertexBackend("123456789012", "us-central1", api_endpoint=fake.address)
        name = backend.submit(request_of("custom-job-failed.json")).name
        clock.advance(200)
        decision = CUSTOM_JOB.check(asked(name), backend.get(name), 200.0)
        assert decision.verdict is Verdict.FAILED
        assert decision.problem is not None and decision.problem.error == message

    def test_a_decision_reads_no_clock(self, fake: FakeVertex, clock: ManualClock) -> None:
        """The same status and time waited give the same decision, whatever the time."""
        backend = VertexBackend("123456789012", "us-central1", api_endpoint=fake.address)
        name = backend.submit(request_of("custom-job-pending.json")).name
        status = backend.get(name)
        before = CUSTOM_JOB.check(asked(name, start_timeout_s=30), status, 10.0)
        clock.advance(10 * HOUR_S)
        assert CUSTOM_JOB.check(asked(name, start_timeout_s=30), status, 10.0) == before
        assert before.limit_s == 30 and before.limit_s < math.inf
