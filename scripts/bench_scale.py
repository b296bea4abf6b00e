"""How does a stack of many jobs compare with the engine's own pace?

For each stack size (50, 200 and 400 jobs by default), side by side in one run against
the same Pulumi CLI and the same fake JobService on loopback, three rounds of:

1. the first `pulumi up` of N jobs, on each of two stacks (which goes first alternates
   from round to round):
   - this project, on the vertex backend (``wait`` left at its default, ``submitted``);
   - the baseline, a program of N no-op dynamic resources, each given its job's config
     as its input (a provider that checks, diffs and creates nothing: the cost of the
     engine, the language host and the dynamic provider host alone);
   and the same jobs through the provider plugin, on two more stacks:
   - a Pulumi YAML program of N ``vertex-training:TrainingJob`` resources, served by
     the plugin (provider/), the same job configs in the schema's naming;
   - its baseline, a YAML program of N resources of a no-op plugin written with the same
     SDK (a provider whose check, diff and create do nothing: the cost of the engine,
     the YAML language host and a Python plugin alone);
   and once more, the plugin's stack against that no-op plugin recording, for each
   resource, the very outputs the plugin's stack recorded for it (its ``up`` goes
   second, reading the plugin's state): the cost of a state that size with no work
   done, so that the plugin's own work shows apart from its state's size;
2. then ``--previews`` (3) no-change `pulumi preview`s of each, taken in pairs (the
   project's, then its baseline's, then the other way round), so that each pair meets
   the machine in the same state.

It prints the medians (the first `up` of each round; every preview) and the ratio
(this project / baseline): for `up`, the median of the rounds' ratios; for preview, the
median of the pairs' ratios. The machine's noise (10 to 20% from one command to the
next on a shared 2-core machine) is why previews are paired: a ratio of medians taken
minutes apart moves by more than the difference measured. It prints too the state
file's size per job (the baseline's per resource beside it) and the Vertex AI calls per
job the first `up` made (read from the fake's call log).

With ``--state-cuts``, it measures instead what the plugin's state costs the engine, at
the largest size: the plugin's stack once, then side by side the plain no-op plugin and
the matched one recording the plugin's outputs whole, and less and less of them
(``STATE_CUTS``): each one's first `up` and no-change previews, as ratios to the plain
no-op's. The plugin's own figures are printed beside them, from the same run.

    make bench-scale                       (or: python scripts/bench_scale.py)
    python scripts/bench_scale.py --sizes 50 --rounds 1 --previews 1
    python scripts/bench_scale.py --sizes 400 --previews 3 --state-cuts
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import vertex_training.plugin  # noqa: F401  (before the SDK's provider modules: its docstring)
from tests.engine import Project
from vertex_training.plugin import schema, shapes
from vertex_training.resources.arguments import TrainingJobArgs
from vertex_training.testing.fake_vertex import FakeVertex

SIZES = (50, 200, 400)
ROUNDS = 3
#: No-change previews of each stack per round, taken in pairs.
PREVIEWS = 3
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

#: The no-op plugin of the plugin's baseline: one resource type whose operations do
#: nothing, served by the SDK's provider server as the project's plugin is.
NOOP_PLUGIN = """
import json, sys
from pulumi.provider.experimental.provider import (
    CheckResponse, CreateResponse, DiffResponse, GetSchemaResponse, Provider)
from pulumi.provider.experimental.server import main

SCHEMA = {"name": "noop", "version": "0.0.1", "resources": {"noop:index:Job": {
    "inputProperties": {"job": {"$ref": "pulumi.json#/Any"}}, "properties": {}}}}

class NoOp(Provider):
    async def get_schema(self, request):
        return GetSchemaResponse(json.dumps(SCHEMA))
    async def check(self, request):
        return CheckResponse(request.new_inputs)
    async def diff(self, request):
        return DiffResponse(changes=request.old_state.get("job") != request.new_inputs.get("job"))
    async def create(self, request):
        return CreateResponse(request.urn.rsplit("::", 1)[-1], request.properties)

main(sys.argv[1:], "0.0.1", NoOp())
"""
#: The same no-op plugin, whose create records the outputs the project's plugin recorded
#: for a resource of that name (read from ``outputs.json`` beside it): the state of the
#: plugin's stack, at the cost of a plugin that does nothing.
MATCHED_PLUGIN = NOOP_PLUGIN.replace(
    """    async def create(self, request):
        return CreateResponse(request.urn.rsplit("::", 1)[-1], request.properties)
