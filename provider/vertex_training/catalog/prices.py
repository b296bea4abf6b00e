"""The price snapshot: the SKUs of Google's Cloud Billing Catalog that estimates use.

``prices/snapshot.json`` in the project (``SNAPSHOT_PATH``) is written by ``python -m
provider prices refresh`` (``vertex_training.catalog.refresh``, ``make prices``) and committed by
the team, so a pull request shows when prices changed and a reviewer can check every
figure against the catalog. Nothing here is typed by hand: each SKU is as the catalog
served it (``google/cloud/billing/v1/cloud_catalog.proto``, message ``Sku``), reduced to
what an estimate needs:

- ``sku_id``, ``description``, ``service`` (``services/6F81-5844-456A``), the category's
  ``resource_family``, ``resource_group`` and ``usage_type``, ``regions``
  (``service_regions``), the pricing expression's ``unit`` (``usage_unit``: ``h``,
  ``GiBy.h``, ``GiBy.mo``) and its tiers (``start_usage_amount`` and ``unit_price`` as
  USD, from ``google.type.Money``'s units + nanos), and ``effective_time``.

Beside the SKUs, ``machine_shapes``: vCPUs and memory of every machine type the estimates
price per vCPU and GiB, as Compute Engine's MachineTypes API served them
(``vertex_training.catalog.shapes``: ``guestCpus``, and ``memoryMb`` in MiB, kept as served and
read as GiB by dividing by ``MIB_PER_GIB``), with the zone each was read in, when
(``shapes_read_at``) and from where (``shapes_source``: ``compute.googleapis.com``).

``read_at`` says when the catalog was read; ``Snapshot.stale_warning`` warns when that is
more than ``STALE_AFTER_DAYS`` ago. ``load_snapshot`` refuses a file that does not hold
this shape, with ``PricesError`` naming the file, the entry and the fix; a missing file
is ``None`` from ``load_if_present`` (the estimate then says how to make one).
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertex_training.catalog._google import is_loopback
from vertex_training.errors import PricesError

#: The snapshot's format: bumped when its fields change meaning (2: machine shapes).
SNAPSHOT_FORMAT = 2
#: Where the snapshot lives, relative to the project directory (the one with Pulumi.yaml).
SNAPSHOT_PATH = Path("prices") / "snapshot.json"
#: A snapshot read longer ago than this is warned about.
STALE_AFTER_DAYS = 30
#: How to make or refresh a snapshot, for messages.
REFRESH_HINT = (
    "run `make prices` (vertex-training prices refresh) with Google credentials "
    "(gcloud auth application-default login) and commit prices/snapshot.json"
)
NANOS_PER_UNIT = 1_000_000_000
#: ``memoryMb`` is MiB (n1-standard-1: 3840 = 3.75 x 1024, "3.75 GB RAM"): MiB per GiB.
MIB_PER_GIB = 1024
JSON_INDENT = 1


@dataclass(frozen=True)
class Tier:
    """One tier of a SKU's price: from ``start`` units of usage on, ``usd`` per unit."""

    start: float
    usd: float


@dataclass(frozen=True)
class Sku:
    """One SKU of the catalog, as an estimate uses it."""

    sku_id: str
    description: str
    #: ``services/<id>``: the service that bills it.
    service: str
    resource_family: str
    resource_group: str
    usage_type: str
    #: The regions it applies to (``service_regions``); several for a multi-region SKU.
    regions: tuple[str, ...]
    #: The pricing expression's ``usage_unit`` (``h``, ``GiBy.h``, ``GiBy.mo``).
    unit: str
    unit_description: str
    #: Ascending by ``start``; the first may be free.
    tiers: tuple[Tier, ...]
    effective_time: str

    def tier_for(self, usage: float) -> Tier:
        """The tier that prices ``usage`` units: the last whose start is below it (the
        first tier for no usage)."""
        chosen = self.tiers[0]
        for tier in self.tiers[1:]:
            if tier.start < usage:
                chosen = tier
        return chosen


