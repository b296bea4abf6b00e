"""One way in: a stack's config keys -> one ``Stack`` (settings, platform, packages, jobs).

Every entry point reads a stack through ``load_stack``: the Pulumi program (the keys the
engine hands it), ``vertex-training render`` and ``plan`` (a stack file, through
``load_stack_file``) and the policy pack (the stack file the program ran with). So the
stack-wide keys are validated once, the platform is resolved once, each package
directory is resolved to the URI ``pulumi up`` gives it, and each job is parsed once
against those settings, the same way for all of them.

A broken job leaves the others: each job is a ``LoadedJob`` holding either its resolved
``JobSpec`` or its issues. A mistake in a stack-wide key is in ``Stack.issues``; the jobs
are still parsed (against the settings that could be read) so that every mistake is
reported at once.
"""

from __future__ import annotations

import contextlib
import datetime
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import registry
from vertex_training.errors import Issue, SpecError
from vertex_training.keys import (
    CONFIG_NAMESPACE,
    GCP_PROJECT_KEY,
    GCP_REGION_KEY,
    IMAGES_KEY,
    PLATFORM_KEY,
    POLICIES_KEY,
    STACK_CONFIG_KEYS,
)
from vertex_training.packaging import PackagePlan, plan_packages, project_dir_of
from vertex_training.stackconfig._constants import JOBS_KEY
from vertex_training.stackconfig._job import JobSpec, StackSettings
from vertex_training.stackconfig._parse import dedupe, parse_job, stack_settings
from vertex_training.stackconfig._stack_file import read_stack_file
from vertex_training.stackconfig.platform import Platform

#: Keys whose value is an object: the engine hands them to the program and to the
#: providers as JSON text.
OBJECT_KEYS = (JOBS_KEY, PLATFORM_KEY, POLICIES_KEY, IMAGES_KEY)
#: The keys a stack is read from (``load_stack`` reads no other).
STACK_KEYS = (
    GCP_PROJECT_KEY,
    GCP_REGION_KEY,
    *(f"{CONFIG_NAMESPACE}:{key}" for key in STACK_CONFIG_KEYS),
)


def engine_value(key: str, value: Any) -> Any:
    """A key's value as the engine hands it (objects as JSON text), as ``load_stack``
    takes it: objects parsed, the empty defaults Pulumi.yaml declares read as unset."""
    if key in OBJECT_KEYS and isinstance(value, str):
        with contextlib.suppress(json.JSONDecodeError):  # not JSON: reported with its key
            value = json.loads(value)
    return value or None


def engine_keys(get: Callable[[str], Any]) -> dict[str, Any]:
    """The stack's keys, as ``load_stack`` takes them, from a provider's ``configure``
    (``get`` reads a key as the engine handed it, ``pulumi.dynamic.Config.get``)."""
    values = {key: engine_value(key, get(key)) for key in STACK_KEYS}
    return {key: value for key, value in values.items() if value is not None}


@dataclass(frozen=True)
class LoadedJob:
    """One job of the stack: its keys as its resource gets them, and what they resolve to."""

    name: str
    #: The job's keys as written, each ``package_path`` replaced by its package's URI:
    #: the config in the ``job`` input of the job's resource.
    config: Any
    #: The resolved job, or None when it has issues.
    job: JobSpec | None
    issues: tuple[Issue, ...] = ()

    @property
    def warnings(self) -> list[str]:
        """What ``pulumi preview`` warns about the job (legacy keys, images near their end)."""
        return list(self.job.warnings) if self.job is not None else []


@dataclass(frozen=True)
class Stack:
    """A whole stack, read once."""

    name: str
    #: The raw config keys (``gcp:*``, ``vertex-training:*``) as read.
    keys: Mapping[str, Any]
    settings: StackSettings
    #: The stack's platform (None: the stack has none at all).
    platform: Platform | None
    packages: PackagePlan
    jobs: dict[str, LoadedJob] = field(default_factory=dict)
    #: Mistakes in the stack-wide keys (and a ``vertex-training:jobs`` that is no mapping).
    issues: tuple[Issue, ...] = ()

    @property
    def resolved(self) -> dict[str, JobSpec]:
        """The jobs that resolved, by name."""
        return {name: job.job for name, job in self.jobs.items() if job.job is not None}

    def waits_until(self, name: str) -> str:
        """The state ``pulumi up`` waits for job ``name`` to reach (its ``wait.until``);
        ``submitted`` for a job with mistakes, whose resource's check stops the update."""
        job = self.jobs[name].job
        return job.wait.until if job is not None else "submitted"

    def all_issues(self) -> list[Issue]:
        """Every mistake of the stack, stack-wide first, each once."""
        found = list(self.issues)
        for job in self.jobs.values():
            found.extend(job.issues)
        return dedupe(found)

    def check(self) -> Stack:
        """This stack, or ``SpecError`` listing every mistake when it has any."""
        issues = self.all_issues()
        if issues:
            raise SpecError(issues)
        return self

    def jobs_calling_vertex_api(self) -> list[str]:
        """The jobs that make the platform's account call the Vertex AI API itself.

        Those are vertex-backend jobs that run as the platform's account (they name no
        other ``service_account``) and write to a TensorBoard or to Vertex AI
        Experiments: the account then needs ``VERTEX_API_ROLE``.
        """
        if self.platform is None:
            return []
        return sorted(
            name for name, job in self.resolved.items() if calls_vertex_api(job, self.platform)
        )


