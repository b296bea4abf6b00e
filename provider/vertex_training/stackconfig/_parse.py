"""The entry: one job's or a whole stack's config -> validated ``JobSpec``s.

The only module that knows the dialects: a ``training_input:`` block is translated to
native keys first (``vertex_training.stackconfig.legacy``), a ``study:`` block makes the job a
tuning
job (``vertex_training.stackconfig.study``), and the native keys are resolved by ``_resolve``. Every
mistake found is reported as an ``Issue`` inside one ``SpecError``.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import (
    ValidationError,
)

from vertex_training.backend_kinds import DEFAULT_BACKEND, KINDS, LOCAL
from vertex_training.catalog import images
from vertex_training.errors import Issue, SpecError
from vertex_training.keys import (
    IMAGES_KEY,
    LOCAL_ACCELERATOR_MODES,
    LOCAL_ACCELERATORS_KEY,
    LOCAL_GPU,
)
from vertex_training.stackconfig import platform as stack_platform
from vertex_training.stackconfig._config import JobConfig
from vertex_training.stackconfig._constants import (
    _JOB_NAME_RE,
    API_ENDPOINT_KEY,
    BACKEND_KEY,
    BACKENDS,
    CONFIG_NAMESPACE,
    GCP_PROJECT_KEY,
    GCP_REGION_KEY,
    JOBS_KEY,
    MAX_JOB_NAME_CHARS,
    PLATFORM_KEY,
    STACK_CONFIG_KEYS,
    STUDY_KEY,
)
from vertex_training.stackconfig._image_rows import image_of, parse_image_rows
from vertex_training.stackconfig._issues import did_you_mean, issues_from, one_of
from vertex_training.stackconfig._job import JobSpec, StackSettings
from vertex_training.stackconfig._prebuilt import _prebuilt_images
from vertex_training.stackconfig._resolve import _JobResolver
from vertex_training.stackconfig.legacy import translate_job
from vertex_training.stackconfig.study import Study, TuningJobSpec, parse_study


def parse_job(
    name: str,
    raw: object,
    stack: StackSettings,
    *,
    today: datetime.date | None = None,
) -> JobSpec:
    """Validate one job of the stack config; raise ``SpecError`` listing every issue.

    ``raw`` is the job as written, any YAML value: one that is not a mapping is an issue.

    A job with a ``study:`` key is a hyperparameter tuning job: the result is then a
    ``vertex_training.stackconfig.study.TuningJobSpec`` (a ``JobSpec`` whose other keys are the
    trial job).

    A job with ``training_input`` (a legacy AI Platform Training block) is translated to
    native keys first (``vertex_training.stackconfig.legacy``); issues about translated keys name
    the legacy key. ``framework`` / ``runtime_version`` pick a prebuilt image
    (``vertex_training.catalog.images``),
    judging end of support as of ``today`` (default: the current date). Warnings that do
    not stop the job are on the result's ``warnings``.
    """
    rows, row_issues = parse_image_rows(stack.images)  # given as arguments, not yet checked
    if row_issues:
        raise SpecError(row_issues)
    with images.project_rows([image_of(row) for row in rows]):
        return _parse_job(name, raw, stack, today)


def _parse_job(
    name: str, raw: object, stack: StackSettings, today: datetime.date | None
) -> JobSpec:
    """``parse_job``, with the stack's own image rows in the catalogue."""
    base = f"{JOBS_KEY}.{name}"
    issues: list[Issue] = []
    if not isinstance(name, str) or not (
        _JOB_NAME_RE.fullmatch(name) and len(name) <= MAX_JOB_NAME_CHARS
    ):
        issues.append(
            Issue(
                base,
                name,
                f"job names have 1 to {MAX_JOB_NAME_CHARS} letters, digits, - or _, starting "
                "with a letter or digit (it names the Pulumi resource); rename the job",
            )
        )
    if not isinstance(raw, Mapping):
        issues.append(Issue(base, raw, "a job must be a mapping of settings, e.g. image: ..."))
        raise SpecError(issues)
    translation = translate_job(base, raw)  # training_input -> native keys
    if translation.issues:
        raise SpecError(issues + list(translation.issues))
    raw = translation.native
    study, study_issues = _parse_study(raw, base)
    try:
        config = JobConfig.model_validate(dict(raw))
    except ValidationError as exc:
        found = issues + issues_from(exc, base, JobConfig) + study_issues
        raise SpecError(translation.rekey_all(found)) from None
    config, image_issues, image_warnings = _prebuilt_images(base, config, stack, today)
    issues.extend(image_issues)
    resolver = _JobResolver(name, raw, config, stack)
    spec = resolver.resolve()
    issues.extend(resolver.issues)
    issues.extend(study_issues)
    if issues or spec is None:
        raise SpecError(translation.rekey_all(dedupe(issues)))
    warnings = translation.rekey_all([*translation.warnings, *image_warnings, *resolver.warnings])
    spec = spec.model_copy(update={"warnings": [str(warning) for warning in warnings]})
    if study is not None:
        return TuningJobSpec(**dict(spec), study=study)
    return spec


