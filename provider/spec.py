"""Stack config -> validated, fully defaulted training jobs (no Pulumi, no Google clients).

Two layers of pydantic models:

- ``JobConfig`` and friends mirror the YAML shape of docs/config-shape.md, key for key,
  with ``extra="forbid"`` so that a typo is an error (with a did-you-mean suggestion).
- ``JobSpec`` is the canonical job after defaults, inheritance between worker pools and
  every cross-field rule: what the providers and backends consume. ``request_body()``
  turns it into the Vertex AI REST ``CustomJob`` body.

``parse_job`` / ``parse_stack`` / ``load_stack_file`` report every mistake they find as
``provider.errors.Issue`` records (full stack config key, bad value, what to write
instead) inside one ``SpecError``. Key-level rules (types, unknown keys, formats, bounds)
are checked for every key at once; rules that relate several keys (machine and
accelerator, region, pools, scheduling) are checked once a job's keys are well formed.

Worker pool inheritance: ``workers``, ``parameter_servers`` and ``evaluators`` take each of
these from the primary pool unless they set it: the program (``image`` with its
``command``, or ``python_package``, as one unit), ``args``, ``env``, ``machine``,
``accelerator``, ``tpu_topology``, ``disk``. ``accelerator: null`` in a pool means "no
accelerator" rather than "inherit". A pool that sets its own accelerator-optimized machine
(a2, a3, a4, g2) gets the GPUs that machine comes with unless it names an accelerator.
The reduction server inherits nothing: it runs Google's reduction server image.
"""

from __future__ import annotations

import datetime
import difflib
import re
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from os import PathLike
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)
from pydantic_core import PydanticCustomError

from provider import catalog, images, legacy, platform_spec
from provider.errors import TYPE_MESSAGES as _TYPE_MESSAGES
from provider.errors import Issue, SpecError

__all__ = [
    "DEFAULT_WAIT_TIMEOUT_S",
    "PROVIDER_LABEL_KEYS",
    "SECRET_PLACEHOLDER",
    "Accelerator",
    "Disk",
    "JobSpec",
    "PythonPackage",
    "Scheduling",
    "SecretValue",
    "StackSettings",
    "WaitPolicy",
    "WorkerPool",
    "load_stack_file",
    "parse_duration",
    "parse_job",
    "parse_stack",
    "parse_stack_settings",
    "read_stack_file",
]

# ------------------------------------------------------------------------------ constants

#: The job key that makes a job a hyperparameter tuning job (provider.study).
STUDY_KEY = "study"
#: The Pulumi project name: the namespace of this project's config keys.
CONFIG_NAMESPACE = "vertex-training"
JOBS_KEY = f"{CONFIG_NAMESPACE}:jobs"
BACKEND_KEY = f"{CONFIG_NAMESPACE}:backend"
API_ENDPOINT_KEY = f"{CONFIG_NAMESPACE}:apiEndpoint"
PLATFORM_KEY = platform_spec.PLATFORM_KEY
GCP_PROJECT_KEY = "gcp:project"
GCP_REGION_KEY = "gcp:region"
#: This project's own stack config keys (without the namespace).
STACK_CONFIG_KEYS = ("apiEndpoint", "backend", "jobs", "platform")

BACKENDS = ("vertex", "local")
WAIT_UNTIL = ("submitted", "running", "succeeded")
STRATEGIES = ("STANDARD", "SPOT", "FLEX_START")
FLEX_START = "FLEX_START"

SECONDS_PER_MINUTE = 60
SECONDS_PER_HOUR = 3600
SECONDS_PER_DAY = 86_400
DEFAULT_WAIT_TIMEOUT_S = 24 * SECONDS_PER_HOUR

#: What render prints for a Pulumi secret (``{secure: ...}``) in an env value.
SECRET_PLACEHOLDER = "[secret]"
#: The label that carries a job's `rerun` value: changing it submits the job again.
RERUN_LABEL = "vertex_training_rerun"
#: Label keys the provider sets on jobs; users may not set them.
PROVIDER_LABEL_KEYS = ("pulumi_resource", "pulumi_stack", "vertex_training_key", RERUN_LABEL)
MAX_LABELS = 64
MAX_LABEL_CHARS = 63
RESERVED_LABEL_PREFIX = "goog"
MAX_DISPLAY_NAME_CHARS = 128
MAX_ENV_VARS = 100
MAX_PACKAGE_URIS = 100
MAX_JOB_NAME_CHARS = 63
#: Region (and project) recorded for local-backend jobs whose stack names none.
LOCAL_DEFAULT_REGION = "us-central1"
LOCAL_DEFAULT_PROJECT = "local"
GCS_PREFIX = "gs://"

#: Worker pool roles by position in ``workerPoolSpecs``.
Role = Literal["primary", "workers", "parameter_servers", "reduction_server", "evaluators"]
POOL_POSITIONS: Mapping[str, int] = {
    "primary": 0,
    "workers": 1,
    "parameter_servers": 2,
    "reduction_server": 2,
    "evaluators": 3,
}

_JOB_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_DURATION_RE = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PYTHON_MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_TOPOLOGY_RE = re.compile(r"\d+x\d+(x\d+)?")
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_NETWORK_RE = re.compile(r"projects/[^/\s]+/global/networks/[^/\s]+")
_TENSORBOARD_RE = re.compile(r"projects/[^/\s]+/locations/[^/\s]+/tensorboards/[^/\s]+")
_KMS_KEY_RE = re.compile(
    r"projects/[^/\s]+/locations/(?P<location>[^/\s]+)/keyRings/[^/\s]+/cryptoKeys/[^/\s]+"
)
_CONTEXT_RE = re.compile(
    r"projects/[^/\s]+/locations/[^/\s]+/metadataStores/[^/\s]+/contexts/[^/\s]+"
)
#: Job resource names: ``projects/P/locations/L/<collection>/ID``.
_JOB_RESOURCE_RE = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[^/\s]+)/(?P<collection>\w+)/(?P<id>\d+)"
)
#: The resource collection of each kind of job, as in its resource name.
CUSTOM_JOBS = "customJobs"
TUNING_JOBS = "hyperparameterTuningJobs"
#: PersistentResource IDs (persistent_resource_service.proto).
_PERSISTENT_RESOURCE_ID_RE = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")

#: The pydantic error type that carries this module's own messages.
_ISSUE_ERROR = "vertex_training_issue"

# ---------------------------------------------------------------------- small helpers

Problem = tuple[tuple[str | int, ...], Any, str]


def _invalid(message: str, problems: Sequence[Problem] = ()) -> PydanticCustomError:
    """A validation error with our own message; ``problems`` split it into several issues."""
    return PydanticCustomError(
        _ISSUE_ERROR, "{message}", {"message": message, "problems": list(problems)}
    )


