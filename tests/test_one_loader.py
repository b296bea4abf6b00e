"""One stack loader: the program, ``render``, ``plan`` and the policy pack read a stack alike.

Issue 15, item 1: every entry point reads a stack through ``vertex_training.stackconfig.load_stack``
and gives the same jobs, requests and issues. For each stack in ``stacks/`` and each broken
stack below, the reference is the Pulumi CLI's own reading of the file (``pulumi config
--json --show-secrets``, once per stack, in a temporary project with a file backend):

- the program: the real ``__main__.py`` under ``pulumi.runtime.set_mocks`` with exactly the
  CLI's values as its config (top-level values as text, objects as JSON text, as the
  engine hands them over; the project's defaults included, as the CLI shows them). The
  loader's ``Stack`` the program got is recorded, and each job resource's inputs are
  checked by its dynamic provider, as ``pulumi preview`` checks them;
- the stack file read by the loader directly (``load_stack_file``);
- ``render`` (``vertex-training render``), ``plan``'s ``read_stack`` and the pack's
  ``policy.resources.view`` (given the job resources as the engine shows them).

Secrets are left out: the program gets a secret's plaintext while a reader of the file
gets only ``{secure: ...}`` (``render`` prints a placeholder), a difference by design
(tests/test_stack_yaml.py checks the reading of secrets against the CLI).
"""

from __future__ import annotations

import contextvars
import io
import json
import runpy
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pulumi.dynamic import CheckResult
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

import vertex_training.program.settings as program_settings
from policy import resources as pack
from tests.engine import REPO, config_cli_env, tools_missing
from tests.test_platform import PROJECT, TENSORBOARD_ID, Graph, Mocks, RecordingMonitor
from vertex_training import __main__ as cli_main
from vertex_training.errors import Issue
from vertex_training.program.platform import job_stack_settings
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.resources.tuning_job import HyperparameterTuningJobProvider
from vertex_training.review import plan
from vertex_training.stackconfig import JobSpec, Stack, load_stack, load_stack_file
from vertex_training.stackconfig.platform import TENSORBOARD_PENDING
from vertex_training.stackconfig.study import is_tuning_job

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

#: The job resources' type tokens, by provider.
PROVIDERS: dict[str, type[TrainingJobProvider]] = {
    "pulumi-python:dynamic/vertex:TrainingJob": TrainingJobProvider,
    "pulumi-python:dynamic/vertex:HyperparameterTuningJob": HyperparameterTuningJobProvider,
}
TRAINING, TUNING = PROVIDERS

IMAGE = "us-docker.pkg.dev/acme-ml-dev/training/trainer:0.1"
VERTEX = "  gcp:project: acme-ml-dev\n  gcp:region: us-central1\n"

