"""Hyperparameter tuning jobs: the trials each one runs, planned when it is created,
and the HyperparameterTuningJob methods of JobService that differ from a CustomJob's
(create and get; list, cancel and delete are ``_jobs``').

A hyperparameter tuning job runs trials, planned when it is created: the parameters come
from ``vertex_training.api.sampling`` (grid enumeration for GRID_SEARCH, seeded random search
otherwise) over the StudySpec it was sent; at most ``parallel_trial_count`` trials run at
once, each for ``trial_s`` seconds, and a trial starts as soon as one ends, until
``max_trial_count`` trials have run (or the grid is exhausted). Each finished trial's
final measurement comes from a deterministic function of its parameters,
``default_trial_metric``: with u_p the position of parameter p's value in its feasible
space (0 to 1, on its scale; see ``vertex_training.api.sampling.unit_position``),

    score = 1 - mean over the trial's parameters of (u_p - 0.7)**2

which a MAXIMIZE metric reports as is and a MINIMIZE metric as ``1 - score``: the best
trial is the one nearest 70% of every range. A test may pass its own ``trial_metric``;
a trial for which it returns None fails (INFEASIBLE). The job SUCCEEDS when its last trial
ends with at least one trial measured; it FAILS once ``max_failed_trial_count`` trials
have failed (with 0, only if no trial succeeded). Cancelling stops the running trials
(STOPPING while the job is CANCELLING, then INFEASIBLE).

It depends on ``_jobs`` (and on ``_clock`` and ``_validation``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.cloud.aiplatform_v1.types import hyperparameter_tuning_job as tuning_job_types
from google.cloud.aiplatform_v1.types import study as study_types
from google.protobuf import json_format, struct_pb2
from google.rpc import code_pb2

from vertex_training.api import states
from vertex_training.api.sampling import Suggester, unit_position
from vertex_training.testing._clock import timestamp
from vertex_training.testing._faults import VertexMessage
from vertex_training.testing._jobs import (
    TUNING,
    JobRecord,
    JobScript,
    JobStore,
    Kind,
    parse_location,
)
from vertex_training.testing._validation import validate_tuning_job

#: How long each trial of a tuning job runs.
DEFAULT_TRIAL_S = 0.1
#: Where the default trial metric peaks, as a position in each parameter's range.
TRIAL_METRIC_OPTIMUM = 0.7
#: Why a trial has no final measurement (Trial.infeasible_reason).
TRIAL_FAILED_REASON = "The trial's CustomJob failed: its replica workerpool0-0 exited with 1."
TRIAL_STOPPED_REASON = "The trial was stopped: the HyperparameterTuningJob ended."

_TrialPb = study_types.Trial.pb()

#: A trial metric: (the trial's parameters, metric ID, its goal) -> value, or None when
#: the trial fails.
TrialMetric = Callable[[dict[str, Any], str, str], "float | None"]


@dataclass
class _TrialPlan:
    """One trial of a tuning job: times are offsets from when the job started RUNNING."""

    id: str
    parameters: dict[str, Any]
    start: float
    end: float
    #: The final measurement by metric ID; None for a trial that fails or is stopped.
    metrics: dict[str, float] | None
    stopped: bool = False


def default_trial_metric(
    study_spec: dict[str, Any],
) -> Callable[[dict[str, Any], str, str], float | None]:
    """The fake's deterministic trial metric for a study (see the module docstring)."""
    specs = _parameter_specs(study_spec.get("parameters") or [])

    def metric(parameters: dict[str, Any], metric_id: str, goal: str) -> float | None:
        distances = [
            (unit_position(specs[pid], value) - TRIAL_METRIC_OPTIMUM) ** 2
            for pid, value in parameters.items()
            if pid in specs
        ]
        score = 1 - sum(distances) / len(distances) if distances else 1.0
        return 1 - score if goal == "MINIMIZE" else score

    return metric


