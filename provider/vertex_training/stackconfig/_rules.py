"""Rules on single keys: durations, machine and accelerator names, labels, env, formats.

Each is a pydantic validator (or an ``Annotated`` type carrying one) that refuses a bad
value with the fix; rules that relate several keys are in ``_resolve``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
)

from vertex_training.api import failures
from vertex_training.api.labels import (
    MAX_LABEL_CHARS,
    MAX_LABELS,
    MAX_USER_LABELS,
    PROVIDER_LABEL_KEYS,
    RESERVED_LABEL_PREFIX,
    SUBMISSION_LABEL_KEYS,
    label_key_ok,
    label_value_ok,
)
from vertex_training.catalog import machines
from vertex_training.stackconfig._constants import (
    _CONTEXT_RE,
    _DURATION_RE,
    _EMAIL_RE,
    _ENV_NAME_RE,
    _KMS_KEY_RE,
    _NETWORK_RE,
    _PERSISTENT_RESOURCE_ID_RE,
    _PYTHON_MODULE_RE,
    _TENSORBOARD_RE,
    _TOPOLOGY_RE,
    MAX_DISPLAY_NAME_CHARS,
    MAX_ENV_VARS,
    MAX_PACKAGE_URIS,
    SECONDS_PER_DAY,
    SECONDS_PER_HOUR,
    SECONDS_PER_MINUTE,
    WAIT_UNTIL,
)
from vertex_training.stackconfig._issues import Problem, did_you_mean, invalid, is_secret, one_of


class SecretValue(BaseModel):
    """A Pulumi secret as stored in a stack file (``{secure: <ciphertext>}``); opaque here."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    secure: str


def _scalar_text(value: Any) -> Any:
    """YAML scalars as the text a user meant: 3 -> "3", true -> "true"; others unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return value


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


def _duration_before(value: Any) -> int:
    try:
        return parse_duration(value)
    except ValueError as exc:
        raise invalid(str(exc)) from None


def _positive_duration(seconds: int) -> int:
    if seconds <= 0:
        raise invalid("must be longer than zero; write e.g. 2h")
    return seconds


def _text_list_before(value: Any) -> Any:
    """Lists of YAML scalars as text (``[--epochs, 3]`` -> ``["--epochs", "3"]``)."""
    if isinstance(value, list | tuple):
        return [_scalar_text(v) for v in value]
    return value


def _non_empty(value: str) -> str:
    if not value.strip():
        raise invalid("must not be empty")
    return value


def _choice(
    allowed: Sequence[str], deprecated: Mapping[str, str] | None = None
) -> Callable[[Any], Any]:
    """A before-validator accepting exactly one of ``allowed`` (or null), with a suggestion."""

    def check(value: Any) -> Any:
        if value is None or (isinstance(value, str) and value in allowed):
            return value
        if isinstance(value, str) and deprecated and value in deprecated:
            raise invalid(f"{value} is deprecated; write {deprecated[value]}")
        hint = did_you_mean(value, allowed) if isinstance(value, str) else ""
        raise invalid(f"must be {one_of(allowed)}" + (f".{hint}" if hint else ""))

    return check


def _check_machine(value: str) -> str:
    if value in machines.MACHINE_TYPES:
        return value
    hint = did_you_mean(value, machines.MACHINE_TYPES)
    raise invalid(
        f"{value} is not a machine type Vertex AI custom training offers.{hint} "
        f"Write one such as {machines.DEFAULT_MACHINE}, n2-standard-8, g2-standard-8 or "
        "a2-highgpu-1g"
    )


def _check_accelerator_type(value: str) -> str:
    if value in machines.ACCELERATOR_TYPES:
        return value
    if value in machines.UNAVAILABLE_ACCELERATORS:
        raise invalid(f"{value}: {machines.UNAVAILABLE_ACCELERATORS[value]}")
    hint = did_you_mean(value, machines.ACCELERATOR_TYPES)
    raise invalid(
        f"{value} is not an accelerator type.{hint} Write one of "
        f"{one_of(machines.ACCELERATOR_TYPES)}"
    )


def _check_disk_type(value: str) -> str:
    if value in machines.DISK_TYPES:
        return value
    hint = did_you_mean(value, machines.DISK_TYPES)
    raise invalid(
        f"boot disk type must be {one_of(machines.DISK_TYPES)}" + (f".{hint}" if hint else "")
    )


def _check_disk_size(value: int) -> int:
    if machines.DISK_SIZE_GB_MIN <= value <= machines.DISK_SIZE_GB_MAX:
        return value
    raise invalid(
        f"boot disks are {machines.DISK_SIZE_GB_MIN} to {machines.DISK_SIZE_GB_MAX} GB; "
        "write a size in that range"
    )


def _check_topology(value: str) -> str:
    if _TOPOLOGY_RE.fullmatch(value):
        return value
    raise invalid("a TPU topology looks like 2x2 or 2x2x1")


def _check_display_name(value: str) -> str:
    if 1 <= len(value) <= MAX_DISPLAY_NAME_CHARS:
        return value
    raise invalid(
        f"a display name has 1 to {MAX_DISPLAY_NAME_CHARS} characters; "
        f"this one has {len(value)}: shorten it"
    )


def _check_python_module(value: str) -> str:
    if _PYTHON_MODULE_RE.fullmatch(value):
        return value
    raise invalid("must be a Python module path such as trainer.task (no .py, no slashes)")


def _check_package_uris(value: list[str]) -> list[str]:
    if not 1 <= len(value) <= MAX_PACKAGE_URIS:
        raise invalid(
            f"list 1 to {MAX_PACKAGE_URIS} package URIs (the trainer's sdist or wheel first)"
        )
    return value


def _pattern(regex: re.Pattern[str], example: str, what: str) -> Callable[[str], str]:
    """An after-validator requiring a full match of ``regex``."""

    def check(value: str) -> str:
        if regex.fullmatch(value):
            return value
        raise invalid(f"must be {what}, like {example}")

    return check


def _env_before(value: Any) -> Any:
    """Env maps: names checked, scalars as text, ``{secure: ...}`` kept as a secret."""
    if not isinstance(value, Mapping):
        raise invalid("must be a mapping of NAME: value lines")
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
        if is_secret(raw) and isinstance(raw["secure"], str):
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
        raise invalid("invalid environment", problems)
    return env


def _labels_before(value: Any) -> Any:
    """Labels: GCP label rules plus this provider's reserved keys; every problem reported."""
    if not isinstance(value, Mapping):
        raise invalid("must be a mapping of key: value lines")
    problems: list[Problem] = []
    labels: dict[str, str] = {}
    for key, raw in value.items():
        text = "" if raw is None else _scalar_text(raw)  # `key:` with no value in YAML
        if not isinstance(key, str) or not label_key_ok(key):
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
        if not label_value_ok(text):
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
    if len(value) > MAX_USER_LABELS:
        problems.append(
            (
                (),
                len(value),
                f"at most {MAX_USER_LABELS} labels (Vertex AI takes {MAX_LABELS}; the "
                f"provider sets {', '.join(SUBMISSION_LABEL_KEYS)}); remove some",
            )
        )
    if problems:
        raise invalid("invalid labels", problems)
    return labels