""",
    """    async def create(self, request):
        name = request.urn.rsplit("::", 1)[-1]
        recorded = {key: value(item) for key, item in recorded_outputs()[name].items()}
        return CreateResponse(name, {**request.properties, **recorded})

import functools, os
from pulumi.provider.experimental.property_value import PropertyValue

@functools.cache
def recorded_outputs():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "outputs.json")) as f:
        return json.load(f)

def value(plain):
    if isinstance(plain, dict):
        return PropertyValue({key: value(item) for key, item in plain.items()})
    if isinstance(plain, list):
        return PropertyValue([value(item) for item in plain])
    number = isinstance(plain, int) and not isinstance(plain, bool)
    return PropertyValue(float(plain) if number else plain)
""",
)
assert MATCHED_PLUGIN != NOOP_PLUGIN
PLUGIN_DIR = Path(__file__).resolve().parent.parent / "provider"


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


@dataclass
class Stack:
    """One of the two stacks a round measures: its project, its fake and its figures."""

    project: Project
    tmp: Path
    fake: FakeVertex
    figures: Figures

    def up(self) -> None:
        """The first `up`; its time, the state's size and the Vertex calls it made."""
        self.project.init()
        before = len(self.fake.calls)
        start = time.monotonic()
        self.project.up().check()
        self.figures.up_s.append(time.monotonic() - start)
        self.figures.calls = Counter(call.method for call in self.fake.calls[before:])
        self.figures.state_bytes = state_size(self.tmp)

    def preview(self) -> None:
        """A preview with nothing changed; its time."""
        start = time.monotonic()
        result = self.project.run("preview").check()
        self.figures.preview_s.append(time.monotonic() - start)
        if "to create" in result.output or "to update" in result.output:
            raise AssertionError(f"the preview after `up` is not empty:\n{result.output}")


def yaml_program(
    plugin: Path, name: str, type_: str, config: dict[str, Any], jobs: dict[str, Any]
) -> dict[str, Any]:
    """A Pulumi YAML program of a resource of ``type_`` per job, from the plugin ``name``
    in the folder ``plugin``."""
    return {
        "name": "bench-yaml",
        "runtime": "yaml",
        "plugins": {"providers": [{"name": name, "path": str(plugin)}]},
        "config": config,
        "resources": {
            job: {"type": type_, "properties": {"job": shapes.to_arguments(keys, TrainingJobArgs)}}
            for job, keys in jobs.items()
        },
    }


def state_size(tmp: Path) -> int:
    """The size of the stack's checkpoint in the file backend."""
    files = [p for p in (tmp / "state" / ".pulumi" / "stacks").rglob("*.json") if p.is_file()]
    return sum(p.stat().st_size for p in files)


def this_project(tmp: Path, jobs: int, fake: FakeVertex, figures: Figures) -> Stack:
    project = Project.create(tmp)
    project.write_stack(stack_config(jobs, fake))
    return Stack(project, tmp, fake, figures)


def baseline(tmp: Path, jobs: int, fake: FakeVertex, figures: Figures) -> Stack:
    project = Project.of_program(tmp, BASELINE_PROGRAM, {"noop.py": BASELINE_PROVIDER})
    project.write_stack({"vertex-training:jobs": stack_config(jobs, fake)["vertex-training:jobs"]})
    return Stack(project, tmp, fake, figures)


def through_plugin(tmp: Path, jobs: int, fake: FakeVertex, figures: Figures) -> Stack:
    config = {
        "vertex-training:apiEndpoint": fake.address,
        "vertex-training:project": "bench-project",
        "vertex-training:region": "us-central1",
    }
    keys = stack_config(jobs, fake)["vertex-training:jobs"]
    program = yaml_program(
        PLUGIN_DIR, "vertex-training", "vertex-training:TrainingJob", config, keys
    )
    project = Project.of_yaml(tmp, program)
    return Stack(project, tmp, fake, figures)


