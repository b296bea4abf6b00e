"""A fake of Compute Engine's MachineTypes API (compute v1), HTTP/JSON on loopback.

The real ``google.cloud.compute_v1.MachineTypesClient`` talks to it over its REST
transport, pointed here with ``client_options={"api_endpoint": "http://127.0.0.1:PORT"}``
and anonymous credentials (``vertex_training.catalog.shapes.make_client`` with a loopback
endpoint). It is a stdlib ``http.server`` in a thread.

**The shapes are Google's published ones** (``PUBLISHED``): each machine's vCPUs
(``guestCpus``), memory and, for an accelerator-optimized machine, the GPUs it comes with,
as Google's machine-family pages of the Compute Engine documentation give them, read on
2026-11-29 (``SHAPES_READ_ON``):

- general-purpose (N1, E2, N2, N2D): ``GENERAL_PURPOSE_URL``
  (https://cloud.google.com/compute/docs/general-purpose-machines);
- compute-optimized (C2, C2D): ``COMPUTE_OPTIMIZED_URL``
  (https://cloud.google.com/compute/docs/compute-optimized-machines);
- memory-optimized (M1): ``MEMORY_OPTIMIZED_URL``
  (https://cloud.google.com/compute/docs/memory-optimized-machines);
- accelerator-optimized (A2, A3, A4, G2, G4): ``ACCELERATOR_OPTIMIZED_URL``
  (https://cloud.google.com/compute/docs/accelerator-optimized-machines); the
  ``guestAcceleratorType`` names as the "GPU machine types" page
  (https://cloud.google.com/compute/docs/gpus) names them.

How they were read: the search tool this project is kept with returns only the opening
of each of those pages (where the series-wide figures agree with the rows below: N1 up to
96 vCPUs, A3 High 208 vCPUs and 1,872 GB), not its per-machine tables. The rows were
therefore copied from two public transcriptions of those tables, which agree wherever
both were read (every A2 row, every A3 High and Mega row, c2-standard-4, -16 and -30):
Cyclenerd/google-cloud-pricing-cost-calculator ``build/gcp.yml`` (commit dac3128,
2026-08-20; vCPUs and GB, citing Google's pages) for all rows but two, and
skypilot-org/skypilot-catalog ``catalogs/v8/gcp/vms.csv`` (vCPUs and GiB per zone) for
``a3-ultragpu-8g`` (224 vCPUs, 2,952 GB) and ``a4-highgpu-8g`` (224 vCPUs, 3,968 GB),
which the former lacks. (A copy of an older opening of the accelerator-optimized page
gives the A3 series "up to 224 vCPUs, and 2,944 GB of memory"; 2,952 is kept, the
per-machine figure.) ``a4x-highgpu-4g``, which the catalogue offers, is left out: no
published figure for it could be read (``UNPUBLISHED``), so the fake serves it nowhere
and an estimate for it is unknown, naming it.

Google's pages give memory in GB, which are GiB: ``memoryMb`` is MiB, GB x 1024 rounded
(n1-standard-4's 15 GB is 15360; n1-highcpu-2's 1.8 GB is 1843, as Compute Engine
answered in a recorded ``machineTypes`` list). Only the shapes are Google's: the fake
catalog's prices (``vertex_training.testing.fake_catalog``) and the fake quotas
(``vertex_training.testing.fake_quotas``) stay invented, and a snapshot read from these
fakes must never be committed: its ``shapes_source`` is the fake's loopback address, which
says so.

References (the compute v1 discovery document, as generated into google-cloud-compute
1.57.0, ``google/cloud/compute_v1/types/compute.py`` and the REST transport's
``rest_base.py``), cited beside each behaviour:

- ``GET /compute/v1/projects/{project}/aggregated/machineTypes``
  (``MachineTypes.AggregatedList``) and ``GET /compute/v1/projects/{project}/zones/{zone}
  /machineTypes`` (``MachineTypes.List``), with ``filter``, ``maxResults`` ("0 to 500,
  inclusive. (Default: 500)"), ``pageToken`` and ``returnPartialSuccess``; other query
  parameters (``$alt``, ``orderBy``, ``includeAllScopes``) are accepted and ignored.
- ``filter``: the regular-expression form only (``name eq "n1-standard-4|e2-.*"``, RE2
  matching "the entire field"; ``ne`` for its negation), on ``name``; anything else is
  400 INVALID_ARGUMENT here (Google accepts more).
- ``MachineTypeAggregatedList``: ``kind``, ``id``, ``items`` keyed ``zones/<zone>``, each a
  ``MachineTypesScopedList`` of ``machineTypes`` or, when empty, a ``warning`` (code
  ``NO_RESULTS_ON_PAGE``); ``nextPageToken`` (absent on the last page); ``unreachables``
  (the zones ``unreachable`` names, their machines left out). ``returnPartialSuccess`` is
  accepted and changes nothing: the method's docstring recommends it, but 1.57.0's
  ``AggregatedListMachineTypesRequest`` has no such field, so the client never sends it.
- ``MachineType``: ``kind``, ``id`` (a uint64, as a JSON string), ``name``,
  ``description``, ``guestCpus``, ``memoryMb`` (MiB), ``isSharedCpu``, ``accelerators``
  (``guestAcceleratorType``, ``guestAcceleratorCount``), ``deprecated`` (``state``),
  ``zone``, ``selfLink``, ``maximumPersistentDisks``, ``maximumPersistentDisksSizeGb``.
- Errors are Google's JSON error body (``{"error": {"code", "message", "status",
  "errors"}}``), which ``google.api_core.exceptions.from_http_response`` maps: 503 is
  ``ServiceUnavailable``, the transient error ``fail_next`` injects.

What it serves by default: every machine of ``MACHINE_NAMES`` (the rows of ``PUBLISHED``)
in every zone of ``ZONES``, except ``a3-ultragpu-8g`` (us-central1-a only), ``LACKING``
(``a4-highgpu-8g``, served nowhere), shared-core decoys no estimate asks for
(``e2-micro``, ``e2-small``), and ``n1-highcpu-96`` marked deprecated (the fake's own
marking, to exercise ``deprecated``; not a figure of Google's pages).

Command line (``make prices`` points a refresh at it)::

    python -m vertex_training.testing.fake_compute --port 0 [--unavailable 2]

prints the address (``127.0.0.1:PORT``) on its first line and serves until stopped.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import urllib.parse
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import Any, NamedTuple, Self

from vertex_training.testing._loopback import LOOPBACK_HOST, LoopbackServer, serve_until_stopped

__all__ = [
    "LACKING",
    "MACHINE_NAMES",
    "PUBLISHED",
    "UNPUBLISHED",
    "ZONES",
    "Call",
    "FakeCompute",
    "FakeMachine",
    "Published",
    "main",
    "shape_of",
]

API_KEY_HEADER = "x-goog-api-key"
#: ``maxResults``: the API's largest and default page (compute.py).
API_MAX_RESULTS = 500
DEFAULT_MAX_PAGE_SIZE = API_MAX_RESULTS
MIB_PER_GIB = 1024
AGGREGATED = re.compile(r"^/compute/v1/projects/(?P<project>[^/]+)/aggregated/machineTypes$")
ZONAL = re.compile(r"^/compute/v1/projects/(?P<project>[^/]+)/zones/(?P<zone>[^/]+)/machineTypes$")
FILTER = re.compile(r'^\s*name\s+(?P<op>eq|ne)\s+(?P<quote>["\']?)(?P<pattern>.+?)(?P=quote)\s*$')

#: Zones served: two of each region here (names as Compute Engine spells them).
ZONES: tuple[str, ...] = tuple(
    f"{region}-{letter}"
    for region in (
        "us-central1",
        "us-east1",
        "us-west1",
        "europe-west1",
        "europe-west4",
        "asia-east1",
        "asia-southeast1",
    )
    for letter in ("a", "b")
)

# ------------------------------------------------------------- Google's published shapes

#: The day the machine-family pages below were read.
SHAPES_READ_ON = "2026-11-29"
GENERAL_PURPOSE_URL = "https://cloud.google.com/compute/docs/general-purpose-machines"
COMPUTE_OPTIMIZED_URL = "https://cloud.google.com/compute/docs/compute-optimized-machines"
MEMORY_OPTIMIZED_URL = "https://cloud.google.com/compute/docs/memory-optimized-machines"
ACCELERATOR_OPTIMIZED_URL = "https://cloud.google.com/compute/docs/accelerator-optimized-machines"
#: Where the ``guestAcceleratorType`` names below are given.
GPU_MACHINE_TYPES_URL = "https://cloud.google.com/compute/docs/gpus"


class Published(NamedTuple):
    """One predefined machine type as Google's page gives it."""

    #: ``guestCpus``.
    vcpus: int
    #: Memory in GB as the page prints it (GiB: ``memoryMb`` = GB x 1024).
    memory_gb: float
    #: The GPU it comes with, as Compute Engine names accelerator types, and how many.
    accelerator: str = ""
    accelerator_count: int = 0

    @property
    def memory_mb(self) -> int:
        return round(self.memory_gb * MIB_PER_GIB)


