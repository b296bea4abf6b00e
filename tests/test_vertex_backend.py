"""VertexBackend against the fake Vertex JobService, over loopback gRPC."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from vertex_training.api import states
from vertex_training.backends.base import JobStatus
from vertex_training.backends.pacing import PacingPolicy
from vertex_training.backends.vertex import RetryPolicy, VertexBackend
from vertex_training.errors import PermanentError, TransientError, UncertainError
from vertex_training.testing import FakeVertex

pytestmark = pytest.mark.timeout(60)

PROJECT, REGION = "test-project", "us-central1"
#: Retries and polls short enough for tests, same shape as production.
FAST_RETRY = RetryPolicy(initial_s=0.01, max_s=0.05, multiplier=2.0, deadline_s=2.0)
FAST_POLLING = RetryPolicy(initial_s=0.01, max_s=0.05, multiplier=1.5, deadline_s=5.0)
#: Calls refused for quota made again within FAST_RETRY's longest wait (0.05 s).
FAST_PACING = PacingPolicy(window_s=1.0, min_rate_per_s=20.0, lift_after_s=2.0)
WAIT_S = 5.0
#: Modules a no-change preview must not pay for.
CLIENT_LIBRARIES = (
    "google.cloud.aiplatform",
    "google.api_core",
    "google.auth",
    "google.protobuf",
    "grpc",
)


def body(display_name: str = "t", **labels: str) -> dict[str, Any]:
    """A CustomJob request body in REST JSON form, as `vertex-training render` prints."""
    return {
        "displayName": display_name,
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": "1",
                    "containerSpec": {"imageUri": "gcr.io/p/i"},
                }
            ]
        },
        "labels": labels or {"a": "b"},
    }


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.02, pending_s=0.02, run_s=0.1, cancel_s=0.02, delete_s=0.02) as fake:
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


def wait_until(backend: VertexBackend, name: str, done: Callable[[JobStatus], bool]) -> JobStatus:
    """Poll ``get`` until ``done(status)``; fail after WAIT_S."""
    deadline = time.monotonic() + WAIT_S
    while True:
        status = backend.get(name)
        assert status is not None, f"{name} vanished"
        if done(status):
            return status
        assert time.monotonic() < deadline, f"{name} stuck in {status.state}"
        time.sleep(0.01)


def calls_to(fake: FakeVertex, method: str) -> int:
    return sum(call.method == method for call in fake.calls)


class TestSubmit:
    def test_returns_the_job_queued_with_a_server_chosen_id(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """submit returns the created job: QUEUED, a numeric ID the server chose."""
        status = backend.submit(body("t", a="b"))
        assert status.state == states.QUEUED
        assert status.job_id.isdecimal()
        assert status.name == f"projects/{PROJECT}/locations/{REGION}/customJobs/{status.job_id}"
        assert (status.display_name, status.labels) == ("t", {"a": "b"})
        assert status.create_time.endswith("Z")
        assert status.start_time == ""

    def test_sends_the_body_under_the_location(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """The REST JSON body becomes the CustomJob of CreateCustomJob in the location."""
        backend.submit(body())
        (call,) = [c for c in fake.calls if c.method == "CreateCustomJob"]
        assert call.request.parent == f"projects/{PROJECT}/locations/{REGION}"
        pool = call.request.custom_job.job_spec.worker_pool_specs[0]
        assert (pool.replica_count, pool.container_spec.image_uri) == (1, "gcr.io/p/i")

    def test_body_that_is_not_a_custom_job_is_permanent(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """An unknown field in the body fails before any call, naming the field."""
        with pytest.raises(PermanentError, match="colour"):
            backend.submit({**body(), "colour": "red"})
        assert fake.calls == []

    def test_invalid_argument_is_permanent_with_the_api_message(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """INVALID_ARGUMENT raises PermanentError at once, carrying Vertex's message."""
        with pytest.raises(PermanentError, match=r"custom_job\.display_name; Message: Required"):
            backend.submit(body(""))
        assert calls_to(fake, "CreateCustomJob") == 1

    def test_permission_denied_is_permanent_with_the_api_message(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """PERMISSION_DENIED raises PermanentError at once, carrying Vertex's message."""
        message = "Permission 'aiplatform.customJobs.create' denied on resource."
        fake.fail_next("CreateCustomJob", grpc.StatusCode.PERMISSION_DENIED, message=message)
        with pytest.raises(PermanentError) as raised:
            backend.submit(body())
        assert str(raised.value) == message
        assert calls_to(fake, "CreateCustomJob") == 1

    def test_not_found_on_create_is_permanent(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """NOT_FOUND on create (a missing project or network) is PermanentError."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.NOT_FOUND, message="no network")
        with pytest.raises(PermanentError, match="no network"):
            backend.submit(body())

    def test_resource_exhausted_twice_then_success_is_retried(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """RESOURCE_EXHAUSTED twice, then success: submit retries and makes exactly one job."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.RESOURCE_EXHAUSTED, times=2)
        status = backend.submit(body())
        assert calls_to(fake, "CreateCustomJob") == 3
        assert list(fake.jobs) == [status.name]

    def test_resource_exhausted_is_retried(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """RESOURCE_EXHAUSTED (quota) on create is made again, in its next paced turn."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.RESOURCE_EXHAUSTED)
        assert backend.submit(body()).state == states.QUEUED
        assert calls_to(fake, "CreateCustomJob") == 2

    @pytest.mark.parametrize(
        "code",
        [
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.StatusCode.INTERNAL,
            grpc.StatusCode.UNKNOWN,
            grpc.StatusCode.UNAVAILABLE,
        ],
    )
    def test_ambiguous_create_failure_is_not_retried(
        self, fake: FakeVertex, backend: VertexBackend, code: grpc.StatusCode
    ) -> None:
        """A create that may have taken effect is not retried; the label finds the job.
        (The provider retries it after looking: tests/test_create_retries.py.)"""
        fake.fail_next("CreateCustomJob", code, take_effect=True)
        with pytest.raises(UncertainError):
            backend.submit(body("t", identity="abc"))
        assert calls_to(fake, "CreateCustomJob") == 1
        assert len(backend.find_by_label("identity", "abc")) == 1

    def test_retries_exhausted_is_transient(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """Quota refusals with nothing admitted for the retry deadline raise TransientError."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.RESOURCE_EXHAUSTED, times=10_000)
        with pytest.raises(TransientError, match="Injected RESOURCE_EXHAUSTED"):
            backend.submit(body())
        assert fake.jobs == {}


class TestGet:
    def test_follows_the_job_to_succeeded(self, backend: VertexBackend) -> None:
        """get reports the job through to SUCCEEDED, with RFC 3339 start and end times."""
        name = backend.submit(body()).name
        status = wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED
        assert status.error == ""
        assert status.create_time <= status.start_time < status.end_time
        assert all(t.endswith("Z") for t in (status.start_time, status.end_time))

    def test_failed_job_carries_its_error_message(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A FAILED job's status carries the job's error message."""
        fake.script("bad", outcome="FAILED", error_message="exit status 1")
        name = backend.submit(body("bad")).name
        status = wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)
        assert (status.state, status.error) == (states.FAILED, "exit status 1")

    def test_web_access_uris_are_reported(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """A running job with web access enabled reports its interactive shell URIs."""
        fake.script("shell", run_s=10)
        request = body("shell")
        request["jobSpec"]["enableWebAccess"] = True
        name = backend.submit(request).name
        status = wait_until(backend, name, lambda s: s.state == states.RUNNING)
        assert list(status.web_access_uris) == ["workerpool0-0"]

    def test_unknown_job_is_none(self, backend: VertexBackend) -> None:
        """get of a job that does not exist returns None."""
        assert backend.get(f"projects/{PROJECT}/locations/{REGION}/customJobs/1") is None

    def test_unavailable_is_retried(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """UNAVAILABLE on get is retried until it succeeds."""
        name = backend.submit(body()).name
        fake.fail_next("GetCustomJob", grpc.StatusCode.UNAVAILABLE, times=2)
        status = backend.get(name)
        assert status is not None
        assert status.name == name
        assert calls_to(fake, "GetCustomJob") == 3

    def test_deadline_exceeded_is_retried(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """DEADLINE_EXCEEDED on a read is retried: reads are idempotent."""
        name = backend.submit(body()).name
        fake.fail_next("GetCustomJob", grpc.StatusCode.DEADLINE_EXCEEDED)
        assert backend.get(name) is not None

    def test_permission_denied_is_permanent(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """PERMISSION_DENIED on get raises PermanentError with the API's message."""
        fake.fail_next("GetCustomJob", grpc.StatusCode.PERMISSION_DENIED, message="denied")
        with pytest.raises(PermanentError, match="denied"):
            backend.get(f"projects/{PROJECT}/locations/{REGION}/customJobs/1")


class TestFindByLabel:
    def test_returns_matching_jobs_newest_first(self, backend: VertexBackend) -> None:
        """find_by_label returns only the jobs with that label value, newest first."""
        first = backend.submit(body("one", identity="x")).name
        backend.submit(body("other", identity="y"))
        second = backend.submit(body("two", identity="x")).name
        assert [s.name for s in backend.find_by_label("identity", "x")] == [second, first]

    def test_no_match_is_an_empty_list(self, backend: VertexBackend) -> None:
        """find_by_label with no matching job returns []."""
        backend.submit(body())
        assert backend.find_by_label("identity", "none") == []

    def test_sends_a_label_filter(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """The lookup is one ListCustomJobs call filtered on labels.KEY="VALUE"."""
        backend.find_by_label("identity", "x")
        (call,) = [c for c in fake.calls if c.method == "ListCustomJobs"]
        assert call.request.filter == 'labels.identity="x"'
        assert call.request.parent == f"projects/{PROJECT}/locations/{REGION}"


class TestCancel:
    def test_running_job_ends_cancelled(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """cancel of a RUNNING job leads to CANCELLED, with the cancellation as error."""
        fake.script("long", run_s=60)
        name = backend.submit(body("long")).name
        wait_until(backend, name, lambda s: s.state == states.RUNNING)
        backend.cancel(name)
        status = wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)
        assert status.state == states.CANCELLED
        assert status.error != ""
        assert status.end_time != ""

    def test_ended_job_is_fine(self, backend: VertexBackend) -> None:
        """cancel of a job that already ended (FAILED_PRECONDITION) is not an error."""
        name = backend.submit(body()).name
        wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)
        backend.cancel(name)
        status = backend.get(name)
        assert status is not None
        assert status.state == states.SUCCEEDED

    def test_unknown_job_is_fine(self, backend: VertexBackend) -> None:
        """cancel of a job that does not exist is not an error."""
        backend.cancel(f"projects/{PROJECT}/locations/{REGION}/customJobs/1")


class TestDelete:
    def test_deletes_an_ended_job_and_waits_for_it(self, backend: VertexBackend) -> None:
        """delete waits for the operation; afterwards get returns None."""
        name = backend.submit(body()).name
        wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)
        backend.delete(name)
        assert backend.get(name) is None

    def test_unknown_job_is_done(self, backend: VertexBackend) -> None:
        """delete of a job that does not exist is not an error."""
        backend.delete(f"projects/{PROJECT}/locations/{REGION}/customJobs/1")

    def test_running_job_is_refused_with_the_api_message(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """Vertex refuses to delete a running job: PermanentError saying why."""
        fake.script("long", run_s=60)
        name = backend.submit(body("long")).name
        with pytest.raises(PermanentError, match="cannot be deleted"):
            backend.delete(name)

    def test_unavailable_while_polling_is_retried(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A transient error while polling the operation is retried."""
        name = backend.submit(body()).name
        wait_until(backend, name, lambda s: s.state in states.TERMINAL_STATES)
        fake.fail_next("GetOperation", grpc.StatusCode.UNAVAILABLE)
        backend.delete(name)
        assert backend.get(name) is None


class TestUrls:
    NAME = f"projects/{PROJECT}/locations/{REGION}/customJobs/123"

    def test_console_url(self) -> None:
        """console_url is the job's training page in the console."""
        assert VertexBackend(PROJECT, REGION).console_url(self.NAME) == (
            "https://console.cloud.google.com/vertex-ai/locations/us-central1/training/123/cpu"
            "?project=test-project"
        )

    def test_logs_url_filters_on_the_job_id(self) -> None:
        """logs_url opens Cloud Logging filtered on resource.labels.job_id."""
        url = VertexBackend(PROJECT, REGION).logs_url(self.NAME)
        assert url.startswith("https://console.cloud.google.com/logs/query;query=")
        assert "resource.labels.job_id%3D%22123%22" in url
        assert url.endswith("?project=test-project")

    def test_other_names_are_refused(self) -> None:
        """A name that is not a CustomJob resource name is a ValueError."""
        with pytest.raises(ValueError, match="not a CustomJob resource name"):
            VertexBackend(PROJECT, REGION).console_url("customJobs/123")


class TestLaziness:
    @pytest.mark.timeout(120)
    def test_import_loads_no_google_client_library(self) -> None:
        """Importing the module and making a backend imports no Google client library."""
        # "google" and "google.cloud" themselves are namespace packages that site
        # imports at start-up; what must stay out are the libraries in them.
        code = (
            "import sys\n"
            "from vertex_training.backends.vertex import VertexBackend\n"
            "VertexBackend('p', 'us-central1')\n"
            f"loaded = [m for m in sys.modules if m.startswith({CLIENT_LIBRARIES!r})]\n"
            "assert not loaded, loaded\n"
        )
        result = subprocess.run(
            [sys.executable, "-c", code],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=Path(__file__).parents[1],
        )
        assert result.returncode == 0, result.stderr


class TestUnreachableEndpoint:
    """An endpoint no connection can be made to is told within seconds, by name."""

    @staticmethod
    def closed_port() -> str:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            return f"127.0.0.1:{probe.getsockname()[1]}"

    def test_a_dead_endpoint_is_told_within_30s_naming_the_key(self) -> None:
        """Connection refused: one TransientError within 30 s that names the endpoint and
        vertex-training:apiEndpoint; every later call fails at once with it."""
        endpoint = self.closed_port()
        dead = VertexBackend("p", "us-central1", api_endpoint=endpoint)
        started = time.monotonic()
        with pytest.raises(TransientError) as caught:
            dead.find_by_label("k", "v")
        assert time.monotonic() - started < 30
        message = str(caught.value)
        assert f"cannot reach Vertex AI at {endpoint}" in message
        assert "vertex-training:apiEndpoint" in message and "Nothing was submitted" in message
        started = time.monotonic()
        with pytest.raises(TransientError, match="cannot reach Vertex AI"):
            dead.submit(body())
        assert time.monotonic() - started < 1

    def test_an_endpoint_that_answered_keeps_its_retries(self, fake: FakeVertex) -> None:
        """Once the fake answered, a later UNAVAILABLE is retried as before, not reported."""
        backend = VertexBackend("p", "us-central1", api_endpoint=fake.address)
        backend.find_by_label("k", "v")
        fake.fail_next("ListCustomJobs", grpc.StatusCode.UNAVAILABLE, times=1)
        assert backend.find_by_label("k", "v") == []