def _parse_study(raw: Mapping[str, Any], base: str) -> tuple[Study | None, list[Issue]]:
    """The job's ``study:`` block (``vertex_training.stackconfig.study``), or (None, []) for a
    training
    job."""
    if STUDY_KEY not in raw:
        return None, []
    return parse_study(raw[STUDY_KEY], f"{base}.{STUDY_KEY}")


def dedupe(issues: Iterable[Issue]) -> list[Issue]:
    """Issues in order of discovery, each once (values may be unhashable lists or dicts)."""
    seen: set[tuple[str, str, str]] = set()
    unique: list[Issue] = []
    for issue in issues:
        identity = (issue.key, repr(issue.value), issue.message)
        if identity not in seen:
            seen.add(identity)
            unique.append(issue)
    return unique


def _stack_text(
    config: Mapping[str, Any], key: str, example: str, issues: list[Issue]
) -> str | None:
    """A stack-level text setting, or None (with an issue when it is not text)."""
    value = config.get(key)
    if value is None or (isinstance(value, str) and value.strip()):
        return value
    issues.append(Issue(key, value, f"must be text, e.g. {example}"))
    return None


def backend_issue(written: Any) -> Issue:
    """The refusal of ``vertex-training:backend: <written>``, a value no backend has
    (the stack config's and the provider plugin's)."""
    hint = did_you_mean(str(written), BACKENDS)
    return Issue(BACKEND_KEY, written, f"must be {one_of(BACKENDS)}" + (f".{hint}" if hint else ""))


def local_accelerators_issue(written: Any) -> Issue:
    """The refusal of ``vertex-training:localAccelerators: <written>``, a value that is
    neither mode (the stack config's and the provider plugin's)."""
    return Issue(
        LOCAL_ACCELERATORS_KEY,
        written,
        "must be gpu (local jobs use this machine's GPUs) or cpu (a job with "
        "accelerators runs on the CPU when there is no GPU here)",
    )


def stack_settings(
    config: Mapping[str, Any], stack: str
) -> tuple[StackSettings, stack_platform.Platform | None, list[Issue]]:
    """Stack-wide settings and the platform from raw config keys, with the issues found in
    them (the settings then hold what could be read: a bad backend reads as local)."""
    issues: list[Issue] = []
    for key in config:
        namespace, _, name = str(key).partition(":")
        if not name:
            issues.append(
                Issue(
                    str(key),
                    config[key],
                    f"config keys are namespaced: write {CONFIG_NAMESPACE}:{key}",
                )
            )
        elif namespace == CONFIG_NAMESPACE and name not in STACK_CONFIG_KEYS:
            hint = did_you_mean(name, STACK_CONFIG_KEYS)
            issues.append(
                Issue(
                    str(key),
                    config[key],
                    f"unknown key.{hint} This project's keys are "
                    f"{one_of([f'{CONFIG_NAMESPACE}:{k}' for k in STACK_CONFIG_KEYS])}",
                )
            )
    written = config.get(BACKEND_KEY) or DEFAULT_BACKEND
    backend = KINDS[written].name if written in KINDS else None
    if backend is None:
        issues.append(backend_issue(written))
        backend = LOCAL.name  # keep checking the jobs without the Google Cloud-only rules
    project = _stack_text(config, GCP_PROJECT_KEY, "my-project", issues)
    region = _stack_text(config, GCP_REGION_KEY, "us-central1", issues)
    api_endpoint = _stack_text(config, API_ENDPOINT_KEY, "127.0.0.1:50051", issues)
    local_accelerators = config.get(LOCAL_ACCELERATORS_KEY) or LOCAL_GPU
    if local_accelerators not in LOCAL_ACCELERATOR_MODES:
        issues.append(local_accelerators_issue(local_accelerators))
    platform, platform_issues = stack_platform.resolve_platform(
        config.get(PLATFORM_KEY),
        stack=stack,
        project=project,
        region=region,
        backend=backend,
        api_endpoint=api_endpoint,
    )
    issues.extend(platform_issues)
    image_rows, image_issues = parse_image_rows(config.get(IMAGES_KEY))
    issues.extend(image_issues)
    defaults = platform.job_defaults() if platform else {}
    settings = StackSettings(
        images=image_rows or None,
        stack=stack,
        project=project,
        region=region,
        backend=backend,
        api_endpoint=api_endpoint,
        service_account=defaults.get("service_account"),
        output_root=defaults.get("output_root"),
        image_repository=defaults.get("image_repository"),
        tensorboard=defaults.get("tensorboard"),
    )
    return settings, platform, issues


def parse_stack_settings(config: Mapping[str, Any], stack: str) -> StackSettings:
    """Validate the stack-wide keys only (``vertex-training:jobs`` is neither read nor needed).

    ``config`` holds raw config keys as in ``parse_stack``; raises ``SpecError``.
    """
    settings, _, issues = stack_settings(config, stack)
    if issues:
        raise SpecError(dedupe(issues))
    return settings