_A100, _A100_80, _H100, _H100_MEGA = (
    "nvidia-tesla-a100",
    "nvidia-a100-80gb",
    "nvidia-h100-80gb",
    "nvidia-h100-mega-80gb",
)
_H200, _B200, _L4, _RTX_PRO_6000 = (
    "nvidia-h200-141gb",
    "nvidia-b200",
    "nvidia-l4",
    "nvidia-rtx-pro-6000",
)
_P = Published

#: ``GENERAL_PURPOSE_URL``: the N1, E2, N2 and N2D predefined machine types.
GENERAL_PURPOSE: Mapping[str, Published] = MappingProxyType(
    {
        # N1 standard (3.75 GB per vCPU), high-memory (6.5), high-CPU (0.9).
        "n1-standard-1": _P(1, 3.75),
        "n1-standard-2": _P(2, 7.5),
        "n1-standard-4": _P(4, 15),
        "n1-standard-8": _P(8, 30),
        "n1-standard-16": _P(16, 60),
        "n1-standard-32": _P(32, 120),
        "n1-standard-64": _P(64, 240),
        "n1-standard-96": _P(96, 360),
        "n1-highmem-2": _P(2, 13),
        "n1-highmem-4": _P(4, 26),
        "n1-highmem-8": _P(8, 52),
        "n1-highmem-16": _P(16, 104),
        "n1-highmem-32": _P(32, 208),
        "n1-highmem-64": _P(64, 416),
        "n1-highmem-96": _P(96, 624),
        "n1-highcpu-2": _P(2, 1.8),
        "n1-highcpu-4": _P(4, 3.6),
        "n1-highcpu-8": _P(8, 7.2),
        "n1-highcpu-16": _P(16, 14.4),
        "n1-highcpu-32": _P(32, 28.8),
        "n1-highcpu-64": _P(64, 57.6),
        "n1-highcpu-96": _P(96, 86.4),
        # E2 standard (4 GB per vCPU), high-memory (8), high-CPU (1).
        "e2-standard-2": _P(2, 8),
        "e2-standard-4": _P(4, 16),
        "e2-standard-8": _P(8, 32),
        "e2-standard-16": _P(16, 64),
        "e2-standard-32": _P(32, 128),
        "e2-highmem-2": _P(2, 16),
        "e2-highmem-4": _P(4, 32),
        "e2-highmem-8": _P(8, 64),
        "e2-highmem-16": _P(16, 128),
        "e2-highcpu-2": _P(2, 2),
        "e2-highcpu-4": _P(4, 4),
        "e2-highcpu-8": _P(8, 8),
        "e2-highcpu-16": _P(16, 16),
        "e2-highcpu-32": _P(32, 32),
        # N2 standard (4 GB per vCPU), high-memory (8; n2-highmem-128 864), high-CPU (1).
        "n2-standard-2": _P(2, 8),
        "n2-standard-4": _P(4, 16),
        "n2-standard-8": _P(8, 32),
        "n2-standard-16": _P(16, 64),
        "n2-standard-32": _P(32, 128),
        "n2-standard-48": _P(48, 192),
        "n2-standard-64": _P(64, 256),
        "n2-standard-80": _P(80, 320),
        "n2-standard-96": _P(96, 384),
        "n2-standard-128": _P(128, 512),
        "n2-highmem-2": _P(2, 16),
        "n2-highmem-4": _P(4, 32),
        "n2-highmem-8": _P(8, 64),
        "n2-highmem-16": _P(16, 128),
        "n2-highmem-32": _P(32, 256),
        "n2-highmem-48": _P(48, 384),
        "n2-highmem-64": _P(64, 512),
        "n2-highmem-80": _P(80, 640),
        "n2-highmem-96": _P(96, 768),
        "n2-highmem-128": _P(128, 864),
        "n2-highcpu-2": _P(2, 2),
        "n2-highcpu-4": _P(4, 4),
        "n2-highcpu-8": _P(8, 8),
        "n2-highcpu-16": _P(16, 16),
        "n2-highcpu-32": _P(32, 32),
        "n2-highcpu-48": _P(48, 48),
        "n2-highcpu-64": _P(64, 64),
        "n2-highcpu-80": _P(80, 80),
        "n2-highcpu-96": _P(96, 96),
        # N2D standard (4 GB per vCPU), high-memory (8), high-CPU (1).
        "n2d-standard-2": _P(2, 8),
        "n2d-standard-4": _P(4, 16),
        "n2d-standard-8": _P(8, 32),
        "n2d-standard-16": _P(16, 64),
        "n2d-standard-32": _P(32, 128),
        "n2d-standard-48": _P(48, 192),
        "n2d-standard-64": _P(64, 256),
        "n2d-standard-80": _P(80, 320),
        "n2d-standard-96": _P(96, 384),
        "n2d-standard-128": _P(128, 512),
        "n2d-standard-224": _P(224, 896),
        "n2d-highmem-2": _P(2, 16),
        "n2d-highmem-4": _P(4, 32),
        "n2d-highmem-8": _P(8, 64),
        "n2d-highmem-16": _P(16, 128),
        "n2d-highmem-32": _P(32, 256),
        "n2d-highmem-48": _P(48, 384),
        "n2d-highmem-64": _P(64, 512),
        "n2d-highmem-80": _P(80, 640),
        "n2d-highmem-96": _P(96, 768),
        "n2d-highcpu-2": _P(2, 2),
        "n2d-highcpu-4": _P(4, 4),
        "n2d-highcpu-8": _P(8, 8),
        "n2d-highcpu-16": _P(16, 16),
        "n2d-highcpu-32": _P(32, 32),
        "n2d-highcpu-48": _P(48, 48),
        "n2d-highcpu-64": _P(64, 64),
        "n2d-highcpu-80": _P(80, 80),
        "n2d-highcpu-96": _P(96, 96),
        "n2d-highcpu-128": _P(128, 128),
        "n2d-highcpu-224": _P(224, 224),
    }
)

