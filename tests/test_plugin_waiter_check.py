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
    plugin = VertexTrainingProvider("0.0.0")
    entry = {
        "name": "train",
        "resourceName": UNKNOWN_TEXT,
        "until": "succeeded",
        "config": {"image": IMAGE},
        "stack": {},
    }
    assert refusals(plugin, [entry, UNKNOWN_TEXT]) == []


def test_what_is_no_entry_is_refused_on_its_path_with_what_to_list() -> None:
    plugin = VertexTrainingProvider("0.0.0")
    by_hand = {"name": "train", "until": "succeeded"}
    job_id = "projects/p/locations/us-central1/customJobs/1"
    assert refusals(plugin, [by_hand, job_id]) == [
        (
            "jobs[0]",
            f"jobs[0]: is no job's waiterEntry (it lacks resourceName, config, stack); {LIST}",
        ),
        ("jobs[1]", f"jobs[1]: is no job's waiterEntry (it is a str); {LIST}"),
    ]


def test_a_job_listed_twice_is_refused() -> None:
    plugin = VertexTrainingProvider("0.0.0")
    entry = {"name": "train", "resourceName": "", "until": "running", "config": {}, "stack": {}}
    assert refusals(plugin, [entry, entry]) == [
        ("jobs[1]", "jobs[1]: lists job train a second time; list each job once")
    ]
