"""Validation of the create requests: the rules of custom_job.proto,
hyperparameter_tuning_job.proto, study.proto, machine_resources.proto (mounts, GPU
partitions), reservation_affinity.proto and service_networking.proto that a CustomJob or a
HyperparameterTuningJob must keep, each broken rule listed in one INVALID_ARGUMENT.

It depends only on ``_faults`` (for ``RpcError``).
"""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from google.cloud.aiplatform_v1.types import custom_job as custom_job_types
from google.cloud.aiplatform_v1.types import study as study_types
from google.cloud.aiplatform_v1.types.reservation_affinity import ReservationAffinity

from vertex_training.testing._faults import RpcError, VertexMessage

#: custom_job.proto, CustomJob.display_name: "can be up to 128 characters long".
MAX_DISPLAY_NAME_CHARS = 128
#: custom_job.proto: ContainerSpec.env / PythonPackageSpec.env "Maximum limit is 100";
#: PythonPackageSpec.package_uris "The maximum number of package URIs is 100".
MAX_ENV_VARS = 100
MAX_PACKAGE_URIS = 100
#: Google Cloud label rules (https://cloud.google.com/resource-manager/docs/labels-overview):
#: at most 64 labels; keys 1-63 characters starting with a lowercase letter; values
#: 0-63 characters; lowercase letters, digits, "_" and "-" only (international allowed).
MAX_LABELS = 64
MAX_LABEL_CHARS = 63

_WorkerPoolSpecPb = custom_job_types.WorkerPoolSpec.pb()
_AffinityType = ReservationAffinity.Type

# -- CreateCustomJob ---------------------------------------------------------------------


def validate_custom_job(job: VertexMessage) -> None:
    """Raise INVALID_ARGUMENT listing every rule of custom_job.proto the job breaks.

    The message lists one "Field: ...; Message: ..." entry per problem, as Vertex's
    INVALID_ARGUMENT messages do.
    """
    problems = list(_custom_job_problems(job))
    if problems:
        listed = "".join(
            f"{index}.Field: {field}; Message: {message}\t"
            for index, (field, message) in enumerate(problems, start=1)
        )
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"List of found errors:\t{listed}")


def _custom_job_problems(job: VertexMessage) -> Iterator[tuple[str, str]]:
    # CustomJob.display_name: "Required ... can be up to 128 characters long".
    if not job.display_name:
        yield "custom_job.display_name", "Required field is not set."
    elif len(job.display_name) > MAX_DISPLAY_NAME_CHARS:
        yield (
            "custom_job.display_name",
            f"The display name must be at most {MAX_DISPLAY_NAME_CHARS} characters long.",
        )
    # CustomJobSpec.worker_pool_specs: "Required ... All worker pools except the first
    # one are optional and can be skipped by providing an empty value."
    pools = job.job_spec.worker_pool_specs
    if not pools:
        yield "custom_job.job_spec.worker_pool_specs", "Required field is not set."
    for index, pool in enumerate(pools):
        field = f"custom_job.job_spec.worker_pool_specs[{index}]"
        if pool == _WorkerPoolSpecPb():
            if index == 0:
                yield field, "The first worker pool spec (the primary replica) must be set."
            continue
        yield from _worker_pool_problems(field, index, pool)
    yield from _psc_problems("custom_job.job_spec", job.job_spec)
    yield from label_problems(job.labels)


def _psc_problems(prefix: str, spec: VertexMessage) -> Iterator[tuple[str, str]]:
    # service_networking.proto, DnsPeeringConfig: domain, target_project and target_network
    # are Required; the domain "Must end with a dot".
    if not spec.HasField("psc_interface_config"):
        return
    for index, peering in enumerate(spec.psc_interface_config.dns_peering_configs):
        field = f"{prefix}.psc_interface_config.dns_peering_configs[{index}]"
        yield from _unset(field, peering, ("domain", "target_project", "target_network"))
        if peering.domain and not peering.domain.endswith("."):
            yield f"{field}.domain", "The DNS name suffix must end with a dot."