def _accelerator_before(value: Any) -> Any:
    """``accelerator: NVIDIA_TESLA_T4`` is a common slip: say what the mapping looks like.
    ``accelerator: {count: 0}`` means none, as ``null`` does: the form every language's
    types can write (a typed SDK has no null for it). With a type, a count of 0 is a
    mistake (none, or the count left at 0?), refused on ``accelerator.count``: it never
    silently drops the accelerator the job names."""
    if isinstance(value, str):
        raise invalid(f"write the accelerator as a mapping: {{type: {value}, count: 1}}")
    if isinstance(value, Mapping) and value.get("count") == 0:
        if value.get("type") is None:
            return None
        message = (
            f"{value['type']} with a count of 0 runs no accelerator: write a count of at "
            "least 1 to attach it, or accelerator: {count: 0} (null in a stack file) to run "
            "without one"
        )
        raise invalid(message, [(("count",), 0, message)])
    return value


def _tensorboard_before(value: Any) -> Any:
    """``tensorboard: true`` is the stack platform's TensorBoard; text is a resource name."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str) and _TENSORBOARD_RE.fullmatch(value):
        return value
    raise invalid(
        "must be true (the platform's TensorBoard), false, or a Vertex AI TensorBoard "
        "resource name, like projects/my-project/locations/us-central1/tensorboards/123"
    )


def _wait_before(value: Any) -> Any:
    """``wait: succeeded`` is short for ``wait: {until: succeeded}``."""
    if isinstance(value, str):
        if value not in WAIT_UNTIL:
            hint = did_you_mean(value, WAIT_UNTIL)
            raise invalid(f"must be {one_of(WAIT_UNTIL)}" + (f".{hint}" if hint else ""))
        return {"until": value}
    return value


def _retry_class(value: Any) -> Any:
    """An entry of ``retry.when``: a failure class that is not the job's own
    (``vertex_training.api.failures.RETRYABLE``)."""
    if isinstance(value, str) and value in failures.RETRYABLE:
        return value
    if isinstance(value, str) and value in failures.CLASSES:
        raise invalid(
            f"{value} failures are not retried: the same job fails the same way again. "
            f"Fix the job instead, and list only {one_of(failures.RETRYABLE)}"
        )
    hint = did_you_mean(value, failures.RETRYABLE) if isinstance(value, str) else ""
    raise invalid(f"must be {one_of(failures.RETRYABLE)}" + (f".{hint}" if hint else ""))


RetryClass = Annotated[str, BeforeValidator(_retry_class)]


NonEmptyText = Annotated[str, AfterValidator(_non_empty)]


def _rerun_before(value: Any) -> Any:
    """`rerun` is a label value: a number or lowercase text (letters, digits, _ and -).

    Whole numbers may arrive as floats (2.0): Pulumi carries numbers as doubles.
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if not isinstance(text, str) or not text or not label_value_ok(text):
        raise invalid(
            "must be a number or up to 63 lowercase letters, digits, '_' or '-' "
            "(it becomes a label); write e.g. rerun: 2"
        )
    return text


TextList = Annotated[list[str], BeforeValidator(_text_list_before)]
#: A duration takes text (``90m``) or seconds, and holds seconds.
Duration = Annotated[int, BeforeValidator(_duration_before, json_schema_input_type=str | int)]
PositiveDuration = Annotated[
    int,
    BeforeValidator(_duration_before, json_schema_input_type=str | int),
    AfterValidator(_positive_duration),
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
