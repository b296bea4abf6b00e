"""provider.review.cost and its price table: figures checked against sums done by hand.

The estimates below use ``TEST_PRICES``, a table written here for the arithmetic (its
numbers are made up, never shown to users), except where a test says it uses the real
table of ``provider.review.prices``.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

import pytest

from provider.__main__ import render
from provider.review import prices
from provider.review.cost import Estimate, describe, estimate
from provider.review.prices import Price, PriceTable, Source
from provider.stackconfig import JobSpec, StackSettings, parse_job
from tests.cli import run_cli

REPO = Path(__file__).resolve().parent.parent
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
EU_STACK = StackSettings(stack="prod", project="my-project", region="europe-west4")
LOCAL_STACK = StackSettings(stack="local", backend="local")
SMALL_STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"lr": {"type": "double", "min": 0.01, "max": 0.1}},
    "max_trials": 5,
}

TEST_SOURCE = Source(url="https://example.test/prices", read="2026-11-23", how="made up")
# Prices made up for the arithmetic: USD per node hour.
N1_STANDARD_8 = 0.40
N1_STANDARD_8_SPOT = 0.10
T4 = 0.35
T4_SPOT = 0.14
N1_HIGHCPU_16 = 0.60
E2_STANDARD_4 = 0.15  # the same price STANDARD and SPOT: one row for both
TEST_PRICES = PriceTable(
    rows=(
        Price("n1-standard-8", "machine", "us-central1", N1_STANDARD_8, ("STANDARD",), TEST_SOURCE),
        Price(
            "n1-standard-8", "machine", "us-central1", N1_STANDARD_8_SPOT, ("SPOT",), TEST_SOURCE
        ),
        Price("NVIDIA_TESLA_T4", "accelerator", "us-central1", T4, ("STANDARD",), TEST_SOURCE),
        Price("NVIDIA_TESLA_T4", "accelerator", "us-central1", T4_SPOT, ("SPOT",), TEST_SOURCE),
        Price("n1-highcpu-16", "machine", "us-central1", N1_HIGHCPU_16, ("STANDARD",), TEST_SOURCE),
        Price(
            "e2-standard-4",
            "machine",
            "us-central1",
            E2_STANDARD_4,
            ("STANDARD", "SPOT"),
            TEST_SOURCE,
        ),
        Price(
            "n1-standard-8", "machine", "europe-west4", N1_STANDARD_8, ("STANDARD",), TEST_SOURCE
        ),
    )
)


def job_of(raw: dict[str, Any], stack: StackSettings = STACK, name: str = "mnist") -> JobSpec:
    """A job that must be valid."""
    return parse_job(name, {"image": IMAGE, **raw}, stack)


def estimate_of(raw: dict[str, Any], stack: StackSettings = STACK) -> Estimate:
    """The estimate of ``raw`` with TEST_PRICES."""
    return estimate(job_of(raw, stack), prices=TEST_PRICES)


GPU_JOB: dict[str, Any] = {
    "machine": "n1-standard-8",
    "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 2},
    "workers": {"replicas": 1},
}


class TestPriceTable:
    """The price table: every row priced, sourced and dated; lookups by key."""

    def test_rows_have_source_and_date(self) -> None:
        """Each row names a Google page, the day it was read, and how it was read."""
        assert prices.PRICES, "the table is empty"
        for row in prices.PRICES:
            assert row.source.url.startswith("https://cloud.google.com/"), row
            assert datetime.date.fromisoformat(row.source.read) <= datetime.date(2026, 11, 23)
            assert row.source.how
            assert row.usd_per_hour > 0, row
            assert set(row.strategies) <= set(prices.STRATEGIES), row

    def test_known_row(self) -> None:
        """n1-standard-4 in us-central1, on demand, is the Vertex AI page's figure."""
        row = prices.TABLE.lookup("machine", "n1-standard-4", "us-central1", "STANDARD")
        assert row is not None
        assert row.usd_per_hour == 0.21849885
        assert row.source.url == "https://cloud.google.com/vertex-ai/pricing"

    def test_missing_row_is_none(self) -> None:
        """A region, item or strategy the table lacks is None, not a price."""
        assert prices.TABLE.lookup("machine", "n1-standard-4", "me-west1", "STANDARD") is None
        assert prices.TABLE.lookup("machine", "n1-standard-4", "us-central1", "SPOT") is None
        assert (
            prices.TABLE.lookup("accelerator", "n1-standard-4", "us-central1", "STANDARD") is None
        )

    def test_duplicate_row_is_refused(self) -> None:
        """The same key twice is a mistake in the table."""
        row = Price("x-1", "machine", "r", 1.0, ("STANDARD",), TEST_SOURCE)
        with pytest.raises(ValueError, match="twice"):
            PriceTable(rows=(row, row))

    def test_unknown_strategy_is_refused(self) -> None:
        """A strategy that is not STANDARD, SPOT or FLEX_START is refused."""
        with pytest.raises(ValueError, match="ON_DEMAND"):
            PriceTable(rows=(Price("x-1", "machine", "r", 1.0, ("ON_DEMAND",), TEST_SOURCE),))


