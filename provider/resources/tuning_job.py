"""HyperparameterTuningJob: a Vertex AI hyperparameter tuning job as a Pulumi dynamic resource.

A job of the stack config with a ``study:`` block (``provider.stackconfig.study``) becomes this
resource instead of a TrainingJob. Its lifecycle is TrainingJob's, by inheritance from
``provider.resources.training_job``: check parses the job (``spec.parse_job`` gives a
``TuningJobSpec`` whose request is the REST HyperparameterTuningJob), a change to what runs
replaces the job and lists the changed keys, ``wait``/``adopt`` update in place, create
labels the job with its identity and looks for it before submitting (adoption after an
interrupted ``pulumi up``), read refreshes it, delete cancels then deletes it. The backends
take both kinds of job through the same calls.

Outputs add every trial (``id``, ``state``, ``parameters``, ``final_metric`` — the
study's first metric —, ``metrics``, times, ``infeasible_reason``) and the ``best_trial``
(the SUCCEEDED trial with the best final metric for the goal; None before there is one).
``model_directory`` is the best trial's (``<output_directory>/<trial id>/model``).

``job_resource`` picks the resource kind for a job of the stack config, and
``tuning_exports`` the extra stack outputs of a tuning job, so that ``__main__.py`` only
wires.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.dynamic import CheckFailure, CheckResult

from provider.api import states
from provider.resources.training_job import OUTPUT_KEYS, TrainingJob, TrainingJobProvider
from provider.resources.waiter import latest_state
from provider.stackconfig.study import is_tuning_job

#: Outputs every HyperparameterTuningJob has, besides its inputs.
TUNING_OUTPUT_KEYS = (*OUTPUT_KEYS, "trials", "best_trial")


def best_model_directory(output_directory: str, best_trial: Mapping[str, Any] | None) -> str:
    """Where the best trial wrote its model: ``<base>/<trial id>/model`` ("" if unknown)."""
    if not output_directory or not best_trial:
        return ""
    return f"{output_directory.rstrip('/')}/{best_trial['id']}/model"


class HyperparameterTuningJobProvider(TrainingJobProvider):
    """The dynamic provider behind HyperparameterTuningJob: TrainingJob's, plus trials."""

    output_keys = TUNING_OUTPUT_KEYS

    def check(self, olds: Any, news: Any) -> CheckResult:
        result = super().check(olds, news)
        config = news.get("config")
        if not result.failures and isinstance(config, Mapping) and not is_tuning_job(config):
            failure = CheckFailure(
                "config",
                f"vertex-training:jobs.{news.get('name')}: a hyperparameter tuning job needs a "
                "study: block (metrics, parameters, max_trials); see docs/config-shape.md",
            )
            return CheckResult(result.inputs, [failure])
        return result

    def outputs(self, status: Any, backend: Any, request: Mapping[str, Any]) -> dict[str, Any]:
        outs = {**super().outputs(status, backend, request), **status.trial_outputs()}
        outs["model_directory"] = best_model_directory(outs["output_directory"], outs["best_trial"])
        return outs


class HyperparameterTuningJob(TrainingJob, module="vertex", name="HyperparameterTuningJob"):
    """A hyperparameter tuning job declared in the stack config (a job with ``study:``)."""

    job_provider_class = HyperparameterTuningJobProvider

    trials: pulumi.Output[list[dict[str, Any]]]
    best_trial: pulumi.Output[dict[str, Any]]


def job_resource(name: str, config: Mapping[str, Any], *args: Any, **kwargs: Any) -> TrainingJob:
    """The resource for one job of the stack config: a HyperparameterTuningJob for a job
    with a ``study:`` block (or a legacy ``training_input.hyperparameters``), else a
    TrainingJob. Takes TrainingJob's arguments."""
    kind = HyperparameterTuningJob if is_tuning_job(config) else TrainingJob
    return kind(name, config, *args, **kwargs)


def latest_trials(
    trials: list[dict[str, Any]] | None,
    best: dict[str, Any] | None,
    job_state: str,
    waited: Mapping[str, Any] | None,
    name: str,
) -> dict[str, Any]:
    """The newer of the trials the job's resource recorded and those the waiter last saw
    (as ``waiter.latest_state`` picks the state): ``trials`` and ``best_trial``."""
    seen = (waited or {}).get(name)
    if seen and job_state not in states.TERMINAL_STATES:
        # Pulumi drops null values from maps in state: a missing best_trial is None.
        return {"trials": seen.get("trials") or [], "best_trial": seen.get("best_trial")}
    return {"trials": trials or [], "best_trial": best}


def job_exports(name: str, job: TrainingJob, waiter: Any) -> dict[str, Any]:
    """The stack outputs of one job: what its resource and the waiter last saw of it."""
    return {
        "resource_name": job.resource_name,
        "job_id": job.job_id,
        "state": pulumi.Output.all(job.state, waiter.states).apply(
            lambda pair: latest_state(pair[0], pair[1], name)
        ),
        "error": job.error,
        "console_url": job.console_url,
        "logs_url": job.logs_url,
        "output_directory": job.output_directory,
        "model_directory": job.model_directory,
        **tuning_exports(name, job, waiter),
    }


def tuning_exports(name: str, job: TrainingJob, waiter: Any) -> dict[str, Any]:
    """The stack outputs a tuning job adds to a training job's ({} for a training job):
    ``trials``, ``best_trial``, and the best trial's ``model_directory``."""
    if not isinstance(job, HyperparameterTuningJob):
        return {}
    latest = pulumi.Output.all(job.trials, job.best_trial, job.state, waiter.trials).apply(
        lambda a: latest_trials(a[0], a[1], a[2], a[3], name)
    )
    return {
        "trials": latest.apply(lambda t: t["trials"]),
        "best_trial": latest.apply(lambda t: t["best_trial"]),
        "model_directory": pulumi.Output.all(job.output_directory, latest).apply(
            lambda a: best_model_directory(a[0], a[1]["best_trial"])
        ),
    }
