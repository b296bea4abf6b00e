"""A job's REST body -> its stack config keys: the reverse of ``JobSpec.request_body()``,
for ``pulumi import`` of a job made outside Pulumi.

``config_of_request`` reads a ``CustomJob`` or ``HyperparameterTuningJob`` as the server
returns it (camelCase, proto3 JSON: int64 fields as strings, durations as ``"7200s"``,
fields at their default left out) and returns the job's keys under
``vertex-training:jobs.<name>`` (docs/config-shape.md), such that parsing them again gives
back the same request. Output-only fields (``name``, ``state``, times, ``error``,
``webAccessUris``, ``trials``, ...) are read past; the provider's own labels are dropped,
and so are the labels pulumi-gcp and Terraform put on what they create
(``ATTRIBUTION_LABEL_KEYS``).

Each key takes the form a user would write: a machine by its name, an accelerator as
``{type, count}``, durations as ``2h`` or ``1h30m``, a pool's keys only where they differ
from what it inherits from the primary pool, a boot disk only where it differs from the
API's defaults. A field no key writes (``studySpec.observationNoise``, a parameter's
``defaultValue``, a field a newer API added) raises ``UnmappedField`` naming it: a job is
never imported as something else.

The catalogue is a higher layer than this one: the reading assumes a body the server
accepted (an accelerator-optimized machine carries its own GPUs, a TPU machine its
topology), and ``vertex_training.stackconfig.parse_job`` judges the keys as it judges any.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from vertex_training.api import image_refs
from vertex_training.api.bodies import (
    JOB_SPEC_KEY,
    PASS_THROUGH_FIELDS,
    SPECIFIC_RESERVATION,
    TRIAL_JOB_SPEC_KEY,
    is_tuning_body,
)
from vertex_training.api.labels import (
    ATTRIBUTION_LABEL_KEYS,
    RERUN_LABEL,
    RESERVED_LABEL_PREFIX,
    SUBMISSION_LABEL_KEYS,
)

__all__ = [
    "API_DISK_SIZE_GB",
    "API_DISK_TYPE",
    "OUTPUT_ONLY_FIELDS",
    "REDUCTION_SERVER_IMAGE",
    "RESERVATION_NAME_KEY",
    "UnmappedField",
    "config_of_request",
]


class UnmappedField(ValueError):
    """A field of a job's body that no stack config key writes as it is: ``field`` is its
    path in the body (``jobSpec.workerPoolSpecs[1].machineSpec.tpuTopology``), ``value``
    what the body holds there."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field = field
        self.value = value
        super().__init__(f"{field}: {reason} (got {value!r}); the job cannot be imported as it is")


def _names(text: str) -> frozenset[str]:
    """Field names, written one after another."""
    return frozenset(text.split())


#: Fields the server fills in, read past (google/cloud/aiplatform/v1 custom_job.proto and
#: hyperparameter_tuning_job.proto, "Output only", google-cloud-aiplatform 2.7.0).
OUTPUT_ONLY_FIELDS: Mapping[str, frozenset[str]] = {
    "customJob": _names(
        "name state createTime startTime endTime updateTime error webAccessUris "
        "satisfiesPzs satisfiesPzi"
    ),
    "hyperparameterTuningJob": _names(
        "name trials state createTime startTime endTime updateTime error satisfiesPzs satisfiesPzi"
    ),
}