#: Broken (or tricky) stacks: name -> the stack file's text.
BROKEN: dict[str, str] = {
    "bad-backend": (
        "config:\n" + VERTEX + "  vertex-training:backend: vertx\n"
        "  vertex-training:jobs:\n"
        f"    a: {{image: {IMAGE}, machine: n1-standard-4}}\n"
    ),
    "bad-platform": (
        "config:\n" + VERTEX + "  vertex-training:platform:\n"
        "    bukcet: {force_destroy: true}\n"
        "    tensorboard: {enabled: yes}\n"
        "  vertex-training:jobs:\n"
        f"    a: {{image: {IMAGE}, machine: n1-standard-4}}\n"
    ),
    "bad-machine": (
        "config:\n" + VERTEX + "  vertex-training:jobs:\n"
        f"    bad: {{image: {IMAGE}, machine: n1-standard-5, accelerator: {{type: T4}}}}\n"
        f"    good: {{image: {IMAGE}, machine: n1-standard-4}}\n"
    ),
    "missing-package": (
        "config:\n" + VERTEX + "  vertex-training:jobs:\n"
        "    a:\n"
        "      python_package:\n"
        "        framework: {name: sklearn, version: '1.7'}\n"
        "        package_path: nowhere\n"
        "        module: trainer.task\n"
        "      machine: n1-standard-4\n"
        "    b:\n"
        "      python_package:\n"
        "        framework: {name: sklearn, version: '1.7'}\n"
        "        package_path: trainer\n"
        "        module: trainer.task\n"
        "      machine: n1-standard-4\n"
    ),
    "yaml-words": (
        "config:\n" + VERTEX + "  vertex-training:jobs:\n"
        "    a:\n"
        f"      image: {IMAGE}\n"
        "      machine: n1-standard-4\n"
        "      env: {DEBUG: yes, MODE: off, N: 0x10, F: 1.0}\n"
        "      args: [--flag, on, --n, 0777, --when, 2026-01-02]\n"
        "      labels: {team: no}\n"
    ),
    "not-mappings": (
        "config:\n" + VERTEX + "  vertex-training:jobs:\n"
        "    a: 1\n"
        "    b: [x, y]\n"
        "    c: text\n"
        "    d: ~\n"
        "    e: yes\n"
    ),
    "jobs-list": "config:\n" + VERTEX + "  vertex-training:jobs: [a, b]\n",
    "legacy": (
        "config:\n" + VERTEX + "  vertex-training:jobs:\n"
        "    census:\n"
        "      job_id: census_20240101\n"
        "      training_input:\n"
        "        scaleTier: CUSTOM\n"
        "        masterType: n1-standard-8\n"
        f"        masterConfig: {{imageUri: {IMAGE}}}\n"
        "        workerType: n1-standard-4\n"
        "        workerCount: 2\n"
        "        args: [--flag, on]\n"
        "        region: us-central1\n"
        "      labels: {team: ml}\n"
    ),
    "tuning": (
        "config:\n" + VERTEX + "  vertex-training:jobs:\n"
        "    sweep:\n"
        f"      image: {IMAGE}\n"
        "      machine: n1-standard-4\n"
        "      args: [--quiet, off]\n"
        "      study:\n"
        "        algorithm: random\n"
        "        max_trials: 4\n"
        "        parallel_trials: 2\n"
        "        metrics: [{id: accuracy, goal: MAXIMIZE}]\n"
        "        parameters:\n"
        "          lr: {type: double, min: 0.001, max: 1, scale: log}\n"
        "          layers: {type: integer, min: 1, max: 4}\n"
        "          opt: {type: categorical, values: [adam, sgd, on]}\n"
    ),
}
REPO_STACKS = {
    path.name.removeprefix("Pulumi.").removesuffix(".yaml"): path.read_text(encoding="utf-8")
    for path in sorted((REPO / "stacks").glob("Pulumi.*.yaml"))
}
STACKS = {**REPO_STACKS, **BROKEN}


# --------------------------------------------------------------------------- the project


@dataclass
class CliProject:
    """A copy of the project (Pulumi.yaml, trainer/) with every stack, and the CLI's
    reading of each stack file."""

    root: Path
    env: dict[str, str]
    values: dict[str, dict[str, Any]] = field(default_factory=dict)

    def run(self, *args: str) -> str:
        """Run ``pulumi``; its stdout (to a file, never a pipe closed early)."""
        out = self.root.parent / "pulumi.out"
        with out.open("w") as stdout:
            proc = subprocess.run(
                ["pulumi", *args, "--non-interactive"],
                cwd=self.root,
                env=self.env,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
                check=False,
            )
        assert proc.returncode == 0, f"pulumi {' '.join(args)}: {proc.stderr}"
        return out.read_text()

    def add(self, stack: str, text: str) -> None:
        """Create the stack, then write its file (``stack init`` writes one of its own)."""
        path = self.stack_file(stack)
        self.run("stack", "init", stack)
        if "encryptionsalt:" not in text:
            text = path.read_text() + text
        path.write_text(text, encoding="utf-8")
        self.values[stack] = json.loads(
            self.run("config", "--json", "--show-secrets", "--stack", stack)
        )

    def stack_file(self, stack: str) -> Path:
        return self.root / "stacks" / f"Pulumi.{stack}.yaml"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> CliProject:
    """One project and file backend for the module; every stack created in it once."""
    tmp = tmp_path_factory.mktemp("one-loader")
    root = tmp / "project"
    (root / "stacks").mkdir(parents=True)
    shutil.copy(REPO / "Pulumi.yaml", root / "Pulumi.yaml")
    shutil.copytree(
        REPO / "trainer", root / "trainer", ignore=shutil.ignore_patterns("__pycache__")
    )
    cli = CliProject(root, config_cli_env(tmp))
    for stack, text in STACKS.items():
        cli.add(stack, text)
    return cli


