"""The generated SDKs on the real engine: a TypeScript, a Go and a Python program, each in
a folder of its own outside the repository, use the SDK of their language (sdk/nodejs
packed into a tarball as npm would ship it; a copy of sdk/go as `go get` would fetch it;
sdk/python's wheel installed beside the vertex-training wheel) to run two jobs against
the fake JobService. The second job takes the first's ID, an Output of another resource,
among its args; a JobWaiter waits for both. Each program goes through preview, up, a
no-change preview, a replacement (a config value changes the first job's machine) and
destroy, checked against what the fake holds after each step.

The plugin is provider/ under the tests' Python; the Node.js, Go and Python language
hosts are the ones `make all-tools` builds, `@pulumi/pulumi` comes from npm. CI runs these
once (``polyglot``).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine import TOOLS_BIN, Project, go_env, ran_in_order, tools_missing
from tests.release import BUILT, PULUMI, RELEASE, REPO, copy_go_sdk, run
from vertex_training.plugin.schema import GO_MODULE
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

PLUGIN = REPO / "provider"
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
NPM_QUIET = ["--no-audit", "--no-fund", "--loglevel=error"]


def plugin_block() -> str:
    return f"plugins:\n  providers:\n    - name: vertex-training\n      path: {PLUGIN}\n"


TYPESCRIPT = """\
import * as pulumi from "@pulumi/pulumi";
import * as vertex from "vertex-training";

const config = new pulumi.Config();
const image = "%(image)s";

const train = new vertex.TrainingJob("train", {
    job: {
        image,
        machine: config.get("machine") ?? "e2-standard-4",
        args: ["--epochs", "3"],
        wait: "succeeded",
    },
});
// An Output of another resource as an argument: the first job's ID.
const evaluate = new vertex.TrainingJob("evaluate", {
    job: { image, machine: "e2-standard-4", args: ["--model-of", train.jobId], wait: "succeeded" },
});
const waiter = new vertex.JobWaiter("wait-for-jobs", {
    jobs: [train.waiterEntry, evaluate.waiterEntry],
});

export const trainJob = train.jobId;
export const states = waiter.states;
"""

GO = """\
package main

import (
\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi"
\t"github.com/pulumi/pulumi/sdk/v3/go/pulumi/config"
\tvertex "%(module)s/vertextraining"
)

const image = "%(image)s"

