"""Unit tests of vertex_training.stackconfig.study: the `study:` block, its rules, the REST tuning
job body."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from vertex_training.__main__ import main as provider_main
from vertex_training.errors import Issue, SpecError
from vertex_training.stackconfig import JobSpec, StackSettings, parse_job
from vertex_training.stackconfig.study import TuningJobSpec, is_tuning_job

IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-7:latest"
PREFIX = "vertex-training:jobs.sweep"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
LOCAL_STACK = StackSettings(stack="local", backend="local")
KMS = "projects/my-project/locations/us-central1/keyRings/r/cryptoKeys/k"

#: The example of docs/config-shape.md, "Hyperparameter tuning jobs".
DOC_STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {
        "learning-rate": {"type": "double", "min": 0.001, "max": 1.0, "scale": "log"},
        "batch-size": {"type": "discrete", "values": [16, 32, 64]},
        "optimizer": {
            "type": "categorical",
            "values": ["sgd", "adam"],
            "conditional": [
                {
                    "when": ["adam"],
                    "parameters": {"beta1": {"type": "double", "min": 0.8, "max": 0.99}},
                }
            ],
        },
        "epochs": {"type": "integer", "min": 2, "max": 10},
    },
    "algorithm": "default",
    "measurement_selection": "best",
    "early_stopping": {"decay_curve": {"use_elapsed_duration": False}},
    "max_trials": 12,
    "parallel_trials": 3,
    "max_failed_trials": 0,
}

SMALL_STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"lr": {"type": "double", "min": 0.01, "max": 0.1}},
    "max_trials": 4,
}


def job(study: Any = None, **keys: Any) -> dict[str, Any]:
    """A container tuning job with ``study`` (default SMALL_STUDY) and ``keys``."""
    return {"image": IMAGE, "study": SMALL_STUDY if study is None else study, **keys}


def with_study(**changes: Any) -> dict[str, Any]:
    """SMALL_STUDY with keys replaced (a None value removes the key)."""
    study = {**SMALL_STUDY, **changes}
    return job({k: v for k, v in study.items() if v is not None})


def with_parameters(**parameters: Any) -> dict[str, Any]:
    return with_study(parameters=parameters)


def issues_of(raw: dict[str, Any], stack: StackSettings = STACK) -> list[Issue]:
    with pytest.raises(SpecError) as caught:
        parse_job("sweep", raw, stack)
    return caught.value.issues


def body_of(raw: dict[str, Any], stack: StackSettings = STACK) -> dict[str, Any]:
    return parse_job("sweep", raw, stack).request_body()


# One row per rule: (job config, issue key after the job prefix, message fragment).
BAD_STUDIES = [
    pytest.param(job("x"), ".study", "must be a mapping", id="not-a-mapping"),
    pytest.param(
        with_study(metrcs=[]), ".study.metrcs", "did you mean 'metrics'", id="typo-study-key"
    ),
    pytest.param(with_study(metrics=None), ".study.metrics", "is required", id="no-metrics-key"),
    pytest.param(
        with_study(metrics=[]), ".study.metrics", "at least one metric", id="empty-metrics"
    ),
    pytest.param(
        with_study(metrics=[{"id": "acc", "goal": "maximize"}]),
        ".study.metrics[0].goal",
        "Did you mean MAXIMIZE",
        id="goal-case",
    ),
    pytest.param(
        with_study(metrics=[{"id": "acc"}]),
        ".study.metrics[0].goal",
        "is required",
        id="goal-missing",
    ),
    pytest.param(
        with_study(metrics=[{"id": "val acc", "goal": "MAXIMIZE"}]),
        ".study.metrics[0].id",
        "no whitespace",
        id="metric-id-space",
    ),
    pytest.param(
        with_study(metrics=[{"id": "a", "goal": "MAXIMIZE"}, {"id": "a", "goal": "MINIMIZE"}]),
        ".study.metrics[1].id",
        "appears once",
        id="metric-id-duplicate",
    ),
    pytest.param(
        with_study(parameters={}), ".study.parameters", "at least one parameter", id="no-parameters"
    ),
    pytest.param(
        with_parameters(lr={"type": "float", "min": 0, "max": 1}),
        ".study.parameters.lr.type",
        "double, integer, categorical or discrete",
        id="unknown-type",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 0.1, "mx": 1}),
        ".study.parameters.lr.mx",
        "did you mean 'max'",
        id="typo-parameter-key",
    ),
    pytest.param(
        with_parameters(**{"learning rate": {"type": "double", "min": 0, "max": 1}}),
        ".study.parameters.learning rate",
        "without whitespace",
        id="parameter-id-space",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 0.1}),
        ".study.parameters.lr.max",
        "needs min and max",
        id="double-no-max",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 1, "max": 0.1}),
        ".study.parameters.lr.max",
        "greater than min",
        id="min-above-max",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 1, "max": 1}),
        ".study.parameters.lr.max",
        "greater than min",
        id="min-equals-max",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": "small", "max": 1}),
        ".study.parameters.lr.min",
        "must be a number",
        id="min-not-a-number",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": True, "max": 1}),
        ".study.parameters.lr.min",
        "not true or false",
        id="min-boolean",
    ),
    pytest.param(
        with_parameters(n={"type": "integer", "min": 1.5, "max": 4}),
        ".study.parameters.n.min",
        "whole numbers",
        id="integer-fraction",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 0, "max": 1, "values": [1]}),
        ".study.parameters.lr.values",
        "write type: discrete",
        id="double-with-values",
    ),
    pytest.param(
        with_parameters(opt={"type": "categorical"}),
        ".study.parameters.opt.values",
        "lists the values",
        id="categorical-no-values",
    ),
    pytest.param(
        with_parameters(opt={"type": "categorical", "values": ["a", "b"], "min": 1}),
        ".study.parameters.opt.min",
        "apply to double and integer",
        id="categorical-with-min",
    ),
    pytest.param(
        with_parameters(opt={"type": "categorical", "values": []}),
        ".study.parameters.opt.values",
        "at least one value",
        id="empty-values",
    ),
    pytest.param(
        with_parameters(opt={"type": "categorical", "values": ["a", "a"]}),
        ".study.parameters.opt.values[1]",
        "appears once",
        id="duplicate-category",
    ),
    pytest.param(
        with_parameters(opt={"type": "categorical", "values": ["a", "b"], "scale": "log"}),
        ".study.parameters.opt.scale",
        "remove it",
        id="scale-on-categorical",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 0, "max": 1, "scale": "logarithmic"}),
        ".study.parameters.lr.scale",
        "linear, log or reverse_log",
        id="unknown-scale",
    ),
    pytest.param(
        with_parameters(lr={"type": "double", "min": 0, "max": 1, "scale": "log"}),
        ".study.parameters.lr.min",
        "above zero",
        id="log-scale-from-zero",
    ),
    pytest.param(
        with_parameters(n={"type": "integer", "min": -2, "max": 4, "scale": "reverse_log"}),
        ".study.parameters.n.min",
        "above zero",
        id="reverse-log-negative",
    ),
    pytest.param(
        with_parameters(b={"type": "discrete", "values": [0, 16], "scale": "log"}),
        ".study.parameters.b.values",
        "above zero",
        id="log-discrete-zero",
    ),
    pytest.param(
        with_parameters(b={"type": "discrete", "values": [64, 16, 32]}),
        ".study.parameters.b.values",
        "values: [16, 32, 64]",
        id="discrete-unsorted",
    ),
    pytest.param(
        with_parameters(b={"type": "discrete", "values": [16, 16]}),
        ".study.parameters.b.values",
        "each once",
        id="discrete-repeated",
    ),
    pytest.param(
        with_parameters(b={"type": "discrete", "values": [1, "two"]}),
        ".study.parameters.b.values[1]",
        "write type: categorical",
        id="discrete-text-value",
    ),
    pytest.param(
        with_parameters(b={"type": "discrete", "values": list(range(1001))}),
        ".study.parameters.b.values",
        "at most 1000",
        id="discrete-too-many",
    ),
    pytest.param(
        with_parameters(
            lr={
                "type": "double",
                "min": 0.1,
                "max": 1,
                "conditional": [
                    {"when": [0.5], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                ],
            }
        ),
        ".study.parameters.lr.conditional",
        "hang off categorical",
        id="conditional-on-double",
    ),
    pytest.param(
        with_parameters(
            opt={
                "type": "categorical",
                "values": ["sgd", "adam"],
                "conditional": [
                    {"when": ["adma"], "parameters": {"b": {"type": "double", "min": 0, "max": 1}}}
                ],
            }
        ),
        ".study.parameters.opt.conditional[0].when[0]",
        "Did you mean adam",
        id="conditional-unknown-category",
    ),
    pytest.param(
        with_parameters(
            n={
                "type": "integer",
                "min": 1,
                "max": 4,
                "conditional": [
                    {"when": [5], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                ],
            }
        ),
        ".study.parameters.n.conditional[0].when[0]",
        "from 1 to 4",
        id="conditional-int-out-of-range",
    ),
    pytest.param(
        with_parameters(
            n={
                "type": "integer",
                "min": 1,
                "max": 4,
                "conditional": [
                    {"when": ["two"], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                ],
            }
        ),
        ".study.parameters.n.conditional[0].when[0]",
        "whole numbers",
        id="conditional-int-text",
    ),
    pytest.param(
        with_parameters(
            b={
                "type": "discrete",
                "values": [16, 32],
                "conditional": [
                    {"when": [24], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                ],
            }
        ),
        ".study.parameters.b.conditional[0].when[0]",
        "16 or 32",
        id="conditional-discrete-missing",
    ),
    pytest.param(
        with_parameters(
            opt={
                "type": "categorical",
                "values": ["a", "b"],
                "conditional": [{"when": ["a"], "parameters": {}}],
            }
        ),
        ".study.parameters.opt.conditional[0].parameters",
        "list the parameters",
        id="conditional-empty",
    ),
    pytest.param(
        with_parameters(
            opt={
                "type": "categorical",
                "values": ["a", "b"],
                "conditional": [{"parameters": {"x": {"type": "double", "min": 0, "max": 1}}}],
            }
        ),
        ".study.parameters.opt.conditional[0].when",
        "is required",
        id="conditional-no-when",
    ),
    pytest.param(
        with_parameters(
            opt={
                "type": "categorical",
                "values": ["a", "b"],
                "conditional": [
                    {
                        "when": ["a", "b"],
                        "parameters": {"x": {"type": "double", "min": 0, "max": 1}},
                    },
                    {"when": ["b"], "parameters": {"x": {"type": "double", "min": 1, "max": 2}}},
                ],
            }
        ),
        ".study.parameters.opt.conditional[1].parameters.x",
        "already used for parent",
        id="conditional-overlapping-when",
    ),
    pytest.param(
        with_parameters(
            x={"type": "double", "min": 0, "max": 1},
            opt={
                "type": "categorical",
                "values": ["a"],
                "conditional": [
                    {"when": ["a"], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                ],
            },
        ),
        # Parameters are resolved in ID order (opt before x): the second use is reported.
        ".study.parameters.x",
        "also declared at vertex-training:jobs.sweep.study.parameters.opt.conditional[0]",
        id="conditional-id-reused",
    ),
    pytest.param(
        with_parameters(
            opt={
                "type": "categorical",
                "values": ["a"],
                "conditional": [
                    {"when": ["a"], "parameters": {"n": {"type": "integer", "min": 3, "max": 1}}}
                ],
            }
        ),
        ".study.parameters.opt.conditional[0].parameters.n.max",
        "greater than min",
        id="conditional-child-checked",
    ),
    pytest.param(
        with_study(algorithm="grid"),
        ".study.parameters.lr.type",
        "grid search takes integer, categorical and discrete",
        id="grid-double",
    ),
    pytest.param(
        with_study(
            algorithm="grid",
            parameters={
                "o": {
                    "type": "categorical",
                    "values": ["a"],
                    "conditional": [
                        {"when": ["a"], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                    ],
                }
            },
        ),
        ".study.parameters.o.conditional[0].parameters.x.type",
        "grid search",
        id="grid-conditional-double",
    ),
    pytest.param(
        with_study(algorithm="bayesian"),
        ".study.algorithm",
        "default, grid or random",
        id="unknown-algorithm",
    ),
    pytest.param(
        with_study(measurement_selection="first"),
        ".study.measurement_selection",
        "best or last",
        id="unknown-measurement-selection",
    ),
    pytest.param(
        with_study(max_trials=None), ".study.max_trials", "is required", id="no-max-trials"
    ),
    pytest.param(with_study(max_trials=0), ".study.max_trials", "at least 1", id="zero-max-trials"),
    pytest.param(
        with_study(parallel_trials=0), ".study.parallel_trials", "at least 1", id="zero-parallel"
    ),
    pytest.param(
        with_study(parallel_trials=5),
        ".study.parallel_trials",
        "parallel_trials: 4 or less",
        id="parallel-above-max",
    ),
    pytest.param(
        with_study(max_failed_trials=-1),
        ".study.max_failed_trials",
        "at least 0",
        id="negative-max-failed",
    ),
    pytest.param(
        with_study(early_stopping={}),
        ".study.early_stopping",
        "exactly one rule",
        id="early-stopping-empty",
    ),
    pytest.param(
        with_study(early_stopping={"median": {}, "decay_curve": {}}),
        ".study.early_stopping",
        "exactly one rule",
        id="early-stopping-two",
    ),
    pytest.param(
        with_study(early_stopping={"median": {"elapsed": True}}),
        ".study.early_stopping.median.elapsed",
        "use_elapsed_duration",
        id="early-stopping-typo",
    ),
    pytest.param(
        with_study(early_stopping={"convex": {"learning_rate_parameter_name": "l"}}),
        ".study.early_stopping.convex.learning_rate_parameter_name",
        "Did you mean lr",
        id="convex-unknown-parameter",
    ),
    pytest.param(
        with_study(early_stopping={"convex": {"min_step_count": 10, "max_step_count": 5}}),
        ".study.early_stopping.convex.min_step_count",
        "more than max_step_count",
        id="convex-min-above-max",
    ),
    pytest.param(
        job(adopt="projects/my-project/locations/us-central1/customJobs/1"),
        ".adopt",
        "hyperparameterTuningJobs/ID",
        id="adopt-a-custom-job",
    ),
]


class TestStudyRejects:
    """parse_job with a study: every rule gives an Issue with the full key and the fix."""

    @pytest.mark.parametrize(("raw", "key", "fragment"), BAD_STUDIES)
    def test_bad_study(self, raw: dict[str, Any], key: str, fragment: str) -> None:
        """A study Vertex AI would refuse is reported at its key with what to write."""
        issues = issues_of(raw)
        matching = [i for i in issues if i.key == PREFIX + key]
        assert matching, f"no issue at {PREFIX + key}; got {[str(i) for i in issues]}"
        assert any(fragment in i.message for i in matching), [str(i) for i in matching]

    def test_table_covers_enough_rules(self) -> None:
        """The table holds at least 40 distinct bad studies."""
        assert len({p.id for p in BAD_STUDIES}) == len(BAD_STUDIES) >= 40

    def test_study_and_trial_job_mistakes_are_reported_together(self) -> None:
        """A bad trial job key and a bad study key are both reported in one pass."""
        issues = issues_of(with_study(max_trials=0) | {"machin": "n1-standard-4"})
        assert {f"{PREFIX}.machin", f"{PREFIX}.study.max_trials"} <= {i.key for i in issues}

    def test_every_study_rule_is_reported_at_once(self) -> None:
        """Several cross-key mistakes of a study are all reported."""
        issues = issues_of(
            with_study(
                metrics=[],
                parallel_trials=9,
                parameters={
                    "lr": {"type": "double", "min": 2, "max": 1},
                    "o": {"type": "categorical", "values": ["a"], "scale": "log"},
                },
            )
        )
        assert {
            f"{PREFIX}.study.metrics",
            f"{PREFIX}.study.parallel_trials",
            f"{PREFIX}.study.parameters.lr.max",
            f"{PREFIX}.study.parameters.o.scale",
        } <= {i.key for i in issues}

    def test_issue_value_is_what_was_written(self) -> None:
        """The issue carries the value as written, and prints key, fix and value."""
        (issue,) = issues_of(with_parameters(lr={"type": "double", "min": 1, "max": "0.5"}))
        assert issue.value == "0.5"
        assert str(issue) == (
            f"{PREFIX}.study.parameters.lr.max: max must be greater than min (1); swap them or "
            "widen the range (a single value is not a parameter to tune) (got '0.5')"
        )

    def test_messages_carry_no_pydantic_text(self) -> None:
        """Pydantic's own wording never reaches the user."""
        issues = issues_of(with_study(max_trials="many", parallel_trials=[1], metrics="acc"))
        for issue in issues:
            assert "Input should" not in issue.message and "pydantic" not in issue.message