#: The fields each message of a request may hold, by the message's name in aiplatform v1
#: (RangeValueSpec: a double or integer parameter's; ListValueSpec: a categorical or
#: discrete parameter's, and a condition's parent values; StoppingSpec: the decay curve
#: and median rules'): what some stack config key writes. Every other field is refused.
_FIELDS: Mapping[str, frozenset[str]] = {
    "CustomJob": _names(f"displayName {JOB_SPEC_KEY} labels encryptionSpec"),
    "HyperparameterTuningJob": _names(
        "displayName studySpec maxTrialCount parallelTrialCount maxFailedTrialCount "
        f"{TRIAL_JOB_SPEC_KEY} labels encryptionSpec"
    ),
    "EncryptionSpec": _names("kmsKeyName"),
    "CustomJobSpec": _names("workerPoolSpecs scheduling pscInterfaceConfig baseOutputDirectory")
    | frozenset(PASS_THROUGH_FIELDS.values()),
    "WorkerPoolSpec": _names(
        "containerSpec pythonPackageSpec machineSpec replicaCount diskSpec nfsMounts lustreMounts"
    ),
    "ContainerSpec": _names("imageUri command args env"),
    "PythonPackageSpec": _names("executorImageUri packageUris pythonModule args env"),
    "EnvVar": _names("name value"),
    "MachineSpec": _names(
        "machineType acceleratorType acceleratorCount gpuPartitionSize tpuTopology "
        "reservationAffinity"
    ),
    "ReservationAffinity": _names("reservationAffinityType key values"),
    "DiskSpec": _names("bootDiskType bootDiskSizeGb"),
    "NfsMount": _names("server path mountPoint"),
    "LustreMount": _names("instanceIp volumeHandle filesystem mountPoint"),
    "Scheduling": _names(
        "timeout restartJobOnWorkerRestart disableRetries strategy maxWaitDuration"
    ),
    "PscInterfaceConfig": _names("networkAttachment dnsPeeringConfigs"),
    "DnsPeeringConfig": _names("domain targetProject targetNetwork"),
    "GcsDestination": _names("outputUriPrefix"),
    "StudySpec": _names(
        "metrics parameters algorithm measurementSelectionType decayCurveStoppingSpec "
        "medianAutomatedStoppingSpec convexAutomatedStoppingSpec"
    ),
    "MetricSpec": _names("metricId goal"),
    "ParameterSpec": _names(
        "parameterId doubleValueSpec integerValueSpec categoricalValueSpec "
        "discreteValueSpec scaleType conditionalParameterSpecs"
    ),
    "RangeValueSpec": _names("minValue maxValue"),
    "ListValueSpec": _names("values"),
    "ConditionalParameterSpec": _names(
        "parentCategoricalValues parentIntValues parentDiscreteValues parameterSpec"
    ),
    "StoppingSpec": _names("useElapsedDuration"),
    "ConvexAutomatedStoppingSpec": _names(
        "maxStepCount minStepCount minMeasurementCount learningRateParameterName "
        "useElapsedDuration updateAllStoppedTrials"
    ),
}

#: Label keys the provider puts on every job it submits (``resources.submission``): not
#: the user's, so not written back. The ``rerun`` label becomes the ``rerun`` key.
_SUBMISSION_LABELS = frozenset(SUBMISSION_LABEL_KEYS)

#: The API's boot disk when a pool names none (DiskSpec: "pd-ssd", 100 GB). A disk that
#: differs is written; the machines that boot from hyperdisk only say so in the body.
API_DISK_TYPE: Final = "pd-ssd"
API_DISK_SIZE_GB: Final = 100
#: Google's reduction server image, as ``catalog.machines.REDUCTION_SERVER_IMAGE`` names it
#: (the catalogue is a higher layer; tests/test_job_config.py checks that they agree).
#: Worker pool 2 running exactly this image, and nothing else, is ``reduction_server``.
REDUCTION_SERVER_IMAGE: Final = (
    "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"
)
#: ``ReservationAffinity.key`` of a reservation named by its name (reservation_affinity
#: .proto): ``reservation_affinity`` leaves it out, the stack config's default.
RESERVATION_NAME_KEY: Final = "compute.googleapis.com/reservation-name"
#: The keys of worker pools 1 to 3; pool 2 is ``reduction_server`` when it runs its image.
_POOL_POSITIONS = {"workers": 1, "parameter_servers": 2, "evaluators": 3}
_MAX_POOLS = 4

#: An enum's zero value (``STRATEGY_UNSPECIFIED``, ...): unset, the key left out.
_UNSET_ENUM = "_UNSPECIFIED"
#: REST enum values -> the stack config's words (study.proto).
_SCALES = {
    "UNIT_LINEAR_SCALE": "linear",
    "UNIT_LOG_SCALE": "log",
    "UNIT_REVERSE_LOG_SCALE": "reverse_log",
}
_ALGORITHMS = {"GRID_SEARCH": "grid", "RANDOM_SEARCH": "random"}
_MEASUREMENT_SELECTIONS = {"BEST_MEASUREMENT": "best", "LAST_MEASUREMENT": "last"}
_EARLY_STOPPING_RULES: Mapping[str, str] = {
    "decayCurveStoppingSpec": "decay_curve",
    "medianAutomatedStoppingSpec": "median",
    "convexAutomatedStoppingSpec": "convex",
}
#: A conditional parameter's parent values, by the field that holds them.
_PARENT_VALUES = ("parentCategoricalValues", "parentIntValues", "parentDiscreteValues")