def _did_you_mean(value: str, choices: Iterable[str]) -> str:
    """' Did you mean X?' for the closest choice (case-insensitive), or ''."""
    options = list(choices)
    by_upper = {c.upper(): c for c in options}
    if value.upper() in by_upper:
        return f" Did you mean {by_upper[value.upper()]}?"
    close = difflib.get_close_matches(value, options, n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


def _one_of(values: Sequence[object], conjunction: str = "or") -> str:
    """'a', 'a or b', 'a, b or c'."""
    texts = [str(v) for v in values]
    if len(texts) <= 1:
        return "".join(texts)
    return f"{', '.join(texts[:-1])} {conjunction} {texts[-1]}"


def _key(base: str, path: Iterable[str | int]) -> str:
    """A full stack config key: ``base`` plus ``.name`` / ``[index]`` parts."""
    key = base
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else f".{part}"
    return key


def _scalar_text(value: Any) -> Any:
    """YAML scalars as the text a user meant: 3 -> "3", true -> "true"; others unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


def _is_secret(value: Any) -> bool:
    return isinstance(value, Mapping) and set(value) == {"secure"}


def parse_duration(value: Any) -> int:
    """Seconds in ``value``: a number of seconds, or text like 90s, 30m, 2h, 1d, 1h30m.

    Raises ``ValueError`` with a message that says what to write instead.
    """
    if isinstance(value, bool):
        raise ValueError("is not a duration; write e.g. 90s, 30m, 2h or 1d")
    if isinstance(value, int):
        seconds = value
    elif isinstance(value, float) and value.is_integer():
        seconds = int(value)
    elif isinstance(value, str) and value.strip().isdigit():
        seconds = int(value.strip())
    elif (
        isinstance(value, str)
        and (match := _DURATION_RE.fullmatch(value.strip()))
        and any(match.groups())
    ):
        days, hours, minutes, secs = (int(g) if g else 0 for g in match.groups())
        seconds = (
            days * SECONDS_PER_DAY + hours * SECONDS_PER_HOUR + minutes * SECONDS_PER_MINUTE + secs
        )
    else:
        raise ValueError(
            "is not a duration; write whole seconds or a number with a unit: "
            "90s, 30m, 2h, 1d (or combined, like 1h30m)"
        )
    if seconds < 0:
        raise ValueError("must not be negative; write e.g. 30m")
    return seconds


def _format_duration(seconds: int) -> str:
    """Protobuf JSON form of a google.protobuf.Duration: '7200s'."""
    return f"{seconds}s"


# ---------------------------------------------------------------- field-level validators


def _duration_before(value: Any) -> int:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise _invalid(str(exc)) from None


def _positive_duration(seconds: int) -> int:
    if seconds <= 0:
        raise _invalid("must be longer than zero; write e.g. 2h")
    return seconds


def _text_list_before(value: Any) -> Any:
    """Lists of YAML scalars as text (``[--epochs, 3]`` -> ``["--epochs", "3"]``)."""
    if isinstance(value, list | tuple):
        return [_scalar_text(v) for v in value]
    return value


def _non_empty(value: str) -> str:
    if not value.strip():
        raise _invalid("must not be empty")
    return value


def _choice(
    allowed: Sequence[str], deprecated: Mapping[str, str] | None = None
) -> Callable[[Any], Any]:
    """A before-validator accepting exactly one of ``allowed`` (or null), with a suggestion."""

    def check(value: Any) -> Any:
        if value is None or (isinstance(value, str) and value in allowed):
            return value
        if isinstance(value, str) and deprecated and value in deprecated:
            raise _invalid(f"{value} is deprecated; write {deprecated[value]}")
        hint = _did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise _invalid(f"must be {_one_of(allowed)}" + (f".{hint}" if hint else ""))

    return check


def _check_machine(value: str) -> str:
    if value in catalog.MACHINE_TYPES:
        return value
    hint = _did_you_mean(value, catalog.MACHINE_TYPES)
    raise _invalid(
        f"{value} is not a machine type Vertex AI custom training offers.{hint} "
        f"Write one such as {catalog.DEFAULT_MACHINE}, n2-standard-8, g2-standard-8 or "
        "a2-highgpu-1g"
    )


def _check_accelerator_type(value: str) -> str:
    if value in catalog.ACCELERATOR_TYPES:
        return value
    if value in catalog.UNAVAILABLE_ACCELERATORS:
        raise _invalid(f"{value}: {catalog.UNAVAILABLE_ACCELERATORS[value]}")
    hint = _did_you_mean(value, catalog.ACCELERATOR_TYPES)
    raise _invalid(
        f"{value} is not an accelerator type.{hint} Write one of "
        f"{_one_of(catalog.ACCELERATOR_TYPES)}"
    )


def _check_disk_type(value: str) -> str:
    if value in catalog.DISK_TYPES:
        return value
    hint = _did_you_mean(value, catalog.DISK_TYPES)
    raise _invalid(
        f"boot disk type must be {_one_of(catalog.DISK_TYPES)}" + (f".{hint}" if hint else "")
    )


def _check_disk_size(value: int) -> int:
    if catalog.DISK_SIZE_GB_MIN <= value <= catalog.DISK_SIZE_GB_MAX:
        return value
    raise _invalid(
        f"boot disks are {catalog.DISK_SIZE_GB_MIN} to {catalog.DISK_SIZE_GB_MAX} GB; "
        "write a size in that range"
    )


def _check_topology(value: str) -> str:
    if _TOPOLOGY_RE.fullmatch(value):
        return value
    raise _invalid("a TPU topology looks like 2x2 or 2x2x1")


def _check_display_name(value: str) -> str:
    if 1 <= len(value) <= MAX_DISPLAY_NAME_CHARS:
        return value
    raise _invalid(
        f"a display name has 1 to {MAX_DISPLAY_NAME_CHARS} characters; "
        f"this one has {len(value)}: shorten it"
    )


def _check_python_module(value: str) -> str:
    if _PYTHON_MODULE_RE.fullmatch(value):
        return value
    raise _invalid("must be a Python module path such as trainer.task (no .py, no slashes)")


def _check_package_uris(value: list[str]) -> list[str]:
    if not 1 <= len(value) <= MAX_PACKAGE_URIS:
        raise _invalid(
            f"list 1 to {MAX_PACKAGE_URIS} package URIs (the trainer's sdist or wheel first)"
        )
    return value


def _pattern(regex: re.Pattern[str], example: str, what: str) -> Callable[[str], str]:
    """An after-validator requiring a full match of ``regex``."""

    def check(value: str) -> str:
        if regex.fullmatch(value):
            return value
        raise _invalid(f"must be {what}, like {example}")

    return check


def _env_before(value: Any) -> Any:
    """Env maps: names checked, scalars as text, ``{secure: ...}`` kept as a secret."""
    if not isinstance(value, Mapping):
        raise _invalid("must be a mapping of NAME: value lines")
    problems: list[Problem] = []
    env: dict[str, Any] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or not _ENV_NAME_RE.fullmatch(name):
            problems.append(
                (
                    (str(name),),
                    name,
                    "environment variable names are letters, digits and _, "
                    "not starting with a digit; rename it",
                )
            )
            continue
        if _is_secret(raw) and isinstance(raw["secure"], str):
            env[name] = SecretValue(secure=raw["secure"])
        elif isinstance(raw, str | int | float | bool):
            env[name] = _scalar_text(raw)
        else:
            problems.append(((name,), raw, "must be text (quote it), a number, or a secret"))
    if len(env) > MAX_ENV_VARS:
        problems.append(
            ((), len(env), f"at most {MAX_ENV_VARS} environment variables; remove some")
        )
    if problems:
        raise _invalid("invalid environment", problems)
    return env


def _label_text_ok(text: str, first_letter: bool) -> bool:
    """Lowercase letters (international ones too), digits, _ and -."""
    if first_letter and not (text[:1].isalpha() and text[:1].islower()):
        return False
    return all((c.isalpha() and c.islower()) or c.isdigit() or c in "_-" for c in text)


def _labels_before(value: Any) -> Any:
    """Labels: GCP label rules plus this provider's reserved keys; every problem reported."""
    if not isinstance(value, Mapping):
        raise _invalid("must be a mapping of key: value lines")
    problems: list[Problem] = []
    labels: dict[str, str] = {}
    for key, raw in value.items():
        text = "" if raw is None else _scalar_text(raw)  # `key:` with no value in YAML
        if (
            not isinstance(key, str)
            or not 1 <= len(key) <= MAX_LABEL_CHARS
            or not _label_text_ok(key, first_letter=True)
        ):
            problems.append(
                (
                    (str(key),),
                    key,
                    f"label keys have 1 to {MAX_LABEL_CHARS} lowercase letters, "
                    "digits, _ or -, starting with a lowercase letter; rename it",
                )
            )
            continue
        if key.startswith(RESERVED_LABEL_PREFIX):
            problems.append(
                (
                    (key,),
                    key,
                    f"label keys starting with '{RESERVED_LABEL_PREFIX}' are reserved "
                    "by Google; rename it",
                )
            )
            continue
        if key in PROVIDER_LABEL_KEYS:
            problems.append(
                (
                    (key,),
                    key,
                    "this label key is set by the vertex-training provider itself; use another key",
                )
            )
            continue
        if (
            not isinstance(text, str)
            or len(text) > MAX_LABEL_CHARS
            or not _label_text_ok(text, first_letter=False)
        ):
            problems.append(
                (
                    (key,),
                    raw,
                    f"label values have 0 to {MAX_LABEL_CHARS} lowercase letters, "
                    "digits, _ or -; change the value",
                )
            )
            continue
        labels[key] = text
    if len(value) > MAX_LABELS:
        problems.append(((), len(value), f"at most {MAX_LABELS} labels; remove some"))
    if problems:
        raise _invalid("invalid labels", problems)
    return labels


def _accelerator_before(value: Any) -> Any:
    """``accelerator: NVIDIA_TESLA_T4`` is a common slip: say what the mapping looks like."""
    if isinstance(value, str):
        raise _invalid(f"write the accelerator as a mapping: {{type: {value}, count: 1}}")
    return value


def _tensorboard_before(value: Any) -> Any:
    """``tensorboard: true`` is the stack platform's TensorBoard; text is a resource name."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and _TENSORBOARD_RE.fullmatch(value):
        return value
    raise _invalid(
        "must be true (the platform's TensorBoard), false, or a Vertex AI TensorBoard "
        "resource name, like projects/my-project/locations/us-central1/tensorboards/123"
    )


def _wait_before(value: Any) -> Any:
    """``wait: succeeded`` is short for ``wait: {until: succeeded}``."""
    if isinstance(value, str):
        if value not in WAIT_UNTIL:
            hint = _did_you_mean(value, WAIT_UNTIL)
            raise _invalid(f"must be {_one_of(WAIT_UNTIL)}" + (f".{hint}" if hint else ""))
        return {"until": value}
    return value


NonEmptyText = Annotated[str, AfterValidator(_non_empty)]


def _rerun_before(value: Any) -> Any:
    """`rerun` is a label value: a number or lowercase text (letters, digits, _ and -).

    Whole numbers may arrive as floats (2.0): Pulumi carries numbers as doubles.
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if (
        not isinstance(text, str)
        or not 0 < len(text) <= MAX_LABEL_CHARS
        or not _label_text_ok(text, first_letter=False)
    ):
        raise _invalid(
            "must be a number or up to 63 lowercase letters, digits, '_' or '-' "
            "(it becomes a label); write e.g. rerun: 2"
        )
    return text


TextList = Annotated[list[str], BeforeValidator(_text_list_before)]
Duration = Annotated[int, BeforeValidator(_duration_before)]
PositiveDuration = Annotated[
    int, BeforeValidator(_duration_before), AfterValidator(_positive_duration)
]
MachineName = Annotated[str, AfterValidator(_check_machine)]
AcceleratorName = Annotated[str, AfterValidator(_check_accelerator_type)]
DiskTypeName = Annotated[str, AfterValidator(_check_disk_type)]
DiskSizeGb = Annotated[int, AfterValidator(_check_disk_size)]
TpuTopology = Annotated[str, AfterValidator(_check_topology)]
DisplayName = Annotated[str, AfterValidator(_check_display_name)]
PythonModule = Annotated[str, AfterValidator(_check_python_module)]
PackageUris = Annotated[
    list[NonEmptyText], BeforeValidator(_text_list_before), AfterValidator(_check_package_uris)
]
ServiceAccount = Annotated[
    str,
    AfterValidator(
        _pattern(_EMAIL_RE, "trainer@my-project.iam.gserviceaccount.com", "a service account email")
    ),
]
NetworkName = Annotated[
    str,
    AfterValidator(
        _pattern(_NETWORK_RE, "projects/12345/global/networks/my-vpc", "a VPC network name")
    ),
]
TensorboardName = Annotated[
    str,
    AfterValidator(
        _pattern(
            _TENSORBOARD_RE,
            "projects/my-project/locations/us-central1/tensorboards/123",
            "a Vertex AI TensorBoard resource name",
        )
    ),
]
KmsKeyName = Annotated[
    str,
    AfterValidator(
        _pattern(
            _KMS_KEY_RE,
            "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k",
            "a Cloud KMS key name",
        )
    ),
]
ContextName = Annotated[
    str,
    AfterValidator(
        _pattern(
            _CONTEXT_RE,
            "projects/p/locations/us-central1/metadataStores/default/contexts/my-experiment",
            "a Vertex AI Experiments context name",
        )
    ),
]
PersistentResourceId = Annotated[
    str,
    AfterValidator(
        _pattern(
            _PERSISTENT_RESOURCE_ID_RE,
            "my-cluster",
            "a persistent resource ID (1 to 63 lowercase letters, digits or -, starting with a "
            "letter)",
        )
    ),
]


# ------------------------------------------------------------------ the YAML shape (input)


class _ConfigModel(BaseModel):
    """Base of the models that mirror the stack config: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


class SecretValue(BaseModel):
    """A Pulumi secret as stored in a stack file (``{secure: <ciphertext>}``); opaque here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    secure: str


EnvMap = Annotated[
    dict[str, Annotated[str | SecretValue, Field(union_mode="left_to_right")]],
    BeforeValidator(_env_before),
]
Labels = Annotated[dict[str, str], BeforeValidator(_labels_before)]


class AcceleratorConfig(_ConfigModel):
    """``accelerator: {type: NVIDIA_TESLA_T4, count: 1}``."""

    type: AcceleratorName
    count: int = Field(1, ge=1)


class DiskConfig(_ConfigModel):
    """``disk: {type: pd-ssd, size_gb: 100}``; the type defaults by machine."""

    type: DiskTypeName | None = None
    size_gb: DiskSizeGb = catalog.DEFAULT_DISK_SIZE_GB


def _version_text_before(value: Any) -> Any:
    """Versions are text: YAML reads 2.10 as the number 2.1, so numbers are refused."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise _invalid(f'write the version as text: "{value}" (YAML reads 2.10 as the number 2.1)')
    return value


VersionText = Annotated[str, BeforeValidator(_version_text_before), AfterValidator(_non_empty)]


class FrameworkConfig(_ConfigModel):
    """``framework: {name, version, python}``: a prebuilt training image (provider.images)."""

    name: Annotated[str, BeforeValidator(_choice(tuple(images.FRAMEWORK_NAMES)))]
    version: VersionText
    python: VersionText | None = None


class PythonPackageConfig(_ConfigModel):
    """``python_package: {executor_image, package_uris and/or package_path, module}``.

    ``package_path`` (a local package directory) is built and uploaded by the program
    (``provider.packaging``), which puts the package's URI first in ``package_uris``
    before the job reaches ``parse_job``.
    """

    executor_image: NonEmptyText | None = None
    package_uris: PackageUris | None = None
    package_path: NonEmptyText | None = None
    module: PythonModule
    #: Instead of executor_image: the prebuilt image of a framework version (issue 4).
    framework: FrameworkConfig | None = None


class _PoolConfig(_ConfigModel):
    """The keys every pool (and the job itself, for the primary pool) may set."""

    image: NonEmptyText | None = None
    command: TextList | None = None
    python_package: PythonPackageConfig | None = None
    args: TextList | None = None
    env: EnvMap | None = None
    machine: MachineName | None = None
    accelerator: Annotated[AcceleratorConfig | None, BeforeValidator(_accelerator_before)] = None
    tpu_topology: TpuTopology | None = None
    disk: DiskConfig | None = None


class PoolConfig(_PoolConfig):
    """``workers``, ``parameter_servers``, ``evaluators``."""

    replicas: int = Field(1, ge=1)


class ReductionServerConfig(_ConfigModel):
    """``reduction_server: {replicas, machine, disk}``: runs Google's image."""

    replicas: int = Field(1, ge=1)
    machine: MachineName = catalog.DEFAULT_REDUCTION_SERVER_MACHINE
    disk: DiskConfig | None = None


class SchedulingConfig(_ConfigModel):
    """``scheduling:``."""

    timeout: PositiveDuration | None = None
    restart_job_on_worker_restart: bool = False
    disable_retries: bool = False
    strategy: Annotated[
        str | None, BeforeValidator(_choice(STRATEGIES, catalog.DEPRECATED_STRATEGIES))
    ] = None
    max_wait_duration: Duration | None = None


class WaitConfig(_ConfigModel):
    """``wait: succeeded`` or ``wait: {until: succeeded, timeout: 3h}``."""

    until: Annotated[str, BeforeValidator(_choice(WAIT_UNTIL))] = "submitted"
    timeout: PositiveDuration = DEFAULT_WAIT_TIMEOUT_S


class JobConfig(_PoolConfig):
    """One entry of ``vertex-training:jobs``, as written."""

    replicas: int = 1
    workers: PoolConfig | None = None
    parameter_servers: PoolConfig | None = None
    reduction_server: ReductionServerConfig | None = None
    evaluators: PoolConfig | None = None
    display_name: DisplayName | None = None
    region: NonEmptyText | None = None
    backend: Annotated[str | None, BeforeValidator(_choice(BACKENDS))] = None
    scheduling: SchedulingConfig | None = None
    service_account: ServiceAccount | None = None
    network: NetworkName | None = None
    reserved_ip_ranges: list[NonEmptyText] | None = None
    base_output_directory: NonEmptyText | None = None
    tensorboard: Annotated[str | bool | None, BeforeValidator(_tensorboard_before)] = None
    enable_web_access: bool = False
    enable_dashboard_access: bool = False
    labels: Labels | None = None
    kms_key: KmsKeyName | None = None
    persistent_resource_id: PersistentResourceId | None = None
    experiment: ContextName | None = None
    experiment_run: ContextName | None = None
    wait: Annotated[WaitConfig | None, BeforeValidator(_wait_before)] = None
    adopt: NonEmptyText | None = None
    #: Any label value; changing it submits the job again with nothing else changed.
    rerun: Annotated[str, BeforeValidator(_rerun_before)] | None = None
    #: Makes the job a hyperparameter tuning job; validated by ``provider.study``.
    study: Any = None
    # Issue 4: a legacy AI Platform Training block (translated by provider.legacy before
    # validation), and a prebuilt image named by framework or runtime version
    # (provider.images) instead of image / python_package.executor_image.
    training_input: dict[str, Any] | None = None
    job_id: NonEmptyText | None = None
    framework: FrameworkConfig | None = None
    runtime_version: VersionText | None = None
    python_version: VersionText | None = None

    @field_validator("replicas")
    @classmethod
    def _primary_runs_one_replica(cls, value: int) -> int:
        if value != 1:
            raise _invalid(
                "the primary pool runs exactly one replica; for more machines add "
                f"workers: {{replicas: {max(value - 1, 1)}}}"
            )
        return value


# ------------------------------------------------------------ the canonical job (output)


class _SpecModel(BaseModel):
    """Base of the canonical models: immutable, no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StackSettings(_SpecModel):
    """The stack-wide settings every job defaults from."""

    stack: str
    project: str | None = None
    region: str | None = None
    backend: Literal["vertex", "local"] = "vertex"
    api_endpoint: str | None = None
    # Defaults from the stack's platform (provider.platform_spec), for vertex jobs only:
    #: the account a job runs as unless it names one;
    service_account: str | None = None
    #: ``gs://<bucket>``: a job writes under ``<output_root>/<job>`` unless it names a place;
    output_root: str | None = None
    #: ``<region>-docker.pkg.dev/<project>/<repo>``: where ``image: name:tag`` is found;
    image_repository: str | None = None
    #: the TensorBoard of ``tensorboard: true``.
    tensorboard: str | None = None


class WaitPolicy(_SpecModel):
    """How long ``pulumi up`` waits for a job (provider-side: never resubmits the job)."""

    until: Literal["submitted", "running", "succeeded"] = "submitted"
    timeout_s: int = Field(DEFAULT_WAIT_TIMEOUT_S, gt=0)


class Accelerator(_SpecModel):
    """Accelerators attached to each replica of a pool."""

    type: str
    count: int


class Disk(_SpecModel):
    """Boot disk of each replica."""

    type: str = catalog.DEFAULT_DISK_TYPE
    size_gb: int = catalog.DEFAULT_DISK_SIZE_GB


class PythonPackage(_SpecModel):
    """A Python package run on a prebuilt executor image."""

    executor_image: str | None = None
    package_uris: list[str]
    module: str


EnvValue = Annotated[str | SecretValue, Field(union_mode="left_to_right")]
#: JobSpec fields that only the provider uses (changing them never resubmits a job).
_SETTINGS_FIELDS = frozenset({"wait", "adopt"})


def _env_list(env: Mapping[str, str | SecretValue]) -> list[dict[str, str]]:
    """EnvVar list, sorted by name; secrets as the placeholder."""
    return [
        {"name": name, "value": SECRET_PLACEHOLDER if isinstance(value, SecretValue) else value}
        for name, value in sorted(env.items())
    ]


class WorkerPool(_SpecModel):
    """One worker pool after defaults and inheritance."""

    role: Role
    replicas: int = 1
    machine: str = catalog.DEFAULT_MACHINE
    accelerator: Accelerator | None = None
    tpu_topology: str | None = None
    disk: Disk = Disk()
    image: str | None = None
    command: list[str] = []
    python_package: PythonPackage | None = None
    args: list[str] = []
    env: dict[str, EnvValue] = {}

    def request_body(self) -> dict[str, Any]:
        """Return this pool as a REST ``WorkerPoolSpec``."""
        machine: dict[str, Any] = {"machineType": self.machine}
        if self.accelerator is not None:
            machine["acceleratorType"] = self.accelerator.type
            machine["acceleratorCount"] = self.accelerator.count
        if self.tpu_topology:
            machine["tpuTopology"] = self.tpu_topology
        body: dict[str, Any] = {
            "machineSpec": machine,
            # int64 in the proto: a JSON string, as the proto3 JSON mapping (and REST) has it.
            "replicaCount": str(self.replicas),
            # int32 in the proto: a JSON number.
            "diskSpec": {"bootDiskType": self.disk.type, "bootDiskSizeGb": self.disk.size_gb},
        }
        if self.python_package is not None:
            package: dict[str, Any] = {
                "packageUris": list(self.python_package.package_uris),
                "pythonModule": self.python_package.module,
            }
            if self.python_package.executor_image:
                package["executorImageUri"] = self.python_package.executor_image
            if self.args:
                package["args"] = list(self.args)
            if self.env:
                package["env"] = _env_list(self.env)
            body["pythonPackageSpec"] = package
        else:
            container: dict[str, Any] = {"imageUri": self.image}
            if self.command:
                container["command"] = list(self.command)
            if self.args:
                container["args"] = list(self.args)
            if self.env:
                container["env"] = _env_list(self.env)
            body["containerSpec"] = container
        return body


class Scheduling(_SpecModel):
    """Scheduling options; ``None`` / ``False`` leave Vertex AI's defaults."""

    timeout_s: int | None = None
    restart_job_on_worker_restart: bool = False
    disable_retries: bool = False
    strategy: Literal["STANDARD", "SPOT", "FLEX_START"] | None = None
    max_wait_duration_s: int | None = None

    def request_body(self) -> dict[str, Any]:
        """REST ``Scheduling``; empty when nothing differs from the API's defaults."""
        body: dict[str, Any] = {}
        if self.timeout_s is not None:
            body["timeout"] = _format_duration(self.timeout_s)
        if self.restart_job_on_worker_restart:
            body["restartJobOnWorkerRestart"] = True
        if self.disable_retries:
            body["disableRetries"] = True
        if self.strategy is not None:
            body["strategy"] = self.strategy
        if self.max_wait_duration_s is not None:
            body["maxWaitDuration"] = _format_duration(self.max_wait_duration_s)
        return body


class JobSpec(_SpecModel):
    """A training job, validated and fully defaulted: what providers and backends consume.

    ``spec_dict()`` is what runs (any change replaces the job); ``settings()`` is what only
    the provider uses (a change updates in place). ``JobSpec.from_data`` rebuilds a spec
    from those two dicts; it trusts them (they came from ``parse_job``).
    """

    #: The key of this kind of request body in `python -m provider render` output.
    request_kind: ClassVar[str] = "customJob"

    name: str
    display_name: str
    project: str | None = None
    region: str
    backend: Literal["vertex", "local"] = "vertex"
    #: By position: 0 primary, 1 workers, 2 parameter servers or reduction server,
    #: 3 evaluators; ``None`` keeps a free position before a later pool.
    worker_pools: list[WorkerPool | None]
    scheduling: Scheduling = Scheduling()
    service_account: str | None = None
    network: str | None = None
    reserved_ip_ranges: list[str] = []
    base_output_directory: str | None = None
    tensorboard: str | None = None
    enable_web_access: bool = False
    enable_dashboard_access: bool = False
    labels: dict[str, str] = {}
    kms_key: str | None = None
    persistent_resource_id: str | None = None
    experiment: str | None = None
    experiment_run: str | None = None
    # Provider-side settings.
    wait: WaitPolicy = WaitPolicy()
    adopt: str | None = None
    #: What preview should tell the user (each message names its stack config key): settings
    #: translated with a caveat, prebuilt images near their end of support. Never part of
    #: ``spec_dict()`` or ``settings()``: a new warning never resubmits a job.
    warnings: list[str] = Field(default=[], exclude=True)

    @property
    def parent(self) -> str:
        """The location the job is created in: ``projects/P/locations/R``."""
        return f"projects/{self.project or LOCAL_DEFAULT_PROJECT}/locations/{self.region}"

    @property
    def primary(self) -> WorkerPool:
        """Worker pool 0."""
        pool = self.worker_pools[0]
        assert pool is not None  # parse_job always sets the primary pool
        return pool

    def request_body(self) -> dict[str, Any]:
        """The exact Vertex AI REST ``CustomJob`` request body (camelCase, unset omitted).

        Deterministic: env sorted by name, no ``None``, booleans only when true, int64
        fields (replicaCount) as JSON strings and int32 fields as numbers, exactly as the
        proto3 JSON mapping prints them.
        """
        job_spec: dict[str, Any] = {
            "workerPoolSpecs": [p.request_body() if p else {} for p in self.worker_pools]
        }
        if scheduling := self.scheduling.request_body():
            job_spec["scheduling"] = scheduling
        optional_text = {
            "serviceAccount": self.service_account,
            "network": self.network,
            "tensorboard": self.tensorboard,
            "experiment": self.experiment,
            "experimentRun": self.experiment_run,
            "persistentResourceId": self.persistent_resource_id,
        }
        job_spec.update({k: v for k, v in optional_text.items() if v})
        if self.reserved_ip_ranges:
            job_spec["reservedIpRanges"] = list(self.reserved_ip_ranges)
        if self.base_output_directory:
            job_spec["baseOutputDirectory"] = {"outputUriPrefix": self.base_output_directory}
        if self.enable_web_access:
            job_spec["enableWebAccess"] = True
        if self.enable_dashboard_access:
            job_spec["enableDashboardAccess"] = True
        body: dict[str, Any] = {"displayName": self.display_name, "jobSpec": job_spec}
        if self.labels:
            body["labels"] = dict(sorted(self.labels.items()))
        if self.kms_key:
            body["encryptionSpec"] = {"kmsKeyName": self.kms_key}
        return body

    def settings(self) -> dict[str, Any]:
        """Provider-side settings (wait policy, adopted job) as plain data."""
        return self.model_dump(mode="json", include=set(_SETTINGS_FIELDS))

    def spec_dict(self) -> dict[str, Any]:
        """The canonical job (everything but the provider-side settings) as plain data."""
        return self.model_dump(mode="json", exclude=set(_SETTINGS_FIELDS))

    @classmethod
    def from_data(
        cls, spec: Mapping[str, Any], settings: Mapping[str, Any] | None = None
    ) -> JobSpec:
        """Rebuild a spec from ``spec_dict()`` and ``settings()`` output."""
        return cls.model_validate({**spec, **(settings or {})})


# ------------------------------------------------------- pydantic errors -> stack issues


def _unwrap(annotation: Any) -> Any:
    """Strip ``Annotated`` and ``| None`` from a field annotation."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _model_at(root: type[BaseModel], path: Sequence[str | int]) -> type[BaseModel] | None:
    """The config model found at ``path`` under ``root``, if there is one."""
    current: Any = root
    for part in path:
        current = _unwrap(current)
        origin = typing.get_origin(current)
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
        elif origin is list:
            current = typing.get_args(current)[0]
        elif origin is dict:
            current = typing.get_args(current)[1]
        else:
            return None
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unknown_key_message(root: type[BaseModel], loc: Sequence[str | int]) -> str:
    name = str(loc[-1])
    model = _model_at(root, loc[:-1])
    allowed = sorted(model.model_fields) if model else []
    if name == "secure":  # a {secure: ...} secret where a mapping of settings belongs
        return "secrets are only supported as env values; write this value in plain text"
    close = difflib.get_close_matches(name, allowed, n=1, cutoff=0.6)
    if close:
        return f"unknown key '{name}'; did you mean '{close[0]}'?"
    return f"unknown key '{name}'; the keys allowed here are {_one_of(allowed)}"


def _issues_from(exc: ValidationError, base: str, root: type[BaseModel]) -> list[Issue]:
    """Translate a pydantic ValidationError into stack config Issues (no pydantic text)."""
    issues: list[Issue] = []
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        kind = error["type"]
        value = error.get("input")
        ctx = error.get("ctx") or {}
        if kind == _ISSUE_ERROR:
            problems = ctx.get("problems") or []
            if problems:
                issues.extend(
                    Issue(_key(base, loc + tuple(sub)), bad, message)
                    for sub, bad, message in problems
                )
            else:
                issues.append(Issue(_key(base, loc), value, ctx["message"]))
            continue
        if kind == "extra_forbidden":
            issues.append(Issue(_key(base, loc), value, _unknown_key_message(root, loc)))
            continue
        if kind == "missing":
            message = f"'{loc[-1]}' is required here; add it"
            issues.append(Issue(_key(base, loc), None, message))
            continue
        if _is_secret(value):
            message = "secrets are only supported as env values; write this value in plain text"
        elif kind in ("greater_than_equal", "greater_than"):
            bound = ctx.get("ge", ctx.get("gt"))
            relation = "at least" if kind == "greater_than_equal" else "more than"
            message = f"must be {relation} {bound}"
        elif kind in _TYPE_MESSAGES:
            message = _TYPE_MESSAGES[kind]
        else:
            message = "is not a valid value here; see docs/config-shape.md"
        issues.append(Issue(_key(base, loc), value, message))
    return issues


# ---------------------------------------------------------------- cross-field resolution


class _JobResolver:
    """Applies defaults, pool inheritance and the rules that relate several keys."""

    def __init__(
        self, name: str, raw: Mapping[str, Any], config: JobConfig, stack: StackSettings
    ) -> None:
        self.name = name
        self.raw = raw
        self.config = config
        self.stack = stack
        self.base = f"{JOBS_KEY}.{name}"
        self.issues: list[Issue] = []
        self.backend: Literal["vertex", "local"] = typing.cast(
            Literal["vertex", "local"], config.backend or stack.backend
        )
        self.vertex = self.backend == "vertex"
        self.region = self._resolve_region()

    # -- helpers

    def key(self, *path: str | int) -> str:
        return _key(self.base, path)

    def fail(self, path: Sequence[str | int], value: Any, message: str) -> None:
        """Record an issue; its value is what the user wrote at ``path`` when there is one."""
        written: Any = self.raw
        for part in path:
            in_mapping = isinstance(written, Mapping) and part in written
            in_list = isinstance(written, list) and isinstance(part, int) and part < len(written)
            if not (in_mapping or in_list):
                written = _plain(value)
                break
            written = written[part]
        self.issues.append(Issue(_key(self.base, path), written, message))

    # -- job-level

    def _resolve_region(self) -> str:
        region = self.config.region or self.stack.region
        if not self.vertex:
            return region or LOCAL_DEFAULT_REGION
        if not self.stack.project:
            self.issues.append(Issue(GCP_PROJECT_KEY, None, platform_spec.NO_PROJECT_MESSAGE))
        if not region:
            self.fail(
                ("region",),
                None,
                "no region: set gcp:region for the stack or region for this job, e.g. us-central1",
            )
            return ""
        if region not in catalog.TRAINING_REGIONS:
            key = self.key("region") if self.config.region else GCP_REGION_KEY
            hint = _did_you_mean(region, catalog.TRAINING_REGIONS)
            self.issues.append(
                Issue(
                    key,
                    region,
                    f"Vertex AI custom training does not run in {region}.{hint} "
                    "Write a training region such as us-central1 or europe-west4",
                )
            )
        return region

    def resolve(self) -> JobSpec | None:
        config = self.config
        pools = self._resolve_pools()
        scheduling = self._resolve_scheduling()
        service_account, base_output_directory, tensorboard = self._platform_defaults()
        self._check_job_settings(service_account, tensorboard)
        wait = config.wait or WaitConfig()
        if self.issues:
            return None
        return JobSpec(
            name=self.name,
            display_name=config.display_name or self.name,
            project=self.stack.project,
            region=self.region,
            backend=self.backend,
            worker_pools=pools,
            scheduling=scheduling,
            service_account=service_account,
            network=config.network,
            reserved_ip_ranges=list(config.reserved_ip_ranges or []),
            base_output_directory=base_output_directory,
            tensorboard=tensorboard,
            enable_web_access=config.enable_web_access,
            enable_dashboard_access=config.enable_dashboard_access,
            labels=dict(
                sorted(
                    {
                        **(config.labels or {}),
                        **({RERUN_LABEL: config.rerun} if config.rerun is not None else {}),
                    }.items()
                )
            ),
            kms_key=config.kms_key,
            persistent_resource_id=config.persistent_resource_id,
            experiment=config.experiment,
            experiment_run=config.experiment_run,
            wait=WaitPolicy(until=typing.cast(Any, wait.until), timeout_s=wait.timeout),
            adopt=config.adopt,
        )

    def _platform_defaults(self) -> tuple[str | None, str | None, str | None]:
        """Service account, output directory and TensorBoard, with the platform's defaults.

        A vertex job that names no service account runs as the platform's; with no
        base_output_directory it writes under ``<output_root>/<job>``; ``tensorboard:
        true`` is the platform's TensorBoard. Local jobs take none of these (the local
        backend always gives a job AIP_TENSORBOARD_LOG_DIR, so ``true`` needs nothing).
        """
        config, stack = self.config, self.stack
        if not self.vertex:
            named = config.tensorboard if isinstance(config.tensorboard, str) else None
            return config.service_account, config.base_output_directory, named
        service_account = config.service_account or stack.service_account
        output = config.base_output_directory
        if output is None and stack.output_root:
            output = f"{stack.output_root.rstrip('/')}/{self.name}"
        tensorboard = config.tensorboard
        if tensorboard is True:
            tensorboard = stack.tensorboard
            if tensorboard is None:
                self.fail(
                    ("tensorboard",),
                    True,
                    "tensorboard: true means the platform's TensorBoard, and this stack has "
                    f"none: set {PLATFORM_KEY}.tensorboard.enabled: true (or name an "
                    f"existing one in {PLATFORM_KEY}.existing.tensorboard), or write a "
                    "TensorBoard resource name here",
                )
        elif tensorboard is False:
            tensorboard = None
        return service_account, output, typing.cast(str | None, tensorboard)

    def _image(self, image: str | None) -> str | None:
        """An image with no registry host (``trainer:1``) is in the platform repository."""
        repository = self.stack.image_repository
        if image is None or not self.vertex or not repository or "/" in image:
            return image
        return f"{repository.rstrip('/')}/{image}"

    # -- pools

    def _resolve_pools(self) -> list[WorkerPool | None]:
        config = self.config
        if config.parameter_servers is not None and config.reduction_server is not None:
            self.fail(
                ("reduction_server",),
                config.reduction_server.model_dump(exclude_unset=True),
                "parameter_servers and reduction_server both use worker pool 2; keep one",
            )
        primary = self._pool("primary", (), config, inherit=False)
        by_position: dict[int, WorkerPool | None] = {0: primary}
        for role, pool_config in (
            ("workers", config.workers),
            ("parameter_servers", config.parameter_servers),
            ("evaluators", config.evaluators),
        ):
            if pool_config is not None:
                by_position[POOL_POSITIONS[role]] = self._pool(
                    typing.cast(Role, role), (role,), pool_config, inherit=True
                )
        if config.reduction_server is not None and config.parameter_servers is None:
            by_position[POOL_POSITIONS["reduction_server"]] = self._reduction_server(
                config.reduction_server, by_position.get(POOL_POSITIONS["workers"])
            )
        self._check_tpu_single_pool(by_position)
        last = max(by_position)
        return [by_position.get(position) for position in range(last + 1)]

    def _pool(
        self, role: Role, path: tuple[str, ...], own: _PoolConfig, *, inherit: bool
    ) -> WorkerPool | None:
        """Resolve one pool; ``inherit`` takes unset keys from the primary (the job)."""
        parent: _PoolConfig = self.config
        set_keys = own.model_fields_set

        def pick(attribute: str) -> Any:
            value = getattr(own, attribute)
            if value is None and inherit and attribute not in ("accelerator", "tpu_topology"):
                return getattr(parent, attribute)
            return value

        # The program: image (+ command) or python_package, taken from the primary as a unit.
        if inherit and own.image is None and own.python_package is None:
            image, command, package = parent.image, parent.command, parent.python_package
            program_from = ()
        else:
            image, command, package = own.image, own.command, own.python_package
            program_from = path
        ok = True
        if image is not None and package is not None:
            self.fail(
                (*program_from, "python_package"),
                package.model_dump(),
                "set either image (a container) or python_package, not both",
            )
            ok = False
        elif image is None and package is None:
            self.fail(
                (*program_from, "image"),
                None,
                "nothing to run: set image (a container image URI) or python_package "
                "(executor_image, package_uris, module)",
            )
            ok = False
        if package is not None and command:
            self.fail(
                (*program_from, "command"),
                command,
                "command applies to container images only; for a Python package put "
                "arguments in args",
            )
            ok = False
        if package is not None:
            ok = self._check_package(program_from, package) and ok

        machine_name = pick("machine") or catalog.DEFAULT_MACHINE
        machine = catalog.MACHINE_TYPES[machine_name]
        machine_inherited = inherit and own.machine is None
        accelerator_config: AcceleratorConfig | None
        accelerator_inherited = False
        if "accelerator" in set_keys or not inherit:
            accelerator_config = own.accelerator
        elif not machine_inherited and machine.built_in is not None:
            accelerator_config = None  # its own accelerator-optimized machine: built-in GPUs
        else:
            accelerator_config = parent.accelerator
            accelerator_inherited = accelerator_config is not None
        accelerator = self._check_accelerator(
            path, machine, accelerator_config, inherited=accelerator_inherited
        )
        ok = ok and accelerator is not False
        topology = own.tpu_topology
        if topology is None and inherit and "tpu_topology" not in set_keys and machine_inherited:
            topology = parent.tpu_topology
        topology = self._check_topology(path, machine, topology)
        ok = ok and topology is not False
        disk = self._disk(path, machine, pick("disk"))
        ok = ok and disk is not None
        if not ok:
            return None
        return WorkerPool(
            role=role,
            replicas=getattr(own, "replicas", 1) if inherit else 1,
            machine=machine_name,
            accelerator=typing.cast(Accelerator | None, accelerator),
            tpu_topology=typing.cast(str | None, topology),
            disk=typing.cast(Disk, disk),
            image=self._image(image),
            command=list(command or []) if package is None else [],
            python_package=(
                PythonPackage(
                    executor_image=package.executor_image,
                    package_uris=list(package.package_uris or []),
                    module=package.module,
                )
                if package is not None
                else None
            ),
            args=list(pick("args") or []),
            env=dict(sorted((pick("env") or {}).items())),
        )

    def _check_package(self, path: Sequence[str], package: PythonPackageConfig) -> bool:
        """Package URIs (package_path is resolved before this), then vertex-only rules."""
        where = (*path, "python_package")
        if package.package_path is not None:
            self.fail(
                (*where, "package_path"),
                package.package_path,
                "a package directory is built into an sdist by `pulumi up` (and by `python "
                "-m provider render`), which put its URI first in package_uris; resolve "
                "the job with provider.packaging before parsing it",
            )
            return False
        if not package.package_uris:
            self.fail(
                (*where, "package_uris"),
                None,
                "nothing to install: list package_uris (sdists or wheels), or give "
                "package_path, a local package directory that pulumi up builds and uploads",
            )
            return False
        if not self.vertex:
            return True
        ok = True
        executor = package.executor_image
        if executor is None:
            self.fail(
                (*path, "python_package", "executor_image"),
                None,
                "the vertex backend runs Python packages on a prebuilt training image: set "
                "executor_image, e.g. "
                "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest",
            )
            ok = False
        elif catalog.PREBUILT_PREDICTION_IMAGE_MARKER in executor:
            self.fail(
                (*path, "python_package", "executor_image"),
                executor,
                "that is a prediction image; use the matching training image "
                "(.../vertex-ai/training/...)",
            )
            ok = False
        elif not executor.startswith(catalog.PREBUILT_TRAINING_IMAGE_PREFIXES):
            self.fail(
                (*path, "python_package", "executor_image"),
                executor,
                "executor_image must be a Vertex AI prebuilt training image "
                "(us-, europe- or asia-docker.pkg.dev/vertex-ai/training/...); for your own "
                "image use image instead of python_package",
            )
            ok = False
        for index, uri in enumerate(package.package_uris or []):
            if not uri.startswith(GCS_PREFIX):
                self.fail(
                    (*path, "python_package", "package_uris", index),
                    uri,
                    "the vertex backend installs packages from Cloud Storage: upload it and "
                    "write gs://bucket/path/trainer-0.1.tar.gz (local paths work on the "
                    "local backend only)",
                )
                ok = False
        return ok

    def _check_accelerator(
        self,
        path: Sequence[str],
        machine: catalog.MachineType,
        config: AcceleratorConfig | None,
        *,
        inherited: bool,
    ) -> Accelerator | Literal[False] | None:
        """Return the pool's accelerator, ``None`` for none, or ``False`` after an issue."""
        if config is None:
            return self._implied_accelerator(path, machine)
        where = (*path, "accelerator")
        inherited_note = (
            " (inherited from the primary pool: write accelerator: null here for none)"
            if inherited
            else ""
        )
        if config.type not in machine.accelerators:
            if machine.accelerators:
                takes = f"takes {_one_of(list(machine.accelerators))}"
            else:
                takes = "takes no accelerators"
            others = catalog.machines_taking(config.type)
            example = f"; machines that take {config.type} include {_one_of(others[:3])}"
            self.fail(
                (*where, "type"),
                config.type,
                f"{machine.name} {takes}{inherited_note}. Pick another accelerator or "
                f"machine{example if others else ''}",
            )
            return False
        counts = machine.accelerators[config.type]
        if config.count not in counts:
            self.fail(
                (*where, "count"),
                config.count,
                f"{machine.name} takes {config.type} in counts {_one_of(counts)}"
                f"{inherited_note}; write one of those",
            )
            return False
        offered = self._check_region_offers(path, config.type, ("accelerator", "type"))
        return Accelerator(type=config.type, count=config.count) if offered else False

    def _implied_accelerator(
        self, path: Sequence[str], machine: catalog.MachineType
    ) -> Accelerator | Literal[False] | None:
        """Return what a machine comes with when a pool names no accelerator."""
        if machine.built_in is not None:
            accelerator_type, count = machine.built_in
            offered = self._check_region_offers(path, accelerator_type, ("machine",))
            return Accelerator(type=accelerator_type, count=count) if offered else False
        if machine.tpu and not machine.tpu_topologies:
            self.fail(
                (*path, "accelerator"),
                None,
                f"{machine.name} needs an accelerator: write accelerator: "
                f"{{type: {_one_of(list(machine.accelerators))}, count: 8}}",
            )
            return False
        if machine.tpu:  # TPU machines with built-in chips: the machine type says it all
            (accelerator_type,) = machine.accelerators
            if not self._check_region_offers(path, accelerator_type, ("machine",)):
                return False
        return None

    def _check_region_offers(
        self, path: Sequence[str], accelerator_type: str, where: Sequence[str]
    ) -> bool:
        """Check (vertex backend) that the job's region offers ``accelerator_type``."""
        offered = catalog.TRAINING_ACCELERATORS_BY_REGION.get(self.region)
        if not self.vertex or offered is None or accelerator_type in offered:
            return True
        regions = catalog.regions_offering(accelerator_type)
        elsewhere = f"; it is offered in {_one_of(regions)}" if regions else ""
        self.fail(
            (*path, *where),
            accelerator_type,
            f"{accelerator_type} is not offered for training in {self.region}{elsewhere}. "
            f"Change region, or use an accelerator {self.region} offers: "
            f"{_one_of(sorted(offered))}",
        )
        return False

    def _check_topology(
        self, path: Sequence[str], machine: catalog.MachineType, topology: str | None
    ) -> str | Literal[False] | None:
        if topology is None:
            return machine.tpu_topologies[0] if machine.tpu_topologies else None
        if not machine.tpu_topologies:
            self.fail(
                (*path, "tpu_topology"),
                topology,
                f"{machine.name} has no TPU topology; tpu_topology applies to TPU machines "
                "(ct5lp-hightpu-*, ct4p-hightpu-4t): remove it",
            )
            return False
        if topology not in machine.tpu_topologies:
            self.fail(
                (*path, "tpu_topology"),
                topology,
                f"{machine.name} runs the {_one_of(machine.tpu_topologies)} topology on one "
                f"replica; write tpu_topology: {machine.tpu_topologies[0]}",
            )
            return False
        return topology

    def _disk(
        self, path: Sequence[str], machine: catalog.MachineType, config: DiskConfig | None
    ) -> Disk | None:
        disk_type = (config.type if config else None) or machine.default_disk_type
        size = config.size_gb if config else catalog.DEFAULT_DISK_SIZE_GB
        if disk_type not in machine.disk_types:
            self.fail(
                (*path, "disk", "type"),
                disk_type,
                f"{machine.name} boots from {_one_of(machine.disk_types)} only; write that type",
            )
            return None
        return Disk(type=disk_type, size_gb=size)

    def _reduction_server(
        self, config: ReductionServerConfig, workers: WorkerPool | None
    ) -> WorkerPool | None:
        path = ("reduction_server",)
        machine = catalog.MACHINE_TYPES[config.machine]
        ok = True
        if (
            workers is None
            or workers.accelerator is None
            or (workers.accelerator.type not in catalog.GPU_ACCELERATORS)
        ):
            self.fail(
                path,
                config.model_dump(exclude_unset=True),
                "a reduction server speeds up all-reduce between GPU workers: give workers an "
                "NVIDIA accelerator, or remove reduction_server",
            )
            ok = False
        if machine.built_in is not None or machine.tpu:
            self.fail(
                (*path, "machine"),
                config.machine,
                "reduction servers run on CPU machines; write e.g. "
                f"machine: {catalog.DEFAULT_REDUCTION_SERVER_MACHINE}",
            )
            ok = False
        disk = self._disk(path, machine, config.disk)
        if not ok or disk is None:
            return None
        return WorkerPool(
            role="reduction_server",
            replicas=config.replicas,
            machine=config.machine,
            disk=disk,
            image=catalog.REDUCTION_SERVER_IMAGE,
        )

    def _check_tpu_single_pool(self, by_position: Mapping[int, WorkerPool | None]) -> None:
        primary = by_position.get(0)
        if primary is None or not catalog.MACHINE_TYPES[primary.machine].tpu:
            return
        for role in ("workers", "parameter_servers", "reduction_server", "evaluators"):
            if getattr(self.config, role) is not None:
                self.fail(
                    (role,),
                    getattr(self.config, role).model_dump(exclude_unset=True),
                    f"TPU jobs run on one pool with one replica ({primary.machine}); remove {role}",
                )

    # -- job settings

    def _resolve_scheduling(self) -> Scheduling:
        config = self.config.scheduling or SchedulingConfig()
        if config.max_wait_duration is not None and config.strategy != FLEX_START:
            self.fail(
                ("scheduling", "max_wait_duration"),
                config.max_wait_duration,
                "max_wait_duration applies only with strategy: FLEX_START; set that strategy "
                "or remove max_wait_duration",
            )
        return Scheduling(
            timeout_s=config.timeout,
            restart_job_on_worker_restart=config.restart_job_on_worker_restart,
            disable_retries=config.disable_retries,
            strategy=typing.cast(Any, config.strategy),
            max_wait_duration_s=config.max_wait_duration,
        )

    def _check_job_settings(self, service_account: str | None, tensorboard: str | None) -> None:
        config = self.config
        if tensorboard and not service_account:
            self.fail(
                ("tensorboard",),
                config.tensorboard,
                "a job that writes to a TensorBoard needs service_account (one with "
                "roles/aiplatform.user and storage access); set service_account",
            )
        if config.reserved_ip_ranges and not config.network:
            self.fail(
                ("reserved_ip_ranges",),
                config.reserved_ip_ranges,
                "reserved IP ranges belong to a peered VPC network: set network as well",
            )
        if not self.vertex:
            return
        if config.base_output_directory and not config.base_output_directory.startswith(GCS_PREFIX):
            self.fail(
                ("base_output_directory",),
                config.base_output_directory,
                "the vertex backend writes outputs to Cloud Storage: write gs://bucket/path "
                "(local paths work on the local backend only)",
            )
        if config.kms_key and self.region:
            match = _KMS_KEY_RE.fullmatch(config.kms_key)
            if match and match["location"] != self.region:
                self.fail(
                    ("kms_key",),
                    config.kms_key,
                    f"the key must be in the job's region ({self.region}), not "
                    f"{match['location']}; use a key ring in {self.region}",
                )
        if config.adopt:
            self._check_adopt(config.adopt)

    def _check_adopt(self, name: str) -> None:
        project_id = self.stack.project or "PROJECT"
        tuning = self.config.study is not None
        collection = TUNING_JOBS if tuning else CUSTOM_JOBS
        example = f"projects/{project_id}/locations/{self.region}/{collection}/ID"
        match = _JOB_RESOURCE_RE.fullmatch(name)
        if match is None or match["collection"] != collection:
            kind = "hyperparameter tuning job" if tuning else "custom job"
            self.fail(("adopt",), name, f"must be a {kind} resource name: {example}")
            return
        project = match["project"]
        if project != self.stack.project and not project.isdigit():
            self.fail(
                ("adopt",),
                name,
                f"the job is in project {project}, not this stack's {self.stack.project}; "
                f"adopt a job of this project: {example}",
            )
        if match["location"] != self.region:
            self.fail(
                ("adopt",),
                name,
                f"the job is in {match['location']}, not this job's region {self.region}; set "
                f"region: {match['location']} or adopt a job in {self.region}",
            )


