"""How Vertex AI bills custom training: which catalog SKUs price a pool, under each strategy.

This is the one place holding the billing rule; correct it here and nothing else changes.

The rule, and its evidence:

- Custom training is billed per resource, not per machine type: vCPU hours, GiB hours of
  memory, accelerator hours and boot disk GiB months, each its own SKU of the Cloud
  Billing Catalog (``google/cloud/billing/v1/cloud_catalog.proto``). Vertex AI's
  service is ``services/C7E2-9256-1C43``, Compute Engine's ``services/6F81-5844-456A``
  (looked up by ID: the product's display name changed in 2026).
- ``STANDARD``: the "Vertex AI: Training/Pipelines on ..." SKUs of Vertex AI's service,
  usage type ``OnDemand``. Evidence: a real on-demand bill (a3-highgpu-8g, us-central1)
  had these lines and no management-fee lines, their prices 1.15 x Compute Engine's.
- ``SPOT``: Compute Engine's Spot SKUs (usage type ``Preemptible``; descriptions "Spot
  Preemptible ... Core", GPUs "attached to Spot Preemptible VMs"), plus the "Vertex AI:
  Training/Pipelines management fee on ..." SKUs. ``FLEX_START``: Compute Engine's
  Dynamic Workload Scheduler SKUs ("DWS Defined Duration ..."), plus the same fees.
  Evidence: Google's Vertex AI pricing documentation (Spot VMs and flex-start bill at
  Compute Engine's Spot or DWS prices plus the custom-training management fee; the fee
  is 0.15 x Compute Engine's price on the bill above). The boot disk is Compute Engine's
  on-demand disk SKU under both.
- TPU machines are billed for their chips (``billed_by_chips``: ``ct5lp-hightpu-4t``, 4
  TPU v5e chips), the host included in that price, as Vertex AI prices TPU training per
  accelerator (not verified against a bill): a Vertex AI SKU under STANDARD; no SPOT or
  FLEX_START rule (Vertex AI's Spot VMs exclude TPU Pods), so their price there is
  unknown. Their vCPUs and memory are not read: ``cloud-tpu`` is not a Compute Engine
  machine type at all, and the ``ct5lp-*`` / ``ct4p-*`` hosts' are not billed. Every other
  machine is billed for the vCPUs and GiB of memory Compute Engine's MachineTypes API
  gives it (``vertex_training.catalog.shapes``, kept in the snapshot).

SKUs are selected by their service, ``category.usage_type``, ``category.resource_group``,
``service_regions`` and the resource their description names, compared whole after
case-folding, with the place clause (``running in Iowa``, ``in Americas``) cut off: a
place name is never matched, and a Spot description that contains an on-demand one
never passes for it (the usage type differs, and the phrases differ as a whole). When
several SKUs fit, the one covering the fewest regions wins (a region's own SKU over a
multi-region one).

Not verified against the live catalog (docs/cost.md): the resource phrases of each
family, accelerator and disk below beyond those quoted in the evidence (N1, E2, A2, A3,
H100, A100, T4), the management-fee SKUs' usage type, and Vertex AI SKUs' resource groups.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

from vertex_training.api.bodies import FLEX_START_STRATEGY, SPOT_STRATEGY, STANDARD_STRATEGY
from vertex_training.catalog import machines
from vertex_training.catalog.prices import Sku, Snapshot

VERTEX_SERVICE = "services/C7E2-9256-1C43"
COMPUTE_SERVICE = "services/6F81-5844-456A"
#: Services an estimate reads, by ID.
SERVICES: tuple[str, ...] = (VERTEX_SERVICE, COMPUTE_SERVICE)

ON_DEMAND, PREEMPTIBLE = "OnDemand", "Preemptible"
STANDARD, SPOT, FLEX_START = STANDARD_STRATEGY, SPOT_STRATEGY, FLEX_START_STRATEGY
#: Scheduling strategies priced (aiplatform v1 ``Scheduling.Strategy``).
STRATEGIES: tuple[str, ...] = (STANDARD, SPOT, FLEX_START)
#: The strategy of a job whose ``scheduling.strategy`` is unset.
DEFAULT_STRATEGY = STANDARD
#: How a pool on a specific reservation (``reservation_affinity``) is billed, priced as if
#: it were a strategy: Compute Engine's on-demand prices for the reserved machines plus
#: the management fee. Google's "Use reservations with training" (read 2026-11-26): "you're
#: billed for ... Compute Engine pricing for the Compute Engine resources, including any
#: applicable committed use discounts (CUDs)" and the serverless training management fee;
#: Compute Engine bills the reservation itself at the on-demand rate until it is deleted,
#: used or not.
RESERVED = "RESERVATION"
#: Everything an estimate prices: the strategies and the reservation rule.
PRICED_AS: tuple[str, ...] = (*STRATEGIES, RESERVED)

#: Hours in a month, as the catalog's monthly units count them (disk is per GiB month).
HOURS_PER_MONTH = 730
#: Usage units an estimate can use -> hours one unit of usage spans (h: 1, mo: 730).
UNIT_HOURS: Mapping[str, float] = MappingProxyType(
    {"h": 1, "GiBy.h": 1, "GiBy.d": 24, "GiBy.mo": HOURS_PER_MONTH}
)

Kind = Literal["core", "ram", "gpu", "tpu", "disk"]
#: ``category.resource_group`` values per kind, as the catalog spells them (not
#: consistent: N1 and E2 cores and RAM share "N1Standard" / "E2Standard").
RESOURCE_GROUPS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "core": frozenset({"CPU", "N1Standard", "E2Standard"}),
        "ram": frozenset({"RAM", "N1Standard", "E2Standard"}),
        "gpu": frozenset({"GPU"}),
        "tpu": frozenset({"TPU"}),
        "disk": frozenset({"SSD", "PDStandard", "Hyperdisk"}),
    }
)
#: The usage unit each kind is priced in.
KIND_UNITS: Mapping[str, str] = MappingProxyType(
    {"core": "h", "ram": "GiBy.h", "gpu": "h", "tpu": "h", "disk": "GiBy.mo"}
)

# ------------------------------------------------------------------ resource phrases

#: Machine family -> (core, RAM) as the catalog names them, after "Training/Pipelines on",
#: "Spot Preemptible" or "DWS Defined Duration".
FAMILY_RESOURCES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "n1": ("N1 Predefined Instance Core", "N1 Predefined Instance Ram"),
        "e2": ("E2 Instance Core", "E2 Instance Ram"),
        "n2": ("N2 Instance Core", "N2 Instance Ram"),
        "n2d": ("N2D AMD Instance Core", "N2D AMD Instance Ram"),
        "c2": ("Compute optimized Core", "Compute optimized Ram"),
        "c2d": ("C2D AMD Instance Core", "C2D AMD Instance Ram"),
        "m1": ("Memory-optimized Instance Core", "Memory-optimized Instance Ram"),
        "a2": ("A2 Instance Core", "A2 Instance Ram"),
        "a3": ("A3 Instance Core", "A3 Instance Ram"),
        "a4": ("A4 Instance Core", "A4 Instance Ram"),
        "g2": ("G2 Instance Core", "G2 Instance Ram"),
        # By the pattern of the rows above, not yet seen in Google's catalog.
        "a4x": ("A4X Instance Core", "A4X Instance Ram"),
        "g4": ("G4 Instance Core", "G4 Instance Ram"),
    }
)
#: Accelerator -> (Vertex AI's name, Compute Engine's name).
ACCELERATOR_RESOURCES: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        "NVIDIA_TESLA_P100": ("NVIDIA Tesla P100", "Nvidia Tesla P100 GPU"),
        "NVIDIA_TESLA_V100": ("NVIDIA Tesla V100", "Nvidia Tesla V100 GPU"),
        "NVIDIA_TESLA_P4": ("NVIDIA Tesla P4", "Nvidia Tesla P4 GPU"),
        "NVIDIA_TESLA_T4": ("NVIDIA Tesla T4", "Nvidia Tesla T4 GPU"),
        "NVIDIA_TESLA_A100": ("NVIDIA Tesla A100", "Nvidia Tesla A100 GPU"),
        "NVIDIA_A100_80GB": ("NVIDIA Tesla A100 80GB", "Nvidia Tesla A100 80GB GPU"),
        "NVIDIA_L4": ("NVIDIA L4", "Nvidia L4 GPU"),
        "NVIDIA_H100_80GB": ("NVIDIA H100 80GB", "Nvidia H100 80GB GPU"),
        "NVIDIA_H100_MEGA_80GB": ("NVIDIA H100 Mega 80GB", "Nvidia H100 Mega 80GB GPU"),
        "NVIDIA_H200_141GB": ("NVIDIA H200 141GB", "Nvidia H200 141GB GPU"),
        "NVIDIA_B200": ("NVIDIA B200", "Nvidia B200 GPU"),
        # By the pattern of the rows above, not yet seen in Google's catalog.
        "NVIDIA_GB200": ("NVIDIA GB200", "Nvidia GB200 GPU"),
        "NVIDIA_RTX_PRO_6000": ("NVIDIA RTX PRO 6000", "Nvidia RTX PRO 6000 GPU"),
        "TPU_V2": ("TPU v2", ""),
        "TPU_V3": ("TPU v3", ""),
        "TPU_V4_POD": ("TPU v4 Pod", ""),
        "TPU_V5_LITEPOD": ("TPU v5e", ""),
    }
)
#: Boot disk type -> the catalog's name of its capacity.
DISK_RESOURCES: Mapping[str, str] = MappingProxyType(
    {
        "pd-ssd": "SSD backed PD Capacity",
        "pd-standard": "Storage PD Capacity",
        "hyperdisk-balanced": "Hyperdisk Balanced Capacity",
    }
)

TRAINING_PREFIX = "Vertex AI: Training/Pipelines on"
FEE_PREFIX = "Vertex AI: Training/Pipelines management fee on"
#: Compute Engine's prefix of a core or RAM SKU, and the VMs a GPU SKU is "attached to".
COMPUTE_WORDING: Mapping[str, tuple[str, str]] = MappingProxyType(
    {
        SPOT: ("Spot Preemptible", "Spot Preemptible VMs"),
        FLEX_START: ("DWS Defined Duration", "DWS Defined Duration VMs"),
    }
)


def resource_phrase(description: str) -> str:
    """What a SKU's description prices, case-folded, its place clause cut off.

    ``Spot Preemptible N1 Predefined Instance Core running in Americas`` ->
    ``spot preemptible n1 predefined instance core``; ``Vertex AI: Training/Pipelines on
    A3 Instance RAM in Iowa`` -> ``vertex ai: training/pipelines on a3 instance ram``.
    """
    text = " ".join(description.split()).casefold()
    for clause in (" running in ", " in "):
        if clause in text:
            return text[: text.rindex(clause)]
    return text


@dataclass(frozen=True)
class Want:
    """A SKU an estimate needs: where it is billed and the resource its description names."""

    kind: Kind
    service: str
    usage_type: str
    #: The description as a person searches the catalog for it (place left out).
    description: str
    #: True for a management-fee SKU.
    fee: bool = False

    @property
    def phrase(self) -> str:
        return resource_phrase(self.description)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.service, self.usage_type, self.phrase)


@dataclass(frozen=True)
class Component:
    """One priced part of a replica: ``quantity`` of a SKU's unit an hour (4 vCPUs)."""

    want: Want
    quantity: float
    #: What the quantity counts, for a reader: "vCPU", "GiB", "NVIDIA_TESLA_T4", "GiB disk".
    what: str


