"""The fake Vertex JobService, driven by the real JobServiceClient over loopback gRPC.

A ManualClock drives job timelines, so each test moves time explicitly and never sleeps.
"""

from __future__ import annotations

import contextlib
import math
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1 import JobServiceClient
from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport
from google.cloud.aiplatform_v1.types import CustomJob, DeleteOperationMetadata, JobState

from tests.clients import job_service_client
from vertex_training.testing import FakeVertex, ManualClock
from vertex_training.testing.fake_vertex import main as fake_vertex_main

pytestmark = pytest.mark.timeout(60)

PARENT = "projects/test-project/locations/us-central1"
QUEUED_S, PENDING_S, RUN_S, CANCEL_S, DELETE_S = 1.0, 2.0, 10.0, 1.0, 1.0


def job_body(display_name: str = "train", **overrides: Any) -> dict[str, Any]:
    """A valid CustomJob, as the client's dict form."""
    body: dict[str, Any] = {
        "display_name": display_name,
        "job_spec": {
            "worker_pool_specs": [
                {
                    "machine_spec": {"machine_type": "n1-standard-4"},
                    "replica_count": 1,
                    "container_spec": {"image_uri": "gcr.io/p/i"},
                }
            ]
        },
        "labels": {"team": "ml"},
    }
    body.update(overrides)
    return body


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    with FakeVertex(
        queued_s=QUEUED_S,
        pending_s=PENDING_S,
        run_s=RUN_S,
        cancel_s=CANCEL_S,
        delete_s=DELETE_S,
        clock=clock,
    ) as fake:
        yield fake


@pytest.fixture
def client(fake: FakeVertex) -> Iterator[JobServiceClient]:
    with job_service_client(fake.address) as service:
        yield service


def create(client: JobServiceClient, **overrides: Any) -> CustomJob:
    return client.create_custom_job(parent=PARENT, custom_job=job_body(**overrides))


def state_of(client: JobServiceClient, name: str) -> str:
    return client.get_custom_job(name=name).state.name