class TestStudyParses:
    """parse_job with a study gives a TuningJobSpec: the trial job plus the study."""

    def test_a_study_makes_a_tuning_job(self) -> None:
        """A job with study: parses to a TuningJobSpec, one without to a plain JobSpec."""
        assert isinstance(parse_job("sweep", job(), STACK), TuningJobSpec)
        plain = parse_job("sweep", {"image": IMAGE}, STACK)
        assert type(plain) is JobSpec

    def test_defaults(self) -> None:
        """Unset study keys take their documented defaults."""
        study = parse_job("sweep", job(), STACK).study  # type: ignore[attr-defined]
        assert (study.algorithm, study.parallel_trials, study.max_failed_trials) == (
            "default",
            1,
            0,
        )
        assert study.measurement_selection is None and study.early_stopping is None

    def test_yaml_reads_1e_minus_3_as_text_and_it_is_a_number(self) -> None:
        """YAML 1.1 reads `1e-3` as a string; min/max accept it as the number."""
        raw = yaml.safe_load("{type: double, min: 1e-3, max: 1e-1, scale: log}")
        assert raw["min"] == "1e-3"
        spec = body_of(with_parameters(lr=raw))["studySpec"]["parameters"][0]
        assert spec["doubleValueSpec"] == {"minValue": 0.001, "maxValue": 0.1}

    def test_categories_are_text(self) -> None:
        """Categorical values written as numbers or booleans are sent as text."""
        spec = body_of(with_parameters(c={"type": "categorical", "values": [1, True, "x"]}))
        assert spec["studySpec"]["parameters"][0]["categoricalValueSpec"] == {
            "values": ["1", "true", "x"]
        }

    def test_same_child_id_under_disjoint_conditions(self) -> None:
        """One parent may use one child ID for disjoint values (study.proto allows it)."""
        raw = with_parameters(
            opt={
                "type": "categorical",
                "values": ["a", "b"],
                "conditional": [
                    {"when": ["a"], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}},
                    {"when": ["b"], "parameters": {"x": {"type": "double", "min": 1, "max": 2}}},
                ],
            }
        )
        specs = body_of(raw)["studySpec"]["parameters"][0]["conditionalParameterSpecs"]
        assert [s["parentCategoricalValues"]["values"] for s in specs] == [["a"], ["b"]]

    def test_local_backend_relaxes_the_cloud_rules_only(self) -> None:
        """A local tuning job may use local package paths; study rules still apply."""
        raw = {
            "python_package": {"package_uris": ["trainer"], "module": "trainer.task"},
            "study": SMALL_STUDY,
        }
        assert isinstance(parse_job("sweep", raw, LOCAL_STACK), TuningJobSpec)
        raw["study"] = {**SMALL_STUDY, "max_trials": 0}
        assert [i.key for i in issues_of(raw, LOCAL_STACK)] == [f"{PREFIX}.study.max_trials"]

    def test_adopt_takes_a_tuning_job_name(self) -> None:
        """`adopt` names a hyperparameterTuningJobs resource in the job's project and region."""
        name = "projects/my-project/locations/us-central1/hyperparameterTuningJobs/42"
        assert parse_job("sweep", job(adopt=name), STACK).adopt == name
        wrong_region = name.replace("us-central1", "europe-west4")
        (issue,) = issues_of(job(adopt=wrong_region))
        assert issue.key == f"{PREFIX}.adopt" and "region" in issue.message

    @pytest.mark.parametrize(
        ("raw", "expected"),
        [
            ({"study": {}}, True),
            ({"training_input": {"hyperparameters": {"goal": "MAXIMIZE"}}}, True),
            ({"training_input": {"scaleTier": "BASIC"}}, False),
            ({"image": IMAGE}, False),
            ("image", False),
        ],
    )
    def test_is_tuning_job(self, raw: Any, expected: bool) -> None:
        """A study (or a legacy config's hyperparameters) makes a job a tuning job."""
        assert is_tuning_job(raw) is expected