#: ``COMPUTE_OPTIMIZED_URL``: the C2 and C2D predefined machine types.
COMPUTE_OPTIMIZED: Mapping[str, Published] = MappingProxyType(
    {
        # C2 standard (4 GB per vCPU).
        "c2-standard-4": _P(4, 16),
        "c2-standard-8": _P(8, 32),
        "c2-standard-16": _P(16, 64),
        "c2-standard-30": _P(30, 120),
        "c2-standard-60": _P(60, 240),
        # C2D standard (4 GB per vCPU), high-memory (8), high-CPU (2).
        "c2d-standard-2": _P(2, 8),
        "c2d-standard-4": _P(4, 16),
        "c2d-standard-8": _P(8, 32),
        "c2d-standard-16": _P(16, 64),
        "c2d-standard-32": _P(32, 128),
        "c2d-standard-56": _P(56, 224),
        "c2d-standard-112": _P(112, 448),
        "c2d-highmem-2": _P(2, 16),
        "c2d-highmem-4": _P(4, 32),
        "c2d-highmem-8": _P(8, 64),
        "c2d-highmem-16": _P(16, 128),
        "c2d-highmem-32": _P(32, 256),
        "c2d-highmem-56": _P(56, 448),
        "c2d-highmem-112": _P(112, 896),
        "c2d-highcpu-2": _P(2, 4),
        "c2d-highcpu-4": _P(4, 8),
        "c2d-highcpu-8": _P(8, 16),
        "c2d-highcpu-16": _P(16, 32),
        "c2d-highcpu-32": _P(32, 64),
        "c2d-highcpu-56": _P(56, 112),
        "c2d-highcpu-112": _P(112, 224),
    }
)