#: A protobuf Duration in JSON: seconds with up to 9 fractional digits.
_DURATION_RE = re.compile(r"(\d+)(?:\.(\d{1,9}))?s")
_SECONDS_PER_UNIT = (("d", 86_400), ("h", 3600), ("m", 60), ("s", 1))
#: Whole numbers up to this are written without a decimal point (exactly representable).
_PLAIN_INTEGER_LIMIT = 2**53


def config_of_request(
    body: Mapping[str, Any], *, name: str | None = None, region: str | None = None
) -> dict[str, Any]:
    """The stack config keys of a job whose REST body (``CustomJob`` or
    ``HyperparameterTuningJob``, as the server returns it) is ``body``.

    ``name``: the job's name in the stack config; ``display_name`` is left out when it is
    that name (parse_job's default). ``region``: the stack's ``gcp:region``; a job whose
    resource ``name`` is in another location gets a ``region`` key. Without them, every
    display name is kept and no region key is written.

    Raises ``UnmappedField`` for a field no stack config key writes as it is.
    """
    tuning = is_tuning_body(body)
    kind = "HyperparameterTuningJob" if tuning else "CustomJob"
    _check(body, "", kind, OUTPUT_ONLY_FIELDS["hyperparameterTuningJob" if tuning else "customJob"])
    spec_key = TRIAL_JOB_SPEC_KEY if tuning else JOB_SPEC_KEY
    if spec_key not in body:
        raise UnmappedField(spec_key, None, "missing: a job runs worker pools")
    spec = _check(body[spec_key], spec_key, "CustomJobSpec")
    config = _pool_keys(spec, spec_key)
    display_name = body.get("displayName")
    if not display_name:
        raise UnmappedField("displayName", display_name, "missing: every job has a display name")
    if display_name != name:
        config["display_name"] = display_name
    if region is not None and (location := _location(body.get("name"))) not in (None, region):
        config["region"] = location
    config.update(_job_spec_keys(spec, spec_key))
    labels, rerun = _labels(body.get("labels") or {})
    if labels:
        config["labels"] = labels
    if "encryptionSpec" in body:
        encryption = _check(body["encryptionSpec"], "encryptionSpec", "EncryptionSpec")
        if encryption.get("kmsKeyName"):
            config["kms_key"] = encryption["kmsKeyName"]
    if rerun is not None:
        config["rerun"] = rerun
    if tuning:
        config["study"] = _study(body)
    return config


# -- reading the body


def _check(
    value: Any, path: str, message: str, also: frozenset[str] = frozenset()
) -> Mapping[str, Any]:
    """``value``, a JSON object at ``path`` of the ``message`` kind, once every field of it
    is known (a field of ``_FIELDS[message]`` or of ``also``)."""
    if not isinstance(value, Mapping):
        raise UnmappedField(path or "(the body)", value, f"is not a JSON object ({message})")
    for name, item in value.items():
        if name not in _FIELDS[message] and name not in also:
            reason = f"no stack config key writes this field of {message}"
            raise UnmappedField(_at(path, name), item, reason)
    return value


def _at(path: str, name: str | int) -> str:
    """The path of a field (``name``) or list item (an index) under ``path``."""
    if isinstance(name, int):
        return f"{path}[{name}]"
    return f"{path}.{name}" if path else name


def _items(value: Any, path: str) -> list[Any]:
    """A JSON list (absent: empty)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise UnmappedField(path, value, "is not a JSON list")
    return value


def _texts(value: Any, path: str) -> list[str]:
    """A JSON list of strings."""
    items = _items(value, path)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise UnmappedField(_at(path, index), item, "is not text")
    return list(items)


def _whole(value: Any, path: str) -> int:
    """An integer field: a JSON number, or a decimal string (int64 in proto3 JSON); absent,
    proto3's default 0."""
    if value is None:
        return 0
    whole = isinstance(value, int | str) and not isinstance(value, bool)
    if whole and re.fullmatch(r"-?\d+", str(value).strip()):
        return int(value)
    raise UnmappedField(path, value, "is not a whole number")


def _number(value: Any, path: str) -> int | float:
    """A double field, as a user writes it: 16 rather than 16.0, 0.001 as it is."""
    if value is None:
        value = 0.0
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UnmappedField(path, value, "is not a number") from None
    if isinstance(value, bool) or not math.isfinite(number):
        raise UnmappedField(path, value, "is not a finite number")
    if number.is_integer() and abs(number) <= _PLAIN_INTEGER_LIMIT:
        return int(number)
    return number


