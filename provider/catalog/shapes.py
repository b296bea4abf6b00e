"""What each machine type of ``provider.catalog.machines`` is billed for: vCPUs and GiB.

This module is data. ``provider.review.cost`` multiplies these figures by the per-vCPU-hour
and per-GiB-hour prices of the price snapshot (``provider.catalog.prices``): Google bills
custom training per resource (vCPU, memory, accelerator, disk), not per machine type.

Source: Google Cloud docs, Compute Engine, "Machine families" and the machine-series
pages it links (https://cloud.google.com/compute/docs/machine-types,
https://cloud.google.com/compute/docs/general-purpose-machines,
https://cloud.google.com/compute/docs/accelerator-optimized-machines), read with the
search tool over stored copies on 2026-11-25 (``SHAPES_DATE``). The stored copies show the
pages' openings, rarely their tables, so each row says whether its figures were read:

- ``verified=True``: the figure was read on Google's page (``how`` quotes it).
- ``verified=False``: the family's published ratio, as Google's pages give it in their
  tables, but not read here; check it with ``gcloud compute machine-types describe NAME
  --zone ZONE`` before relying on it, and correct the row.

Memory: Compute Engine's tables give memory in "GB"; the billing catalog prices RAM per
GiB hour. The figures are used as GiB (Compute Engine states its memory in binary GB;
not re-read here).

TPU machines (``cloud-tpu``, ``ct5lp-*``, ``ct4p-*``) have no vCPU or memory rows: Vertex
AI bills them for their TPU chips (``accelerator`` x count), and their host is part of that
price. That is not verified here either; the rows say so.

A machine type missing here has no shape: its estimate is unknown, naming the machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from provider.catalog import machines

SHAPES_DATE = "2026-11-25"

MACHINE_TYPES_URL = "https://cloud.google.com/compute/docs/machine-types"
GENERAL_PURPOSE_URL = "https://cloud.google.com/compute/docs/general-purpose-machines"
ACCELERATOR_OPTIMIZED_URL = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
VERTEX_CONFIGURE_COMPUTE_URL = "https://cloud.google.com/vertex-ai/docs/training/configure-compute"

NOT_READ = (
    "not verified: the family's ratio as Compute Engine publishes it, not read in the "
    "stored copies of the page; check with `gcloud compute machine-types describe`"
)


@dataclass(frozen=True)
class Shape:
    """What one machine type is billed for, with where the figures come from."""

    machine: str
    #: vCPUs billed per replica (0 for a TPU machine, billed per chip).
    vcpus: float
    #: GiB of memory billed per replica (0 for a TPU machine).
    memory_gib: float
    url: str
    verified: bool
    how: str
    #: For a TPU machine: it is billed for its accelerator only.
    tpu: bool = False


#: Memory per vCPU (GB) by (family, shape): (ratio, page, verified, how).
_RATIOS: Mapping[tuple[str, str], tuple[float, str, bool, str]] = MappingProxyType(
    {
        ("n1", "standard"): (
            3.75,
            MACHINE_TYPES_URL,
            True,
            "read: n1-standard table, 3.75 GB per vCPU (n1-standard-4: 4 vCPUs, 15 GB)",
        ),
        ("n1", "highmem"): (
            6.5,
            MACHINE_TYPES_URL,
            True,
            "read: 'N1 machine types offer up to 96 vCPUs, 6.5 GB of memory per vCPU'",
        ),
        ("n1", "highcpu"): (0.9, MACHINE_TYPES_URL, False, NOT_READ),
        ("e2", "standard"): (4.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("e2", "highmem"): (8.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("e2", "highcpu"): (1.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("n2", "standard"): (4.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("n2", "highmem"): (8.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("n2", "highcpu"): (1.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("n2d", "standard"): (4.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("n2d", "highmem"): (8.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("n2d", "highcpu"): (1.0, GENERAL_PURPOSE_URL, False, NOT_READ),
        ("c2", "standard"): (4.0, MACHINE_TYPES_URL, False, NOT_READ),
        ("c2d", "standard"): (4.0, MACHINE_TYPES_URL, False, NOT_READ),
        ("c2d", "highmem"): (8.0, MACHINE_TYPES_URL, False, NOT_READ),
        ("c2d", "highcpu"): (2.0, MACHINE_TYPES_URL, False, NOT_READ),
    }
)

#: Machines whose shape is not a ratio: name -> (vCPUs, GB, page, verified, how).
_FIXED: Mapping[str, tuple[float, float, str, bool, str]] = MappingProxyType(
    {
        "m1-ultramem-40": (40, 961, MACHINE_TYPES_URL, False, NOT_READ),
        "m1-ultramem-80": (80, 1922, MACHINE_TYPES_URL, False, NOT_READ),
        "m1-ultramem-160": (160, 3844, MACHINE_TYPES_URL, False, NOT_READ),
        "m1-megamem-96": (96, 1433.6, MACHINE_TYPES_URL, False, NOT_READ),
        "a2-highgpu-1g": (12, 85, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-highgpu-2g": (24, 170, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-highgpu-4g": (48, 340, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-highgpu-8g": (96, 680, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-megagpu-16g": (96, 1360, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-ultragpu-1g": (12, 170, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-ultragpu-2g": (24, 340, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-ultragpu-4g": (48, 680, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a2-ultragpu-8g": (96, 1360, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a3-highgpu-1g": (26, 234, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a3-highgpu-2g": (52, 468, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a3-highgpu-4g": (104, 936, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a3-highgpu-8g": (
            208,
            1872,
            ACCELERATOR_OPTIMIZED_URL,
            True,
            "read (an earlier version of the page, when A3 had one machine type): "
            "'The A3 machine series has 208 vCPUs, and 1,872 GB of memory'",
        ),
        "a3-megagpu-8g": (208, 1872, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        "a3-ultragpu-8g": (
            224,
            2944,
            ACCELERATOR_OPTIMIZED_URL,
            False,
            "not verified per machine: the page's 'The A3 machine series has up to 224 vCPUs, "
            "and 2,944 GB of memory' was read, taken as its largest machine's",
        ),
        "a4-highgpu-8g": (224, 3968, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ),
        **{
            f"g2-standard-{vcpus}": (vcpus, gb, ACCELERATOR_OPTIMIZED_URL, False, NOT_READ)
            for vcpus, gb in (
                (4, 16),
                (8, 32),
                (12, 48),
                (16, 64),
                (24, 96),
                (32, 128),
                (48, 192),
                (96, 384),
            )
        },
    }
)

_TPU_HOW = (
    "not verified: billed for its TPU chips (accelerator x count), the host included in "
    "that price, as Vertex AI prices TPU training per accelerator"
)


def _build() -> dict[str, Shape]:
    shapes: dict[str, Shape] = {}
    for name, machine in machines.MACHINE_TYPES.items():
        if machine.tpu:
            shapes[name] = Shape(name, 0, 0, VERTEX_CONFIGURE_COMPUTE_URL, False, _TPU_HOW, True)
            continue
        if name in _FIXED:
            vcpus, gb, url, verified, how = _FIXED[name]
            shapes[name] = Shape(name, vcpus, gb, url, verified, how)
            continue
        family, shape, count = name.split("-")
        if (family, shape) in _RATIOS:
            ratio, url, verified, how = _RATIOS[(family, shape)]
            shapes[name] = Shape(name, int(count), int(count) * ratio, url, verified, how)
    return shapes


#: Every machine type's shape, by name.
SHAPES: Mapping[str, Shape] = MappingProxyType(_build())


def shape_of(machine: str) -> Shape | None:
    """The shape of ``machine``, or None when this table has none."""
    return SHAPES.get(machine)
