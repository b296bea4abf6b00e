"""The example trainer (trainer/) run as Vertex runs it: ``python -m trainer.task``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

TRAINER = Path(__file__).resolve().parents[1] / "trainer"
#: Small enough to keep each run well under a second.
QUICK = ["--num-samples", "1000", "--num-features", "8"]


def run_trainer(
    *args: str, env: dict[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run the trainer module from its project directory, with only ``env`` added."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "CLOUD_ML_"))}
    return subprocess.run(
        [sys.executable, "-m", "trainer.task", *args],
        cwd=TRAINER,
        env=base | (env or {}),
        capture_output=True,
        text=True,
        check=check,
        timeout=60,
    )


def vertex_dirs(root: Path) -> dict[str, str]:
    """Vertex's output variables under ``root``, hypertune's metric file too (not /tmp)."""
    return {
        "AIP_MODEL_DIR": f"{root}/model/",
        "AIP_CHECKPOINT_DIR": f"{root}/checkpoints/",
        "CLOUD_ML_HP_METRIC_FILE": f"{root}/hypertune.metrics",
    }


def checkpoints(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "checkpoints").iterdir())


class TestTraining:
    @pytest.mark.timeout(60)
    def test_trains_and_writes_model(self, tmp_path: Path) -> None:
        """The model (better than chance) goes to AIP_MODEL_DIR, a checkpoint per epoch."""
        result = run_trainer("--epochs", "3", *QUICK, env=vertex_dirs(tmp_path))
        model = json.loads((tmp_path / "model" / "model.json").read_text())
        assert len(model["weights"]) == 8
        assert model["metrics"]["accuracy"] > 0.7
        assert model["hyperparameters"]["learning_rate"] == 0.05
        assert checkpoints(tmp_path) == ["ckpt-0001.json", "ckpt-0002.json", "ckpt-0003.json"]
        assert "epoch 3/3" in result.stdout

    @pytest.mark.timeout(60)
    def test_job_dir_without_vertex_variables(self, tmp_path: Path) -> None:
        """Without AIP_* variables, the model and checkpoints go under --job-dir."""
        metric_file = {"CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "hypertune.metrics")}
        run_trainer("--epochs", "1", *QUICK, "--job-dir", str(tmp_path), env=metric_file)
        assert (tmp_path / "model" / "model.json").exists()
        assert checkpoints(tmp_path) == ["ckpt-0001.json"]

    @pytest.mark.timeout(60)
    def test_reports_accuracy_to_hypertune(self, tmp_path: Path) -> None:
        """The final accuracy is reported with cloudml-hypertune, at the last epoch as step."""
        run_trainer("--epochs", "2", *QUICK, env=vertex_dirs(tmp_path))
        reported = json.loads((tmp_path / "hypertune.metrics").read_text())
        model = json.loads((tmp_path / "model" / "model.json").read_text())
        assert reported["accuracy"] == str(model["metrics"]["accuracy"])
        assert reported["global_step"] == "2"

    @pytest.mark.timeout(60)
    def test_only_primary_writes(self, tmp_path: Path) -> None:
        """A worker replica (CLUSTER_SPEC task workerpool1) trains but writes nothing."""
        cluster_spec = {"cluster": {}, "task": {"type": "workerpool1", "index": 0}}
        env = vertex_dirs(tmp_path) | {"CLUSTER_SPEC": json.dumps(cluster_spec)}
        result = run_trainer("--epochs", "1", *QUICK, env=env)
        assert "non-primary" in result.stdout
        assert not (tmp_path / "model").exists() and not (tmp_path / "checkpoints").exists()

    def test_rejects_bad_hyperparameters(self) -> None:
        """A non-positive epoch count is a usage error, not a crash."""
        result = run_trainer("--epochs", "0", check=False)
        assert result.returncode == 2 and "--epochs must be at least 1" in result.stderr


class TestResume:
    @pytest.mark.timeout(60)
    def test_resumes_from_latest_checkpoint(self, tmp_path: Path) -> None:
        """A rerun with more epochs starts after the latest checkpoint and ends as a fresh run."""
        resumed, fresh = tmp_path / "resumed", tmp_path / "fresh"
        run_trainer("--epochs", "2", *QUICK, env=vertex_dirs(resumed))
        result = run_trainer("--epochs", "4", *QUICK, env=vertex_dirs(resumed))
        assert "resuming from checkpoint of epoch 2" in result.stdout
        assert "epoch 1/4" not in result.stdout and "epoch 3/4" in result.stdout
        run_trainer("--epochs", "4", *QUICK, env=vertex_dirs(fresh))
        model = json.loads((resumed / "model" / "model.json").read_text())
        assert model == json.loads((fresh / "model" / "model.json").read_text())

    @pytest.mark.timeout(60)
    def test_resumes_after_being_killed(self, tmp_path: Path) -> None:
        """A run killed mid-way resumes from its last checkpoint when started again."""
        args = ["-m", "trainer.task", "--epochs", "30", "--num-samples", "4000"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AIP_", "CLOUD_ML_"))}
        process = subprocess.Popen(
            [sys.executable, *args],
            cwd=TRAINER,
            env=env | vertex_dirs(tmp_path),
            stdout=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 30
        while not (tmp_path / "checkpoints" / "ckpt-0002.json").exists():
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        process.kill()
        process.wait()
        last = checkpoints(tmp_path)[-1]
        assert last != "ckpt-0030.json"
        result = run_trainer("--epochs", "30", "--num-samples", "4000", env=vertex_dirs(tmp_path))
        epoch = int(last.removeprefix("ckpt-").removesuffix(".json"))
        assert f"resuming from checkpoint of epoch {epoch}" in result.stdout
        assert f"epoch {epoch}/30" not in result.stdout and f"epoch {epoch + 1}/30" in result.stdout
        assert (tmp_path / "model" / "model.json").exists()