def _duration(value: Any, path: str) -> str:
    """A protobuf Duration (``"5400s"``) as the stack config writes it (``1h30m``)."""
    match = _DURATION_RE.fullmatch(value) if isinstance(value, str) else None
    if match is None:
        raise UnmappedField(path, value, 'is not a duration in seconds, like "7200s"')
    seconds, fraction = int(match.group(1)), match.group(2) or ""
    if fraction.strip("0"):
        raise UnmappedField(path, value, "has a fraction of a second; durations are whole seconds")
    parts: list[str] = []
    for unit, size in _SECONDS_PER_UNIT:
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts) or "0s"


def _location(job_name: Any) -> str | None:
    """The location in a job's resource name (``projects/P/locations/L/customJobs/ID``),
    by the client's path helpers; None for no such name."""
    if not isinstance(job_name, str) or not job_name:
        return None
    from google.cloud.aiplatform_v1 import JobServiceClient

    parts = JobServiceClient.parse_custom_job_path(job_name)
    parts = parts or JobServiceClient.parse_hyperparameter_tuning_job_path(job_name)
    return parts.get("location")


def _labels(value: Any) -> tuple[dict[str, str], str | int | None]:
    """The user's labels (the provider's own dropped) and the ``rerun`` value, if any."""
    if not isinstance(value, Mapping):
        raise UnmappedField("labels", value, "is not a JSON object")
    labels: dict[str, str] = {}
    rerun: str | int | None = None
    for key, text in sorted(value.items()):
        if not isinstance(text, str):
            raise UnmappedField(_at("labels", key), text, "is not text")
        if key in _SUBMISSION_LABELS or key in ATTRIBUTION_LABEL_KEYS:
            continue
        if key == RERUN_LABEL:
            rerun = int(text) if text.isdigit() and str(int(text)) == text else text
        elif key.startswith(RESERVED_LABEL_PREFIX):
            reason = f"a key starting with '{RESERVED_LABEL_PREFIX}', Google's: labels refuses it"
            raise UnmappedField(_at("labels", key), text, reason)
        else:
            labels[key] = text
    return labels, rerun


# -- worker pools


@dataclass(frozen=True)
class _Pool:
    """One worker pool, each setting in the form its stack config key takes."""

    replicas: int
    #: ``{image, command}`` or ``{python_package}``.
    program: dict[str, Any]
    args: list[str]
    env: dict[str, str]
    machine: str
    accelerator: dict[str, Any] | None
    tpu_topology: str | None
    reservation: str | dict[str, Any] | None
    partition: str | None
    #: Only what differs from the API's boot disk.
    disk: dict[str, Any]
    nfs_mounts: list[dict[str, str]]
    lustre_mounts: list[dict[str, str]]

    @property
    def is_reduction_server(self) -> bool:
        """Whether the pool runs Google's reduction server image and nothing else."""
        settings = (self.args, self.env, self.accelerator, self.tpu_topology, self.reservation)
        more = (self.partition, self.nfs_mounts, self.lustre_mounts)
        return self.program == {"image": REDUCTION_SERVER_IMAGE} and not any(settings + more)


def _pool_keys(spec: Mapping[str, Any], spec_key: str) -> dict[str, Any]:
    """The keys of the primary pool and the ``workers``, ``parameter_servers`` /
    ``reduction_server`` and ``evaluators`` pools."""
    path = _at(spec_key, "workerPoolSpecs")
    bodies = _items(spec.get("workerPoolSpecs"), path)
    if not bodies or not bodies[0]:
        raise UnmappedField(_at(path, 0), bodies[0] if bodies else None, "no primary pool")
    if len(bodies) > _MAX_POOLS:
        raise UnmappedField(_at(path, _MAX_POOLS), bodies[_MAX_POOLS], "a fifth worker pool")
    if not bodies[-1]:
        raise UnmappedField(_at(path, len(bodies) - 1), {}, "an empty pool after the last one")
    primary = _pool(bodies[0], _at(path, 0))
    if primary.replicas != 1:
        raise UnmappedField(
            _at(_at(path, 0), "replicaCount"),
            primary.replicas,
            "the primary pool runs one replica (Vertex AI's rule); the stack config "
            "writes more machines as workers",
        )
    config = _primary_keys(primary)
    for key, position in _POOL_POSITIONS.items():
        if position >= len(bodies) or not bodies[position]:
            continue
        pool = _pool(bodies[position], _at(path, position))
        if key == "parameter_servers" and pool.is_reduction_server:
            config["reduction_server"] = _reduction_server_keys(pool)
        else:
            config[key] = _inheriting_keys(pool, primary)
    return config


