"""Where the acceptance suite runs: Google's services in a real project, or the fakes.

With ``VERTEX_TRAINING_ACCEPTANCE_PROJECT`` set, every scenario runs against Vertex AI,
Cloud Logging, the Cloud Billing Catalog, Compute Engine, Cloud Quotas and Artifact
Registry in that project and ``VERTEX_TRAINING_ACCEPTANCE_REGION`` (us-central1 unless
set), with application default credentials. Without it, the same scenarios run against
the fakes of ``vertex_training.testing``, each started here on loopback: the scenarios
are the same code, and only the endpoints differ (``Target``). The fakes are also told
how long the suite's jobs run and which of them fails, which is what the jobs' own
commands decide on Google.

Every job a run makes carries two labels: ``acceptance_run`` (the run's ID, from
``VERTEX_TRAINING_ACCEPTANCE_RUN`` or made up here) and ``acceptance_scenario``. A
scenario lists the project by them afterwards: anything left is cancelled, deleted and
reported as a failure. The sweeper (``vertex-training jobs orphans --label
acceptance_run=...``) runs before the first scenario and after the last.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import os
import secrets
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tests.engine import REPO
from vertex_training.api import states
from vertex_training.api.times import epoch_s
from vertex_training.backends.base import JobStatus
from vertex_training.backends.vertex import VertexBackend, label_filter

if TYPE_CHECKING:
    from vertex_training.catalog.prices import Snapshot


PROJECT_ENV = "VERTEX_TRAINING_ACCEPTANCE_PROJECT"
REGION_ENV = "VERTEX_TRAINING_ACCEPTANCE_REGION"
RUN_ENV = "VERTEX_TRAINING_ACCEPTANCE_RUN"
IMAGE_ENV = "VERTEX_TRAINING_ACCEPTANCE_IMAGE"
DEFAULT_REGION = "us-central1"
#: The fakes' project: any name does, nothing is provisioned.
FAKE_PROJECT = "acceptance-project"
#: A public image with Python in it, which Vertex AI pulls from Docker Hub.
DEFAULT_IMAGE = "docker.io/library/python:3.12-slim"
#: The cheapest machine Vertex AI custom training runs (CPU only).
MACHINE = "e2-standard-4"
RUN_LABEL = "acceptance_run"
SCENARIO_LABEL = "acceptance_scenario"
#: Every job of the suite stops by then, whatever it does.
JOB_TIMEOUT = "10m"

SECONDS_PER_HOUR = 3600
MINUTES_PER_HOUR = 60
#: How a clean-up waits for a cancelled job to end: 10 minutes at most.
CLEAN_UP_POLL_S = 5.0
CLEAN_UP_POLLS = 120

#: The fakes' timing: a job is QUEUED, PENDING, then RUNNING this long.
FAKE_QUEUED_S = 1.0
FAKE_PENDING_S = 1.0
FAKE_RUN_S = 3.0
FAKE_TRIAL_S = 1.0
#: How long a job the fake is told to run until cancelled runs.
FOREVER = math.inf


def run_id() -> str:
    """``VERTEX_TRAINING_ACCEPTANCE_RUN``, else ``acc-<UTC time>-<random>`` (a label value)."""
    given = os.environ.get(RUN_ENV)
    if given:
        return given
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%d-%H%M%S")
    return f"acc-{stamp}-{secrets.token_hex(2)}"


@dataclass
class Target:
    """The services a run talks to: ``None`` endpoints are Google's."""

    project: str
    region: str
    run: str
    image: str
    #: Vertex AI's JobService (and Cloud Logging, which its fake serves too).
    endpoint: str | None = None
    catalog_endpoint: str | None = None
    compute_endpoint: str | None = None
    quotas_endpoint: str | None = None
    registry_endpoint: str | None = None
    #: The fake JobService, only to say how long a job runs or that it fails.
    fake: Any = None
    #: Every job the run listed, as last seen and when, by resource name (for the estimate).
    seen: dict[str, tuple[JobStatus, float]] = field(default_factory=dict)
    #: The price snapshot the run refreshed, once it has.
    prices: Path | None = None

    @property
    def google(self) -> bool:
        return self.endpoint is None

    @property
    def where(self) -> str:
        if self.google:
            return f"Google Cloud project {self.project}, {self.region}"
        return f"the fakes on loopback (Vertex AI at {self.endpoint}); set {PROJECT_ENV} for Google"

    def backend(self) -> VertexBackend:
        return VertexBackend(self.project, self.region, api_endpoint=self.endpoint)

    def labels(self, scenario: str) -> dict[str, str]:
        return {RUN_LABEL: self.run, SCENARIO_LABEL: scenario}

    def jobs_of(self, scenario: str) -> list[JobStatus]:
        """The jobs in the project carrying the scenario's labels, newest first."""
        jobs = self.backend().list_jobs(label_filter(self.labels(scenario)))
        now = time.time()
        self.seen.update((job.name, (job, now)) for job in jobs)
        return jobs

    def machine_hours(self) -> float:
        """The machine time of the jobs the run saw, from each one's start to its end (or
        to when it was last seen running: a destroy ends it soon after); a tuning job's
        times its trials."""
        total = 0.0
        for job, seen_at in self.seen.values():
            started = epoch_s(job.start_time)
            if started is None:
                continue
            ended = epoch_s(job.end_time) or seen_at
            total += (ended - started) * max(job.max_trials, 1)
        return total / SECONDS_PER_HOUR

    def orphans_command(self, *args: str) -> list[str]:
        """`vertex-training jobs orphans` for this run's jobs (its run label), with ``args``."""
        command = [sys.executable, "-m", "vertex_training", "jobs", "orphans"]
        command += ["--project", self.project, "--region", self.region]
        command += ["--label", f"{RUN_LABEL}={self.run}", *args]
        if self.endpoint:
            command += ["--endpoint", self.endpoint]
        return command

    def stack_config(
        self, scenario: str, jobs: Mapping[str, dict[str, Any]], *, platform: bool = False
    ) -> dict[str, Any]:
        """A stack config of ``jobs`` (each given the scenario's labels and the suite's
        timeout), without the platform unless asked: a run provisions nothing else. A
        platform's bucket goes with `destroy`, the jobs' outputs in it too."""
        config: dict[str, Any] = {
            "gcp:project": self.project,
            "gcp:region": self.region,
            "vertex-training:platform": (
                {"enabled": True, "bucket": {"force_destroy": True}}
                if platform
                else {"enabled": False}
            ),
            "vertex-training:jobs": {
                name: {
                    "machine": MACHINE,
                    **job,
                    "labels": {**job.get("labels", {}), **self.labels(scenario)},
                    "scheduling": {"timeout": JOB_TIMEOUT, **job.get("scheduling", {})},
                }
                for name, job in jobs.items()
            },
        }
        if self.endpoint:
            config["vertex-training:apiEndpoint"] = self.endpoint
        return config

    def script(self, display_name: str, *, run_s: float | None = None, fails: bool = False) -> None:
        """Tell the fake how the job named ``display_name`` behaves (on Google its command
        decides): how long it runs (``math.inf``: until cancelled), whether it fails."""
        if self.fake is not None:
            self.fake.script(
                display_name, run_s=run_s, outcome=states.FAILED if fails else states.SUCCEEDED
            )

    def container(self, code: str) -> dict[str, Any]:
        """A container job that runs ``code`` with the image's Python."""
        return {"image": self.image, "command": ["python", "-c", code]}

    def rate(self, snapshot: Snapshot) -> float | None:
        """The hourly rate of one ``MACHINE`` in the region by ``snapshot``, as ``render``
        prices a job."""
        from vertex_training import stackconfig
        from vertex_training.review import cost

        settings = stackconfig.StackSettings(stack="rate", project=self.project, region=self.region)
        job = stackconfig.parse_job("rate", {"image": self.image, "machine": MACHINE}, settings)
        return cost.estimate(job, snapshot).hourly_usd

    def estimate(self) -> str:
        """What the run's jobs cost by the price snapshot the run refreshed (else the
        project's): their machine time at ``MACHINE``'s rate."""
        from vertex_training.catalog import prices

        minutes = self.machine_hours() * MINUTES_PER_HOUR
        # A run that refreshed none is priced by the repository's snapshot.
        path = self.prices or prices.snapshot_path(REPO)
        snapshot = prices.load_if_present(path)
        rate = self.rate(snapshot) if snapshot is not None else None
        if snapshot is None or rate is None:
            return f"{minutes:.1f} machine-minutes of {MACHINE}; no price for it in {path}"
        invented = "" if self.google else ", the fake catalog's invented prices"
        return (
            f"{minutes:.1f} machine-minutes of {MACHINE} at ${rate:.4f}/h: "
            f"${rate * minutes / MINUTES_PER_HOUR:.4f} (prices read {snapshot.read_date} from "
            f"{snapshot.source}{invented})"
        )

    def clean_up(self, scenario: str) -> list[str]:
        """Cancel and delete what the scenario left; the names of what was left."""
        left = self.jobs_of(scenario)
        self.remove([job.name for job in left])
        return [f"{job.name} ({job.state})" for job in left]

    def remove(self, names: list[str]) -> None:
        """Cancel the jobs ``names``, wait for each to end, and delete it."""
        backend = self.backend()
        for name in names:
            backend.cancel(name)
        for name in names:
            for _ in range(CLEAN_UP_POLLS):
                current = backend.get(name)
                if current is None or current.state in states.TERMINAL_STATES:
                    break
                time.sleep(CLEAN_UP_POLL_S)
            backend.delete(name)


