"""Hyperparameter tuning jobs through the real Pulumi engine: a local study over the example
trainer, and a vertex stack against the fake JobService.

Like tests/test_engine.py, each test runs the CLI that `make tools` built on a copy of the
project (tests/engine.py); each `pulumi` command takes a few seconds.
"""

from __future__ import annotations

import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine import Project, local_stack, tools_missing, vertex_stack
from vertex_training.backends.local import LocalBackend
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

TUNING_TYPE = "pulumi-python:dynamic/vertex:HyperparameterTuningJob"

#: A grid over two learning rates of the example trainer: 0.0001 learns next to nothing
#: in one epoch, 1.0 does better (tests/test_tuning_local.py checks the same pair).
TRAINER_STUDY_JOB: dict[str, Any] = {
    "python_package": {"package_uris": ["trainer"], "module": "trainer.task"},
    "args": ["--num-samples", "2000", "--epochs", "1"],
    "study": {
        "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
        "parameters": {"learning-rate": {"type": "discrete", "values": [0.0001, 1.0]}},
        "algorithm": "grid",
        "max_trials": 2,
        "parallel_trials": 2,
    },
    "wait": "succeeded",
}

SLOW_PACKAGE = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "slowjob"
        version = "0.1"
    """,
    "slowjob/__init__.py": "",
    "slowjob/main.py": """
        import time
        for _ in range(600):
            time.sleep(0.5)
    """,
}

FAKE_STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {
        "learning-rate": {"type": "double", "min": 0.001, "max": 1.0, "scale": "log"},
        "epochs": {"type": "integer", "min": 2, "max": 10},
    },
    "algorithm": "random",
    "max_trials": 4,
    "parallel_trials": 2,
}


def fake_tuning_job(display_name: str, wait: str = "succeeded") -> dict[str, Any]:
    return {
        "display_name": display_name,
        "image": "us-docker.pkg.dev/test-project/repo/trainer:1",
        "study": FAKE_STUDY,
        "wait": wait,
    }


def tuning_jobs_in_state(project: Project) -> dict[str, dict[str, Any]]:
    """HyperparameterTuningJob resources in state, by name: their id and outputs."""
    return {
        r["urn"].rsplit("::", 1)[-1]: {"id": r.get("id", ""), **(r.get("outputs") or {})}
        for r in project.state_resources()
        if r["type"] == TUNING_TYPE
    }


def write_package(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


class TestLocalTuning:
    """A local study through `pulumi up`, preview, refresh and destroy."""

    def test_a_study_finds_a_better_metric_than_its_worst_trial(self, project: Project) -> None:
        """`pulumi up` runs the study; outputs list the trials and a best trial beating the
        worst; a no-change preview is clean; a study change previews as a replace."""
        project.write_stack(local_stack(sweep=TRAINER_STUDY_JOB))
        project.up().check()
        sweep = project.outputs()["jobs"]["sweep"]
        assert sweep["state"] == "SUCCEEDED"
        trials = sweep["trials"]
        assert len(trials) == 2 and {t["state"] for t in trials} == {"SUCCEEDED"}
        assert {t["parameters"]["learning-rate"] for t in trials} == {0.0001, 1.0}
        best = sweep["best_trial"]
        worst = min(t["final_metric"] for t in trials)
        assert best["final_metric"] > worst
        assert (Path(sweep["model_directory"]) / "model.json").exists()
        assert sweep["model_directory"].endswith(f"/{best['id']}/model")

        result = project.run("preview", "--expect-no-changes", "--diff")
        assert result.returncode == 0, result.output

        changed = {**TRAINER_STUDY_JOB, "study": {**TRAINER_STUDY_JOB["study"], "max_trials": 3}}
        project.write_stack(local_stack(sweep=changed))
        preview = project.run("preview", "--diff").check()
        assert "+-" in preview.output and "study" in preview.output, preview.output

        project.write_stack(local_stack(sweep=TRAINER_STUDY_JOB))
        project.run("refresh", "--yes").check()
        refreshed = tuning_jobs_in_state(project)["sweep"]
        assert refreshed["state"] == "SUCCEEDED" and len(refreshed["trials"]) == 2
        assert refreshed["best_trial"]["id"] == best["id"]

    def test_destroy_stops_every_running_trial(self, project: Project) -> None:
        """`pulumi destroy` cancels a running study: every trial's processes stop."""
        write_package(project.root / "slowjob", SLOW_PACKAGE)
        study = {
            **TRAINER_STUDY_JOB["study"],
            "algorithm": "random",
            "parameters": {"x": {"type": "double", "min": 0, "max": 1}},
        }
        slow = {
            "python_package": {"package_uris": ["slowjob"], "module": "slowjob.main"},
            "study": study,
            "wait": "running",
        }
        project.write_stack(local_stack(slow=slow))
        project.up().check()
        job_id = tuning_jobs_in_state(project)["slow"]["id"]
        backend = LocalBackend(project.root / ".local-jobs", base_dir=project.root)
        # A trial is recorded before its replica starts (its virtualenv comes first): wait
        # for the processes themselves.
        deadline = time.monotonic() + 60
        while len(pids := backend.pids(job_id)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(backend.get(job_id).trials) == 2
        assert len(pids) >= 3, "the supervisor and two trial replicas should run"

        project.run("destroy", "--yes").check()
        assert backend.get(job_id) is None
        assert not [pid for pid in pids if alive(pid)], "processes of the destroyed study run on"


class TestVertexTuning:
    """A tuning job on a `vertex` stack, against the fake JobService."""

    def test_up_refresh_destroy(self, project: Project) -> None:
        """The study is submitted and waited for; outputs carry its trials and best trial;
        refresh keeps them; destroy deletes the job."""
        with FakeVertex(trial_s=0.3) as fake:
            project.write_stack(vertex_stack(fake, sweep=fake_tuning_job("sweep")))
            project.up().check()
            sweep = project.outputs()["jobs"]["sweep"]
            assert sweep["state"] == "SUCCEEDED"
            assert "/hyperparameterTuningJobs/" in sweep["resource_name"]
            assert len(sweep["trials"]) == 4
            metrics = [t["final_metric"] for t in sweep["trials"]]
            assert sweep["best_trial"]["final_metric"] == max(metrics)
            [job] = fake.tuning_jobs.values()
            assert job.labels["pulumi_resource"] == "sweep"

            project.run("refresh", "--yes").check()
            refreshed = tuning_jobs_in_state(project)["sweep"]
            assert refreshed["state"] == "SUCCEEDED" and len(refreshed["trials"]) == 4

            project.run("destroy", "--yes").check()
            assert fake.tuning_jobs == {}

    def test_engine_killed_after_submission_leaves_one_tuning_job(self, project: Project) -> None:
        """A rerun after the engine was killed mid-create adopts the tuning job it submitted."""
        with FakeVertex(trial_s=0.3) as fake:
            fake.stall_next("CreateHyperparameterTuningJob", 30.0)
            project.write_stack(vertex_stack(fake, once=fake_tuning_job("once")))
            project.init()
            proc = project.start("up", "--yes", "--skip-preview")
            deadline = time.monotonic() + 120
            while not fake.tuning_jobs and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.tuning_jobs, "the tuning job was never submitted"
            project.kill_engine(proc)

            project.run("cancel", "--yes").check()
            assert "once" not in tuning_jobs_in_state(project)
            project.up().check()
            creates = [c for c in fake.calls if c.method == "CreateHyperparameterTuningJob"]
            assert len(creates) == 1 and len(fake.tuning_jobs) == 1
            assert project.outputs()["jobs"]["once"]["state"] == "SUCCEEDED"