func main() {
\tpulumi.Run(func(ctx *pulumi.Context) error {
\t\tmachine := config.Get(ctx, "machine")
\t\tif machine == "" {
\t\t\tmachine = "e2-standard-4"
\t\t}
\t\ttrain, err := vertex.NewTrainingJob(ctx, "train", &vertex.TrainingJobArgs{
\t\t\tJob: &vertex.JobArgs{
\t\t\t\tImage:   pulumi.String(image),
\t\t\t\tMachine: pulumi.String(machine),
\t\t\t\tArgs:    pulumi.StringArray{pulumi.String("--epochs"), pulumi.String("3")},
\t\t\t\tWait:    pulumi.String("succeeded"),
\t\t\t},
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\t// An Output of another resource as an argument: the first job's ID.
\t\tevaluate, err := vertex.NewTrainingJob(ctx, "evaluate", &vertex.TrainingJobArgs{
\t\t\tJob: &vertex.JobArgs{
\t\t\t\tImage:   pulumi.String(image),
\t\t\t\tMachine: pulumi.String("e2-standard-4"),
\t\t\t\tArgs:    pulumi.StringArray{pulumi.String("--model-of"), train.JobId},
\t\t\t\tWait:    pulumi.String("succeeded"),
\t\t\t},
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\twaiter, err := vertex.NewJobWaiter(ctx, "wait-for-jobs", &vertex.JobWaiterArgs{
\t\t\tJobs: vertex.WaiterEntryArray{train.WaiterEntry, evaluate.WaiterEntry},
\t\t})
\t\tif err != nil {
\t\t\treturn err
\t\t}
\t\tctx.Export("trainJob", train.JobId)
\t\tctx.Export("states", waiter.States)
\t\treturn nil
\t})
}
"""


#: Three steps, each submitted once the one before has succeeded (``runAfter``).
PIPELINE_STEPS = ("prepare", "train", "evaluate")
PIPELINE = """\
import * as pulumi from "@pulumi/pulumi";
import * as vertex from "vertex-training";

const config = new pulumi.Config();
const image = "%(image)s";
const step = (name: string, after: vertex.TrainingJob[]) =>
    new vertex.TrainingJob(name, {
        job: {
            image,
            machine: "e2-standard-4",
            args: [name, config.get(`${name}-run`) ?? "1"],
            runAfter: after.map((job) => job.id),
        },
    });
const prepare = step("prepare", []);
const train = step("train", [prepare]);
const evaluate = step("evaluate", [train]);

export const evaluated = evaluate.jobId;
"""

PYTHON = """\
import pulumi
import pulumi_vertex_training as vertex

config = pulumi.Config()
image = "%(image)s"

train = vertex.TrainingJob(
    "train",
    job=vertex.JobArgs(
        image=image,
        machine=config.get("machine") or "e2-standard-4",
        args=["--epochs", "3"],
        wait="succeeded",
    ),
)
# An Output of another resource as an argument: the first job's ID.
evaluate = vertex.TrainingJob(
    "evaluate",
    job=vertex.JobArgs(
        image=image, machine="e2-standard-4", args=["--model-of", train.job_id], wait="succeeded"
    ),
)
waiter = vertex.JobWaiter("wait-for-jobs", jobs=[train.waiter_entry, evaluate.waiter_entry])

pulumi.export("trainJob", train.job_id)
pulumi.export("states", waiter.states)
"""


def missing(language: str) -> str | None:
    if reason := tools_missing():
        return reason
    host = {"nodejs": "pulumi-language-nodejs", "go": "pulumi-language-go"}[language]
    tool = {"nodejs": "npm", "go": "go"}[language]
    if not (TOOLS_BIN / host).exists() and not shutil.which(host):
        return f"no {host}: run `make all-tools`"
    if not shutil.which(tool):
        return f"{tool} is not installed"
    return None


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.3, pending_s=0.3, run_s=0.6) as fake:
        yield fake


def typescript_program(tmp: Path, tarball: Path, source: str = TYPESCRIPT) -> Project:
    package = {
        "name": "ts-training",
        "main": "index.ts",
        "dependencies": {"@pulumi/pulumi": PULUMI, "vertex-training": f"file:{tarball}"},
        "devDependencies": {"@types/node": "^20", "typescript": "^5"},
    }
    project = Project.of_files(
        tmp,
        {
            "Pulumi.yaml": "name: ts-training\n"
            "runtime:\n  name: nodejs\n  options:\n    typescript: true\n" + plugin_block(),
            "package.json": json.dumps(package, indent=2),
            "index.ts": source % {"image": IMAGE},
        },
    )
    run("npm", "install", *NPM_QUIET, cwd=project.root)
    return project


def go_program(tmp: Path) -> Project:
    sdk = copy_go_sdk(tmp / "vertex-training-sdk-go")
    project = Project.of_files(
        tmp,
        {
            "Pulumi.yaml": "name: go-training\nruntime: go\n" + plugin_block(),
            "main.go": GO % {"image": IMAGE, "module": GO_MODULE},
            "go.mod": f"module go-training\n\ngo 1.25\n\nrequire {GO_MODULE} v{RELEASE}\n\n"
            f"replace {GO_MODULE} => {sdk}\n",
        },
    )
    project.env.update(go_env())
    run("go", "mod", "tidy", cwd=project.root, env=project.env)
    # The first build, outside the CLI's time limit (the language host's finds it cached).
    run("go", "build", "./...", cwd=project.root, env=project.env)
    return project


def python_program(tmp: Path, venv: Path) -> Project:
    """The Python SDK (sdk/python's wheel) in the user's virtualenv beside the
    vertex-training wheel it requires, as `pip install pulumi-vertex-training` gives."""
    packed = BUILT or tmp / "python-sdk"
    if BUILT is None:
        pack = ["bash", REPO / "scripts" / "pack-sdks.sh", packed, "python"]
        run(*pack, cwd=REPO, env={**os.environ, "PYTHON": sys.executable})
    [wheel] = packed.glob("pulumi_vertex_training-*.whl")
    pip = [venv / "bin" / "python", "-m", "pip", "install", "--quiet"]
    run(*pip, "-c", venv / "constraints.txt", wheel, cwd=tmp)
    runtime = f"runtime:\n  name: python\n  options:\n    virtualenv: {venv}\n"
    project = Project.of_files(
        tmp,
        {
            "Pulumi.yaml": "name: py-training\n" + runtime + plugin_block(),
            "__main__.py": PYTHON % {"image": IMAGE},
        },
    )
    project.env["PULUMI_PYTHON_CMD"] = str(venv / "bin" / "python")
    project.env["PATH"] = f"{venv / 'bin'}:{project.env['PATH']}"
    return project


def machine(job: object) -> str:
    return str(job.job_spec.worker_pool_specs[0].machine_spec.machine_type)  # type: ignore[attr-defined]


def the_life_of_two_jobs(project: Project, fake: FakeVertex) -> None:
    """Preview, up, a no-change preview, a replacement and destroy, against the fake."""
    for key, value in (
        ("vertex-training:apiEndpoint", fake.address),
        ("vertex-training:project", "test-project"),
        ("vertex-training:region", "us-central1"),
    ):
        project.run("config", "set", key, value).check()

    preview = project.run("preview").check()
    assert "+ 4 to create" in preview.output
    assert fake.jobs == {}, "a preview submitted a job"

    up = project.run("up", "--yes", "--skip-preview").check()
    assert "train: SUCCEEDED" in up.output and "evaluate: SUCCEEDED" in up.output
    jobs = {job.display_name: job for job in fake.jobs.values()}
    assert set(jobs) == {"train", "evaluate"}
    train_id = jobs["train"].name.rsplit("/", 1)[-1]
    assert list(jobs["evaluate"].job_spec.worker_pool_specs[0].container_spec.args) == [
        "--model-of",
        train_id,
    ]
    assert {job.state.name for job in jobs.values()} == {"JOB_STATE_SUCCEEDED"}
    assert project.outputs() == {
        "trainJob": train_id,
        "states": {"train": "SUCCEEDED", "evaluate": "SUCCEEDED"},
    }
    state = project.state_resources()
    assert "__provider" not in json.dumps(state)
    [plugin] = [r for r in state if r["type"] == "pulumi:providers:vertex-training"]
    assert plugin["inputs"]["version"] == RELEASE

    unchanged = project.run("preview", "--expect-no-changes").check()
    assert "4 unchanged" in unchanged.output

    project.run("config", "set", "machine", "n1-standard-4").check()
    replaced = project.run("up", "--yes", "--skip-preview").check()
    # The first job's machine changed; the second's args hold the first's new ID.
    assert "+-2 replaced" in replaced.output
    after = {job.display_name: job for job in fake.jobs.values()}
    assert set(after) == {"train", "evaluate"}, "a replaced job is still there"
    assert machine(after["train"]) == "n1-standard-4"
    new_id = after["train"].name.rsplit("/", 1)[-1]
    assert new_id != train_id
    assert list(after["evaluate"].job_spec.worker_pool_specs[0].container_spec.args)[-1] == new_id

    project.run("destroy", "--yes").check()
    assert fake.jobs == {}, "destroy left a job"


class TestTypeScriptProgram:
    def test_a_typescript_program_runs_jobs_through_preview_up_replace_and_destroy(
        self, tmp_path: Path, nodejs_sdk: Path, fake: FakeVertex
    ) -> None:
        the_life_of_two_jobs(typescript_program(tmp_path, nodejs_sdk), fake)


@pytest.mark.usefixtures("go_sdk")
class TestGoProgram:
    def test_a_go_program_runs_jobs_through_preview_up_replace_and_destroy(
        self, tmp_path: Path, fake: FakeVertex
    ) -> None:
        if reason := missing("go"):
            pytest.skip(reason)
        the_life_of_two_jobs(go_program(tmp_path), fake)


class TestPythonProgram:
    def test_a_python_program_on_the_plugins_sdk_runs_jobs_through_the_same_life(
        self, tmp_path: Path, venv: Path, fake: FakeVertex
    ) -> None:
        """The plugin's Python SDK (pulumi_vertex_training), beside the dynamic API."""
        if reason := tools_missing():
            pytest.skip(reason)
        the_life_of_two_jobs(python_program(tmp_path, venv), fake)


class TestPipeline:
    def test_three_typescript_steps_run_one_after_the_other(
        self, tmp_path: Path, nodejs_sdk: Path, fake: FakeVertex
    ) -> None:
        """Each step is submitted once the one before it has succeeded, and its preview
        line says it runs after that one."""
        project = typescript_program(tmp_path, nodejs_sdk, PIPELINE)
        project.run("config", "set", "vertex-training:apiEndpoint", fake.address).check()
        project.run("config", "set", "vertex-training:project", "test-project").check()
        project.run("config", "set", "vertex-training:region", "us-central1").check()
        preview = project.run("preview").check()
        after = "once the job it runs after has succeeded (one submitted earlier in this update)"
        rows, diagnostics = preview.output.split("Diagnostics:")
        assert "TrainingJob (prepare):\n    would be submitted, estimated" in diagnostics
        for name in ("train", "evaluate"):
            line = f"TrainingJob ({name}):\n    would be submitted, {after}, estimated"
            assert line in diagnostics
        steps = [rows.index(f"TrainingJob {name} create would") for name in PIPELINE_STEPS]
        assert steps == sorted(steps), "the preview shows the steps out of order"

        project.run("up", "--yes", "--skip-preview").check()
        jobs = ran_in_order(fake, PIPELINE_STEPS)

        # Once submitted, a step's preview names the job it runs after.
        project.run("config", "set", "evaluate-run", "2").check()
        changed = project.run("preview", "--diff").check()
        assert (
            "would be submitted again, replacing the job, because `job.args` changed (Vertex "
            f"AI cannot update a submitted job), once the job it runs after has succeeded "
            f"(`{jobs['train'].name}`), estimated"
        ) in changed.output
        project.run("destroy", "--yes").check()
        assert fake.jobs == {}