def _plain(value: Any) -> Any:
    """Models as dicts, so that Issue values print as the user wrote them."""
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    return value


# ------------------------------------------------- prebuilt images from a framework (issue 4)

#: What stands in for an image that ``provider.images`` refused (the job fails anyway).
_UNRESOLVED_IMAGE = "unresolved"
_POOL_ROLES: tuple[str, ...] = ("workers", "parameter_servers", "evaluators")


def _pool_hardware(pool: _PoolConfig, parent: _PoolConfig | None) -> str:
    """CPU, GPU or TPU: what a pool runs on, inheriting from ``parent`` as ``_JobResolver``."""
    machine_name = pool.machine or (parent.machine if parent else None) or catalog.DEFAULT_MACHINE
    machine = catalog.MACHINE_TYPES.get(machine_name)
    if machine is not None and machine.tpu:
        return images.TPU
    if parent is None or "accelerator" in pool.model_fields_set:
        accelerator = pool.accelerator
    elif pool.machine is not None and machine is not None and machine.built_in is not None:
        accelerator = None  # its own accelerator-optimized machine: the built-in GPUs
    else:
        accelerator = parent.accelerator
    if accelerator is not None:
        return images.GPU if accelerator.type in catalog.GPU_ACCELERATORS else images.CPU
    if machine is not None and machine.built_in is not None:
        return images.GPU if machine.built_in[0] in catalog.GPU_ACCELERATORS else images.CPU
    return images.CPU