def _pool(value: Any, path: str) -> _Pool:
    """One WorkerPoolSpec, read."""
    body = _check(value, path, "WorkerPoolSpec")
    program, args, env = _program(body, path)
    machine_path = _at(path, "machineSpec")
    machine = _check(body.get("machineSpec"), machine_path, "MachineSpec")
    if not machine.get("machineType"):
        raise UnmappedField(_at(machine_path, "machineType"), None, "missing")
    accelerator_type = machine.get("acceleratorType")
    accelerator = None
    if accelerator_type and not str(accelerator_type).endswith(_UNSET_ENUM):
        count = _whole(machine.get("acceleratorCount"), _at(machine_path, "acceleratorCount"))
        accelerator = {"type": accelerator_type, "count": count}
    disk_path = _at(path, "diskSpec")
    disk_body = _check(body.get("diskSpec") or {}, disk_path, "DiskSpec")
    disk: dict[str, Any] = {}
    if (disk_type := disk_body.get("bootDiskType") or API_DISK_TYPE) != API_DISK_TYPE:
        disk["type"] = disk_type
    size = _whole(disk_body.get("bootDiskSizeGb"), _at(disk_path, "bootDiskSizeGb"))
    if size and size != API_DISK_SIZE_GB:
        disk["size_gb"] = size
    return _Pool(
        replicas=_whole(body.get("replicaCount"), _at(path, "replicaCount")),
        program=program,
        args=args,
        env=env,
        machine=str(machine["machineType"]),
        accelerator=accelerator,
        tpu_topology=machine.get("tpuTopology") or None,
        reservation=_reservation(machine.get("reservationAffinity"), machine_path),
        partition=machine.get("gpuPartitionSize") or None,
        disk=disk,
        nfs_mounts=_objects(body.get("nfsMounts"), _at(path, "nfsMounts"), "NfsMount"),
        lustre_mounts=_objects(body.get("lustreMounts"), _at(path, "lustreMounts"), "LustreMount"),
    )


def _program(
    body: Mapping[str, Any], path: str
) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """What a pool runs (``{image, command}`` or ``{python_package}``), its args and env."""
    if "containerSpec" in body and "pythonPackageSpec" in body:
        raise UnmappedField(
            _at(path, "pythonPackageSpec"), body["pythonPackageSpec"], "beside a containerSpec"
        )
    if "pythonPackageSpec" in body:
        where = _at(path, "pythonPackageSpec")
        spec = _check(body["pythonPackageSpec"], where, "PythonPackageSpec")
        package: dict[str, Any] = {}
        if spec.get("executorImageUri"):
            package["executor_image"] = spec["executorImageUri"]
        package["package_uris"] = _texts(spec.get("packageUris"), _at(where, "packageUris"))
        package["module"] = spec.get("pythonModule", "")
        program: dict[str, Any] = {"python_package": package}
    elif "containerSpec" in body:
        where = _at(path, "containerSpec")
        spec = _check(body["containerSpec"], where, "ContainerSpec")
        image = spec.get("imageUri")
        if not isinstance(image, str) or not image:
            raise UnmappedField(_at(where, "imageUri"), image, "missing: a container to run")
        if image_refs.in_repository(image, "platform-repository") != image:
            raise UnmappedField(
                _at(where, "imageUri"),
                image,
                "a bare image name, which the image key reads as the stack platform's "
                "repository (docs/config-shape.md, image references)",
            )
        program = {"image": image}
        if command := _texts(spec.get("command"), _at(where, "command")):
            program["command"] = command
    else:
        raise UnmappedField(path, dict(body), "runs nothing: no containerSpec or pythonPackageSpec")
    return program, _texts(spec.get("args"), _at(where, "args")), _env(spec.get("env"), where)


def _env(value: Any, path: str) -> dict[str, str]:
    """An EnvVar list as the env mapping, by name."""
    env: dict[str, str] = {}
    where = _at(path, "env")
    for index, item in enumerate(_items(value, where)):
        var = _check(item, _at(where, index), "EnvVar")
        name = var.get("name")
        if not isinstance(name, str) or name in env:
            reason = "a second variable of that name: env holds each name once"
            raise UnmappedField(_at(_at(where, index), "name"), name, reason)
        env[name] = str(var.get("value", ""))
    return env