#: ``MEMORY_OPTIMIZED_URL``: the M1 predefined machine types.
MEMORY_OPTIMIZED: Mapping[str, Published] = MappingProxyType(
    {
        "m1-ultramem-40": _P(40, 961),
        "m1-ultramem-80": _P(80, 1922),
        "m1-ultramem-160": _P(160, 3844),
        "m1-megamem-96": _P(96, 1433.6),
    }
)

#: ``ACCELERATOR_OPTIMIZED_URL``: the A2, A3, A4, G2 and G4 machine types with the GPUs each
#: comes with (names from ``GPU_MACHINE_TYPES_URL``).
ACCELERATOR_OPTIMIZED: Mapping[str, Published] = MappingProxyType(
    {
        # A2 Standard (A100 40GB) and A2 Ultra (A100 80GB).
        "a2-highgpu-1g": _P(12, 85, _A100, 1),
        "a2-highgpu-2g": _P(24, 170, _A100, 2),
        "a2-highgpu-4g": _P(48, 340, _A100, 4),
        "a2-highgpu-8g": _P(96, 680, _A100, 8),
        "a2-megagpu-16g": _P(96, 1360, _A100, 16),
        "a2-ultragpu-1g": _P(12, 170, _A100_80, 1),
        "a2-ultragpu-2g": _P(24, 340, _A100_80, 2),
        "a2-ultragpu-4g": _P(48, 680, _A100_80, 4),
        "a2-ultragpu-8g": _P(96, 1360, _A100_80, 8),
        # A3 High and A3 Mega (H100 80GB), A3 Ultra (H200), A4 (B200).
        "a3-highgpu-1g": _P(26, 234, _H100, 1),
        "a3-highgpu-2g": _P(52, 468, _H100, 2),
        "a3-highgpu-4g": _P(104, 936, _H100, 4),
        "a3-highgpu-8g": _P(208, 1872, _H100, 8),
        "a3-megagpu-8g": _P(208, 1872, _H100_MEGA, 8),
        "a3-ultragpu-8g": _P(224, 2952, _H200, 8),
        "a4-highgpu-8g": _P(224, 3968, _B200, 8),
        # G2 (L4) and G4 (RTX PRO 6000).
        "g2-standard-4": _P(4, 16, _L4, 1),
        "g2-standard-8": _P(8, 32, _L4, 1),
        "g2-standard-12": _P(12, 48, _L4, 1),
        "g2-standard-16": _P(16, 64, _L4, 1),
        "g2-standard-24": _P(24, 96, _L4, 2),
        "g2-standard-32": _P(32, 128, _L4, 1),
        "g2-standard-48": _P(48, 192, _L4, 4),
        "g2-standard-96": _P(96, 384, _L4, 8),
        "g4-standard-48": _P(48, 180, _RTX_PRO_6000, 1),
        "g4-standard-96": _P(96, 360, _RTX_PRO_6000, 2),
        "g4-standard-192": _P(192, 720, _RTX_PRO_6000, 4),
        "g4-standard-384": _P(384, 1440, _RTX_PRO_6000, 8),
    }
)

