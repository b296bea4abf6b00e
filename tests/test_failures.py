"""Why a job is not running, why it failed, and the fakes that fail like Google: the
classifier, the waiter's reasons and start_timeout, replica logs from the local backend
and through the fake Cloud Logging, the fake JobService's scheduling model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_waiter import run
from vertex_training.api import failures, states
from vertex_training.api.failures import classify
from vertex_training.api.scheduling import PENDING_REASON_AFTER_S, QUEUED_REASON_AFTER_S
from vertex_training.backends.cloud_logs import CloudLogs
from vertex_training.backends.vertex import VertexBackend
from vertex_training.errors import BackendError, JobEndedError, SpecError
from vertex_training.stackconfig import StackSettings, parse_job
from vertex_training.testing import FakeVertex, ManualClock
from vertex_training.testing.fake_logging import FakeLogging

pytestmark = pytest.mark.timeout(60)

PROJECT, REGION, FALLBACK = "test-project", "us-central1", "europe-west4"
IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
DAY_S = 24 * 3600.0


QUOTA_MESSAGE = (
    "The following quota metrics exceed quota limits: "
    "aiplatform.googleapis.com/custom_model_training_cpus"
)
ACT_AS_MESSAGE = (
    "The caller does not have permission to act as service account "
    "sa@p.iam.gserviceaccount.com (iam.serviceAccounts.actAs)"
)
EXIT_MESSAGE = (
    "The replica workerpool1-1 exited with a non-zero status of 1. Termination reason: "
    "Error. \nTraceback (most recent call last):\n  ... permission denied"
)


def body(
    name: str, *, machine: str = "n1-standard-4", gpus: int = 0, strategy: str = ""
) -> dict[str, Any]:
    """A CustomJob REST body of one replica."""
    spec: dict[str, Any] = {"machineType": machine}
    if gpus:
        spec |= {"acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": gpus}
    pool = {"machineSpec": spec, "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}
    job: dict[str, Any] = {"displayName": name, "jobSpec": {"workerPoolSpecs": [pool]}}
    if strategy:
        job["jobSpec"]["scheduling"] = {"strategy": strategy}
    return job


def entry(resource_name: str, region: str = REGION, **wait: Any) -> dict[str, Any]:
    return {
        "resource_name": resource_name,
        "location": {"backend": "vertex", "project": PROJECT, "region": region},
        "wait": {"until": "succeeded", "timeout_s": DAY_S, **wait},
    }


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=1, pending_s=1, run_s=10, clock=clock, serve_logging=True) as fake:
        yield fake


def backend(fake: FakeVertex, region: str = REGION) -> VertexBackend:
    return VertexBackend(PROJECT, region, api_endpoint=fake.address)


class TestClassify:
    """classify: recorded error shapes -> class, replica, quotas and fix."""

    @pytest.mark.parametrize(
        ("code", "message", "kind"),
        [
            (8, "Resources are insufficient in region: us-central1.", failures.CAPACITY),
            (
                8,
                QUOTA_MESSAGE,
                failures.QUOTA,
            ),
            (
                14,
                "The job was preempted: Compute Engine reclaimed its Spot VMs.",
                failures.PREEMPTION,
            ),
            (
                3,
                "Unable to pull the image us-docker.pkg.dev/p/r/i:1: manifest unknown",
                failures.IMAGE,
            ),
            (
                7,
                ACT_AS_MESSAGE,
                failures.PERMISSION,
            ),
            (
                3,
                EXIT_MESSAGE,
                failures.USER_CODE,
            ),
            (13, "Internal error occurred for the current attempt.", failures.INFRASTRUCTURE),
            (5, "Something else happened.", failures.UNKNOWN),
        ],
    )
    def test_recorded_shapes(self, code: int, message: str, kind: str) -> None:
        """Each recorded message shape gets its class and that class's fix."""
        failure = classify(code, message)
        assert (failure.kind, failure.fix) == (kind, failures.FIXES[kind])

    def test_the_failing_replica_and_quota_are_named(self) -> None:
        """A non-zero exit names its replica (AI Platform's master too); a quota its metrics."""
        assert (
            classify(3, "The replica workerpool1-1 exited with a non-zero status of 1.").replica
            == "workerpool1-1"
        )
        assert (
            classify(3, "The replica master 0 exited with a non-zero status of 1").replica
            == "master-replica-0"
        )
        quota = (
            "exceed quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus"
        )
        assert classify(8, f"The following quota metrics {quota}").quotas == (
            "custom_model_training_nvidia_t4_gpus",
        )

    def test_only_the_first_line_classifies(self) -> None:
        """A traceback that mentions quota or permission does not change a user-code class."""
        message = (
            "The replica workerpool0-0 exited with a non-zero status of 2.\nquota limit exceeded"
        )
        assert classify(3, message).to_output()["class"] == failures.USER_CODE


