"""How long does `pulumi up` take for a stack of jobs that all wait for `succeeded`?

Runs the real engine on a `vertex` stack of JOBS jobs against the fake JobService, each
job running a different time (the longest LONGEST_S), and prints the ratio of the whole
`pulumi up` to the longest job. Waiting for all jobs in one call keeps that ratio near 1
(plus the engine's own start-up); jobs waited for one per provider thread would come in
batches of four, a ratio near JOBS / 4.

Side by side, in the same run, the same stack is brought up once with every job set to
`wait: submitted`: that time is the engine's overhead, which the ratio also includes.

    make bench        (or: python scripts/bench_wait.py --jobs 12 --longest 20)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from provider.testing.fake_vertex import FakeVertex
from tests.engine import Project

JOBS = 12
LONGEST_S = 20.0


def bring_up(jobs: int, longest_s: float, wait: str) -> tuple[float, float]:
    """`pulumi up` a fresh stack of `jobs` jobs; return (up seconds, longest job seconds)."""
    with tempfile.TemporaryDirectory() as tmp, FakeVertex() as fake:
        durations = {f"job-{i:02d}": longest_s * (i + 1) / jobs for i in range(jobs)}
        for name, seconds in durations.items():
            fake.script(name, run_s=seconds)
        project = Project.create(Path(tmp))
        project.write_stack({
            "gcp:project": "bench-project",
            "gcp:region": "us-central1",
            "vertex-training:apiEndpoint": fake.address,
            "vertex-training:jobs": {
                name: {"image": "us-docker.pkg.dev/bench-project/repo/trainer:1", "wait": wait}
                for name in durations
            },
        })
        project.init()
        start = time.monotonic()
        project.up().check()
        elapsed = time.monotonic() - start
        lifetimes = [
            (job.end_time - job.create_time).total_seconds() for job in fake.jobs.values()
        ]
        return elapsed, max(lifetimes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument("--longest", type=float, default=LONGEST_S, help="seconds")
    args = parser.parse_args()

    overhead, _ = bring_up(args.jobs, args.longest, "submitted")
    total, longest = bring_up(args.jobs, args.longest, "succeeded")
    print(f"jobs waited for:          {args.jobs}")
    print(f"longest job:              {longest:6.1f} s")
    print(f"pulumi up, wait=succeeded:{total:6.1f} s")
    print(f"pulumi up, wait=submitted:{overhead:6.1f} s   (engine overhead, same stack)")
    print(f"ratio total / longest:    {total / longest:6.2f}")
    print(f"ratio (total - overhead) / longest: {(total - overhead) / longest:6.2f}")
    print(f"batches of 4 would give about {(args.jobs + 3) // 4 * 1.0:.0f}x the longest "
          "job for equal jobs")


if __name__ == "__main__":
    main()
