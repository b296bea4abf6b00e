"""vertex_training.review.cost: estimates from a price snapshot, checked against sums done by hand.

The snapshot is the fake catalog's SKUs and the fake MachineTypes API's shapes
(tests/prices.py: invented prices and shapes, never Google's). Each expected figure is
computed here from the SKUs the fake serves, found by their whole description
(``fake_sku``), and the vCPUs and GiB it serves (``fake_shape``: ``guestCpus``, ``memoryMb``
/ 1024), with the rule docs/cost.md states: vCPUs x core price + GiB x
memory price + accelerators x accelerator price + disk GiB x disk price / 730, plus the
management fee under SPOT and FLEX_START.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from tests.prices import PRICES, fake_shape, fake_sku
from vertex_training.__main__ import render
from vertex_training.review.cost import Estimate, describe, estimate, to_json
from vertex_training.stackconfig import JobSpec, StackSettings, parse_job

REPO = Path(__file__).resolve().parent.parent
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
US = StackSettings(stack="dev", project="my-project", region="us-central1")
EU = StackSettings(stack="prod", project="my-project", region="europe-west4")
ASIA = StackSettings(stack="asia", project="my-project", region="asia-east1")
LOCAL = StackSettings(stack="local", backend="local")
MONTH_H = 730
VERTEX_ON = "Vertex AI: Training/Pipelines on"

# The fake's SKUs, by region and wording (its descriptions are deliberately inconsistent).
N1_CORE_EU = fake_sku(f"{VERTEX_ON} N1 Predefined Instance Core in Netherlands").usd()
N1_RAM_EU = fake_sku(f"{VERTEX_ON} N1 Predefined Instance RAM running in Netherlands").usd()
T4_EU = fake_sku(f"{VERTEX_ON} NVIDIA Tesla T4 in Netherlands").usd()
SSD_EU = fake_sku(f"{VERTEX_ON} SSD backed PD Capacity in Netherlands").usd()
N1_CORE_US = fake_sku(f"{VERTEX_ON} N1 Predefined Instance Core in Iowa").usd()
N1_RAM_US = fake_sku(f"{VERTEX_ON} N1 Predefined Instance RAM running in Iowa").usd()
SSD_US = fake_sku(f"{VERTEX_ON} SSD backed PD Capacity in Iowa").usd()
E2_SPOT_CORE = fake_sku("Spot Preemptible E2 Instance Core running in Americas").usd()
E2_SPOT_RAM = fake_sku("Spot Preemptible E2 Instance Ram running in Americas").usd()
FEE = "Vertex AI: Training/Pipelines Management fee on"
E2_FEE_CORE = fake_sku(f"{FEE} E2 Instance Core in Iowa").usd()
E2_FEE_RAM = fake_sku(f"{FEE} E2 Instance RAM in Iowa").usd()
SSD_COMPUTE_US = fake_sku("SSD backed PD Capacity in Iowa").usd()
N1_SPOT_IOWA = fake_sku("Spot Preemptible N1 Predefined Instance Core running in Iowa").usd()
N1_SPOT_AMERICAS = fake_sku(
    "Spot Preemptible N1 Predefined Instance Core running in Americas"
).usd()


def job_of(raw: dict[str, Any], stack: StackSettings = US, name: str = "mnist") -> JobSpec:
    """A job that must be valid."""
    return parse_job(name, {"image": IMAGE, **raw}, stack)


def estimate_of(raw: dict[str, Any], stack: StackSettings = US) -> Estimate:
    """The estimate of ``raw`` from the fake catalog's snapshot."""
    return estimate(job_of(raw, stack), PRICES)


def sku_ids(result: Estimate) -> set[str]:
    return {line.sku_id for line in result.lines}


