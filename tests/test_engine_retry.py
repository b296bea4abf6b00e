"""The real Pulumi engine against a fake Vertex service that fails like Google (issue 17):
retries through stockouts into a fallback region, a preempted SPOT job retried, a queued
job whose line names its quota, a failure that shows the replica's last log lines, an
engine killed between attempts, and a user-code failure that is not retried.

Like tests/test_engine.py, each test runs the CLI that `make tools` built on a copy of
the project (tests/engine.py); the fake runs in the test process, so the test sets its
scheduling (``stockout``, ``preempt_spot``, ``set_quota``) directly.
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine import Project, tools_missing, vertex_stack
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
#: How far behind the wall clock the quota test's fake runs: its jobs look created this
#: long ago, past the time after which a QUEUED job gets a reason (120 s).
QUEUED_LONG_AGO_S = 300.0


def retried_job(name: str, **keys: Any) -> dict[str, Any]:
    """A waited-for container job that retries capacity and infrastructure failures in
    two fallback regions."""
    return {
        "display_name": name,
        "image": IMAGE,
        "wait": "succeeded",
        "retry": {
            "when": ["capacity", "infrastructure"],
            "attempts": 3,
            "regions": ["us-east1", "europe-west4"],
        },
        **keys,
    }


def one_alive_at_a_time(fake: FakeVertex) -> bool:
    """Whether the fake's jobs ran one after the other: each created after the one
    before it ended."""
    jobs = sorted(fake.jobs.values(), key=lambda job: job.create_time)
    return all(later.create_time >= earlier.end_time for earlier, later in itertools.pairwise(jobs))


def kill_while_attempt_2_is_submitted(project: Project, fake: FakeVertex) -> None:
    """Start `pulumi up` of one job with ``retry`` (``retried_job``) whose first attempt
    fails, and SIGKILL the engine once attempt 2 exists, before the reply naming it."""
    project.write_stack(vertex_stack(fake, train=retried_job("train")))
    project.init()
    proc = project.start("up", "--yes", "--skip-preview")
    deadline = time.monotonic() + 120
    while not fake.jobs and time.monotonic() < deadline:
        time.sleep(0.02)
    assert fake.jobs, "the first attempt was never submitted"
    # Attempt 2 exists at once, but the reply that names it comes late.
    fake.stall_next("CreateCustomJob", 30.0)
    while len(fake.jobs) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(fake.jobs) == 2, "the second attempt was never submitted"
    project.kill_engine(proc)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


class TestRetries:
    """`pulumi up` resubmits a waited job after a failure its `retry` names."""

    def test_two_stockouts_end_succeeded_in_the_fallback_region(self, project: Project) -> None:
        """Stockouts in the job's region and its first fallback: the third attempt, in
        europe-west4, succeeds; the attempts are on the progress lines and in the
        outputs, and no two attempts were ever alive together."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=1.0) as fake:
            fake.stockout("us-central1")
            fake.stockout("us-east1")
            project.write_stack(vertex_stack(fake, train=retried_job("train")))
            result = project.up().check()
            print(result.output)

            assert "attempt 1/3 in us-central1 (STANDARD) ended FAILED, capacity" in result.output
            assert "attempt 3/3 submitted in europe-west4 (STANDARD)" in result.output
            lasting = [
                line for line in result.output.splitlines() if "attempt 3/3 SUCCEEDED after" in line
            ]
            assert lasting and "since attempt 1 was submitted" in lasting[0], result.output
            job = project.outputs()["jobs"]["train"]
            assert job["state"] == "SUCCEEDED"
            assert "/locations/europe-west4/" in job["resource_name"]
            assert job["job_id"] == job["resource_name"].rsplit("/", 1)[1]
            assert "/locations/europe-west4/" in job["console_url"]
            assert [(a["region"], a["state"], a["class"]) for a in job["attempts"]] == [
                ("us-central1", "FAILED", "capacity"),
                ("us-east1", "FAILED", "capacity"),
                ("europe-west4", "SUCCEEDED", ""),
            ]
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 3
            assert len({j.labels[IDENTITY_LABEL] for j in fake.jobs.values()}) == 3
            assert one_alive_at_a_time(fake)

            # Refresh follows the job to its last attempt; destroy deletes every attempt.
            project.run("refresh", "--yes").check()
            assert "/europe-west4/" in project.jobs_in_state()["train"]["id"]
            project.run("destroy", "--yes").check()
            assert fake.jobs == {}

    def test_a_preempted_spot_job_is_retried_under_standard(self, project: Project) -> None:
        """A SPOT job preempted while running is submitted again, as STANDARD."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=2.0) as fake:
            fake.preempt_spot(0.3)
            spot = {
                "display_name": "spot",
                "image": IMAGE,
                "wait": "succeeded",
                "scheduling": {"strategy": "SPOT"},
                "retry": {"when": ["preemption"], "strategies": ["STANDARD"]},
            }
            project.write_stack(vertex_stack(fake, spot=spot))
            result = project.up().check()

            assert "attempt 1/2 in us-central1 (SPOT) ended FAILED, preemption" in result.output
            job = project.outputs()["jobs"]["spot"]
            assert job["state"] == "SUCCEEDED"
            assert [(a["strategy"], a["state"]) for a in job["attempts"]] == [
                ("SPOT", "FAILED"),
                ("STANDARD", "SUCCEEDED"),
            ]
            assert one_alive_at_a_time(fake)

    def test_engine_killed_between_attempts_leaves_no_duplicate_nor_orphan(
        self, project: Project
    ) -> None:
        """The engine is killed while the waiter submits attempt 2; the next `pulumi up`
        adopts that attempt (no third submission), and destroy deletes both."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=3.0) as fake:
            fake.stockout("us-central1")
            kill_while_attempt_2_is_submitted(project, fake)

            project.run("cancel", "--yes").check()
            project.up().check()
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 2
            assert len(fake.jobs) == 2
            job = project.outputs()["jobs"]["train"]
            assert job["state"] == "SUCCEEDED"
            assert "/locations/us-east1/" in job["resource_name"]
            assert one_alive_at_a_time(fake)

            project.run("destroy", "--yes").check()
            assert fake.jobs == {}

    def test_an_attempt_that_failed_while_no_engine_watched_gets_its_line(
        self, project: Project
    ) -> None:
        """The engine is killed while the waiter submits attempt 2, which then fails for
        capacity with no engine to see it; the next `pulumi up` leaves a lasting line for
        it (as for attempt 1), then submits attempt 3."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=1.0) as fake:
            fake.stockout("us-central1")
            fake.stockout("us-east1")
            kill_while_attempt_2_is_submitted(project, fake)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and sum(j.state == 5 for j in fake.jobs.values()) < 2:
                time.sleep(0.05)  # until attempt 2 has failed too (5: JOB_STATE_FAILED)

            project.run("cancel", "--yes").check()
            result = project.up().check()
            assert "attempt 1/3 in us-central1 (STANDARD) ended FAILED, capacity" in result.output
            assert "attempt 2/3 in us-east1 (STANDARD) ended FAILED, capacity" in result.output, (
                result.output
            )
            assert "attempt 3/3 submitted in europe-west4 (STANDARD)" in result.output
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 3
            assert project.outputs()["jobs"]["train"]["state"] == "SUCCEEDED"

    def test_a_job_not_waited_for_is_resubmitted_by_the_next_up(self, project: Project) -> None:
        """`wait: submitted`: the first `pulumi up` submits and returns; once the job has
        failed for capacity, `pulumi up --refresh` replaces it with its next attempt, and
        the failed attempt stays listed (and is deleted with the job)."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
            fake.stockout("us-central1")
            project.write_stack(vertex_stack(fake, train=retried_job("train", wait="submitted")))
            project.up().check()
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not any(
                job.state == 5
                for job in fake.jobs.values()  # JOB_STATE_FAILED
            ):
                time.sleep(0.1)

            result = project.run("up", "--yes", "--skip-preview", "--refresh").check()
            assert "replaced" in result.output, result.output
            state = project.jobs_in_state()["train"]
            assert "/locations/us-east1/" in state["id"]
            assert (state["attempts"][0]["attempt"], state["attempts"][0]["state"]) == (
                1,
                "FAILED",
            )
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 2
            assert len(fake.jobs) == 2

            project.run("destroy", "--yes").check()
            assert fake.jobs == {}


