"""A job's arguments as typed dictionaries: the keys of a stack config job, for type checkers.

``TrainingJob("train", TrainingJobArgs(image=..., machine="n1-standard-8"))`` takes the
same keys, with the same meanings, as ``vertex-training:jobs.train`` in a stack file
(docs/config-shape.md); mypy and pyright check a program's keys and value types against
these. Any value may be a Pulumi Output (a bucket's URL, a network's ID): the resource's
check reads it once it is known. What the keys mean and which values are allowed is
validated by the job's resource at ``pulumi preview``, each mistake named by its argument
path (``job.workers.machine``), the bad value and what to write instead.

Durations are text (``"3h"``, ``"90m"``) or seconds; versions are text (``"2.10"``).
``tests/test_library.py`` keeps every dictionary's keys the keys of the stack config model
it mirrors (``vertex_training.stackconfig._config``).
"""

# No ``from __future__ import annotations``: the dictionaries' required keys are read from
# their annotations at run time (``__required_keys__``), which needs them evaluated.
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Required, TypedDict

from pulumi import Input

from vertex_training.backend_kinds import BackendName  # where a job runs

#: Which state ``pulumi up`` waits for.
WaitUntilName = Literal["submitted", "running", "succeeded"]
StrategyName = Literal["STANDARD", "SPOT", "FLEX_START"]
#: A study's choices (``vertex_training.stackconfig.study``'s, which tests/test_library.py
#: keeps these equal to).
GoalName = Literal["MAXIMIZE", "MINIMIZE"]
ParameterTypeName = Literal["double", "integer", "categorical", "discrete"]
ScaleName = Literal["linear", "log", "reverse_log"]
AlgorithmName = Literal["default", "grid", "random"]
MeasurementSelectionName = Literal["best", "last"]


class AcceleratorArgs(TypedDict, total=False):
    """``accelerator: {type: NVIDIA_TESLA_T4, count: 1}``; ``{count: 0}``: none (in a
    worker pool, rather than the primary pool's)."""

    type: Input[str]
    count: Input[int]


class DiskArgs(TypedDict, total=False):
    """``disk: {type: pd-ssd, size_gb: 100}``; the type defaults by machine."""

    type: Input[str]
    size_gb: Input[int]


class FrameworkArgs(TypedDict, total=False):
    """``framework: {name: pytorch, version: "2.4", python: "3.10"}``: a prebuilt image."""

    name: Required[Input[str]]
    version: Required[Input[str]]
    python: Input[str]


class PythonPackageArgs(TypedDict, total=False):
    """``python_package``: a Python package run on a prebuilt executor image."""

    module: Required[Input[str]]
    executor_image: Input[str]
    package_uris: Input[Sequence[Input[str]]]
    package_path: Input[str]
    framework: FrameworkArgs


ReservationAffinityType = Literal["NO_RESERVATION", "ANY_RESERVATION", "SPECIFIC_RESERVATION"]


class ReservationAffinityArgs(TypedDict, total=False):
    """``reservation_affinity``: the Compute Engine reservation a pool's machines come from;
    ``values`` names a specific one (projects/P/zones/Z/reservations/NAME)."""

    type: Required[ReservationAffinityType]
    key: Input[str]
    values: Input[Sequence[Input[str]]]


class NfsMountArgs(TypedDict):
    """An NFS export mounted at ``/mnt/nfs/<mount_point>``."""

    server: Input[str]
    path: Input[str]
    mount_point: Input[str]


class LustreMountArgs(TypedDict):
    """A Managed Lustre instance mounted at ``/mnt/lustre/<mount_point>``."""

    instance_ip: Input[str]
    volume_handle: Input[str]
    filesystem: Input[str]
    mount_point: Input[str]


class DnsPeeringArgs(TypedDict):
    """A DNS zone (its suffix ends with a dot) resolved through a peered network."""

    domain: Input[str]
    target_project: Input[str]
    target_network: Input[str]


class PscInterfaceArgs(TypedDict, total=False):
    """``psc_interface_config``: a VPC network reached through a network attachment."""

    network_attachment: Required[Input[str]]
    dns_peering_configs: Sequence[DnsPeeringArgs]


class _PoolKeys(TypedDict, total=False):
    """The keys every pool may set, the job itself too (for its primary pool)."""

    image: Input[str]
    command: Input[Sequence[Input[str]]]
    python_package: PythonPackageArgs
    args: Input[Sequence[Input[str]]]
    env: Input[Mapping[str, Input[str]]]
    machine: Input[str]
    accelerator: AcceleratorArgs
    tpu_topology: Input[str]
    disk: DiskArgs
    reservation_affinity: ReservationAffinityType | ReservationAffinityArgs
    gpu_partition_size: Input[str]
    nfs_mounts: Sequence[NfsMountArgs]
    lustre_mounts: Sequence[LustreMountArgs]


class PoolArgs(_PoolKeys, total=False):
    """``workers``, ``parameter_servers``, ``evaluators``: a worker pool."""

    replicas: Input[int]


