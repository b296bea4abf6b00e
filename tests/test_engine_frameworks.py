"""Real framework code through `pulumi up` on the local backend: the two multi-replica
scenarios users bring from Vertex AI, with the frameworks installed from the package index.

- examples/tf_multiworker: Keras with MultiWorkerMirroredStrategy, a primary and one
  worker, as in Vertex AI's multi-worker codelab. The chief saves the model to
  AIP_MODEL_DIR, the worker to a temporary directory.
- examples/torch_ddp: PyTorch DistributedDataParallel with gloo on the CPU, a primary and
  one worker, from MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK.

Each job's virtualenv is built as on Vertex AI: pip installs the package with its
dependencies (tensorflow and tf-keras 2.21; torch 2.15 with NVIDIA's CUDA libraries, about
3 GB of wheels). The wheels are kept in one wheelhouse per machine (WHEELHOUSE_ENV, by
default ``~/.cache/vertex-training/wheels``), so the package index is asked once; the
virtualenvs are removed after each test.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine import Project, local_stack, tools_missing
from vertex_training.backends.local import LocalBackend
from vertex_training.backends.local._venvs import WHEELHOUSE_ENV

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing())),
    # The first run on a machine fetches the frameworks (about 3.5 GB) and installs them.
    pytest.mark.timeout(900),
]

#: The machine's wheelhouse for framework wheels, unless WHEELHOUSE_ENV names another.
DEFAULT_WHEELHOUSE = Path.home() / ".cache" / "vertex-training" / "wheels"
#: The Pythons tensorflow 2.21 publishes wheels for.
TENSORFLOW_PYTHONS = ((3, 10), (3, 11), (3, 12), (3, 13))
UP_TIMEOUT_S = 800


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """A project on the local backend whose jobs share the machine's wheelhouse."""
    project = Project.create(tmp_path)
    wheelhouse = Path(os.environ.get(WHEELHOUSE_ENV) or DEFAULT_WHEELHOUSE)
    wheelhouse.mkdir(parents=True, exist_ok=True)
    project.env[WHEELHOUSE_ENV] = str(wheelhouse)
    yield project
    # The virtualenvs hold gigabytes (torch's CUDA libraries); the wheels stay.
    shutil.rmtree(project.root / ".local-jobs" / "_venvs", ignore_errors=True)


def two_replica_job(package: str, module: str, args: list[str]) -> dict[str, Any]:
    """A primary and one worker running ``module`` of the example ``package``."""
    return {
        "python_package": {"package_path": f"examples/{package}", "module": module},
        "args": args,
        "workers": {"replicas": 1},
        "scheduling": {"timeout": "15m"},
        "wait": "succeeded",
    }


def run_to_success(project: Project, name: str, job: dict[str, Any]) -> dict[str, Any]:
    """`pulumi up` the job; its outputs, and each replica's RESULT line by pool."""
    project.write_stack(local_stack(**{name: job}))
    started = time.monotonic()
    project.run("up", "--yes", "--skip-preview", timeout=UP_TIMEOUT_S).check()
    elapsed = time.monotonic() - started
    outputs = project.outputs()["jobs"][name]
    backend = LocalBackend(project.root / ".local-jobs", base_dir=project.root)
    status = backend.get(outputs["resource_name"])
    assert status is not None
    logs = backend.root / status.job_id / "logs"
    assert outputs["state"] == "SUCCEEDED", (outputs, _tails(logs))
    results = {pool: _result(logs / f"{pool}-0.log") for pool in ("workerpool0", "workerpool1")}
    print(f"{name}: pulumi up took {elapsed:.1f} s (virtualenv, cluster, training)")
    project.run("destroy", "--yes").check()
    return {"outputs": outputs, "results": results}


def _result(log: Path) -> dict[str, Any]:
    lines = [line for line in log.read_text().splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, f"{log} has no RESULT line:\n{log.read_text()[-2000:]}"
    return json.loads(lines[0].removeprefix("RESULT "))


def _tails(logs: Path) -> str:
    return "\n".join(
        f"== {log.name}\n{log.read_text()[-1500:]}" for log in sorted(logs.glob("*.log"))
    )


@pytest.mark.skipif(
    sys.version_info[:2] not in TENSORFLOW_PYTHONS,
    reason=f"tensorflow 2.21 has no wheel for Python {sys.version_info[0]}.{sys.version_info[1]}",
)
def test_tensorflow_multi_worker_mirrored_strategy(project: Project) -> None:
    """The chief and the worker form one two-replica cluster, train in step, and the
    chief's SavedModel lands in AIP_MODEL_DIR while the worker's temporary copy is gone."""
    job = two_replica_job("tf_multiworker", "tf_multiworker.task", ["--epochs", "2"])
    run = run_to_success(project, "multiworker", job)
    chief, worker = run["results"]["workerpool0"], run["results"]["workerpool1"]
    assert (chief["task_type"], worker["task_type"]) == ("chief", "worker")
    assert chief["replicas_in_sync"] == worker["replicas_in_sync"] == 2
    # Synchronous all-reduce: both replicas end with the same weights and loss.
    assert chief["weights_sum"] == pytest.approx(worker["weights_sum"], rel=1e-6)
    assert chief["loss"] == pytest.approx(worker["loss"], rel=1e-6)
    model = Path(run["outputs"]["model_directory"])
    assert Path(chief["saved_to"]).resolve() == model.resolve()
    assert (model / "saved_model.pb").is_file()
    assert json.loads((model / "result.json").read_text()) == chief
    assert "workertemp_worker_0" in worker["saved_to"]
    assert not Path(worker["saved_to"]).exists(), "the worker removes its temporary copy"


def test_pytorch_distributed_data_parallel(project: Project) -> None:
    """Two ranks join one gloo process group from MASTER_ADDR, MASTER_PORT, WORLD_SIZE
    and RANK; DDP keeps their weights equal; rank 0 saves the model to AIP_MODEL_DIR."""
    job = two_replica_job("torch_ddp", "torch_ddp.task", ["--steps", "40"])
    run = run_to_success(project, "ddp", job)
    first, second = run["results"]["workerpool0"], run["results"]["workerpool1"]
    assert (first["rank"], second["rank"]) == (0, 1)
    assert first["world_size"] == second["world_size"] == 2
    # Both ranks gathered both sums: equal, because DDP averaged every gradient.
    assert first["weights_sums"] == second["weights_sums"]
    assert first["weights_sums"][0] == pytest.approx(first["weights_sums"][1], rel=1e-6)
    # Different data per rank, so their own losses differ while the weights agree.
    assert first["loss"] != second["loss"]
    model = Path(run["outputs"]["model_directory"])
    assert (model / "model.pt").stat().st_size > 0
    assert json.loads((model / "result.json").read_text()) == first
