"""The plugin's JobWaiter refuses at preview what is no job's ``waiterEntry`` (an entry
written by hand, a job's ID instead of its entry) and a job listed twice, each on its
property path with what to list instead; entries not known yet pass."""

from __future__ import annotations

import asyncio
from typing import Any

from pulumi.provider.experimental.provider import CheckRequest

from tests.test_plugin_provider import IMAGE, WAITER, urn, values
from vertex_training.plugin.provider import VertexTrainingProvider
from vertex_training.resources.job_arguments import UNKNOWN_TEXT

LIST = (
    "list the job's `waiterEntry` output (`${train.waiterEntry}` in YAML, "
    "`train.waiterEntry` in TypeScript, `train.WaiterEntry` in Go)"
)


def refusals(plugin: VertexTrainingProvider, jobs: Any) -> list[tuple[str, str]]:
    inputs = values({"jobs": jobs})
    checked = asyncio.run(plugin.check(CheckRequest(urn(WAITER, "wait"), {}, inputs, b"")))
    return [(failure.property, failure.reason) for failure in checked.failures]


def test_a_jobs_entry_passes_and_an_unknown_one_is_checked_later() -> None:
    """A job's wait plan; one with the job's keys (a job with retry, and every entry of a
    build before the plan); one whose resource name or timeout is not known yet."""
    plugin = VertexTrainingProvider("0.0.0")
    plan = {
        "name": "plan",
        "resourceName": "projects/p/locations/us-central1/customJobs/1",
        "until": "succeeded",
        "timeoutS": 3600.0,
        "startTimeoutS": 600.0,
    }
    keys = {
        "name": "train",
        "resourceName": UNKNOWN_TEXT,
        "until": "succeeded",
        "config": {"image": IMAGE},
        "stack": {},
    }
    later = {"name": "later", "resourceName": UNKNOWN_TEXT, "until": "running"}
    assert refusals(plugin, [plan, keys, {**later, "timeoutS": UNKNOWN_TEXT}, UNKNOWN_TEXT]) == []


def test_a_plan_the_waiter_cannot_follow_is_refused_on_its_key() -> None:
    plugin = VertexTrainingProvider("0.0.0")
    plan = {"name": "a", "resourceName": "local/a-1", "until": "running", "timeoutS": 60.0}
    wrong = [
        {**plan, "name": "b", "timeoutS": 0.0},
        {**plan, "name": "c", "startTimeoutS": "1h"},
        {**plan, "name": "d", "resourceName": "customJobs/1"},
    ]
    assert refusals(plugin, [plan, *wrong]) == [
        (
            "jobs[1].timeoutS",
            f"jobs[1].timeoutS: must be a number of seconds over 0, as the job's `wait` sets "
            f"it; {LIST} (got 0.0)",
        ),
        (
            "jobs[2].startTimeoutS",
            f"jobs[2].startTimeoutS: must be a number of seconds over 0, as the job's `wait` "
            f"sets it; {LIST} (got '1h')",
        ),
        (
            "jobs[3].resourceName",
            f"jobs[3].resourceName: 'customJobs/1' names no Vertex AI or local job; {LIST}",
        ),
    ]


def test_what_is_no_entry_is_refused_on_its_path_with_what_to_list() -> None:
    plugin = VertexTrainingProvider("0.0.0")
    by_hand = {"name": "train", "until": "succeeded"}
    job_id = "projects/p/locations/us-central1/customJobs/1"
    assert refusals(plugin, [by_hand, job_id]) == [
        (
            "jobs[0]",
            f"jobs[0]: is no job's waiterEntry (it lacks resourceName, timeoutS); {LIST}",
        ),
        ("jobs[1]", f"jobs[1]: is no job's waiterEntry (it is a str); {LIST}"),
    ]


def test_a_job_listed_twice_is_refused() -> None:
    plugin = VertexTrainingProvider("0.0.0")
    entry = {"name": "train", "resourceName": "", "until": "running", "config": {}, "stack": {}}
    assert refusals(plugin, [entry, entry]) == [
        ("jobs[1]", "jobs[1]: lists job train a second time; list each job once")
    ]