def _parameter_specs(specs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every ParameterSpec (conditional ones too) by parameter ID."""
    found: dict[str, dict[str, Any]] = {}
    for spec in specs:
        found.setdefault(spec["parameterId"], spec)
        children = [c["parameterSpec"] for c in spec.get("conditionalParameterSpecs") or []]
        for pid, child in _parameter_specs(children).items():
            found.setdefault(pid, child)
    return found


def _plan_trials(
    job: VertexMessage, seed: int, trial_s: float, trial_metric: TrialMetric | None
) -> tuple[list[_TrialPlan], float, bool]:
    """Plan a tuning job's trials: (trials, how long they run in all, whether it fails).

    hyperparameter_tuning_job.proto: at most parallel_trial_count at once, max_trial_count
    in all; the job fails once max_failed_trial_count trials have failed ("the number of
    failed Trials that need to be seen before failing"); 0 lets "Vertex AI decide": here,
    the job fails only when no trial succeeds.
    """
    study_spec = json_format.MessageToDict(job.study_spec)
    metric = trial_metric or default_trial_metric(study_spec)
    metrics = [(m["metricId"], m.get("goal", "MAXIMIZE")) for m in study_spec.get("metrics", [])]
    suggester = Suggester(study_spec, seed)
    parallel = max(job.parallel_trial_count, 1)
    limit = job.max_failed_trial_count or None
    planned: list[_TrialPlan] = []
    running: list[_TrialPlan] = []
    now, failed = 0.0, 0
    while True:
        while len(running) < parallel and len(planned) < job.max_trial_count:
            point = suggester.suggest()
            if point is None:
                break
            values = {mid: metric(dict(point), mid, goal) for mid, goal in metrics}
            known = {mid: value for mid, value in values.items() if value is not None}
            measured = known if len(known) == len(values) else None
            trial = _TrialPlan(str(len(planned) + 1), dict(point), now, now + trial_s, measured)
            planned.append(trial)
            running.append(trial)
        if not running:
            break
        now = min(t.end for t in running)
        finished = [t for t in running if t.end <= now]
        running = [t for t in running if t.end > now]
        failed += sum(1 for t in finished if t.metrics is None)
        if limit is not None and failed >= limit:
            for trial in running:
                trial.end, trial.stopped = now, True
            return planned, now, True
    succeeded = any(t.metrics is not None for t in planned)
    return planned, now, not succeeded


@dataclass
class TuningJobRecord(JobRecord):
    """A tuning job as created: a job record with the trials planned for it."""

    kind: Kind = TUNING
    trials: list[_TrialPlan] = field(default_factory=list)

    def render_kind_fields(self, job: VertexMessage, state: str, now: float) -> None:
        """Set the trials that have started by ``now`` on ``job``."""
        job.trials.extend(_render_trials(self, now))


def _render_trials(record: TuningJobRecord, now: float) -> list[VertexMessage]:
    """The trials that have started by ``now`` (study.proto Trial): ACTIVE while running,
    SUCCEEDED with a final measurement, or INFEASIBLE when failed or stopped; STOPPING
    while the job is being cancelled."""
    base = record.running_at
    cancel_at = record.cancel_at if record.cancel_at is not None else float("inf")
    cancelled_at = record.cancelled_at if record.cancelled_at is not None else float("inf")
    rendered = []
    for plan in record.trials:
        start = base + plan.start
        if start > now or start >= cancel_at:
            continue
        trial = _TrialPb(id=plan.id)
        trial.start_time.CopyFrom(timestamp(start))
        for pid, value in plan.parameters.items():
            parameter = trial.parameters.add(parameter_id=pid)
            if isinstance(value, str):
                parameter.value.CopyFrom(struct_pb2.Value(string_value=value))
            else:
                parameter.value.CopyFrom(struct_pb2.Value(number_value=float(value)))
        end = base + plan.end
        if end <= now and end <= cancel_at:
            trial.end_time.CopyFrom(timestamp(end))
            if plan.metrics is not None and not plan.stopped:
                trial.state = _TrialPb.State.SUCCEEDED
                measurement = trial.final_measurement
                measurement.step_count = 1
                for metric_id, value in plan.metrics.items():
                    measurement.metrics.add(metric_id=metric_id, value=value)
            else:
                trial.state = _TrialPb.State.INFEASIBLE
                trial.infeasible_reason = (
                    TRIAL_STOPPED_REASON if plan.stopped else TRIAL_FAILED_REASON
                )
        elif cancel_at <= now < cancelled_at:
            trial.state = _TrialPb.State.STOPPING
        elif cancelled_at <= now:
            trial.state = _TrialPb.State.INFEASIBLE
            trial.end_time.CopyFrom(timestamp(cancelled_at))
            trial.infeasible_reason = TRIAL_STOPPED_REASON
        else:
            trial.state = _TrialPb.State.ACTIVE
        rendered.append(trial)
    return rendered


class TuningJobs:
    """The HyperparameterTuningJob methods of JobService that differ from a CustomJob's,
    on the jobs of ``store``.

    Not thread-safe: the fake calls it with its lock held.
    """

    def __init__(
        self, store: JobStore, *, trial_s: float, trial_metric: TrialMetric | None
    ) -> None:
        self._store = store
        self._trial_s = trial_s
        self._trial_metric = trial_metric

    def create_tuning_job(self, request: VertexMessage) -> VertexMessage:
        # job_service.proto CreateHyperparameterTuningJob: returns the job itself, as
        # CreateCustomJob does; its trials are planned here and appear as time passes.
        location = parse_location(request.parent)
        validate_tuning_job(request.hyperparameter_tuning_job)
        now = self._store.clock()
        number = self._store.take_number()
        job = TUNING.message()
        job.CopyFrom(request.hyperparameter_tuning_job)
        # hyperparameter_tuning_job.proto: name, trials, state, times and error are
        # OUTPUT_ONLY.
        for output_only in ("trials", "state", "start_time", "end_time", "update_time", "error"):
            job.ClearField(output_only)
        job.name = TUNING.path(location["project"], location["location"], str(number))
        job.create_time.CopyFrom(timestamp(now))
        scripted = self._store.script_for(tuning_job_types.HyperparameterTuningJob.wrap(job))
        trials, run_s, fails = _plan_trials(job, number, self._trial_s, self._trial_metric)
        failed = sum(1 for t in trials if t.metrics is None and not t.stopped)
        script = JobScript(
            match=scripted.match,
            queued_s=scripted.queued_s,
            pending_s=scripted.pending_s,
            run_s=run_s,
            outcome=states.FAILED if fails else states.SUCCEEDED,
            error_code=code_pb2.FAILED_PRECONDITION,
            error_message=f"{failed} of the job's trials failed.",
        )
        record = TuningJobRecord(
            job=job, number=number, created_at=now, script=script, trials=trials
        )
        self._store.jobs[job.name] = record
        return self._store.render(record, now)

    def get_tuning_job(self, request: VertexMessage) -> VertexMessage:
        # REST projects.locations.hyperparameterTuningJobs.get.
        return self._store.render(self._store.record(request.name, TUNING), self._store.clock())
