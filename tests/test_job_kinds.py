"""Which resource runs which kind of job, one rule for both hosts: a TrainingJob runs no
study (a Python program's, a stack config's; tests/test_plugin_provider.py checks the
plugin's, the same refusal on its property path), and a HyperparameterTuningJob needs
one. Each refusal names the key as its program wrote it."""

from __future__ import annotations

from typing import Any

from tests.clients import configured
from tests.test_training_job import IMAGE, registered
from vertex_training.resources.job_arguments import PROGRAM
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.resources.tuning_job import HyperparameterTuningJobProvider

STUDY = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1}},
    "max_trials": 4,
}


def of_program(props: dict[str, Any]) -> dict[str, Any]:
    """``props`` as a Python program's job registers them (its settings say so)."""
    job = props["job"]
    return {"job": {**job, "stack": {**job["stack"], "config_from": PROGRAM}}}


def reasons(provider: Any, props: dict[str, Any]) -> list[str]:
    return [failure.reason for failure in configured(provider).check({}, props).failures]


class TestTheDynamicProviders:
    def test_a_training_job_with_a_study_is_refused_naming_its_stack_config_key(self) -> None:
        props = registered(None, {"image": IMAGE, "study": STUDY})
        assert reasons(TrainingJobProvider(), props) == [
            "vertex-training:jobs.train.study: a TrainingJob runs no study; declare this job "
            "as a HyperparameterTuningJob (docs/tuning.md), or remove study"
        ]

    def test_a_python_programs_training_job_with_a_study_is_refused_by_argument(self) -> None:
        props = of_program(registered(None, {"image": IMAGE, "study": STUDY}))
        [reason] = reasons(TrainingJobProvider(), props)
        assert reason.startswith("job.study: a TrainingJob runs no study")

    def test_the_same_job_as_a_tuning_job_passes(self) -> None:
        props = registered(None, {"image": IMAGE, "study": STUDY})
        assert reasons(HyperparameterTuningJobProvider(), props) == []

    def test_a_tuning_job_without_a_study_is_refused(self) -> None:
        props = registered(None, {"image": IMAGE})
        [reason] = reasons(HyperparameterTuningJobProvider(), props)
        assert reason.startswith("vertex-training:jobs.train: a hyperparameter tuning job needs")
