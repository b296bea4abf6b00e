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

from vertex_training.api import labels
from vertex_training.catalog import images, machines
from vertex_training.stackconfig._access import (
    LustreMountConfig,
    ModelName,
    NfsMountConfig,
    PscInterfaceConfig,
    ReservationAffinityField,
)
from vertex_training.stackconfig._arguments import LATER, Later, Takes
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
    BeforeValidator(_env_before, json_schema_input_type=dict[str, str]),
]
Labels = Annotated[dict[str, str], BeforeValidator(_labels_before)]
#: What ``labels`` takes, in the figures of ``vertex_training.api.labels``.
LABELS_DESCRIPTION = (
    f"at most {labels.MAX_USER_LABELS} (Vertex AI takes {labels.MAX_LABELS}; the provider "
    f"sets {len(labels.SUBMISSION_LABEL_KEYS)} on every job); lowercase keys and values, 1 to "
    f"{labels.MAX_LABEL_CHARS} characters (a value may be empty); keys starting with "
    f"`{labels.RESERVED_LABEL_PREFIX}` are Google's; "
    + ", ".join(f"`{key}`" for key in labels.PROVIDER_LABEL_KEYS[:-1])
    + f" and `{labels.PROVIDER_LABEL_KEYS[-1]}` are the provider's"
)


# ``accelerator: {type: NVIDIA_TESLA_T4, count: 1}``; ``{count: 0}`` is none (read as
# ``null`` before this model: ``_accelerator_before``), so ``type`` is required by the
# pool's rules (``_resolve``), not here.
class AcceleratorConfig(_ConfigModel):
    """``accelerator: {type: NVIDIA_TESLA_T4, count: 1}``; ``{count: 0}``: none (in a
    worker pool, rather than the primary pool's)."""

    type: Later[AcceleratorName | None] = Field(
        None,
        description=(
            "the accelerator, as Vertex AI names it (`NVIDIA_TESLA_T4`, `NVIDIA_L4`, "
            "`TPU_V5_LITEPOD`, ...): it must fit the machine family"
        ),
    )
    count: Later[int] = Field(
        1,
        ge=1,
        description=(
            "how many accelerators each replica has: a count the machine takes; `0` for none"
        ),
    )


class DiskConfig(_ConfigModel):
    """``disk: {type: pd-ssd, size_gb: 100}``; the type defaults by machine."""

    type: Later[DiskTypeName | None] = Field(
        None,
        description=(
            "`pd-ssd`, `pd-standard` or `hyperdisk-balanced` (A3 Ultra, A4, A4X and G4 "
            "machines: `hyperdisk-balanced` only); default by machine"
        ),
    )
    size_gb: Later[DiskSizeGb] = Field(
        machines.DEFAULT_DISK_SIZE_GB,
        description="the disk's size in GB, 100 to 64000; default 100",
    )


