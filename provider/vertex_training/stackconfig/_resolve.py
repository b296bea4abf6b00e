"""From a job's validated keys to its ``JobSpec``: defaults, inheritance between worker
pools, and the rules that relate several keys (machine and accelerator, region, pools,
scheduling).

Worker pool inheritance: ``workers``, ``parameter_servers`` and ``evaluators`` take each of
these from the primary pool unless they set it: the program (``image`` with its
``command``, or ``python_package``, as one unit), ``args``, ``env``, ``machine``,
``accelerator``, ``tpu_topology``, ``disk``. ``accelerator: null`` in a pool means "no
accelerator" rather than "inherit". A pool that sets its own accelerator-optimized machine
(a2, a3, a4, g2) gets the GPUs that machine comes with unless it names an accelerator.
The reduction server inherits nothing: it runs Google's reduction server image.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import (
    BaseModel,
)

from vertex_training.api import image_refs
from vertex_training.api.bodies import PASS_THROUGH_FIELDS
from vertex_training.api.labels import RERUN_LABEL
from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import images, machines
from vertex_training.errors import Issue, MissingSetting
from vertex_training.stackconfig import platform as stack_platform
from vertex_training.stackconfig._access import (
    check_job_access,
    check_mounts,
    check_pool_access,
)
from vertex_training.stackconfig._config import (
    AcceleratorConfig,
    DiskConfig,
    JobConfig,
    PoolConfig,
    PythonPackageConfig,
    ReductionServerConfig,
    WaitConfig,
    _PoolConfig,
)
from vertex_training.stackconfig._constants import (
    GCP_PROJECT_KEY,
    GCP_REGION_KEY,
    GCS_PREFIX,
    JOBS_KEY,
    LOCAL_DEFAULT_REGION,
    PLATFORM_KEY,
    POOL_POSITIONS,
    Role,
)
from vertex_training.stackconfig._dataset import DatasetInput, resolve_dataset
from vertex_training.stackconfig._issues import did_you_mean, full_key, one_of
from vertex_training.stackconfig._job import (
    Accelerator,
    Disk,
    DnsPeering,
    JobSpec,
    LustreMount,
    NfsMount,
    PscInterface,
    PythonPackage,
    ReservationAffinity,
    StackSettings,
    WaitPolicy,
    WorkerPool,
)
from vertex_training.stackconfig._model import ModelUpload, resolve_model
from vertex_training.stackconfig._retry import RetryRules
from vertex_training.stackconfig._settings_rules import JobSettingsRules, reserved_retry_issue

_T = TypeVar("_T")
#: What a pool writes for no accelerator, in every language's types (``null`` too, in a
#: stack file: a typed SDK has no null for it).
NO_ACCELERATOR = "{count: 0}"
#: The warning for a key only Vertex AI acts on, in a job the local backend runs.
LOCAL_IGNORES = (
    "the local backend runs the job on this machine and does not act on this key (no "
    "reservation, partition, mount or private network there); the vertex backend sends it"
)


@dataclass(frozen=True)
class _Checked(Generic[_T]):
    """What a check of one pool setting found: its ``value`` (None for none), or ``ok``
    False once the check has recorded an issue (``value`` is then None)."""

    value: _T | None
    ok: bool = True


class _JobResolver(RetryRules, JobSettingsRules):
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
        #: What does not stop the job: shown by render and preview.
        self.warnings: list[Issue] = []
        self.backend = config.backend or stack.backend
        #: In a Google Cloud project and region: the Vertex-only keys and the offer apply.
        self.vertex = kind_of(self.backend).cloud
        self.region = self._resolve_region()
        #: The pools that mount NFS exports (their key paths), for the network rule.
        self.nfs_paths: list[tuple[str | int, ...]] = []
        #: Each pool's GPU type (by the pool's key path), for the networking rules.
        self.gpus_by_pool: list[tuple[tuple[str | int, ...], str]] = []

    # -- helpers

    def key(self, *path: str | int) -> str:
        return full_key(self.base, path)

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
        self.issues.append(Issue(full_key(self.base, path), written, message))

    def warn(self, path: Sequence[str | int], value: Any, message: str) -> None:
        """Record a warning: shown by render and preview; the job goes ahead."""
        self.warnings.append(Issue(full_key(self.base, path), _plain(value), message))

    # -- job-level

    def _resolve_region(self) -> str:
        region = self.config.region or self.stack.region
        if not self.vertex:
            return region or LOCAL_DEFAULT_REGION
        if not self.stack.project:
            no_project = stack_platform.NO_PROJECT_MESSAGE
            self.issues.append(MissingSetting(GCP_PROJECT_KEY, None, no_project, "project"))
        if not region:
            no_region = stack_platform.NO_REGION_MESSAGE
            self.issues.append(MissingSetting(self.key("region"), None, no_region, "region"))
            return ""
        if region not in machines.TRAINING_REGIONS:
            key = self.key("region") if self.config.region else GCP_REGION_KEY
            hint = did_you_mean(region, machines.TRAINING_REGIONS)
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
        self._check_capacity(pools, scheduling)
        service_account, base_output_directory, tensorboard = self._platform_defaults()
        self._check_job_settings(service_account, tensorboard)
        wait = config.wait or WaitConfig()
        self._check_wait(wait)
        retry = self._resolve_retry(pools, scheduling) if config.retry is not None else None
        if config.retry is not None and (
            why := reserved_retry_issue(pools, config.retry.regions, self.region)
        ):
            self.fail(("retry", "regions"), config.retry.regions, why)
        psc = config.psc_interface_config
        if psc is not None and not self.vertex:
            self.warn(("psc_interface_config",), psc, LOCAL_IGNORES)
        if self.vertex:
            check_job_access(
                self.fail,
                region=self.region,
                network=config.network,
                psc=psc,
                protected_location=config.protected_artifact_location_id,
                nfs_paths=self.nfs_paths,
                gpus_by_pool=self.gpus_by_pool,
            )
        model, dataset = self._resolve_pipeline(base_output_directory)
        if self.issues:
            return None
        # The keys that pass straight into the request, as written (the account and the
        # TensorBoard as the stack's defaults fill them in); unset ones keep JobSpec's.
        defaulted = {"service_account": service_account, "tensorboard": tensorboard}
        passed: dict[str, Any] = {
            key: list(value) if isinstance(value, list) else value
            for key in PASS_THROUGH_FIELDS
            if (value := defaulted[key] if key in defaulted else getattr(config, key)) is not None
        }
        return JobSpec(
            name=self.name,
            display_name=config.display_name or self.name,
            project=self.stack.project,
            region=self.region,
            backend=self.backend,
            worker_pools=pools,
            scheduling=scheduling,
            psc_interface=(
                PscInterface(
                    network_attachment=psc.network_attachment,
                    dns_peering_configs=[
                        DnsPeering(**d.model_dump()) for d in psc.dns_peering_configs or []
                    ],
                )
                if psc is not None
                else None
            ),
            base_output_directory=base_output_directory,
            labels=dict(
                sorted(
                    {
                        **(config.labels or {}),
                        **({RERUN_LABEL: config.rerun} if config.rerun is not None else {}),
                    }.items()
                )
            ),
            kms_key=config.kms_key,
            model=model,
            dataset=dataset,
            wait=WaitPolicy(
                until=wait.until, timeout_s=wait.timeout, start_timeout_s=wait.start_timeout
            ),
            adopt=config.adopt,
            retry=retry,
            run_after=list(config.run_after or []),
            **passed,
        )

    def _resolve_pipeline(
        self, output: str | None
    ) -> tuple[ModelUpload | None, DatasetInput | None]:
        """The model the job registers (``model:``) and the dataset it reads (``dataset:``),
        each None without (``_model``, ``_dataset``)."""
        where, model, dataset = (self.stack.project, self.region, not self.vertex), None, None
        if self.config.model is not None:
            display_name = self.config.display_name or self.name
            model, issues, warnings = resolve_model(
                self.base, self.config.model, display_name=display_name, where=where, output=output
            )
            self.issues.extend(issues)
            self.warnings.extend(warnings)
        if self.config.dataset is not None:
            dataset, issues = resolve_dataset(self.base, self.config.dataset, where=where)
            self.issues.extend(issues)
        return model, dataset

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
        return service_account, output, tensorboard

    def _image(self, image: str | None) -> str | None:
        """An image with no registry host (``trainer:1``) is in the platform repository."""
        if image is None or not self.vertex:
            return image
        return image_refs.in_repository(image, self.stack.image_repository)

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
        inheriting: tuple[tuple[Role, PoolConfig | None], ...] = (
            ("workers", config.workers),
            ("parameter_servers", config.parameter_servers),
            ("evaluators", config.evaluators),
        )
        for role, pool_config in inheriting:
            if pool_config is not None:
                by_position[POOL_POSITIONS[role]] = self._pool(
                    role, (role,), pool_config, inherit=True
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
        program_from: tuple[str, ...]
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

        machine_name = pick("machine") or machines.DEFAULT_MACHINE
        machine = machines.MACHINE_TYPES[machine_name]
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
        written_topology = own.tpu_topology
        if (
            written_topology is None
            and inherit
            and "tpu_topology" not in set_keys
            and machine_inherited
        ):
            written_topology = parent.tpu_topology
        topology = self._check_topology(path, machine, written_topology)
        disk = self._disk(path, machine, pick("disk"))
        access = self._pool_access(
            path, own, inherit=inherit, machine_inherited=machine_inherited, gpus=accelerator.value
        )
        if not (ok and accelerator.ok and topology.ok) or access is None or disk is None:
            return None
        return WorkerPool(
            role=role,
            replicas=getattr(own, "replicas", 1) if inherit else 1,
            machine=machine_name,
            accelerator=accelerator.value,
            tpu_topology=topology.value,
            disk=disk,
            **access,
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

    def _pool_access(
        self,
        path: Sequence[str],
        own: _PoolConfig,
        *,
        inherit: bool,
        machine_inherited: bool,
        gpus: Accelerator | None,
    ) -> dict[str, Any] | None:
        """The pool's reservation, GPU partitions and mounts as WorkerPool fields, or None
        after an issue. A pool that inherits the machine inherits its reservation; one that
        inherits the accelerator, its partition size; mounts are inherited like env."""
        parent: _PoolConfig = self.config
        set_keys = own.model_fields_set
        reservation = (
            parent.reservation_affinity
            if inherit and machine_inherited and "reservation_affinity" not in set_keys
            else own.reservation_affinity
        )
        inherits_gpus = inherit and machine_inherited and "accelerator" not in set_keys
        partition = (
            parent.gpu_partition_size
            if inherits_gpus and "gpu_partition_size" not in set_keys
            else own.gpu_partition_size
        )
        nfs = own.nfs_mounts if own.nfs_mounts is not None or not inherit else parent.nfs_mounts
        lustre = (
            own.lustre_mounts
            if own.lustre_mounts is not None or not inherit
            else parent.lustre_mounts
        )
        if nfs:
            self.nfs_paths.append((*path, "nfs_mounts"))
        if not self.vertex:
            written = {
                "reservation_affinity": reservation,
                "gpu_partition_size": partition,
                "nfs_mounts": nfs,
                "lustre_mounts": lustre,
            }
            for key in (k for k, v in written.items() if v):
                self.warn((*path, key), written[key], LOCAL_IGNORES)
        if gpus is not None:
            self.gpus_by_pool.append((tuple(path), gpus.type))
        ok = check_pool_access(
            self.fail,
            self.warn,
            path,
            region=self.region,
            vertex=self.vertex,
            reservation=reservation,
            partition=partition,
            accelerator=(gpus.type, gpus.count) if gpus else None,
            strategy=self.config.scheduling.strategy if self.config.scheduling else None,
            persistent_resource=self.config.persistent_resource_id is not None,
        )
        if not check_mounts(self.fail, path, nfs or [], lustre or []) or not ok:
            return None
        return {
            "reservation": (
                ReservationAffinity(
                    type=reservation.type,
                    key=reservation.reservation_key,
                    values=list(reservation.values or []),
                )
                if reservation is not None
                else None
            ),
            "gpu_partition_size": partition,
            "nfs_mounts": [NfsMount(**m.model_dump()) for m in nfs or []],
            "lustre_mounts": [LustreMount(**m.model_dump()) for m in lustre or []],
        }

    def _check_package(self, path: Sequence[str], package: PythonPackageConfig) -> bool:
        """Package URIs (package_path is resolved before this), then vertex-only rules."""
        where = (*path, "python_package")
        if package.package_path is not None:
            self.fail(
                (*where, "package_path"),
                package.package_path,
                "a package directory is built into an sdist by `pulumi up` (and by `python "
                "-m vertex_training render`), which put its URI first in package_uris; resolve "
                "the job with vertex_training.packaging before parsing it",
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
                'framework: {name: pytorch, version: "2.5"} (or another framework and '
                "version) to pick it, or executor_image to name one from "
                f"{images.CATALOGUE_URL}",
            )
            ok = False
        elif isinstance(image_refs.parse(executor), image_refs.NotAReference):
            ok = False  # not a reference: _prebuilt reported it, with the fix
        elif images.is_prediction_image(executor):
            self.fail(
                (*path, "python_package", "executor_image"),
                executor,
                "that is a prediction image; use the matching training image "
                "(.../vertex-ai/training/...)",
            )
            ok = False
        elif images.prebuilt_image_name(executor) is None:
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
        machine: machines.MachineType,
        config: AcceleratorConfig | None,
        *,
        inherited: bool,
    ) -> _Checked[Accelerator]:
        """The pool's accelerator (None for none), or not ``ok`` after an issue."""
        if config is None:
            return self._implied_accelerator(path, machine)
        where = (*path, "accelerator")
        inherited_note = (
            f" (inherited from the primary pool: write accelerator: {NO_ACCELERATOR} here for none)"
            if inherited
            else ""
        )
        if config.type is None:
            takes = one_of(list(machine.accelerators)) if machine.accelerators else "none"
            self.fail(
                (*where, "type"),
                None,
                f"name the accelerator ({machine.name} takes {takes}), or write "
                f"accelerator: {NO_ACCELERATOR} for none",
            )
            return _Checked(None, ok=False)
        if config.type not in machine.accelerators:
            if machine.accelerators:
                takes = f"takes {one_of(list(machine.accelerators))}"
            else:
                takes = "takes no accelerators"
            others = machines.machines_taking(config.type)
            example = f"; machines that take {config.type} include {one_of(others[:3])}"
            self.fail(
                (*where, "type"),
                config.type,
                f"{machine.name} {takes}{inherited_note}. Pick another accelerator or "
                f"machine{example if others else ''}",
            )
            return _Checked(None, ok=False)
        counts = machine.accelerators[config.type]
        if config.count not in counts:
            self.fail(
                (*where, "count"),
                config.count,
                f"{machine.name} takes {config.type} in counts {one_of(counts)}"
                f"{inherited_note}; write one of those",
            )
            return _Checked(None, ok=False)
        if not self._check_region_offers(path, config.type, ("accelerator", "type")):
            return _Checked(None, ok=False)
        return _Checked(Accelerator(type=config.type, count=config.count))

    def _implied_accelerator(
        self, path: Sequence[str], machine: machines.MachineType
    ) -> _Checked[Accelerator]:
        """What a machine comes with when a pool names no accelerator."""
        if machine.built_in is not None:
            accelerator_type, count = machine.built_in
            if not self._check_region_offers(path, accelerator_type, ("machine",)):
                return _Checked(None, ok=False)
            return _Checked(Accelerator(type=accelerator_type, count=count))
        if machine.tpu and not machine.tpu_topologies:
            self.fail(
                (*path, "accelerator"),
                None,
                f"{machine.name} needs an accelerator: write accelerator: "
                f"{{type: {one_of(list(machine.accelerators))}, count: 8}}",
            )
            return _Checked(None, ok=False)
        if machine.tpu:  # TPU machines with built-in chips: the machine type says it all
            (accelerator_type,) = machine.accelerators
            if not self._check_region_offers(path, accelerator_type, ("machine",)):
                return _Checked(None, ok=False)
        return _Checked(None)

    def _check_region_offers(
        self,
        path: Sequence[str | int],
        accelerator_type: str,
        where: Sequence[str],
        *,
        region: str | None = None,
    ) -> bool:
        """Check (vertex backend) that the job's region (or ``region``, a retry region)
        offers ``accelerator_type``.

        While the locations page has not been re-read (``REGION_TABLE_CONFIRMED_ON`` is
        None) a row that lacks the accelerator is a warning naming the page, not a refusal.
        """
        region = region or self.region
        offered = machines.TRAINING_ACCELERATORS_BY_REGION.get(region)
        if not self.vertex or offered is None or accelerator_type in offered:
            return True
        regions = machines.regions_offering(accelerator_type)
        elsewhere = f"; it is offered in {one_of(regions)}" if regions else ""
        confirmed = machines.REGION_TABLE_CONFIRMED_ON
        if confirmed is None:
            self.warnings.append(
                Issue(
                    self.key(*path, *where),
                    accelerator_type,
                    f"this project's table of training accelerators by region (last read "
                    f"2026-11-21) does not list {accelerator_type} in {region}"
                    f"{elsewhere}, and Google's page could not be re-read to confirm it: "
                    f"check {machines.LOCATIONS_URL} before submitting",
                )
            )
            return True
        self.fail(
            (*path, *where),
            accelerator_type,
            f"{accelerator_type} is not offered for training in {region}{elsewhere} "
            f"({machines.LOCATIONS_URL}, read {confirmed}). "
            f"Change region, or use an accelerator {region} offers: "
            f"{one_of(sorted(offered))}",
        )
        return False

    def _check_topology(
        self, path: Sequence[str], machine: machines.MachineType, topology: str | None
    ) -> _Checked[str]:
        """The pool's TPU topology (the machine's own when none is written; None for none).

        A multi-host slice (4x4 on ct5lp-hightpu-4t: 16 chips on 4 VMs) is still one replica
        in one pool. A shape only Cloud TPU documents for the machine is warned about.
        """
        if topology is None:
            return _Checked(machine.tpu_topologies[0] if machine.tpu_topologies else None)
        if not machine.tpu_topologies:
            with_topologies = [n for n, m in machines.MACHINE_TYPES.items() if m.tpu_topologies]
            self.fail(
                (*path, "tpu_topology"),
                topology,
                f"{machine.name} has no TPU topology; tpu_topology applies to TPU machines "
                f"({one_of(with_topologies)}): remove it",
            )
            return _Checked(None, ok=False)
        row = machine.tpu_slice(topology)
        if row is None:
            shapes = ", ".join(
                f"{s.topology} ({s.chips} chips{f', {s.vms} VMs' if s.vms > 1 else ''})"
                for s in machine.tpu_slices
            )
            self.fail(
                (*path, "tpu_topology"),
                topology,
                f"{machine.name} runs the topologies {shapes}, each on one replica; write "
                f"one of those (tpu_topology: {machine.tpu_topologies[0]} for one VM)",
            )
            return _Checked(None, ok=False)
        if not row.vertex_confirmed:
            self.warnings.append(
                Issue(
                    self.key(*path, "tpu_topology"),
                    topology,
                    f"Cloud TPU documents the {topology} slice ({row.chips} chips, {row.vms} "
                    f"{machine.name} VMs), but no Google source this project could read shows "
                    f"Vertex AI custom training running it; check {machines.CONFIGURE_COMPUTE_URL}",
                )
            )
        return _Checked(topology)

    def _disk(
        self, path: Sequence[str], machine: machines.MachineType, config: DiskConfig | None
    ) -> Disk | None:
        disk_type = (config.type if config else None) or machine.default_disk_type
        size = config.size_gb if config else machines.DEFAULT_DISK_SIZE_GB
        if disk_type not in machine.disk_types:
            self.fail(
                (*path, "disk", "type"),
                disk_type,
                f"{machine.name} boots from {one_of(machine.disk_types)} only; write that type",
            )
            return None
        return Disk(type=disk_type, size_gb=size)

    def _reduction_server(
        self, config: ReductionServerConfig, workers: WorkerPool | None
    ) -> WorkerPool | None:
        path = ("reduction_server",)
        machine = machines.MACHINE_TYPES[config.machine]
        ok = True
        if (
            workers is None
            or workers.accelerator is None
            or (workers.accelerator.type not in machines.GPU_ACCELERATORS)
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
                f"machine: {machines.DEFAULT_REDUCTION_SERVER_MACHINE}",
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
            image=machines.REDUCTION_SERVER_IMAGE,
        )

    def _check_tpu_single_pool(self, by_position: Mapping[int, WorkerPool | None]) -> None:
        primary = by_position.get(0)
        if primary is None or not machines.MACHINE_TYPES[primary.machine].tpu:
            return
        for role in ("workers", "parameter_servers", "reduction_server", "evaluators"):
            if getattr(self.config, role) is not None:
                self.fail(
                    (role,),
                    getattr(self.config, role).model_dump(exclude_unset=True),
                    f"TPU jobs run on one pool with one replica ({primary.machine}); remove {role}",
                )


def _plain(value: Any) -> Any:
    """Models as dicts, so that Issue values print as the user wrote them."""
    if isinstance(value, BaseModel):
        return value.model_dump(exclude_unset=True)
    return value
