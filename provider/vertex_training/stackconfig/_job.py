"""The resolved job: ``JobSpec`` (defaults applied, pools inherited, every rule checked),
what the providers and backends consume, and its Vertex AI REST ``CustomJob`` body.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
)

from vertex_training.api.bodies import PASS_THROUGH_FIELDS
from vertex_training.catalog import machines
from vertex_training.stackconfig._constants import (
    DEFAULT_BACKEND,
    DEFAULT_WAIT_TIMEOUT_S,
    LOCAL_DEFAULT_PROJECT,
    SECRET_PLACEHOLDER,
    Backend,
    Role,
    Strategy,
    WaitUntil,
)
from vertex_training.stackconfig._dataset import DatasetInput
from vertex_training.stackconfig._model import ModelUpload
from vertex_training.stackconfig._rules import SecretValue, _format_duration


class _SpecModel(BaseModel):
    """Base of the canonical models: immutable, no unknown fields."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class StackSettings(_SpecModel):
    """The stack-wide settings every job defaults from."""

    stack: str
    project: str | None = None
    region: str | None = None
    backend: Backend = DEFAULT_BACKEND
    api_endpoint: str | None = None
    # Defaults from the stack's platform (vertex_training.stackconfig.platform), for vertex jobs
    # only:
    #: the account a job runs as unless it names one;
    service_account: str | None = None
    #: ``gs://<bucket>``: a job writes under ``<output_root>/<job>`` unless it names a place;
    output_root: str | None = None
    #: ``<region>-docker.pkg.dev/<project>/<repo>``: where ``image: name:tag`` is found;
    image_repository: str | None = None
    #: the TensorBoard of ``tensorboard: true``.
    tensorboard: str | None = None
    #: Where the job's config was written: None for the stack config
    #: (``vertex-training:jobs.<name>``), ``program`` for a resource's arguments in a
    #: program (``vertex_training.resources.job_arguments``: mistakes named by argument).
    config_from: Literal["program"] | None = None
    #: Rows the project adds to the catalogue of prebuilt images (``vertex-training:images``,
    #: validated: ``vertex_training.stackconfig._image_rows``), as written.
    images: list[dict[str, Any]] | None = None
    #: The Pulumi project of the program the job is in, and its organization where the
    #: engine names one: with ``stack``, whom the job belongs to (its identity label,
    #: ``vertex_training.resources.submission.Owner``). None in the settings a release up
    #: to 0.3.0 recorded, and where no Pulumi program is involved (render, plan).
    pulumi_project: str | None = None
    pulumi_organization: str | None = None


class WaitPolicy(_SpecModel):
    """How long ``pulumi up`` waits for a job (provider-side: never resubmits the job)."""

    until: WaitUntil = "submitted"
    timeout_s: int = Field(DEFAULT_WAIT_TIMEOUT_S, gt=0)
    #: Fails the wait when the job has not started running this long after it was
    #: submitted; None: only ``timeout_s`` bounds the wait.
    start_timeout_s: int | None = Field(None, gt=0)


class RetryAttempt(_SpecModel):
    """Where one attempt of a job runs and under which scheduling strategy."""

    region: str
    strategy: Strategy


class RetryPolicy(_SpecModel):
    """When a failed job is submitted again, and where each attempt runs: ``attempts[0]``
    is the job's own region and strategy (provider-side: a change never resubmits the
    job)."""

    when: list[str]
    attempts: list[RetryAttempt]


class Accelerator(_SpecModel):
    """Accelerators attached to each replica of a pool."""

    type: str
    count: int


class Disk(_SpecModel):
    """Boot disk of each replica."""

    type: str = machines.DEFAULT_DISK_TYPE
    size_gb: int = machines.DEFAULT_DISK_SIZE_GB


class PythonPackage(_SpecModel):
    """A Python package run on a prebuilt executor image."""

    executor_image: str | None = None
    package_uris: list[str]
    module: str


