"""The local backend runs real studies: real trial processes, cloudml-hypertune metric files.

Trials run modules of a small ``probe`` package (one virtualenv, built once for the module's
backend); one test runs the example trainer, which reports its accuracy with
cloudml-hypertune.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.packages import write_package
from vertex_training.api import states
from vertex_training.api.sampling import Suggester, trial_args
from vertex_training.backends.base import JobStatus
from vertex_training.backends.local import LocalBackend, ProcessRef, job_name, preflight
from vertex_training.backends.local._images import HYPERTUNE, image_requirements
from vertex_training.backends.local._study import read_measurement, trial_body
from vertex_training.stackconfig import StackSettings, parse_job

pytestmark = pytest.mark.timeout(120)

REPO = Path(__file__).resolve().parents[1]
LOCAL = StackSettings(stack="local", backend="local")
#: Upper bound for a short study to end on a busy machine.
STUDY_END_S = 60.0

PROBE_MODULES = {
    # Reports 1 - (x - 0.3)^2 (and, with --twice, a worse value after it) via hypertune;
    # records when it ran and with which arguments.
    "objective": """
        import argparse, json, os, sys, time
        from pathlib import Path
        import hypertune
        parser = argparse.ArgumentParser()
        parser.add_argument("--x", type=float, required=True)
        parser.add_argument("--opt", default="none")
        parser.add_argument("--sleep", type=float, default=0.0)
        parser.add_argument("--twice", action="store_true")
        args = parser.parse_args()
        start = time.time()
        time.sleep(args.sleep)
        value = 1 - (args.x - 0.3) ** 2
        tuner = hypertune.HyperTune()
        tuner.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag="score", metric_value=value, global_step=1)
        if args.twice:
            tuner.report_hyperparameter_tuning_metric(
                hyperparameter_metric_tag="score", metric_value=value - 1, global_step=2)
        trial = os.environ["CLOUD_ML_TRIAL_ID"]
        record = {"argv": sys.argv[1:], "start": start, "end": time.time(),
                  "model_dir": os.environ["AIP_MODEL_DIR"], "trial": trial}
        Path(os.environ["PROBE_OUT"], f"trial-{trial}.json").write_text(json.dumps(record))
    """,
    "quiet": "print('no metric reported')\n",
    "fail": "import sys; sys.exit(4)\n",
    "sleep": """
        import json, os, subprocess, sys, time
        from pathlib import Path
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        out = Path(os.environ["PROBE_OUT"]) / f"pids-{os.environ['CLOUD_ML_TRIAL_ID']}.json"
        out.with_suffix(".tmp").write_text(json.dumps([os.getpid(), child.pid]))
        os.replace(out.with_suffix(".tmp"), out)
        time.sleep(600)
    """,
}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_package(tmp_path_factory.mktemp("probe-project"), "probe", PROBE_MODULES)


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalBackend]:
    """One root for the module, so the probe's virtualenv is built once."""
    backend = LocalBackend(tmp_path_factory.mktemp("local-jobs"), base_dir=REPO)
    yield backend
    for path in backend.root.iterdir():
        if path.name.isdigit():
            name = json.loads((path / "job.json").read_text())["name"]
            backend.cancel(name)


def study_job(
    probe: Path,
    module: str,
    study: dict[str, Any],
    out: Path,
    args: list[str] | None = None,
    **keys: Any,
) -> dict[str, Any]:
    """The REST body of a local tuning job running ``probe.<module>``."""
    config = {
        "python_package": {"package_uris": [str(probe)], "module": f"probe.{module}"},
        "args": args or [],
        "env": {"PROBE_OUT": str(out)},
        "study": study,
        **keys,
    }
    return parse_job("sweep", config, LOCAL).request_body()


def x_study(**changes: Any) -> dict[str, Any]:
    return {
        "metrics": [{"id": "score", "goal": "MAXIMIZE"}],
        "parameters": {"x": {"type": "double", "min": 0.0, "max": 1.0}},
        "algorithm": "random",
        "max_trials": 4,
        "parallel_trials": 2,
        **changes,
    }


def wait_ended(backend: LocalBackend, name: str) -> JobStatus:
    deadline = time.monotonic() + STUDY_END_S
    while True:
        status = backend.get(name)
        assert status is not None, f"{name} disappeared"
        if status.state in states.TERMINAL_STATES:
            return status
        assert time.monotonic() < deadline, f"{name} still {status.state}"
        time.sleep(0.1)