class TestEstimate:
    """estimate(): replicas x (machine + accelerators), summed, times hours and trials."""

    def test_gpu_pools_with_timeout(self) -> None:
        """2 x (n1-standard-8 + 2 x T4) for a 3 h timeout."""
        result = estimate_of({**GPU_JOB, "scheduling": {"timeout": "3h"}})
        hourly = 2 * (N1_STANDARD_8 + 2 * T4)  # 2.20
        assert result.hourly_usd == pytest.approx(hourly)
        assert result.hours == 3
        assert not result.timeout_is_default
        assert result.trials == 1
        assert result.max_usd == pytest.approx(hourly * 3)  # 6.60
        assert result.strategy == "STANDARD"
        assert result.unknown == ()
        assert [(p.role, p.replicas, p.accelerator, p.accelerator_count) for p in result.pools] == [
            ("primary", 1, "NVIDIA_TESLA_T4", 2),
            ("workers", 1, "NVIDIA_TESLA_T4", 2),
        ]
        assert describe(result) == "$2.20/h; at most $6.60 (3h timeout)"

    def test_spot_prices(self) -> None:
        """A SPOT job is priced with the SPOT rows, not the on-demand ones."""
        result = estimate_of(
            {**GPU_JOB, "scheduling": {"timeout": "3h", "strategy": "SPOT"}},
        )
        hourly = 2 * (N1_STANDARD_8_SPOT + 2 * T4_SPOT)  # 0.76
        assert result.strategy == "SPOT"
        assert result.hourly_usd == pytest.approx(hourly)
        assert result.max_usd == pytest.approx(hourly * 3)  # 2.28
        assert describe(result) == "$0.76/h SPOT; at most $2.28 (3h timeout)"

    def test_one_row_for_both_strategies(self) -> None:
        """A row that applies to STANDARD and SPOT prices a SPOT job."""
        result = estimate_of(
            {"machine": "e2-standard-4", "scheduling": {"timeout": "2h", "strategy": "SPOT"}}
        )
        assert result.hourly_usd == pytest.approx(E2_STANDARD_4)
        assert result.max_usd == pytest.approx(E2_STANDARD_4 * 2)  # 0.30
        assert describe(result) == "$0.15/h SPOT; at most $0.30 (2h timeout)"

    def test_default_timeout_is_seven_days(self) -> None:
        """No timeout: Vertex AI's default of 7 days (168 h)."""
        result = estimate_of({"machine": "n1-standard-8"})
        assert result.timeout_is_default
        assert result.hours == 7 * 24
        assert result.max_usd == pytest.approx(N1_STANDARD_8 * 168)  # 67.20
        assert describe(result) == "$0.40/h; at most $67.20 (7d default timeout)"

    def test_tuning_job_times_trials(self) -> None:
        """A tuning job may run max_trials trials, each to the timeout."""
        result = estimate_of(
            {**GPU_JOB, "study": SMALL_STUDY, "scheduling": {"timeout": "2h"}},
        )
        hourly = 2 * (N1_STANDARD_8 + 2 * T4)  # 2.20
        assert result.trials == 5
        assert result.max_usd == pytest.approx(hourly * 2 * 5)  # 22.00
        assert describe(result) == "$2.20/h; at most $22.00 (2h timeout x 5 trials)"

    def test_reduction_server_counts(self) -> None:
        """A reduction server pool is priced like any pool."""
        result = estimate_of(
            {**GPU_JOB, "reduction_server": {"replicas": 2}, "scheduling": {"timeout": "1h"}}
        )
        hourly = 2 * (N1_STANDARD_8 + 2 * T4) + 2 * N1_HIGHCPU_16  # 3.40
        roles = [(p.role, p.machine, p.replicas) for p in result.pools]
        assert roles[-1] == ("reduction_server", "n1-highcpu-16", 2)
        assert result.hourly_usd == pytest.approx(hourly)
        assert describe(result) == "$3.40/h; at most $3.40 (1h timeout)"

    def test_real_table(self) -> None:
        """With the module's table: n1-standard-4 in us-central1 for 1 h."""
        result = estimate(job_of({"machine": "n1-standard-4", "scheduling": {"timeout": "1h"}}))
        assert result.hourly_usd == pytest.approx(0.21849885)
        assert result.max_usd == pytest.approx(0.21849885)
        assert describe(result) == "$0.22/h; at most $0.22 (1h timeout)"