def _version_text_before(value: Any) -> Any:
    """Versions are text: YAML reads 2.10 as the number 2.1, so numbers are refused."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise invalid(f'write the version as text: "{value}" (YAML reads 2.10 as the number 2.1)')
    return value


VersionText = Annotated[str, BeforeValidator(_version_text_before), AfterValidator(_non_empty)]


# ``framework: {name, version, python}``: a prebuilt training image (catalog.images).
class FrameworkConfig(_ConfigModel):
    """``framework: {name: pytorch, version: "2.4", python: "3.10"}``: a prebuilt image."""

    name: Later[Annotated[str, BeforeValidator(_choice(tuple(images.FRAMEWORK_NAMES)))]] = Field(
        description="the framework: `tensorflow`, `pytorch`, `sklearn` or `xgboost`"
    )
    version: Later[VersionText] = Field(
        description="the framework's version, as text (YAML reads `2.10` as `2.1`)"
    )
    python: Later[VersionText | None] = Field(
        None,
        description=(
            'the image\'s Python, as text (`"3.10"`); [images.md](images.md) says which '
            "image is picked without it"
        ),
    )


# ``python_package: {executor_image, package_uris and/or package_path, module}``.
# ``package_path`` (a local package directory) is built and uploaded by the program
# (``vertex_training.packaging``), which puts the package's URI first in ``package_uris``
# before the job reaches ``parse_job``.
class PythonPackageConfig(_ConfigModel):
    """``python_package``: a Python package run on a prebuilt executor image."""

    executor_image: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "a prebuilt training image, as an [image reference](#image-references) under "
            "`<us|europe|asia>-docker.pkg.dev/vertex-ai/training/` (required on `vertex`, "
            "unless `framework` picks it)"
        ),
    )
    package_uris: Later[PackageUris | None] = Field(
        None,
        description=(
            "`gs://` URIs of sdists/wheels (local directories or files on `local`), 1 to 100"
        ),
    )
    package_path: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "a local package directory (with pyproject.toml or setup.py, relative to the "
            "project), with or without `package_uris`: in a stack file and a Python "
            "program's dynamic resources, `pulumi up` builds it "
            "(`provider/vertex_training/packaging.py`) and uploads it, its URI first in "
            "`package_uris`, and a missing directory stops the preview naming this key; the"
            " plugin (YAML, TypeScript, Go and the other SDKs) builds nothing and refuses "
            "it at preview: build the sdist, upload it and list its `gs://` URI in "
            "`package_uris`"
        ),
    )
    module: Later[PythonModule] = Field(description="the module to run, e.g. `trainer.task`")
    #: Instead of executor_image: the prebuilt image of a framework version (issue 4).
    framework: FrameworkConfig | None = Field(
        None,
        description="picks `executor_image` ([prebuilt images](#prebuilt-images-from-a-framework))",
    )


class _PoolConfig(_ConfigModel):
    """The keys every pool may set, the job itself too (for its primary pool)."""

    image: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "container image of the pool (or `python_package`, not both): an [image "
            "reference](#image-references); a name with no registry host (`trainer:1`) is "
            "in the platform repository"
        ),
    )
    command: Later[TextList | None] = Field(
        None, description="container entry point (list); container jobs only"
    )
    python_package: PythonPackageConfig | None = Field(
        None,
        description=(
            "a Python package run on a prebuilt executor image instead of `image`: "
            "`{executor_image, package_uris and/or package_path, module}`"
        ),
    )
    args: Later[TextList | None] = Field(None, description="arguments (list)")
    env: Later[EnvMap | None] = Field(
        None, description="environment (map, at most 100; a value may be a [secret](#secrets))"
    )
    machine: Later[MachineName | None] = Field(
        None, description="machine type, default `n1-standard-4`"
    )
    accelerator: Annotated[AcceleratorConfig | None, BeforeValidator(_accelerator_before)] = Field(
        None,
        description=(
            "`{type, count}`; the type must fit the machine family, the count the machine; "
            "`{count: 0}` (or `null`) is none (a type with a count of 0 is refused: write a"
            " count of at least 1, or `{count: 0}`), for a worker pool that would inherit "
            "the primary pool's (every SDK's types can write `{count: 0}`); a region whose "
            "row in the catalogue lacks it is warned about, naming Google's locations page "
            "(the table was not re-read on 2026-11-23), not refused"
        ),
    )
    tpu_topology: Later[TpuTopology | None] = Field(
        None,
        description=(
            "TPU topology (TPU machines only; one pool, one replica). `ct5lp-hightpu-1t`: "
            "`1x1`; `ct5lp-hightpu-4t`: `2x2` (default), and the multi-host slices `2x4`, "
            "`4x4` (16 chips on 4 VMs, as Google's v5e notebooks run it), `4x8`, `8x8`, "
            "`8x16`, `16x16` (the last four documented by Cloud TPU only: warned); "
            "`ct5lp-hightpu-8t`: `2x4`; `ct4p-hightpu-4t`: `2x2x1`. TPU v5e training chips "
            "count against the `custom_model_training_tpu_v5e` quota. Sources per row: "
            "`TPU_SLICES` in `provider/vertex_training/catalog/machines.py`"
        ),
    )
    disk: DiskConfig | None = Field(
        None,
        description=(
            "the boot disk: `{type: pd-ssd | pd-standard | hyperdisk-balanced, size_gb: "
            "100..64000}` (A3 Ultra, A4, A4X and G4 machines: `hyperdisk-balanced` only)"
        ),
    )
    #: Which Compute Engine reservation the pool's machines come from (taken with the
    #: machine by a pool that inherits it).
    reservation_affinity: ReservationAffinityField = Field(
        None,
        description=(
            "the Compute Engine reservation the pool's machines come from "
            "([Reservations](operations.md#reservations)): `{type: SPECIFIC_RESERVATION, "
            "values: [projects/P/zones/Z/reservations/NAME]}` (`key` defaults to "
            "`compute.googleapis.com/reservation-name`, the only one allowed; a reservation"
            " block or sub-block path works too; a bare name is warned about: the API "
            "reference asks for the full name), or `ANY_RESERVATION` / `NO_RESERVATION` (no"
            " `key`, no `values`). The reservation's zone must be in the job's region; the "
            "machine, accelerator and count must be the reservation's exactly (Google "
            "checks this when it schedules the job). Refused with `FLEX_START` and with "
            "`persistent_resource_id`; required for GB200 (`a4x-highgpu-4g`)"
        ),
    )
    #: Multi-instance GPU partitions of each GPU (taken with the accelerator).
    gpu_partition_size: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "multi-instance GPU partitions of each GPU: `NVIDIA_TESLA_A100` 1g.5gb, "
            "2g.10gb, 3g.20gb, 7g.40gb; `NVIDIA_A100_80GB` and `NVIDIA_H100_80GB` 1g.10gb, "
            "(H100: 1g.20gb,) 2g.20gb, 3g.40gb, 7g.80gb; `NVIDIA_H200_141GB` 1g.18gb, "
            "1g.35gb, 2g.35gb, 3g.71gb, 7g.141gb; with one GPU per replica "
            "(`GPU_PARTITION_SIZES` in `catalog/machines.py`)"
        ),
    )
    nfs_mounts: list[NfsMountConfig] | None = Field(
        None,
        description=(
            "`[{server, path, mount_point}]`: an NFS export (a Filestore share) at "
            "`/mnt/nfs/<mount_point>`; `server` an IP address, `path` starting with `/`, "
            "`mount_point` one directory name, unique in the pool. Needs `network` or "
            "`psc_interface_config`"
        ),
    )
    lustre_mounts: list[LustreMountConfig] | None = Field(
        None,
        description=(
            "`[{instance_ip, volume_handle, filesystem, mount_point}]`: a Managed Lustre "
            "instance at `/mnt/lustre/<mount_point>`, every field required"
        ),
    )


class PoolConfig(_PoolConfig):
    """``workers``, ``parameter_servers``, ``evaluators``: a worker pool."""

    replicas: Later[int] = Field(1, ge=1, description="how many machines the pool runs; default 1")


class ReductionServerConfig(_ConfigModel):
    """``reduction_server``: Google's reduction server image on its own pool."""

    replicas: Later[int] = Field(1, ge=1, description="how many reduction servers run; default 1")
    machine: Later[MachineName] = Field(
        machines.DEFAULT_REDUCTION_SERVER_MACHINE,
        description="machine type, default `n1-highcpu-16`",
    )
    disk: DiskConfig | None = Field(None, description="the boot disk, as a pool's `disk`")