def wait_files(folder: Path, pattern: str, count: int) -> list[Path]:
    deadline = time.monotonic() + STUDY_END_S
    while len(found := sorted(folder.glob(pattern))) < count:
        assert time.monotonic() < deadline, f"only {found} in {folder}"
        time.sleep(0.05)
    return found


def alive(pid: int) -> bool:
    return ProcessRef.of(pid).alive()


class TestLocalStudy:
    """A local tuning job samples, runs trials in parallel, and reads hypertune metrics."""

    def test_grid_runs_every_point_with_its_arguments(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """Grid search runs each point once, passing --<id>=<value>; the best is the best."""
        study = x_study(
            algorithm="grid",
            max_trials=10,
            parameters={
                "x": {"type": "discrete", "values": [0.1, 0.3, 0.9]},
                "opt": {"type": "categorical", "values": ["a"]},
            },
        )
        submitted = backend.submit(
            study_job(probe, "objective", study, tmp_path, args=["--sleep", "0"])
        )
        assert submitted.name.startswith("local/hyperparameterTuningJobs/")
        status = wait_ended(backend, submitted.name)
        assert status.state == states.SUCCEEDED, status.error
        assert sorted(t.parameters["x"] for t in status.trials) == [0.1, 0.3, 0.9]
        records = [json.loads(p.read_text()) for p in tmp_path.glob("trial-*.json")]
        argvs = sorted(r["argv"][2:] for r in records)
        # In the order of the request's parameters: by ID.
        assert argvs == [["--opt=a", "--x=0.1"], ["--opt=a", "--x=0.3"], ["--opt=a", "--x=0.9"]]
        best = status.best_trial
        assert best is not None and best.parameters["x"] == 0.3
        assert best.metrics["score"] == pytest.approx(1.0)
        worst = min(t.metrics["score"] for t in status.trials)
        assert best.metrics["score"] > worst

    def test_random_search_respects_parallel_trial_count(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """Four trials, two at a time: never more than two run at once, and two do."""
        submitted = backend.submit(
            study_job(probe, "objective", x_study(), tmp_path, args=["--sleep", "1.5"])
        )
        status = wait_ended(backend, submitted.name)
        assert status.state == states.SUCCEEDED, status.error
        assert [t.id for t in status.trials] == ["1", "2", "3", "4"]
        xs = [t.parameters["x"] for t in status.trials]
        assert all(0.0 <= x <= 1.0 for x in xs) and len(set(xs)) == 4
        records = [json.loads(p.read_text()) for p in tmp_path.glob("trial-*.json")]
        events = sorted([(r["start"], 1) for r in records] + [(r["end"], -1) for r in records])
        running, most = 0, 0
        for _, step in events:
            running += step
            most = max(most, running)
        assert most == 2

    def test_each_trial_has_its_own_output_directory(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """AIP_MODEL_DIR of trial N is <base output directory>/N/model/."""
        output = tmp_path / "out"
        submitted = backend.submit(
            study_job(
                probe,
                "objective",
                x_study(max_trials=2),
                tmp_path,
                base_output_directory=str(output),
            )
        )
        status = wait_ended(backend, submitted.name)
        assert backend.output_directory(status.name) == str(output)
        records = {
            r["trial"]: r
            for r in (json.loads(p.read_text()) for p in tmp_path.glob("trial-*.json"))
        }
        assert records["1"]["model_dir"] == f"{output}/1/model/"
        assert records["2"]["model_dir"] == f"{output}/2/model/"

    @pytest.mark.parametrize(("selection", "expected_offset"), [("best", 0.0), ("last", -1.0)])
    def test_measurement_selection(
        self,
        backend: LocalBackend,
        probe: Path,
        tmp_path: Path,
        selection: str,
        expected_offset: float,
    ) -> None:
        """BEST takes the best reported value, LAST the last (the second, worse, one)."""
        study = x_study(max_trials=1, parallel_trials=1, measurement_selection=selection)
        submitted = backend.submit(study_job(probe, "objective", study, tmp_path, args=["--twice"]))
        [trial] = wait_ended(backend, submitted.name).trials
        x = trial.parameters["x"]
        assert trial.metrics["score"] == pytest.approx(1 - (x - 0.3) ** 2 + expected_offset)

    def test_a_trial_without_a_metric_is_infeasible(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """A trial that reports nothing is INFEASIBLE, saying how to report; none succeeded."""
        study = x_study(max_trials=2, parallel_trials=2)
        status = wait_ended(
            backend, backend.submit(study_job(probe, "quiet", study, tmp_path)).name
        )
        assert status.state == states.FAILED
        assert "none of the 2 trials succeeded" in status.error
        assert {t.state for t in status.trials} == {"INFEASIBLE"}
        assert "report_hyperparameter_tuning_metric" in status.trials[0].infeasible_reason

    def test_max_failed_trials_stops_the_study(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """With max_failed_trials 2, the study stops and fails after two failed trials."""
        study = x_study(max_trials=6, parallel_trials=1, max_failed_trials=2)
        status = wait_ended(backend, backend.submit(study_job(probe, "fail", study, tmp_path)).name)
        assert status.state == states.FAILED
        assert len(status.trials) == 2
        assert "non-zero status of 4" in status.trials[0].infeasible_reason
        assert "2 trials failed" in status.error

    def test_cancel_and_delete_stop_every_trial(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """Cancel stops each running trial's process tree; delete removes the record."""
        submitted = backend.submit(study_job(probe, "sleep", x_study(), tmp_path))
        pid_files = wait_files(tmp_path, "pids-*.json", 2)
        pids = [pid for f in pid_files for pid in json.loads(f.read_text())]
        assert all(alive(pid) for pid in pids)
        assert set(pids) <= set(backend.pids(submitted.name))
        backend.cancel(submitted.name)
        status = backend.get(submitted.name)
        assert status.state == states.CANCELLED
        assert [t.state for t in status.trials] == ["INFEASIBLE", "INFEASIBLE"]
        assert not [pid for pid in pids if alive(pid)]
        backend.delete(submitted.name)
        assert backend.get(submitted.name) is None

    def test_label_lookup_and_names(
        self, backend: LocalBackend, probe: Path, tmp_path: Path
    ) -> None:
        """find_by_label finds tuning jobs; the same ID under customJobs is not the job."""
        body = study_job(
            probe,
            "objective",
            x_study(max_trials=1, parallel_trials=1),
            tmp_path,
            labels={"key": "tuned"},
        )
        submitted = backend.submit(body)
        assert [s.name for s in backend.find_by_label("key", "tuned")] == [submitted.name]
        assert backend.get(job_name(submitted.job_id)) is None
        assert backend.logs_url(submitted.name).endswith("/logs/supervisor.log")
        wait_ended(backend, submitted.name)

    def test_preflight_checks_the_trial_job_spec(self, probe: Path, tmp_path: Path) -> None:
        """Preflight looks at trialJobSpec: a missing package is named by its key."""
        body = study_job(probe, "objective", x_study(), tmp_path)
        body["trialJobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"] = [
            str(tmp_path / "missing")
        ]
        [issue] = preflight(body, key_prefix="vertex-training:jobs.sweep")
        assert issue.key == "vertex-training:jobs.sweep.python_package.package_uris"


class TestTrainerStudy:
    """The example trainer, tuned on this machine: its hypertune accuracy is each trial's."""

    def test_the_study_finds_a_better_accuracy_than_its_worst(self, tmp_path: Path) -> None:
        """A grid over learning rates: the best trial beats the worst."""
        backend = LocalBackend(tmp_path / "jobs", base_dir=REPO)
        config = {
            "python_package": {"package_uris": ["trainer"], "module": "trainer.task"},
            "args": ["--num-samples", "2000", "--epochs", "1"],
            "study": {
                "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
                "parameters": {"learning-rate": {"type": "discrete", "values": [0.0001, 1.0]}},
                "algorithm": "grid",
                "max_trials": 2,
                "parallel_trials": 2,
            },
        }
        body = parse_job("sweep", config, LOCAL).request_body()
        status = wait_ended(backend, backend.submit(body).name)
        assert status.state == states.SUCCEEDED, status.error
        scores = [t.metrics["accuracy"] for t in status.trials]
        assert status.best_trial is not None
        assert status.best_trial.metrics["accuracy"] == max(scores) > min(scores)
        model = Path(backend.output_directory(status.name)) / status.best_trial.id / "model"
        assert (model / "model.json").exists()


class TestPieces:
    """The parts of a local study: metric files, trial bodies, suggestions."""

    def test_reads_what_cloudml_hypertune_writes(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The metric file the hypertune package writes is read back, best or last."""
        import hypertune

        metric_file = tmp_path / "hypertune" / "workerpool0-0.metrics"
        monkeypatch.setenv("CLOUD_ML_HP_METRIC_FILE", str(metric_file))
        tuner = hypertune.HyperTune()
        for step, value in enumerate([0.2, 0.7, 0.5], start=1):
            tuner.report_hyperparameter_tuning_metric(
                hyperparameter_metric_tag="accuracy", metric_value=value, global_step=step
            )
        tuner.report_hyperparameter_tuning_metric(
            hyperparameter_metric_tag="loss", metric_value=0.3, global_step=4
        )
        metrics = [("accuracy", "MAXIMIZE"), ("loss", "MINIMIZE")]
        assert read_measurement(metric_file, metrics, best=False) == {"accuracy": 0.5, "loss": 0.3}
        assert read_measurement(metric_file, metrics, best=True) == {"accuracy": 0.7, "loss": 0.3}
        assert read_measurement(tmp_path / "none", metrics, best=True) == {}

    def test_trial_body_appends_arguments_to_every_pool(self) -> None:
        """Each pool gets --<id>=<value> after its own args, and CLOUD_ML_TRIAL_ID."""
        job = {
            "displayName": "sweep",
            "name": "local/hyperparameterTuningJobs/1",
            "trialJobSpec": {
                "workerPoolSpecs": [
                    {"containerSpec": {"imageUri": "i", "args": ["--a"]}},
                    {},
                    {
                        "containerSpec": {
                            "imageUri": "us-docker.pkg.dev/vertex-ai-restricted/training"
                            "/reductionserver:latest"
                        }
                    },
                ]
            },
        }
        body = trial_body(job, "3", {"lr": 0.01, "batch": 16.0, "opt": "adam"}, Path("/o/3"))
        primary, free, reduction = body["jobSpec"]["workerPoolSpecs"]
        assert primary["containerSpec"]["args"] == ["--a", "--lr=0.01", "--batch=16", "--opt=adam"]
        assert primary["containerSpec"]["env"] == [{"name": "CLOUD_ML_TRIAL_ID", "value": "3"}]
        assert free == {} and "args" not in reduction["containerSpec"]
        assert body["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "/o/3"}
        assert job["trialJobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"] == ["--a"]

    def test_suggestions_respect_scales_and_conditions(self) -> None:
        """Random draws stay in range on a log scale; children appear only under their parent."""
        spec = parse_job(
            "s",
            {
                "image": "i",
                "study": {
                    "metrics": [{"id": "m", "goal": "MAXIMIZE"}],
                    "parameters": {
                        "lr": {"type": "double", "min": 0.001, "max": 0.1, "scale": "log"},
                        "n": {"type": "integer", "min": 1, "max": 3},
                        "opt": {
                            "type": "categorical",
                            "values": ["sgd", "adam"],
                            "conditional": [
                                {
                                    "when": ["adam"],
                                    "parameters": {
                                        "beta": {"type": "discrete", "values": [0.9, 0.99]}
                                    },
                                }
                            ],
                        },
                    },
                    "max_trials": 5,
                },
            },
            LOCAL,
        ).request_body()["studySpec"]
        suggester = Suggester(spec, seed="fixed")
        points = [suggester.suggest() for _ in range(300)]
        assert all(0.001 <= p["lr"] <= 0.1 for p in points)
        assert sum(p["lr"] < 0.01 for p in points) > 100  # half the log range is below 0.01
        assert {p["n"] for p in points} == {1, 2, 3}
        assert all(("beta" in p) == (p["opt"] == "adam") for p in points)
        again = Suggester(spec, seed="fixed")
        assert [again.suggest() for _ in range(5)] == points[:5]
        assert trial_args({"n": 2, "lr": 0.5}) == ["--n=2", "--lr=0.5"]

    def test_hypertune_is_installed_where_trials_run(self) -> None:
        """Trial virtualenvs get cloudml-hypertune as the prebuilt images carry it (and the
        provider's Python has it, to read its metric files in these tests)."""
        import hypertune

        assert os.path.basename(hypertune.__file__) == "__init__.py"
        sklearn = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest"
        for image in (None, sklearn):
            assert HYPERTUNE in (image_requirements(image) or [])