@dataclass(frozen=True)
class MachineShape:
    """One machine type as Compute Engine's MachineTypes API served it."""

    machine: str
    #: ``guestCpus``: "the number of virtual CPUs that are available to the instance".
    guest_cpus: int
    #: ``memoryMb``: "the amount of physical memory ... defined in MB" (MiB, in fact).
    memory_mb: int
    #: The zone it was read in (``zone``), the first by name among the refreshed regions'.
    zone: str
    #: ``deprecated.state`` (DEPRECATED, OBSOLETE, DELETED), empty when not deprecated.
    deprecated: str = ""
    #: ``isSharedCpu``: a shared-core machine (its guestCpus are a fraction of time).
    is_shared_cpu: bool = False
    #: ``accelerators``: (``guestAcceleratorType``, ``guestAcceleratorCount``) pairs.
    accelerators: tuple[tuple[str, int], ...] = ()

    @property
    def memory_gib(self) -> float:
        """GiB of memory, as the catalog's RAM SKUs price it (per GiB hour)."""
        return self.memory_mb / MIB_PER_GIB


@dataclass(frozen=True)
class Snapshot:
    """The SKUs read from the catalog, when, and from where; the machine shapes beside."""

    read_at: datetime.datetime
    #: The catalog's endpoint (``cloudbilling.googleapis.com`` or a test's fake).
    source: str
    #: The regions refreshed.
    regions: tuple[str, ...]
    skus: tuple[Sku, ...]
    machine_shapes: tuple[MachineShape, ...] = ()
    #: When the machine types were read; None when none were.
    shapes_read_at: datetime.datetime | None = None
    #: The MachineTypes API's endpoint (``compute.googleapis.com`` or a test's fake).
    shapes_source: str = ""

    @property
    def from_fake(self) -> bool:
        """Whether the prices were read from a fake on this machine (invented)."""
        return is_loopback(self.source)

    @property
    def shapes_from_fake(self) -> bool:
        """Whether the machine shapes were read from a fake on this machine."""
        return bool(self.shapes_source) and is_loopback(self.shapes_source)

    def shape_of(self, machine: str) -> MachineShape | None:
        """The shape read for ``machine``, or None when the snapshot has none."""
        return next((s for s in self.machine_shapes if s.machine == machine), None)

    @property
    def shapes_read_date(self) -> datetime.date | None:
        """The day the machine types were read (UTC), None when they were not."""
        if self.shapes_read_at is None:
            return None
        return self.shapes_read_at.astimezone(datetime.UTC).date()

    @property
    def read_date(self) -> datetime.date:
        """The day the catalog was read (UTC)."""
        return self.read_at.astimezone(datetime.UTC).date()

    def stale_warning(self, today: datetime.date | None = None) -> str | None:
        """A warning when the snapshot is older than ``STALE_AFTER_DAYS``, else None."""
        age = ((today or datetime.datetime.now(datetime.UTC).date()) - self.read_date).days
        if age <= STALE_AFTER_DAYS:
            return None
        return (
            f"prices read {self.read_date.isoformat()}, {age} days ago (more than "
            f"{STALE_AFTER_DAYS}): {REFRESH_HINT}"
        )


def usd(units: int, nanos: int) -> float:
    """A ``google.type.Money`` amount (units + nanos) as a float of USD."""
    return units + nanos / NANOS_PER_UNIT


def snapshot_path(project_dir: Path) -> Path:
    """The snapshot of the project in ``project_dir``."""
    return project_dir / SNAPSHOT_PATH


# ------------------------------------------------------------------------- JSON form