def _wants(kind: Kind, strategy: str, vertex_name: str, compute_name: str) -> list[Want]:
    """The SKUs pricing one resource under ``strategy`` (fee SKUs included)."""
    if not vertex_name:
        return []
    if strategy == STANDARD:
        return [Want(kind, VERTEX_SERVICE, ON_DEMAND, f"{TRAINING_PREFIX} {vertex_name}")]
    if (strategy not in COMPUTE_WORDING and strategy != RESERVED) or not compute_name:
        return []
    usage = PREEMPTIBLE if strategy == SPOT else ON_DEMAND
    if kind == "disk":
        return [Want(kind, COMPUTE_SERVICE, ON_DEMAND, compute_name)]
    if kind == "tpu" and strategy == RESERVED:
        return []  # no rule for reserved TPUs: their Compute Engine SKUs are not read
    if strategy == RESERVED:
        described = compute_name  # Compute Engine's own on-demand SKU
    else:
        prefix, vms = COMPUTE_WORDING[strategy]
        described = (
            f"{compute_name} attached to {vms}" if kind == "gpu" else f"{prefix} {compute_name}"
        )
    return [
        Want(kind, COMPUTE_SERVICE, usage, described),
        Want(kind, VERTEX_SERVICE, ON_DEMAND, f"{FEE_PREFIX} {vertex_name}", fee=True),
    ]


