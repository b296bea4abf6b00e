"""The user's keys: pydantic models of a job's YAML shape (docs/config-shape.md), key for
key, with ``extra="forbid"`` so that a typo is an error with a did-you-mean suggestion.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
)

from vertex_training.catalog import images, machines
from vertex_training.stackconfig._access import (
    LustreMountConfig,
    ModelName,
    NfsMountConfig,
    PscInterfaceConfig,
    ReservationAffinityField,
)
from vertex_training.stackconfig._constants import (
    BACKENDS,
    DEFAULT_RETRY_ATTEMPTS,
    DEFAULT_WAIT_TIMEOUT_S,
    MAX_RETRY_ATTEMPTS,
    NOT_WAITED,
    STRATEGIES,
    WAIT_UNTIL,
    Backend,
    Strategy,
    WaitUntil,
)
from vertex_training.stackconfig._dataset import DatasetConfig
from vertex_training.stackconfig._issues import invalid
from vertex_training.stackconfig._model import ModelConfig
from vertex_training.stackconfig._rules import (
    AcceleratorName,
    ContextName,
    DiskSizeGb,
    DiskTypeName,
    DisplayName,
    Duration,
    KmsKeyName,
    MachineName,
    NetworkName,
    NonEmptyText,
    PackageUris,
    PersistentResourceId,
    PositiveDuration,
    PythonModule,
    RetryClass,
    SecretValue,
    ServiceAccount,
    TextList,
    TpuTopology,
    _accelerator_before,
    _choice,
    _env_before,
    _labels_before,
    _non_empty,
    _rerun_before,
    _tensorboard_before,
    _wait_before,
)


class _ConfigModel(BaseModel):
    """Base of the models that mirror the stack config: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


EnvMap = Annotated[
    dict[str, Annotated[str | SecretValue, Field(union_mode="left_to_right")]],
    BeforeValidator(_env_before),
]
Labels = Annotated[dict[str, str], BeforeValidator(_labels_before)]


class AcceleratorConfig(_ConfigModel):
    """``accelerator: {type: NVIDIA_TESLA_T4, count: 1}``; ``{count: 0}`` is none (read
    as ``null`` before this model: ``_accelerator_before``), so ``type`` is required by
    the pool's rules (``_resolve``), not here."""

    type: AcceleratorName | None = None
    count: int = Field(1, ge=1)


class DiskConfig(_ConfigModel):
    """``disk: {type: pd-ssd, size_gb: 100}``; the type defaults by machine."""

    type: DiskTypeName | None = None
    size_gb: DiskSizeGb = machines.DEFAULT_DISK_SIZE_GB


def _version_text_before(value: Any) -> Any:
    """Versions are text: YAML reads 2.10 as the number 2.1, so numbers are refused."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise invalid(f'write the version as text: "{value}" (YAML reads 2.10 as the number 2.1)')
    return value


VersionText = Annotated[str, BeforeValidator(_version_text_before), AfterValidator(_non_empty)]


class FrameworkConfig(_ConfigModel):
    """``framework: {name, version, python}``: a prebuilt training image (catalog.images)."""

    name: Annotated[str, BeforeValidator(_choice(tuple(images.FRAMEWORK_NAMES)))]
    version: VersionText
    python: VersionText | None = None


class PythonPackageConfig(_ConfigModel):
    """``python_package: {executor_image, package_uris and/or package_path, module}``.

    ``package_path`` (a local package directory) is built and uploaded by the program
    (``vertex_training.packaging``), which puts the package's URI first in ``package_uris``
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
    #: Which Compute Engine reservation the pool's machines come from (taken with the
    #: machine by a pool that inherits it).
    reservation_affinity: ReservationAffinityField = None
    #: Multi-instance GPU partitions of each GPU (taken with the accelerator).
    gpu_partition_size: NonEmptyText | None = None
    nfs_mounts: list[NfsMountConfig] | None = None
    lustre_mounts: list[LustreMountConfig] | None = None


class PoolConfig(_PoolConfig):
    """``workers``, ``parameter_servers``, ``evaluators``."""

    replicas: int = Field(1, ge=1)


class ReductionServerConfig(_ConfigModel):
    """``reduction_server: {replicas, machine, disk}``: runs Google's image."""

    replicas: int = Field(1, ge=1)
    machine: MachineName = machines.DEFAULT_REDUCTION_SERVER_MACHINE
    disk: DiskConfig | None = None