class TestWhyNotRunning:
    """Why a job waits, or failed, as `pulumi up` shows it."""

    def test_a_queued_job_names_its_quota(self, project: Project) -> None:
        """A job held QUEUED by the region's CPU quota: its line names the quota, and
        start_timeout ends the wait with one error that carries the reason; the stack
        outputs record the job's state, the error and the reason all the same."""
        fake_clock = lambda: time.time() - QUEUED_LONG_AGO_S  # noqa: E731 - a clock behind
        with FakeVertex(clock=fake_clock) as fake:
            fake.set_quota("us-central1", cpus=2)
            queued = {
                "display_name": "queued",
                "image": IMAGE,
                "machine": "n1-standard-4",
                "wait": {"until": "running", "timeout": "10m", "start_timeout": "5s"},
            }
            project.write_stack(vertex_stack(fake, queued=queued))
            result = project.up()
            assert result.returncode != 0
            assert "queued" in result.output and "QUEUED" in result.output
            assert "custom_model_training_cpus (4)" in result.output, result.output
            assert "start_timeout" in result.output
            assert "why it has not started" in result.output
            assert "1 errored" in result.output and "2 errored" not in result.output
            job = project.outputs()["jobs"]["queued"]
            assert job["state"] == "QUEUED"
            assert "custom_model_training_cpus (4)" in job["waiting_reason"]
            assert "start_timeout" in job["error"]

    def test_a_user_code_failure_shows_its_log_and_is_not_retried(self, project: Project) -> None:
        """A replica that exits non-zero: class user_code, the replica's last log lines
        (from the fake Cloud Logging on the same loopback endpoint), one submission."""
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5, serve_logging=True) as fake:
            fake.script(
                "doomed",
                outcome="FAILED",
                error_message="The replica workerpool0-0 exited with a non-zero status of 1.",
            )
            project.write_stack(vertex_stack(fake, doomed=retried_job("doomed")))
            result = project.up()
            print(result.output)

            assert result.returncode != 0
            assert "class: user_code" in result.output, result.output
            assert "lines of workerpool0-0's log" in result.output
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 1
            assert "attempt 2" not in result.output