@contextlib.contextmanager
def target() -> Iterator[Target]:
    """The target the environment names: Google's project, or fakes started for the run."""
    run, image = run_id(), os.environ.get(IMAGE_ENV) or DEFAULT_IMAGE
    project = os.environ.get(PROJECT_ENV)
    if project:
        yield Target(project, os.environ.get(REGION_ENV) or DEFAULT_REGION, run, image)
        return
    from vertex_training.testing.fake_catalog import FakeCatalog
    from vertex_training.testing.fake_compute import FakeCompute
    from vertex_training.testing.fake_quotas import FakeQuotas
    from vertex_training.testing.fake_registry import FakeRegistry
    from vertex_training.testing.fake_vertex import FakeVertex

    with (
        FakeVertex(
            queued_s=FAKE_QUEUED_S,
            pending_s=FAKE_PENDING_S,
            run_s=FAKE_RUN_S,
            trial_s=FAKE_TRIAL_S,
            serve_logging=True,
        ) as vertex,
        FakeCatalog() as catalog,
        FakeCompute() as compute,
        FakeQuotas() as quotas,
        FakeRegistry() as registry,
    ):
        yield Target(
            FAKE_PROJECT,
            DEFAULT_REGION,
            run,
            image,
            endpoint=vertex.address,
            catalog_endpoint=catalog.address,
            compute_endpoint=compute.address,
            quotas_endpoint=quotas.address,
            registry_endpoint=registry.address,
            fake=vertex,
        )
