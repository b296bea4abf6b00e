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
- ``_resolve``: the rules that relate keys, defaults and pool inheritance -> ``JobSpec``.
- ``_prebuilt``: ``framework:`` / ``runtime_version:`` -> a prebuilt training image.
- ``_job``: the resolved job and its Vertex AI REST request body.
- ``_issues``: how every stage words a mistake (key, bad value, fix), pydantic's errors
  included; ``_constants``: the keys, values and limits they share.

The dialects depend on the core modules, never the other way round; only ``_parse`` and
this package's public names reach them. Every mistake is a ``provider.errors.Issue``
(full stack config key, bad value, what to write instead) inside one ``SpecError``.

The public names below are imported on first use, so that importing one stage (as
``provider.stackconfig.platform`` does) loads no other.
"""

from __future__ import annotations

from provider._exports import lazy_exports

#: Public name -> the module that defines it.
_EXPORTS = {
    "Accelerator": "provider.stackconfig._job",
    "DEFAULT_WAIT_TIMEOUT_S": "provider.stackconfig._constants",
    "Disk": "provider.stackconfig._job",
    "JOBS_KEY": "provider.stackconfig._constants",
    "JobConfig": "provider.stackconfig._config",
    "JobSpec": "provider.stackconfig._job",
    "PLATFORM_KEY": "provider.stackconfig._constants",
    "PythonPackage": "provider.stackconfig._job",
    "SECRET_PLACEHOLDER": "provider.stackconfig._constants",
    "STUDY_KEY": "provider.stackconfig._constants",
    "Scheduling": "provider.stackconfig._job",
    "SecretValue": "provider.stackconfig._rules",
    "StackSettings": "provider.stackconfig._job",
    "WaitPolicy": "provider.stackconfig._job",
    "WorkerPool": "provider.stackconfig._job",
    "LoadedJob": "provider.stackconfig._loader",
    "Stack": "provider.stackconfig._loader",
    "calls_vertex_api": "provider.stackconfig._loader",
    "engine_keys": "provider.stackconfig._loader",
    "engine_value": "provider.stackconfig._loader",
    "did_you_mean": "provider.stackconfig._issues",
    "invalid": "provider.stackconfig._issues",
    "issues_from": "provider.stackconfig._issues",
    "one_of": "provider.stackconfig._issues",
    "load_stack": "provider.stackconfig._loader",
    "load_stack_file": "provider.stackconfig._loader",
    "parse_duration": "provider.stackconfig._rules",
    "parse_job": "provider.stackconfig._parse",
    "parse_stack_settings": "provider.stackconfig._parse",
    "read_stack_file": "provider.stackconfig._stack_file",
}

__all__ = [
    "DEFAULT_WAIT_TIMEOUT_S",
    "JOBS_KEY",
    "PLATFORM_KEY",
    "SECRET_PLACEHOLDER",
    "STUDY_KEY",
    "Accelerator",
    "Disk",
    "JobConfig",
    "JobSpec",
    "LoadedJob",
    "PythonPackage",
    "Scheduling",
    "SecretValue",
    "Stack",
    "StackSettings",
    "WaitPolicy",
    "WorkerPool",
    "calls_vertex_api",
    "did_you_mean",
    "engine_keys",
    "engine_value",
    "invalid",
    "issues_from",
    "load_stack",
    "load_stack_file",
    "one_of",
    "parse_duration",
    "parse_job",
    "parse_stack_settings",
    "read_stack_file",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