#: Every machine type the fake knows, by name: the four families' tables.
PUBLISHED: Mapping[str, Published] = MappingProxyType(
    {**GENERAL_PURPOSE, **COMPUTE_OPTIMIZED, **MEMORY_OPTIMIZED, **ACCELERATOR_OPTIMIZED}
)
#: Catalogued machine types whose published shape could not be read: known, served nowhere.
UNPUBLISHED: tuple[str, ...] = ("a4x-highgpu-4g",)

#: Every predefined machine type name the fake knows (served or not), each with its
#: published shape.
MACHINE_NAMES: tuple[str, ...] = tuple(PUBLISHED)
#: A machine the catalogue offers that the fake serves in no zone (its shape is known).
LACKING = "a4-highgpu-8g"
#: Machines served in these zones only (the others: every zone).
ONLY_IN: Mapping[str, tuple[str, ...]] = MappingProxyType({"a3-ultragpu-8g": ("us-central1-a",)})
#: Shared-core decoys: (name, guestCpus, memoryMb), never asked for by a refresh
#: (e2-micro: 2 vCPUs sharing a core, 1 GB; e2-small: 2 GB).
SHARED_CORE: tuple[tuple[str, int, int], ...] = (("e2-micro", 2, 1024), ("e2-small", 2, 2048))
#: A machine the fake marks deprecated: name -> ``deprecated.state`` (the fake's choice).
DEPRECATED: Mapping[str, str] = MappingProxyType({"n1-highcpu-96": "DEPRECATED"})