def _program_hardware(pools: Sequence[tuple[_PoolConfig, _PoolConfig | None]]) -> str:
    """The image kind for pools sharing one program: TPU, else GPU if any pool has one."""
    kinds = [_pool_hardware(pool, parent) for pool, parent in pools]
    for kind in (images.TPU, images.GPU):
        if kind in kinds:
            return kind
    return images.CPU


def _prebuilt_images(
    base: str, config: JobConfig, stack: StackSettings, today: datetime.date | None
) -> tuple[JobConfig, list[Issue], list[Issue]]:
    """Fill image / executor_image from ``framework`` or ``runtime_version``.

    Returns the config with the images filled in, the issues and the warnings (each naming
    its key). CPU, GPU or TPU comes from every pool that runs the program, the registry
    host from the job's region.
    """
    resolver = _PrebuiltImages(base, config, stack, today or datetime.date.today())
    return resolver.resolve()


class _PrebuiltImages:
    """Picks the prebuilt images a job names by framework or legacy runtime version."""

    def __init__(
        self, base: str, config: JobConfig, stack: StackSettings, today: datetime.date
    ) -> None:
        self.base = base
        self.config = config
        self.today = today
        self.region = config.region or stack.region or LOCAL_DEFAULT_REGION
        self.issues: list[Issue] = []
        self.warnings: list[Issue] = []
        host = images.registry_host(self.region)
        self.unresolved = f"{host}/{images.IMAGE_PATH}/{_UNRESOLVED_IMAGE}:latest"

    def resolve(self) -> tuple[JobConfig, list[Issue], list[Issue]]:
        config = self.config
        if config.python_version is not None and config.runtime_version is None:
            self.issues.append(
                Issue(
                    _key(self.base, ("python_version",)),
                    config.python_version,
                    "python_version goes with runtime_version; with framework write "
                    "framework.python",
                )
            )
        self._job_program()
        for role in _POOL_ROLES:
            self._pool_program(role)
        return self.config, self.issues, self.warnings

    def _job_program(self) -> None:
        """The job's own program: ``framework``, ``runtime_version`` or the package's."""
        config = self.config
        package = config.python_package
        chosen = [
            key
            for key, value in (
                ("framework", config.framework),
                ("runtime_version", config.runtime_version),
                ("python_package.framework", package.framework if package else None),
            )
            if value is not None
        ]
        if not chosen:
            return
        if len(chosen) > 1:
            message = f"{_one_of(chosen, 'and')} each pick the image: keep one"
            self.issues.append(Issue(_key(self.base, (chosen[1],)), None, message))
            return
        existing = (package.executor_image if package else None) or config.image
        if existing is not None:
            self.issues.append(
                Issue(
                    _key(self.base, (chosen[0],)),
                    existing,
                    f"{chosen[0]} picks the prebuilt image, and the job names one already "
                    "(image or python_package.executor_image): keep one",
                )
            )
            return
        inheriting = [
            (pool, config)
            for role in _POOL_ROLES
            if (pool := getattr(config, role)) is not None
            and pool.image is None
            and pool.python_package is None
        ]
        kind = _program_hardware([(config, None), *inheriting])
        if package is not None and package.framework is not None:
            uri = self._framework_image(("python_package",), package.framework, kind)
        elif config.framework is not None:
            uri = self._framework_image((), config.framework, kind)
        else:
            uri = self._runtime_image(kind)
        if package is not None:
            new_package = package.model_copy(update={"executor_image": uri})
            self.config = config.model_copy(update={"python_package": new_package})
        else:
            self.config = config.model_copy(update={"image": uri})

    def _pool_program(self, role: str) -> None:
        """A pool's own ``python_package.framework``, for its own accelerators."""
        pool = getattr(self.config, role)
        package = pool.python_package if pool is not None else None
        if pool is None or package is None or package.framework is None:
            return
        if package.executor_image is not None:
            self.issues.append(
                Issue(
                    _key(self.base, (role, "python_package", "framework")),
                    package.executor_image,
                    "framework picks the executor image, and executor_image names one: keep one",
                )
            )
            return
        kind = _pool_hardware(pool, self.config)
        uri = self._framework_image((role, "python_package"), package.framework, kind)
        new_pool = pool.model_copy(
            update={"python_package": package.model_copy(update={"executor_image": uri})}
        )
        self.config = self.config.model_copy(update={role: new_pool})

    def _framework_image(self, path: tuple[str, ...], framework: FrameworkConfig, kind: str) -> str:
        choice = images.pick_image(
            framework.name,
            framework.version,
            framework.python,
            kind=kind,
            region=self.region,
            today=self.today,
        )
        if isinstance(choice, images.ImageRefusal):
            key = _key(self.base, (*path, "framework", choice.field))
            self.issues.append(Issue(key, getattr(framework, choice.field), choice.message))
            return self.unresolved
        key = _key(self.base, (*path, "framework", "version"))
        self.warnings.extend(Issue(key, framework.version, text) for text in choice.warnings)
        return choice.uri

    def _runtime_image(self, kind: str) -> str:
        config = self.config
        runtime_version = typing.cast(str, config.runtime_version)
        choice = images.pick_runtime_image(
            runtime_version, config.python_version, kind=kind, region=self.region, today=self.today
        )
        if isinstance(choice, images.ImageRefusal):
            key = _key(self.base, (choice.field,))
            self.issues.append(Issue(key, getattr(config, choice.field), choice.message))
            return self.unresolved
        key = _key(self.base, ("runtime_version",))
        self.warnings.extend(Issue(key, runtime_version, text) for text in choice.warnings)
        return choice.uri