class TestEstimate:
    """estimate(): each pool's SKUs, summed, times hours and trials."""

    def test_standard_pool_is_vcpus_memory_gpu_and_disk(self) -> None:
        """n1-standard-8 + T4, 200 GiB pd-ssd, europe-west4: the Vertex AI SKUs, by hand."""
        result = estimate_of(
            {
                "machine": "n1-standard-8",
                "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
                "disk": {"type": "pd-ssd", "size_gb": 200},
                "scheduling": {"timeout": "6h"},
            },
            EU,
        )
        shape = fake_shape("n1-standard-8")
        hourly = (
            shape.guest_cpus * N1_CORE_EU
            + shape.memory_mb / 1024 * N1_RAM_EU
            + 1 * T4_EU
            + 200 * SSD_EU / MONTH_H
        )
        assert result.hourly_usd == pytest.approx(hourly)
        assert result.max_usd == pytest.approx(hourly * 6)
        assert result.unknown == ()
        assert len(result.lines) == 4

    def test_spot_is_compute_engine_spot_plus_the_management_fee(self) -> None:
        """e2-standard-4 SPOT: Spot core and RAM (multi-region SKUs), fees, on-demand disk."""
        result = estimate_of(
            {"machine": "e2-standard-4", "scheduling": {"timeout": "30m", "strategy": "SPOT"}}
        )
        shape = fake_shape("e2-standard-4")
        hourly = (
            shape.guest_cpus * (E2_SPOT_CORE + E2_FEE_CORE)
            + shape.memory_mb / 1024 * (E2_SPOT_RAM + E2_FEE_RAM)
            + 100 * SSD_COMPUTE_US / MONTH_H
        )
        assert result.hourly_usd == pytest.approx(hourly)
        assert result.max_usd == pytest.approx(hourly / 2)

    def test_a_reserved_pool_is_compute_engine_on_demand_plus_the_fee(self) -> None:
        """e2-standard-4 on a specific reservation: Compute Engine's on-demand core and RAM
        (what the reservation is billed at), the management fee, on-demand disk; and the
        line says the reservation is billed whether or not the job runs."""
        reservation = "projects/my-project/zones/us-central1-a/reservations/cpus"
        result = estimate_of(
            {
                "machine": "e2-standard-4",
                "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": [reservation]},
                "scheduling": {"timeout": "2h"},
            }
        )
        shape = fake_shape("e2-standard-4")
        core = fake_sku("E2 Instance Core running in Americas").usd()
        ram = fake_sku("E2 Instance Ram running in Americas").usd()
        hourly = (
            shape.guest_cpus * (core + E2_FEE_CORE)
            + shape.memory_mb / 1024 * (ram + E2_FEE_RAM)
            + 100 * SSD_COMPUTE_US / MONTH_H
        )
        assert result.hourly_usd == pytest.approx(hourly)
        assert result.reserved == ("primary",)
        assert "primary on a reservation" in describe(result)
        assert "whether or not the job runs" in describe(result)
        assert to_json(result)["reserved_pools"] == ["primary"]

    def test_any_reservation_is_priced_as_on_demand(self) -> None:
        """ANY_RESERVATION may fall back to on-demand capacity: priced by the strategy."""
        plain = estimate_of({"machine": "e2-standard-4"})
        anywhere = estimate_of(
            {"machine": "e2-standard-4", "reservation_affinity": "ANY_RESERVATION"}
        )
        assert anywhere.hourly_usd == pytest.approx(plain.hourly_usd)
        assert anywhere.reserved == ()

    def test_a_regions_own_sku_wins_over_a_multi_region_one(self) -> None:
        """us-central1's own N1 Spot SKU prices it; us-east1 gets the Americas SKU."""
        raw = {"machine": "n1-standard-4", "scheduling": {"timeout": "1h", "strategy": "SPOT"}}
        east = StackSettings(stack="east", project="my-project", region="us-east1")
        cores = {
            region: next(line for line in estimate_of(raw, stack).lines if line.what == "vCPU")
            for region, stack in (("us-central1", US), ("us-east1", east))
        }
        assert cores["us-central1"].usd_per_unit == pytest.approx(N1_SPOT_IOWA)
        assert cores["us-east1"].usd_per_unit == pytest.approx(N1_SPOT_AMERICAS)
        assert N1_SPOT_IOWA != N1_SPOT_AMERICAS

    def test_a_free_first_tier_prices_only_small_usage_at_nothing(self) -> None:
        """pd-standard is free up to 30 GiB months: 100 GiB for 1 h is, 200 GiB for 7 d is not."""
        free_sku = fake_sku(f"{VERTEX_ON} Storage PD Capacity in Iowa")
        small = estimate_of(
            {"disk": {"type": "pd-standard", "size_gb": 100}, "scheduling": {"timeout": "1h"}}
        )
        large = estimate_of({"disk": {"type": "pd-standard", "size_gb": 200}})
        small_disk, large_disk = (
            next(x for x in r.lines if x.what == "GiB disk") for r in (small, large)
        )
        assert small_disk.usd_per_hour == 0
        assert free_sku.tiers[1][1] > 0
        assert large_disk.usd_per_unit == pytest.approx(free_sku.tiers[1][1])

    def test_a_missing_gpu_sku_makes_the_cost_unknown_naming_it(self) -> None:
        """asia-east1 lacks the Vertex AI L4 SKU: unknown, the SKU and the fix named."""
        result = estimate_of({"machine": "g2-standard-4"}, ASIA)
        assert result.hourly_usd is None and result.max_usd is None
        (why,) = result.unknown
        assert f"'{VERTEX_ON} NVIDIA L4'" in why and "asia-east1" in why
        assert "make prices" in why and "2026-11-20" in why
        assert "$0" not in describe(result)

    def test_no_snapshot_is_unknown_saying_how_to_make_one(self) -> None:
        """Without a snapshot every job is unknown, never $0, and the fix is named."""
        result = estimate(job_of({"machine": "n1-standard-4"}), None)
        assert result.hourly_usd is None and result.max_usd is None
        assert "make prices" in describe(result) and "$0" not in describe(result)

    def test_a_tpu_has_no_spot_rule(self) -> None:
        """A TPU machine under SPOT is unknown: the billing rule has no SKU for it."""
        raw = {"machine": "ct5lp-hightpu-4t", "scheduling": {"strategy": "SPOT"}}
        result = estimate_of(raw)
        assert result.max_usd is None
        assert any("TPU_V5_LITEPOD under SPOT" in why for why in result.unknown)

    def test_a_local_job_costs_nothing_on_google_cloud(self) -> None:
        """backend: local is free on Google Cloud, whatever the snapshot."""
        result = estimate(job_of({"machine": "n1-standard-4"}, LOCAL), None)
        assert (result.local, result.max_usd) == (True, 0.0)
        assert describe(result) == "runs locally: no Google Cloud cost"


