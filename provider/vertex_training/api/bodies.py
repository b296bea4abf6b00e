"""Vertex AI REST request bodies: their shape, and when two of them run differently.

A job's request is a ``CustomJob`` or a ``HyperparameterTuningJob`` in JSON form
(camelCase field names, exactly what ``vertex-training render`` prints). A tuning job
has a ``studySpec`` and runs its ``trialJobSpec``; a custom job runs its ``jobSpec``.

The replace rule lives here, once: the API has no update for either kind of job, so a
job whose request (in its canonical form) or location changed runs differently and is
replaced. The job resources' ``diff`` and ``vertex-training plan`` both apply it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

#: The key of the CustomJobSpec in each kind of request body.
JOB_SPEC_KEY = "jobSpec"
TRIAL_JOB_SPEC_KEY = "trialJobSpec"
#: The job's keys that pass straight into the request's CustomJobSpec, each with its
#: field there: text, a list of text or a flag, sent as the job's spec holds it (left out
#: when unset, empty or false). One row each: the job's resolver passes them into its
#: ``JobSpec``, ``JobSpec.request_body`` sends them, ``pulumi import`` reads them back as
#: these keys (``api.job_config``), and
#: tests/test_pass_through_fields.py checks that the rich jobs of the completeness test
#: (tests/test_api_fields.py) set each row and that it goes there and back.
PASS_THROUGH_FIELDS: Final[Mapping[str, str]] = {
    "service_account": "serviceAccount",
    "network": "network",
    "tensorboard": "tensorboard",
    "experiment": "experiment",
    "experiment_run": "experimentRun",
    "persistent_resource_id": "persistentResourceId",
    "protected_artifact_location_id": "protectedArtifactLocationId",
    "reserved_ip_ranges": "reservedIpRanges",
    "models": "models",
    "enable_web_access": "enableWebAccess",
    "enable_dashboard_access": "enableDashboardAccess",
}


def is_tuning_body(body: Any) -> bool:
    """Whether a request body is a HyperparameterTuningJob (rather than a CustomJob)."""
    return isinstance(body, Mapping) and ("studySpec" in body or TRIAL_JOB_SPEC_KEY in body)


def job_spec_key(body: Any) -> str:
    """``trialJobSpec`` for a tuning job's body, ``jobSpec`` for a custom job's."""
    return TRIAL_JOB_SPEC_KEY if is_tuning_body(body) else JOB_SPEC_KEY


def canonical_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """The body with its study's parameters, and the conditional parameters of each, in
    parameter ID order (a stable sort: a child ID reused under other parent values keeps
    its place). ``vertex_training.stackconfig.study`` builds requests in that order; requests
    recorded by
    releases that kept the stack config's order compare equal to today's in this form."""

    def ordered(spec: Mapping[str, Any]) -> dict[str, Any]:
        spec = dict(spec)
        if conditionals := spec.get("conditionalParameterSpecs"):
            children = [{**c, "parameterSpec": ordered(c["parameterSpec"])} for c in conditionals]
            spec["conditionalParameterSpecs"] = sorted(
                children, key=lambda c: str(c["parameterSpec"].get("parameterId", ""))
            )
        return spec

    canonical = dict(body)
    study = body.get("studySpec")
    if isinstance(study, Mapping) and isinstance(study.get("parameters"), list):
        specs = [ordered(spec) for spec in study["parameters"]]
        canonical["studySpec"] = {
            **study,
            "parameters": sorted(specs, key=lambda s: str(s.get("parameterId", ""))),
        }
    return canonical


def job_spec_of(body: Any) -> dict[str, Any]:
    """The CustomJobSpec of either kind of body (what each trial runs, for a tuning job)."""
    return dict(body.get(job_spec_key(body)) or {}) if isinstance(body, Mapping) else {}


def named_output_directory(body: Any) -> str:
    """The base output directory a body names ("" when it names none), without a
    trailing slash."""
    spec = job_spec_of(body)
    return str(spec.get("baseOutputDirectory", {}).get("outputUriPrefix") or "").rstrip("/")


#: The inputs that say what runs and where, the model it registers and the dataset it
#: reads (``vertex_training.api.pipelines``; each absent for a job without): a change to
#: one replaces the job.
RUN_KEYS = ("request", "location", "model", "dataset")


def run_key_differs(key: str, olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether input ``key`` changed; requests are compared in their canonical form."""
    old, new = olds.get(key), news.get(key)
    if key == "request" and isinstance(old, Mapping) and isinstance(new, Mapping):
        return canonical_request(old) != canonical_request(new)
    return bool(old != new)


def runs_differently(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether a job with inputs ``news`` runs differently from one with ``olds`` (each
    holding ``request`` and ``location``): the job is then replaced."""
    return any(run_key_differs(key, olds, news) for key in RUN_KEYS)


#: A job's keys that never change what runs (``wait``, ``adopt``, ``retry``,
#: ``run_after``: only the provider reads them). Changed alone, they update the job's
#: resource in place; changed beside a key that replaces the job, they are no reason for it.
PROVIDER_SIDE_KEYS = ("wait", "adopt", "retry", "run_after")


def key_replaces(key: str, replaced: bool) -> bool:
    """Whether the change of the job's key ``key`` (a dotted path of its config:
    ``scheduling.timeout``, ``wait.until``) is one that replaces the job, when the job
    is ``replaced``: every key but the provider-side ones (``PROVIDER_SIDE_KEYS``). The
    one rule the providers' diff and a review of stack files follow."""
    top = key.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0]
    return replaced and top not in PROVIDER_SIDE_KEYS


#: Scheduling strategies, as the REST body names them (aiplatform v1
#: ``Scheduling.Strategy``); STANDARD is the API's default.
STANDARD_STRATEGY: Final = "STANDARD"
SPOT_STRATEGY: Final = "SPOT"
FLEX_START_STRATEGY: Final = "FLEX_START"
#: ReservationAffinity.Type of a pool that runs on one named reservation.
SPECIFIC_RESERVATION: Final = "SPECIFIC_RESERVATION"


def strategy_of(body: Mapping[str, Any]) -> str:
    """The body's scheduling strategy (STANDARD when it names none)."""
    scheduling = job_spec_of(body).get("scheduling") or {}
    return str(scheduling.get("strategy") or STANDARD_STRATEGY)


def with_strategy(body: Mapping[str, Any], strategy: str) -> dict[str, Any]:
    """A copy of ``body`` that runs under ``strategy``: STANDARD leaves the field out (the
    API's default), and ``maxWaitDuration`` stays only with FLEX_START, the one strategy
    it applies to."""
    copy: dict[str, Any] = json.loads(json.dumps(body))
    key = job_spec_key(copy)
    spec = dict(copy.get(key) or {})
    scheduling = dict(spec.get("scheduling") or {})
    if strategy == STANDARD_STRATEGY:
        scheduling.pop("strategy", None)
    else:
        scheduling["strategy"] = strategy
    if strategy != FLEX_START_STRATEGY:
        scheduling.pop("maxWaitDuration", None)
    if scheduling:
        spec["scheduling"] = scheduling
    else:
        spec.pop("scheduling", None)
    copy[key] = spec
    return copy