class TestUnknown:
    """A price missing from the table is unknown, with its reason; never zero."""

    def test_unknown_machine(self) -> None:
        """A machine the table lacks: no hourly rate, no total, the reason."""
        result = estimate_of({"machine": "n2-standard-8", "scheduling": {"timeout": "1h"}})
        assert result.hourly_usd is None
        assert result.max_usd is None
        assert result.unknown == ("no price for n2-standard-8 in us-central1 (STANDARD)",)
        assert result.pools[0].hourly_usd is None
        assert describe(result) == (
            "unknown: no price for n2-standard-8 in us-central1 (STANDARD) (1h timeout)"
        )

    def test_unknown_region(self) -> None:
        """The job's region prices it: a T4 has no price in europe-west4 here."""
        result = estimate_of(GPU_JOB, stack=EU_STACK)
        assert result.hourly_usd is None
        # The same reason once, though two pools carry the T4.
        assert result.unknown == ("no price for NVIDIA_TESLA_T4 in europe-west4 (STANDARD)",)
        assert all(pool.hourly_usd is None for pool in result.pools)
        assert describe(result).startswith("unknown: no price for NVIDIA_TESLA_T4 in europe-west4")

    def test_spot_never_falls_back(self) -> None:
        """A SPOT job whose machine has only an on-demand price is unknown."""
        result = estimate_of({"machine": "n1-highcpu-16", "scheduling": {"strategy": "SPOT"}})
        assert result.hourly_usd is None
        assert result.unknown == ("no price for n1-highcpu-16 in us-central1 (SPOT)",)
        assert describe(result) == (
            "unknown: no price for n1-highcpu-16 in us-central1 (SPOT) (7d default timeout)"
        )

    def test_one_unknown_pool_makes_the_job_unknown(self) -> None:
        """A priced pool beside an unpriced one: the job's rate is unknown, not a part sum."""
        result = estimate_of(
            {"machine": "n1-standard-8", "evaluators": {"replicas": 1, "machine": "c2-standard-8"}}
        )
        assert result.pools[0].hourly_usd == pytest.approx(N1_STANDARD_8)
        assert result.hourly_usd is None
        assert result.max_usd is None


class TestLocal:
    """A local-backend job runs on this machine: no Google Cloud cost."""

    def test_local_job_costs_nothing(self) -> None:
        """Hourly 0.0, no unknowns, described as running locally."""
        result = estimate(job_of({"machine": "a2-highgpu-1g"}, stack=LOCAL_STACK))
        assert result.hourly_usd == 0.0
        assert result.max_usd == 0.0
        assert result.unknown == ()
        assert all(pool.hourly_usd == 0.0 for pool in result.pools)
        assert "runs locally" in describe(result)


class TestDescribe:
    """describe(): the one line a reviewer reads."""

    def test_hours_and_thousands(self) -> None:
        """Dollars with cents and thousands separators; the timeout in hours."""
        result = Estimate(3.21, 72.0, False, 1, 3.21 * 72, "STANDARD", (), ())
        assert describe(result) == "$3.21/h; at most $231.12 (72h timeout)"

    def test_minutes(self) -> None:
        """A timeout under an hour in minutes."""
        result = Estimate(0.40, 0.5, False, 1, 0.20, "STANDARD", (), ())
        assert describe(result) == "$0.40/h; at most $0.20 (30m timeout)"

    def test_default_timeout_and_trials(self) -> None:
        """The default timeout in days, and the trials."""
        result = Estimate(3.21, 168.0, True, 2, 3.21 * 168 * 2, "STANDARD", (), ())
        assert describe(result) == "$3.21/h; at most $1,078.56 (7d default timeout x 2 trials)"

    def test_unknown_lists_every_reason(self) -> None:
        """Every reason, separated by semicolons."""
        reasons = ("no price for a3-highgpu-8g in me-west1 (SPOT)", "no price for X in me-west1")
        result = Estimate(None, 168.0, True, 1, None, "SPOT", (), reasons)
        assert describe(result) == f"unknown: {'; '.join(reasons)} (7d default timeout)"


class TestRenderEstimates:
    """`python -m provider render` prints each job's estimate on stderr, stdout unchanged."""

    STACK_FILE = "stacks/Pulumi.dev.yaml"

    def test_estimates_on_stderr_only(self) -> None:
        """One ``estimate: <job>: ...`` line a job on stderr; stdout is the JSON alone."""
        result = run_cli("render", self.STACK_FILE)
        assert result.returncode == 0, result.stderr
        expected: list[str] = []
        rendered = render(str(REPO / self.STACK_FILE), estimates=expected)
        assert result.stdout == json.dumps(rendered, indent=2, sort_keys=True) + "\n"
        lines = [line for line in result.stderr.splitlines() if line.startswith("estimate: ")]
        assert lines == [f"estimate: {line}" for line in expected]
        assert [line.split(": ")[1] for line in lines] == list(rendered)
        assert "estimate" not in result.stdout

    def test_dev_example_figure(self) -> None:
        """The dev stack's example job: n1-standard-4 in us-central1 for its 1 h timeout."""
        result = run_cli("render", self.STACK_FILE)
        hourly = 0.21849885  # the table's n1-standard-4, us-central1, STANDARD
        assert f"estimate: example: ${hourly:.2f}/h; at most ${hourly * 1:.2f} (1h timeout)" in (
            result.stderr.splitlines()
        )
        # container-smoke runs SPOT on e2-standard-4, which the table does not price.
        assert (
            "estimate: container-smoke: unknown: no price for e2-standard-4 in us-central1 (SPOT)"
            " (30m timeout)"
        ) in result.stderr.splitlines()