@dataclass(frozen=True)
class FakeMachine:
    """One machine type as the fake serves it (in every zone it is offered in)."""

    name: str
    guest_cpus: int
    memory_mb: int
    accelerators: tuple[tuple[str, int], ...] = ()
    is_shared_cpu: bool = False
    deprecated: str = ""

    @property
    def memory_gib(self) -> float:
        return self.memory_mb / MIB_PER_GIB

    def to_json(self, project: str, zone: str) -> dict[str, Any]:
        """The machine as ``MachineType`` JSON in ``zone``."""
        body: dict[str, Any] = {
            "kind": "compute#machineType",
            "id": str(zlib.crc32(self.name.encode())),
            "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
            "name": self.name,
            "description": f"{self.guest_cpus} vCPUs, {self.memory_gib:g} GB RAM",
            "guestCpus": self.guest_cpus,
            "memoryMb": self.memory_mb,
            "maximumPersistentDisks": 128,
            "maximumPersistentDisksSizeGb": "263168",
            "zone": zone,
            "selfLink": (
                f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}"
                f"/machineTypes/{self.name}"
            ),
            "isSharedCpu": self.is_shared_cpu,
            "architecture": "X86_64",
        }
        if self.accelerators:
            body["accelerators"] = [
                {"guestAcceleratorType": kind, "guestAcceleratorCount": count}
                for kind, count in self.accelerators
            ]
        if self.deprecated:
            body["deprecated"] = {"state": self.deprecated, "replacement": ""}
        return body


def shape_of(name: str) -> FakeMachine:
    """``name`` as the fake serves it: its published vCPUs, memory (MiB) and GPUs
    (``PUBLISHED``). ``KeyError`` for a machine the fake does not know."""
    published = PUBLISHED[name]
    gpus = ((published.accelerator, published.accelerator_count),) if published.accelerator else ()
    return FakeMachine(
        name,
        published.vcpus,
        published.memory_mb,
        gpus,
        deprecated=DEPRECATED.get(name, ""),
    )


def default_machines() -> dict[str, tuple[FakeMachine, tuple[str, ...]]]:
    """name -> (machine, zones serving it): what the fake serves by default."""
    served = {
        name: (shape_of(name), ONLY_IN.get(name, ZONES))
        for name in MACHINE_NAMES
        if name != LACKING
    }
    for name, cpus, memory in SHARED_CORE:
        served[name] = (FakeMachine(name, cpus, memory, is_shared_cpu=True), ZONES)
    return served


