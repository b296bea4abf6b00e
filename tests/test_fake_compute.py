"""The fake MachineTypes API through the real google-cloud-compute client (REST on
loopback), and a refresh (vertex_training.catalog.refresh) against it and the fake catalog: the
shapes in the snapshot, pages, a transient 503, and estimates from those shapes.

The fake's shapes are Google's published ones (vertex_training.testing.fake_compute.PUBLISHED,
read through shape_of); every expected figure here is computed through shape_of, never typed
into the test, but for the one row TestPublishedShapes checks against Google's page."""

from __future__ import annotations

from collections.abc import Iterator
from http import HTTPStatus
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.prices import fake_sku
from vertex_training.catalog import machines, prices, refresh, shapes
from vertex_training.errors import PricesError
from vertex_training.review.cost import describe, estimate
from vertex_training.stackconfig import StackSettings, parse_job
from vertex_training.testing.fake_catalog import FakeCatalog
from vertex_training.testing.fake_compute import (
    LACKING,
    MACHINE_NAMES,
    PUBLISHED,
    UNPUBLISHED,
    FakeCompute,
    shape_of,
)

EU = StackSettings(stack="prod", project="my-project", region="europe-west4")
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
VERTEX_ON = "Vertex AI: Training/Pipelines on"


@pytest.fixture(scope="module")
def catalog() -> Iterator[FakeCatalog]:
    """The fake catalog (invented prices), 500 SKUs a page."""
    with FakeCatalog() as fake:
        yield fake


@pytest.fixture
def compute() -> Iterator[FakeCompute]:
    """A fake MachineTypes API serving 100 machine types a page."""
    with FakeCompute(max_page_size=100) as fake:
        yield fake


def read(catalog: FakeCatalog, compute: FakeCompute, regions: list[str]) -> prices.Snapshot:
    return refresh.refresh(regions, endpoint=catalog.address, compute_endpoint=compute.address)


def served_wanted() -> set[str]:
    """The catalogue's machines the fake serves: all but LACKING and UNPUBLISHED."""
    return set(shapes.wanted_machines()) - {LACKING, *UNPUBLISHED}


class TestPublishedShapes:
    """shape_of serves Google's published rows, each catalogued machine's GPUs included."""

    def test_memory_is_the_pages_gb_in_mib(self) -> None:
        """n1-standard-4: 4 vCPUs and 15 GB on Google's page, memoryMb 15360 (GB = GiB)."""
        shape = shape_of("n1-standard-4")
        assert (shape.guest_cpus, shape.memory_mb, shape.accelerators) == (4, 15360, ())

    def test_every_catalogued_machine_is_published_or_named_unpublished(self) -> None:
        """No catalogued machine lacks a row unless UNPUBLISHED names it (never served)."""
        wanted = set(shapes.wanted_machines())
        assert wanted - set(MACHINE_NAMES) == set(UNPUBLISHED)
        assert not set(UNPUBLISHED) & set(MACHINE_NAMES)
        with pytest.raises(KeyError):
            shape_of(UNPUBLISHED[0])

    def test_built_in_gpus_are_the_catalogues(self) -> None:
        """Each machine that comes with GPUs serves the catalogue's GPU and count."""
        built_in = {
            name: m.built_in
            for name, m in machines.MACHINE_TYPES.items()
            if m.built_in and name in PUBLISHED
        }
        assert built_in
        for name, (accelerator, count) in built_in.items():
            expected = ((accelerator.lower().replace("_", "-"), count),)
            assert shape_of(name).accelerators == expected, name

    def test_cpu_only_machines_carry_no_accelerators(self) -> None:
        """A machine without a built-in GPU serves no accelerators."""
        plain = [n for n in MACHINE_NAMES if not PUBLISHED[n].accelerator]
        assert "n1-standard-8" in plain
        assert all(shape_of(n).accelerators == () for n in plain)


class TestFakeCompute:
    """The fake answers the real client as the compute v1 reference says."""

    def test_aggregated_list_pages_through_every_zone(self, compute: FakeCompute) -> None:
        """The pager follows nextPageToken; items are keyed zones/<zone>; maxResults is sent."""
        client = shapes.make_client(compute.address)
        pager = client.aggregated_list(
            request={"project": "p", "filter": 'name eq "n1-standard-4"', "max_results": 5}
        )
        zones = {zone for zone, scoped in pager if scoped.machine_types}
        assert zones == {f"zones/{z}" for z in compute.machines["n1-standard-4"][1]}
        paths = {c.path for c in compute.calls}
        assert paths == {"/compute/v1/projects/p/aggregated/machineTypes"}
        assert all(c.query["maxResults"] == "5" for c in compute.calls)
        assert len(compute.calls) > 1 and "pageToken" in compute.calls[-1].query

    def test_an_unsupported_filter_is_a_bad_request(self, compute: FakeCompute) -> None:
        """A filter the fake cannot read is 400, as google.api_core maps it."""
        from google.api_core import exceptions

        client = shapes.make_client(compute.address)
        with pytest.raises(exceptions.BadRequest):
            list(client.aggregated_list(request={"project": "p", "filter": "guestCpus > 4"}))

    def test_the_published_shape_is_the_served_one(self, compute: FakeCompute) -> None:
        """guestCpus, memoryMb (MiB) and accelerators come back as shape_of says."""
        client = shapes.make_client(compute.address)
        pager = client.aggregated_list(
            request={"project": "p", "filter": 'name eq "a2-highgpu-2g"'}
        )
        served = [m for _, scoped in pager for m in scoped.machine_types]
        assert served and {(m.guest_cpus, m.memory_mb) for m in served} == {
            (shape_of("a2-highgpu-2g").guest_cpus, shape_of("a2-highgpu-2g").memory_mb)
        }
        (gpus,) = served[0].accelerators
        assert (gpus.guest_accelerator_type, gpus.guest_accelerator_count) == (
            shape_of("a2-highgpu-2g").accelerators[0]
        )


