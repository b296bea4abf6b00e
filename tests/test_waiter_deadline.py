"""The engine's deadline for a wait: the timeout the engine gives the create or update
that waits (a resource's ``customTimeouts``), which the plugin hands the waiter's loop
(``vertex_training.resources.wait_loop``). A job still waited for when it runs out fails
the wait, as a job past its own timeout does; with none (0, and the Python dynamic
host, which is given none), the wait is as long as its jobs' timeouts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pulumi.provider.experimental.provider import CreateRequest

from tests.test_plugin_provider import WAITER, create, job, started, urn, values
from tests.test_waiter import HOUR_S, entry, submit
from vertex_training.api import states
from vertex_training.errors import JobEndedError
from vertex_training.plugin.init_failed import InitFailedError
from vertex_training.plugin.provider import VertexTrainingProvider
from vertex_training.plugin.values import plain_map
from vertex_training.resources.state import ProviderSettings
from vertex_training.resources.waiter import wait_for
from vertex_training.testing import FakeVertex, ManualClock

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    """A fake on a manual clock whose jobs start running at once."""
    with FakeVertex(queued_s=0, pending_s=0, clock=clock) as fake:
        yield fake


def run(
    entries: dict[str, Any], clock: ManualClock, fake: FakeVertex, **kwargs: Any
) -> dict[str, str]:
    settings = ProviderSettings(api_endpoint=fake.address)
    return wait_for(
        entries, settings=settings, clock=clock, monotonic=clock, sleep=clock.advance, **kwargs
    )


class TestTheLoopsDeadline:
    """``wait_for``'s ``deadline_s``, on the manual clock."""

    def test_a_job_still_running_at_the_deadline_fails_the_wait(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """The wait ends at the deadline, not at the job's own timeout, naming the
        engine's timeout; the job is read a last time then."""
        name = submit(fake, "long", 10 * HOUR_S)
        start = clock()
        with pytest.raises(JobEndedError) as failed:
            run({"long": entry(fake, name)}, clock, fake, deadline_s=600.0)
        assert clock() - start == pytest.approx(600.0)
        assert str(failed.value).startswith(
            f"job long ({name}) is still RUNNING after waiting 600s for it to be succeeded, "
            "the time the engine gave this step (its `customTimeouts`); it keeps running"
        )
        assert "\n  logs: https://" in str(failed.value)

    def test_jobs_that_end_before_the_deadline_are_unaffected(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        short, long = submit(fake, "short", 60.0), submit(fake, "long", 10 * HOUR_S)
        report: dict[str, dict[str, Any]] = {}
        entries = {"short": entry(fake, short), "long": entry(fake, long)}
        with pytest.raises(JobEndedError):
            run(entries, clock, fake, deadline_s=HOUR_S, report=report)
        assert list(report["problems"]) == ["long"]

    @pytest.mark.parametrize("deadline_s", [None, 0.0])
    def test_no_deadline_waits_for_the_jobs_timeouts(
        self, fake: FakeVertex, clock: ManualClock, deadline_s: float | None
    ) -> None:
        name = submit(fake, "job", 2 * HOUR_S)
        waited = run({"job": entry(fake, name)}, clock, fake, deadline_s=deadline_s)
        assert waited == {"job": states.SUCCEEDED}

    def test_a_jobs_own_timeout_sooner_than_the_deadline_says_so(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        name = submit(fake, "slow", 10 * HOUR_S)
        with pytest.raises(JobEndedError, match="still RUNNING after waiting 3630s for it"):
            run({"slow": entry(fake, name, timeout_s=3630)}, clock, fake, deadline_s=HOUR_S * 2)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[VertexTrainingProvider]:
    """The plugin, configured for a fake whose jobs run until cancelled."""
    monkeypatch.chdir(tmp_path)
    with FakeVertex(queued_s=0.1, pending_s=0.1, run_s=float("inf")) as served:
        yield started(served)


class TestThePluginsTimeout:
    """A JobWaiter's create is given the engine's timeout (``CreateRequest.timeout``)."""

    def test_the_engines_timeout_fails_the_waiter_and_keeps_it(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """Past it, the waiter fails with the job as a problem, kept with what it saw."""
        made = create(plugin, job(wait="succeeded"))
        jobs = {"jobs": [plain_map(made.properties)["waiterEntry"]]}
        request = CreateRequest(urn(WAITER, "wait"), values(jobs), 2.0, False)
        with pytest.raises(InitFailedError, match=r"its `customTimeouts`") as failed:
            asyncio.run(plugin.create(request))
        kept = plain_map(failed.value.properties)
        assert kept["states"] == {"train": states.RUNNING}
        assert "after waiting 2s for it to be succeeded" in kept["problems"]["train"]