class TestCreateCustomJob:
    def test_returns_the_job_queued_with_a_server_chosen_numeric_id(
        self, client: JobServiceClient
    ) -> None:
        """CreateCustomJob answers with the job itself, QUEUED, named by a numeric ID."""
        job = create(client)
        parts = client.parse_custom_job_path(job.name)
        assert (parts["project"], parts["location"]) == ("test-project", "us-central1")
        assert parts["custom_job"].isdecimal()
        assert job.state == JobState.JOB_STATE_QUEUED
        assert job.create_time == job.update_time
        assert job.display_name == "train"
        assert dict(job.labels) == {"team": "ml"}

    def test_each_job_gets_a_new_id(self, client: JobServiceClient) -> None:
        """Two identical requests make two jobs: the API has no idempotency key."""
        assert create(client).name != create(client).name

    def test_concurrent_creates_get_distinct_ids(
        self, fake: FakeVertex, client: JobServiceClient
    ) -> None:
        """Creates from many threads at once each get their own job."""
        with ThreadPoolExecutor(max_workers=8) as pool:
            names = list(pool.map(lambda _: create(client).name, range(40)))
        assert len(set(names)) == 40
        assert set(fake.jobs) == set(names)

    def test_ignores_output_only_fields_in_the_request(self, client: JobServiceClient) -> None:
        """State and times sent by the client are replaced by the server's."""
        job = create(client, state="JOB_STATE_SUCCEEDED", name=f"{PARENT}/customJobs/1")
        assert job.state == JobState.JOB_STATE_QUEUED
        assert not job.name.endswith("/customJobs/1")

    def test_accepts_an_empty_pool_that_keeps_a_position_free(
        self, client: JobServiceClient
    ) -> None:
        """An empty worker pool spec after the first one is allowed."""
        body = job_body()
        pools = body["job_spec"]["worker_pool_specs"]
        pools += [{}, {"replica_count": 2, "container_spec": {"image_uri": "gcr.io/p/ps"}}]
        job = client.create_custom_job(parent=PARENT, custom_job=body)
        assert len(job.job_spec.worker_pool_specs) == 3

    @pytest.mark.parametrize(
        ("change", "field", "message"),
        [
            (lambda b: b.update(display_name=""), "custom_job.display_name", "Required"),
            (lambda b: b.update(display_name="x" * 129), "custom_job.display_name", "128"),
            (
                lambda b: b["job_spec"].update(worker_pool_specs=[]),
                "custom_job.job_spec.worker_pool_specs",
                "Required",
            ),
            (
                lambda b: b["job_spec"].update(worker_pool_specs=[{}]),
                "worker_pool_specs[0]",
                "first worker pool",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0].pop("container_spec"),
                "worker_pool_specs[0]",
                "Exactly one of container_spec or python_package_spec",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0].update(replica_count=2),
                "worker_pool_specs[0].replica_count",
                "exactly 1 replica",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0].update(container_spec={}),
                "container_spec.image_uri",
                "Required",
            ),
            (
                lambda b: b["job_spec"].update(
                    worker_pool_specs=[
                        {
                            "replica_count": 1,
                            "python_package_spec": {"executor_image_uri": "us-docker.pkg.dev/i"},
                        }
                    ]
                ),
                "python_package_spec.package_uris",
                "Required",
            ),
            (lambda b: b.update(labels={"Team": "ml"}), "custom_job.labels['Team']", "keys"),
            (lambda b: b.update(labels={"team": "M L"}), "custom_job.labels['team']", "values"),
            (
                lambda b: b.update(labels={f"k{i}": "v" for i in range(65)}),
                "custom_job.labels",
                "At most 64",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0]["machine_spec"].update(
                    reservation_affinity={"reservation_affinity_type": "SPECIFIC_RESERVATION"}
                ),
                "machine_spec.reservation_affinity",
                "key and values",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0]["machine_spec"].update(
                    reservation_affinity={"key": "compute.googleapis.com/reservation-name"}
                ),
                "reservation_affinity.reservation_affinity_type",
                "Required",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0].update(
                    nfs_mounts=[{"server": "10.0.0.2", "path": "share", "mount_point": "d"}]
                ),
                "nfs_mounts[0].path",
                "start with '/'",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0].update(
                    lustre_mounts=[{"instance_ip": "10.0.0.3", "mount_point": "l"}]
                ),
                "lustre_mounts[0].volume_handle",
                "Required",
            ),
            (
                lambda b: b["job_spec"]["worker_pool_specs"][0]["machine_spec"].update(
                    accelerator_type="NVIDIA_TESLA_A100",
                    accelerator_count=2,
                    gpu_partition_size="1g.5gb",
                ),
                "machine_spec.accelerator_count",
                "gpu_partition_size",
            ),
            (
                lambda b: b["job_spec"].update(
                    psc_interface_config={
                        "network_attachment": "a",
                        "dns_peering_configs": [
                            {"domain": "corp", "target_project": "p", "target_network": "n"}
                        ],
                    }
                ),
                "psc_interface_config.dns_peering_configs[0].domain",
                "end with a dot",
            ),
        ],
        ids=[
            "no-display-name",
            "long-display-name",
            "no-worker-pools",
            "empty-primary-pool",
            "no-task",
            "primary-replicas",
            "no-image",
            "no-package-uris",
            "label-key",
            "label-value",
            "too-many-labels",
            "specific-reservation-unnamed",
            "reservation-type-unset",
            "nfs-relative-path",
            "lustre-missing-fields",
            "partitions-of-two-gpus",
            "dns-domain-without-dot",
        ],
    )
    def test_refuses_what_vertex_refuses(
        self, client: JobServiceClient, change: Any, field: str, message: str
    ) -> None:
        """A job breaking a CustomJob rule is INVALID_ARGUMENT naming the field."""
        body = job_body()
        change(body)
        with pytest.raises(exceptions.InvalidArgument) as raised:
            client.create_custom_job(parent=PARENT, custom_job=body)
        assert f"{field}; Message: " in raised.value.message
        assert message in raised.value.message

    def test_refuses_a_malformed_parent(self, client: JobServiceClient) -> None:
        """A parent that is not projects/P/locations/L is INVALID_ARGUMENT."""
        with pytest.raises(exceptions.InvalidArgument, match="Invalid parent"):
            client.create_custom_job(parent="projects/p", custom_job=job_body())