class SchedulingConfig(_ConfigModel):
    """``scheduling``: timeout, restarts, strategy (STANDARD, SPOT, FLEX_START)."""

    timeout: Later[PositiveDuration | None] = Field(
        None,
        description="a duration: `90s`, `30m`, `2h`, `1d` (or `3600s`); Vertex's default is 7 days",
    )
    restart_job_on_worker_restart: Later[bool] = Field(
        False, description="restart the whole job when a worker restarts; default false"
    )
    disable_retries: Later[bool] = Field(
        False,
        description="fail the job at the first worker failure instead of retrying; default false",
    )
    strategy: Annotated[
        Strategy | None,
        BeforeValidator(_choice(STRATEGIES, machines.DEPRECATED_STRATEGIES)),
        LATER,
    ] = Field(
        None,
        description=(
            "`STANDARD`, `SPOT` or `FLEX_START`. Flex-start's limits are refused when "
            "broken: L4, A100, H100, H200 or B200 GPUs in every pool, one machine "
            "configuration in every pool, `timeout` at most 7 days (Google's flex-start "
            "page)"
        ),
    )
    max_wait_duration: Later[Duration | None] = Field(
        None, description="FLEX_START only; `0s` is no limit"
    )


# ``wait: succeeded`` or ``wait: {until: succeeded, timeout: 3h, start_timeout: 1h}``.
class WaitConfig(_ConfigModel):
    """``wait: {until: succeeded, timeout: 3h, start_timeout: 1h}``."""

    until: Annotated[WaitUntil, BeforeValidator(_choice(WAIT_UNTIL))] = Field(
        NOT_WAITED,
        description="provider-side: the state to wait for: `submitted`, `running` or `succeeded`",
    )
    timeout: PositiveDuration = Field(
        DEFAULT_WAIT_TIMEOUT_S,
        description=(
            "provider-side: how long `pulumi up` waits for the job, a duration (`90m`, "
            "`6h`); default 24h"
        ),
    )
    #: How long the job may take to start running (QUEUED and PENDING); none by default:
    #: only ``timeout`` bounds the wait.
    start_timeout: PositiveDuration | None = Field(
        None,
        description=(
            "provider-side: how long the job may stay QUEUED or PENDING before the wait "
            "fails naming this key (the job is left submitted); needs `until: running` or "
            "`succeeded`, at most `timeout`; none by default"
        ),
    )


