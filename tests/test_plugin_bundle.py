"""The plugin's release archive for this machine (scripts/build-plugin.sh: PyInstaller's
bundle of the plugin with its own interpreter), as a user's engine runs it: installed
with `pulumi plugin install --file` into a Pulumi home of its own, then run by a YAML
program that names no plugin folder, through up and destroy against the fake JobService,
on a PATH with no Python and with pip pointed at nothing; and a Python package job on
the local backend, the one thing that needs a Python, failing for the want of one.
(tests/test_templates.py runs such a job to success with the downloaded archive.)

The archive is the one the release attaches (``plugin_archives``: built once per run, or
the release workflow's). CI runs these once (``polyglot``).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine import REPO, TOOLS_BIN, Project, engine_env, tools_missing
from tests.release import plugin_archives, run
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

SCHEMA = json.loads((REPO / "provider" / "vertex_training" / "plugin" / "schema.json").read_text())
VERSION: str = SCHEMA["version"]
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
#: A trainer package, as the templates ship it.
TRAINER = REPO / "templates" / "vertex-training-yaml" / "trainer"
#: The system tools the engine, its YAML language host and the plugin run: none (a CLI
#: that came to shell out would fail here, and its tool would go in this list).
BASICS: tuple[str, ...] = ()
#: The platforms build-plugin.sh names archives for, by what `platform` says.
SYSTEMS = {"Linux": "linux", "Darwin": "darwin"}
MACHINES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}


def this_platform() -> str | None:
    system, machine = SYSTEMS.get(platform.system()), MACHINES.get(platform.machine().lower())
    return f"{system}-{machine}" if system and machine else None


@pytest.fixture(scope="session")
def plugin_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This machine's plugin archive, as the release attaches it."""
    if reason := tools_missing():
        pytest.skip(reason)
    if (where := this_platform()) is None:
        pytest.skip(f"no plugin archive is built for {platform.system()} {platform.machine()}")
    name = f"pulumi-resource-vertex-training-v{VERSION}-{where}.tar.gz"
    path = plugin_archives(tmp_path_factory) / name
    assert path.is_file(), f"scripts/pack-sdks.sh made no {name}"
    return path


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def no_python_path(tmp: Path) -> str:
    """A PATH of the Pulumi tools and a folder of the system basics, with no Python."""
    basics = tmp / "basics"
    basics.mkdir()
    for tool in BASICS:
        found = shutil.which(tool)
        assert found is not None, f"this machine has no {tool}"
        (basics / tool).symlink_to(found)
    path = f"{TOOLS_BIN}{os.pathsep}{basics}"
    for python in ("python3", "python", "pip", "pip3"):
        assert shutil.which(python, path=path) is None, f"{python} is on {path}"
    return path


def offline_env(tmp: Path) -> dict[str, str]:
    """The engine's environment: a Pulumi home of its own, no Python on PATH, pip's index
    a closed port, nothing naming a Python for the plugin."""
    env = engine_env(tmp, Path(sys.prefix))
    # (engine_env already leaves out PYTHON, which `make` hands the tests.)
    for name in ("VERTEX_TRAINING_PYTHON", "PULUMI_PYTHON_CMD", "VIRTUAL_ENV", "PYTHONPATH"):
        env.pop(name, None)
    return {
        **env,
        "PATH": no_python_path(tmp),
        "PIP_INDEX_URL": f"http://127.0.0.1:{closed_port()}/simple",
        "PIP_NO_INDEX": "1",
        "PULUMI_IGNORE_AMBIENT_PLUGINS": "true",
    }


def install(archive: Path, env: dict[str, str], cwd: Path) -> Path:
    """`pulumi plugin install --file` the archive; the plugin's installed folder."""
    run(
        "pulumi",
        "plugin",
        "install",
        "resource",
        "vertex-training",
        VERSION,
        "--file",
        archive,
        cwd=cwd,
        env=env,
    )
    folder = Path(env["PULUMI_HOME"]) / "plugins" / f"resource-vertex-training-v{VERSION}"
    assert (folder / "pulumi-resource-vertex-training").is_file()
    return folder


def yaml_program(fake: FakeVertex) -> dict[str, Any]:
    """A training job and a waiter of the installed plugin's release, pointed at the fake;
    no plugin folder named."""
    return {
        "name": "bundled",
        "runtime": "yaml",
        "config": {
            "vertex-training:apiEndpoint": fake.address,
            "vertex-training:project": "test-project",
            "vertex-training:region": "us-central1",
        },
        "resources": {
            "train": {
                "type": "vertex-training:TrainingJob",
                "options": {"version": VERSION},
                "properties": {
                    "job": {"image": IMAGE, "machine": "e2-standard-4", "wait": "succeeded"}
                },
            },
            "wait-for-jobs": {
                "type": "vertex-training:JobWaiter",
                "options": {"version": VERSION},
                "properties": {"jobs": ["${train.waiterEntry}"]},
            },
        },
        "outputs": {"state": '${wait-for-jobs.states["train"]}', "jobId": "${train.jobId}"},
    }