class ReservationAffinity(_SpecModel):
    """Which Compute Engine reservation a pool's machines come from."""

    type: str
    key: str | None = None
    values: list[str] = []

    def request_body(self) -> dict[str, Any]:
        """REST ``ReservationAffinity``."""
        body: dict[str, Any] = {"reservationAffinityType": self.type}
        if self.key:
            body["key"] = self.key
        if self.values:
            body["values"] = list(self.values)
        return body


class NfsMount(_SpecModel):
    """An NFS export mounted at ``/mnt/nfs/<mount_point>``."""

    server: str
    path: str
    mount_point: str

    def request_body(self) -> dict[str, Any]:
        return {"server": self.server, "path": self.path, "mountPoint": self.mount_point}


class LustreMount(_SpecModel):
    """A Managed Lustre instance mounted at ``/mnt/lustre/<mount_point>``."""

    instance_ip: str
    volume_handle: str
    filesystem: str
    mount_point: str

    def request_body(self) -> dict[str, Any]:
        return {
            "instanceIp": self.instance_ip,
            "volumeHandle": self.volume_handle,
            "filesystem": self.filesystem,
            "mountPoint": self.mount_point,
        }


class DnsPeering(_SpecModel):
    """A DNS zone the job resolves through a peered network's Cloud DNS."""

    domain: str
    target_project: str
    target_network: str


class PscInterface(_SpecModel):
    """The network attachment a job reaches a VPC network through."""

    network_attachment: str
    dns_peering_configs: list[DnsPeering] = []

    def request_body(self) -> dict[str, Any]:
        """REST ``PscInterfaceConfig``."""
        body: dict[str, Any] = {"networkAttachment": self.network_attachment}
        if self.dns_peering_configs:
            body["dnsPeeringConfigs"] = [
                {
                    "domain": d.domain,
                    "targetProject": d.target_project,
                    "targetNetwork": d.target_network,
                }
                for d in self.dns_peering_configs
            ]
        return body