class TestRequestBody:
    """TuningJobSpec.request_body(): the REST HyperparameterTuningJob of docs/config-shape.md."""

    def test_the_documented_example(self) -> None:
        """The config-shape example renders field for field."""
        body = body_of(
            job(
                DOC_STUDY,
                labels={"team": "vision"},
                kms_key=KMS,
                display_name="mnist-sweep",
                args=["--epochs", "5"],
            )
        )
        assert body["studySpec"] == {
            "metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
            # In parameter ID order, whatever order the config lists them in.
            "parameters": [
                {"parameterId": "batch-size", "discreteValueSpec": {"values": [16.0, 32.0, 64.0]}},
                {"parameterId": "epochs", "integerValueSpec": {"minValue": "2", "maxValue": "10"}},
                {
                    "parameterId": "learning-rate",
                    "doubleValueSpec": {"minValue": 0.001, "maxValue": 1.0},
                    "scaleType": "UNIT_LOG_SCALE",
                },
                {
                    "parameterId": "optimizer",
                    "categoricalValueSpec": {"values": ["sgd", "adam"]},
                    "conditionalParameterSpecs": [
                        {
                            "parentCategoricalValues": {"values": ["adam"]},
                            "parameterSpec": {
                                "parameterId": "beta1",
                                "doubleValueSpec": {"minValue": 0.8, "maxValue": 0.99},
                            },
                        }
                    ],
                },
            ],
            "measurementSelectionType": "BEST_MEASUREMENT",
            "decayCurveStoppingSpec": {},
        }
        assert body["displayName"] == "mnist-sweep"
        assert (body["maxTrialCount"], body["parallelTrialCount"]) == (12, 3)
        assert "maxFailedTrialCount" not in body  # 0: Vertex decides (proto3 JSON omits it)
        assert body["labels"] == {"team": "vision"}
        assert body["encryptionSpec"] == {"kmsKeyName": KMS}
        assert list(body) == [
            "displayName",
            "studySpec",
            "maxTrialCount",
            "parallelTrialCount",
            "trialJobSpec",
            "labels",
            "encryptionSpec",
        ]

    def test_trial_job_spec_is_the_training_jobs_job_spec(self) -> None:
        """trialJobSpec is exactly the jobSpec the same keys give a training job."""
        keys = {
            "args": ["--epochs", "5"],
            "machine": "n1-standard-8",
            "workers": {"replicas": 2},
            "scheduling": {"timeout": "1h"},
            "base_output_directory": "gs://bucket/sweep",
        }
        training = body_of({"image": IMAGE, **keys})
        tuning = body_of(job(**keys))
        assert tuning["trialJobSpec"] == training["jobSpec"]
        assert "jobSpec" not in tuning

    def test_integer_and_discrete_conditions(self) -> None:
        """Conditions on integer parents are int64 strings, on discrete parents doubles."""
        raw = with_parameters(
            n={
                "type": "integer",
                "min": 1,
                "max": 4,
                "scale": "linear",
                "conditional": [
                    {"when": [2, 3], "parameters": {"x": {"type": "double", "min": 0, "max": 1}}}
                ],
            },
            b={
                "type": "discrete",
                "values": [16, 32],
                "scale": "log",
                "conditional": [
                    {"when": [32], "parameters": {"y": {"type": "integer", "min": 1, "max": 2}}}
                ],
            },
        )
        b, n = body_of(raw)["studySpec"]["parameters"]  # in ID order
        assert n["scaleType"] == "UNIT_LINEAR_SCALE"
        assert n["conditionalParameterSpecs"][0]["parentIntValues"] == {"values": ["2", "3"]}
        assert b["conditionalParameterSpecs"][0]["parentDiscreteValues"] == {"values": [32.0]}
        assert b["scaleType"] == "UNIT_LOG_SCALE"

    @pytest.mark.parametrize(
        ("algorithm", "rendered"),
        [("default", None), ("grid", "GRID_SEARCH"), ("random", "RANDOM_SEARCH")],
    )
    def test_algorithm(self, algorithm: str, rendered: str | None) -> None:
        """default is ALGORITHM_UNSPECIFIED (omitted); grid and random are named."""
        params = {"n": {"type": "integer", "min": 1, "max": 3}}
        body = body_of(with_study(algorithm=algorithm, parameters=params))
        assert body["studySpec"].get("algorithm") == rendered

    def test_convex_early_stopping_and_counts(self) -> None:
        """Convex stopping renders its int64 counts as strings; max failed trials is sent."""
        body = body_of(
            with_study(
                measurement_selection="last",
                max_failed_trials=2,
                early_stopping={
                    "convex": {
                        "max_step_count": 100,
                        "min_step_count": 10,
                        "min_measurement_count": 5,
                        "learning_rate_parameter_name": "lr",
                        "use_elapsed_duration": True,
                        "update_all_stopped_trials": False,
                    }
                },
            )
        )
        assert body["studySpec"]["convexAutomatedStoppingSpec"] == {
            "useElapsedDuration": True,
            "maxStepCount": "100",
            "minStepCount": "10",
            "minMeasurementCount": "5",
            "learningRateParameterName": "lr",
            "updateAllStoppedTrials": False,
        }
        assert body["studySpec"]["measurementSelectionType"] == "LAST_MEASUREMENT"
        assert body["maxFailedTrialCount"] == 2

    def test_median_stopping_with_null_settings(self) -> None:
        """`median:` with nothing after it is the rule with its defaults."""
        body = body_of(with_study(early_stopping={"median": None}))
        assert body["studySpec"]["medianAutomatedStoppingSpec"] == {}

    @pytest.mark.parametrize(
        "study",
        [
            DOC_STUDY,
            SMALL_STUDY,
            {**SMALL_STUDY, "early_stopping": {"convex": {"max_step_count": 3}}},
            {
                **SMALL_STUDY,
                "early_stopping": {"median": {"use_elapsed_duration": True}},
                "algorithm": "random",
                "max_failed_trials": 1,
            },
        ],
    )
    def test_body_parses_as_a_hyperparameter_tuning_job(self, study: dict[str, Any]) -> None:
        """json_format.ParseDict accepts the body as aiplatform_v1 HyperparameterTuningJob."""
        from google.cloud.aiplatform_v1.types import HyperparameterTuningJob
        from google.protobuf import json_format

        body = body_of(job(study, labels={"a": "b"}, kms_key=KMS))
        message = json_format.ParseDict(body, HyperparameterTuningJob.pb()())
        assert message.max_trial_count == study["max_trials"]
        assert len(message.study_spec.parameters) == len(study["parameters"])
        assert json_format.MessageToDict(message) == body


