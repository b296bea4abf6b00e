"""What Vertex AI custom training offers: machines, accelerators, regions, disks, images.

This module is data. ``provider.stackconfig`` validates stack configs against it; nothing here
decides anything beyond looking values up.

Sources, as read on 2026-11-21 (``CATALOGUE_DATE``):

- Google Cloud docs, Vertex AI, "Configure compute resources for custom training"
  (https://cloud.google.com/vertex-ai/docs/training/configure-compute): the machine types
  custom training accepts, which GPUs each takes and in which counts, boot disk types and
  sizes, the reduction server image.
- Google Cloud docs, Vertex AI, "Vertex AI locations", section
  "Accelerator availability by region"
  (https://cloud.google.com/vertex-ai/docs/general/locations#accelerators): which region
  offers which accelerator for training (entries marked serving-only there are left out).
- Google Cloud docs, Compute Engine, "Machine types" / "GPU machine types"
  (https://cloud.google.com/compute/docs/gpus): the vCPU limit per GPU count on N1
  machines, the GPUs built into A2, A3, A4 and G2 machines.
- The aiplatform v1 protos (googleapis/googleapis google/cloud/aiplatform/v1:
  accelerator_type.proto, machine_resources.proto, custom_job.proto): accelerator enum
  names, DiskSpec defaults and types, the limits on env and package URIs.
- google-cloud-aiplatform 2.7.0, ``google.cloud.aiplatform.constants.base
  .SUPPORTED_REGIONS``: the regions Vertex AI serves (minus ``global``).

Availability changes more often than the API: when Google adds a region or a machine,
update the tables here (and ``CATALOGUE_DATE``); the API itself stays the final judge.
Regions missing from ``TRAINING_ACCELERATORS_BY_REGION`` are not checked for accelerator
availability at all, so a gap in this table never blocks a job.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

CATALOGUE_DATE = "2026-11-21"

# --------------------------------------------------------------------------- accelerators

#: GPUs, by their aiplatform v1 ``AcceleratorType`` enum names.
GPU_ACCELERATORS: tuple[str, ...] = (
    "NVIDIA_TESLA_P100",
    "NVIDIA_TESLA_V100",
    "NVIDIA_TESLA_P4",
    "NVIDIA_TESLA_T4",
    "NVIDIA_TESLA_A100",
    "NVIDIA_A100_80GB",
    "NVIDIA_L4",
    "NVIDIA_H100_80GB",
    "NVIDIA_H100_MEGA_80GB",
    "NVIDIA_H200_141GB",
    "NVIDIA_B200",
)
#: TPUs, by their ``AcceleratorType`` enum names.
TPU_ACCELERATORS: tuple[str, ...] = ("TPU_V2", "TPU_V3", "TPU_V4_POD", "TPU_V5_LITEPOD")
#: Every accelerator a custom training machine in this catalogue takes.
ACCELERATOR_TYPES: tuple[str, ...] = GPU_ACCELERATORS + TPU_ACCELERATORS
#: Enum values the API still lists but that no training machine here takes, with the fix.
UNAVAILABLE_ACCELERATORS: Mapping[str, str] = MappingProxyType(
    {
        "NVIDIA_TESLA_K80": "the K80 reached end of support; use NVIDIA_TESLA_T4 or NVIDIA_L4",
        "NVIDIA_GB200": "GB200 (A4X) machines are not offered for custom jobs; use NVIDIA_B200",
        "NVIDIA_RTX_PRO_6000": "not offered for custom jobs; use NVIDIA_L4 or NVIDIA_H100_80GB",
    }
)

# ----------------------------------------------------------------------- machine families

#: CPU-only machine families: family -> shape -> vCPU counts. Names are
#: ``<family>-<shape>-<vCPUs>``, e.g. ``n2-highmem-16``.
CPU_MACHINE_SHAPES: Mapping[str, Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {
        "e2": {"standard": (4, 8, 16, 32), "highmem": (2, 4, 8, 16), "highcpu": (16, 32)},
        "n2": {
            "standard": (4, 8, 16, 32, 48, 64, 80),
            "highmem": (2, 4, 8, 16, 32, 48, 64, 80),
            "highcpu": (16, 32, 48, 64, 80, 96),
        },
        "n2d": {
            "standard": (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224),
            "highmem": (2, 4, 8, 16, 32, 48, 64, 80, 96),
            "highcpu": (2, 4, 8, 16, 32, 48, 64, 80, 96, 128, 224),
        },
        "c2": {"standard": (4, 8, 16, 30, 60)},
        "c2d": {
            "standard": (2, 4, 8, 16, 32, 56, 112),
            "highmem": (2, 4, 8, 16, 32, 56, 112),
            "highcpu": (2, 4, 8, 16, 32, 56, 112),
        },
        "m1": {"ultramem": (40, 80, 160), "megamem": (96,)},
    }
)

#: N1 machines (CPU, or with attached GPUs): shape -> vCPU counts.
N1_MACHINE_SHAPES: Mapping[str, tuple[int, ...]] = MappingProxyType(
    {
        "standard": (4, 8, 16, 32, 64, 96),
        "highmem": (2, 4, 8, 16, 32, 64, 96),
        "highcpu": (16, 32, 64, 96),
    }
)

#: GPUs attachable to N1 machines: accelerator -> GPU count -> most vCPUs a machine with
#: that many GPUs may have (Compute Engine "GPU machine types", N1 section).
N1_GPU_MAX_VCPUS: Mapping[str, Mapping[int, int]] = MappingProxyType(
    {
        "NVIDIA_TESLA_T4": {1: 48, 2: 48, 4: 96},
        "NVIDIA_TESLA_P4": {1: 24, 2: 48, 4: 96},
        "NVIDIA_TESLA_V100": {1: 12, 2: 24, 4: 48, 8: 96},
        "NVIDIA_TESLA_P100": {1: 16, 2: 32, 4: 64},
    }
)

#: Accelerator-optimized series whose machines come with their GPUs:
#: (series, accelerator, GPU counts). Names are ``<series>-<count>g``.
GPU_SERIES: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("a2-highgpu", "NVIDIA_TESLA_A100", (1, 2, 4, 8)),
    ("a2-megagpu", "NVIDIA_TESLA_A100", (16,)),
    ("a2-ultragpu", "NVIDIA_A100_80GB", (1, 2, 4, 8)),
    ("a3-highgpu", "NVIDIA_H100_80GB", (1, 2, 4, 8)),
    ("a3-megagpu", "NVIDIA_H100_MEGA_80GB", (8,)),
    ("a3-ultragpu", "NVIDIA_H200_141GB", (8,)),
    ("a4-highgpu", "NVIDIA_B200", (8,)),
)

#: G2 machines (NVIDIA L4): vCPUs -> L4 count. Names are ``g2-standard-<vCPUs>``.
G2_STANDARD_L4_COUNTS: Mapping[int, int] = MappingProxyType(
    {4: 1, 8: 1, 12: 1, 16: 1, 24: 2, 32: 1, 48: 4, 96: 8}
)

#: TPU machines whose accelerator is chosen in the job (TPU v2 / v3, 8 cores each).
TPU_PICKED_MACHINES: Mapping[str, Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {"cloud-tpu": {"TPU_V2": (8,), "TPU_V3": (8,)}}
)

#: TPU machines that come with their chips: machine -> (accelerator, chips, single-host
#: topology). One replica, one pool (see ``spec``), so the topology is the single host's.
TPU_BUILT_IN_MACHINES: Mapping[str, tuple[str, int, str]] = MappingProxyType(
    {
        "ct5lp-hightpu-1t": ("TPU_V5_LITEPOD", 1, "1x1"),
        "ct5lp-hightpu-4t": ("TPU_V5_LITEPOD", 4, "2x2"),
        "ct5lp-hightpu-8t": ("TPU_V5_LITEPOD", 8, "2x4"),
        "ct4p-hightpu-4t": ("TPU_V4_POD", 4, "2x2x1"),
    }
)

# ----------------------------------------------------------------------------------- disks

#: Boot disk types (DiskSpec.boot_disk_type).
DISK_TYPES: tuple[str, ...] = ("pd-ssd", "pd-standard", "hyperdisk-balanced")
DEFAULT_DISK_TYPE = "pd-ssd"
#: Machines that boot only from Hyperdisk (DiskSpec: "for A3U machines, the default value
#: is hyperdisk-balanced"; A4 likewise has no Persistent Disk support).
HYPERDISK_ONLY_MACHINES: frozenset[str] = frozenset({"a3-ultragpu-8g", "a4-highgpu-8g"})
DISK_SIZE_GB_MIN = 100
DISK_SIZE_GB_MAX = 64_000
DEFAULT_DISK_SIZE_GB = 100

# ------------------------------------------------------------------------- defaults, images

DEFAULT_MACHINE = "n1-standard-4"
#: Google's recommended reduction server machine.
DEFAULT_REDUCTION_SERVER_MACHINE = "n1-highcpu-16"
REDUCTION_SERVER_IMAGE = "us-docker.pkg.dev/vertex-ai-restricted/training/reductionserver:latest"
#: Deprecated Scheduling.Strategy values and what replaces them.
DEPRECATED_STRATEGIES: Mapping[str, str] = MappingProxyType(
    {"ON_DEMAND": "STANDARD", "LOW_COST": "SPOT"}
)

# ---------------------------------------------------------------------------------- regions

#: Regions where Vertex AI runs custom jobs.
TRAINING_REGIONS: frozenset[str] = frozenset(
    {
        "africa-south1",
        "asia-east1",
        "asia-east2",
        "asia-northeast1",
        "asia-northeast2",
        "asia-northeast3",
        "asia-south1",
        "asia-south2",
        "asia-southeast1",
        "asia-southeast2",
        "australia-southeast1",
        "australia-southeast2",
        "europe-central2",
        "europe-north1",
        "europe-north2",
        "europe-southwest1",
        "europe-west1",
        "europe-west2",
        "europe-west3",
        "europe-west4",
        "europe-west6",
        "europe-west8",
        "europe-west9",
        "europe-west12",
        "me-central1",
        "me-central2",
        "me-west1",
        "northamerica-northeast1",
        "northamerica-northeast2",
        "southamerica-east1",
        "southamerica-west1",
        "us-central1",
        "us-east1",
        "us-east4",
        "us-east5",
        "us-east7",
        "us-south1",
        "us-west1",
        "us-west2",
        "us-west3",
        "us-west4",
        "us-west8",
    }
)

_P100, _V100, _P4, _T4 = (
    "NVIDIA_TESLA_P100",
    "NVIDIA_TESLA_V100",
    "NVIDIA_TESLA_P4",
    "NVIDIA_TESLA_T4",
)
_A100, _A100_80, _L4 = "NVIDIA_TESLA_A100", "NVIDIA_A100_80GB", "NVIDIA_L4"
_H100, _H100_MEGA, _H200, _B200 = (
    "NVIDIA_H100_80GB",
    "NVIDIA_H100_MEGA_80GB",
    "NVIDIA_H200_141GB",
    "NVIDIA_B200",
)

#: Accelerators offered for training, by region. A region absent here is not checked.
TRAINING_ACCELERATORS_BY_REGION: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "us-central1": frozenset(
            {
                _P100,
                _V100,
                _P4,
                _T4,
                _A100,
                _A100_80,
                _L4,
                _H100,
                _H100_MEGA,
                _H200,
                _B200,
                "TPU_V2",
                "TPU_V3",
                "TPU_V5_LITEPOD",
            }
        ),
        "us-east1": frozenset({_P100, _V100, _T4, _A100, _L4, "TPU_V3"}),
        "us-east4": frozenset({_P4, _T4, _A100_80, _L4, _H100, _H100_MEGA, _H200, _B200}),
        "us-east5": frozenset({_H100, _H100_MEGA, "TPU_V4_POD", "TPU_V5_LITEPOD"}),
        "us-west1": frozenset({_P100, _V100, _T4, _L4, _H100}),
        "us-west2": frozenset({_P4, _T4}),
        "us-west4": frozenset({_P4, _T4}),
        "northamerica-northeast1": frozenset({_P4, _T4}),
        "southamerica-east1": frozenset({_T4}),
        "europe-west1": frozenset({_P100, _T4}),
        "europe-west2": frozenset({_T4, _L4}),
        "europe-west3": frozenset({_T4, _L4}),
        "europe-west4": frozenset(
            {
                _P100,
                _V100,
                _P4,
                _T4,
                _A100,
                _A100_80,
                _L4,
                _H100,
                _H100_MEGA,
                "TPU_V2",
                "TPU_V3",
                "TPU_V5_LITEPOD",
            }
        ),
        "asia-east1": frozenset({_P100, _V100, _T4, _L4}),
        "asia-northeast1": frozenset({_T4, _A100, _L4, _H100}),
        "asia-northeast3": frozenset({_T4, _A100, _L4}),
        "asia-south1": frozenset({_T4, _L4}),
        "asia-southeast1": frozenset({_P4, _T4, _A100, _A100_80, _L4, _H100, _H200}),
        "australia-southeast1": frozenset({_P100, _P4, _T4}),
        "me-west1": frozenset({_T4, _A100, _L4}),
    }
)

# ----------------------------------------------------------------- the machine type table


@dataclass(frozen=True)
class MachineType:
    """One machine type custom training accepts, and what it takes."""

    name: str
    #: The part before the first dash, or "cloud-tpu".
    family: str
    #: Accelerator type -> allowed counts on this machine (empty for CPU-only machines).
    accelerators: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    #: The accelerator the machine comes with, filled in when a job names none.
    built_in: tuple[str, int] | None = None
    tpu: bool = False
    #: TPU topologies this machine runs (the first is the default).
    tpu_topologies: tuple[str, ...] = ()
    disk_types: tuple[str, ...] = DISK_TYPES
    default_disk_type: str = DEFAULT_DISK_TYPE


def _build_machine_types() -> dict[str, MachineType]:
    """Expand the family tables above into one entry per machine type name."""
    machines: dict[str, MachineType] = {}
    for family, shapes in CPU_MACHINE_SHAPES.items():
        for shape, sizes in shapes.items():
            for vcpus in sizes:
                name = f"{family}-{shape}-{vcpus}"
                machines[name] = MachineType(name=name, family=family)
    for shape, sizes in N1_MACHINE_SHAPES.items():
        for vcpus in sizes:
            name = f"n1-{shape}-{vcpus}"
            gpus = {
                accelerator: counts
                for accelerator, limits in N1_GPU_MAX_VCPUS.items()
                if (counts := tuple(c for c, max_vcpus in limits.items() if vcpus <= max_vcpus))
            }
            machines[name] = MachineType(name=name, family="n1", accelerators=gpus)
    for series, accelerator, counts in GPU_SERIES:
        for count in counts:
            name = f"{series}-{count}g"
            hyperdisk = name in HYPERDISK_ONLY_MACHINES
            machines[name] = MachineType(
                name=name,
                family=series.split("-", 1)[0],
                accelerators={accelerator: (count,)},
                built_in=(accelerator, count),
                disk_types=("hyperdisk-balanced",) if hyperdisk else DISK_TYPES,
                default_disk_type="hyperdisk-balanced" if hyperdisk else DEFAULT_DISK_TYPE,
            )
    for vcpus, count in G2_STANDARD_L4_COUNTS.items():
        name = f"g2-standard-{vcpus}"
        machines[name] = MachineType(
            name=name, family="g2", accelerators={_L4: (count,)}, built_in=(_L4, count)
        )
    for name, picks in TPU_PICKED_MACHINES.items():
        machines[name] = MachineType(name=name, family=name, accelerators=picks, tpu=True)
    for name, (accelerator, chips, topology) in TPU_BUILT_IN_MACHINES.items():
        machines[name] = MachineType(
            name=name,
            family=name.split("-", 1)[0],
            accelerators={accelerator: (chips,)},
            tpu=True,
            tpu_topologies=(topology,),
        )
    return machines


#: Every machine type custom training accepts, by name.
MACHINE_TYPES: Mapping[str, MachineType] = MappingProxyType(_build_machine_types())

#: Machine family -> the accelerators its machines take (empty: CPU only).
FAMILY_ACCELERATORS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        family: tuple(
            a
            for a in ACCELERATOR_TYPES
            if any(a in m.accelerators for m in MACHINE_TYPES.values() if m.family == family)
        )
        for family in dict.fromkeys(m.family for m in MACHINE_TYPES.values())
    }
)


def machines_taking(accelerator: str) -> tuple[str, ...]:
    """Names of the machine types that take ``accelerator``, in catalogue order."""
    return tuple(name for name, m in MACHINE_TYPES.items() if accelerator in m.accelerators)


def regions_offering(accelerator: str) -> tuple[str, ...]:
    """Regions (sorted) whose training offer, as recorded here, includes ``accelerator``."""
    return tuple(
        sorted(
            r for r, offered in TRAINING_ACCELERATORS_BY_REGION.items() if accelerator in offered
        )
    )
