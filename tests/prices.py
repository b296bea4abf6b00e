"""Price snapshots for tests, from the fake catalog's SKUs (invented prices, never Google's)
and the fake MachineTypes API's shapes (Google's published ones, with their sources in
``vertex_training.testing.fake_compute``).

``fake_snapshot()`` turns ``vertex_training.testing.fake_catalog.default_skus()`` and
``vertex_training.testing.fake_compute``'s machines into a
``vertex_training.catalog.prices.Snapshot``
without a server, for estimate tests that do not exercise the refresh itself
(tests/test_fake_catalog.py and tests/test_fake_compute.py do that through the clients).
``fake_shape(machine)`` is the fake's shape of a machine, so a test computes its expected
figure from the vCPUs and GiB the fake serves, never from figures typed into the test.
``fake_sku(description)`` finds one of those SKUs by its whole description, so a test
computes its expected figure from the SKU the fake serves.
"""

from __future__ import annotations

import datetime

from vertex_training.catalog import billing, prices, shapes
from vertex_training.testing import fake_compute
from vertex_training.testing.fake_catalog import FakeSku, default_skus

#: When the test snapshot says it was read.
READ_AT = datetime.datetime(2026, 11, 20, 9, 30, tzinfo=datetime.UTC)
SOURCE = "127.0.0.1:0 (fake catalog, invented prices)"
SHAPES_SOURCE = "127.0.0.1:0 (fake compute, published shapes)"
#: The zone the test snapshot says each machine was read in.
SHAPES_ZONE = "us-central1-a"


def fake_shape(machine: str) -> prices.MachineShape:
    """The fake MachineTypes API's shape of ``machine``, as the snapshot holds it."""
    fake = fake_compute.shape_of(machine)
    return prices.MachineShape(
        machine=machine,
        guest_cpus=fake.guest_cpus,
        memory_mb=fake.memory_mb,
        zone=SHAPES_ZONE,
        deprecated=fake.deprecated,
        accelerators=fake.accelerators,
    )


def fake_shapes() -> tuple[prices.MachineShape, ...]:
    """Every machine the catalogue prices per vCPU and GiB that the fake serves (all but
    ``LACKING`` and ``UNPUBLISHED``)."""
    served = set(fake_compute.MACHINE_NAMES) - {fake_compute.LACKING}
    return tuple(fake_shape(m) for m in shapes.wanted_machines() if m in served)


def to_sku(fake: FakeSku) -> prices.Sku:
    """A fake SKU as the snapshot holds it."""
    return prices.Sku(
        sku_id=fake.sku_id,
        description=fake.description,
        service=fake.service,
        resource_family=fake.resource_family,
        resource_group=fake.resource_group,
        usage_type=fake.usage_type,
        regions=fake.regions,
        unit=fake.unit,
        unit_description=fake.unit_description,
        tiers=tuple(prices.Tier(start, usd) for start, usd in fake.tiers),
        effective_time="2026-01-01T00:00:00+00:00",
    )


def fake_snapshot(
    skus: list[FakeSku] | None = None, read_at: datetime.datetime = READ_AT
) -> prices.Snapshot:
    """The SKUs an estimate may use among the fake's (``billing.keep``), as a snapshot."""
    kept = billing.keep(to_sku(s) for s in (default_skus() if skus is None else skus))
    regions = tuple(sorted({r for sku in kept for r in sku.regions}))
    return prices.Snapshot(
        read_at=read_at,
        source=SOURCE,
        regions=regions,
        skus=tuple(kept),
        machine_shapes=fake_shapes(),
        shapes_read_at=read_at,
        shapes_source=SHAPES_SOURCE,
    )


def fake_sku(description: str, usage_type: str | None = None) -> FakeSku:
    """The fake's one SKU with this whole description (and usage type, when given)."""
    found = [
        s
        for s in default_skus()
        if s.description == description and usage_type in (None, s.usage_type)
    ]
    assert len(found) == 1, f"{len(found)} fake SKUs are described {description!r}"
    return found[0]


#: The test snapshot, made once.
PRICES = fake_snapshot()
