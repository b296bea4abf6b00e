"""HyperparameterTuningJob: a Vertex AI hyperparameter tuning job as a Pulumi dynamic resource.

A job of the stack config with a ``study:`` block (``vertex_training.stackconfig.study``) becomes
this
resource instead of a TrainingJob. Its lifecycle is TrainingJob's, by inheritance from
``vertex_training.resources.training_job``: check parses the job (``stackconfig.parse_job`` gives a
``TuningJobSpec`` whose request is the REST HyperparameterTuningJob), a change to what runs
replaces the job and lists the changed keys, ``wait``/``adopt`` update in place, create
labels the job with its identity and looks for it before submitting (adoption after an
interrupted ``pulumi up``), read refreshes it, delete cancels then deletes it. The backends
take both kinds of job through the same calls.

Outputs add every trial (``id``, ``state``, ``parameters``, ``final_metric`` — the
study's first metric —, ``metrics``, times, ``infeasible_reason``) and the ``best_trial``
(the SUCCEEDED trial with the best final metric for the goal; None before there is one).
The stack outputs' ``model_directory`` is the best trial's
(``<output_directory>/<trial id>/model``, ``best_model_directory``).
``vertex_training.program.exports`` picks this resource for a tuning job and adds the trials to
the stack outputs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pulumi

from vertex_training.errors import KeyIssue
from vertex_training.keys import job_key
from vertex_training.resources.job_arguments import JOB_ARGUMENT, from_program
from vertex_training.resources.training_job import (
    EXPORTED_OUTPUT_KEYS,
    TrainingJob,
    TrainingJobProvider,
)
from vertex_training.stackconfig.study import is_tuning_job

if TYPE_CHECKING:
    from vertex_training.errors import Issue
    from vertex_training.resources.records import JobRecord

#: The outputs of a HyperparameterTuningJob the program reads (its outputs, besides its
#: inputs: ``state.TUNING_OUTPUT_KEYS``).
TUNING_EXPORTED_KEYS = (*EXPORTED_OUTPUT_KEYS, "trials", "best_trial")


def best_model_directory(output_directory: str, best_trial: Mapping[str, Any] | None) -> str:
    """Where the best trial wrote its model: ``<base>/<trial id>/model`` ("" if unknown)."""
    if not output_directory or not best_trial:
        return ""
    return f"{output_directory.rstrip('/')}/{best_trial['id']}/model"


class HyperparameterTuningJobProvider(TrainingJobProvider):
    """The dynamic provider behind HyperparameterTuningJob: TrainingJob's, plus trials."""

    exported_keys = TUNING_EXPORTED_KEYS
    resource_type = "HyperparameterTuningJob"
    runs_no_study = False
    tuning = True

    def check_job(self, old: JobRecord, job: Mapping[str, Any]) -> tuple[JobRecord, list[Issue]]:
        checked, issues = super().check_job(old, job)
        config = job.get("config")
        if not issues and isinstance(config, Mapping) and not is_tuning_job(config):
            stack = job.get("stack")
            program = isinstance(stack, Mapping) and from_program(stack)
            key = JOB_ARGUMENT if program else job_key(str(job.get("name")))
            message = (
                "a hyperparameter tuning job needs a study: block (metrics, parameters, "
                "max_trials); see docs/tuning.md"
            )
            return checked, [KeyIssue(key, None, message)]
        return checked, issues


class HyperparameterTuningJob(TrainingJob, module="vertex", name="HyperparameterTuningJob"):
    """A hyperparameter tuning job: a job with a ``study:`` block (docs/tuning.md)."""

    job_provider_class = HyperparameterTuningJobProvider

    if TYPE_CHECKING:  # for type checkers only, as TrainingJob's
        trials: pulumi.Output[list[dict[str, Any]]]
        best_trial: pulumi.Output[dict[str, Any]]