def _machine_problems(field: str, pool: VertexMessage) -> Iterator[tuple[str, str]]:
    machine = pool.machine_spec
    # reservation_affinity.proto: reservation_affinity_type is Required; SPECIFIC_RESERVATION
    # "must be identified via the key and values fields".
    if machine.HasField("reservation_affinity"):
        affinity = machine.reservation_affinity
        where = f"{field}.machine_spec.reservation_affinity"
        kind = _AffinityType(affinity.reservation_affinity_type).name
        if kind == "TYPE_UNSPECIFIED":
            yield f"{where}.reservation_affinity_type", "Required field is not set."
        elif kind == "SPECIFIC_RESERVATION" and not (affinity.key and affinity.values):
            yield where, "A specific reservation must be identified by key and values."
    # machine_resources.proto, gpu_partition_size: "If set, the accelerator_count should be
    # set to 1".
    if machine.gpu_partition_size and machine.accelerator_count != 1:
        yield (
            f"{field}.machine_spec.accelerator_count",
            "accelerator_count must be 1 when gpu_partition_size is set.",
        )
    # machine_resources.proto, NfsMount: server, path and mount_point are Required; path
    # "Has to start with '/'". LustreMount: all four fields Required.
    for index, mount in enumerate(pool.nfs_mounts):
        where = f"{field}.nfs_mounts[{index}]"
        yield from _unset(where, mount, ("server", "path", "mount_point"))
        if mount.path and not mount.path.startswith("/"):
            yield f"{where}.path", "The path must start with '/'."
    for index, mount in enumerate(pool.lustre_mounts):
        yield from _unset(
            f"{field}.lustre_mounts[{index}]",
            mount,
            ("instance_ip", "volume_handle", "filesystem", "mount_point"),
        )


def _unset(where: str, message: VertexMessage, names: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """Each of ``names`` that ``message`` leaves unset, as a missing required field."""
    for name in names:
        if not getattr(message, name):
            yield f"{where}.{name}", "Required field is not set."


def _worker_pool_problems(field: str, index: int, pool: VertexMessage) -> Iterator[tuple[str, str]]:
    # WorkerPoolSpec: "oneof task { container_spec; python_package_spec }". Both at
    # once cannot be sent (a oneof); neither is refused.
    task = pool.WhichOneof("task")
    if task is None:
        yield field, "Exactly one of container_spec or python_package_spec must be set."
    elif task == "container_spec":
        spec = pool.container_spec
        if not spec.image_uri:
            yield f"{field}.container_spec.image_uri", "Required field is not set."
        if len(spec.env) > MAX_ENV_VARS:
            yield f"{field}.container_spec.env", f"At most {MAX_ENV_VARS} are allowed."
    else:
        spec = pool.python_package_spec
        yield from _unset(
            f"{field}.python_package_spec", spec, ("executor_image_uri", "python_module")
        )
        if not spec.package_uris:
            yield f"{field}.python_package_spec.package_uris", "Required field is not set."
        elif len(spec.package_uris) > MAX_PACKAGE_URIS:
            yield (
                f"{field}.python_package_spec.package_uris",
                f"At most {MAX_PACKAGE_URIS} are allowed.",
            )
        if len(spec.env) > MAX_ENV_VARS:
            yield f"{field}.python_package_spec.env", f"At most {MAX_ENV_VARS} are allowed."
    yield from _machine_problems(field, pool)
    # The primary pool (index 0) runs exactly one replica (the chief).
    if index == 0 and pool.replica_count != 1:
        yield f"{field}.replica_count", "The primary worker pool must have exactly 1 replica."
    elif pool.replica_count < 1:
        yield f"{field}.replica_count", "The replica count must be at least 1."


def label_problems(labels: dict[str, str], prefix: str = "custom_job") -> Iterator[tuple[str, str]]:
    if len(labels) > MAX_LABELS:
        yield f"{prefix}.labels", f"At most {MAX_LABELS} labels are allowed."
    for key, value in sorted(labels.items()):
        key_ok = 1 <= len(key) <= MAX_LABEL_CHARS and _is_label_start(key[0])
        if not key_ok or not all(_is_label_char(c) for c in key):
            yield (
                f"{prefix}.labels[{key!r}]",
                "Label keys must be 1-63 characters, start with a lowercase letter and "
                "contain only lowercase letters, digits, '_' and '-'.",
            )
        if len(value) > MAX_LABEL_CHARS or not all(_is_label_char(c) for c in value):
            yield (
                f"{prefix}.labels[{key!r}]",
                "Label values must be at most 63 characters of lowercase letters, digits, "
                "'_' and '-'.",
            )


def _is_label_start(char: str) -> bool:
    return char.isalpha() and not char.isupper()


def _is_label_char(char: str) -> bool:
    return _is_label_start(char) or char.isdecimal() or char in "_-"


# -- CreateHyperparameterTuningJob ------------------------------------------------------


def validate_tuning_job(job: VertexMessage) -> None:
    """Raise INVALID_ARGUMENT listing every rule of hyperparameter_tuning_job.proto and
    study.proto the job breaks (required fields, counts, grid search parameter types),
    and those of its trial job spec as for a CustomJob."""
    problems = list(_tuning_job_problems(job))
    if problems:
        listed = "".join(
            f"{index}.Field: {field}; Message: {message}\t"
            for index, (field, message) in enumerate(problems, start=1)
        )
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"List of found errors:\t{listed}")


