"""Runs the real Pulumi CLI on a copy of this project, for the engine tests.

Each test gets a project directory of its own (Pulumi.yaml, __main__.py, the provider
package and the example trainer, linked from the repository), a stack config it writes,
and a file backend in its temporary directory. The CLI and language host are the ones
`make tools` built; the engine runs offline.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
TOOLS_BIN = Path(os.environ.get("VERTEX_TOOLS_DIR") or REPO / ".tools") / "bin"
#: The virtualenv running the tests (CI makes one per Python): the program runs in it too.
VENV = Path(sys.prefix)
#: A whole `pulumi up` of a test stack finishes well within this.
COMMAND_TIMEOUT_S = 300


def local_stack(**jobs: dict[str, Any]) -> dict[str, Any]:
    """Stack config keys for these jobs on the local backend."""
    return {
        "vertex-training:backend": "local",
        "gcp:region": "us-central1",
        "vertex-training:jobs": jobs,
    }


def vertex_stack(fake: Any, **jobs: dict[str, Any]) -> dict[str, Any]:
    """Stack config keys for these jobs on Vertex AI, reached at the fake service."""
    return {
        "gcp:project": "test-project",
        "gcp:region": "us-central1",
        "vertex-training:apiEndpoint": fake.address,
        "vertex-training:jobs": jobs,
    }


def ran_in_order(fake: Any, steps: tuple[str, ...]) -> dict[str, Any]:
    """The fake's jobs by display name, checked to be ``steps`` exactly and run in that
    order: each step but the last SUCCEEDED, and the step after it was created no earlier
    than it ended."""
    jobs = {job.display_name: job for job in fake.jobs.values()}
    assert set(jobs) == set(steps)
    for before, then in itertools.pairwise(steps):
        assert jobs[before].state.name == "JOB_STATE_SUCCEEDED"
        assert jobs[then].create_time >= jobs[before].end_time, f"{then} before {before}"
    return jobs


def config_cli_env(tmp: Path) -> dict[str, str]:
    """The environment for `pulumi config` in a throwaway project under ``tmp``: the built
    CLI, a file backend and a home of its own, the local stack's passphrase (the salt in
    stacks/Pulumi.local.yaml is for it, scripts/pulumi-env.sh), no network."""
    (tmp / "state").mkdir(exist_ok=True)
    return {
        **os.environ,
        "PATH": f"{TOOLS_BIN}:{os.environ.get('PATH', '')}",
        "PULUMI_HOME": str(tmp / "home"),
        "PULUMI_BACKEND_URL": f"file://{tmp / 'state'}",
        "PULUMI_CONFIG_PASSPHRASE": "vertex-training-local",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "NO_COLOR": "1",
    }


def engine_env(tmp: Path, venv: Path) -> dict[str, str]:
    """The environment of the CLI for a project under ``tmp`` whose program runs in
    ``venv``: the built CLI, a file backend and a Pulumi home in ``tmp``, no network."""
    state = tmp / "state"
    state.mkdir(exist_ok=True)
    # Not make's PYTHON (the interpreter `make test` made the virtualenv with, bare): the
    # plugin's bundle and launcher read it as the Python to make a job's or their own
    # virtualenv with, which is the user's to set, not the test run's.
    inherited = {name: value for name, value in os.environ.items() if name != "PYTHON"}
    return {
        **inherited,
        "PATH": f"{TOOLS_BIN}:{venv / 'bin'}:{os.environ.get('PATH', '')}",
        # For the language host built from tools/language-host (see pulumi-env.sh).
        "PULUMI_PYTHON_CMD": str(venv / "bin" / "python"),
        "PULUMI_HOME": str(tmp / "pulumi-home"),
        "PULUMI_BACKEND_URL": f"file://{state}",
        "PULUMI_SKIP_UPDATE_CHECK": "true",
        "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
        "PULUMI_CONFIG_PASSPHRASE": "test",
        "PULUMI_SKIP_CONFIRMATIONS": "true",
        "NO_COLOR": "1",
    }


def go_env() -> dict[str, str]:
    """What a Go build of a test needs beside os.environ: Go's caches where `make tools`
    keeps them (.tools/go, unless GOMODCACHE and GOCACHE say otherwise), the installed
    toolchain, modules resolved as go.mod asks, and the tools' build flags
    (scripts/install-pulumi.sh: no cgo, paths trimmed), so that a package the tools'
    builds compiled is found in the cache rather than compiled again."""
    go = TOOLS_BIN.parent / "go"
    return {
        "GOMODCACHE": os.environ.get("GOMODCACHE") or str(go / "mod"),
        "GOCACHE": os.environ.get("GOCACHE") or str(go / "cache"),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-mod=mod -trimpath",
        "CGO_ENABLED": "0",
    }


def tools_missing() -> str | None:
    """Why the engine tests cannot run, or None when they can."""
    if not (TOOLS_BIN / "pulumi").exists():
        return "the Pulumi CLI is not built: run `make tools`"
    return None


@dataclass
class Result:
    """What one CLI command did."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def check(self) -> Result:
        if self.returncode != 0:
            raise AssertionError(
                f"pulumi {' '.join(self.args)} exited {self.returncode}:\n{self.output}"
            )
        return self