class ReductionServerArgs(TypedDict, total=False):
    """``reduction_server``: Google's reduction server image on its own pool."""

    replicas: Input[int]
    machine: Input[str]
    disk: DiskArgs


class SchedulingArgs(TypedDict, total=False):
    """``scheduling``: timeout, restarts, strategy (STANDARD, SPOT, FLEX_START)."""

    timeout: Input[str] | Input[int]
    restart_job_on_worker_restart: Input[bool]
    disable_retries: Input[bool]
    strategy: Input[StrategyName]
    max_wait_duration: Input[str] | Input[int]


class WaitArgs(TypedDict, total=False):
    """``wait: {until: succeeded, timeout: 3h, start_timeout: 1h}``."""

    until: WaitUntilName
    timeout: str | int
    start_timeout: str | int


class RetryArgs(TypedDict, total=False):
    """``retry``: submit the job again when it fails for a reason not its own."""

    when: Required[Sequence[str]]
    attempts: int
    regions: Sequence[str]
    strategies: Sequence[StrategyName]


class StudyMetricArgs(TypedDict):
    """``{id: accuracy, goal: MAXIMIZE}``: a metric the trials report, and its goal."""

    id: str
    goal: GoalName


class ConditionalParametersArgs(TypedDict):
    """``{when: [adam], parameters: {beta1: {...}}}``: parameters tuned only when their
    parent takes one of the ``when`` values."""

    when: Sequence[str | float]
    parameters: Mapping[str, "StudyParameterArgs"]


class StudyParameterArgs(TypedDict, total=False):
    """A parameter to tune: ``double`` and ``integer`` take ``min`` and ``max``,
    ``categorical`` (text) and ``discrete`` (numbers) take ``values``."""

    type: Required[ParameterTypeName]
    min: float
    max: float
    values: Sequence[str | float]
    scale: ScaleName
    conditional: Sequence[ConditionalParametersArgs]


# The two reach each other; at run time (where the schema reads the annotations) the
# name written ahead is replaced by the type once that is made.
ConditionalParametersArgs.__annotations__["parameters"] = Mapping[str, StudyParameterArgs]


class DecayCurveStoppingArgs(TypedDict, total=False):
    """``early_stopping.decay_curve``."""

    use_elapsed_duration: bool


class MedianStoppingArgs(TypedDict, total=False):
    """``early_stopping.median``."""

    use_elapsed_duration: bool


class ConvexStoppingArgs(TypedDict, total=False):
    """``early_stopping.convex``."""

    max_step_count: int
    min_step_count: int
    min_measurement_count: int
    learning_rate_parameter_name: str
    use_elapsed_duration: bool
    update_all_stopped_trials: bool


class EarlyStoppingArgs(TypedDict, total=False):
    """``early_stopping``: at most one rule that stops unpromising trials early."""

    decay_curve: DecayCurveStoppingArgs
    median: MedianStoppingArgs
    convex: ConvexStoppingArgs


class StudyArgs(TypedDict, total=False):
    """``study``: what a hyperparameter tuning job tunes, towards which metric, and how
    many trials it runs (docs/tuning.md)."""

    metrics: Required[Sequence[StudyMetricArgs]]
    parameters: Required[Mapping[str, StudyParameterArgs]]
    algorithm: AlgorithmName
    measurement_selection: MeasurementSelectionName
    early_stopping: EarlyStoppingArgs
    max_trials: Required[int]
    parallel_trials: int
    max_failed_trials: int


class ServingFrameworkArgs(TypedDict, total=False):
    """``framework: {name: sklearn, version: "1.5", gpu: false}``: Google's prebuilt
    prediction image."""

    name: Required[Input[str]]
    version: Required[Input[str]]
    gpu: Input[bool]


class ServingArgs(TypedDict, total=False):
    """``serving:``: the container that serves the model's predictions, ``image`` or
    ``framework``."""

    image: Input[str]
    framework: ServingFrameworkArgs
    command: Input[Sequence[Input[str]]]
    args: Input[Sequence[Input[str]]]
    env: Input[Mapping[str, Input[str]]]
    port: Input[int]
    predict_route: Input[str]
    health_route: Input[str]


class ModelArgs(TypedDict, total=False):
    """``model:``: the Model Registry entry the trained model becomes (the job runs as a
    training pipeline; docs/models.md)."""

    display_name: Input[str]
    id: Input[str]
    parent: Input[str]
    description: Input[str]
    version_description: Input[str]
    labels: Input[Mapping[str, Input[str]]]
    aliases: Input[Sequence[Input[str]]]
    serving: Required[ServingArgs]


class FractionsArgs(TypedDict, total=False):
    """``{training: 0.8, validation: 0.1, test: 0.1}``: they sum to at most 1."""

    training: Input[float]
    validation: Input[float]
    test: Input[float]


class KeyedFractionsArgs(FractionsArgs, total=False):
    """``{key: <column>, training: 0.8, ...}``: a timestamp or stratified split."""

    key: Required[Input[str]]