# --------------------------------------------------------------------------- the program


@dataclass
class ProgramRun:
    """What the program did with a stack: the loader's Stack it got, the job resources it
    registered, and the error that stopped it (None: it ran through)."""

    stack: Stack
    jobs: dict[str, Any]
    error: str | None


def run_program(cli: CliProject, name: str) -> ProgramRun:
    """The real __main__.py under mocks, its config exactly the CLI's values for the stack."""
    shown = cli.values[name]
    config = {key: entry["value"] for key, entry in shown.items()}
    secret = [key for key, entry in shown.items() if entry.get("secret")]
    graph = Graph()
    loaded: list[Stack] = []

    def recording_load(*args: Any, **kwargs: Any) -> Stack:
        stack = load_stack(*args, **kwargs)
        loaded.append(stack)
        return stack

    error: list[str] = []

    def run() -> None:
        mocks = Mocks(graph)
        pulumi.runtime.set_all_config(config, secret)
        pulumi_mocks.set_mocks(
            mocks, project=PROJECT, stack=name, monitor=RecordingMonitor(mocks, graph)
        )

        def main() -> None:
            runpy.run_path(str(REPO / "__main__.py"), run_name="__main__")

        try:
            _sync_await(run_pulumi_func(main))
        except pulumi.RunError as exc:
            error.append(str(exc))

    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(cli.root)
        patch.setattr(program_settings, "load_stack", recording_load)
        contextvars.Context().run(run)
    assert len(loaded) == 1, "the program reads its stack once"
    jobs = {r.inputs["job"]["name"]: r for r in graph.registrations if r.type in PROVIDERS}
    return ProgramRun(loaded[0], jobs, error[0] if error else None)


@pytest.fixture(scope="module")
def programs(project: CliProject) -> dict[str, ProgramRun]:
    """The program run once per stack (the trainer's sdist is built once, then cached)."""
    return {name: run_program(project, name) for name in STACKS}


@pytest.fixture(scope="module")
def files(project: CliProject) -> dict[str, Stack]:
    """Each stack file as the loader reads it."""
    return {
        name: load_stack_file(project.stack_file(name), project_dir=project.root) for name in STACKS
    }


# ------------------------------------------------------------------------------ helpers


def requests(stack: Stack) -> dict[str, dict[str, Any]]:
    return {name: job.request_body() for name, job in stack.resolved.items()}


def job_issues(stack: Stack) -> dict[str, list[Issue]]:
    return {name: list(job.issues) for name, job in stack.jobs.items() if job.issues}


def lines(issues: list[Issue]) -> list[str]:
    return [str(issue) for issue in issues]