EnvValue = Annotated[str | SecretValue, Field(union_mode="left_to_right")]
#: JobSpec fields that only the provider uses (changing them never resubmits a job).
_SETTINGS_FIELDS = frozenset({"wait", "adopt", "retry", "run_after"})


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
    machine: str = machines.DEFAULT_MACHINE
    accelerator: Accelerator | None = None
    tpu_topology: str | None = None
    reservation: ReservationAffinity | None = None
    gpu_partition_size: str | None = None
    disk: Disk = Disk()
    nfs_mounts: list[NfsMount] = []
    lustre_mounts: list[LustreMount] = []
    image: str | None = None
    command: list[str] = []
    python_package: PythonPackage | None = None
    args: list[str] = []
    env: dict[str, EnvValue] = {}

    def machine_spec(self) -> dict[str, Any]:
        """REST ``MachineSpec``."""
        machine: dict[str, Any] = {"machineType": self.machine}
        if self.accelerator is not None:
            machine["acceleratorType"] = self.accelerator.type
            machine["acceleratorCount"] = self.accelerator.count
        if self.gpu_partition_size:
            machine["gpuPartitionSize"] = self.gpu_partition_size
        if self.tpu_topology:
            machine["tpuTopology"] = self.tpu_topology
        if self.reservation is not None:
            machine["reservationAffinity"] = self.reservation.request_body()
        return machine

    def request_body(self) -> dict[str, Any]:
        """Return this pool as a REST ``WorkerPoolSpec``."""
        body: dict[str, Any] = {
            "machineSpec": self.machine_spec(),
            # int64 in the proto: a JSON string, as the proto3 JSON mapping (and REST) has it.
            "replicaCount": str(self.replicas),
            # int32 in the proto: a JSON number.
            "diskSpec": {"bootDiskType": self.disk.type, "bootDiskSizeGb": self.disk.size_gb},
        }
        if self.nfs_mounts:
            body["nfsMounts"] = [m.request_body() for m in self.nfs_mounts]
        if self.lustre_mounts:
            body["lustreMounts"] = [m.request_body() for m in self.lustre_mounts]
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
    strategy: Strategy | None = None
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

    ``run_inputs()`` is what runs and where (any change replaces the job); ``settings()``
    is what only the provider uses (a change updates in place).
    """

    #: The key of this kind of request body in `vertex-training render` output.
    request_kind: ClassVar[str] = "customJob"

    name: str
    display_name: str
    project: str | None = None
    region: str
    backend: Backend = DEFAULT_BACKEND
    #: By position: 0 primary, 1 workers, 2 parameter servers or reduction server,
    #: 3 evaluators; ``None`` keeps a free position before a later pool.
    worker_pools: list[WorkerPool | None]
    scheduling: Scheduling = Scheduling()
    service_account: str | None = None
    network: str | None = None
    reserved_ip_ranges: list[str] = []
    psc_interface: PscInterface | None = None
    protected_artifact_location_id: str | None = None
    models: list[str] = []
    base_output_directory: str | None = None
    tensorboard: str | None = None
    enable_web_access: bool = False
    enable_dashboard_access: bool = False
    labels: dict[str, str] = {}
    kms_key: str | None = None
    persistent_resource_id: str | None = None
    experiment: str | None = None
    experiment_run: str | None = None
    #: The model the job registers: it runs as a training pipeline that uploads it.
    model: ModelUpload | None = None
    #: The managed dataset the job reads: it runs as a training pipeline that exports it.
    dataset: DatasetInput | None = None
    # Provider-side settings.
    wait: WaitPolicy = WaitPolicy()
    adopt: str | None = None
    retry: RetryPolicy | None = None
    #: The resource names of the jobs this one is submitted after, once each has succeeded.
    run_after: list[str] = []
    #: What preview should tell the user (each message names its stack config key): settings
    #: translated with a caveat, prebuilt images near their end of support. Never part of
    #: ``settings()``: a new warning never resubmits a job.
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
        for key, field in PASS_THROUGH_FIELDS.items():
            if value := getattr(self, key):
                job_spec[field] = list(value) if isinstance(value, list) else value
        if self.psc_interface is not None:
            job_spec["pscInterfaceConfig"] = self.psc_interface.request_body()
        if self.base_output_directory:
            job_spec["baseOutputDirectory"] = {"outputUriPrefix": self.base_output_directory}
        body: dict[str, Any] = {"displayName": self.display_name, "jobSpec": job_spec}
        if self.labels:
            body["labels"] = dict(sorted(self.labels.items()))
        if self.kms_key:
            body["encryptionSpec"] = {"kmsKeyName": self.kms_key}
        return body

    def location(self) -> dict[str, str | None]:
        """Where the job runs: its backend, project and region."""
        return {"backend": self.backend, "project": self.project, "region": self.region}

    def run_inputs(self) -> dict[str, Any]:
        """What the job's resource compares to decide on a replacement (``RUN_KEYS`` of
        ``vertex_training.api.bodies``): the request, the location, the model it
        registers and the dataset it reads (each left out for a job without, as before
        there were either)."""
        inputs = {"request": self.request_body(), "location": self.location()}
        if self.model is not None:
            inputs["model"] = self.model.request_body()
        if self.dataset is not None:
            inputs["dataset"] = self.dataset.request_body()
        return inputs

    def settings(self) -> dict[str, Any]:
        """Provider-side settings (wait policy, adopted job) as plain data. A wait with no
        ``start_timeout_s`` leaves the key out, so that the settings of a job written
        before it existed read the same (and its waiter does not wait for it again)."""
        settings = self.model_dump(mode="json", include=set(_SETTINGS_FIELDS))
        if settings["wait"].get("start_timeout_s") is None:
            settings["wait"].pop("start_timeout_s", None)
        if settings.get("retry") is None:
            settings.pop("retry", None)
        if not settings.get("run_after"):
            settings.pop("run_after", None)
        return settings