class FiltersArgs(TypedDict):
    """``{training: <filter>, validation: <filter>, test: <filter>}``."""

    training: Input[str]
    validation: Input[str]
    test: Input[str]


class SplitArgs(TypedDict, total=False):
    """``split:``: one of ``fractions``, ``filter``, ``predefined``, ``timestamp``,
    ``stratified``."""

    fractions: FractionsArgs
    filter: FiltersArgs
    predefined: Input[str]
    timestamp: KeyedFractionsArgs
    stratified: KeyedFractionsArgs


class DatasetArgs(TypedDict, total=False):
    """``dataset:``: the Vertex AI managed dataset the job reads (it runs as a training
    pipeline; docs/models.md)."""

    id: Required[Input[str]]
    destination: Required[Input[str]]
    split: SplitArgs
    annotations_filter: Input[str]
    annotation_schema_uri: Input[str]
    saved_query_id: Input[str]
    persist_ml_use_assignment: Input[bool]


class TrainingJobArgs(_PoolKeys, total=False):
    """One job: the keys of an entry of ``vertex-training:jobs`` (docs/config-shape.md).

    The primary pool's keys are the job's own (``_PoolKeys``: ``image``, ``machine``,
    ``accelerator``, ...); ``workers``, ``parameter_servers``, ``reduction_server`` and
    ``evaluators`` add pools. ``study`` makes it a hyperparameter tuning job
    (docs/tuning.md); ``training_input`` is an AI Platform Training block, translated
    (docs/legacy.md).
    """

    replicas: int
    workers: PoolArgs
    parameter_servers: PoolArgs
    reduction_server: ReductionServerArgs
    evaluators: PoolArgs
    display_name: Input[str]
    region: Input[str]
    backend: BackendName
    scheduling: SchedulingArgs
    service_account: Input[str]
    network: Input[str]
    reserved_ip_ranges: Input[Sequence[Input[str]]]
    psc_interface_config: PscInterfaceArgs
    protected_artifact_location_id: Input[str]
    models: Input[Sequence[Input[str]]]
    base_output_directory: Input[str]
    tensorboard: Input[str] | bool
    enable_web_access: Input[bool]
    enable_dashboard_access: Input[bool]
    labels: Input[Mapping[str, Input[str]]]
    kms_key: Input[str]
    persistent_resource_id: Input[str]
    experiment: Input[str]
    experiment_run: Input[str]
    model: ModelArgs
    dataset: DatasetArgs
    wait: WaitUntilName | WaitArgs
    adopt: str
    run_after: Input[Sequence[Input[str]]]
    retry: RetryArgs
    rerun: str | int
    study: StudyArgs
    training_input: Mapping[str, Any]
    job_id: str
    framework: FrameworkArgs
    runtime_version: str
    python_version: str


#: The kinds of machine a prebuilt image runs on.
ImageKindName = Literal["cpu", "gpu", "tpu"]


class ImageRowArgs(TypedDict):
    """A row added to the catalogue of prebuilt images (``vertex-training:images``, as
    docs/images.md shows), read from Google's page on ``read_on``."""

    framework: str
    version: str
    python: str
    kinds: Sequence[ImageKindName]
    name: str
    end_of_support: str
    end_of_availability: str
    source: str
    read_on: str


class BucketArgs(TypedDict, total=False):
    """``platform.bucket``: the staging bucket's name and lifecycle."""

    name: str
    force_destroy: bool
    staging_expiry_days: int
    noncurrent_expiry_days: int


class RepositoryArgs(TypedDict, total=False):
    """``platform.repository``: the Artifact Registry Docker repository."""

    id: str


class ServiceAccountArgs(TypedDict, total=False):
    """``platform.service_account``: the jobs' service account."""

    account_id: str


class TensorboardArgs(TypedDict, total=False):
    """``platform.tensorboard``: a Vertex AI TensorBoard for the jobs."""

    enabled: bool


class PlatformArgs(TypedDict, total=False):
    """The platform's settings: the keys of ``vertex-training:platform`` that shape what
    ``TrainingPlatform`` creates (docs/platform.md). All optional: by default a bucket,
    a repository and an account named after the stack."""

    protect: bool
    deployer: str | Sequence[str]
    bucket: BucketArgs
    repository: RepositoryArgs
    service_account: ServiceAccountArgs
    tensorboard: TensorboardArgs


#: Each choice of a key, by the name of its enum in the plugin's schema: a TypeScript or
#: Go program is told a misspelt value when it compiles (``plugin.shapes.enum_type``).
SCHEMA_ENUMS: Mapping[Any, str] = {
    BackendName: "Backend",
    WaitUntilName: "WaitUntil",
    StrategyName: "Strategy",
    GoalName: "Goal",
    ParameterTypeName: "ParameterType",
    ScaleName: "Scale",
    AlgorithmName: "Algorithm",
    MeasurementSelectionName: "MeasurementSelection",
    ReservationAffinityType: "ReservationAffinityType",
    ImageKindName: "ImageKind",
}
