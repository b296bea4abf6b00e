"""How long does `pulumi up` take for a stack of jobs that all wait for `succeeded`?

Runs the real engine against the fake JobService on loopback, three times in one run,
with the same JOBS jobs (job i runs LONGEST_S * (i + 1) / JOBS seconds):

1. this project, `wait: submitted`: the engine's own overhead for the stack;
2. this project, `wait: succeeded`: one JobWaiter polls every job in a single call;
3. a baseline program that waits for each job inside its own resource's create, as a
   naive dynamic provider would: the provider host's four threads take the jobs in
   batches.

It prints each `pulumi up` time and its ratio to the longest job, then the time the
JobWaiter adds to the longest job, as a fraction of it: (waited - overhead - longest) /
longest, the engine's overhead being what run 1 took (target: at most 0.10).

    make bench        (or: python scripts/bench_wait.py --jobs 12 --longest 20)
    python scripts/bench_wait.py --longest 60      (jobs of 5 to 60 s)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.engine import Project
from vertex_training.testing.fake_vertex import FakeVertex

JOBS = 12
LONGEST_S = 20.0
IMAGE = "us-docker.pkg.dev/bench-project/repo/trainer:1"
#: The most the JobWaiter may add to the longest job, as a fraction of it: its polling
#: notices an end within max(2 s, 5% of the job's running time).
ADDED_TARGET = 0.10
LABEL_WIDTH = 52

#: The baseline: each resource submits its job, then waits for it in create.
BASELINE_PROVIDER = """
from pulumi.dynamic import CreateResult, Resource, ResourceProvider

from vertex_training.backends.vertex import VertexBackend
from vertex_training.resources.state import ProviderSettings
from vertex_training.resources.waiter import wait_for


class WaitInCreate(ResourceProvider):
    def create(self, props):
        location = {"backend": "vertex", "project": "bench-project", "region": "us-central1"}
        backend = VertexBackend("bench-project", "us-central1", api_endpoint=props["endpoint"])
        job = backend.submit(props["request"])
        settings = ProviderSettings(api_endpoint=props["endpoint"])
        wait_for({props["name"]: {"resource_name": job.name, "location": location,
                                  "wait": {"until": "succeeded", "timeout_s": 3600}}},
                 settings=settings)
        return CreateResult(job.name, {})


class Job(Resource):
    def __init__(self, name, props):
        super().__init__(WaitInCreate(), name, props)
"""

BASELINE_PROGRAM = """
import pulumi

from naive import Job

config = pulumi.Config("vertex-training")
for name in config.get_object("names"):
    request = {"displayName": name, "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
        "containerSpec": {"imageUri": config.get("image")}}]}}
    Job(name, {"name": name, "request": request, "endpoint": config.get("apiEndpoint")})
"""


def durations(jobs: int, longest_s: float) -> dict[str, float]:
    return {f"job-{i:02d}": longest_s * (i + 1) / jobs for i in range(jobs)}


def timed_up(project: Project, fake: FakeVertex) -> tuple[float, float]:
    """`pulumi up`; return (its seconds, the longest ended job's seconds, creation to end)."""
    project.init()
    start = time.monotonic()
    project.up().check()
    elapsed = time.monotonic() - start
    lifetimes = [  # jobs not waited for may still run: they have no end time yet
        (job.end_time - job.create_time).total_seconds()
        for job in fake.jobs.values()
        if job.end_time
    ]
    return elapsed, max(lifetimes, default=0.0)


def this_project(jobs: int, longest_s: float, wait: str) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, FakeVertex() as fake:
        names = durations(jobs, longest_s)
        for name, seconds in names.items():
            fake.script(name, run_s=seconds)
        project = Project.create(Path(tmp))
        project.write_stack(
            {
                "gcp:project": "bench-project",
                "gcp:region": "us-central1",
                "vertex-training:apiEndpoint": fake.address,
                "vertex-training:jobs": {name: {"image": IMAGE, "wait": wait} for name in names},
            }
        )
        return timed_up(project, fake)


def baseline(jobs: int, longest_s: float) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, FakeVertex() as fake:
        names = durations(jobs, longest_s)
        for name, seconds in names.items():
            fake.script(name, run_s=seconds)
        project = Project.of_program(Path(tmp), BASELINE_PROGRAM, {"naive.py": BASELINE_PROVIDER})
        config: dict[str, Any] = {
            "vertex-training:names": list(names),
            "vertex-training:image": IMAGE,
            "vertex-training:apiEndpoint": fake.address,
        }
        project.write_stack(config)
        return timed_up(project, fake)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument("--longest", type=float, default=LONGEST_S, help="seconds")
    args = parser.parse_args()

    overhead, _ = this_project(args.jobs, args.longest, "submitted")
    waited, longest = this_project(args.jobs, args.longest, "succeeded")
    naive, naive_longest = baseline(args.jobs, args.longest)
    print(
        f"{args.jobs} jobs, the longest {args.longest:.0f} s of running "
        f"({longest:.1f} s from submission to its end)"
    )
    print(f"{'pulumi up':{LABEL_WIDTH}} {'seconds':>8} {'/ longest':>10}")
    rows = [
        ("this project, wait: submitted (overhead)", overhead, longest),
        ("this project, wait: succeeded (JobWaiter)", waited, longest),
        ("baseline, waiting in each create", naive, naive_longest),
    ]
    for label, seconds, reference in rows:
        print(f"{label:{LABEL_WIDTH}} {seconds:8.1f} {seconds / reference:10.2f}")
    added = waited - overhead - longest
    print(
        f"{'added by the JobWaiter (waited - overhead - longest)':{LABEL_WIDTH}} {added:8.1f} "
        f"{added / longest:10.2f}  (target <= {ADDED_TARGET:.2f})"
    )


if __name__ == "__main__":
    main()
