"""How does a stack of many jobs compare with the engine's own pace?

For each stack size (50, 200 and 400 jobs by default), side by side in one run against
the same Pulumi CLI and the same fake JobService on loopback, three rounds of:

1. this project: the first `pulumi up` of N jobs on the vertex backend (``wait`` left at
   its default, ``submitted``), then a `pulumi preview` with nothing changed;
2. the baseline: the same two commands on a program of N no-op dynamic resources, each
   given its job's config as its input (a provider that checks, diffs and creates
   nothing: the cost of the engine, the language host and the dynamic provider host
   alone).

It prints the median of the rounds and the ratio (this project / baseline), the state
file's size per job (the baseline's per resource beside it), and the Vertex AI calls
per job the first `up` made (read from the fake's call log).

    make bench-scale                       (or: python scripts/bench_scale.py)
    python scripts/bench_scale.py --sizes 50 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from provider.testing.fake_vertex import FakeVertex
from tests.engine import Project

SIZES = (50, 200, 400)
ROUNDS = 3
IMAGE = "us-docker.pkg.dev/bench-project/repo/trainer:1"
#: The targets at the largest size (this project / baseline).
PREVIEW_TARGET = 1.25
UP_TARGET = 1.5

#: N no-op dynamic resources: the provider is in a module of its own, so the engine
#: records it by reference, as this project's providers are.
BASELINE_PROVIDER = """
from pulumi.dynamic import CreateResult, Resource, ResourceProvider


class NoOp(ResourceProvider):
    def create(self, props):
        return CreateResult(props["name"], props)


class Job(Resource):
    def __init__(self, name, props):
        super().__init__(NoOp(), name, props)
"""

BASELINE_PROGRAM = """
import pulumi

from noop import Job

for name, config in (pulumi.Config("vertex-training").get_object("jobs") or {}).items():
    Job(name, {"name": name, "config": config})
"""


def job_config(index: int) -> dict[str, Any]:
    """One job of the stack: a small sweep's member, as a platform team writes them."""
    return {
        "image": IMAGE,
        "machine": "n1-standard-8",
        "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
        "args": ["--learning-rate", f"0.00{index % 9 + 1}", "--seed", str(index)],
        "env": {"EPOCHS": "10"},
        "labels": {"team": "ranking", "sweep": "lr"},
    }


def stack_config(jobs: int, fake: FakeVertex) -> dict[str, Any]:
    return {
        "gcp:project": "bench-project",
        "gcp:region": "us-central1",
        "vertex-training:apiEndpoint": fake.address,
        "vertex-training:jobs": {f"job-{i:03d}": job_config(i) for i in range(jobs)},
    }


@dataclass
class Figures:
    """What the rounds of one program at one size measured."""

    up_s: list[float] = field(default_factory=list)
    preview_s: list[float] = field(default_factory=list)
    state_bytes: int = 0
    calls: Counter[str] = field(default_factory=Counter)

    @property
    def up(self) -> float:
        return statistics.median(self.up_s)

    @property
    def preview(self) -> float:
        return statistics.median(self.preview_s)


def state_size(tmp: Path) -> int:
    """The size of the stack's checkpoint in the file backend."""
    files = [p for p in (tmp / "state" / ".pulumi" / "stacks").rglob("*.json") if p.is_file()]
    return sum(p.stat().st_size for p in files)


def round_of(project: Project, tmp: Path, figures: Figures, fake: FakeVertex) -> None:
    """A first `up`, then a no-change preview; adds their times to ``figures``."""
    project.init()
    before = len(fake.calls)
    start = time.monotonic()
    project.up().check()
    figures.up_s.append(time.monotonic() - start)
    figures.calls = Counter(call.method for call in fake.calls[before:])
    start = time.monotonic()
    result = project.run("preview").check()
    figures.preview_s.append(time.monotonic() - start)
    if "to create" in result.output or "to update" in result.output:
        raise AssertionError(f"the preview after `up` is not empty:\n{result.output}")
    figures.state_bytes = state_size(tmp)


def this_project(jobs: int, figures: Figures) -> None:
    with tempfile.TemporaryDirectory() as name, FakeVertex() as fake:
        tmp = Path(name)
        project = Project.create(tmp)
        project.write_stack(stack_config(jobs, fake))
        round_of(project, tmp, figures, fake)


def baseline(jobs: int, figures: Figures) -> None:
    with tempfile.TemporaryDirectory() as name, FakeVertex() as fake:
        tmp = Path(name)
        project = Project.of_program(tmp, BASELINE_PROGRAM, {"noop.py": BASELINE_PROVIDER})
        config = stack_config(jobs, fake)
        project.write_stack({"vertex-training:jobs": config["vertex-training:jobs"]})
        round_of(project, tmp, figures, fake)


def ratio(mine: float, theirs: float) -> str:
    return f"{mine / theirs:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    results: dict[int, tuple[Figures, Figures]] = {}
    for jobs in args.sizes:
        mine, theirs = Figures(), Figures()
        for round_ in range(args.rounds):
            # Alternate which goes first, so neither always meets a warmer machine.
            order = [(this_project, mine), (baseline, theirs)]
            for run, figures in order if round_ % 2 == 0 else reversed(order):
                run(jobs, figures)
            print(
                f"{jobs} jobs, round {round_ + 1}: up {mine.up_s[-1]:.2f} s vs "
                f"{theirs.up_s[-1]:.2f} s, preview {mine.preview_s[-1]:.2f} s vs "
                f"{theirs.preview_s[-1]:.2f} s",
                file=sys.stderr,
                flush=True,
            )
        results[jobs] = (mine, theirs)

    print(
        f"median of {args.rounds}; this project vs {'N no-op dynamic resources'} "
        "(same engine, same run)"
    )
    header = (
        f"{'jobs':>5} | {'preview (s)':>16} {'ratio':>6} | {'first up (s)':>16} {'ratio':>6} "
        f"| {'state/job (B)':>15} | calls/job in up"
    )
    print(header)
    print("-" * len(header))
    for jobs, (mine, theirs) in results.items():
        calls = ", ".join(f"{m} {n / jobs:g}" for m, n in sorted(mine.calls.items()))
        print(
            f"{jobs:>5} | {mine.preview:7.2f} vs {theirs.preview:6.2f} "
            f"{ratio(mine.preview, theirs.preview):>6} | {mine.up:7.2f} vs {theirs.up:6.2f} "
            f"{ratio(mine.up, theirs.up):>6} | {mine.state_bytes / jobs:6.0f} vs "
            f"{theirs.state_bytes / jobs:6.0f} | {sum(mine.calls.values()) / jobs:g} "
            f"({calls})"
        )
    largest = max(results)
    mine, theirs = results[largest]
    print(
        f"targets at {largest} jobs: preview <= {PREVIEW_TARGET}x "
        f"(now {ratio(mine.preview, theirs.preview)}), first up <= {UP_TARGET}x "
        f"(now {ratio(mine.up, theirs.up)})"
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    str(jobs): {
                        "project": {**vars(m), "calls": dict(m.calls)},
                        "baseline": {**vars(t), "calls": dict(t.calls)},
                    }
                    for jobs, (m, t) in results.items()
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
