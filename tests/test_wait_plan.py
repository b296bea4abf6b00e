"""The wait plan (``vertex_training.resources.wait_plan``): one ``JobWait`` per job, read
once from whichever host gave the waiter's entries: a stack config job's, a program's job
with its keys and settings, and a plugin job's ``waiterEntry`` (its plan alone)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from vertex_training.errors import BackendError
from vertex_training.plugin.waiter_shapes import waiter_state
from vertex_training.resources.wait_plan import JobWait, WaitPlan, read_plan

RESOURCE_NAME = "projects/acme/locations/europe-west4/customJobs/1"
STACK = {"stack": "dev", "project": "acme", "region": "europe-west4"}
CONFIG = {
    "image": "python:3.12",
    "wait": {"until": "succeeded", "timeout": "2h", "start_timeout": "10m"},
}
RETRY = {"when": ["capacity"], "attempts": 2, "regions": ["us-east1"]}
#: What every form reads for the job above.
EXPECTED = JobWait(
    name="train",
    resource_name=RESOURCE_NAME,
    until="succeeded",
    timeout_s=7200,
    start_timeout_s=600,
    location={"backend": "vertex", "project": "acme", "region": "europe-west4"},
)


def plan_of(waited: dict[str, Any], stack: dict[str, Any] | None = None, **keys: Any) -> WaitPlan:
    return read_plan(waited, stack or {}, keys, Path.cwd())


class TestEveryHostsEntries:
    """The three forms of an entry read as the same job."""

    def test_a_stack_config_job_is_read_from_the_stack_config(self) -> None:
        """A dynamic waiter of a YAML stack: the resource name and ``until`` alone."""
        keys = {
            "gcp:project": "acme",
            "gcp:region": "europe-west4",
            "vertex-training:jobs": {"train": CONFIG},
        }
        waited = {"train": {"resource_name": RESOURCE_NAME, "until": "succeeded"}}
        assert plan_of(waited, STACK, **keys).jobs == (EXPECTED,)

    def test_a_programs_job_is_read_from_its_keys_and_settings(self) -> None:
        waited = {
            "train": {
                "resource_name": RESOURCE_NAME,
                "until": "succeeded",
                "config": CONFIG,
                "stack": STACK,
            }
        }
        assert plan_of(waited).jobs == (EXPECTED,)

    def test_a_plugin_jobs_entry_is_its_plan(self) -> None:
        """A ``waiterEntry`` without ``retry``, as the plugin hands it to the waiter: its
        location is its resource name's; no stack config is read."""
        entry = {
            "name": "train",
            "resourceName": RESOURCE_NAME,
            "until": "succeeded",
            "timeoutS": 7200.0,
            "startTimeoutS": 600.0,
        }
        assert plan_of(waiter_state({"jobs": [entry]})["jobs"]).jobs == (EXPECTED,)

    def test_a_job_missing_from_the_stack_config_names_its_key(self) -> None:
        keys = {"gcp:project": "acme", "gcp:region": "europe-west4", "vertex-training:jobs": {}}
        waited = {"train": {"resource_name": RESOURCE_NAME, "until": "succeeded"}}
        with pytest.raises(BackendError, match=r"jobs\.train is not in the stack config"):
            plan_of(waited, STACK, **keys)

    def test_no_entries_read_no_stack_config(self) -> None:
        assert plan_of({}).jobs == ()


class TestAJobWithRetry:
    """What a job with ``retry`` carries for its next attempts."""

    def job(self) -> JobWait:
        waited = {
            "train": {
                "resource_name": RESOURCE_NAME,
                "until": "succeeded",
                "config": {**CONFIG, "retry": RETRY},
                "stack": STACK,
            }
        }
        [job] = plan_of(waited).jobs
        return job

    def test_it_keeps_what_its_attempts_are_submitted_from(self) -> None:
        job = self.job()
        assert job.retries
        inputs = job.attempt_inputs()
        assert inputs["name"] == "train" and inputs["stack_name"] == "dev"
        assert inputs["location"] == EXPECTED.location
        assert inputs["wait"] == {"until": "succeeded", "timeout_s": 7200, "start_timeout_s": 600}
        assert [a["region"] for a in inputs["retry"]["attempts"]] == ["europe-west4", "us-east1"]
        assert inputs["request"]["displayName"]

    def test_a_next_attempt_is_followed_where_it_runs(self) -> None:
        """Its resource name and location change; what resubmits it does not."""
        job = self.job()
        there = {"backend": "vertex", "project": "acme", "region": "us-east1"}
        moved = job.attempt("projects/acme/locations/us-east1/customJobs/2", there)
        assert (moved.resource_name, moved.location) == (
            "projects/acme/locations/us-east1/customJobs/2",
            there,
        )
        assert moved.attempt_inputs() == job.attempt_inputs()

    def test_its_entry_reads_back_as_the_same_job(self) -> None:
        """``WaitEntry`` dicts (``wait_for``'s argument) and the plan read alike."""
        plan = WaitPlan((self.job(), replace(EXPECTED, name="other")))
        assert WaitPlan.of_entries(plan.entries()) == plan


class TestTimeouts:
    """``limit_s``: how long this attempt may be waited for, as of its state."""

    def test_the_start_timeout_bounds_a_job_yet_to_start(self) -> None:
        assert EXPECTED.limit_s(started=False) == 600.0
        assert EXPECTED.limit_s(started=True) == 7200.0

    def test_without_a_start_timeout_the_timeout_bounds_it(self) -> None:
        job = JobWait("j", RESOURCE_NAME, "running", 30, None, EXPECTED.location)
        assert job.limit_s(started=False) == job.limit_s(started=True) == 30.0

    def test_a_job_waited_for_submitted_is_not_read(self) -> None:
        entries = {
            "fire": {
                "resource_name": RESOURCE_NAME,
                "location": EXPECTED.location,
                "wait": {"until": "submitted"},
            }
        }
        plan = WaitPlan.of_entries(entries)
        assert len(plan.jobs) == 1 and plan.waited == ()