class TestProperties:
    """What must hold whatever the prices: scaling with replicas, hours, trials, strategy."""

    RAW: dict[str, Any] = {  # noqa: RUF012 (read only)
        "machine": "n1-standard-8",
        "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
        "workers": {"replicas": 2},
        "scheduling": {"timeout": "4h"},
    }

    def test_twice_the_workers_doubles_that_pool(self) -> None:
        """Doubling the workers' replicas doubles the workers' pool, nothing else."""
        one = estimate_of(self.RAW)
        two = estimate_of({**self.RAW, "workers": {"replicas": 4}})
        pools = {p.role: p.hourly_usd for p in one.pools}
        doubled = {p.role: p.hourly_usd for p in two.pools}
        assert doubled["workers"] == pytest.approx(2 * (pools["workers"] or 0))
        assert doubled["primary"] == pytest.approx(pools["primary"])

    def test_twice_the_timeout_doubles_the_most(self) -> None:
        """The most it can cost is linear in the timeout."""
        four = estimate_of(self.RAW).max_usd
        eight = estimate_of({**self.RAW, "scheduling": {"timeout": "8h"}}).max_usd
        assert four is not None and eight == pytest.approx(2 * four)

    def test_spot_is_below_standard(self) -> None:
        """The same job costs less under SPOT than under STANDARD."""
        standard = estimate_of(self.RAW).hourly_usd
        spot = estimate_of({**self.RAW, "scheduling": {"timeout": "4h", "strategy": "SPOT"}})
        assert standard is not None and spot.hourly_usd is not None
        assert spot.hourly_usd < standard

    def test_retry_counts_every_attempt_at_the_dearest_strategy(self) -> None:
        """A SPOT job retried under STANDARD: attempts x the STANDARD rate, the dearer."""
        spot = {**self.RAW, "scheduling": {"timeout": "4h", "strategy": "SPOT"}}
        standard = estimate_of(self.RAW)
        retried = estimate_of(
            {**spot, "retry": {"when": ["preemption"], "attempts": 3, "strategies": ["STANDARD"]}}
        )
        assert standard.max_usd is not None and retried.max_usd is not None
        assert retried.hourly_usd == pytest.approx(standard.hourly_usd)
        assert retried.max_usd == pytest.approx(3 * standard.max_usd)
        assert retried.attempts == 3 and retried.priced_as == "us-central1 STANDARD"
        assert "x 3 attempts, each priced as us-central1 STANDARD" in describe(retried)

    def test_retry_in_an_unpriced_region_is_unknown(self) -> None:
        """An attempt's region the snapshot does not price makes the worst case unknown."""
        retried = estimate_of(
            {**self.RAW, "retry": {"when": ["capacity"], "regions": ["europe-west2"]}}
        )
        assert estimate_of(self.RAW).max_usd is not None
        assert retried.max_usd is None and any("europe-west2" in w for w in retried.unknown)

    def test_a_tuning_job_is_trials_times_a_trial(self) -> None:
        """max_trials trials each up to the timeout; parallel trials shown as a peak rate."""
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.01, "max": 0.1}},
            "max_trials": 6,
            "parallel_trials": 3,
        }
        single = estimate_of({"machine": "n1-standard-4", "scheduling": {"timeout": "2h"}})
        tuned = estimate_of(
            {"machine": "n1-standard-4", "scheduling": {"timeout": "2h"}, "study": study}
        )
        assert single.max_usd is not None and single.hourly_usd is not None
        assert tuned.max_usd == pytest.approx(6 * single.max_usd)
        assert tuned.peak_usd_per_hour == pytest.approx(3 * single.hourly_usd)
        assert "x 6 trials" in describe(tuned) and "with 3 at once" in describe(tuned)

    def test_the_default_timeout_is_seven_days(self) -> None:
        """No timeout: Vertex AI's 7 days, said so."""
        result = estimate_of({"machine": "n1-standard-4"})
        assert result.hours == 168 and result.timeout_is_default
        assert "7d default timeout" in describe(result)


