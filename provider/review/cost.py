"""What a job may cost: its hourly rate and the most it can cost, from ``prices``.

- A pool's hourly rate is ``replicas x (machine + accelerator_count x accelerator)``, each
  price looked up by the job's region and its ``scheduling.strategy`` (STANDARD when unset).
  Every pool counts the same way, a reduction server included; a free position (``None``)
  costs nothing.
- The job's hourly rate is the sum over its pools; the most it can cost is that rate times
  ``scheduling.timeout`` (or Vertex AI's default of 7 days when none is set), times the
  number of trials for a tuning job (``study.max_trials``: each trial may run to the
  timeout).
- A price missing from the table makes the rate and the total unknown (``None``), with the
  reason; it never counts as zero. A local-backend job costs nothing on Google Cloud.

Boot disks, storage, network and image builds are not counted (docs/cost.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from provider.review.prices import DEFAULT_STRATEGY, TABLE, Kind, PriceTable
from provider.stackconfig import JobSpec, WorkerPool
from provider.stackconfig.study import TuningJobSpec

#: Vertex AI's ``Scheduling.timeout`` when a job sets none: 7 days.
VERTEX_DEFAULT_TIMEOUT_S = 7 * 24 * 3600
SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
MINUTES_PER_HOUR = 60


@dataclass(frozen=True)
class PoolCost:
    """What one worker pool costs an hour."""

    role: str  # WorkerPool.role
    replicas: int
    machine: str
    accelerator: str | None  # accelerator type, None without one
    accelerator_count: int
    hourly_usd: float | None  # replicas x (machine + accelerators); None when any price is unknown
    unknown: tuple[str, ...]  # why a price is unknown


@dataclass(frozen=True)
class Estimate:
    """What one job costs an hour, and the most it can cost."""

    hourly_usd: float | None  # sum over pools; None when any is unknown
    hours: float  # scheduling.timeout in hours, or Vertex's default (7 days) when none is set
    timeout_is_default: bool
    trials: int  # 1 for a training job, max_trials for a tuning job
    max_usd: float | None  # hourly_usd x hours x trials; None when unknown
    strategy: str  # STANDARD, SPOT or FLEX_START
    pools: tuple[PoolCost, ...]
    unknown: tuple[str, ...]
    local: bool = False  # a local-backend job: nothing runs on Google Cloud


def _price(
    prices: PriceTable, kind: Kind, item: str, region: str, strategy: str
) -> tuple[float | None, str | None]:
    """(USD an hour, None) or (None, why it is unknown)."""
    row = prices.lookup(kind, item, region, strategy)
    if row is None:
        return None, f"no price for {item} in {region} ({strategy})"
    return row.usd_per_hour, None


def pool_cost(pool: WorkerPool, region: str, strategy: str, prices: PriceTable = TABLE) -> PoolCost:
    """The hourly rate of one worker pool in ``region`` under ``strategy``."""
    accelerator = pool.accelerator.type if pool.accelerator else None
    count = pool.accelerator.count if pool.accelerator else 0
    machine_usd, machine_unknown = _price(prices, "machine", pool.machine, region, strategy)
    unknown = [machine_unknown] if machine_unknown else []
    accelerator_usd: float | None = 0.0
    if accelerator is not None:
        accelerator_usd, why = _price(prices, "accelerator", accelerator, region, strategy)
        if why:
            unknown.append(why)
    hourly = (
        pool.replicas * (machine_usd + count * accelerator_usd)
        if machine_usd is not None and accelerator_usd is not None
        else None
    )
    return PoolCost(
        role=pool.role,
        replicas=pool.replicas,
        machine=pool.machine,
        accelerator=accelerator,
        accelerator_count=count,
        hourly_usd=hourly,
        unknown=tuple(unknown),
    )


def estimate(job: JobSpec, *, prices: PriceTable = TABLE) -> Estimate:
    """The hourly rate of ``job`` and the most it can cost (``prices``: the table to use)."""
    strategy = job.scheduling.strategy or DEFAULT_STRATEGY
    timeout_s = job.scheduling.timeout_s
    timeout_is_default = timeout_s is None
    hours = (VERTEX_DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s) / SECONDS_PER_HOUR
    trials = job.study.max_trials if isinstance(job, TuningJobSpec) else 1
    pools_in_use = [pool for pool in job.worker_pools if pool is not None]
    if job.backend == "local":
        free = tuple(
            PoolCost(
                role=pool.role,
                replicas=pool.replicas,
                machine=pool.machine,
                accelerator=pool.accelerator.type if pool.accelerator else None,
                accelerator_count=pool.accelerator.count if pool.accelerator else 0,
                hourly_usd=0.0,
                unknown=(),
            )
            for pool in pools_in_use
        )
        return Estimate(0.0, hours, timeout_is_default, trials, 0.0, strategy, free, (), True)
    pools = tuple(pool_cost(pool, job.region, strategy, prices) for pool in pools_in_use)
    unknown = tuple(dict.fromkeys(why for pool in pools for why in pool.unknown))
    hourly = None if unknown else sum(pool.hourly_usd or 0.0 for pool in pools)
    return Estimate(
        hourly_usd=hourly,
        hours=hours,
        timeout_is_default=timeout_is_default,
        trials=trials,
        max_usd=None if hourly is None else hourly * hours * trials,
        strategy=strategy,
        pools=pools,
        unknown=unknown,
    )


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _duration(hours: float) -> str:
    """``72h``, ``7d``, ``30m``, ``1.5h``: the timeout as a reviewer reads it."""
    if hours < 1:
        return f"{hours * MINUTES_PER_HOUR:g}m"
    return f"{hours:g}h"


def describe(estimate: Estimate) -> str:
    """One line for a reviewer: ``$3.21/h; at most $231.12 (72h timeout)``."""
    if estimate.local:
        return "runs locally: no Google Cloud cost"
    if estimate.timeout_is_default:
        days = estimate.hours / HOURS_PER_DAY
        timeout = f"{days:g}d default timeout"
    else:
        timeout = f"{_duration(estimate.hours)} timeout"
    if estimate.trials != 1:
        timeout += f" x {estimate.trials} trials"
    strategy = "" if estimate.strategy == DEFAULT_STRATEGY else f" {estimate.strategy}"
    if estimate.hourly_usd is None or estimate.max_usd is None:
        return f"unknown: {'; '.join(estimate.unknown)} ({timeout})"
    return f"{_usd(estimate.hourly_usd)}/h{strategy}; at most {_usd(estimate.max_usd)} ({timeout})"