def to_json(snapshot: Snapshot) -> dict[str, Any]:
    """The snapshot as the JSON document ``save_snapshot`` writes (SKUs sorted by ID)."""
    return {
        "format": SNAPSHOT_FORMAT,
        "read_at": snapshot.read_at.astimezone(datetime.UTC).isoformat(),
        "source": snapshot.source,
        "regions": sorted(snapshot.regions),
        "skus": [
            {
                "sku_id": sku.sku_id,
                "description": sku.description,
                "service": sku.service,
                "resource_family": sku.resource_family,
                "resource_group": sku.resource_group,
                "usage_type": sku.usage_type,
                "regions": list(sku.regions),
                "unit": sku.unit,
                "unit_description": sku.unit_description,
                "tiers": [{"start": t.start, "usd": t.usd} for t in sku.tiers],
                "effective_time": sku.effective_time,
            }
            for sku in sorted(snapshot.skus, key=lambda s: (s.service, s.sku_id))
        ],
        "machine_shapes": {
            "read_at": (
                snapshot.shapes_read_at.astimezone(datetime.UTC).isoformat()
                if snapshot.shapes_read_at is not None
                else None
            ),
            "source": snapshot.shapes_source,
            "machines": [
                {
                    "machine": shape.machine,
                    "guest_cpus": shape.guest_cpus,
                    "memory_mb": shape.memory_mb,
                    "memory_gib": shape.memory_gib,
                    "zone": shape.zone,
                    "deprecated": shape.deprecated,
                    "is_shared_cpu": shape.is_shared_cpu,
                    "accelerators": [
                        {"type": kind, "count": count} for kind, count in shape.accelerators
                    ],
                }
                for shape in sorted(snapshot.machine_shapes, key=lambda s: s.machine)
            ],
        },
    }


def save_snapshot(snapshot: Snapshot, path: Path) -> None:
    """Write ``snapshot`` to ``path`` (its folder made), one stable, reviewable layout."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(to_json(snapshot), indent=JSON_INDENT, sort_keys=True)
    temporary = path.with_suffix(".json.tmp")
    temporary.write_text(text + "\n", encoding="utf-8")
    temporary.replace(path)


def load_snapshot(path: Path) -> Snapshot:
    """The snapshot in ``path``; ``PricesError`` when it is missing or not a snapshot."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PricesError(f"{path}: no price snapshot: {REFRESH_HINT}") from None
    except (OSError, ValueError) as exc:
        raise PricesError(f"{path}: cannot be read ({exc}): {REFRESH_HINT}") from None
    return from_json(document, str(path))


def load_if_present(path: Path) -> Snapshot | None:
    """The snapshot in ``path``, or None when there is no such file."""
    if not path.exists():
        return None
    return load_snapshot(path)


def from_json(document: Any, source: str = "snapshot") -> Snapshot:
    """Validate a snapshot document; ``PricesError`` names the bad entry."""

    def bad(where: str, what: str) -> PricesError:
        return PricesError(f"{source}: {where} {what}: {REFRESH_HINT}")

    if not isinstance(document, Mapping):
        raise bad("the document", "is not a JSON object")
    if document.get("format") != SNAPSHOT_FORMAT:
        raise bad("format", f"is {document.get('format')!r}, not {SNAPSHOT_FORMAT}")
    try:
        read_at = datetime.datetime.fromisoformat(_text(document, "read_at"))
    except (TypeError, ValueError):
        raise bad("read_at", "is not an ISO 8601 time") from None
    if read_at.tzinfo is None:
        raise bad("read_at", "has no time zone")
    skus_in = document.get("skus")
    if not isinstance(skus_in, list):
        raise bad("skus", "is not a list")
    skus = []
    for index, entry in enumerate(skus_in):
        try:
            skus.append(_sku(entry))
        except (TypeError, ValueError, KeyError) as exc:
            raise bad(f"skus[{index}]", f"is not a SKU ({exc})") from None
    regions = document.get("regions", [])
    if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
        raise bad("regions", "is not a list of region names")
    shapes, shapes_read_at, shapes_source = _shapes_section(document.get("machine_shapes"), bad)
    return Snapshot(
        read_at=read_at,
        source=str(document.get("source", "")),
        regions=tuple(regions),
        skus=tuple(skus),
        machine_shapes=shapes,
        shapes_read_at=shapes_read_at,
        shapes_source=shapes_source,
    )