# ------------------------------------------------------------------------ the public API


def parse_job(
    name: str,
    raw: Mapping[str, Any],
    stack: StackSettings,
    *,
    today: datetime.date | None = None,
) -> JobSpec:
    """Validate one job of the stack config; raise ``SpecError`` listing every issue.

    A job with a ``study:`` key is a hyperparameter tuning job: the result is then a
    ``provider.study.TuningJobSpec`` (a ``JobSpec`` whose other keys are the trial job).

    A job with ``training_input`` (a legacy AI Platform Training block) is translated to
    native keys first (``provider.legacy``); issues about translated keys name the legacy
    key. ``framework`` / ``runtime_version`` pick a prebuilt image (``provider.images``),
    judging end of support as of ``today`` (default: the current date). Warnings that do
    not stop the job are on the result's ``warnings``.
    """
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
    translation = legacy.translate_job(base, raw)  # issue 4: training_input -> native keys
    if translation.issues:
        raise SpecError(issues + list(translation.issues))
    raw = translation.native
    study, study_issues = _parse_study(raw, base)
    try:
        config = JobConfig.model_validate(dict(raw))
    except ValidationError as exc:
        found = issues + _issues_from(exc, base, JobConfig) + study_issues
        raise SpecError(translation.rekey_all(found)) from None
    config, image_issues, image_warnings = _prebuilt_images(base, config, stack, today)
    issues.extend(image_issues)
    resolver = _JobResolver(name, raw, config, stack)
    spec = resolver.resolve()
    issues.extend(resolver.issues)
    issues.extend(study_issues)
    if issues or spec is None:
        raise SpecError(translation.rekey_all(_dedupe(issues)))
    warnings = translation.rekey_all([*translation.warnings, *image_warnings])
    spec = spec.model_copy(update={"warnings": [str(warning) for warning in warnings]})
    if study is not None:
        from provider.study import TuningJobSpec

        return TuningJobSpec(**dict(spec), study=study)
    return spec


