"""The price snapshot (vertex_training.catalog.prices), the machine shapes it keeps (shapes) and
the billing rule (billing): what they hold, refuse and select."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path

import pytest

from tests.prices import PRICES, READ_AT
from vertex_training.catalog import billing, machines, prices, shapes
from vertex_training.errors import PricesError

REPO = Path(__file__).resolve().parent.parent


class TestSnapshot:
    """Saved, loaded, validated and dated."""

    def test_round_trip(self, tmp_path: Path) -> None:
        """What is saved loads back the same, SKUs sorted by service and ID."""
        path = tmp_path / "prices" / "snapshot.json"
        prices.save_snapshot(PRICES, path)
        loaded = prices.load_snapshot(path)
        assert loaded.read_at == READ_AT and set(loaded.skus) == set(PRICES.skus)
        ids = [(s.service, s.sku_id) for s in loaded.skus]
        assert ids == sorted(ids)

    def test_a_missing_file_says_how_to_make_one(self, tmp_path: Path) -> None:
        """No file: None from load_if_present, and load_snapshot names `make prices`."""
        assert prices.load_if_present(tmp_path / "none.json") is None
        with pytest.raises(PricesError, match="make prices"):
            prices.load_snapshot(tmp_path / "none.json")

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            (lambda d: d.update(format=99), "format"),
            (lambda d: d.update(read_at="yesterday"), "read_at"),
            (lambda d: d["skus"][0]["tiers"][0].update(usd=-1), "negative"),
            (
                lambda d: d["skus"][0].update(
                    tiers=[{"start": 5, "usd": 1}, {"start": 0, "usd": 0}]
                ),
                "ascending",
            ),
            (lambda d: d["skus"][0].pop("unit"), "skus\\[0\\]"),
        ],
    )
    def test_a_bad_document_is_refused(self, tmp_path: Path, change: object, message: str) -> None:
        """Each kind of damage is a PricesError naming the entry."""
        document = prices.to_json(PRICES)
        change(document)  # type: ignore[operator]
        path = tmp_path / "snapshot.json"
        path.write_text(json.dumps(document))
        with pytest.raises(PricesError, match=message):
            prices.load_snapshot(path)

    def test_stale_after_30_days(self) -> None:
        """Read 30 days ago: no warning; 31 days: a warning naming the date and the fix."""
        read = READ_AT.date()
        assert PRICES.stale_warning(read + datetime.timedelta(days=30)) is None
        warning = PRICES.stale_warning(read + datetime.timedelta(days=31))
        assert warning is not None and read.isoformat() in warning and "make prices" in warning

    def test_tier_for_usage(self) -> None:
        """The tier covering the usage: the free first one for little, the next for more."""
        sku = next(s for s in PRICES.skus if len(s.tiers) > 1)
        start = sku.tiers[1].start
        assert sku.tier_for(start / 2) == sku.tiers[0]
        assert sku.tier_for(start * 2) == sku.tiers[1]

    def test_a_committed_snapshot_is_googles(self) -> None:
        """A snapshot committed to the repository was read from Google, not a fake."""
        listed = subprocess.run(
            ["git", "ls-files", str(prices.SNAPSHOT_PATH)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        if not listed:
            pytest.skip("no snapshot is committed: `make prices` with credentials makes one")
        snapshot = prices.load_snapshot(REPO / prices.SNAPSHOT_PATH)
        assert snapshot.source == "cloudbilling.googleapis.com"
        assert snapshot.shapes_source == "compute.googleapis.com"


class TestShapes:
    """Machine shapes: what a refresh asks Compute Engine for, and how the snapshot keeps it."""

    def test_every_machine_but_tpus_is_asked_for(self) -> None:
        """The machines billed per vCPU and GiB are asked for; TPU machines (chips) are not."""
        wanted = set(shapes.wanted_machines())
        tpus = {name for name, m in machines.MACHINE_TYPES.items() if m.tpu}
        assert wanted == set(machines.MACHINE_TYPES) - tpus
        assert "cloud-tpu" not in wanted and all(billing.billed_by_chips(t) for t in tpus)

    def test_the_filter_matches_whole_names_only(self) -> None:
        """``name eq "a|b"``: an RE2 alternation that must match the entire name."""
        text = shapes.name_filter(["n1-standard-4", "e2-standard-8"])
        assert text == 'name eq "e2-standard-8|n1-standard-4"'
        with pytest.raises(ValueError, match="machine type name"):
            shapes.name_filter(["n1-.*"])

    def test_memory_mb_is_read_as_mib(self) -> None:
        """memoryMb 3840 is 3.75 GiB (the recorded n1-standard-1 answer: "3.75 GB RAM")."""
        shape = prices.MachineShape("n1-standard-1", 1, 3840, "us-central1-a")
        assert shape.memory_gib == 3.75

    def test_shapes_round_trip_with_their_source_and_time(self, tmp_path: Path) -> None:
        """The snapshot keeps every shape, when and where it was read."""
        path = tmp_path / "snapshot.json"
        prices.save_snapshot(PRICES, path)
        loaded = prices.load_snapshot(path)
        assert set(loaded.machine_shapes) == set(PRICES.machine_shapes)
        assert loaded.shapes_read_at == PRICES.shapes_read_at
        assert loaded.shapes_source == PRICES.shapes_source
        document = json.loads(path.read_text())
        entry = document["machine_shapes"]["machines"][0]
        assert entry["memory_gib"] == entry["memory_mb"] / 1024

    def test_a_bad_shape_is_refused(self, tmp_path: Path) -> None:
        """A shape with no vCPUs is a PricesError naming the entry and `make prices`."""
        document = prices.to_json(PRICES)
        document["machine_shapes"]["machines"][0]["guest_cpus"] = 0
        path = tmp_path / "snapshot.json"
        path.write_text(json.dumps(document))
        with pytest.raises(PricesError, match=r"machine_shapes\.machines\[0\].*make prices"):
            prices.load_snapshot(path)


class TestBilling:
    """The rule: SKUs selected by service, usage type, group, region and resource."""

    def test_the_place_clause_is_cut_whatever_its_wording(self) -> None:
        """'running in', 'in', RAM/Ram and case make no difference; the place is never kept."""
        phrase = billing.resource_phrase
        assert phrase("Vertex AI: Training/Pipelines on A3 Instance RAM in Iowa") == phrase(
            "Vertex AI: Training/Pipelines on A3 Instance Ram running in Americas"
        )

    def test_a_spot_description_never_passes_for_an_on_demand_one(self) -> None:
        """The Spot SKU contains the on-demand description but is a different resource."""
        on_demand = billing.resource_phrase("N1 Predefined Instance Core running in Americas")
        spot = billing.resource_phrase(
            "Spot Preemptible N1 Predefined Instance Core running in Americas"
        )
        assert on_demand in spot and on_demand != spot

    def test_a_multi_host_tpu_slice_is_billed_for_every_chip_and_host(self) -> None:
        """4x4 on ct5lp-hightpu-4t (4 chips a host): 16 chips and 4 hosts' disks, where 2x2
        is one host's 4 chips and one disk."""

        def billed(topology: str | None) -> dict[str, float]:
            components, missing = billing.replica_components(
                "ct5lp-hightpu-4t",
                None,
                0,
                shape=None,
                disk_type="pd-ssd",
                disk_gib=100,
                strategy="STANDARD",
                tpu_topology=topology,
            )
            assert missing == []
            return {c.what: c.quantity for c in components}

        assert billed("2x2") == billed(None) == {"TPU_V5_LITEPOD": 4, "GiB disk": 100}
        assert billed("4x4") == {"TPU_V5_LITEPOD": 16, "GiB disk": 400}
        assert machines.topology_chips("2x2x1") == 4 and machines.topology_chips("4xa") == 0

    def test_standard_uses_vertex_skus_and_spot_compute_plus_fee(self) -> None:
        """STANDARD: Vertex AI on-demand only; SPOT: Compute Engine Preemptible + Vertex fees."""
        standard, _ = billing.replica_components(
            "n1-standard-4",
            None,
            0,
            shape=(4, 16),
            disk_type="pd-ssd",
            disk_gib=100,
            strategy="STANDARD",
        )
        spot, _ = billing.replica_components(
            "n1-standard-4",
            None,
            0,
            shape=(4, 16),
            disk_type="pd-ssd",
            disk_gib=100,
            strategy="SPOT",
        )
        assert {(c.want.service, c.want.usage_type, c.want.fee) for c in standard} == {
            (billing.VERTEX_SERVICE, "OnDemand", False)
        }
        assert {(c.want.service, c.want.fee) for c in spot if c.want.kind != "disk"} == {
            (billing.COMPUTE_SERVICE, False),
            (billing.VERTEX_SERVICE, True),
        }
