"""``_Translator``: one ``trainingInput`` block -> native keys, a key at a time (one class:
the cluster layout, machines, program, scheduling, hyperparameters, settings).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from provider.catalog import machines
from provider.catalog.images import LEGACY_RUNTIMES
from provider.errors import Issue
from provider.stackconfig.legacy._tables import (
    _DURATION_RE,
    ACCELERATOR_CONFIG_KEYS,
    ALGORITHMS,
    CLOUD_TPU,
    CUSTOM_TIER,
    DEFAULT_GOAL,
    DEFAULT_MAX_TRIALS,
    DEFAULT_METRIC_TAG,
    DEFAULT_PARALLEL_TRIALS,
    DEFAULT_TIER,
    DISK_CONFIG_KEYS,
    ENCRYPTION_CONFIG_KEYS,
    GOALS,
    HYPERPARAMETER_KEYS,
    JOB_DIR_FLAG,
    LEGACY_MACHINES,
    PARAMETER_KEYS,
    PARAMETER_TYPES,
    POOL_ROLES,
    REPLICA_CONFIG_KEYS,
    RETIRED_GPU_REPLACEMENTS,
    SCALE_TIER_NAMES,
    SCALE_TIERS,
    SCALE_TYPES,
    SCHEDULING_KEYS,
    TRAINING_INPUT_KEYS,
    UNSPECIFIED_ACCELERATOR,
    LegacyMachine,
)
from provider.stackconfig.legacy._translation import _did_you_mean, _key, _one_of, _Origin

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class _Role:
    """One replica role of the legacy cluster: its machine, count and the keys they came from."""

    machine: str
    replicas: int
    machine_path: Path
    count_path: Path
    #: masterConfig, workerConfig, ...: where its accelerators and disk are configured.
    config_key: str
    #: What the user wrote at ``machine_path`` (the machine, or the scale tier).
    written: str


class _Translator:
    """Reads one ``trainingInput`` block and builds the native job keys."""

    def __init__(self, source: Mapping[str, Any], *, legacy_base: str, native_base: str) -> None:
        self.source = source
        self.legacy_base = legacy_base
        self.native_base = native_base
        self.issues: list[Issue] = []
        self.warnings: list[Issue] = []
        self.origins: list[_Origin] = []

    # -- helpers

    def key(self, path: Path) -> str:
        return _key(self.legacy_base, path)

    def refuse(self, path: Path, value: Any, message: str) -> None:
        self.issues.append(Issue(self.key(path), value, message))

    def warn(self, path: Path, value: Any, message: str) -> None:
        self.warnings.append(Issue(self.key(path), value, message))

    def came_from(self, native: str, legacy: Path, *, keep_suffix: bool = False) -> None:
        """Record that native key ``native`` was translated from legacy ``legacy``."""
        self.origins.append(_Origin(native, self.key(legacy), keep_suffix))

    def block(self, path: Path, value: Any, keys: Sequence[str]) -> Mapping[str, Any]:
        """A legacy mapping with only ``keys`` (others refused); {} for null or a non-mapping."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.refuse(path, value, "must be a mapping of key: value lines")
            return {}
        for name in value:
            if name not in keys:
                hint = _did_you_mean(str(name), keys)
                self.refuse(
                    (*path, str(name)),
                    value[name],
                    f"not a key of this AI Platform Training block.{hint} The keys here are "
                    f"{_one_of(keys)}",
                )
        return value

    def text(self, path: Path, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value
        self.refuse(path, value, "must be text")
        return None

    def text_list(self, path: Path, value: Any) -> list[str] | None:
        """A list of scalars as text (``[--epochs, 3]`` -> ``["--epochs", "3"]``)."""
        if value is None:
            return None
        if not isinstance(value, list):
            self.refuse(path, value, "must be a list, like [a, b]")
            return None
        texts: list[str] = []
        for index, item in enumerate(value):
            if isinstance(item, bool):
                texts.append("true" if item else "false")
            elif isinstance(item, str | int | float):
                texts.append(str(item))
            else:
                self.refuse((*path, index), item, "must be text or a number")
        return texts

    def count(self, path: Path, value: Any) -> int | None:
        """A replica or accelerator count: an int64 (YAML number or JSON string)."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and value.strip().isdigit():
            number = int(value)
        else:
            self.refuse(path, value, "must be a whole number")
            return None
        if number < 0:
            self.refuse(path, value, "must not be negative")
            return None
        return number

    def flag(self, path: Path, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.refuse(path, value, "must be true or false")
        return None

    def version_text(self, path: Path, value: Any, runtime: bool) -> str | None:
        """runtimeVersion / pythonVersion as gcloud sent them (YAML numbers become text)."""
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = str(value)
            with_zero = f"{text}0"
            if runtime and "." in text and with_zero in LEGACY_RUNTIMES:
                self.warn(
                    path,
                    value,
                    f"written as a number, which YAML reads as {text} (gcloud sent "
                    f'"{text}"); if {with_zero} was meant, quote it: "{with_zero}"',
                )
            return text
        self.refuse(path, value, 'must be a version, like "2.11"')
        return None

    def duration(self, path: Path, value: Any) -> int | None:
        """A google.protobuf.Duration in JSON form ("7200s") as whole seconds (rounded up)."""
        if value is None:
            return None
        match = _DURATION_RE.fullmatch(value.strip()) if isinstance(value, str) else None
        if match is None:
            self.refuse(path, value, 'must be a duration in seconds, like "7200s"')
            return None
        return math.ceil(float(match["seconds"]))

    # -- the translation

    def translate(self) -> dict[str, Any]:
        source = self.block((), self.source, TRAINING_INPUT_KEYS)
        native: dict[str, Any] = {}
        region = self.text(("region",), source.get("region"))
        if region is not None:
            native["region"] = region
            self.came_from("region", ("region",))
        pools = self._cluster(source)
        program = self._program(source, pools)
        args = program.pop("args", None)
        native.update(program)
        native.update(pools.get("primary", {}))
        if args is not None:
            native["args"] = args
        for role in POOL_ROLES.values():
            if role in pools:
                native[role] = pools[role]
        self._job_dir(source, native)
        self._settings(source, native)
        study = self._study(source.get("hyperparameters"))
        if study is not None:
            native["study"] = study
        return native

    # -- machines

    def _cluster(self, source: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Native keys of the primary (``"primary"``) and of each other pool, by native key."""
        tier_name = self._tier_name(source.get("scaleTier"))
        configs = {
            key: self.block((key,), source.get(key), REPLICA_CONFIG_KEYS)
            for key in ("masterConfig", *(f"{prefix}Config" for prefix in POOL_ROLES))
        }
        if tier_name is None:
            return {}
        if tier_name == CUSTOM_TIER:
            layout = self._custom_layout(source, configs)
        else:
            layout = self._tier_layout(tier_name, source, configs)
        if layout is not None and any(r.machine == CLOUD_TPU for r in layout.values()):
            layout = self._tpu_layout(layout, configs)
        if layout is None:
            return {}
        pools: dict[str, dict[str, Any]] = {}
        for prefix, role in layout.items():
            native_role = "primary" if prefix == "master" else POOL_ROLES[prefix]
            pool = self._pool(native_role, role, configs[role.config_key])
            if native_role != "primary":
                pool = {"replicas": role.replicas, **pool}
                self.came_from(native_role, role.machine_path)
                self.came_from(f"{native_role}.replicas", role.count_path)
                if "accelerator" in pools["primary"] and "accelerator" not in pool:
                    pool["accelerator"] = None  # the legacy replica had none: do not inherit
                if "disk" in pools["primary"] and "disk" not in pool:
                    pool["disk"] = {"size_gb": machines.DEFAULT_DISK_SIZE_GB}  # legacy default
            pools[native_role] = pool
        return pools

    def _tier_name(self, value: Any) -> str | None:
        if value is None:
            return DEFAULT_TIER
        if isinstance(value, str) and value in SCALE_TIER_NAMES:
            return value
        hint = _did_you_mean(str(value).upper(), SCALE_TIER_NAMES)
        self.refuse(("scaleTier",), value, f"must be {_one_of(SCALE_TIER_NAMES)}.{hint}")
        return None

    def _custom_layout(
        self, source: Mapping[str, Any], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """Each replica role of a CUSTOM tier job, from the *Type and *Count keys."""
        master = self.text(("masterType",), source.get("masterType"))
        if master is None:
            if "masterType" not in source:
                self.refuse(
                    ("masterType",),
                    None,
                    "scaleTier CUSTOM requires masterType: write masterType: n1-standard-4 "
                    "(a Compute Engine machine type) or a legacy name such as standard",
                )
            return None
        master_path: Path = ("masterType",)
        layout = {"master": _Role(master, 1, master_path, master_path, "masterConfig", master)}
        for prefix in POOL_ROLES:
            type_key, count_key, config_key = f"{prefix}Type", f"{prefix}Count", f"{prefix}Config"
            machine = self.text((type_key,), source.get(type_key))
            count = self.count((count_key,), source.get(count_key))
            if count and machine is None and type_key not in source:
                self.refuse(
                    (type_key,),
                    None,
                    f"{count_key} {count} requires {type_key}: the machine each of them runs on",
                )
            elif machine is not None and count:
                layout[prefix] = _Role(
                    machine, count, (type_key,), (count_key,), config_key, machine
                )
            elif machine is not None or configs[config_key]:
                unused = type_key if machine is not None else config_key
                self.warn(
                    (unused,),
                    machine if machine is not None else dict(configs[config_key]),
                    f"{count_key} is {count or 0}, so no {prefix} replicas run: {unused} is "
                    "not used",
                )
        return layout

    def _tier_layout(
        self, tier_name: str, source: Mapping[str, Any], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """Each replica role of a predefined scale tier (``SCALE_TIERS``)."""
        tier = SCALE_TIERS[tier_name]
        ok = True
        for name in ("masterType", *(f"{p}{s}" for p in POOL_ROLES for s in ("Type", "Count"))):
            if name in source:
                self.refuse(
                    (name,),
                    source[name],
                    f"applies only with scaleTier: CUSTOM (scaleTier {tier_name} fixes the "
                    "machines): set scaleTier: CUSTOM, or remove it",
                )
                ok = False
        for key, config in configs.items():
            if config.get("acceleratorConfig") is not None:
                self.refuse(
                    (key, "acceleratorConfig"),
                    config["acceleratorConfig"],
                    "applies only with scaleTier: CUSTOM and a Compute Engine machine type; "
                    f"scaleTier {tier_name} fixes the accelerators",
                )
                ok = False
        counts = {"worker": tier.workers, "parameterServer": tier.parameter_servers, "evaluator": 0}
        for prefix, count in counts.items():
            if configs[f"{prefix}Config"] and not count:
                self.refuse(
                    (f"{prefix}Config",),
                    dict(configs[f"{prefix}Config"]),
                    f"scaleTier {tier_name} has no {prefix} replicas: remove {prefix}Config",
                )
                ok = False
        if not ok:
            return None
        if tier.estimated:
            self.warn(
                ("scaleTier",),
                tier_name,
                f"Google never published the machines of {tier_name} ({tier.published}); "
                f"this project runs master {tier.master}, {tier.workers} x {tier.worker} "
                f"workers and {tier.parameter_servers} x {tier.parameter_server} parameter "
                "servers (see provider/legacy.py): check that this fits, or switch to "
                "scaleTier: CUSTOM with explicit machine types",
            )
        tier_key: Path = ("scaleTier",)
        layout = {"master": _Role(tier.master, 1, tier_key, tier_key, "masterConfig", tier_name)}
        if tier.worker:
            layout["worker"] = _Role(
                tier.worker, tier.workers, tier_key, tier_key, "workerConfig", tier_name
            )
        if tier.parameter_server:
            layout["parameterServer"] = _Role(
                tier.parameter_server,
                tier.parameter_servers,
                tier_key,
                tier_key,
                "parameterServerConfig",
                tier_name,
            )
        return layout

    def _tpu_layout(
        self, layout: dict[str, _Role], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """The legacy TPU layouts as Vertex AI runs them: one cloud-tpu pool, one replica.

        Legacy TPU jobs ran the program on a master VM next to a ``cloud_tpu`` worker (or,
        later, on a ``cloud_tpu`` master); on Vertex AI the program runs on the TPU VM.
        """
        master = layout["master"]
        tpu = master
        if master.machine != CLOUD_TPU:
            worker = layout.get("worker")
            if worker is None or worker.machine != CLOUD_TPU:
                for prefix, role in layout.items():
                    if role.machine == CLOUD_TPU:
                        self.refuse(
                            role.machine_path,
                            role.written,
                            "a Cloud TPU runs as the master or as the single worker of a TPU "
                            f"job, not as the {prefix} replicas",
                        )
                return None
            if worker.replicas != 1:
                self.refuse(
                    worker.count_path,
                    worker.replicas,
                    "a legacy TPU job has exactly one cloud_tpu worker: write workerCount: 1",
                )
                return None
            self.warn(
                master.machine_path,
                master.written,
                "Vertex AI runs a TPU v2/v3 job on one cloud-tpu machine, without a separate "
                f"master VM: the master machine {master.machine} is not used",
            )
            for key in ("acceleratorConfig", "diskConfig"):
                if configs["masterConfig"].get(key) is not None:
                    self.warn(
                        ("masterConfig", key),
                        configs["masterConfig"][key],
                        f"belongs to the master VM, which Vertex AI does not run for a TPU "
                        f"job: {key} is not used",
                    )
            for key in ("imageUri", "containerCommand", "containerArgs"):
                if configs["workerConfig"].get(key) is not None:
                    self.warn(
                        ("workerConfig", key),
                        configs["workerConfig"][key],
                        "the TPU VM runs the master's program on Vertex AI (masterConfig, "
                        f"packageUris): the cloud_tpu worker's {key} is not used",
                    )
            tpu = worker
        extra = [p for p, role in layout.items() if role not in (master, tpu)]
        for prefix in extra:
            self.refuse(
                layout[prefix].machine_path,
                layout[prefix].written,
                f"Vertex AI runs a TPU job on one pool with one replica: remove the {prefix} "
                "replicas",
            )
        return None if extra else {"master": tpu}

    def _pool(self, native_role: str, role: _Role, config: Mapping[str, Any]) -> dict[str, Any]:
        """Native keys of one pool: machine, accelerator, disk (the program comes later)."""
        prefix = "" if native_role == "primary" else f"{native_role}."
        config_path: Path = (role.config_key,)
        pool: dict[str, Any] = {}
        legacy_machine = LEGACY_MACHINES.get(role.machine)
        if legacy_machine is not None:
            pool["machine"] = legacy_machine.machine
            if legacy_machine.accelerator is not None:
                pool["accelerator"] = self._accelerator(
                    role.machine_path, role.written, *legacy_machine.accelerator
                )
                self.came_from(f"{prefix}accelerator", role.machine_path)
        elif self._compute_engine_name(role.machine_path, role.machine):
            pool["machine"] = role.machine
        self.came_from(f"{prefix}machine", role.machine_path)
        accelerator_config = self.block(
            (*config_path, "acceleratorConfig"),
            config.get("acceleratorConfig"),
            ACCELERATOR_CONFIG_KEYS,
        )
        if accelerator_config:
            self._accelerator_config(pool, prefix, legacy_machine, role, accelerator_config)
        disk = self._disk(config_path, config.get("diskConfig"), prefix)
        if disk:
            pool["disk"] = disk
        tpu_tf_version = config.get("tpuTfVersion")
        if tpu_tf_version is not None:
            self.warn(
                (*config_path, "tpuTfVersion"),
                tpu_tf_version,
                "Vertex AI has no TPU runtime setting: the TPU software comes with the image "
                "(runtimeVersion or imageUri); tpuTfVersion is not used",
            )
        return pool

    def _compute_engine_name(self, path: Path, name: str) -> bool:
        """Whether ``name`` looks like a Compute Engine machine type (validated natively)."""
        if "-" in name:
            return True
        hint = _did_you_mean(name, list(LEGACY_MACHINES))
        self.refuse(
            path,
            name,
            f"not an AI Platform Training machine name.{hint} Write a Compute Engine machine "
            "type (n1-standard-4, n1-highmem-8, ...) or a legacy name: "
            f"{_one_of(list(LEGACY_MACHINES))}",
        )
        return False

    def _accelerator(self, path: Path, owner: str, gpu: str, count: int) -> dict[str, Any]:
        """A native accelerator; a retired GPU becomes its replacement, with a warning."""
        replacement = RETIRED_GPU_REPLACEMENTS.get(gpu)
        if replacement is None:
            return {"type": gpu, "count": count}
        allowed = sorted(machines.N1_GPU_MAX_VCPUS[replacement])
        new_count = count if count in allowed else max(c for c in allowed if c <= max(count, 1))
        fewer = (
            f"; N1 machines take at most {allowed[-1]} {replacement}, so {count} K80s become "
            f"{new_count} (about the same FP32 throughput, {16 * new_count} GB of GPU memory "
            f"instead of {12 * count} GB)"
            if new_count != count
            else ""
        )
        self.warn(
            path,
            owner,
            f"{gpu} GPUs are retired on Vertex AI: this job gets {new_count} x {replacement} "
            f"instead of {count} x {gpu}{fewer}. A T4 outruns the K80 GPU it replaces and runs "
            "the same CUDA code; prices differ",
        )
        return {"type": replacement, "count": new_count}

    def _accelerator_config(
        self,
        pool: dict[str, Any],
        prefix: str,
        legacy_machine: LegacyMachine | None,
        role: _Role,
        config: Mapping[str, Any],
    ) -> None:
        path: Path = (role.config_key, "acceleratorConfig")
        if legacy_machine is not None and legacy_machine.name != CLOUD_TPU:
            self.refuse(
                path,
                dict(config),
                f"acceleratorConfig applies to Compute Engine machine types; the legacy "
                f"machine {role.machine} comes with its own accelerators: use a Compute Engine "
                "type (e.g. n1-standard-8) or remove acceleratorConfig",
            )
            return
        kind = self.text((*path, "type"), config.get("type"))
        count = self.count((*path, "count"), config.get("count"))
        if kind is None or kind == UNSPECIFIED_ACCELERATOR:
            if count:
                self.refuse(
                    (*path, "type"),
                    config.get("type"),
                    "an accelerator count needs its type, e.g. type: NVIDIA_TESLA_T4",
                )
            return
        count = 1 if count is None else count
        if count == 0:
            self.warn((*path, "count"), 0, "count is 0: the machine gets no accelerator")
            pool.pop("accelerator", None)
            return
        pool["accelerator"] = self._accelerator(path, kind, kind, count)
        self.came_from(f"{prefix}accelerator", path, keep_suffix=True)

    def _disk(self, config_path: Path, value: Any, prefix: str) -> dict[str, Any]:
        path: Path = (*config_path, "diskConfig")
        disk_config = self.block(path, value, DISK_CONFIG_KEYS)
        disk: dict[str, Any] = {}
        disk_type = self.text((*path, "bootDiskType"), disk_config.get("bootDiskType"))
        if disk_type is not None:
            disk["type"] = disk_type
            self.came_from(f"{prefix}disk.type", (*path, "bootDiskType"))
        size = self.count((*path, "bootDiskSizeGb"), disk_config.get("bootDiskSizeGb"))
        if size is not None:
            disk["size_gb"] = size
            self.came_from(f"{prefix}disk.size_gb", (*path, "bootDiskSizeGb"))
        if disk:
            self.came_from(f"{prefix}disk", path)
        return disk

    # -- what runs

    def _program(
        self, source: Mapping[str, Any], pools: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """image + command, or python_package + runtime_version; args; per-pool containers."""
        master_config = source.get("masterConfig")
        master = master_config if isinstance(master_config, Mapping) else {}
        image = self.text(("masterConfig", "imageUri"), master.get("imageUri"))
        package_uris = self.text_list(("packageUris",), source.get("packageUris"))
        module = self.text(("pythonModule",), source.get("pythonModule"))
        runtime = self.version_text(("runtimeVersion",), source.get("runtimeVersion"), True)
        python = self.version_text(("pythonVersion",), source.get("pythonVersion"), False)
        args = self.text_list(("args",), source.get("args"))
        program: dict[str, Any] = {}
        if image is not None:
            program.update(
                self._container(
                    source, master, image, package_uris=package_uris, runtime=runtime, python=python
                )
            )
        elif package_uris is not None or module is not None:
            program.update(self._package(source, package_uris, module, runtime, python))
        elif "masterConfig" not in source or "imageUri" not in master:
            self.refuse(
                ("packageUris",),
                None,
                "nothing to run: set packageUris and pythonModule (what gcloud's --packages "
                "or --package-path and --module-name gave) or masterConfig.imageUri "
                "(--master-image-uri)",
            )
        container_args = self.text_list(
            ("masterConfig", "containerArgs"), master.get("containerArgs")
        )
        if container_args is not None and args is not None:
            self.refuse(
                ("masterConfig", "containerArgs"),
                container_args,
                "containerArgs and args cannot both be set (AI Platform Training rule): keep one",
            )
        elif container_args is not None:
            program["args"] = container_args
            self.came_from("args", ("masterConfig", "containerArgs"), keep_suffix=True)
        elif args is not None:
            program["args"] = args
            self.came_from("args", ("args",), keep_suffix=True)
        for prefix, role in POOL_ROLES.items():
            if role in pools:
                pools[role].update(self._replica_container(prefix, role, source, image))
        return program

    def _container(
        self,
        source: Mapping[str, Any],
        master: Mapping[str, Any],
        image: str,
        *,
        package_uris: list[str] | None,
        runtime: str | None,
        python: str | None,
    ) -> dict[str, Any]:
        for name, value in (
            ("packageUris", package_uris),
            ("pythonModule", source.get("pythonModule")),
        ):
            if value is not None:
                self.refuse(
                    (name,),
                    value,
                    "a custom container job runs masterConfig.imageUri; packageUris and "
                    "pythonModule are for runtime-version jobs: remove one or the other",
                )
        for name, value in (("runtimeVersion", runtime), ("pythonVersion", python)):
            if value is not None:
                self.refuse(
                    (name,),
                    source.get(name),
                    f"a custom container brings its own framework and Python; {name} applies "
                    "to runtime-version jobs: remove it",
                )
        program: dict[str, Any] = {"image": image}
        self.came_from("image", ("masterConfig", "imageUri"))
        command = self.text_list(
            ("masterConfig", "containerCommand"), master.get("containerCommand")
        )
        if command is not None:
            program["command"] = command
            self.came_from("command", ("masterConfig", "containerCommand"), keep_suffix=True)
        return program

    def _package(
        self,
        source: Mapping[str, Any],
        package_uris: list[str] | None,
        module: str | None,
        runtime: str | None,
        python: str | None,
    ) -> dict[str, Any]:
        if package_uris is None:
            self.refuse(
                ("packageUris",),
                None,
                "pythonModule needs packageUris: the gs:// URIs of the trainer package (gcloud "
                "uploaded --package-path there)",
            )
        if module is None and "pythonModule" not in source:
            self.refuse(
                ("pythonModule",), None, "packageUris needs pythonModule, e.g. trainer.task"
            )
        master = source.get("masterConfig")
        if isinstance(master, Mapping):
            for name in ("containerCommand", "containerArgs"):
                if master.get(name) is not None:
                    self.refuse(
                        ("masterConfig", name),
                        master[name],
                        "applies to custom containers (masterConfig.imageUri) only",
                    )
        if runtime is None:
            self.refuse(
                ("runtimeVersion",),
                None,
                "Vertex AI runs a Python package on a prebuilt image, chosen from "
                'runtimeVersion: set runtimeVersion (e.g. "2.11")',
            )
        if package_uris is None or module is None:
            return {}
        program: dict[str, Any] = {
            "python_package": {"package_uris": package_uris, "module": module}
        }
        self.came_from("python_package", ("packageUris",))
        self.came_from("python_package.package_uris", ("packageUris",), keep_suffix=True)
        self.came_from("python_package.module", ("pythonModule",))
        self.came_from("python_package.executor_image", ("runtimeVersion",))
        if runtime is not None:
            program["runtime_version"] = runtime
            self.came_from("runtime_version", ("runtimeVersion",))
        if python is not None:
            program["python_version"] = python
            self.came_from("python_version", ("pythonVersion",))
        return program

    def _replica_container(
        self, prefix: str, role: str, source: Mapping[str, Any], master_image: str | None
    ) -> dict[str, Any]:
        """A pool's own container: imageUri (default: the master's), containerCommand, Args."""
        config = source.get(f"{prefix}Config")
        if not isinstance(config, Mapping):
            return {}
        path: Path = (f"{prefix}Config",)
        pool: dict[str, Any] = {}
        image = self.text((*path, "imageUri"), config.get("imageUri"))
        if image is not None:
            pool["image"] = image
            self.came_from(f"{role}.image", (*path, "imageUri"))
        command = self.text_list((*path, "containerCommand"), config.get("containerCommand"))
        if command is not None:
            if image is None and master_image is None:
                self.refuse(
                    (*path, "containerCommand"),
                    command,
                    "applies to custom containers (an imageUri) only",
                )
            else:
                # A native pool takes its command only with its own image: name it explicitly.
                pool["image"] = image or master_image
                pool["command"] = command
                self.came_from(f"{role}.command", (*path, "containerCommand"), keep_suffix=True)
        args = self.text_list((*path, "containerArgs"), config.get("containerArgs"))
        if args is not None:
            if image is None and master_image is None:
                self.refuse(
                    (*path, "containerArgs"),
                    args,
                    "applies to custom containers (an imageUri) only",
                )
            else:
                pool["args"] = args
                self.came_from(f"{role}.args", (*path, "containerArgs"), keep_suffix=True)
        return pool

    def _job_dir(self, source: Mapping[str, Any], native: dict[str, Any]) -> None:
        """jobDir -> base_output_directory, and ``--job-dir <dir>`` for the application."""
        job_dir = self.text(("jobDir",), source.get("jobDir"))
        if job_dir is None:
            return
        native["base_output_directory"] = job_dir
        self.came_from("base_output_directory", ("jobDir",))
        if "image" not in native and "python_package" not in native:
            return
        native["args"] = _with_job_dir(native.get("args"), job_dir)
        for role in POOL_ROLES.values():
            pool = native.get(role)
            if isinstance(pool, dict) and "args" in pool:
                pool["args"] = _with_job_dir(pool["args"], job_dir)

    def _settings(self, source: Mapping[str, Any], native: dict[str, Any]) -> None:
        """Scheduling, identity, network, encryption, web access, TF_CONFIG naming."""
        scheduling = self.block(("scheduling",), source.get("scheduling"), SCHEDULING_KEYS)
        timeout = self.duration(("scheduling", "maxRunningTime"), scheduling.get("maxRunningTime"))
        if timeout is not None:
            native["scheduling"] = {"timeout": f"{timeout}s"}
            self.came_from("scheduling", ("scheduling",))
            self.came_from("scheduling.timeout", ("scheduling", "maxRunningTime"))
        if scheduling.get("maxWaitTime") is not None:
            self.warn(
                ("scheduling", "maxWaitTime"),
                scheduling["maxWaitTime"],
                "Vertex AI has no queueing limit for standard scheduling (max_wait_duration "
                "applies to the FLEX_START strategy only): the job may wait in the queue "
                "longer; maxWaitTime is not used",
            )
        if scheduling.get("priority") is not None:
            self.warn(
                ("scheduling", "priority"),
                scheduling["priority"],
                "Vertex AI custom jobs have no priority: priority is not used",
            )
        for legacy, native_key in (("serviceAccount", "service_account"), ("network", "network")):
            value = self.text((legacy,), source.get(legacy))
            if value is not None:
                native[native_key] = value
                self.came_from(native_key, (legacy,))
        encryption = self.block(
            ("encryptionConfig",), source.get("encryptionConfig"), ENCRYPTION_CONFIG_KEYS
        )
        kms_key = self.text(("encryptionConfig", "kmsKeyName"), encryption.get("kmsKeyName"))
        if kms_key is not None:
            native["kms_key"] = kms_key
            self.came_from("kms_key", ("encryptionConfig", "kmsKeyName"))
        web_access = self.flag(("enableWebAccess",), source.get("enableWebAccess"))
        if web_access:
            native["enable_web_access"] = True
            self.came_from("enable_web_access", ("enableWebAccess",))
        if self.flag(("useChiefInTfConfig",), source.get("useChiefInTfConfig")) is False:
            self.warn(
                ("useChiefInTfConfig",),
                False,
                "Vertex AI always names the primary replica 'chief' in TF_CONFIG; a trainer "
                "that looks for a 'master' task must look for 'chief' instead",
            )

    # -- hyperparameter tuning

    def _study(self, value: Any) -> dict[str, Any] | None:
        """hyperparameters -> the native ``study:`` block (docs/config-shape.md)."""
        if value is None:
            return None
        base: Path = ("hyperparameters",)
        spec = self.block(base, value, HYPERPARAMETER_KEYS)
        if not spec:
            return None
        self.came_from("study", base)
        if spec.get("resumePreviousJobId") is not None:
            self.refuse(
                (*base, "resumePreviousJobId"),
                spec["resumePreviousJobId"],
                "a Vertex AI tuning job cannot continue a legacy AI Platform study: remove "
                "resumePreviousJobId (the tuning job starts a new study)",
            )
        goal = spec.get("goal", DEFAULT_GOAL)
        if goal not in GOALS:
            self.refuse((*base, "goal"), goal, f"must be {_one_of(GOALS)}")
        metric = self.text((*base, "hyperparameterMetricTag"), spec.get("hyperparameterMetricTag"))
        study: dict[str, Any] = {
            "metrics": [{"id": metric or DEFAULT_METRIC_TAG, "goal": goal}],
            "parameters": self._parameters((*base, "params"), spec.get("params")),
        }
        self.came_from("study.metrics", (*base, "hyperparameterMetricTag"))
        algorithm = spec.get("algorithm")
        if algorithm is not None:
            if algorithm in ALGORITHMS:
                if ALGORITHMS[algorithm] != "default":
                    study["algorithm"] = ALGORITHMS[algorithm]
                    self.came_from("study.algorithm", (*base, "algorithm"))
            else:
                self.refuse((*base, "algorithm"), algorithm, f"must be {_one_of(list(ALGORITHMS))}")
        if self.flag((*base, "enableTrialEarlyStopping"), spec.get("enableTrialEarlyStopping")):
            study["early_stopping"] = {"decay_curve": {"use_elapsed_duration": False}}
            self.came_from("study.early_stopping", (*base, "enableTrialEarlyStopping"))
        for legacy, native_key, default in (
            ("maxTrials", "max_trials", DEFAULT_MAX_TRIALS),
            ("maxParallelTrials", "parallel_trials", DEFAULT_PARALLEL_TRIALS),
            ("maxFailedTrials", "max_failed_trials", None),
        ):
            number = self.count((*base, legacy), spec.get(legacy))
            if number is None:
                number = default
            if number is not None:
                study[native_key] = number
                self.came_from(f"study.{native_key}", (*base, legacy))
        return study

    def _parameters(self, path: Path, value: Any) -> dict[str, Any]:
        if not isinstance(value, list) or not value:
            self.refuse(path, value, "list the parameters to tune (at least one)")
            return {}
        parameters: dict[str, Any] = {}
        for index, item in enumerate(value):
            item_path: Path = (*path, index)
            spec = self.block(item_path, item, PARAMETER_KEYS)
            name = self.text((*item_path, "parameterName"), spec.get("parameterName"))
            if name is None:
                if "parameterName" not in spec:
                    self.refuse(
                        (*item_path, "parameterName"), None, "each parameter needs parameterName"
                    )
                continue
            if name in parameters:
                self.refuse(
                    (*item_path, "parameterName"), name, "appears twice: parameter names are unique"
                )
                continue
            parameter = self._parameter(item_path, spec)
            if parameter is not None:
                parameters[name] = parameter
                self.came_from(f"study.parameters.{name}", item_path)
        return parameters

    def _parameter(self, path: Path, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        legacy_type = spec.get("type")
        if legacy_type not in PARAMETER_TYPES:
            self.refuse((*path, "type"), legacy_type, f"must be {_one_of(list(PARAMETER_TYPES))}")
            return None
        kind = PARAMETER_TYPES[legacy_type]
        parameter: dict[str, Any] = {"type": kind}
        if kind in ("double", "integer"):
            for legacy, native_key in (("minValue", "min"), ("maxValue", "max")):
                if spec.get(legacy) is None:
                    self.refuse((*path, legacy), None, f"a {legacy_type} parameter needs {legacy}")
                    return None
                parameter[native_key] = spec[legacy]
        else:
            values_key = "categoricalValues" if kind == "categorical" else "discreteValues"
            values = spec.get(values_key)
            if not isinstance(values, list) or not values:
                self.refuse(
                    (*path, values_key), values, f"a {legacy_type} parameter lists {values_key}"
                )
                return None
            parameter["values"] = list(values)
        scale_type = spec.get("scaleType")
        if scale_type is not None:
            if scale_type not in SCALE_TYPES:
                self.refuse(
                    (*path, "scaleType"), scale_type, f"must be {_one_of(list(SCALE_TYPES))}"
                )
            elif kind == "categorical":
                if SCALE_TYPES[scale_type] is not None:
                    self.warn(
                        (*path, "scaleType"),
                        scale_type,
                        "categorical parameters have no scale on Vertex AI: scaleType is not used",
                    )
            elif SCALE_TYPES[scale_type] is not None:
                parameter["scale"] = SCALE_TYPES[scale_type]
        return parameter


def _with_job_dir(args: Sequence[str] | None, job_dir: str) -> list[str]:
    """``args`` plus ``--job-dir <dir>``, unless they pass --job-dir already."""
    current = list(args or [])
    if any(arg == JOB_DIR_FLAG or arg.startswith(f"{JOB_DIR_FLAG}=") for arg in current):
        return current
    return [*current, JOB_DIR_FLAG, job_dir]