def plugin_baseline(
    tmp: Path, jobs: int, fake: FakeVertex, figures: Figures, source: str = NOOP_PLUGIN
) -> Stack:
    plugin = tmp / "noop-plugin"
    plugin.mkdir()
    (plugin / "noop.py").write_text(source)
    launcher = plugin / "pulumi-resource-noop"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{plugin / "noop.py"}" "$@"\n')
    launcher.chmod(0o755)
    keys = stack_config(jobs, fake)["vertex-training:jobs"]
    project = Project.of_yaml(tmp, yaml_program(plugin, "noop", "noop:Job", {}, keys))
    return Stack(project, tmp, fake, figures)


def matched_baseline(tmp: Path, jobs: int, fake: FakeVertex, figures: Figures) -> Stack:
    """The no-op plugin recording the plugin's outputs: its stack's ``up`` goes after the
    project's, whose state it reads (``record_outputs``)."""
    return plugin_baseline(tmp, jobs, fake, figures, MATCHED_PLUGIN)


def record_outputs(project: Stack, baseline: Stack, left_out: tuple[str, ...] = ()) -> None:
    """The outputs each job of ``project``'s state holds, by name, for ``baseline``'s
    no-op plugin to record (``MATCHED_PLUGIN``), but those ``left_out``."""
    files = [p for p in (project.tmp / "state" / ".pulumi" / "stacks").rglob("*.json")]
    [latest] = [json.loads(p.read_text()) for p in files if p.is_file()]
    outputs = {
        resource["urn"].rsplit("::", 1)[-1]: {
            key: value
            for key, value in (resource.get("outputs") or {}).items()
            if key not in left_out
        }
        for resource in latest["checkpoint"]["latest"]["resources"]
        if resource["type"].endswith(":TrainingJob")
    }
    (baseline.tmp / "noop-plugin" / "outputs.json").write_text(json.dumps(outputs))


#: The pairs measured side by side: a program and its baseline.
PAIRS = (
    (this_project, baseline),
    (through_plugin, plugin_baseline),
    (through_plugin, matched_baseline),
)
#: The pair whose baseline records what the project's stack recorded: its project goes
#: first in every round.
MATCHED = 2


def round_of(
    jobs: int, number: int, previews: int, *, pair: int, mine: Figures, theirs: Figures
) -> None:
    """Both first `up`s of the ``pair``'s programs (the first to go alternates with
    ``number``), then ``previews`` pairs of no-change previews, each pair in the other
    order from the last."""
    with ExitStack() as stack:
        both = []
        for make, figures in zip(PAIRS[pair], (mine, theirs), strict=True):
            tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
            fake = stack.enter_context(FakeVertex())
            both.append(make(tmp, jobs, fake, figures))
        order = both if number % 2 == 0 or pair == MATCHED else both[::-1]
        for measured in order:
            if pair == MATCHED and measured is both[1]:
                record_outputs(*both)
            measured.up()
        for turn in range(previews):
            for measured in order if turn % 2 == 0 else order[::-1]:
                measured.preview()


#: What ``--state-cuts`` leaves out of the outputs a plugin job records (its schema's
#: ``JOB_OUTPUTS``; the request, the estimate and the job's keys it no longer records):
#: nothing, then every output but ``state`` and ``jobId``.
STATE_CUTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("the plugin's outputs", ()),
    (
        "inputs, state and jobId only",
        tuple(k for k in schema.JOB_OUTPUTS if k not in ("state", "jobId")),
    ),
)


def state_cuts(jobs: int, previews: int) -> None:
    """What the plugin's state costs the engine (``--state-cuts``, the module docstring)."""
    with ExitStack() as stack:
        fake = stack.enter_context(FakeVertex())

        def folder() -> Path:
            return Path(stack.enter_context(tempfile.TemporaryDirectory()))

        plugin = through_plugin(folder(), jobs, fake, Figures())
        plugin.up()
        plain = plugin_baseline(folder(), jobs, fake, Figures())
        matched = []
        for _, left_out in STATE_CUTS:
            cut = plugin_baseline(folder(), jobs, fake, Figures(), MATCHED_PLUGIN)
            record_outputs(plugin, cut, left_out)
            matched.append(cut)
        for measured in (plain, *matched):
            measured.up()
        for turn in range(previews):
            for measured in (plain, *matched, plugin)[:: 1 if turn % 2 == 0 else -1]:
                measured.preview()
    print(
        f"the plugin's state at {jobs} jobs: a no-op plugin recording the plugin's outputs, "
        "then less of them, vs the plain no-op plugin (first up: one each; preview: the "
        f"median of {previews})"
    )
    header = f"{'recorded':<32} | {'state/job (B)':>13} | {'first up':>15} | {'preview':>14}"
    print(header)
    print("-" * len(header))
    base = plain.figures
    rows = [("the plain no-op plugin", base)]
    rows += [(name, cut.figures) for (name, _), cut in zip(STATE_CUTS, matched, strict=True)]
    for name, figures in [*rows, ("the plugin itself", plugin.figures)]:
        up, preview = figures.up, figures.preview
        print(
            f"{name:<32} | {figures.state_bytes / jobs:13.0f} | {up:6.2f} s "
            f"{up / base.up:5.2f}x | {preview:5.2f} s {preview / base.preview:5.2f}x"
        )