def _parse_study(raw: Mapping[str, Any], base: str) -> tuple[Any, list[Issue]]:
    """The job's ``study:`` block (provider.study), or (None, []) for a training job."""
    if STUDY_KEY not in raw:
        return None, []
    from provider.study import parse_study

    return parse_study(raw[STUDY_KEY], f"{base}.{STUDY_KEY}")


def _dedupe(issues: Iterable[Issue]) -> list[Issue]:
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


def _stack_settings(config: Mapping[str, Any], stack: str) -> tuple[StackSettings, list[Issue]]:
    """Stack-wide settings from raw config keys, with the issues found in them."""
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
            hint = _did_you_mean(name, STACK_CONFIG_KEYS)
            issues.append(
                Issue(
                    str(key),
                    config[key],
                    f"unknown key.{hint} This project's keys are "
                    f"{_one_of([f'{CONFIG_NAMESPACE}:{k}' for k in STACK_CONFIG_KEYS])}",
                )
            )
    backend = config.get(BACKEND_KEY) or "vertex"
    if backend not in BACKENDS:
        hint = _did_you_mean(str(backend), BACKENDS)
        message = f"must be {_one_of(BACKENDS)}" + (f".{hint}" if hint else "")
        issues.append(Issue(BACKEND_KEY, backend, message))
        backend = "local"  # keep checking the jobs without the vertex-only rules
    project = _stack_text(config, GCP_PROJECT_KEY, "my-project", issues)
    region = _stack_text(config, GCP_REGION_KEY, "us-central1", issues)
    api_endpoint = _stack_text(config, API_ENDPOINT_KEY, "127.0.0.1:50051", issues)
    platform, platform_issues = platform_spec.resolve_platform(
        config.get(PLATFORM_KEY),
        stack=stack,
        project=project,
        region=region,
        backend=backend,
        api_endpoint=api_endpoint,
    )
    issues.extend(platform_issues)
    settings = StackSettings(
        stack=stack,
        project=project,
        region=region,
        backend=backend,
        api_endpoint=api_endpoint,
        **(platform.job_defaults() if platform else {}),
    )
    return settings, issues