# ``retry: {when: [capacity, preemption], attempts: 3, regions: [...], strategies: [...]}``:
# submit the job again when it fails for a reason that is not its own. Attempt k runs in the
# k-th region and under the k-th strategy of the job's own followed by these lists (the last
# one again when a list is shorter than ``attempts``).
class RetryConfig(_ConfigModel):
    """``retry``: submit the job again when it fails for a reason not its own."""

    when: list[RetryClass] = Field(
        min_length=1,
        description=(
            "failure classes that resubmit it, at least one of `capacity`, `quota`, "
            "`preemption`, `infrastructure` (`user_code`, `model_upload`, `image`, "
            "`permission`, `unknown` are refused: the same job fails again)"
        ),
    )
    attempts: int = Field(
        DEFAULT_RETRY_ATTEMPTS,
        ge=2,
        le=MAX_RETRY_ATTEMPTS,
        description=(
            "submissions in all, the first included: 2 (default) to 5 "
            "(`MAX_RETRY_ATTEMPTS`); the cost estimate counts every one"
        ),
    )
    regions: list[NonEmptyText] = Field(
        [],
        description=(
            "where attempts 2, 3, ... run (the last again when the list is shorter); each a"
            " training region offering the job's accelerators (refused if not a training "
            "region; a catalogue row lacking the accelerator warns while the region rows "
            "are not re-read); a job whose `kms_key`, `tensorboard` (a name), "
            "`persistent_resource_id` or `experiment` is a resource of its region retries "
            "there only; default: the job's region"
        ),
    )
    strategies: list[
        Annotated[Strategy, BeforeValidator(_choice(STRATEGIES, machines.DEPRECATED_STRATEGIES))]
    ] = Field(
        [],
        description=(
            "the scheduling strategy of attempts 2, 3, ...: `STANDARD`, `SPOT` or "
            "`FLEX_START`; default: the job's own"
        ),
    )

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
    """One job: the keys of an entry of ``vertex-training:jobs`` (docs/config-shape.md).

    The primary pool's keys are the job's own (``_PoolKeys``: ``image``, ``machine``,
    ``accelerator``, ...); ``workers``, ``parameter_servers``, ``reduction_server`` and
    ``evaluators`` add pools. ``study`` makes it a hyperparameter tuning job
    (docs/tuning.md); ``training_input`` is an AI Platform Training block, translated
    (docs/legacy.md).
    """

    replicas: int = Field(
        1,
        description="of the primary pool: always 1 (Vertex's rule); more replicas go in `workers`",
    )
    workers: PoolConfig | None = Field(
        None,
        description=(
            "pool 1: `{replicas, ...}`; inherits image/package, args, env, machine, "
            "accelerator, disk, mounts from the primary unless set; `reservation_affinity` "
            "when it inherits the machine, `gpu_partition_size` when it inherits the "
            "accelerator"
        ),
    )
    parameter_servers: PoolConfig | None = Field(None, description="pool 2, as `workers`")
    reduction_server: ReductionServerConfig | None = Field(
        None,
        description=(
            "pool 2 instead: `{replicas, machine, disk}`, Google's reduction server image; "
            "GPU workers only"
        ),
    )
    evaluators: PoolConfig | None = Field(None, description="pool 3, as `workers`")
    display_name: Later[DisplayName | None] = Field(
        None, description="1 to 128 characters; default the job name"
    )
    region: Later[NonEmptyText | None] = Field(
        None, description="the job's region, where it overrides the stack's `gcp:region`"
    )
    backend: Annotated[Backend | None, BeforeValidator(_choice(BACKENDS))] = Field(
        None,
        description=(
            "where the job runs, `vertex` (Vertex AI) or `local` (this machine), where it "
            "overrides the stack's `vertex-training:backend`"
        ),
    )
    scheduling: SchedulingConfig | None = Field(
        None,
        description=(
            "when and how the job runs: `{timeout, restart_job_on_worker_restart, "
            "disable_retries, strategy, max_wait_duration}`"
        ),
    )
    service_account: Later[ServiceAccount | None] = Field(
        None,
        description=(
            "the job's identity (required with `tensorboard`); default on `vertex`: the "
            "platform's account"
        ),
    )
    network: Later[NetworkName | None] = Field(
        None,
        description=(
            "the VPC network the job is peered with (refused with H100 Mega, H200 and B200 "
            "machines, which Vertex AI does not peer: use `psc_interface_config`)"
        ),
    )
    reserved_ip_ranges: Later[list[NonEmptyText] | None] = Field(
        None,
        description=(
            "the ranges of `network` the job's IP addresses come from (as `network`, "
            "refused with H100 Mega, H200 and B200 machines)"
        ),
    )
    psc_interface_config: PscInterfaceConfig | None = Field(
        None,
        description=(
            "`{network_attachment, dns_peering_configs}`: reach a VPC network through a "
            "Private Service Connect interface; the attachment's name, or its full name "
            "`projects/P/regions/R/networkAttachments/N` in the job's region; each DNS "
            "peering `{domain (ending with a dot), target_project, target_network}`"
        ),
    )
    protected_artifact_location_id: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "where protected artifacts are stored, when not the job's region (a Vertex AI location)"
        ),
    )
    models: Later[list[ModelName] | None] = Field(
        None,
        description=(
            "Model resource names (`projects/P/locations/L/models/M`, optionally `@version`"
            " or `@alias`) some Google-provided jobs map to artifact URIs"
        ),
    )
    base_output_directory: Later[NonEmptyText | None] = Field(
        None,
        description=(
            "default on `vertex`: `gs://<platform bucket>/<job>`; a `gs://` prefix: "
            "AIP_MODEL_DIR is `<dir>/model`, AIP_CHECKPOINT_DIR `<dir>/checkpoints`, "
            "AIP_TENSORBOARD_LOG_DIR `<dir>/logs` (a local path on `local`)"
        ),
    )
    tensorboard: Annotated[
        str | bool | None,
        BeforeValidator(_tensorboard_before, json_schema_input_type=Later[str] | bool),
    ] = Field(
        None,
        description=(
            "a Vertex TensorBoard resource name, or `true` for the platform's TensorBoard "
            "(a no-op on `local`, which always sets AIP_TENSORBOARD_LOG_DIR)"
        ),
    )
    enable_web_access: Later[bool] = Field(
        False, description="an interactive shell on each replica (the job's `webAccessUris`)"
    )
    enable_dashboard_access: Later[bool] = Field(False, description="the dashboard of each replica")
    labels: Later[Labels | None] = Field(None, description=LABELS_DESCRIPTION)
    kms_key: Later[KmsKeyName | None] = Field(None, description="CMEK key for the job")
    persistent_resource_id: Later[PersistentResourceId | None] = Field(
        None, description="the persistent resource the job runs on, as in the CustomJob API"
    )
    experiment: Later[ContextName | None] = Field(
        None,
        description="the Vertex AI experiment the job's run is logged to, as in the CustomJob API",
    )
    experiment_run: Later[ContextName | None] = Field(
        None, description="the experiment run the job is logged as, as in the CustomJob API"
    )
    wait: Annotated[
        WaitConfig | None,
        BeforeValidator(_wait_before, json_schema_input_type=WaitUntil | WaitConfig),
    ] = Field(
        None,
        description=(
            "provider-side: `submitted` (default), `running`, `succeeded`, or `{until, "
            "timeout, start_timeout}` (default timeout 24h)"
        ),
    )
    adopt: NonEmptyText | None = Field(
        None, description="provider-side: resource name of an existing job to take over"
    )
    #: Jobs (resource names) this one is submitted after, once each has succeeded.
    run_after: Later[list[NonEmptyText] | None] = Field(
        None,
        description=(
            "provider-side: resource names of jobs (custom or tuning, of either backend) "
            "that must have succeeded before this one is submitted; in a program, the other"
            " jobs' IDs, e.g. `[prepare.id]` "
            "([operations.md](operations.md#jobs-that-run-after-others)); none by default"
        ),
    )
    retry: RetryConfig | None = Field(
        None,
        description=(
            "provider-side: submit the job again after a failure that is not its own "
            "([operations.md](operations.md#retries)); none by default"
        ),
    )
    #: Any label value; changing it submits the job again with nothing else changed.
    rerun: (
        Annotated[str, BeforeValidator(_rerun_before, json_schema_input_type=str | int)] | None
    ) = Field(
        None,
        description=(
            "a number or label text; changing it submits the job again (label "
            "`vertex_training_rerun`)"
        ),
    )
    #: The Model Registry entry the trained model becomes: the job runs as a training
    #: pipeline (``vertex_training.stackconfig._model``).
    model: ModelConfig | None = Field(
        None,
        description=(
            "the Model Registry entry the trained model becomes: the job runs as a training"
            " pipeline that uploads what the trainer wrote to AIP_MODEL_DIR (a tuning job: "
            "its best trial's) as a new model, then as the next version of the same model "
            "on every replacement ([models](models.md))"
        ),
    )
    #: The Vertex AI managed dataset the job reads: it runs as a training pipeline
    #: (``vertex_training.stackconfig._dataset``).
    dataset: DatasetConfig | None = Field(
        None,
        description=(
            "the Vertex AI managed dataset the job reads: the job runs as a training "
            "pipeline that exports it to `destination` and gives the trainer "
            "AIP_DATA_FORMAT, AIP_TRAINING_DATA_URI, AIP_VALIDATION_DATA_URI and "
            "AIP_TEST_DATA_URI; refused on `local` ([models](models.md#managed-datasets))"
        ),
    )
    #: Makes the job a hyperparameter tuning job; validated by
    #: ``vertex_training.stackconfig.study``.
    study: Annotated[Any, Takes("StudyConfig")] = Field(
        None, description="makes the job a [hyperparameter tuning job](#hyperparameter-tuning-jobs)"
    )
    # Issue 4: a legacy AI Platform Training block (translated by
    # vertex_training.stackconfig.legacy before
    # validation), and a prebuilt image named by framework or runtime version
    # (vertex_training.catalog.images) instead of image / python_package.executor_image.
    training_input: dict[str, Any] | None = Field(
        None,
        description=(
            "the `trainingInput` block of a [legacy AI Platform "
            "config](#legacy-ai-platform-training-configs), unchanged (camelCase keys), "
            "translated into the job's keys"
        ),
    )
    job_id: NonEmptyText | None = Field(
        None,
        description=(
            "a legacy AI Platform job ID, with `training_input` (letters, digits and `_`, "
            "starting with a letter, at most 128 characters; it becomes the display name)"
        ),
    )
    framework: FrameworkConfig | None = Field(
        None,
        description=(
            "instead of `image`: a [prebuilt image](#prebuilt-images-from-a-framework), "
            "`{name, version, python}`"
        ),
    )
    runtime_version: VersionText | None = Field(
        None,
        description=(
            'instead of `image`: a legacy AI Platform runtime version (`"2.11"`, as text) '
            "whose [prebuilt image](#prebuilt-images-from-a-framework) the job runs"
        ),
    )
    python_version: VersionText | None = Field(
        None, description='with `runtime_version`: the image\'s Python, as text (`"3.7"`)'
    )

    @field_validator("replicas")
    @classmethod
    def _primary_runs_one_replica(cls, value: int) -> int:
        if value != 1:
            raise invalid(
                "the primary pool runs exactly one replica; for more machines add "
                f"workers: {{replicas: {max(value - 1, 1)}}}"
            )
        return value
