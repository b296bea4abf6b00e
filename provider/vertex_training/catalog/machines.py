"""What Vertex AI custom training offers: machines, accelerators, regions, disks, images.

This module is data. ``vertex_training.stackconfig`` validates stack configs against it; nothing
here
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

Read on 2026-11-23 (``TPU_SOURCES``; every TPU slice row and every region row added
then names its source and day):

- Cloud TPU docs, "TPU v5e" and "TPU configurations"
  (https://cloud.google.com/tpu/docs/v5e,
  https://cloud.google.com/tpu/docs/supported-tpu-configurations): the v5e slice shapes,
  1x1 to 16x16, and their chip counts; a v5e TPU VM holds 1, 4 or 8 chips.
- Cloud TPU docs, "TPU regions and zones" (https://docs.cloud.google.com/tpu/docs/types-zones):
  v5e zones include us-west1-c.
- Google's Vertex AI samples (GoogleCloudPlatform/vertex-ai-samples,
  notebooks/official/training/tpuv5e_llama2_pytorch_finetuning_and_serving.ipynb and
  tpuv5e_gemma_peft_finetuning_and_serving.ipynb, commit cc0d791): custom jobs on
  ``ct5lp-hightpu-4t`` with ``tpu_topology`` 2x2, 2x4 or 4x4 on one replica (quota
  ``aiplatform.googleapis.com/custom_model_training_tpu_v5e``), ``ct5lp-hightpu-1t`` with
  1x1, both in us-west1.

Not readable on 2026-11-23 with the tools this project is maintained with: the TPU section
of "Configure compute resources for custom training" (``CONFIGURE_COMPUTE_URL``) and the
accelerator table of "Vertex AI locations" (``LOCATIONS_URL``). So:

- A v5e slice shape Cloud TPU documents but no Google source shows Vertex AI running on a
  given machine (``TpuSlice.vertex_confirmed`` False) is accepted with a warning naming the
  configure-compute page, not refused.
- ``TRAINING_ACCELERATORS_BY_REGION`` was not re-read: a region whose row lacks an
  accelerator is warned about, naming the locations page, not refused
  (``REGION_TABLE_CONFIRMED_ON`` is None). Set it to the day the page is re-read and the
  rows compared, and the check refuses again.
- TPU v5p (``ct5p-hightpu-*``) and v6e (``ct6e-standard-*``) machines are not catalogued:
  no readable Google source shows them in custom training (the aiplatform v1
  ``AcceleratorType`` of google-cloud-aiplatform 2.7.0 has no v5p or v6e value either).

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
    "NVIDIA_GB200",
    "NVIDIA_RTX_PRO_6000",
)
#: TPUs, by their ``AcceleratorType`` enum names.
TPU_ACCELERATORS: tuple[str, ...] = ("TPU_V2", "TPU_V3", "TPU_V4_POD", "TPU_V5_LITEPOD")
#: Every accelerator a custom training machine in this catalogue takes.
ACCELERATOR_TYPES: tuple[str, ...] = GPU_ACCELERATORS + TPU_ACCELERATORS
#: Enum values the API still lists but that no training machine here takes, with the fix.
UNAVAILABLE_ACCELERATORS: Mapping[str, str] = MappingProxyType(
    {
        "NVIDIA_TESLA_K80": "the K80 reached end of support; use NVIDIA_TESLA_T4 or NVIDIA_L4",
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
    # NEWEST_GPU_SOURCES["configure-compute"]: a4x-highgpu-4g, four GB200 (ARM hosts).
    ("a4x-highgpu", "NVIDIA_GB200", (4,)),
)

#: G2 machines (NVIDIA L4): vCPUs -> L4 count. Names are ``g2-standard-<vCPUs>``.
G2_STANDARD_L4_COUNTS: Mapping[int, int] = MappingProxyType(
    {4: 1, 8: 1, 12: 1, 16: 1, 24: 2, 32: 1, 48: 4, 96: 8}
)

#: G4 machines (NVIDIA RTX PRO 6000): vCPUs -> GPU count. Names are ``g4-standard-<vCPUs>``
#: (``NEWEST_GPU_SOURCES["configure-compute"]``).
G4_STANDARD_RTX_COUNTS: Mapping[int, int] = MappingProxyType({48: 1, 96: 2, 192: 4, 384: 8})

#: The day the rows for Google's newest GPUs (H200, B200, GB200, RTX PRO 6000: the machines,
#: regions, partitions and flex-start rows below that name ``NEWEST_GPU_SOURCES``) were read.
NEWEST_GPUS_READ_ON = "2026-11-26"
#: Where those rows come from. Google moved these pages under
#: docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/; the old
#: addresses below still lead there.
NEWEST_GPU_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "configure-compute": "Vertex AI, Configure compute resources for custom training "
        "(https://cloud.google.com/vertex-ai/docs/training/configure-compute, read "
        "2026-11-26): a3-ultragpu-8g (8 H200), a4-highgpu-8g (8 B200), a4x-highgpu-4g "
        "(4 GB200, capacity only through shared reservations), g4-standard-48/96/192/384 "
        "(1/2/4/8 RTX PRO 6000)",
        "locations": "Vertex AI locations, accelerator availability "
        "(https://cloud.google.com/vertex-ai/docs/general/locations#accelerators, read "
        "2026-11-26): the training regions of H200, B200, GB200 and RTX PRO 6000",
        "gpu-partitions": "GKE, Running multi-instance GPUs "
        "(https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi, linked from "
        "MachineSpec.gpu_partition_size, read 2026-11-26 in excerpts: the page's table of "
        "sizes could not be read whole; the sizes below are NVIDIA's MIG profiles for each "
        "GPU the page names, as a summary of that table gave them)",
        "flex-start": "Vertex AI, Schedule training jobs based on resource availability "
        "(https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws, read "
        "2026-11-26): L4, A100, H100, H200 or B200 GPUs; a timeout of 7 days or less; the "
        "same machine configuration in every worker pool; preemptible quota",
        "private-ip": "Vertex AI, Use a private IP for custom training "
        "(https://cloud.google.com/vertex-ai/docs/training/using-private-ip, read "
        "2026-11-26): VPC Network Peering is not supported with H100 Mega, H200 and B200; "
        "use a Private Service Connect interface",
    }
)
GPU_PARTITIONS_URL = "https://cloud.google.com/kubernetes-engine/docs/how-to/gpus-multi"
#: GPU -> the multi-instance partition sizes it divides into (``gpu_partition_size``;
#: ``NEWEST_GPU_SOURCES["gpu-partitions"]``). GPUs absent here take no partitions.
GPU_PARTITION_SIZES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "NVIDIA_TESLA_A100": ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"),
        "NVIDIA_A100_80GB": ("1g.10gb", "2g.20gb", "3g.40gb", "7g.80gb"),
        "NVIDIA_H100_80GB": ("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "7g.80gb"),
        "NVIDIA_H200_141GB": ("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "7g.141gb"),
    }
)
#: The GPUs a flex-start job may request (``NEWEST_GPU_SOURCES["flex-start"]``: "L4, A100,
#: H100, H200 or B200"), and the longest timeout it may have.
FLEX_START_ACCELERATORS: frozenset[str] = frozenset(
    {
        "NVIDIA_L4",
        "NVIDIA_TESLA_A100",
        "NVIDIA_A100_80GB",
        "NVIDIA_H100_80GB",
        "NVIDIA_H100_MEGA_80GB",
        "NVIDIA_H200_141GB",
        "NVIDIA_B200",
    }
)
FLEX_START_MAX_TIMEOUT_S = 7 * 24 * 3600
FLEX_START_URL = "https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws"
#: GPUs whose machines Vertex AI does not peer with a VPC network
#: (``NEWEST_GPU_SOURCES["private-ip"]``).
NO_VPC_PEERING_ACCELERATORS: frozenset[str] = frozenset(
    {"NVIDIA_H100_MEGA_80GB", "NVIDIA_H200_141GB", "NVIDIA_B200"}
)
#: GPUs whose capacity comes only from a shared reservation
#: (``NEWEST_GPU_SOURCES["configure-compute"]``).
RESERVATION_ONLY_ACCELERATORS: frozenset[str] = frozenset({"NVIDIA_GB200"})
#: Machines with ARM hosts: an image must be built for arm64 (A4X).
ARM_MACHINES: frozenset[str] = frozenset({"a4x-highgpu-4g"})

#: TPU machines whose accelerator is chosen in the job (TPU v2 / v3, 8 cores each).
TPU_PICKED_MACHINES: Mapping[str, Mapping[str, tuple[int, ...]]] = MappingProxyType(
    {"cloud-tpu": {"TPU_V2": (8,), "TPU_V3": (8,)}}
)

#: The day the TPU rows and the region rows below were last read from their sources.
TPU_READ_ON = "2026-11-23"
CONFIGURE_COMPUTE_URL = "https://cloud.google.com/vertex-ai/docs/training/configure-compute"
LOCATIONS_URL = "https://cloud.google.com/vertex-ai/docs/general/locations#accelerators"
#: Where TPU and region rows come from (keys name them in ``TpuSlice.source``).
TPU_SOURCES: Mapping[str, str] = MappingProxyType(
    {
        "configure-compute": f"Vertex AI, Configure compute resources for custom training "
        f"({CONFIGURE_COMPUTE_URL}, read 2026-11-21)",
        "cloud-tpu-v5e": "Cloud TPU, TPU v5e / TPU configurations "
        "(https://cloud.google.com/tpu/docs/v5e, "
        "https://cloud.google.com/tpu/docs/supported-tpu-configurations, read 2026-11-23)",
        "cloud-tpu-zones": "Cloud TPU, TPU regions and zones "
        "(https://docs.cloud.google.com/tpu/docs/types-zones, read 2026-11-23)",
        "notebook-llama2-v5e": "GoogleCloudPlatform/vertex-ai-samples "
        "notebooks/official/training/tpuv5e_llama2_pytorch_finetuning_and_serving.ipynb "
        "(commit cc0d791, read 2026-11-23)",
        "notebook-gemma-v5e": "GoogleCloudPlatform/vertex-ai-samples "
        "notebooks/official/training/tpuv5e_gemma_peft_finetuning_and_serving.ipynb "
        "(commit cc0d791, read 2026-11-23)",
        "locations": f"Vertex AI locations, accelerator availability ({LOCATIONS_URL}, "
        "read 2026-11-21)",
        "newest-gpus-locations": f"Vertex AI locations, accelerator availability "
        f"({LOCATIONS_URL}, read 2026-11-26): H200, B200, GB200 and RTX PRO 6000",
    }
)


@dataclass(frozen=True)
class TpuSlice:
    """One TPU topology a machine runs: chips in the slice, VMs (hosts) it spans."""

    topology: str
    chips: int
    #: VMs of this machine type the slice spans (more than 1: a multi-host slice, still one
    #: replica in one worker pool).
    vms: int
    #: ``TPU_SOURCES`` keys the row was read from.
    source: tuple[str, ...]
    #: False when only Cloud TPU documents the shape, and no Google source shows Vertex AI
    #: custom training running it on this machine: accepted with a warning.
    vertex_confirmed: bool = True
    read_on: str = TPU_READ_ON


def _v5e_slices(
    chips_per_vm: int, confirmed: Mapping[str, tuple[str, ...]]
) -> tuple[TpuSlice, ...]:
    """The v5e slice shapes (Cloud TPU) a machine with ``chips_per_vm`` chips can form."""
    shapes = (
        ("1x1", 1),
        ("2x2", 4),
        ("2x4", 8),
        ("4x4", 16),
        ("4x8", 32),
        ("8x8", 64),
        ("8x16", 128),
        ("16x16", 256),
    )
    return tuple(
        TpuSlice(
            topology,
            chips,
            chips // chips_per_vm,
            ("cloud-tpu-v5e", *confirmed.get(topology, ())),
            vertex_confirmed=topology in confirmed,
        )
        for topology, chips in shapes
        if chips >= chips_per_vm and chips % chips_per_vm == 0
    )


#: TPU machines that come with their chips: machine -> (accelerator, chips per VM).
TPU_BUILT_IN_MACHINES: Mapping[str, tuple[str, int]] = MappingProxyType(
    {
        "ct5lp-hightpu-1t": ("TPU_V5_LITEPOD", 1),
        "ct5lp-hightpu-4t": ("TPU_V5_LITEPOD", 4),
        "ct5lp-hightpu-8t": ("TPU_V5_LITEPOD", 8),
        "ct4p-hightpu-4t": ("TPU_V4_POD", 4),
    }
)


def topology_chips(topology: str | None) -> int:
    """The TPU chips of a topology (``4x4``: 16; ``2x2x1``: 4); 0 for none or a malformed one."""
    if not topology:
        return 0
    chips = 1
    for side in topology.lower().split("x"):
        if not side.isdigit():
            return 0
        chips *= int(side)
    return chips


def tpu_chips(machine: str, topology: str | None) -> tuple[str, int] | None:
    """The TPU chips one replica of a machine with its chips built in holds: the machine's
    own, or the whole slice's when its topology spans several machines (``4x4`` on
    ``ct5lp-hightpu-4t``: 16). None for any other machine."""
    built_in = TPU_BUILT_IN_MACHINES.get(machine)
    if built_in is None:
        return None
    accelerator, chips = built_in
    return accelerator, max(chips, topology_chips(topology))


#: The topologies each built-in TPU machine runs, the first its default (a single host).
#: ct5lp-hightpu-1t and -4t: every v5e shape they divide; ct5lp-hightpu-8t: its single
#: host only (no source says which VM size larger slices use there); ct4p-hightpu-4t: its
#: single host (v4 pods are not re-read).
TPU_SLICES: Mapping[str, tuple[TpuSlice, ...]] = MappingProxyType(
    {
        "ct5lp-hightpu-1t": (
            TpuSlice("1x1", 1, 1, ("configure-compute", "notebook-gemma-v5e", "cloud-tpu-v5e")),
        ),
        "ct5lp-hightpu-4t": _v5e_slices(
            4,
            {
                "2x2": ("configure-compute", "notebook-llama2-v5e"),
                "2x4": ("notebook-llama2-v5e",),
                "4x4": ("notebook-llama2-v5e",),
            },
        ),
        "ct5lp-hightpu-8t": (TpuSlice("2x4", 8, 1, ("configure-compute", "cloud-tpu-v5e")),),
        "ct4p-hightpu-4t": (TpuSlice("2x2x1", 4, 1, ("configure-compute",), read_on="2026-11-21"),),
    }
)

#: Vertex AI quota a TPU accelerator's training chips count against (per chip).
TPU_TRAINING_QUOTAS: Mapping[str, str] = MappingProxyType(
    {"TPU_V5_LITEPOD": "aiplatform.googleapis.com/custom_model_training_tpu_v5e"}
)

# ----------------------------------------------------------------------------------- disks

#: Boot disk types (DiskSpec.boot_disk_type).
DISK_TYPES: tuple[str, ...] = ("pd-ssd", "pd-standard", "hyperdisk-balanced")
DEFAULT_DISK_TYPE = "pd-ssd"
#: Machines that boot only from Hyperdisk (DiskSpec: "for A3U machines, the default value
#: is hyperdisk-balanced"; A4 likewise has no Persistent Disk support).
#: A4X and G4, like the newest Compute Engine series, have no Persistent Disk either.
HYPERDISK_ONLY_MACHINES: frozenset[str] = frozenset(
    {
        "a3-ultragpu-8g",
        "a4-highgpu-8g",
        "a4x-highgpu-4g",
        "g4-standard-48",
        "g4-standard-96",
        "g4-standard-192",
        "g4-standard-384",
    }
)
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
_GB200, _RTX6000 = "NVIDIA_GB200", "NVIDIA_RTX_PRO_6000"
#: The newest GPUs' training regions (``NEWEST_GPU_SOURCES["locations"]``); merged below
#: into the rows of the regions the table has (a region it lacks stays unchecked).
_NEWEST_GPU_REGIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        _H200: (
            "asia-south1",
            "asia-south2",
            "europe-west1",
            "europe-west4",
            "us-central1",
            "us-east4",
            "us-east5",
            "us-south1",
            "us-west1",
        ),
        _B200: (
            "asia-northeast1",
            "asia-southeast1",
            "europe-west4",
            "us-central1",
            "us-east1",
            "us-east4",
            "us-south1",
            "us-west2",
            "us-west3",
        ),
        _GB200: ("us-central1", "us-east4"),
        _RTX6000: (
            "asia-south2",
            "asia-southeast1",
            "europe-west4",
            "us-central1",
            "us-east1",
            "us-east4",
        ),
    }
)

#: The day ``TRAINING_ACCELERATORS_BY_REGION`` was last compared with the locations page
#: (``LOCATIONS_URL``); None while it could not be re-read: a region's row then warns about
#: an accelerator it lacks instead of refusing it.
REGION_TABLE_CONFIRMED_ON: str | None = None

#: Accelerators offered for training, by region (source: ``TPU_SOURCES["locations"]``,
#: read 2026-11-21, unless ``REGION_ROW_ADDITIONS`` names another). A region absent here
#: is not checked.
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
        "us-west1": frozenset({_P100, _V100, _T4, _L4, _H100, "TPU_V5_LITEPOD"}),
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

_NEWEST_ADDED = {
    (region, accelerator)
    for accelerator, regions in _NEWEST_GPU_REGIONS.items()
    for region in regions
    if region in TRAINING_ACCELERATORS_BY_REGION
    and accelerator not in TRAINING_ACCELERATORS_BY_REGION[region]
}
TRAINING_ACCELERATORS_BY_REGION = MappingProxyType(
    {
        region: offered | {a for r, a in _NEWEST_ADDED if r == region}
        for region, offered in TRAINING_ACCELERATORS_BY_REGION.items()
    }
)

#: (region, accelerator) entries added after the locations page reading, each with its
#: ``TPU_SOURCES`` keys and the day read.
REGION_ROW_ADDITIONS: Mapping[tuple[str, str], tuple[tuple[str, ...], str]] = MappingProxyType(
    {
        ("us-west1", "TPU_V5_LITEPOD"): (
            ("notebook-llama2-v5e", "notebook-gemma-v5e", "cloud-tpu-zones"),
            TPU_READ_ON,
        ),
        **{
            pair: (("newest-gpus-locations",), NEWEST_GPUS_READ_ON)
            for pair in sorted(_NEWEST_ADDED)
        },
    }
)


def region_row_source(region: str, accelerator: str) -> str:
    """Where the table's entry for ``accelerator`` in ``region`` was read, and when."""
    added = REGION_ROW_ADDITIONS.get((region, accelerator))
    if added is not None:
        keys, _ = added
        return "; ".join(TPU_SOURCES[key] for key in keys)
    return TPU_SOURCES["locations"]


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
    #: TPU topologies this machine runs (the first is the default), with their rows.
    tpu_slices: tuple[TpuSlice, ...] = ()
    disk_types: tuple[str, ...] = DISK_TYPES
    default_disk_type: str = DEFAULT_DISK_TYPE

    @property
    def tpu_topologies(self) -> tuple[str, ...]:
        """The topologies this machine runs (the first is the default)."""
        return tuple(s.topology for s in self.tpu_slices)

    def tpu_slice(self, topology: str) -> TpuSlice | None:
        """This machine's row for ``topology``, or None."""
        return next((s for s in self.tpu_slices if s.topology == topology), None)


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
    for vcpus, count in G4_STANDARD_RTX_COUNTS.items():
        name = f"g4-standard-{vcpus}"
        machines[name] = MachineType(
            name=name,
            family="g4",
            accelerators={_RTX6000: (count,)},
            built_in=(_RTX6000, count),
            disk_types=("hyperdisk-balanced",),
            default_disk_type="hyperdisk-balanced",
        )
    for name, picks in TPU_PICKED_MACHINES.items():
        machines[name] = MachineType(name=name, family=name, accelerators=picks, tpu=True)
    for name, (accelerator, chips) in TPU_BUILT_IN_MACHINES.items():
        machines[name] = MachineType(
            name=name,
            family=name.split("-", 1)[0],
            accelerators={accelerator: (chips,)},
            tpu=True,
            tpu_slices=TPU_SLICES[name],
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