class TestNotRunningReasons:
    """The waiter says why a job is QUEUED or PENDING, on the line and in ``report``."""

    def test_a_queued_job_names_its_quotas(self, fake: FakeVertex, clock: ManualClock) -> None:
        """Held by the region's quota: the reason names the CPU and GPU quotas and the page."""
        fake.set_quota(REGION, cpus=8, NVIDIA_TESLA_T4=1)
        fake.script("first", run_s=600)
        first = backend(fake).submit(body("first", gpus=1)).name
        second = backend(fake).submit(body("second", gpus=1)).name
        report: dict[str, Any] = {}
        lines: list[str] = []

        class Log:
            def status(self, message: str) -> None:
                lines.append(message)

            def lasting(self, message: str) -> None:
                pass

        progress_log: Any = Log()
        run(
            {"first": entry(first), "second": entry(second)},
            clock,
            fake,
            report=report,
            log=progress_log,
        )
        reason = report["reasons"]["second"]
        assert "queued for quota" in reason
        assert "custom_model_training_cpus (4)" in reason
        assert "custom_model_training_nvidia_t4_gpus (1)" in reason
        assert "https://console.cloud.google.com/iam-admin/quotas?project=test-project" in reason
        assert any("second: QUEUED" in line and "queued for quota" in line for line in lines)
        assert fake.jobs[second].state.name == "JOB_STATE_SUCCEEDED"

    def test_a_spot_job_names_the_preemptible_quotas(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """SPOT jobs consume the preemptible variants."""
        fake.set_quota(REGION, cpus=0)
        name = backend(fake).submit(body("spot", gpus=1, strategy="SPOT")).name
        report: dict[str, Any] = {}
        with pytest.raises(JobEndedError):
            run(
                {"spot": entry(name, timeout_s=QUEUED_REASON_AFTER_S + 10)},
                clock,
                fake,
                report=report,
            )
        assert "custom_model_training_preemptible_cpus (4)" in report["reasons"]["spot"]
        assert "custom_model_training_preemptible_nvidia_t4_gpus (1)" in report["reasons"]["spot"]

    def test_a_long_pending_job_says_for_how_long(self, clock: ManualClock) -> None:
        """PENDING past the threshold: resources being provisioned, for how long."""
        with FakeVertex(
            queued_s=0, pending_s=2 * PENDING_REASON_AFTER_S, run_s=1, clock=clock
        ) as fake:
            name = backend(fake).submit(body("slow")).name
            report: dict[str, Any] = {}
            run({"slow": entry(name)}, clock, fake, report=report)
        assert report["reasons"]["slow"].startswith("resources being provisioned for ")


class TestStartTimeout:
    """wait.start_timeout bounds the time before the job runs, apart from the whole wait."""

    def test_a_job_queued_past_it_fails_the_wait_naming_the_key(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """The failure names `wait.start_timeout` and comes at it, not at the whole timeout."""
        fake.set_quota(REGION, cpus=0)
        name = backend(fake).submit(body("stuck")).name
        start = clock()
        with pytest.raises(
            JobEndedError, match=r"vertex-training:jobs\.stuck\.wait\.start_timeout"
        ) as raised:
            run({"stuck": entry(name, start_timeout_s=600)}, clock, fake)
        assert clock() - start == pytest.approx(600)
        assert "why it has not started: queued for quota" in str(raised.value)

    def test_a_running_job_is_not_bound_by_it(self, fake: FakeVertex, clock: ManualClock) -> None:
        """Once running, only timeout counts."""
        fake.script("long", run_s=3600)
        name = backend(fake).submit(body("long")).name
        assert run({"long": entry(name, start_timeout_s=60)}, clock, fake) == {
            "long": states.SUCCEEDED
        }


class TestFailureLogs:
    """A failed job's class, fix and replica log lines, from Cloud Logging or local files."""

    def test_the_failure_shows_the_replicas_last_lines_through_the_fake_logging(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """The real Logging client reads the fake's invented lines of workerpool0-0."""
        fake.script("doomed", outcome="FAILED")
        name = backend(fake).submit(body("doomed")).name
        report: dict[str, Any] = {}
        with pytest.raises(JobEndedError) as raised:
            run({"doomed": entry(name)}, clock, fake, report=report)
        text = str(raised.value)
        assert "class: user_code" in text
        assert "last 9 lines of workerpool0-0's log" in text
        assert text.rstrip().endswith("ValueError: the fake's invented failure")
        assert report["failures"]["doomed"]["class"] == failures.USER_CODE

    def test_unreadable_logs_are_said_and_never_fail(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """A Logging endpoint that refuses: "logs could not be read", and the wait's own error."""
        fake.script("doomed", outcome="FAILED")
        name = backend(fake).submit(body("doomed")).name
        with FakeVertex(clock=clock) as no_logging:
            broken = VertexBackend(
                PROJECT, REGION, api_endpoint=fake.address, logging_endpoint=no_logging.address
            )
            clock.advance(60)
            with pytest.raises(BackendError, match="UNIMPLEMENTED") as raised:
                broken.log_tail(name, "workerpool0-0", 5)
        said = str(raised.value)
        assert f"Cloud Logging at {no_logging.address} answered UNIMPLEMENTED" in said
        assert "--serve-logging" in said

    def test_a_standalone_fake_logging_and_its_filter_subset(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """FakeLogging serves on its own port; a filter outside the subset is UNIMPLEMENTED."""
        fake.script("doomed", outcome="FAILED")
        name = backend(fake).submit(body("doomed")).name
        clock.advance(60)
        job_id = name.rsplit("/", 1)[-1]
        with FakeLogging(fake) as logging:
            logs = CloudLogs(PROJECT, api_endpoint=logging.address, clock=clock())
            assert (
                logs.tail(job_id, "workerpool0-0", 3)[-1]
                == "ValueError: the fake's invented failure"
            )
            assert logs.tail(job_id, "workerpool1-0", 3) == []
            import grpc
            from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
            from google.cloud.logging_v2.services.logging_service_v2.transports.grpc import (
                LoggingServiceV2GrpcTransport,
            )

            client = LoggingServiceV2Client(
                transport=LoggingServiceV2GrpcTransport(
                    channel=grpc.insecure_channel(logging.address)
                )
            )
            from google.api_core import exceptions

            with pytest.raises(exceptions.MethodNotImplemented):
                list(
                    client.list_log_entries(
                        request={
                            "resource_names": [f"projects/{PROJECT}"],
                            "filter": 'severity>="ERROR"',
                        }
                    )
                )

    def test_the_local_backend_reads_its_log_files(self, tmp_path: Path) -> None:
        """log_tail reads logs/<replica>.log of the job's record; a missing one is an error."""
        from vertex_training.backends.local import LocalBackend

        local = LocalBackend(tmp_path / "jobs", base_dir=tmp_path)
        record = tmp_path / "jobs" / "123" / "logs"
        record.mkdir(parents=True)
        (record / "workerpool0-0.log").write_text("".join(f"line {i}\n" for i in range(30)))
        assert local.log_tail("local/customJobs/123", "workerpool0-0", 3) == [
            "line 27",
            "line 28",
            "line 29",
        ]
        with pytest.raises(BackendError):
            local.log_tail("local/customJobs/123", "workerpool1-0", 3)


class TestFakeScheduling:
    """The fake JobService fails like Google when told to."""

    def test_a_stockout_fails_the_job_before_it_runs(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """Google's words, FAILED, never RUNNING; the next job in the region runs."""
        fake.stockout(REGION)
        first = backend(fake).submit(body("a")).name
        second = backend(fake).submit(body("a")).name
        clock.advance(30)
        job = fake.jobs[first]
        assert job.state.name == "JOB_STATE_FAILED"
        assert job.error.message == f"Resources are insufficient in region: {REGION}."
        assert not job.start_time
        assert fake.jobs[second].state.name == "JOB_STATE_SUCCEEDED"
        assert classify(job.error.code, job.error.message).kind == failures.CAPACITY

    def test_a_job_on_a_specific_reservation_meets_no_stockout(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """Reserved machines are held for the job: it runs through the region's stockout,
        which the next job without a reservation still meets."""
        fake.stockout(REGION)
        reserved = body("reserved", machine="a3-highgpu-8g")
        reserved["jobSpec"]["workerPoolSpecs"][0]["machineSpec"] |= {
            "acceleratorType": "NVIDIA_H100_80GB",
            "acceleratorCount": 8,
            "reservationAffinity": {
                "reservationAffinityType": "SPECIFIC_RESERVATION",
                "key": "compute.googleapis.com/reservation-name",
                "values": [f"projects/{PROJECT}/zones/{REGION}-a/reservations/h100"],
            },
        }
        on_reservation = backend(fake).submit(reserved).name
        plain = backend(fake).submit(body("plain")).name
        clock.advance(30)
        assert fake.jobs[on_reservation].state.name == "JOB_STATE_SUCCEEDED"
        assert fake.jobs[plain].state.name == "JOB_STATE_FAILED"

    def test_a_spot_job_is_preempted(self, fake: FakeVertex, clock: ManualClock) -> None:
        """The next SPOT job fails after_s into running; a STANDARD one is not touched."""
        fake.preempt_spot(3.0)
        standard = backend(fake).submit(body("std")).name
        spot = backend(fake).submit(body("spot", strategy="SPOT")).name
        clock.advance(30)
        assert fake.jobs[standard].state.name == "JOB_STATE_SUCCEEDED"
        job = fake.jobs[spot]
        assert job.state.name == "JOB_STATE_FAILED"
        assert classify(job.error.code, job.error.message).kind == failures.PREEMPTION

    def test_flex_start_waits_or_expires(self, fake: FakeVertex, clock: ManualClock) -> None:
        """Capacity after 100 s: a 60 s max wait expires, a 0 (no limit) one runs after it."""
        fake.flex_start_capacity_after(100)
        short = body("short", strategy="FLEX_START")
        short["jobSpec"]["scheduling"]["maxWaitDuration"] = "60s"
        expired = backend(fake).submit(short).name
        waits = backend(fake).submit(body("waits", strategy="FLEX_START")).name
        clock.advance(50)
        assert fake.jobs[waits].state.name == "JOB_STATE_QUEUED"
        clock.advance(60)
        assert fake.jobs[expired].state.name == "JOB_STATE_FAILED"
        assert classify(8, fake.jobs[expired].error.message).kind == failures.CAPACITY
        clock.advance(60)
        assert fake.jobs[waits].state.name == "JOB_STATE_SUCCEEDED"

    def test_without_options_jobs_keep_their_fixed_phases(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """No quota, stockout or preemption set: QUEUED 1 s, PENDING 1 s, RUNNING 10 s."""
        name = backend(fake).submit(body("plain")).name
        clock.advance(1.5)
        assert fake.jobs[name].state.name == "JOB_STATE_PENDING"
        clock.advance(11)
        assert fake.jobs[name].state.name == "JOB_STATE_SUCCEEDED"


class TestStartTimeoutKey:
    """`wait.start_timeout` in the stack config: parsed, defaulted, refused where meaningless."""

    STACK = StackSettings(stack="dev", project="p", region=REGION)

    def test_parsed_and_left_out_when_absent(self) -> None:
        """1h reads as 3600 s; a wait without it keeps the settings earlier releases wrote."""
        job = parse_job(
            "a", {"image": IMAGE, "wait": {"until": "succeeded", "start_timeout": "1h"}}, self.STACK
        )
        assert job.settings()["wait"]["start_timeout_s"] == 3600
        assert (
            "start_timeout_s"
            not in parse_job("a", {"image": IMAGE, "wait": "succeeded"}, self.STACK).settings()[
                "wait"
            ]
        )

    @pytest.mark.parametrize(
        ("wait", "says"),
        [
            ({"start_timeout": "1h"}, "set wait.until to running or succeeded"),
            (
                {"until": "running", "timeout": "1h", "start_timeout": "2h"},
                "must not be longer than wait.timeout",
            ),
        ],
    )
    def test_refused_naming_the_key(self, wait: dict[str, Any], says: str) -> None:
        """With `until: submitted`, or longer than the whole wait, it is refused on its key."""
        with pytest.raises(SpecError, match=rf"jobs\.a\.wait\.start_timeout: .*{says}"):
            parse_job("a", {"image": IMAGE, "wait": wait}, self.STACK)