def billed_by_chips(machine: str) -> bool:
    """Whether ``machine`` is a TPU machine, billed for its chips, not vCPUs and memory."""
    machine_type = machines.MACHINE_TYPES.get(machine)
    return machine_type is not None and machine_type.tpu


def replica_components(
    machine: str,
    accelerator: str | None,
    accelerator_count: int,
    *,
    shape: tuple[float, float] | None,
    disk_type: str,
    disk_gib: float,
    strategy: str,
    tpu_topology: str | None = None,
) -> tuple[list[Component], list[str]]:
    """What one replica is billed for under ``strategy``, and why any part cannot be priced.

    ``shape`` is the machine's (vCPUs, GiB of memory), as the snapshot read them; None
    only for a machine ``billed_by_chips`` (a missing shape is the caller's to report).
    A replica of a TPU machine with its chips built in that runs a ``tpu_topology`` larger
    than one machine (a multi-host slice: ``4x4`` on ``ct5lp-hightpu-4t`` is 16 chips on 4
    hosts) is billed for every chip of the slice and every host's boot disk.
    """
    components: list[Component] = []
    missing: list[str] = []
    family = machines.MACHINE_TYPES[machine].family if machine in machines.MACHINE_TYPES else ""
    tpu = billed_by_chips(machine)
    if not tpu:
        if shape is None:
            raise ValueError(f"{machine} is billed for vCPUs and memory: its shape is needed")
        if family not in FAMILY_RESOURCES:
            missing.append(f"no billing rule for {machine}'s family ({family})")
        else:
            core, ram = FAMILY_RESOURCES[family]
            vcpus, memory_gib = shape
            parts: tuple[tuple[Kind, str, float, str], ...] = (
                ("core", core, vcpus, "vCPU"),
                ("ram", ram, memory_gib, "GiB"),
            )
            for part, name, quantity, what in parts:
                wants = _wants(part, strategy, name, name)
                components += [Component(w, quantity, what) for w in wants]
    if tpu and accelerator is None:
        # A TPU machine that comes with its chips (ct5lp-hightpu-4t: 4) is billed for them.
        built_in = machines.TPU_BUILT_IN_MACHINES.get(machine)
        chips = machines.tpu_chips(machine, tpu_topology)
        if built_in is not None and chips is not None:
            accelerator, accelerator_count = chips
            disk_gib *= accelerator_count // built_in[1]  # one boot disk a host
    if accelerator is not None and accelerator_count:
        vertex_name, compute_name = ACCELERATOR_RESOURCES.get(accelerator, ("", ""))
        kind: Kind = "tpu" if accelerator in machines.TPU_ACCELERATORS else "gpu"
        wants = _wants(kind, strategy, vertex_name, compute_name)
        if not wants:
            missing.append(f"no billing rule for {accelerator} under {strategy}")
        components += [Component(w, accelerator_count, accelerator) for w in wants]
    disk_name = DISK_RESOURCES.get(disk_type, "")
    disk_wants = _wants("disk", strategy, disk_name, disk_name)
    disk_wants = [w for w in disk_wants if not w.fee]
    if not disk_wants:
        missing.append(f"no billing rule for boot disk {disk_type} under {strategy}")
    components += [Component(w, disk_gib, "GiB disk") for w in disk_wants]
    return components, missing