def _reservation(value: Any, path: str) -> str | dict[str, Any] | None:
    """``reservation_affinity``: the type alone, or ``{type, values}`` of a specific one."""
    if value is None:
        return None
    where = _at(path, "reservationAffinity")
    body = _check(value, where, "ReservationAffinity")
    kind = body.get("reservationAffinityType")
    key, values = body.get("key"), _texts(body.get("values"), _at(where, "values"))
    if kind != SPECIFIC_RESERVATION:  # any or none: the type alone (a key or values is refused)
        extra = {"key": key} if key else {}
        return {"type": kind, **extra, "values": values} if key or values else kind
    if not key:
        raise UnmappedField(
            _at(where, "key"),
            key,
            f"missing: reservation_affinity always sends {RESERVATION_NAME_KEY} with a "
            "specific reservation",
        )
    config: dict[str, Any] = {"type": kind, "values": values}
    if key != RESERVATION_NAME_KEY:
        config["key"] = key
    return config


def _objects(value: Any, path: str, message: str) -> list[dict[str, Any]]:
    """A list of ``message`` objects (mounts, DNS peerings), each field under its key: its
    name in snake_case."""
    return [
        {_snake(name): item for name, item in _check(entry, _at(path, index), message).items()}
        for index, entry in enumerate(_items(value, path))
    ]