def _tuning_job_problems(job: VertexMessage) -> Iterator[tuple[str, str]]:
    prefix = "hyperparameter_tuning_job"
    if not job.display_name:
        yield f"{prefix}.display_name", "Required field is not set."
    elif len(job.display_name) > MAX_DISPLAY_NAME_CHARS:
        yield (
            f"{prefix}.display_name",
            f"The display name must be at most {MAX_DISPLAY_NAME_CHARS} characters long.",
        )
    # max_trial_count, parallel_trial_count: "Required".
    for count in ("max_trial_count", "parallel_trial_count"):
        if getattr(job, count) <= 0:
            yield f"{prefix}.{count}", "Required field must be a positive number."
    if job.max_failed_trial_count < 0:
        yield f"{prefix}.max_failed_trial_count", "Must not be negative."
    yield from _study_spec_problems(f"{prefix}.study_spec", job.study_spec)
    pools = job.trial_job_spec.worker_pool_specs
    if not pools:
        yield f"{prefix}.trial_job_spec.worker_pool_specs", "Required field is not set."
    for index, pool in enumerate(pools):
        field_name = f"{prefix}.trial_job_spec.worker_pool_specs[{index}]"
        if pool == _WorkerPoolSpecPb():
            if index == 0:
                yield field_name, "The first worker pool spec (the primary replica) must be set."
            continue
        yield from _worker_pool_problems(field_name, index, pool)
    yield from _psc_problems(f"{prefix}.trial_job_spec", job.trial_job_spec)
    yield from label_problems(job.labels, prefix)


def _study_spec_problems(prefix: str, study: VertexMessage) -> Iterator[tuple[str, str]]:
    # study.proto StudySpec: metrics and parameters are "Required".
    if not study.metrics:
        yield f"{prefix}.metrics", "Required field is not set."
    if not study.parameters:
        yield f"{prefix}.parameters", "Required field is not set."
    grid = study.algorithm == study_types.StudySpec.Algorithm.GRID_SEARCH
    for index, spec in enumerate(study.parameters):
        field_name = f"{prefix}.parameters[{index}]"
        kind = spec.WhichOneof("parameter_value_spec")
        if kind is None:
            yield field_name, "One of the parameter value specs must be set."
        elif grid and kind == "double_value_spec":
            # study.proto Algorithm.GRID_SEARCH: "all parameters must be INTEGER,
            # CATEGORICAL, or DISCRETE".
            yield field_name, "Grid search does not support DOUBLE parameters."
