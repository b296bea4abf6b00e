"""``ClusterLayout``: the legacy cluster (scale tier, or CUSTOM machine types and counts,
TPU layouts) -> the native primary pool and worker pools: machines, accelerators, disks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vertex_training.catalog import machines
from vertex_training.stackconfig.legacy._context import Path, TranslationContext
from vertex_training.stackconfig.legacy._tables import (
    ACCELERATOR_CONFIG_KEYS,
    CLOUD_TPU,
    CUSTOM_TIER,
    DEFAULT_TIER,
    DISK_CONFIG_KEYS,
    LEGACY_MACHINES,
    POOL_ROLES,
    REPLICA_CONFIG_KEYS,
    RETIRED_GPU_REPLACEMENTS,
    SCALE_TIER_NAMES,
    SCALE_TIERS,
    UNSPECIFIED_ACCELERATOR,
    LegacyMachine,
)
from vertex_training.stackconfig.legacy._translation import _did_you_mean, _one_of


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


class ClusterLayout:
    """Reads the scale tier, the replica types and counts and their configs into native pools."""

    def __init__(self, context: TranslationContext) -> None:
        self.context = context

    def pools(self, source: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Native keys of the primary (``"primary"``) and of each other pool, by native key."""
        tier_name = self._tier_name(source.get("scaleTier"))
        configs = {
            key: self.context.block((key,), source.get(key), REPLICA_CONFIG_KEYS)
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
                self.context.came_from(native_role, role.machine_path)
                self.context.came_from(f"{native_role}.replicas", role.count_path)
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
        self.context.refuse(("scaleTier",), value, f"must be {_one_of(SCALE_TIER_NAMES)}.{hint}")
        return None

    def _custom_layout(
        self, source: Mapping[str, Any], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """Each replica role of a CUSTOM tier job, from the *Type and *Count keys."""
        master = self.context.text(("masterType",), source.get("masterType"))
        if master is None:
            if "masterType" not in source:
                self.context.refuse(
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
            machine = self.context.text((type_key,), source.get(type_key))
            count = self.context.count((count_key,), source.get(count_key))
            if count and machine is None and type_key not in source:
                self.context.refuse(
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
                self.context.warn(
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
                self.context.refuse(
                    (name,),
                    source[name],
                    f"applies only with scaleTier: CUSTOM (scaleTier {tier_name} fixes the "
                    "machines): set scaleTier: CUSTOM, or remove it",
                )
                ok = False
        for key, config in configs.items():
            if config.get("acceleratorConfig") is not None:
                self.context.refuse(
                    (key, "acceleratorConfig"),
                    config["acceleratorConfig"],
                    "applies only with scaleTier: CUSTOM and a Compute Engine machine type; "
                    f"scaleTier {tier_name} fixes the accelerators",
                )
                ok = False
        counts = {"worker": tier.workers, "parameterServer": tier.parameter_servers, "evaluator": 0}
        for prefix, count in counts.items():
            if configs[f"{prefix}Config"] and not count:
                self.context.refuse(
                    (f"{prefix}Config",),
                    dict(configs[f"{prefix}Config"]),
                    f"scaleTier {tier_name} has no {prefix} replicas: remove {prefix}Config",
                )
                ok = False
        if not ok:
            return None
        if tier.estimated:
            self.context.warn(
                ("scaleTier",),
                tier_name,
                f"Google never published the machines of {tier_name} ({tier.published}); "
                f"this project runs master {tier.master}, {tier.workers} x {tier.worker} "
                f"workers and {tier.parameter_servers} x {tier.parameter_server} parameter "
                "servers (docs/legacy.md, the scale tier table): check that this fits, or "
                "switch to scaleTier: CUSTOM with explicit machine types",
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
                        self.context.refuse(
                            role.machine_path,
                            role.written,
                            "a Cloud TPU runs as the master or as the single worker of a TPU "
                            f"job, not as the {prefix} replicas",
                        )
                return None
            if worker.replicas != 1:
                self.context.refuse(
                    worker.count_path,
                    worker.replicas,
                    "a legacy TPU job has exactly one cloud_tpu worker: write workerCount: 1",
                )
                return None
            self.context.warn(
                master.machine_path,
                master.written,
                "Vertex AI runs a TPU v2/v3 job on one cloud-tpu machine, without a separate "
                f"master VM: the master machine {master.machine} is not used",
            )
            for key in ("acceleratorConfig", "diskConfig"):
                if configs["masterConfig"].get(key) is not None:
                    self.context.warn(
                        ("masterConfig", key),
                        configs["masterConfig"][key],
                        f"belongs to the master VM, which Vertex AI does not run for a TPU "
                        f"job: {key} is not used",
                    )
            for key in ("imageUri", "containerCommand", "containerArgs"):
                if configs["workerConfig"].get(key) is not None:
                    self.context.warn(
                        ("workerConfig", key),
                        configs["workerConfig"][key],
                        "the TPU VM runs the master's program on Vertex AI (masterConfig, "
                        f"packageUris): the cloud_tpu worker's {key} is not used",
                    )
            tpu = worker
        extra = [p for p, role in layout.items() if role not in (master, tpu)]
        for prefix in extra:
            self.context.refuse(
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
                self.context.came_from(f"{prefix}accelerator", role.machine_path)
        elif self._compute_engine_name(role.machine_path, role.machine):
            pool["machine"] = role.machine
        self.context.came_from(f"{prefix}machine", role.machine_path)
        accelerator_config = self.context.block(
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
            self.context.warn(
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
        self.context.refuse(
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
        self.context.warn(
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
            self.context.refuse(
                path,
                dict(config),
                f"acceleratorConfig applies to Compute Engine machine types; the legacy "
                f"machine {role.machine} comes with its own accelerators: use a Compute Engine "
                "type (e.g. n1-standard-8) or remove acceleratorConfig",
            )
            return
        kind = self.context.text((*path, "type"), config.get("type"))
        count = self.context.count((*path, "count"), config.get("count"))
        if kind is None or kind == UNSPECIFIED_ACCELERATOR:
            if count:
                self.context.refuse(
                    (*path, "type"),
                    config.get("type"),
                    "an accelerator count needs its type, e.g. type: NVIDIA_TESLA_T4",
                )
            return
        count = 1 if count is None else count
        if count == 0:
            self.context.warn((*path, "count"), 0, "count is 0: the machine gets no accelerator")
            pool.pop("accelerator", None)
            return
        pool["accelerator"] = self._accelerator(path, kind, kind, count)
        self.context.came_from(f"{prefix}accelerator", path, keep_suffix=True)

    def _disk(self, config_path: Path, value: Any, prefix: str) -> dict[str, Any]:
        path: Path = (*config_path, "diskConfig")
        disk_config = self.context.block(path, value, DISK_CONFIG_KEYS)
        disk: dict[str, Any] = {}
        disk_type = self.context.text((*path, "bootDiskType"), disk_config.get("bootDiskType"))
        if disk_type is not None:
            disk["type"] = disk_type
            self.context.came_from(f"{prefix}disk.type", (*path, "bootDiskType"))
        size = self.context.count((*path, "bootDiskSizeGb"), disk_config.get("bootDiskSizeGb"))
        if size is not None:
            disk["size_gb"] = size
            self.context.came_from(f"{prefix}disk.size_gb", (*path, "bootDiskSizeGb"))
        if disk:
            self.context.came_from(f"{prefix}disk", path)
        return disk