class SchedulingConfig(_ConfigModel):
    """``scheduling:``."""

    timeout: PositiveDuration | None = None
    restart_job_on_worker_restart: bool = False
    disable_retries: bool = False
    strategy: Annotated[
        Strategy | None, BeforeValidator(_choice(STRATEGIES, machines.DEPRECATED_STRATEGIES))
    ] = None
    max_wait_duration: Duration | None = None


class WaitConfig(_ConfigModel):
    """``wait: succeeded`` or ``wait: {until: succeeded, timeout: 3h, start_timeout: 1h}``."""

    until: Annotated[WaitUntil, BeforeValidator(_choice(WAIT_UNTIL))] = NOT_WAITED
    timeout: PositiveDuration = DEFAULT_WAIT_TIMEOUT_S
    #: How long the job may take to start running (QUEUED and PENDING); none by default:
    #: only ``timeout`` bounds the wait.
    start_timeout: PositiveDuration | None = None


class RetryConfig(_ConfigModel):
    """``retry: {when: [capacity, preemption], attempts: 3, regions: [...], strategies: [...]}``:
    submit the job again when it fails for a reason that is not its own. Attempt k runs in
    the k-th region and under the k-th strategy of the job's own followed by these lists
    (the last one again when a list is shorter than ``attempts``)."""

    when: list[RetryClass] = Field(min_length=1)
    attempts: int = Field(DEFAULT_RETRY_ATTEMPTS, ge=2, le=MAX_RETRY_ATTEMPTS)
    regions: list[NonEmptyText] = []
    strategies: list[
        Annotated[Strategy, BeforeValidator(_choice(STRATEGIES, machines.DEPRECATED_STRATEGIES))]
    ] = []

    @field_validator("attempts", mode="before")
    @classmethod
    def _bounded_attempts(cls, value: Any) -> Any:
        whole = isinstance(value, int) and not isinstance(value, bool)
        if whole and not 2 <= value <= MAX_RETRY_ATTEMPTS:
            raise invalid(
                f"counts every submission, the first included: write 2 to "
                f"{MAX_RETRY_ATTEMPTS} (each attempt may be billed in full), or remove "
                "retry to submit the job once"
            )
        return value


class JobConfig(_PoolConfig):
    """One entry of ``vertex-training:jobs``, as written."""

    replicas: int = 1
    workers: PoolConfig | None = None
    parameter_servers: PoolConfig | None = None
    reduction_server: ReductionServerConfig | None = None
    evaluators: PoolConfig | None = None
    display_name: DisplayName | None = None
    region: NonEmptyText | None = None
    backend: Annotated[Backend | None, BeforeValidator(_choice(BACKENDS))] = None
    scheduling: SchedulingConfig | None = None
    service_account: ServiceAccount | None = None
    network: NetworkName | None = None
    reserved_ip_ranges: list[NonEmptyText] | None = None
    psc_interface_config: PscInterfaceConfig | None = None
    protected_artifact_location_id: NonEmptyText | None = None
    models: list[ModelName] | None = None
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
    #: Jobs (resource names) this one is submitted after, once each has succeeded.
    run_after: list[NonEmptyText] | None = None
    retry: RetryConfig | None = None
    #: Any label value; changing it submits the job again with nothing else changed.
    rerun: Annotated[str, BeforeValidator(_rerun_before)] | None = None
    #: The Model Registry entry the trained model becomes: the job runs as a training
    #: pipeline (``vertex_training.stackconfig._model``).
    model: ModelConfig | None = None
    #: The Vertex AI managed dataset the job reads: it runs as a training pipeline
    #: (``vertex_training.stackconfig._dataset``).
    dataset: DatasetConfig | None = None
    #: Makes the job a hyperparameter tuning job; validated by
    #: ``vertex_training.stackconfig.study``.
    study: Any = None
    # Issue 4: a legacy AI Platform Training block (translated by
    # vertex_training.stackconfig.legacy before
    # validation), and a prebuilt image named by framework or runtime version
    # (vertex_training.catalog.images) instead of image / python_package.executor_image.
    training_input: dict[str, Any] | None = None
    job_id: NonEmptyText | None = None
    framework: FrameworkConfig | None = None
    runtime_version: VersionText | None = None
    python_version: VersionText | None = None

    @field_validator("replicas")
    @classmethod
    def _primary_runs_one_replica(cls, value: int) -> int:
        if value != 1:
            raise invalid(
                "the primary pool runs exactly one replica; for more machines add "
                f"workers: {{replicas: {max(value - 1, 1)}}}"
            )
        return value