def parse_stack_settings(config: Mapping[str, Any], stack: str) -> StackSettings:
    """Validate the stack-wide keys only (``vertex-training:jobs`` is neither read nor needed).

    ``config`` holds raw config keys as in ``parse_stack``; raises ``SpecError``.
    """
    settings, issues = _stack_settings(config, stack)
    if issues:
        raise SpecError(_dedupe(issues))
    return settings


def parse_stack(config: Mapping[str, Any], stack: str) -> tuple[StackSettings, dict[str, JobSpec]]:
    """Validate a whole stack config (raw YAML keys); one ``SpecError`` lists every issue."""
    settings, issues = _stack_settings(config, stack)
    jobs_raw = config.get(JOBS_KEY) or {}
    jobs: dict[str, JobSpec] = {}
    if not isinstance(jobs_raw, Mapping):
        issues.append(Issue(JOBS_KEY, jobs_raw, "must be a mapping of job name: job settings"))
        jobs_raw = {}
    for name, raw in jobs_raw.items():
        try:
            jobs[str(name)] = parse_job(str(name), raw, settings)
        except SpecError as exc:
            issues.extend(exc.issues)
    if issues:
        raise SpecError(_dedupe(issues))
    return settings, jobs


_STACK_FILE_RE = re.compile(r"Pulumi\.(?P<stack>[^/]+)\.ya?ml")