def _snake(name: str) -> str:
    """``mountPoint`` -> ``mount_point``."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def _primary_keys(pool: _Pool) -> dict[str, Any]:
    """The primary pool's keys, at the top of the job. The machine is always written; an
    accelerator, TPU topology and boot disk whenever the body has them."""
    config: dict[str, Any] = {**pool.program}
    if pool.args:
        config["args"] = pool.args
    if pool.env:
        config["env"] = pool.env
    config["machine"] = pool.machine
    optional = {
        "accelerator": pool.accelerator,
        "tpu_topology": pool.tpu_topology,
        "disk": pool.disk,
        "reservation_affinity": pool.reservation,
        "gpu_partition_size": pool.partition,
        "nfs_mounts": pool.nfs_mounts,
        "lustre_mounts": pool.lustre_mounts,
    }
    config.update({key: value for key, value in optional.items() if value})
    return config


def _inheriting_keys(pool: _Pool, primary: _Pool) -> dict[str, Any]:
    """A pool's keys: ``replicas``, and each setting that differs from what it would take
    from the primary pool (``vertex_training.stackconfig._resolve``'s inheritance).

    A pool that writes its own machine inherits no TPU topology nor reservation; one
    that writes its machine or accelerator, no GPU partition size. Where the pool has
    none of what it would inherit, the key is written as null.
    """
    config: dict[str, Any] = {"replicas": pool.replicas}
    if pool.program != primary.program:
        config.update(pool.program)
    if pool.args != primary.args:
        config["args"] = pool.args
    if pool.env != primary.env:
        config["env"] = pool.env
    own_machine = pool.machine != primary.machine
    if own_machine:
        config["machine"] = pool.machine
    if pool.accelerator != primary.accelerator:
        config["accelerator"] = pool.accelerator
    if pool.tpu_topology != (None if own_machine else primary.tpu_topology):
        config["tpu_topology"] = pool.tpu_topology
    if pool.disk != primary.disk:
        config["disk"] = pool.disk or {"type": API_DISK_TYPE, "size_gb": API_DISK_SIZE_GB}
    if pool.reservation != (None if own_machine else primary.reservation):
        config["reservation_affinity"] = pool.reservation
    takes_partition = not own_machine and "accelerator" not in config
    if pool.partition != (primary.partition if takes_partition else None):
        config["gpu_partition_size"] = pool.partition
    if pool.nfs_mounts != primary.nfs_mounts:
        config["nfs_mounts"] = pool.nfs_mounts
    if pool.lustre_mounts != primary.lustre_mounts:
        config["lustre_mounts"] = pool.lustre_mounts
    return config


def _reduction_server_keys(pool: _Pool) -> dict[str, Any]:
    """``reduction_server: {replicas, machine, disk}`` (it inherits nothing)."""
    config: dict[str, Any] = {"replicas": pool.replicas, "machine": pool.machine}
    if pool.disk:
        config["disk"] = pool.disk
    return config


# -- job settings


#: Each field of a CustomJobSpec that a key passes straight into, and its key.
_PASS_THROUGH_KEYS: Mapping[str, str] = {field: key for key, field in PASS_THROUGH_FIELDS.items()}


def _job_spec_keys(spec: Mapping[str, Any], spec_key: str) -> dict[str, Any]:
    """The keys of a CustomJobSpec's fields other than its pools, where the field is set:
    a pass-through field's key (``PASS_THROUGH_FIELDS``), else the field's name in
    snake_case (``pscInterfaceConfig``: ``psc_interface_config``)."""
    config: dict[str, Any] = {}
    for name, value in spec.items():
        if name != "workerPoolSpecs" and (written := _setting(name, value, _at(spec_key, name))):
            config[_PASS_THROUGH_KEYS.get(name) or _snake(name)] = written
    return config


def _setting(name: str, value: Any, path: str) -> Any:
    """A CustomJobSpec field as its key writes it (falsy: unset)."""
    if name == "scheduling":
        return _scheduling(value, path)
    if name == "pscInterfaceConfig":
        return _psc(value, path)
    if name == "baseOutputDirectory":
        return _check(value, path, "GcsDestination").get("outputUriPrefix")
    return _texts(value, path) if isinstance(value, list) else value


def _scheduling(value: Any, path: str) -> dict[str, Any]:
    """``scheduling:``, durations written as ``2h``; what is at the API's default left out."""
    config: dict[str, Any] = {}
    for name, item in _check(value, path, "Scheduling").items():
        if name in ("timeout", "maxWaitDuration"):
            config[_snake(name)] = _duration(item, _at(path, name))
        elif item and not str(item).endswith(_UNSET_ENUM):
            config[_snake(name)] = item
    return config


def _psc(value: Any, path: str) -> dict[str, Any]:
    """``psc_interface_config: {network_attachment, dns_peering_configs}``."""
    body = _check(value, path, "PscInterfaceConfig")
    config: dict[str, Any] = {"network_attachment": body.get("networkAttachment", "")}
    where = _at(path, "dnsPeeringConfigs")
    if peerings := _objects(body.get("dnsPeeringConfigs"), where, "DnsPeeringConfig"):
        config["dns_peering_configs"] = peerings
    return config


# -- the study of a tuning job


def _study(body: Mapping[str, Any]) -> dict[str, Any]:
    """``study:`` from the studySpec and the trial counts of a tuning job."""
    where = "studySpec"
    spec = _check(body.get(where), where, "StudySpec")
    metrics = []
    for index, item in enumerate(_items(spec.get("metrics"), _at(where, "metrics"))):
        metric = _check(item, _at(_at(where, "metrics"), index), "MetricSpec")
        metrics.append({"id": metric.get("metricId", ""), "goal": metric.get("goal", "")})
    study: dict[str, Any] = {
        "metrics": metrics,
        "parameters": _parameters(spec.get("parameters"), _at(where, "parameters")),
    }
    for name, words, key in (
        ("algorithm", _ALGORITHMS, "algorithm"),
        ("measurementSelectionType", _MEASUREMENT_SELECTIONS, "measurement_selection"),
    ):
        if name in spec and (word := _word(spec[name], words, _at(where, name))):
            study[key] = word
    rules = [name for name in _EARLY_STOPPING_RULES if name in spec]
    if len(rules) > 1:
        raise UnmappedField(_at(where, rules[1]), spec[rules[1]], f"beside {rules[0]}: one rule")
    if rules:
        study["early_stopping"] = _early_stopping(spec[rules[0]], rules[0], where)
    study["max_trials"] = _whole(body.get("maxTrialCount"), "maxTrialCount")
    parallel = _whole(body.get("parallelTrialCount"), "parallelTrialCount")
    if parallel != 1:
        study["parallel_trials"] = parallel
    if failed := _whole(body.get("maxFailedTrialCount"), "maxFailedTrialCount"):
        study["max_failed_trials"] = failed
    return study


def _word(value: Any, words: Mapping[str, str], path: str) -> str | None:
    """The stack config's word for a REST enum value (None: unset, the API's default)."""
    if str(value).endswith(_UNSET_ENUM):
        return None
    if value not in words:
        known = ", ".join(sorted(words))
        raise UnmappedField(path, value, f"not a value the study keys write ({known})")
    return words[value]


def _parameters(value: Any, path: str) -> dict[str, Any]:
    """ParameterSpecs as the ``parameters`` mapping, by ID."""
    parameters: dict[str, Any] = {}
    for index, item in enumerate(_items(value, path)):
        pid, parameter = _parameter(item, _at(path, index))
        if pid in parameters:
            raise UnmappedField(_at(_at(path, index), "parameterId"), pid, "a second parameter")
        parameters[pid] = parameter
    return parameters


def _parameter(value: Any, path: str) -> tuple[str, dict[str, Any]]:
    """One ParameterSpec: its ID and its keys (``type``, ``min``/``max`` or ``values``,
    ``scale``, ``conditional``)."""
    body = _check(value, path, "ParameterSpec")
    pid = body.get("parameterId")
    if not isinstance(pid, str) or not pid:
        raise UnmappedField(_at(path, "parameterId"), pid, "missing: every parameter has an ID")
    kinds = [k for k in _VALUE_SPECS if k in body]
    if len(kinds) != 1:
        raise UnmappedField(path, dict(body), "a parameter has exactly one value spec")
    (kind,) = kinds
    where = _at(path, kind)
    parameter: dict[str, Any] = {"type": _VALUE_SPECS[kind]}
    if kind in ("doubleValueSpec", "integerValueSpec"):
        bounds = _check(body[kind], where, "RangeValueSpec")
        for name, key in (("minValue", "min"), ("maxValue", "max")):
            at = _at(where, name)
            bound = bounds.get(name)
            parameter[key] = _number(bound, at) if kind == "doubleValueSpec" else _whole(bound, at)
    else:
        values = _check(body[kind], where, "ListValueSpec").get("values")
        at = _at(where, "values")
        if kind == "discreteValueSpec":
            parameter["values"] = [_number(v, _at(at, i)) for i, v in enumerate(_items(values, at))]
        else:
            parameter["values"] = _texts(values, at)
    if "scaleType" in body and (scale := _word(body["scaleType"], _SCALES, _at(path, "scaleType"))):
        parameter["scale"] = scale
    if conditionals := _conditionals(body.get("conditionalParameterSpecs"), path):
        parameter["conditional"] = conditionals
    return pid, parameter


#: Each value spec of a ParameterSpec -> the parameter's ``type``.
_VALUE_SPECS: Mapping[str, str] = {
    "doubleValueSpec": "double",
    "integerValueSpec": "integer",
    "categoricalValueSpec": "categorical",
    "discreteValueSpec": "discrete",
}


def _conditionals(value: Any, path: str) -> list[dict[str, Any]]:
    """ConditionalParameterSpecs as ``conditional: [{when, parameters}]``.

    The request gives each parameter of a ``{when, parameters}`` entry its own spec, the
    entry's parameters in ID order and the entries in the order written. Specs are joined
    back into one entry while the parent values stay the same and the IDs keep rising,
    which gives back the same request.
    """
    where = _at(path, "conditionalParameterSpecs")
    entries: list[dict[str, Any]] = []
    last: tuple[str, list[Any], str] | None = None
    for index, item in enumerate(_items(value, where)):
        at = _at(where, index)
        body = _check(item, at, "ConditionalParameterSpec")
        parents = [name for name in _PARENT_VALUES if name in body]
        if len(parents) != 1:
            raise UnmappedField(at, dict(body), "a conditional parameter has one parent condition")
        (parent,) = parents
        condition = _check(body[parent], _at(at, parent), "ListValueSpec")
        when = _when(parent, condition.get("values"), _at(at, parent))
        pid, parameter = _parameter(body.get("parameterSpec"), _at(at, "parameterSpec"))
        if last is not None and (last[0], last[1]) == (parent, when) and pid > last[2]:
            entries[-1]["parameters"][pid] = parameter
        else:
            entries.append({"when": when, "parameters": {pid: parameter}})
        last = (parent, when, pid)
    return entries


def _when(parent: str, value: Any, path: str) -> list[Any]:
    """A condition's parent values as ``when`` writes them."""
    values = _items(value, _at(path, "values"))
    at = [_at(_at(path, "values"), index) for index in range(len(values))]
    if parent == "parentIntValues":
        return [_whole(v, a) for v, a in zip(values, at, strict=True)]
    if parent == "parentDiscreteValues":
        return [_number(v, a) for v, a in zip(values, at, strict=True)]
    return _texts(values, _at(path, "values"))


def _early_stopping(value: Any, rule: str, path: str) -> dict[str, Any]:
    """``early_stopping: {<rule>: {...}}``, each setting the field's name in snake_case."""
    where = _at(path, rule)
    convex = rule == "convexAutomatedStoppingSpec"
    body = _check(value, where, "ConvexAutomatedStoppingSpec" if convex else "StoppingSpec")
    settings = {
        _snake(name): _whole(item, _at(where, name)) if name.endswith("Count") else item
        for name, item in body.items()
    }
    return {_EARLY_STOPPING_RULES[rule]: settings}
