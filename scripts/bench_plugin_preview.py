"""What does the plugin cost a command? A no-change `pulumi preview` of a small program
that uses it, beside the same program without the plugin's resources.

Two Pulumi YAML programs, side by side in one run, against the same CLI and the same
fake JobService on loopback:

- the program: two training jobs (one of two GPU pools, one with a secret in its env), a
  three-trial tuning job and a JobWaiter of all three, through the plugin (provider/, run
  under this virtualenv's Python, as the launcher runs it once installed); `pulumi up`
  once, so that its previews have nothing to change;
- the same program with the plugin's resources taken out (its config and outputs kept):
  the engine and the YAML language host alone.

Then RUNS no-change previews of each, in pairs (which goes first alternates), so that
each pair meets the machine in the same state. It prints each program's median, minimum
and maximum, and the plugin's cost per command: the median of the pairs' differences,
beside the target (at most 1 s). Figures, not a pass or fail: the machine's noise (10 to
20% on a shared 2-core machine) is why the previews are paired.

    make bench                                  (with the waits' benchmark)
    python scripts/bench_plugin_preview.py [--runs 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.engine import Project
from vertex_training.testing.fake_vertex import FakeVertex

RUNS = 10
#: The most the plugin may add to a no-change preview (issue 44).
TARGET_S = 1.0
PLUGIN_DIR = Path(__file__).resolve().parent.parent / "provider"
IMAGE = "us-docker.pkg.dev/bench-project/repo/trainer:1"
STUDY = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"learning-rate": {"type": "double", "min": 0.001, "max": 0.1}},
    "max_trials": 3,
    "parallel_trials": 3,
}


def resources() -> dict[str, Any]:
    """The plugin's resources of the program."""

    def job(type_: str, **keys: Any) -> dict[str, Any]:
        return {"type": f"vertex-training:{type_}", "properties": {"job": keys}}

    return {
        "train": job(
            "TrainingJob",
            image=IMAGE,
            machine="n1-standard-8",
            accelerator={"type": "NVIDIA_TESLA_T4", "count": 2},
            workers={"replicas": 2, "machine": "n1-standard-8"},
            wait="succeeded",
        ),
        "evaluate": job(
            "TrainingJob",
            image=IMAGE,
            machine="e2-standard-4",
            env={"TOKEN": {"fn::secret": "bench-secret"}},
            wait="succeeded",
        ),
        "sweep": job("HyperparameterTuningJob", image=IMAGE, study=STUDY, wait="succeeded"),
        "wait-for-jobs": {
            "type": "vertex-training:JobWaiter",
            "properties": {
                "jobs": [f"${{{name}.waiterEntry}}" for name in ("train", "evaluate", "sweep")]
            },
        },
    }


def program(fake: FakeVertex, *, with_plugin: bool) -> dict[str, Any]:
    config = {
        "vertex-training:apiEndpoint": fake.address,
        "vertex-training:project": "bench-project",
        "vertex-training:region": "us-central1",
    }
    made: dict[str, Any] = {
        "name": "bench-plugin",
        "runtime": "yaml",
        "config": config,
        "outputs": {"region": "us-central1"},
    }
    if with_plugin:
        made["plugins"] = {"providers": [{"name": "vertex-training", "path": str(PLUGIN_DIR)}]}
        made["resources"] = resources()
    return made


def preview_s(project: Project) -> float:
    """One no-change preview; its time."""
    start = time.monotonic()
    result = project.run("preview", "--expect-no-changes").check()
    took = time.monotonic() - start
    if "warning: using pulumi-resource" in result.output:
        print(f"  (the engine warned {result.output.count('warning: using')}x of PATH)")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="previews of each program")
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as with_tmp,
        tempfile.TemporaryDirectory() as without_tmp,
        FakeVertex(queued_s=0.1, pending_s=0.1, run_s=0.2, trial_s=0.1) as fake,
    ):
        mine = Project.of_yaml(Path(with_tmp), program(fake, with_plugin=True))
        theirs = Project.of_yaml(Path(without_tmp), program(fake, with_plugin=False))
        mine.up().check()
        theirs.up().check()
        times: dict[str, list[float]] = {"with": [], "without": []}
        for run in range(args.runs):
            pair = [("with", mine), ("without", theirs)]
            for label, project in pair if run % 2 == 0 else pair[::-1]:
                times[label].append(preview_s(project))
    print(f"no-change `pulumi preview`, {args.runs} of each, in pairs (seconds):")
    for label, title in (("with", "the program (3 jobs, a waiter)"), ("without", "without them")):
        figures = times[label]
        print(
            f"  {title:32} median {statistics.median(figures):.2f}  "
            f"min {min(figures):.2f}  max {max(figures):.2f}"
        )
    cost = statistics.median(m - t for m, t in zip(times["with"], times["without"], strict=True))
    verdict = "within" if cost <= TARGET_S else "OVER"
    print(f"the plugin's cost per command: {cost:.2f} s ({verdict} the {TARGET_S:.0f} s target)")


if __name__ == "__main__":
    main()