class TestLifecycle:
    def test_goes_queued_pending_running_succeeded_on_the_clock(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """The job moves through QUEUED, PENDING, RUNNING, SUCCEEDED as time passes."""
        name = create(client).name
        seen = [state_of(client, name)]
        for step in (QUEUED_S, PENDING_S, RUN_S):
            clock.advance(step)
            seen.append(state_of(client, name))
        assert seen == [
            "JOB_STATE_QUEUED",
            "JOB_STATE_PENDING",
            "JOB_STATE_RUNNING",
            "JOB_STATE_SUCCEEDED",
        ]

    def test_sets_start_time_when_running_and_end_time_when_done(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """start_time is the entry into RUNNING; end_time the entry into the outcome."""
        created = create(client)
        clock.advance(QUEUED_S + PENDING_S)
        running = client.get_custom_job(name=created.name)
        assert "start_time" in running
        assert "end_time" not in running
        clock.advance(RUN_S + 5)
        done = client.get_custom_job(name=created.name)
        assert done.start_time == running.start_time
        assert (done.end_time - done.start_time).total_seconds() == pytest.approx(RUN_S)
        assert done.update_time == done.end_time
        assert "error" not in done

    def test_script_fails_a_job_with_its_error(
        self, fake: FakeVertex, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A script with outcome FAILED ends the job FAILED with the scripted error."""
        fake.script("bad", run_s=1, outcome="FAILED", error_code=3, error_message="boom")
        name = create(client, display_name="bad").name
        clock.advance(QUEUED_S + PENDING_S + 1)
        job = client.get_custom_job(name=name)
        assert job.state == JobState.JOB_STATE_FAILED
        assert (job.error.code, job.error.message) == (3, "boom")

    def test_script_matches_by_predicate_and_the_latest_wins(
        self, fake: FakeVertex, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """Scripts may match with a predicate; the most recent matching script applies."""
        fake.script(lambda job: job.labels.get("team") == "ml", outcome="EXPIRED")
        fake.script("special", queued_s=0, pending_s=0, run_s=0, outcome="PARTIALLY_SUCCEEDED")
        expired = create(client).name
        special = create(client, display_name="special").name
        assert state_of(client, special) == "JOB_STATE_PARTIALLY_SUCCEEDED"
        clock.advance(QUEUED_S + PENDING_S + RUN_S)
        assert state_of(client, expired) == "JOB_STATE_EXPIRED"

    def test_infinite_run_keeps_the_job_running(
        self, fake: FakeVertex, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """run_s=inf keeps a job RUNNING until it is cancelled."""
        fake.script("forever", run_s=math.inf)
        name = create(client, display_name="forever").name
        clock.advance(1e6)
        assert state_of(client, name) == "JOB_STATE_RUNNING"

    def test_web_access_uris_while_running_when_enabled(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """With enable_web_access, a RUNNING job has one URI per replica."""
        body = job_body()
        body["job_spec"]["enable_web_access"] = True
        name = client.create_custom_job(parent=PARENT, custom_job=body).name
        assert not client.get_custom_job(name=name).web_access_uris
        clock.advance(QUEUED_S + PENDING_S)
        uris = client.get_custom_job(name=name).web_access_uris
        assert list(uris) == ["workerpool0-0"]
        assert uris["workerpool0-0"].startswith("https://")

    def test_unknown_outcome_is_refused(self, fake: FakeVertex) -> None:
        """A script cannot end a job CANCELLED: only CancelCustomJob does that."""
        with pytest.raises(ValueError, match="outcome"):
            fake.script("x", outcome="CANCELLED")


class TestGetCustomJob:
    def test_unknown_job_is_not_found(self, client: JobServiceClient) -> None:
        """GetCustomJob of a job that does not exist is NOT_FOUND naming it."""
        name = f"{PARENT}/customJobs/123"
        with pytest.raises(exceptions.NotFound, match=name):
            client.get_custom_job(name=name)

    def test_malformed_name_is_invalid(self, client: JobServiceClient) -> None:
        """A name that is not a CustomJob resource name is INVALID_ARGUMENT."""
        with pytest.raises(exceptions.InvalidArgument):
            client.get_custom_job(name="customJobs/123")

    def test_jobs_property_shows_current_state(
        self, fake: FakeVertex, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """fake.jobs shows each job as a client would see it now."""
        name = create(client).name
        clock.advance(QUEUED_S)
        assert fake.jobs[name].state == JobState.JOB_STATE_PENDING


class TestListCustomJobs:
    @pytest.fixture
    def names(self, client: JobServiceClient, clock: ManualClock) -> dict[str, str]:
        jobs = {
            "a": create(client, display_name="a", labels={"env": "dev", "team": "ml"}),
            "b": create(client, display_name="b", labels={"env": "prod", "team": "ml"}),
            "c": create(client, display_name="c", labels={"env": "dev"}),
        }
        clock.advance(QUEUED_S)
        create(client, display_name="d", labels={})
        return {key: job.name for key, job in jobs.items()}

    def listed(self, client: JobServiceClient, filter_: str, **request: Any) -> list[str]:
        pager = client.list_custom_jobs(request={"parent": PARENT, "filter": filter_, **request})
        return [job.display_name for job in pager]

    def test_lists_newest_first(self, client: JobServiceClient, names: dict[str, str]) -> None:
        """Without a filter every job of the location is listed, newest first."""
        assert self.listed(client, "") == ["d", "c", "b", "a"]

    @pytest.mark.parametrize(
        ("filter_", "expected"),
        [
            ('labels.env="dev"', ["c", "a"]),
            ("labels.env=dev", ["c", "a"]),
            ('labels.env="dev" AND labels.team="ml"', ["a"]),
            ('labels.env!="dev"', ["d", "b"]),
            ("labels.team:*", ["b", "a"]),
            ('display_name="b"', ["b"]),
            ('display_name:"a*"', ["a"]),
            ('state="JOB_STATE_QUEUED"', ["d"]),
            ("state!=JOB_STATE_QUEUED AND labels.env=dev", ["c", "a"]),
            ('labels.env="nope"', []),
        ],
    )
    def test_filters(
        self, client: JobServiceClient, names: dict[str, str], filter_: str, expected: list[str]
    ) -> None:
        """Label, display name and state terms, joined by AND, select jobs (AIP-160)."""
        assert self.listed(client, filter_) == expected

    def test_pages_through_page_tokens(
        self, fake: FakeVertex, client: JobServiceClient, names: dict[str, str]
    ) -> None:
        """page_size splits the list; the client follows next_page_token to the end."""
        assert self.listed(client, "", page_size=3) == ["d", "c", "b", "a"]
        lists = [call for call in fake.calls if call.method == "ListCustomJobs"]
        assert [call.request.page_token != "" for call in lists] == [False, True]

    def test_other_locations_are_not_listed(
        self, client: JobServiceClient, names: dict[str, str]
    ) -> None:
        """Jobs are listed under their own location only."""
        pager = client.list_custom_jobs(parent="projects/test-project/locations/europe-west4")
        assert list(pager) == []

    @pytest.mark.parametrize(
        ("filter_", "error"),
        [
            ('labels.env="dev" OR labels.env="prod"', exceptions.MethodNotImplemented),
            ('create_time>"2024-01-01T00:00:00Z"', exceptions.MethodNotImplemented),
            ('display_name>"a"', exceptions.InvalidArgument),
            ('colour="red"', exceptions.InvalidArgument),
            ('state="JOB_STATE_NAPPING"', exceptions.InvalidArgument),
        ],
    )
    def test_unsupported_filters_are_refused(
        self, client: JobServiceClient, filter_: str, error: type[Exception]
    ) -> None:
        """Filters the fake cannot evaluate fail loudly instead of matching everything."""
        with pytest.raises(error):
            self.listed(client, filter_)


class TestCancelCustomJob:
    def test_running_job_goes_cancelling_then_cancelled_with_code_1(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """Cancel is asynchronous: CANCELLING, then CANCELLED with error code 1."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S + 1)
        assert client.cancel_custom_job(name=name) is None
        assert state_of(client, name) == "JOB_STATE_CANCELLING"
        clock.advance(CANCEL_S)
        job = client.get_custom_job(name=name)
        assert job.state == JobState.JOB_STATE_CANCELLED
        assert job.error.code == grpc.StatusCode.CANCELLED.value[0] == 1
        assert "start_time" in job
        assert "end_time" in job

    def test_queued_job_is_cancelled_without_ever_starting(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A job cancelled before it ran never gets a start_time."""
        name = create(client).name
        client.cancel_custom_job(name=name)
        clock.advance(CANCEL_S + QUEUED_S + PENDING_S)
        job = client.get_custom_job(name=name)
        assert job.state == JobState.JOB_STATE_CANCELLED
        assert "start_time" not in job

    def test_cancelling_twice_is_accepted(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A second cancel while CANCELLING does not restart the cancellation."""
        name = create(client).name
        client.cancel_custom_job(name=name)
        clock.advance(CANCEL_S / 2)
        client.cancel_custom_job(name=name)
        clock.advance(CANCEL_S / 2)
        assert state_of(client, name) == "JOB_STATE_CANCELLED"

    def test_cancelling_an_ended_job_is_failed_precondition(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A job that has ended cannot be cancelled: FAILED_PRECONDITION."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S + RUN_S)
        with pytest.raises(exceptions.FailedPrecondition, match="JOB_STATE_SUCCEEDED"):
            client.cancel_custom_job(name=name)

    def test_cancelling_an_unknown_job_is_not_found(self, client: JobServiceClient) -> None:
        """CancelCustomJob of a job that does not exist is NOT_FOUND."""
        with pytest.raises(exceptions.NotFound):
            client.cancel_custom_job(name=f"{PARENT}/customJobs/42")


class TestDeleteCustomJob:
    def test_is_a_long_running_operation_then_the_job_is_gone(
        self, fake: FakeVertex, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """DeleteCustomJob returns an operation; once done, the job is NOT_FOUND."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S + RUN_S)
        operation = client.delete_custom_job(name=name)
        assert not operation.done()
        assert isinstance(operation.metadata, DeleteOperationMetadata)
        assert state_of(client, name) == "JOB_STATE_SUCCEEDED"
        clock.advance(DELETE_S)
        operation.result(timeout=5)
        with pytest.raises(exceptions.NotFound):
            client.get_custom_job(name=name)
        assert name not in fake.jobs
        assert list(client.list_custom_jobs(parent=PARENT)) == []

    def test_deleting_twice_returns_the_same_operation(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A second delete while the first runs answers with the same operation."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S + RUN_S)
        first = client.delete_custom_job(name=name)
        assert client.delete_custom_job(name=name).operation.name == first.operation.name

    def test_deleting_a_running_job_is_refused(
        self, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """A job that has not ended cannot be deleted: FAILED_PRECONDITION."""
        name = create(client).name
        clock.advance(QUEUED_S + PENDING_S)
        with pytest.raises(exceptions.FailedPrecondition, match="cancel it"):
            client.delete_custom_job(name=name)

    def test_deleting_an_unknown_job_is_not_found(self, client: JobServiceClient) -> None:
        """DeleteCustomJob of a job that does not exist is NOT_FOUND."""
        with pytest.raises(exceptions.NotFound):
            client.delete_custom_job(name=f"{PARENT}/customJobs/42")

    def test_unknown_operation_is_not_found(self, client: JobServiceClient) -> None:
        """GetOperation of an operation that does not exist is NOT_FOUND."""
        with pytest.raises(exceptions.NotFound):
            client.get_operation(request={"name": f"{PARENT}/operations/7"})


class TestFaults:
    @pytest.mark.parametrize(
        ("code", "error"),
        [
            (grpc.StatusCode.NOT_FOUND, exceptions.NotFound),
            (grpc.StatusCode.PERMISSION_DENIED, exceptions.PermissionDenied),
            (grpc.StatusCode.RESOURCE_EXHAUSTED, exceptions.ResourceExhausted),
            (grpc.StatusCode.UNAVAILABLE, exceptions.ServiceUnavailable),
            (grpc.StatusCode.DEADLINE_EXCEEDED, exceptions.DeadlineExceeded),
            (grpc.StatusCode.INTERNAL, exceptions.InternalServerError),
        ],
    )
    def test_injects_each_code(
        self, fake: FakeVertex, client: JobServiceClient, code: grpc.StatusCode, error: type
    ) -> None:
        """fail_next makes the next call fail with the code and message given."""
        fake.fail_next("CreateCustomJob", code, message="injected")
        with pytest.raises(error, match="injected"):
            create(client)
        assert fake.jobs == {}

    def test_fails_the_given_number_of_times_then_serves(
        self, fake: FakeVertex, client: JobServiceClient
    ) -> None:
        """times=2 fails two calls; the third is served; all three are recorded."""
        fake.fail_next("GetCustomJob", grpc.StatusCode.UNAVAILABLE, times=2)
        name = create(client).name
        for _ in range(2):
            with pytest.raises(exceptions.ServiceUnavailable):
                client.get_custom_job(name=name)
        assert client.get_custom_job(name=name).name == name
        assert [call.method for call in fake.calls].count("GetCustomJob") == 3

    def test_take_effect_creates_the_job_and_still_fails(
        self, fake: FakeVertex, client: JobServiceClient
    ) -> None:
        """take_effect models a deadline that expires after the server created the job."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.DEADLINE_EXCEEDED, take_effect=True)
        with pytest.raises(exceptions.DeadlineExceeded):
            create(client)
        assert len(fake.jobs) == 1

    def test_faults_are_per_method(self, fake: FakeVertex, client: JobServiceClient) -> None:
        """A fault for one method leaves the others alone."""
        fake.fail_next("DeleteCustomJob", grpc.StatusCode.INTERNAL)
        assert create(client).state == JobState.JOB_STATE_QUEUED

    def test_unknown_method_or_code_is_refused(self, fake: FakeVertex) -> None:
        """fail_next rejects a misspelt method and codes it does not inject."""
        with pytest.raises(ValueError, match="unknown method"):
            fake.fail_next("CreateJob", grpc.StatusCode.UNAVAILABLE)
        with pytest.raises(ValueError, match="code"):
            fake.fail_next("CreateCustomJob", grpc.StatusCode.OK)


@dataclass
class Served:
    """A fake JobService run from the command line: its address and a client of it while
    it serves; its exit status and stderr once stopped."""

    address: str = ""
    client: JobServiceClient | None = None
    returncode: int | None = None
    stderr: str = ""


@contextlib.contextmanager
def served_from_the_command_line(*options: str) -> Iterator[Served]:
    """``python -m vertex_training.testing.fake_vertex OPTIONS``, until the block ends."""
    process = subprocess.Popen(
        [sys.executable, "-W", "ignore", "-m", "vertex_training.testing.fake_vertex", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Served()
    try:
        assert process.stdout is not None
        served.address = process.stdout.readline().strip()
        channel = grpc.insecure_channel(served.address)
        served.client = JobServiceClient(transport=JobServiceGrpcTransport(channel=channel))
        try:
            yield served
        finally:
            channel.close()
    finally:
        process.terminate()
        _, served.stderr = process.communicate(timeout=10)
        served.returncode = process.returncode


def wait_until_failed(client: JobServiceClient, name: str) -> None:
    deadline = time.monotonic() + 10
    while state_of(client, name) != "JOB_STATE_FAILED":
        assert time.monotonic() < deadline, "the job did not fail in time"
        time.sleep(0.05)


class TestCommandLine:
    @pytest.mark.timeout(120)
    def test_serves_from_another_process_until_killed(self) -> None:
        """`python -m vertex_training.testing.fake_vertex` prints its address and serves jobs."""
        with served_from_the_command_line(
            "--port", "0", "--run-seconds", "0.1", "--script", "bad=FAILED"
        ) as served:
            assert served.address.startswith("127.0.0.1:")
            assert served.client is not None
            name = create(served.client, display_name="bad").name
            wait_until_failed(served.client, name)
        assert served.returncode == 0, served.stderr

    @pytest.mark.timeout(120)
    def test_a_stockout_from_the_command_line(self) -> None:
        """`--stockout us-central1` fails the next job there with Google's words."""
        with served_from_the_command_line(
            "--run-seconds",
            "0.1",
            "--stockout",
            "us-central1",
            "--quota",
            "europe-west4:cpus=8,NVIDIA_TESLA_T4=1",
            "--preempt-spot",
            "3",
            "--flex-capacity-after",
            "60",
            "--serve-logging",
        ) as served:
            assert served.client is not None
            name = create(served.client, display_name="short").name
            wait_until_failed(served.client, name)
            job = served.client.get_custom_job(name=name)
            assert job.error.message == "Resources are insufficient in region: us-central1."

    @pytest.mark.parametrize(
        "argument", [["--quota", "us-central1"], ["--quota", "r:cpus=x"], ["--stockout", "r=a"]]
    )
    def test_malformed_options_are_refused(
        self, argument: list[str], capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) as exited:
            fake_vertex_main(argument)
        assert exited.value.code == 2
        assert "expected" in capsys.readouterr().err

    def test_fake_logging_says_what_serves_it(self) -> None:
        result = subprocess.run(
            [sys.executable, "-m", "vertex_training.testing.fake_logging"],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        assert result.returncode == 2
        assert "fake_vertex --serve-logging" in result.stderr


class TestPublicApi:
    def test_exports_are_pinned(self) -> None:
        """vertex_training.testing exports exactly these names, sorted, and each resolves."""
        import vertex_training.testing

        assert vertex_training.testing.__all__ == ["Call", "FakeVertex", "ManualClock"]
        assert all(
            getattr(vertex_training.testing, name) for name in vertex_training.testing.__all__
        )
