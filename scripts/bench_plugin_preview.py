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

With --typescript the two programs are TypeScript ones on the SDK the release packs
(scripts/pack-sdks.sh; both import it, one makes the resources): the figure a
TypeScript user meets, with Node.js's own start on both sides.

    make bench                                  (with the waits' benchmark)
    python scripts/bench_plugin_preview.py [--runs 10] [--typescript]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

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


TYPESCRIPT = """\
import * as pulumi from "@pulumi/pulumi";
import * as vertex from "vertex-training";

const image = "%(image)s";
export const region = "us-central1";
if (%(with_jobs)s) {
    const train = new vertex.TrainingJob("train", { job: {
        image, machine: "n1-standard-8", accelerator: { type: "NVIDIA_TESLA_T4", count: 2 },
        workers: { replicas: 2, machine: "n1-standard-8" }, wait: "succeeded" } });
    const evaluate = new vertex.TrainingJob("evaluate", { job: {
        image, machine: "e2-standard-4", env: { TOKEN: pulumi.secret("bench-secret") },
        wait: "succeeded" } });
    const sweep = new vertex.HyperparameterTuningJob("sweep", { job: {
        image, study: %(study)s, wait: "succeeded" } });
    new vertex.JobWaiter("wait-for-jobs", {
        jobs: [train.waiterEntry, evaluate.waiterEntry, sweep.waiterEntry] });
}
"""


def typescript_project(tmp: Path, fake: FakeVertex, tarball: Path, *, with_plugin: bool) -> Project:
    """A TypeScript program on the packed SDK: the resources, or none of them."""
    made = program(fake, with_plugin=True)
    pulumi_yaml = {
        "name": "bench-plugin",
        "runtime": {"name": "nodejs", "options": {"typescript": True}},
        "plugins": made["plugins"],
        "config": made["config"],
    }
    package = {
        "name": "bench-plugin",
        "main": "index.ts",
        "dependencies": {"@pulumi/pulumi": "3.259.0", "vertex-training": f"file:{tarball}"},
        "devDependencies": {"@types/node": "^20", "typescript": "^5"},
    }
    source = TYPESCRIPT % {
        "image": IMAGE,
        "with_jobs": "true" if with_plugin else "false",
        "study": json.dumps(STUDY),
    }
    files = {"package.json": json.dumps(package), "index.ts": source}
    project = Project.of_files(tmp, files)
    project.write_program(pulumi_yaml)
    quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
    subprocess.run(["npm", "install", *quiet], cwd=project.root, check=True)
    return project


def packed_sdk(out: Path) -> Path:
    """The TypeScript SDK's npm tarball, packed as a release packs it."""
    pack = Path(__file__).resolve().parent / "pack-sdks.sh"
    subprocess.run(["bash", str(pack), str(out), "nodejs"], check=True)
    [tarball] = out.glob("*.tgz")
    return tarball


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
    parser.add_argument("--typescript", action="store_true", help="TypeScript programs")
    parser.add_argument(
        "--on-path", action="store_true", help="the plugin the wheel puts on PATH, not provider/"
    )
    args = parser.parse_args()
    if args.typescript and not shutil.which("npm"):
        sys.exit("--typescript needs Node.js and npm")
    language = "TypeScript" if args.typescript else "YAML"
    with (
        tempfile.TemporaryDirectory() as with_tmp,
        tempfile.TemporaryDirectory() as without_tmp,
        tempfile.TemporaryDirectory() as sdk_tmp,
        FakeVertex(queued_s=0.1, pending_s=0.1, run_s=0.2, trial_s=0.1) as fake,
    ):
        if args.typescript:
            tarball = packed_sdk(Path(sdk_tmp))
            mine = typescript_project(Path(with_tmp), fake, tarball, with_plugin=True)
            theirs = typescript_project(Path(without_tmp), fake, tarball, with_plugin=False)
        else:
            mine = Project.of_yaml(Path(with_tmp), program(fake, with_plugin=True))
            theirs = Project.of_yaml(Path(without_tmp), program(fake, with_plugin=False))
        if args.on_path:  # the engine finds the virtualenv's command on PATH
            for project in (mine, theirs):
                written = yaml.safe_load((project.root / "Pulumi.yaml").read_text())
                written.pop("plugins", None)
                project.write_program(written)
        mine.up().check()
        theirs.up().check()
        times: dict[str, list[float]] = {"with": [], "without": []}
        for run in range(args.runs):
            pair = [("with", mine), ("without", theirs)]
            for label, project in pair if run % 2 == 0 else pair[::-1]:
                times[label].append(preview_s(project))
    print(f"no-change `pulumi preview` of a {language} program, {args.runs} of each, in pairs (s):")
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
