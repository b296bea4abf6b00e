"""The supervisor of one local hyperparameter tuning job: a real study on this machine.

``python -m vertex_training.backends.local <job dir>`` runs ``StudySupervisor`` for a
job whose ``job.json`` is a HyperparameterTuningJob. Like Vertex AI it:

- asks ``vertex_training.api.sampling.Suggester`` for each trial's parameters: grid enumeration for
  GRID_SEARCH, random search for RANDOM_SEARCH and for the default algorithm (Vertex's
  default is a Bayesian optimization that is not published; random search stands in);
- runs up to ``parallelTrialCount`` trials at once, ``maxTrialCount`` in all (fewer when a
  grid runs out), each a local custom job (``_runner.Supervisor``, in a thread of
  this process) with the trial job spec, ``--<parameter id>=<value>`` appended to each
  pool's args, ``CLOUD_ML_TRIAL_ID`` set, and its own base output directory
  ``<job's base output directory>/<trial id>`` (so AIP_MODEL_DIR is
  ``<base>/<trial id>/model/``);
- reads each trial's final measurement the way cloudml-hypertune writes it: the
  ``hypertune`` package appends one JSON line per ``report_hyperparameter_tuning_metric``
  call to the file named by ``CLOUD_ML_HP_METRIC_FILE`` (``{"<metric tag>": "<value>",
  "global_step": ..., "timestamp": ..., "trial": ...}``, at most 100 lines kept); the
  local runner points that variable at ``trials/<id>/hypertune/workerpool<P>-<I>.metrics``
  and the primary replica's file is read. ``measurementSelectionType`` BEST_MEASUREMENT
  picks each metric's best reported value for its goal, otherwise the last one
  (study.proto: unspecified "will be treated as LAST_MEASUREMENT");
- marks a trial whose job failed, or that reported no value for a metric of the study,
  INFEASIBLE (study.proto: "done but missing the final_measurement"); the job fails once
  ``maxFailedTrialCount`` trials have failed, stopping the others; with 0 ("Vertex
  decides") every trial runs and the job fails only if none succeeded;
- on cancel, stops every running trial's process tree, then records CANCELLED.

Early stopping (``decayCurveStoppingSpec`` and the others) is not applied: every trial
runs to its end. The study's log (``logs/supervisor.log``) names each trial, its
parameters, its result and its log.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertex_training.api import states
from vertex_training.api.sampling import Suggester, format_value, trial_args
from vertex_training.backends.base import (
    MINIMIZE,
    TRIAL_ACTIVE,
    TRIAL_INFEASIBLE,
    TRIAL_SUCCEEDED,
)
from vertex_training.backends.local._record import (
    CANCEL_GRACE_S,
    JobRecord,
    now_rfc3339,
    replica_name,
    write_json_atomic,
)
from vertex_training.backends.local._registry import finish
from vertex_training.backends.local._runner import POLL_INTERVAL_S, supervise

#: The environment variable Vertex sets to a trial's ID (cloudml-hypertune reads it).
TRIAL_ID_ENV = "CLOUD_ML_TRIAL_ID"
BEST_MEASUREMENT = "BEST_MEASUREMENT"
#: How long a cancelled study waits for its trials' supervisors to stop their replicas.
TRIAL_STOP_WAIT_S = CANCEL_GRACE_S + 5.0
#: The reduction server runs Google's image: it gets no hyperparameter arguments.
_REDUCTION_SERVER_IMAGE = "/training/reductionserver"


class _Cancelled(Exception):
    """A cancel was requested."""


def trial_body(
    job: dict[str, Any], trial_id: str, parameters: dict[str, Any], output_dir: Path
) -> dict[str, Any]:
    """The CustomJob body a trial runs: the trial job spec with the parameters as args."""
    spec = copy.deepcopy(job["trialJobSpec"])
    spec["baseOutputDirectory"] = {"outputUriPrefix": str(output_dir)}
    args = trial_args(parameters)
    for pool in spec.get("workerPoolSpecs") or []:
        if not pool:
            continue
        run = pool.get("pythonPackageSpec") or pool.get("containerSpec") or {}
        if _REDUCTION_SERVER_IMAGE in run.get("imageUri", ""):
            continue
        run["args"] = [*run.get("args", []), *args]
        run["env"] = [*run.get("env", []), {"name": TRIAL_ID_ENV, "value": trial_id}]
    return {
        "displayName": f"{job.get('displayName', '')}-trial-{trial_id}",
        "jobSpec": spec,
        "name": f"{job.get('name', '')}/trials/{trial_id}",
    }


def read_measurement(
    metric_file: Path, metrics: list[tuple[str, str]], best: bool
) -> dict[str, float]:
    """The final value of each metric in a cloudml-hypertune metric file ({} if none).

    ``metrics`` are (metric ID, goal) pairs; ``best`` picks each metric's best reported
    value for its goal, else its last one.
    """
    try:
        lines = metric_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    reported: dict[str, list[float]] = {}
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        for metric_id, _ in metrics:
            if isinstance(entry, dict) and metric_id in entry:
                try:
                    reported.setdefault(metric_id, []).append(float(entry[metric_id]))
                except (TypeError, ValueError):
                    continue
    final = {}
    for metric_id, goal in metrics:
        values = reported.get(metric_id)
        if not values:
            continue
        if best:
            final[metric_id] = min(values) if goal == MINIMIZE else max(values)
        else:
            final[metric_id] = values[-1]
    return final


@dataclass
class _RunningTrial:
    record: JobRecord
    thread: threading.Thread
    data: dict[str, Any]


class StudySupervisor:
    """Runs one tuning job's study to its end and records its trials and state."""

    def __init__(self, record: JobRecord) -> None:
        self.record = record
        self.job = record.read_job()
        study = self.job["studySpec"]
        self.metrics = [(m["metricId"], m.get("goal", "MAXIMIZE")) for m in study["metrics"]]
        self.best = study.get("measurementSelectionType") == BEST_MEASUREMENT
        self.max_trials = int(self.job.get("maxTrialCount", 1))
        self.parallel = max(int(self.job.get("parallelTrialCount", 1)), 1)
        self.max_failed = int(self.job.get("maxFailedTrialCount", 0))
        self.suggester = Suggester(study, seed=record.job_id)
        named = (self.job["trialJobSpec"].get("baseOutputDirectory") or {}).get("outputUriPrefix")
        self.output_dir = Path(named or record.default_output_dir)
        self.trials: list[dict[str, Any]] = []
        self.running: list[_RunningTrial] = []
        self.failed = 0
        self.exhausted = False

    def run(self) -> None:
        self.record.update_state(states.PENDING)
        if not self.suggester.grid and "algorithm" not in self.job["studySpec"]:
            self._log("the default algorithm runs as random search on the local backend")
        try:
            state, error = self._study()
        except _Cancelled:
            self._stop_trials("the tuning job was cancelled")
            state, error = states.CANCELLED, "cancelled"
        except BaseException:
            self._stop_trials("the study's supervisor failed")
            raise
        finish(self.record, state, error)

    # -- the study ---------------------------------------------------------------------

    def _study(self) -> tuple[str, str]:
        """Run trials until the study ends; return the job's final state and error."""
        limit = self.max_failed or None
        while True:
            self._check_cancel()
            self._collect_finished()
            if limit is not None and self.failed >= limit:
                self._stop_trials(f"{self.failed} trials failed: the tuning job stopped")
                return states.FAILED, self._failure(
                    f"{self.failed} trials failed (maxFailedTrialCount {self.max_failed})"
                )
            self._start_trials()
            if not self.running:
                break
            time.sleep(POLL_INTERVAL_S)
        if not any(t["state"] == TRIAL_SUCCEEDED for t in self.trials):
            return states.FAILED, self._failure(f"none of the {len(self.trials)} trials succeeded")
        return states.SUCCEEDED, ""

    def _start_trials(self) -> None:
        while (
            len(self.running) < self.parallel
            and len(self.trials) < self.max_trials
            and not self.exhausted
        ):
            parameters = self.suggester.suggest()
            if parameters is None:
                self.exhausted = True
                self._log(f"the grid is exhausted after {len(self.trials)} trials")
                return
            self._start_trial(str(len(self.trials) + 1), parameters)

    def _start_trial(self, trial_id: str, parameters: dict[str, Any]) -> None:
        trial = self.record.trial_record(trial_id)
        trial.path.mkdir(parents=True)
        trial.logs_dir.mkdir()
        output_dir = self.output_dir / trial_id
        write_json_atomic(trial.job_file, trial_body(self.job, trial_id, parameters, output_dir))
        write_json_atomic(
            trial.state_file,
            {
                "state": states.QUEUED,
                "error": "",
                "createTime": now_rfc3339(),
                "startTime": "",
                "endTime": "",
            },
        )
        data = {
            "id": trial_id,
            "state": TRIAL_ACTIVE,
            "parameters": parameters,
            "metrics": {},
            "startTime": now_rfc3339(),
            "endTime": "",
            "infeasibleReason": "",
            "outputDirectory": str(output_dir),
        }
        thread = threading.Thread(
            target=supervise, args=(trial,), name=f"trial-{trial_id}", daemon=True
        )
        self.trials.append(data)
        self.running.append(_RunningTrial(trial, thread, data))
        self._save()
        thread.start()
        self.record.update_state(states.RUNNING)
        shown = " ".join(f"{k}={format_value(v)}" for k, v in parameters.items())
        self._log(f"trial {trial_id} started: {shown}; log {trial.log_path(replica_name(0, 0))}")

    def _collect_finished(self) -> None:
        """Record the trials whose jobs have ended: their measurement, or why none."""
        for running in [r for r in self.running if not r.thread.is_alive()]:
            self.running.remove(running)
            state = running.record.read_state()
            data = running.data
            data["endTime"] = state.get("endTime") or now_rfc3339()
            metrics = read_measurement(
                running.record.hypertune_dir / f"{replica_name(0, 0)}.metrics",
                self.metrics,
                self.best,
            )
            missing = [m for m, _ in self.metrics if m not in metrics]
            if state["state"] == states.SUCCEEDED and not missing:
                data.update(state=TRIAL_SUCCEEDED, metrics=metrics)
            else:
                if state["state"] != states.SUCCEEDED:
                    reason = f"the trial's job ended {state['state']}: {state.get('error', '')}"
                else:
                    reason = (
                        f"the trial reported no value for {', '.join(missing)}: report it with "
                        "cloudml-hypertune, hypertune.HyperTune()."
                        "report_hyperparameter_tuning_metric(hyperparameter_metric_tag="
                        f"{missing[0]!r}, metric_value=...)"
                    )
                data.update(state=TRIAL_INFEASIBLE, metrics=metrics, infeasibleReason=reason)
                self.failed += 1
            outcome = (
                data["metrics"]
                if data["state"] == TRIAL_SUCCEEDED
                else data["infeasibleReason"].splitlines()[0]
            )
            self._log(f"trial {data['id']} {data['state']}: {outcome}")
            self._save()

    def _stop_trials(self, reason: str) -> None:
        """Cancel every running trial, wait for its processes to stop, record why."""
        for running in self.running:
            running.record.request_cancel()
        deadline = time.monotonic() + TRIAL_STOP_WAIT_S
        for running in self.running:
            running.thread.join(max(deadline - time.monotonic(), 0))
            if running.thread.is_alive():
                running.record.stop_processes()
            running.data.update(
                state=TRIAL_INFEASIBLE, endTime=now_rfc3339(), infeasibleReason=reason
            )
        self.running = []
        self._save()

    # -- helpers -----------------------------------------------------------------------

    def _check_cancel(self) -> None:
        if self.record.cancel_requested():
            raise _Cancelled

    def _failure(self, summary: str) -> str:
        reasons = [t["infeasibleReason"] for t in self.trials if t["infeasibleReason"]]
        last = f"; the last failure: {reasons[-1]}" if reasons else ""
        return f"The tuning job failed: {summary}{last}"

    def _save(self) -> None:
        write_json_atomic(self.record.trials_file, self.trials)

    @staticmethod
    def _log(message: str) -> None:
        print(f"[study] {message}", flush=True)