def _shapes_section(
    section: Any, bad: Callable[[str, str], PricesError]
) -> tuple[tuple[MachineShape, ...], datetime.datetime | None, str]:
    """The ``machine_shapes`` object: its machines, when and where they were read."""
    if not isinstance(section, Mapping) or not isinstance(section.get("machines"), list):
        raise bad("machine_shapes", "is not an object with a list of machines")
    read_at = None
    if section.get("read_at") is not None:
        try:
            read_at = datetime.datetime.fromisoformat(_text(section, "read_at"))
        except (TypeError, ValueError):
            raise bad("machine_shapes.read_at", "is not an ISO 8601 time") from None
        if read_at.tzinfo is None:
            raise bad("machine_shapes.read_at", "has no time zone")
    shapes = []
    for index, entry in enumerate(section["machines"]):
        try:
            shapes.append(_shape(entry))
        except (TypeError, ValueError, KeyError) as exc:
            where = f"machine_shapes.machines[{index}]"
            raise bad(where, f"is not a machine shape ({exc})") from None
    return tuple(shapes), read_at, str(section.get("source", ""))


def _count(entry: Mapping[str, Any], key: str) -> int:
    value = entry[key]
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{key} must be a positive whole number, got {value!r}")
    return value


def _shape(entry: Any) -> MachineShape:
    if not isinstance(entry, Mapping):
        raise TypeError("not an object")
    accelerators = entry.get("accelerators", [])
    if not isinstance(accelerators, list):
        raise TypeError("accelerators must be a list")
    shared = entry.get("is_shared_cpu", False)
    if not isinstance(shared, bool):
        raise TypeError(f"is_shared_cpu must be true or false, got {shared!r}")
    return MachineShape(
        machine=_text(entry, "machine"),
        guest_cpus=_count(entry, "guest_cpus"),
        memory_mb=_count(entry, "memory_mb"),
        zone=_text(entry, "zone"),
        deprecated=str(entry.get("deprecated", "")),
        is_shared_cpu=shared,
        accelerators=tuple((_text(a, "type"), _count(a, "count")) for a in accelerators),
    )


def _text(entry: Mapping[str, Any], key: str) -> str:
    value = entry[key]
    if not isinstance(value, str):
        raise TypeError(f"{key} must be text, got {value!r}")
    return value


def _texts(entry: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = entry[key]
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise TypeError(f"{key} must be a list")
    if not all(isinstance(item, str) for item in value):
        raise TypeError(f"{key} must hold text only")
    return tuple(value)


def _sku(entry: Any) -> Sku:
    if not isinstance(entry, Mapping):
        raise TypeError("not an object")
    tiers = []
    for tier in entry["tiers"]:
        start, price = float(tier["start"]), float(tier["usd"])
        if start < 0 or price < 0:
            raise ValueError(f"a tier has a negative start or price: {tier!r}")
        tiers.append(Tier(start, price))
    if not tiers:
        raise ValueError("no price tier")
    if [t.start for t in tiers] != sorted(t.start for t in tiers):
        raise ValueError("tiers are not in ascending order")
    sku = Sku(
        sku_id=_text(entry, "sku_id"),
        description=_text(entry, "description"),
        service=_text(entry, "service"),
        resource_family=_text(entry, "resource_family"),
        resource_group=_text(entry, "resource_group"),
        usage_type=_text(entry, "usage_type"),
        regions=_texts(entry, "regions"),
        unit=_text(entry, "unit"),
        unit_description=_text(entry, "unit_description"),
        tiers=tuple(tiers),
        effective_time=_text(entry, "effective_time"),
    )
    if not sku.sku_id or not sku.service.startswith("services/") or not sku.unit:
        raise ValueError("sku_id, service (services/ID) and unit must be set")
    return sku