def paired(mine: list[float], theirs: list[float]) -> float:
    """The median of the ratios of measurements taken side by side."""
    return statistics.median(m / t for m, t in zip(mine, theirs, strict=True))


#: What each pair compares, for the tables.
TITLES = (
    "the dynamic resources (a Python program of stack config jobs) vs N no-op dynamic resources",
    "the plugin (a YAML program of TrainingJob resources) vs N resources of a no-op plugin",
    "the plugin vs the same no-op plugin recording the very outputs the plugin recorded "
    "(what is the plugin's own work, apart from its state's size)",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--previews", type=int, default=PREVIEWS)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument(
        "--state-cuts", action="store_true", help="what the plugin's state costs the engine"
    )
    args = parser.parse_args()
    if args.state_cuts:
        state_cuts(max(args.sizes), args.previews)
        return

    results: dict[tuple[int, int], tuple[Figures, Figures]] = {}
    for jobs in args.sizes:
        for pair in range(len(PAIRS)):
            mine, theirs = Figures(), Figures()
            for number in range(args.rounds):
                round_of(jobs, number, args.previews, pair=pair, mine=mine, theirs=theirs)
                recent = slice(-args.previews, None)
                print(
                    f"{jobs} jobs, {TITLES[pair].split(' (')[0]}, round {number + 1}: up "
                    f"{mine.up_s[-1]:.2f} s vs {theirs.up_s[-1]:.2f} s, previews "
                    + ", ".join(
                        f"{m:.2f} vs {t:.2f}"
                        for m, t in zip(
                            mine.preview_s[recent], theirs.preview_s[recent], strict=True
                        )
                    ),
                    file=sys.stderr,
                    flush=True,
                )
            results[(pair, jobs)] = (mine, theirs)

    print(
        f"medians: first up of {args.rounds} rounds, {args.rounds * args.previews} previews; "
        "ratio: median of the side-by-side ratios (same engine, same run)"
    )
    for pair, title in enumerate(TITLES):
        print(f"\n{title}")
        table(
            {jobs: figures for (p, jobs), figures in results.items() if p == pair},
            targets=pair != MATCHED,
        )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    f"{['dynamic', 'plugin', 'plugin-matched'][pair]} {jobs}": {
                        "project": {**vars(m), "calls": dict(m.calls)},
                        "baseline": {**vars(t), "calls": dict(t.calls)},
                    }
                    for (pair, jobs), (m, t) in results.items()
                },
                indent=2,
            )
        )


def table(results: dict[int, tuple[Figures, Figures]], *, targets: bool = True) -> None:
    """One pair's figures at each size, and (``targets``) the targets at the largest."""
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
            f"{paired(mine.preview_s, theirs.preview_s):>5.2f}x | {mine.up:7.2f} vs "
            f"{theirs.up:6.2f} {paired(mine.up_s, theirs.up_s):>5.2f}x | "
            f"{mine.state_bytes / jobs:6.0f} vs {theirs.state_bytes / jobs:6.0f} | "
            f"{sum(mine.calls.values()) / jobs:g} ({calls})"
        )
    largest = max(results)
    mine, theirs = results[largest]
    if not targets:
        return
    print(
        f"targets at {largest} jobs: preview <= {PREVIEW_TARGET}x "
        f"(now {paired(mine.preview_s, theirs.preview_s):.2f}x), first up <= {UP_TARGET}x "
        f"(now {paired(mine.up_s, theirs.up_s):.2f}x)"
    )


if __name__ == "__main__":
    main()