def calls_vertex_api(job: JobSpec, platform: Platform) -> bool:
    """A vertex job running as the platform's account that writes to a TensorBoard or to
    Experiments."""
    return (
        kind_of(job.backend).cloud
        and job.service_account == platform.service_account
        and bool(job.tensorboard or job.experiment or job.experiment_run)
    )


def load_stack(
    keys: Mapping[str, Any],
    stack: str,
    *,
    project_dir: Path,
    build: bool = False,
    today: datetime.date | None = None,
) -> Stack:
    """Read a stack from its raw config keys.

    ``keys`` are every ``gcp:*`` and ``vertex-training:*`` key with the values the program
    receives (objects as data). ``build`` builds the sdist of each ``package_path`` (the
    program does; ``render`` and ``plan`` only compute the URIs). Prebuilt images are
    judged as of ``today`` (default: the real today).
    """
    stack_keys = {key: value for key, value in keys.items() if key != JOBS_KEY}
    settings, platform, issues = stack_settings(stack_keys, stack)
    raw_jobs = keys.get(JOBS_KEY) or {}
    if not isinstance(raw_jobs, Mapping):
        issues.append(Issue(JOBS_KEY, raw_jobs, "must be a mapping of job name: job settings"))
        raw_jobs = {}
    packages = plan_packages(
        {str(name): job for name, job in raw_jobs.items()},
        backend=settings.backend,
        bucket=platform.bucket if platform else None,
        project_dir=project_dir,
        build=build,
    )
    package_issues: dict[str, list[Issue]] = {}
    for issue in packages.issues:
        name = issue.key.removeprefix(f"{JOBS_KEY}.").split(".")[0]
        package_issues.setdefault(name, []).append(issue)
    jobs: dict[str, LoadedJob] = {}
    snapshot, problem = _registry_snapshot(project_dir)
    if problem is not None:
        issues.append(problem)
    with registry.using(snapshot) if snapshot is not None else contextlib.nullcontext():
        for name, config in packages.configs.items():
            jobs[name] = _load_job(name, config, settings, package_issues.get(name, []), today)
    return Stack(
        name=stack,
        keys=dict(keys),
        settings=settings,
        platform=platform,
        packages=packages,
        jobs=jobs,
        issues=tuple(dedupe(issues)),
    )


def load_stack_file(
    path: str | PathLike[str],
    *,
    project_dir: Path | None = None,
    today: datetime.date | None = None,
) -> Stack:
    """Read ``stacks/Pulumi.<stack>.yaml`` as the Pulumi CLI hands it to the program.

    The stack name comes from the file name; the project is the nearest folder above the
    file with a Pulumi.yaml, unless given. Package directories are resolved without a
    build. Raises ``SpecError`` only for a file that cannot be read as a stack file.
    """
    stack, keys = read_stack_file(path)
    folder = project_dir if project_dir is not None else project_dir_of(Path(path))
    return load_stack(keys, stack, project_dir=folder, today=today)


def _registry_snapshot(
    project_dir: Path,
) -> tuple[registry.RegistrySnapshot | None, Issue | None]:
    """The project's snapshot of Google's registry of prebuilt images, or the issue of one
    that cannot be read; None without one (lookups then read the working directory's)."""
    path = registry.find_snapshot(project_dir)
    if path is None:
        return None, None
    try:
        return registry.load_cached(path), None
    except registry.ImagesError as exc:
        return None, Issue(str(registry.SNAPSHOT_PATH), None, str(exc))


def _load_job(
    name: str,
    config: Any,
    settings: StackSettings,
    package_issues: list[Issue],
    today: datetime.date | None,
) -> LoadedJob:
    """Parse one job; a package directory that cannot be resolved is reported once, with
    its reason, instead of the missing-package issue it would also cause."""
    try:
        job = parse_job(name, config, settings, today=today)
    except SpecError as exc:
        keys = {issue.key for issue in package_issues}
        rest = [issue for issue in exc.issues if issue.key not in keys]
        return LoadedJob(name, config, None, tuple(dedupe([*package_issues, *rest])))
    if package_issues:
        return LoadedJob(name, config, None, tuple(package_issues))
    return LoadedJob(name, config, job)
