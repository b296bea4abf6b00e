"""The fake Cloud Catalog through the real google-cloud-billing client, and a refresh
(vertex_training.catalog.refresh) against it through every trap the fake serves."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from google.cloud.billing_v1.types import cloud_catalog as cc

from tests.cli import run_cli
from vertex_training.catalog import billing, refresh
from vertex_training.errors import PricesError
from vertex_training.testing.fake_catalog import COMPUTE, VERTEX, FakeCatalog
from vertex_training.testing.fake_compute import FakeCompute

REGIONS = ["us-central1", "europe-west4", "asia-east1"]


@pytest.fixture
def fake() -> Iterator[FakeCatalog]:
    """A fake catalog serving 50 SKUs a page."""
    with FakeCatalog(max_page_size=50) as catalog:
        yield catalog


@pytest.fixture(scope="module")
def compute() -> Iterator[FakeCompute]:
    """The fake MachineTypes API a refresh reads shapes from (Google's published ones)."""
    with FakeCompute() as machine_types:
        yield machine_types


class TestFakeCatalog:
    """The fake answers the real client as cloud_catalog.proto says."""

    def test_list_skus_pages_through_everything(self, fake: FakeCatalog) -> None:
        """Iterating the pager reads every SKU, 50 a page, each page asked with a token."""
        client = refresh.make_client(fake.address)
        skus = list(client.list_skus(parent=VERTEX))
        assert len(skus) == fake.sku_count(VERTEX) > 50
        tokens = [c.page_token for c in fake.calls if c.method == "ListSkus"]
        assert tokens[0] == "" and all(tokens[1:])
        assert len(tokens) == -(-fake.sku_count(VERTEX) // 50)

    def test_services_are_listed_by_id(self, fake: FakeCatalog) -> None:
        """ListServices names both services; the display name is not what identifies them."""
        client = refresh.make_client(fake.address)
        names = {s.name for s in client.list_services(request=cc.ListServicesRequest())}
        assert {VERTEX, COMPUTE} <= names

    def test_an_unknown_service_is_not_found(self, fake: FakeCatalog) -> None:
        """A parent the catalog does not have is NOT_FOUND."""
        from google.api_core import exceptions

        client = refresh.make_client(fake.address)
        with pytest.raises(exceptions.NotFound):
            list(client.list_skus(parent="services/0000-0000-0000"))


class TestRefresh:
    """refresh(): both services, every page, only the SKUs estimates use."""

    def test_keeps_only_what_estimates_use(self, fake: FakeCatalog, compute: FakeCompute) -> None:
        """Decoys (committed use, reserved) are dropped; Compute Engine's on-demand cores are
        kept, as they price a pool on a reservation (billing.RESERVED)."""
        snapshot = refresh.refresh(REGIONS, endpoint=fake.address, compute_endpoint=compute.address)
        kept = {
            (s.service, s.usage_type, billing.resource_phrase(s.description)) for s in snapshot.skus
        }
        assert kept <= billing.wanted_keys()
        usage = {s.usage_type for s in snapshot.skus}
        assert usage == {"OnDemand", "Preemptible"}
        assert any(
            s.service == COMPUTE
            and s.resource_group == "CPU"
            and s.usage_type == "OnDemand"
            and s.description.startswith("E2 Instance Core")
            for s in snapshot.skus
        )
        assert not any(s.description.startswith(("Commitment", "Reserved")) for s in snapshot.skus)
        assert snapshot.source == fake.address and set(snapshot.regions) == set(REGIONS)

    def test_regions_not_asked_for_are_dropped(
        self, fake: FakeCatalog, compute: FakeCompute
    ) -> None:
        """A SKU covering none of the regions asked for is not kept; a multi-region one is."""
        snapshot = refresh.refresh(
            ["europe-west4"], endpoint=fake.address, compute_endpoint=compute.address
        )
        assert all("europe-west4" in s.regions for s in snapshot.skus)

    def test_a_free_first_tier_is_kept_whole(self, fake: FakeCatalog, compute: FakeCompute) -> None:
        """Every tier is kept, the free first one included, ascending."""
        snapshot = refresh.refresh(
            ["us-central1"], endpoint=fake.address, compute_endpoint=compute.address
        )
        tiered = [s for s in snapshot.skus if len(s.tiers) > 1]
        assert tiered and all(s.tiers[0].usd == 0 < s.tiers[1].usd for s in tiered)

    def test_transient_errors_are_retried(self, fake: FakeCatalog, compute: FakeCompute) -> None:
        """Two UNAVAILABLE answers, then the refresh succeeds."""
        fake.fail_next(2)
        snapshot = refresh.refresh(
            ["us-central1"], endpoint=fake.address, compute_endpoint=compute.address
        )
        assert snapshot.skus
        assert len([c for c in fake.calls if c.method == "ListSkus" and c.page_token == ""]) >= 3

    def test_a_permanent_error_says_what_to_do(
        self, fake: FakeCatalog, compute: FakeCompute
    ) -> None:
        """PERMISSION_DENIED is not retried: PricesError names the credentials fix."""
        fake.fail_next(1, grpc.StatusCode.PERMISSION_DENIED)
        with pytest.raises(PricesError, match="application-default login"):
            refresh.refresh(
                ["us-central1"], endpoint=fake.address, compute_endpoint=compute.address
            )
        assert len(fake.calls) == 1

    def test_an_api_key_is_sent_on_every_page(self, compute: FakeCompute) -> None:
        """With an API key, every page carries x-goog-api-key; without, UNAUTHENTICATED."""
        with FakeCatalog(max_page_size=100, api_key="k-123") as catalog:
            refresh.refresh(
                ["us-central1"],
                endpoint=catalog.address,
                compute_endpoint=compute.address,
                api_key="k-123",
            )
            assert all(c.metadata.get("x-goog-api-key") == "k-123" for c in catalog.calls)
            with pytest.raises(PricesError, match="application-default login"):
                refresh.refresh(
                    ["us-central1"], endpoint=catalog.address, compute_endpoint=compute.address
                )

    def test_progress_is_told_after_every_page(
        self, fake: FakeCatalog, compute: FakeCompute
    ) -> None:
        """One progress call a catalog page (and one a machine types page), counts growing."""
        seen: list[tuple[str, int, int]] = []
        refresh.refresh(
            ["us-central1"],
            endpoint=fake.address,
            compute_endpoint=compute.address,
            progress=lambda *a: seen.append(a),
        )
        pages = [c for c in fake.calls if c.method == "ListSkus"]
        assert len([s for s in seen if s[0] in (VERTEX, COMPUTE)]) == len(pages)
        assert [n for s, n, _ in seen if s == VERTEX] == sorted(
            n for s, n, _ in seen if s == VERTEX
        )

    def test_an_unknown_region_is_refused(self, fake: FakeCatalog, compute: FakeCompute) -> None:
        """A region Vertex AI does not train in is a PricesError before any call."""
        with pytest.raises(PricesError, match="mars-north1"):
            refresh.refresh(
                ["mars-north1"], endpoint=fake.address, compute_endpoint=compute.address
            )
        assert fake.calls == []

    def test_without_the_package_the_error_gives_the_pip_command(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """google-cloud-billing missing: the message is the pip command that installs it."""
        import google.cloud

        monkeypatch.setitem(sys.modules, "google.cloud.billing_v1", None)
        monkeypatch.delattr(google.cloud, "billing_v1", raising=False)
        with pytest.raises(
            PricesError, match=re.escape("pip install google-cloud-billing==1.21.0")
        ):
            refresh.make_client("127.0.0.1:1")

    def test_the_command_writes_the_snapshot(
        self, fake: FakeCatalog, compute: FakeCompute, tmp_path: Path
    ) -> None:
        """`vertex-training prices refresh --endpoint --out` writes a loadable snapshot
        and warns that a loopback snapshot is not for committing."""
        from vertex_training.catalog.prices import load_snapshot

        out = tmp_path / "snapshot.json"
        result = run_cli(
            "prices",
            "refresh",
            "--endpoint",
            fake.address,
            "--compute-endpoint",
            compute.address,
            "--region",
            "us-central1",
            "--out",
            str(out),
        )
        assert result.returncode == 0, result.stderr
        assert "SKUs read" in result.stderr and "do not commit" in result.stderr
        assert load_snapshot(out).skus