@dataclass
class Project:
    """A copy of the project with its own stack and state."""

    root: Path
    stack: str = "test"
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def create(cls, tmp: Path, stack: str = "test") -> Project:
        root = tmp / "project"
        root.mkdir()
        project = yaml.safe_load((REPO / "Pulumi.yaml").read_text())
        project["runtime"]["options"]["virtualenv"] = str(VENV)
        (root / "Pulumi.yaml").write_text(yaml.safe_dump(project, sort_keys=False))
        shutil.copy(REPO / "__main__.py", root / "__main__.py")
        for name in ("provider.py", "trainer", "examples"):
            (root / name).symlink_to(REPO / name)
        (root / "stacks").mkdir()
        return cls(root=root, stack=stack, env=engine_env(tmp, VENV))

    @classmethod
    def of_program(
        cls, tmp: Path, program: str, modules: dict[str, str], project_name: str = "bench-baseline"
    ) -> Project:
        """A project of another Python program (``program``: its __main__.py; ``modules``:
        its other modules, by file name), run by the same CLI, virtualenv and backend as
        this one's (the benchmarks' baselines); ``project_name``: its Pulumi project's."""
        project = cls.create(tmp)
        (project.root / "Pulumi.yaml").write_text(
            yaml.safe_dump(
                {
                    "name": project_name,
                    "runtime": {"name": "python", "options": {"virtualenv": str(VENV)}},
                    "stackConfigDir": "stacks",
                },
                sort_keys=False,
            )
        )
        (project.root / "__main__.py").write_text(program)
        for name, text in modules.items():
            (project.root / name).write_text(text)
        return project

    @classmethod
    def of_yaml(cls, tmp: Path, program: dict[str, Any]) -> Project:
        """A Pulumi YAML program (``program``: its Pulumi.yaml), run by the same CLI and
        backend; the plugins it names (provider/pulumi-resource-vertex-training) run under
        this virtualenv's Python."""
        project = cls.of_files(tmp, {})
        project.write_program(program)
        return project

    @classmethod
    def of_files(cls, tmp: Path, files: dict[str, str]) -> Project:
        """A program of any language in a folder of its own under ``tmp`` (``files``: its
        Pulumi.yaml and sources, by path), run by the same CLI and backend; the plugins it
        names run under this virtualenv's Python."""
        root = tmp / "project"
        root.mkdir()
        for name, text in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        env = {**engine_env(tmp, VENV), "VERTEX_TRAINING_PYTHON": sys.executable}
        return cls(root=root, env=env)

    def write_program(self, program: dict[str, Any]) -> None:
        """Write the project's Pulumi.yaml (a YAML program's resources and outputs)."""
        (self.root / "Pulumi.yaml").write_text(yaml.safe_dump(program, sort_keys=False))

    def write_stack(self, config: dict[str, Any]) -> None:
        """Write stacks/Pulumi.<stack>.yaml with these config keys."""
        path = self.root / "stacks" / f"Pulumi.{self.stack}.yaml"
        path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))

    def init(self) -> None:
        """Create the stack in the file backend (once)."""
        marker = self.root / ".stack-made"
        if not marker.exists():
            marker.touch()
            self.run("stack", "init").check()

    def start(self, *args: str) -> subprocess.Popen[str]:
        """Start `pulumi ARGS` in its own process group (so a test can kill the engine)."""
        return subprocess.Popen(
            ["pulumi", *args, "--stack", self.stack, "--non-interactive"],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def kill_engine(self, proc: subprocess.Popen[str]) -> None:
        """SIGKILL a `pulumi` started with ``start``, as a crash would, then the plugins it
        left: the engine starts them in process groups of their own, so they outlive it
        (a user's `pulumi cancel` does not stop them either); here they would pile up."""
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                cwd = (entry / "cwd").resolve()
            except OSError:
                continue
            if cwd == self.root.resolve() or self.root.resolve() in cwd.parents:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> Result:
        """Run `pulumi ARGS` on this project's stack and return what it did."""
        self.init()
        proc = self.start(*args)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise AssertionError(f"pulumi {' '.join(args)} timed out:\n{out}{err}") from None
        return Result(list(args), proc.returncode, out, err)

    def up(self) -> Result:
        return self.run("up", "--yes", "--skip-preview")

    def outputs(self) -> dict[str, Any]:
        result = self.run("stack", "output", "--json", "--show-secrets").check()
        return json.loads(result.stdout)

    def state_resources(self) -> list[dict[str, Any]]:
        """The resources in the stack's state (`pulumi stack export`)."""
        result = self.run("stack", "export").check()
        return json.loads(result.stdout)["deployment"].get("resources") or []

    def jobs_in_state(self) -> dict[str, dict[str, Any]]:
        """TrainingJob resources in state, by name: their id and outputs."""
        return {
            r["urn"].rsplit("::", 1)[-1]: {"id": r.get("id", ""), **(r.get("outputs") or {})}
            for r in self.state_resources()
            if r["type"] == "pulumi-python:dynamic/vertex:TrainingJob"
        }