def load_stack_file(path: str | PathLike[str]) -> tuple[StackSettings, dict[str, JobSpec]]:
    """Read and validate ``stacks/Pulumi.<stack>.yaml`` (the stack name from the file name).

    Secrets in the file (``{secure: ...}``) stay encrypted; in env values they become
    ``SecretValue`` placeholders.
    """
    stack, config = read_stack_file(path)
    return parse_stack(config, stack)


def read_stack_file(path: str | PathLike[str]) -> tuple[str, dict[str, Any]]:
    """The stack name and raw config keys of ``stacks/Pulumi.<stack>.yaml`` (unvalidated)."""
    import yaml  # only this entry point reads YAML

    file = Path(path)
    match = _STACK_FILE_RE.fullmatch(file.name)
    if match is None:
        raise SpecError([Issue(str(file), file.name, "stack files are named Pulumi.<stack>.yaml")])
    try:
        document = yaml.safe_load(file.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise SpecError(
            [Issue(str(file), None, f"is not valid YAML{where}: {problem}; fix the syntax")]
        ) from None
    if not isinstance(document, Mapping):
        raise SpecError([Issue(str(file), document, "must be a mapping with a config: key")])
    config = document.get("config") or {}
    if not isinstance(config, Mapping):
        raise SpecError([Issue(f"{file}: config", config, "must be a mapping of key: value")])
    return match["stack"], dict(config)