class TestRender:
    """`vertex-training render` prints tuning jobs under hyperparameterTuningJob."""

    def test_render_prints_the_tuning_body(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A stack with a training job and a tuning job renders both kinds."""
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(
            yaml.safe_dump(
                {
                    "config": {
                        "gcp:project": "my-project",
                        "gcp:region": "us-central1",
                        "vertex-training:jobs": {
                            "train": {"image": IMAGE},
                            "sweep": job(DOC_STUDY),
                        },
                    }
                },
                sort_keys=False,
            )
        )
        assert provider_main(["render", str(stack)]) == 0
        rendered = json.loads(capsys.readouterr().out)
        common = {"backend", "parent", "region", "estimated_cost"}
        assert set(rendered["train"]) == {"customJob", *common}
        assert set(rendered["sweep"]) == {"hyperparameterTuningJob", *common}
        printed = rendered["sweep"]["hyperparameterTuningJob"]
        expected = body_of(job(DOC_STUDY))
        assert printed["studySpec"] == expected["studySpec"]
        assert (
            printed["trialJobSpec"]["workerPoolSpecs"]
            == (expected["trialJobSpec"]["workerPoolSpecs"])
        )

    def test_render_reports_study_mistakes(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A study mistake exits 2 with its full key."""
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(
            yaml.safe_dump(
                {
                    "config": {
                        "gcp:project": "my-project",
                        "gcp:region": "us-central1",
                        "vertex-training:jobs": {"sweep": with_study(parallel_trials=9)},
                    }
                }
            )
        )
        assert provider_main(["render", str(stack)]) == 2
        assert f"{PREFIX}.study.parallel_trials" in capsys.readouterr().err
