"""Reads the stack config of the running program: stack settings, platform, jobs, packages.

A mistake in a stack-wide key (``gcp:*``, ``vertex-training:backend``, ``...:platform``) or
in a package directory stops the program at ``pulumi preview`` with its full stack config
key (a job's own keys are checked by its resource, as CheckFailures).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime.config

from provider import packaging, stackconfig
from provider.backends.local.gpus import LOCAL_ACCELERATOR_MODES, LOCAL_GPU
from provider.errors import Issue, SpecError
from provider.stackconfig import platform as stack_platform

#: Where the local backend keeps job records, logs and outputs, under the project.
LOCAL_ROOT = ".local-jobs"
LOCAL_ACCELERATORS_KEY = "vertex-training:localAccelerators"
#: Keys whose value is an object (Pulumi hands the program objects as JSON text).
OBJECT_KEYS = (stackconfig.JOBS_KEY, stackconfig.PLATFORM_KEY)


def stack_settings(stack: str) -> dict[str, Any]:
    """The stack's settings as plain data; a mistake stops the program with its key.

    They include the platform's defaults for jobs (service account, output root, image
    repository, TensorBoard): see ``provider.stackconfig.platform``.
    """
    try:
        settings = stackconfig.parse_stack_settings(_stack_keys(), stack)
    except SpecError as exc:
        raise _stop(exc.issues) from None
    return settings.model_dump()


def platform_settings(stack: str) -> stack_platform.Platform | None:
    """The stack's platform, derived from config (None: the stack has none at all)."""
    raw = _stack_keys()
    settings = stackconfig.parse_stack_settings(raw, stack)  # already checked by stack_settings
    platform, issues = stack_platform.resolve_platform(
        raw.get(stackconfig.PLATFORM_KEY),
        stack=stack,
        project=settings.project,
        region=settings.region,
        backend=settings.backend,
        api_endpoint=settings.api_endpoint,
    )
    if issues:
        raise _stop(issues)
    return platform


def job_configs() -> dict[str, Any]:
    """``vertex-training:jobs`` as plain data (decrypted, when it holds secrets)."""
    jobs = _value(stackconfig.JOBS_KEY) or {}
    if not isinstance(jobs, Mapping):
        raise _stop(
            [Issue(stackconfig.JOBS_KEY, jobs, "must be a mapping of job name: job settings")]
        )
    return {str(name): job for name, job in jobs.items()}


def jobs_are_secret() -> bool:
    """Whether ``vertex-training:jobs`` holds a Pulumi secret (say, an env value).

    Pulumi marks the whole key secret when any value under it is; the job resources then
    keep their config encrypted in the state.
    """
    return pulumi.runtime.config.is_config_secret(stackconfig.JOBS_KEY)


def trainer_packages(
    jobs: Mapping[str, Any],
    settings: Mapping[str, Any],
    platform: stack_platform.Platform | None,
    project_dir: Path,
) -> packaging.PackagePlan:
    """Build every ``package_path`` of the jobs (cached) and resolve it to its URI."""
    plan = packaging.plan_packages(
        jobs,
        backend=settings["backend"],
        bucket=platform.bucket if platform else None,
        project_dir=project_dir,
        build=True,
    )
    if plan.issues:
        raise _stop(plan.issues)
    return plan


def warn_about(jobs: Mapping[str, Any], settings: Mapping[str, Any]) -> None:
    """Show at preview what the spec warns about (legacy settings, images near their end
    of support). Mistakes are left to each job's check, which reports them by key."""
    stack = stackconfig.StackSettings(**settings)
    for name, job in jobs.items():
        with contextlib.suppress(SpecError):
            for warning in stackconfig.parse_job(name, job, stack).warnings:
                pulumi.log.warn(warning)


def connection_settings(
    api_endpoint: str | None, project_dir: Path, local_accelerators: str | None = None
) -> dict[str, Any]:
    """How this machine reaches the backends, and runs local jobs: kept in state, never a
    reason to resubmit."""
    mode = local_accelerators or LOCAL_GPU
    if mode not in LOCAL_ACCELERATOR_MODES:
        raise _stop(
            [
                Issue(
                    LOCAL_ACCELERATORS_KEY,
                    mode,
                    "must be gpu (local jobs use this machine's GPUs) or cpu (a job with "
                    "accelerators runs on the CPU when there is no GPU here)",
                )
            ]
        )
    return {
        "api_endpoint": api_endpoint or "",
        "local_root": str(project_dir / LOCAL_ROOT),
        "base_dir": str(project_dir),
        "local_accelerators": mode,
    }


def _stack_keys() -> dict[str, Any]:
    """The stack-wide keys (every gcp:* and vertex-training:* key but the jobs)."""
    return {
        key: _value(key)
        for key in pulumi.runtime.config.CONFIG.get()
        if key.startswith(("gcp:", "vertex-training:")) and key != stackconfig.JOBS_KEY
    }


def _value(key: str) -> Any:
    """A key's value, objects parsed; the empty defaults Pulumi.yaml declares read as unset.

    Read without ``pulumi.Config`` so that a secret key gives its plain value without a
    warning: the program decides where it goes, and keeps it secret there.
    """
    value = pulumi.runtime.config.get_config(key)
    if key in OBJECT_KEYS and isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):  # not JSON: reported with its key
            value = json.loads(value)
    return value or None


def _stop(issues: list[Issue]) -> pulumi.RunError:
    """An error that stops the program with each issue on its own line (no traceback)."""
    return pulumi.RunError("\n".join(str(issue) for issue in issues))