def pending_tensorboard(value: Any, name: str) -> Any:
    """``value`` with the platform TensorBoard's name (known to the program once created,
    here the mocks') written as render and plan write it before then."""
    if value == name:
        return TENSORBOARD_PENDING
    if isinstance(value, dict):
        return {k: pending_tensorboard(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [pending_tensorboard(v, name) for v in value]
    return value


def checked(name: str, registration: Any) -> CheckResult:
    """The job resource's inputs as its provider checks them at ``pulumi preview``."""
    provider = PROVIDERS[registration.type]()
    return provider.check({}, registration.inputs)


def engine_resources(stack: Stack) -> list[pack.Resource]:
    """The job resources as the engine shows them to the pack: each with the job input the
    program gives it (``program.stack``: its name, its keys as the loader read them, the
    stack's settings); none when the stack has a stack-wide mistake (the program stops)."""
    if stack.issues:
        return []
    settings = {
        **job_stack_settings(stack.settings.model_dump(), None),
        "pulumi_project": PROJECT,
    }
    found = []
    for name, loaded in stack.jobs.items():
        kind = (
            TUNING if isinstance(loaded.config, dict) and is_tuning_job(loaded.config) else TRAINING
        )
        urn = f"urn:pulumi:{stack.name}::{PROJECT}::{kind}::{name}"
        job = {"name": name, "config": loaded.config, "stack": settings}
        found.append(pack.Resource(kind, urn, {"job": job}))
    return found


def render(path: Path) -> tuple[int, str, str]:
    """``vertex-training render PATH``: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = cli_main.main(["render", str(path)])
    return code, out.getvalue(), err.getvalue()


def same_request(job: JobSpec, other: JobSpec) -> None:
    assert other.request_body() == job.request_body()
    assert other.location() == job.location()
    assert other.warnings == job.warnings


# -------------------------------------------------------------------------------- tests


@pytest.fixture(params=list(STACKS))
def name(request: pytest.FixtureRequest) -> Iterator[str]:
    yield str(request.param)


class TestCliReading:
    """The loader reads the stack file as the CLI hands it to the program."""

    def test_file_keys_are_the_cli_values(
        self, name: str, files: dict[str, Stack], programs: dict[str, ProgramRun]
    ) -> None:
        """Every key of the file has the value the program gets (the CLI adds the
        project's defaults, which the program reads as unset when empty)."""
        ours = files[name].keys
        theirs = programs[name].stack.keys
        assert {key: theirs[key] for key in ours} == dict(ours)
        assert {key: value for key, value in theirs.items() if key not in ours} == {
            key: value
            for key, value in {
                "vertex-training:backend": "vertex",
                "vertex-training:localAccelerators": "gpu",
                "vertex-training:apiEndpoint": None,
                "vertex-training:images": None,
                "vertex-training:jobs": None,
                "vertex-training:platform": None,
                "vertex-training:policies": None,
            }.items()
            if key not in ours
        }

    def test_same_stack(
        self, name: str, files: dict[str, Stack], programs: dict[str, ProgramRun]
    ) -> None:
        """Settings, platform, jobs' configs, requests, locations, warnings and issues."""
        ours, theirs = files[name], programs[name].stack
        assert theirs.name == ours.name == name
        assert theirs.settings == ours.settings
        assert theirs.platform == ours.platform
        assert list(theirs.issues) == list(ours.issues)
        assert list(theirs.jobs) == list(ours.jobs)
        for job, loaded in ours.jobs.items():
            assert theirs.jobs[job].config == loaded.config
            assert list(theirs.jobs[job].issues) == list(loaded.issues)
        assert requests(theirs) == requests(ours)
        for job, spec in ours.resolved.items():
            same_request(spec, theirs.resolved[job])
        assert ours.packages.configs == theirs.packages.configs
        assert ours.packages.issues == theirs.packages.issues


class TestProgram:
    """The program's job resources get what the loader read, and check to its requests."""

    def test_stops_on_stack_wide_issues(self, name: str, programs: dict[str, ProgramRun]) -> None:
        """A mistake in a stack-wide key or a package directory, or a job that is no
        mapping, stops the program with those issues, one a line; otherwise it registers
        a resource for every job."""
        run = programs[name]
        shapeless = [
            issue
            for job in run.stack.jobs.values()
            if not isinstance(job.config, dict)
            for issue in job.issues
        ]
        stops = [*run.stack.issues, *run.stack.packages.issues, *shapeless]
        if stops:
            assert run.error == "\n".join(lines(stops))
            assert run.jobs == {}
        else:
            assert run.error is None
            assert sorted(run.jobs) == sorted(run.stack.jobs)

    @pytest.mark.parametrize("name", STACKS)
    def test_resources(
        self,
        name: str,
        project: CliProject,
        programs: dict[str, ProgramRun],
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Each job resource: its kind, its config input, and what its check gives (in
        the project directory, where the provider host runs): the loader's request and
        location, or the loader's issues as CheckFailures."""
        monkeypatch.chdir(project.root)
        run = programs[name]
        board = (
            f"projects/123456/locations/{run.stack.settings.region}/tensorboards/{TENSORBOARD_ID}"
        )
        for job, registration in run.jobs.items():
            loaded = run.stack.jobs[job]
            assert registration.type == (TUNING if is_tuning_job(loaded.config) else TRAINING)
            # The mocks put the root stack's type in the URN's type chain; the engine not.
            assert registration.urn.startswith(f"urn:pulumi:{name}::{PROJECT}::")
            assert registration.urn.endswith(f"{registration.type}::{job}")
            assert registration.inputs["job"]["config"] == loaded.config
            result = checked(job, registration)
            failures = [failure.reason for failure in result.failures]
            if loaded.job is None:
                assert failures == lines(list(loaded.issues))
                continue
            assert failures == []
            assert result.inputs is not None
            view = recorded_view(result.inputs)
            request = pending_tensorboard(view["request"], board)
            assert request == loaded.job.request_body()
            assert view["location"] == loaded.job.location()


class TestRender:
    """``vertex-training render``: the requests, or exit 2 with every issue."""

    def test_render(self, name: str, project: CliProject, programs: dict[str, ProgramRun]) -> None:
        stack = programs[name].stack
        code, out, err = render(project.stack_file(name))
        issues = stack.all_issues()
        if issues:
            assert code == cli_main.EXIT_INVALID_CONFIG
            assert out == ""
            assert err.splitlines() == lines(issues)
            return
        assert code == 0, err
        rendered = json.loads(out)
        assert list(rendered) == sorted(stack.jobs)
        for job, spec in stack.resolved.items():
            entry = rendered[job]
            assert entry[spec.request_kind] == spec.request_body()
            assert (entry["region"], entry["backend"], entry["parent"]) == (
                spec.region,
                spec.backend,
                spec.parent,
            )
        warned = [line.removeprefix("warning: ") for line in err.splitlines()]
        for job in stack.resolved.values():
            assert set(job.warnings) <= set(warned)


class TestPlan:
    """``plan``'s reading of a stack (``read_stack``): the jobs, their issues, the stack's."""

    def test_read_stack(
        self, name: str, project: CliProject, programs: dict[str, ProgramRun]
    ) -> None:
        stack = programs[name].stack
        read = plan.read_stack(project.stack_file(name), project.root)
        assert read.stack == name
        assert read.stack_issues == list(stack.issues)
        if stack.issues:  # plan stops at them
            assert read.jobs == {} and read.issues == {}
            return
        assert read.settings == stack.settings
        assert read.platform == stack.platform
        assert read.issues == job_issues(stack)
        assert list(read.jobs) == list(stack.resolved)
        for job, spec in stack.resolved.items():
            same_request(spec, read.jobs[job])


class TestPolicyPack:
    """The pack's view of the engine's job resources: each job read from its resource's
    input, which the program gave it through the loader, is the loader's job; a job the
    loader refuses is left out, refused on the same keys."""

    def test_view(self, name: str, project: CliProject, programs: dict[str, ProgramRun]) -> None:
        stack = programs[name].stack
        view = pack.view(engine_resources(stack), project.root)
        if stack.issues or not stack.jobs:  # the program registers no job
            assert view.stack is None and view.jobs == {}
            return
        assert view.stack == name
        skipped = {text.split(": ", 1)[0]: text for text, _urn in view.skipped}
        for job, issues in job_issues(stack).items():  # refused on the same keys
            for issue in issues:
                assert f"{issue.key}: " in skipped[job]
        assert list(view.jobs) == list(stack.resolved)
        for job, spec in stack.resolved.items():
            same_request(spec, view.jobs[job])


class TestCases:
    """What the broken and tricky stacks must show (so that a broken case stays broken)."""

    def test_every_case_says_what_it_tests(self, programs: dict[str, ProgramRun]) -> None:
        stacks = {name: run.stack for name, run in programs.items()}
        keys = {name: [i.key for i in stack.all_issues()] for name, stack in stacks.items()}
        assert keys["bad-backend"][0] == "vertex-training:backend"
        assert any(k.startswith("vertex-training:platform.bukcet") for k in keys["bad-platform"])
        assert stacks["bad-machine"].jobs["bad"].issues
        assert list(stacks["bad-machine"].resolved) == ["good"]
        assert [i.key for i in stacks["missing-package"].jobs["a"].issues] == [
            "vertex-training:jobs.a.python_package.package_path"
        ]
        assert list(stacks["missing-package"].resolved) == ["b"]
        spec = stacks["yaml-words"].resolved["a"].request_body()
        container = spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
        assert {e["name"]: e["value"] for e in container["env"]}["DEBUG"] == "yes"
        assert {e["name"]: e["value"] for e in container["env"]}["MODE"] == "off"
        assert container["args"][1] == "on"
        assert sorted(stacks["not-mappings"].jobs) == ["a", "b", "c", "d", "e"]
        assert not stacks["not-mappings"].resolved
        assert keys["jobs-list"] == ["vertex-training:jobs"]
        assert list(stacks["legacy"].resolved) == ["census"]
        assert stacks["tuning"].resolved["sweep"].request_kind == "hyperparameterTuningJob"