class TestRefreshShapes:
    """refresh(): the catalogue's machine shapes, read through both fakes, in the snapshot."""

    def test_every_served_machine_is_in_the_snapshot(
        self, catalog: FakeCatalog, compute: FakeCompute
    ) -> None:
        """Every wanted machine but those the fake lacks, with its shape, zone and source."""
        snapshot = read(catalog, compute, ["us-central1", "europe-west4"])
        read_names = {s.machine for s in snapshot.machine_shapes}
        assert read_names == served_wanted()
        n1 = snapshot.shape_of("n1-standard-8")
        assert n1 is not None and n1.zone == "europe-west4-a"
        assert (n1.guest_cpus, n1.memory_mb) == (
            shape_of("n1-standard-8").guest_cpus,
            shape_of("n1-standard-8").memory_mb,
        )
        deprecated = snapshot.shape_of("n1-highcpu-96")
        assert deprecated is not None and deprecated.deprecated == "DEPRECATED"
        assert snapshot.shapes_source == compute.address
        assert snapshot.shapes_read_at is not None
        assert all(" eq " in c.query["filter"] for c in compute.calls)

    def test_pages_are_followed_and_a_503_retried(
        self, catalog: FakeCatalog, compute: FakeCompute
    ) -> None:
        """Two 503s, then every page: the shapes are all there."""
        compute.fail_next(2)
        snapshot = read(catalog, compute, ["us-central1"])
        first_pages = [c for c in compute.calls if "pageToken" not in c.query]
        assert len(first_pages) == 3 and len(compute.calls) > 3
        assert len(snapshot.machine_shapes) == len(served_wanted())

    def test_a_machine_of_other_zones_only_is_left_out(
        self, catalog: FakeCatalog, compute: FakeCompute
    ) -> None:
        """a3-ultragpu-8g is served in us-central1-a only: a europe-west4 refresh lacks it."""
        assert read(catalog, compute, ["europe-west4"]).shape_of("a3-ultragpu-8g") is None
        assert read(catalog, compute, ["us-central1"]).shape_of("a3-ultragpu-8g") is not None

    def test_a_permanent_error_says_what_to_do(
        self, catalog: FakeCatalog, compute: FakeCompute
    ) -> None:
        """403 is not retried: PricesError names the credentials and the permission."""
        compute.fail_next(1, HTTPStatus.FORBIDDEN)
        with pytest.raises(PricesError, match=r"compute\.machineTypes\.list"):
            read(catalog, compute, ["us-central1"])
        assert len(compute.calls) == 1

    def test_an_endpoint_nobody_serves_is_named(self, catalog: FakeCatalog) -> None:
        """A MachineTypes endpoint that refuses the connection: PricesError names it (no
        traceback of the HTTP library)."""
        with FakeCompute() as stopped:
            address = stopped.address
        with pytest.raises(PricesError, match=rf"{address} could not be reached"):
            refresh.refresh(["us-central1"], endpoint=catalog.address, compute_endpoint=address)

    def test_the_command_writes_shapes_and_warns(
        self, catalog: FakeCatalog, compute: FakeCompute, tmp_path: Path
    ) -> None:
        """`prices refresh --compute-endpoint` writes the shapes and says not to commit them."""
        out = tmp_path / "snapshot.json"
        result = run_cli(
            "prices",
            "refresh",
            "--endpoint",
            catalog.address,
            "--compute-endpoint",
            compute.address,
            "--region",
            "europe-west4",
            "--out",
            str(out),
        )
        assert result.returncode == 0, result.stderr
        assert "machine types read" in result.stderr
        assert "machine shapes, not read from Google" in result.stderr
        assert prices.load_snapshot(out).machine_shapes


class TestEstimateFromReadShapes:
    """The estimate prices the shapes the refresh read, and names a machine it lacks."""

    def test_an_estimate_uses_the_read_shape(
        self, catalog: FakeCatalog, compute: FakeCompute
    ) -> None:
        """n1-standard-8 in europe-west4: the fake's vCPUs and GiB x the fake's prices."""
        snapshot = read(catalog, compute, ["europe-west4"])
        job = parse_job("mnist", {"image": IMAGE, "machine": "n1-standard-8"}, EU)
        result = estimate(job, snapshot)
        core = fake_sku(f"{VERTEX_ON} N1 Predefined Instance Core in Netherlands").usd()
        ram = fake_sku(f"{VERTEX_ON} N1 Predefined Instance RAM running in Netherlands").usd()
        ssd = fake_sku(f"{VERTEX_ON} SSD backed PD Capacity in Netherlands").usd()
        shape = shape_of("n1-standard-8")
        expected = shape.guest_cpus * core + shape.memory_mb / 1024 * ram + 100 * ssd / 730
        assert result.hourly_usd == pytest.approx(expected)

    def test_a_machine_the_snapshot_lacks_is_unknown_naming_it(
        self, catalog: FakeCatalog, compute: FakeCompute
    ) -> None:
        """a4-highgpu-8g, which the fake serves nowhere: unknown, the machine and fix named."""
        snapshot = read(catalog, compute, ["europe-west4"])
        job = parse_job("big", {"image": IMAGE, "machine": LACKING}, EU)
        result = estimate(job, snapshot)
        assert result.hourly_usd is None and result.max_usd is None
        (why,) = result.unknown
        assert LACKING in why and "make prices" in why and compute.address in why
        assert "$0" not in describe(result)