@functools.cache
def wanted_keys() -> frozenset[tuple[str, str, str]]:
    """(service, usage type, resource phrase) of every SKU an estimate may need: what a
    refresh keeps."""
    keys: set[tuple[str, str, str]] = set()
    for machine, machine_type in machines.MACHINE_TYPES.items():
        accelerators: tuple[str | None, ...] = tuple(machine_type.accelerators) or (None,)
        for accelerator in accelerators:
            for disk in DISK_RESOURCES:
                for strategy in PRICED_AS:
                    components, _ = replica_components(
                        machine,
                        accelerator,
                        1,
                        shape=None if billed_by_chips(machine) else (1, 1),
                        disk_type=disk,
                        disk_gib=1,
                        strategy=strategy,
                    )
                    keys.update(c.want.key for c in components)
    return frozenset(keys)


class PriceIndex:
    """The snapshot's SKUs, found by what a ``Want`` asks for in a region."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self._by_key: dict[tuple[str, str, str], list[Sku]] = {}
        for sku in snapshot.skus:
            key = (sku.service, sku.usage_type, resource_phrase(sku.description))
            self._by_key.setdefault(key, []).append(sku)

    def find(self, want: Want, region: str) -> Sku | None:
        """The SKU pricing ``want`` in ``region``: its own over a multi-region one."""
        groups = RESOURCE_GROUPS[want.kind]
        fits = [
            sku
            for sku in self._by_key.get(want.key, ())
            if region in sku.regions
            and sku.resource_group in groups
            and sku.unit == KIND_UNITS[want.kind]
        ]
        return min(fits, key=lambda s: (len(s.regions), s.sku_id), default=None)


def keep(skus: Iterable[Sku], regions: Iterable[str] | None = None) -> list[Sku]:
    """The SKUs an estimate may use (in ``regions``, when given), the others dropped."""
    wanted = wanted_keys()
    region_set = set(regions) if regions is not None else None
    return [
        sku
        for sku in skus
        if (sku.service, sku.usage_type, resource_phrase(sku.description)) in wanted
        and (region_set is None or region_set.intersection(sku.regions))
    ]