class TestBreakdown:
    """Each line: quantity x unit price, SKU ID, summing to the rate."""

    def test_lines_sum_to_the_rate_and_name_their_skus(self) -> None:
        """The JSON breakdown's usd_per_hour add up to usd_per_hour; every SKU is named."""
        result = estimate_of({"machine": "n1-standard-4", "scheduling": {"timeout": "1h"}})
        document = to_json(result)
        assert set(document) >= {"usd_per_hour", "max_usd", "prices_read", "breakdown"}
        assert document["prices_read"] == "2026-11-20"
        total = sum(line["usd_per_hour"] for line in document["breakdown"])
        assert total == pytest.approx(document["usd_per_hour"])
        by_what = {line["what"]: line for line in document["breakdown"]}
        assert by_what["vCPU"]["quantity"] == 4
        assert by_what["vCPU"]["usd_per_unit"] == pytest.approx(N1_CORE_US)
        assert by_what["GiB"]["usd_per_unit"] == pytest.approx(N1_RAM_US)
        assert by_what["GiB disk"]["usd_per_unit"] == pytest.approx(SSD_US)
        assert all(line["sku_id"] in sku_ids(result) for line in document["breakdown"])


class TestRender:
    """render: estimated_cost per job in the JSON, a line per job on stderr."""

    def test_estimated_cost_in_the_json(self, tmp_path: Path) -> None:
        """With a snapshot, each job carries its rate, most, read date and breakdown."""
        from vertex_training.catalog.prices import save_snapshot

        snapshot = tmp_path / "snapshot.json"
        save_snapshot(PRICES, snapshot)
        estimates: list[str] = []
        rendered = render(str(REPO / "stacks" / "Pulumi.dev.yaml"), [], estimates, snapshot)
        for name, body in rendered.items():
            cost = body["estimated_cost"]
            assert cost["usd_per_hour"] > 0 and cost["max_usd"] > 0, name
            assert cost["prices_read"] == "2026-11-20" and cost["breakdown"], name
        assert estimates[-1].startswith("prices read 2026-11-20")

    def test_no_snapshot_says_how_to_make_one(self, tmp_path: Path) -> None:
        """Without a snapshot the command says `make prices` for each job, never $0."""
        estimates: list[str] = []
        rendered = render(
            str(REPO / "stacks" / "Pulumi.prod.yaml"), [], estimates, tmp_path / "none.json"
        )
        assert all(body["estimated_cost"]["usd_per_hour"] is None for body in rendered.values())
        assert all("make prices" in line and "$0" not in line for line in estimates)

    def test_the_command_prints_json_and_estimates(self) -> None:
        """`vertex-training render` keeps stdout JSON, with estimated_cost in it."""
        result = run_cli("render", "stacks/Pulumi.dev.yaml")
        assert result.returncode == 0, result.stderr
        document = json.loads(result.stdout)
        assert all("estimated_cost" in body for body in document.values())
        assert "estimate: example:" in result.stderr


class TestPlanCost:
    """plan: the read date, a rate and most per job, and the folded SKU lines."""

    def test_markdown_shows_prices_read_and_the_breakdown(self, tmp_path: Path) -> None:
        """With a snapshot: "prices read", $ per job, and one line per SKU in <details>."""
        from vertex_training.catalog.prices import save_snapshot
        from vertex_training.review.plan import plan_stack, to_markdown

        snapshot = tmp_path / "snapshot.json"
        save_snapshot(PRICES, snapshot)
        plan = plan_stack(REPO / "stacks" / "Pulumi.prod.yaml", "HEAD", prices_file=snapshot)
        text = to_markdown(plan)
        assert "prices read 2026-11-20" in text
        assert "<summary>Cost breakdown: one line per SKU</summary>" in text
        for job in plan.jobs:
            assert job.estimate is not None and job.estimate.max_usd is not None, job.name
            assert f"at most ${job.estimate.max_usd:,.2f}" in text
            for line in job.estimate.lines:
                assert f"SKU {line.sku_id}" in text

    def test_no_snapshot_says_how_to_get_prices(self, tmp_path: Path) -> None:
        """Without a snapshot the plan says `make prices` and shows no $0."""
        from vertex_training.review.plan import plan_stack, to_markdown

        plan = plan_stack(
            REPO / "stacks" / "Pulumi.dev.yaml", "HEAD", prices_file=tmp_path / "none.json"
        )
        text = to_markdown(plan)
        assert "make prices" in text and "$0" not in text
