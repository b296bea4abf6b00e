"""Accelerators on the local backend: each replica its own GPUs, or a clear refusal.

A fake ``nvidia-smi`` on PATH stands for this machine's GPUs.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.packages import write_package
from vertex_training.api import states
from vertex_training.backends.local import LocalBackend, preflight
from vertex_training.backends.local._runner import _container_argv
from vertex_training.backends.local.gpus import LOCAL_CPU, local_gpus
from vertex_training.stackconfig import StackSettings, load_stack, parse_job

LOCAL = StackSettings(stack="local", backend="local")
JOB_END_S = 30.0
PROBE = {
    "main": """
        import json, os
        from pathlib import Path
        out = Path(os.environ["AIP_MODEL_DIR"])
        out.mkdir(parents=True, exist_ok=True)
        seen = {"cuda": os.environ.get("CUDA_VISIBLE_DEVICES")}
        (out / f"rank-{os.environ['RANK']}.json").write_text(json.dumps(seen))
    """,
}


def fake_gpus(monkeypatch: pytest.MonkeyPatch, folder: Path, count: int | None) -> None:
    """Put an nvidia-smi listing ``count`` GPUs first on PATH; None: no nvidia-smi at all."""
    folder.mkdir(parents=True, exist_ok=True)
    if count is not None:
        smi = folder / "nvidia-smi"
        lines = "".join(f"echo {i}\n" for i in range(count))
        smi.write_text(f"#!/bin/sh\n{lines}")
        smi.chmod(0o755)
        monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    else:
        kept = [
            p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "nvidia-smi").exists()
        ]
        monkeypatch.setenv("PATH", os.pathsep.join(kept))


def body(package: Path, count: int, replicas: int = 2) -> dict[str, Any]:
    """A local job: ``replicas`` replicas (a primary and workers) of ``count`` T4s each."""
    config = {
        "python_package": {"package_uris": [str(package)], "module": "gpuprobe.main"},
        "machine": "n1-standard-8",
        "accelerator": {"type": "NVIDIA_TESLA_T4", "count": count},
        "workers": {"replicas": replicas - 1},
    }
    return parse_job("gpu", config, LOCAL).request_body()


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return write_package(tmp_path / "gpuprobe", "gpuprobe", PROBE)


def wait_ended(backend: LocalBackend, name: str) -> Any:
    deadline = time.monotonic() + JOB_END_S
    while time.monotonic() < deadline:
        status = backend.get(name)
        if status is not None and status.state in states.TERMINAL_STATES:
            return status
        time.sleep(0.2)
    raise AssertionError(f"{name} did not end within {JOB_END_S} s")


class TestPreview:
    """preflight: the GPUs a job asks for against the ones this machine has."""

    def test_gpus_are_listed(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
        """nvidia-smi's indices are the GPUs; none without nvidia-smi."""
        fake_gpus(monkeypatch, tmp_path / "bin", 2)
        assert local_gpus() == ["0", "1"]
        fake_gpus(monkeypatch, tmp_path / "none", None)
        monkeypatch.setenv("PATH", str(tmp_path / "none"))
        assert local_gpus() == []

    def test_enough_gpus_pass(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: Path
    ) -> None:
        """Two replicas of one GPU each fit on two GPUs."""
        fake_gpus(monkeypatch, tmp_path / "bin", 2)
        assert preflight(body(package, 1), "vertex-training:jobs.gpu") == []

    def test_too_many_gpus_are_refused_with_the_count_found(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: Path
    ) -> None:
        """Two replicas of two GPUs need four; the machine has two."""
        fake_gpus(monkeypatch, tmp_path / "bin", 2)
        [issue] = preflight(body(package, 2), "vertex-training:jobs.gpu")
        assert issue.key == "vertex-training:jobs.gpu.accelerator.count"
        assert "needs 4 GPUs here" in issue.message and "this machine has 2" in issue.message

    def test_no_gpu_is_refused_naming_the_setting(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: Path
    ) -> None:
        """Without a GPU, the job is refused unless the stack allows the CPU."""
        fake_gpus(monkeypatch, tmp_path / "bin", None)
        [issue] = preflight(body(package, 1), "vertex-training:jobs.gpu")
        assert "vertex-training:localAccelerators: cpu" in issue.message
        assert preflight(body(package, 1), "vertex-training:jobs.gpu", accelerators=LOCAL_CPU) == []

    def test_the_setting_takes_gpu_or_cpu(self, tmp_path: Path) -> None:
        """Another value is refused at preview with the key, the value and the choices."""
        key = "vertex-training:localAccelerators"
        for good in ("cpu", "gpu", None):
            keys = {"vertex-training:backend": "local", key: good}
            assert load_stack(keys, "local", project_dir=tmp_path).issues == ()
        stack = load_stack(
            {"vertex-training:backend": "local", key: "tpu"}, "local", project_dir=tmp_path
        )
        [issue] = stack.issues
        assert (issue.key, issue.value) == (key, "tpu") and "cpu" in issue.message


class TestAssignment:
    """Each replica gets its own GPUs; on the CPU, none, and its log says so."""

    def test_each_replica_gets_its_own_gpus(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: Path
    ) -> None:
        fake_gpus(monkeypatch, tmp_path / "bin", 4)
        backend = LocalBackend(tmp_path / "jobs", base_dir=tmp_path)
        submitted = backend.submit(body(package, 2))
        status = wait_ended(backend, submitted.name)
        assert status.state == states.SUCCEEDED, status.error
        model = Path(backend.output_directory(submitted.name)) / "model"
        seen = [json.loads((model / f"rank-{r}.json").read_text())["cuda"] for r in (0, 1)]
        assert seen == ["0,1", "2,3"]

    def test_on_the_cpu_a_replica_sees_no_gpu(
        self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, package: Path
    ) -> None:
        fake_gpus(monkeypatch, tmp_path / "bin", None)
        backend = LocalBackend(tmp_path / "jobs", base_dir=tmp_path)
        submitted = backend.submit(body(package, 1))
        status = wait_ended(backend, submitted.name)
        assert status.state == states.SUCCEEDED, status.error
        model = Path(backend.output_directory(submitted.name)) / "model"
        assert json.loads((model / "rank-0.json").read_text())["cuda"] == ""
        job_dir = tmp_path / "jobs" / submitted.name.rsplit("/", 1)[-1]
        log = (job_dir / "logs" / "supervisor.log").read_text()
        assert "runs on the CPU" in log

    def test_a_container_gets_its_gpus(self, tmp_path: Path) -> None:
        """docker and podman both take --gpus device=..."""
        spec = {"imageUri": "example/trainer:1", "args": ["--x"]}
        argv = _container_argv("podman", "c", spec, [], (tmp_path,), gpus=["2", "3"])
        assert argv[argv.index("--gpus") + 1] == "device=2,3"
        assert "--gpus" not in _container_argv("docker", "c", spec, [], (tmp_path,), gpus=[])
