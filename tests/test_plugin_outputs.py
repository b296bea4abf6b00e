"""The plugin's typed outputs, against the fake JobService: a failed job's ``failure`` (a
``JobFailure``) and the ``attempts`` of a job with ``retry`` (each an ``Attempt``, in
camelCase), on the job and on the JobWaiter that submitted its next attempt; and a
waiter entry that is the job's wait plan and its keys both."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi.provider.experimental.property_value import PropertyValue
from pulumi.provider.experimental.provider import CreateRequest, ReadRequest

from tests.test_plugin_provider import WAITER, create, job, started, urn
from vertex_training.api import states
from vertex_training.plugin.init_failed import InitFailedError
from vertex_training.plugin.provider import VertexTrainingProvider
from vertex_training.plugin.schema import ATTEMPT_PROPERTIES, JOB_FAILURE_PROPERTIES
from vertex_training.plugin.values import plain, plain_map
from vertex_training.testing.fake_vertex import FakeVertex


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as served:
        yield served


@pytest.fixture
def plugin(
    fake: FakeVertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> VertexTrainingProvider:
    monkeypatch.chdir(tmp_path)
    return started(fake)


def wait_for(plugin: VertexTrainingProvider, *entries: PropertyValue) -> dict[str, Any]:
    """A JobWaiter's create over the jobs' entries: its properties, kept when a job failed
    the wait (``InitFailedError``)."""
    request = CreateRequest(
        urn(WAITER, "wait"), {"jobs": PropertyValue(list(entries))}, 60.0, False
    )
    try:
        made = asyncio.run(plugin.create(request))
    except InitFailedError as failed:
        return plain_map(failed.properties)
    return plain_map(made.properties)


def test_a_failed_job_reads_its_failure_typed(
    plugin: VertexTrainingProvider, fake: FakeVertex
) -> None:
    fake.script("train", outcome=states.FAILED)
    made = create(plugin, job(wait="succeeded"))
    waited = wait_for(plugin, made.properties["waiterEntry"])
    assert "ended FAILED" in waited["problems"]["train"]
    read = asyncio.run(
        plugin.read(ReadRequest(urn(), made.resource_id, made.properties, made.properties))
    )
    failure = plain_map(read.properties)["failure"]
    assert set(failure) == set(JOB_FAILURE_PROPERTIES)
    assert failure["class"] == "user_code" and failure["replica"] == "workerpool0-0"
    assert failure["fix"] and failure["code"] > 0


def test_attempts_are_typed_on_the_job_and_its_waiter(
    plugin: VertexTrainingProvider, fake: FakeVertex
) -> None:
    """A job whose first attempt found no capacity: its waiter submits the second in the
    next region; both list the attempts in camelCase, the waiter's by job name. Its entry
    carries its keys (the waiter submits its next attempts from them) beside its plan."""
    fake.stockout("us-central1")
    retry = {"when": ["capacity"], "regions": ["us-east1"]}
    made = create(plugin, job(wait="succeeded", retry=retry))
    entry = plain(made.properties["waiterEntry"])
    assert entry["timeoutS"] == 86400.0 and entry["config"]["retry"] == retry
    first = plain_map(made.properties)["attempts"]
    assert [set(a) for a in first] == [set(ATTEMPT_PROPERTIES)]
    assert first[0]["attempt"] == 1 and first[0]["region"] == "us-central1"
    assert first[0]["resourceName"] == made.resource_id

    waited = wait_for(plugin, made.properties["waiterEntry"])
    assert waited["states"] == {"train": states.SUCCEEDED}, waited.get("problems")
    attempts = waited["attempts"]["train"]
    assert [(a["attempt"], a["region"], a["class"]) for a in attempts] == [
        (1, "us-central1", "capacity"),
        (2, "us-east1", ""),
    ]
    assert all(set(a) == set(ATTEMPT_PROPERTIES) for a in attempts)
    assert attempts[1]["jobId"] and attempts[1]["resourceName"].endswith(attempts[1]["jobId"])
    assert "us-east1" in attempts[1]["consoleUrl"]

    read = asyncio.run(
        plugin.read(ReadRequest(urn(), made.resource_id, made.properties, made.properties))
    )
    recorded = plain_map(read.properties)
    assert [a["region"] for a in recorded["attempts"]] == ["us-central1", "us-east1"]
    assert recorded["attempts"][1]["jobId"] == attempts[1]["jobId"]
