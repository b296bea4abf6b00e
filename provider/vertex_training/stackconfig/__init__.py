"""Stack config -> validated, fully defaulted training jobs (no Pulumi, no Google clients).

One module a stage, each with one job; a job's config goes through them in this order:

- ``_loader``: the one way in (``load_stack``, ``load_stack_file``): a stack's keys ->
  settings, platform, packages and each job, read once, for every entry point.
- ``_stack_file``: reads ``stacks/Pulumi.<stack>.yaml`` as the Pulumi CLI does.
- ``platform``: the ``vertex-training:platform`` key: model, rules, derived names.
- ``_parse``: one job (``parse_job``) and the stack-wide keys; the only module that knows
  the dialects below.
- ``legacy``: the ``training_input:`` dialect, AI Platform ``trainingInput`` -> native keys.
- ``study``: the ``study:`` dialect, which makes the job a hyperparameter tuning job.
- ``_config``: the user's keys, pydantic models of the YAML shape (docs/config-shape.md).
- ``_rules``: the rules on single keys (formats, names, durations, labels, env).
- ``_resolve``: the rules that relate keys, defaults and pool inheritance -> ``JobSpec``;
  ``_settings_rules`` (scheduling, networking, adopt) and ``_access`` (reservations, GPU
  partitions, mounts, private networks) hold its rules on those keys.
- ``_prebuilt``: ``framework:`` / ``runtime_version:`` -> a prebuilt training image.
- ``_job``: the resolved job and its Vertex AI REST request body.
- ``_issues``: how every stage words a mistake (key, bad value, fix), pydantic's errors
  included; ``_constants``: the keys, values and limits they share.

The dialects depend on the core modules, never the other way round; only ``_parse`` and
this package's public names reach them. Every mistake is a ``vertex_training.errors.Issue``
(full stack config key, bad value, what to write instead) inside one ``SpecError``.

The public names below are imported on first use, so that importing one stage (as
``vertex_training.stackconfig.platform`` does) loads no other.
"""

from __future__ import annotations

from vertex_training._exports import lazy_exports

#: Public name -> the module that defines it.
_EXPORTS = {
    "Accelerator": "vertex_training.stackconfig._job",
    "BACKENDS": "vertex_training.stackconfig._constants",
    "DEFAULT_WAIT_TIMEOUT_S": "vertex_training.stackconfig._constants",
    "Disk": "vertex_training.stackconfig._job",
    "DnsPeering": "vertex_training.stackconfig._job",
    "LustreMount": "vertex_training.stackconfig._job",
    "ModelUpload": "vertex_training.stackconfig._model",
    "NfsMount": "vertex_training.stackconfig._job",
    "PscInterface": "vertex_training.stackconfig._job",
    "ReservationAffinity": "vertex_training.stackconfig._job",
    "JOBS_KEY": "vertex_training.stackconfig._constants",
    "NOT_WAITED": "vertex_training.stackconfig._constants",
    "WAITED": "vertex_training.stackconfig._constants",
    "WAIT_UNTIL": "vertex_training.stackconfig._constants",
    "JobConfig": "vertex_training.stackconfig._config",
    "JobSpec": "vertex_training.stackconfig._job",
    "PLATFORM_KEY": "vertex_training.stackconfig._constants",
    "PythonPackage": "vertex_training.stackconfig._job",
    "SECRET_PLACEHOLDER": "vertex_training.stackconfig._constants",
    "STUDY_KEY": "vertex_training.stackconfig._constants",
    "Scheduling": "vertex_training.stackconfig._job",
    "SecretValue": "vertex_training.stackconfig._rules",
    "StackSettings": "vertex_training.stackconfig._job",
    "WaitPolicy": "vertex_training.stackconfig._job",
    "WorkerPool": "vertex_training.stackconfig._job",
    "LoadedJob": "vertex_training.stackconfig._loader",
    "Stack": "vertex_training.stackconfig._loader",
    "calls_vertex_api": "vertex_training.stackconfig._loader",
    "engine_keys": "vertex_training.stackconfig._loader",
    "engine_value": "vertex_training.stackconfig._loader",
    "did_you_mean": "vertex_training.stackconfig._issues",
    "invalid": "vertex_training.stackconfig._issues",
    "issues_from": "vertex_training.stackconfig._issues",
    "one_of": "vertex_training.stackconfig._issues",
    "load_stack": "vertex_training.stackconfig._loader",
    "load_stack_file": "vertex_training.stackconfig._loader",
    "parse_duration": "vertex_training.stackconfig._rules",
    "backend_issue": "vertex_training.stackconfig._parse",
    "local_accelerators_issue": "vertex_training.stackconfig._parse",
    "parse_job": "vertex_training.stackconfig._parse",
    "parse_stack_settings": "vertex_training.stackconfig._parse",
    "read_stack_file": "vertex_training.stackconfig._stack_file",
}

__all__ = [
    "BACKENDS",
    "DEFAULT_WAIT_TIMEOUT_S",
    "JOBS_KEY",
    "NOT_WAITED",
    "PLATFORM_KEY",
    "SECRET_PLACEHOLDER",
    "STUDY_KEY",
    "WAITED",
    "WAIT_UNTIL",
    "Accelerator",
    "Disk",
    "DnsPeering",
    "JobConfig",
    "JobSpec",
    "LoadedJob",
    "LustreMount",
    "ModelUpload",
    "NfsMount",
    "PscInterface",
    "PythonPackage",
    "ReservationAffinity",
    "Scheduling",
    "SecretValue",
    "Stack",
    "StackSettings",
    "WaitPolicy",
    "WorkerPool",
    "backend_issue",
    "calls_vertex_api",
    "did_you_mean",
    "engine_keys",
    "engine_value",
    "invalid",
    "issues_from",
    "load_stack",
    "load_stack_file",
    "local_accelerators_issue",
    "one_of",
    "parse_duration",
    "parse_job",
    "parse_stack_settings",
    "read_stack_file",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