def local_package_program() -> dict[str, Any]:
    """A Python package job on the local backend (the templates' `local` stack)."""
    return {
        "name": "bundled-local",
        "runtime": "yaml",
        "config": {"vertex-training:backend": "local"},
        "resources": {
            "train": {
                "type": "vertex-training:TrainingJob",
                "options": {"version": VERSION},
                "properties": {
                    "job": {
                        "pythonPackage": {"packageUris": ["trainer"], "module": "trainer.task"},
                        "machine": "n1-standard-4",
                        "wait": "succeeded",
                    }
                },
            },
            "wait-for-jobs": {
                "type": "vertex-training:JobWaiter",
                "options": {"version": VERSION},
                "properties": {"jobs": ["${train.waiterEntry}"]},
            },
        },
    }


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.3, pending_s=0.3, run_s=0.6) as fake:
        yield fake


class TestTheArchive:
    def test_it_holds_the_executable_its_interpreter_the_version_and_the_license(
        self, plugin_archive: Path, tmp_path: Path
    ) -> None:
        """The bundle's executable at the root, beside _internal/, VERSION and LICENSE."""
        folder = tmp_path / "unpacked"
        shutil.unpack_archive(plugin_archive, folder, filter="data")
        assert {p.name for p in folder.iterdir()} == {
            "pulumi-resource-vertex-training",
            "_internal",
            "VERSION",
            "LICENSE",
        }
        assert os.access(folder / "pulumi-resource-vertex-training", os.X_OK)
        assert (folder / "VERSION").read_text().strip() == VERSION
        assert (folder / "LICENSE").read_text() == (REPO / "LICENSE").read_text()


class TestTheInstalledPlugin:
    def test_a_yaml_program_runs_a_job_through_up_and_destroy_with_no_python_or_index(
        self, plugin_archive: Path, tmp_path: Path, fake: FakeVertex
    ) -> None:
        """With no Python on PATH and no index, the job is created, waited for, deleted."""
        env = offline_env(tmp_path)
        plugin = install(plugin_archive, env, tmp_path)
        project = Project(root=tmp_path / "project", env=env)
        project.root.mkdir()
        (project.root / "Pulumi.yaml").write_text(
            yaml.safe_dump(yaml_program(fake), sort_keys=False)
        )

        up = project.up().check()
        assert "train: SUCCEEDED" in up.output
        [job] = fake.jobs.values()
        assert job.state.name == "JOB_STATE_SUCCEEDED"
        assert job.job_spec.worker_pool_specs[0].machine_spec.machine_type == "e2-standard-4"
        assert project.outputs() == {"state": "SUCCEEDED", "jobId": job.name.rsplit("/", 1)[-1]}
        [provider] = [
            r for r in project.state_resources() if r["type"] == "pulumi:providers:vertex-training"
        ]
        assert provider["inputs"]["version"] == VERSION

        project.run("destroy", "--yes", "--skip-preview").check()
        assert fake.jobs == {}, "destroy left the job"
        assert not (plugin / ".venv").exists(), "the plugin made a virtualenv"

    def test_it_answers_the_packages_schema(self, plugin_archive: Path, tmp_path: Path) -> None:
        """`pulumi package get-schema` on the installed executable prints schema.json."""
        env = offline_env(tmp_path)
        plugin = install(plugin_archive, env, tmp_path)
        proc = subprocess.run(
            ["pulumi", "package", "get-schema", str(plugin / "pulumi-resource-vertex-training")],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == SCHEMA

    def test_a_local_python_package_job_with_no_python_says_it_needs_one(
        self, plugin_archive: Path, tmp_path: Path
    ) -> None:
        """With no Python on PATH, a local package job fails, its log naming python3."""
        env = offline_env(tmp_path)
        install(plugin_archive, env, tmp_path)
        project = Project(root=tmp_path / "project", env=env)
        project.root.mkdir()
        shutil.copytree(TRAINER, project.root / "trainer")
        (project.root / "Pulumi.yaml").write_text(
            yaml.safe_dump(local_package_program(), sort_keys=False)
        )

        up = project.up()
        assert up.returncode != 0, up.output
        assert "train: FAILED" in up.output and "the job could not start" in up.output
        [log] = (project.root / ".local-jobs").glob("*/logs/supervisor.log")
        assert "needs a Python 3 with pip on this machine (python3 on PATH, or PYTHON)" in (
            log.read_text()
        )
        project.run("destroy", "--yes", "--skip-preview").check()