class Call(NamedTuple):
    """One request the fake received: its path, query parameters and headers."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]


class _Error(Exception):
    def __init__(self, status: HTTPStatus, message: str, reason: str) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason


#: Google's ``status`` word for each HTTP status the fake answers.
_STATUS_WORDS: Mapping[int, str] = MappingProxyType(
    {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }
)


class FakeCompute(LoopbackServer):
    """A fake MachineTypes API on 127.0.0.1, for the real REST client; a context manager.

    ``max_page_size`` caps a page below ``maxResults``; ``unreachable`` names zones that
    are down; ``api_key`` makes every call without that ``x-goog-api-key`` 401.
    ``fail_next`` injects errors; ``calls`` shows what was asked.
    """

    def __init__(
        self,
        *,
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        unreachable: Sequence[str] = (),
        api_key: str | None = None,
        port: int = 0,
    ) -> None:
        self.machines = default_machines()
        self._max_page_size = max_page_size
        self._unreachable = tuple(unreachable)
        self._api_key = api_key
        self._port = port
        self._lock = threading.Lock()
        self._failures: list[HTTPStatus] = []
        self._calls: list[Call] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.address = ""

    def start(self) -> Self:
        """Start serving; ``address`` is then ``127.0.0.1:PORT``."""
        if self._server is None:
            fake = self

            class Handler(BaseHTTPRequestHandler):
                def do_GET(self) -> None:  # the http.server hook's name
                    fake._answer(self)

                def log_message(self, format: str, *args: Any) -> None:  # quiet
                    return

            server = ThreadingHTTPServer((LOOPBACK_HOST, self._port), Handler)
            server.daemon_threads = True
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, daemon=True)
            self._thread.start()
            self.address = f"{LOOPBACK_HOST}:{server.server_address[1]}"
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def calls(self) -> list[Call]:
        """Every request so far, in order."""
        with self._lock:
            return list(self._calls)

    def fail_next(
        self, times: int = 1, status: HTTPStatus = HTTPStatus.SERVICE_UNAVAILABLE
    ) -> None:
        """Fail the next ``times`` requests with ``status`` (503: transient)."""
        with self._lock:
            self._failures += [status] * times

    # -- the service ---------------------------------------------------------------------

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        url = urllib.parse.urlsplit(request.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            self._calls.append(Call(url.path, query, headers))
            failure = self._failures.pop(0) if self._failures else None
        try:
            if failure is not None:
                raise _Error(failure, f"{failure.phrase} (injected by the fake).", "backendError")
            if self._api_key is not None and headers.get(API_KEY_HEADER) != self._api_key:
                raise _Error(
                    HTTPStatus.UNAUTHORIZED, "API key not valid (fake compute).", "authError"
                )
            if match := AGGREGATED.match(url.path):
                body = self._aggregated(match["project"], query)
            elif match := ZONAL.match(url.path):
                body = self._zonal(match["project"], match["zone"], query)
            else:
                raise _Error(HTTPStatus.NOT_FOUND, f"{url.path} not found", "notFound")
            self._send(request, HTTPStatus.OK, body)
        except _Error as error:
            self._send(
                request,
                error.status,
                {
                    "error": {
                        "code": int(error.status),
                        "message": error.message,
                        "status": _STATUS_WORDS.get(int(error.status), "UNKNOWN"),
                        "errors": [
                            {"message": error.message, "domain": "global", "reason": error.reason}
                        ],
                    }
                },
            )

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, status: HTTPStatus, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json; charset=UTF-8")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _matches(self, query: Mapping[str, str]) -> Any:
        """The ``filter`` as a predicate on a name (the regular-expression form only)."""
        text = query.get("filter", "")
        if not text:
            return lambda name: True
        match = FILTER.match(text)
        if match is None:
            raise _Error(
                HTTPStatus.BAD_REQUEST,
                f"Invalid value for field 'filter': '{text}' (the fake reads `name eq REGEX` only)",
                "invalid",
            )
        try:
            pattern = re.compile(match["pattern"])
        except re.error as exc:
            raise _Error(
                HTTPStatus.BAD_REQUEST, f"Invalid filter regex: {exc}", "invalid"
            ) from None
        keep = match["op"] == "eq"
        return lambda name: (pattern.fullmatch(name) is not None) == keep

    def _page_size(self, query: Mapping[str, str]) -> int:
        try:
            asked = int(query.get("maxResults", API_MAX_RESULTS))
        except ValueError:
            raise _Error(
                HTTPStatus.BAD_REQUEST, "Invalid value for maxResults", "invalid"
            ) from None
        if not 0 <= asked <= API_MAX_RESULTS:
            raise _Error(
                HTTPStatus.BAD_REQUEST,
                f"Invalid value for field 'maxResults': {asked}. Must be in [0, 500].",
                "invalid",
            )
        return min(asked or API_MAX_RESULTS, self._max_page_size)

    def _offset(self, query: Mapping[str, str]) -> int:
        token = query.get("pageToken", "")
        try:
            return int(token.removeprefix("page-")) if token else 0
        except ValueError:
            raise _Error(
                HTTPStatus.BAD_REQUEST, f"Invalid pageToken {token!r}", "invalid"
            ) from None

    def _listed(
        self, zones: Sequence[str], query: Mapping[str, str]
    ) -> list[tuple[str, FakeMachine]]:
        matches = self._matches(query)
        return [
            (zone, machine)
            for zone in sorted(zones)
            for name, (machine, served) in sorted(self.machines.items())
            if zone in served and matches(name)
        ]

    def _aggregated(self, project: str, query: Mapping[str, str]) -> dict[str, Any]:
        down = [z for z in self._unreachable if z in ZONES]
        rows = self._listed([z for z in ZONES if z not in down], query)
        start, size = self._offset(query), self._page_size(query)
        page = rows[start : start + size]
        items: dict[str, Any] = {}
        for zone in ZONES:
            in_zone = [m.to_json(project, zone) for z, m in page if z == zone]
            items[f"zones/{zone}"] = (
                {"machineTypes": in_zone}
                if in_zone
                else {
                    "warning": {
                        "code": "NO_RESULTS_ON_PAGE",
                        "message": "There are no results for scope 'zones/"
                        + zone
                        + "' on this page.",
                        "data": [{"key": "scope", "value": f"zones/{zone}"}],
                    }
                }
            )
        body: dict[str, Any] = {
            "kind": "compute#machineTypeAggregatedList",
            "id": f"projects/{project}/aggregated/machineTypes",
            "items": items,
            "selfLink": f"https://www.googleapis.com/compute/v1/projects/{project}/aggregated/machineTypes",
        }
        if start + size < len(rows):
            body["nextPageToken"] = f"page-{start + size}"
        if down:
            body["unreachables"] = [f"zones/{z}" for z in down]
        return body

    def _zonal(self, project: str, zone: str, query: Mapping[str, str]) -> dict[str, Any]:
        if zone not in ZONES:
            raise _Error(
                HTTPStatus.NOT_FOUND, f"The resource 'zones/{zone}' was not found", "notFound"
            )
        rows = self._listed([zone], query)
        start, size = self._offset(query), self._page_size(query)
        body: dict[str, Any] = {
            "kind": "compute#machineTypeList",
            "id": f"projects/{project}/zones/{zone}/machineTypes",
            "items": [m.to_json(project, zone) for _, m in rows[start : start + size]],
        }
        if start + size < len(rows):
            body["nextPageToken"] = f"page-{start + size}"
        return body


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake MachineTypes API (Google's published shapes) until SIGTERM or SIGINT;
    print the address."""
    parser = argparse.ArgumentParser(
        prog="python -m vertex_training.testing.fake_compute", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--max-page-size", type=int, default=DEFAULT_MAX_PAGE_SIZE)
    parser.add_argument(
        "--unavailable", type=int, default=0, help="fail the first N requests with 503"
    )
    args = parser.parse_args(argv)
    fake = FakeCompute(max_page_size=args.max_page_size, port=args.port)
    fake.fail_next(args.unavailable)
    return serve_until_stopped(fake)


if __name__ == "__main__":
    sys.exit(main())
