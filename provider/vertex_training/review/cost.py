"""What a job may cost, from the price snapshot: its hourly rate, the most, and each SKU.

- A pool's hourly rate is ``replicas x (vCPUs x core price + GiB x memory price +
  accelerators x accelerator price + boot disk GiB x disk price / 730)``, plus the
  management fee on each of those where the strategy pays it: which SKUs price which
  part, under which ``scheduling.strategy`` (STANDARD when unset), is
  ``vertex_training.catalog.billing``'s rule; vCPUs and GiB are the snapshot's, as Compute
  Engine's MachineTypes API gave them at refresh (``guestCpus``; ``memoryMb`` / 1024,
  ``vertex_training.catalog.shapes``). A TPU machine is billed for its chips instead.
  Every pool counts the same way, a reduction server included.
- A SKU with tiers is priced at the tier covering the job's most usage of it (a free
  first tier prices a small usage at nothing; a larger one at the paid tier).
- The job's hourly rate is the sum over its pools; the most it can cost is that rate
  times ``scheduling.timeout`` (or Vertex AI's default of 7 days), times ``max_trials``
  for a tuning job (each trial may run to the timeout). A tuning job runs up to
  ``parallel_trials`` trials at once: ``Estimate.peak_usd_per_hour``.
- A job with ``retry`` may run ``attempts`` times, each in its region under its strategy:
  its rate is the dearest attempt's (``Estimate.priced_as`` says which region and
  strategy), and the most it can cost is that rate x hours x trials x attempts, the
  worst case. Every attempt's region and strategy must be priced: one that is not makes
  the estimate unknown.
- A pool on a specific reservation (``reservation_affinity: SPECIFIC_RESERVATION``) is
  priced by ``billing.RESERVED``: Compute Engine's on-demand prices for its machines (the
  reservation's, which Compute Engine bills whether or not a job runs on it; committed
  use discounts not applied) plus the management fee. ``Estimate.reserved`` names those
  pools, and ``describe`` says so. ``ANY_RESERVATION`` may fall back to on-demand
  capacity, so it is priced by the job's strategy, the dearer case.
- A SKU missing from the snapshot makes the rate and the total unknown (``None``) with
  the SKU it needs and how to refresh; so does a machine type whose shape the snapshot
  lacks, naming it; no snapshot at all says how to make one. Never zero. A local-backend
  job costs nothing on Google Cloud.
- A job on a persistent resource (``persistent_resource_id``) is not billed on its own:
  Google bills the persistent resource's machines from its creation to its deletion,
  whether a job runs or not, and does not bill the jobs that run on it apart from it
  (cloud.google.com/vertex-ai/docs/training/persistent-resource-overview, "Billing
  details", read 2026-11-29). ``persistent_estimate`` prices the resource: its
  pools' rate (each at the most replicas it may scale to), for as long as it exists; no
  timeout bounds it, so its "most" is a month of it (``HOURS_PER_MONTH``), said so.

Each estimate carries its ``Line``s, one per SKU and pool (quantity x unit price, SKU ID),
so a reviewer can check the sum. Storage, network and image builds are not counted
(docs/cost.md).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertex_training.api.bodies import SPECIFIC_RESERVATION as SPECIFIC
from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import billing, prices
from vertex_training.catalog.billing import (
    DEFAULT_STRATEGY,
    HOURS_PER_MONTH,
    UNIT_HOURS,
    PriceIndex,
)
from vertex_training.catalog.prices import REFRESH_HINT, SNAPSHOT_PATH, Snapshot
from vertex_training.errors import PricesError
from vertex_training.stackconfig import JobSpec, WorkerPool
from vertex_training.stackconfig.study import TuningJobSpec

#: Vertex AI's ``Scheduling.timeout`` when a job sets none: 7 days.
VERTEX_DEFAULT_TIMEOUT_S = 7 * 24 * 3600
SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
MINUTES_PER_HOUR = 60
#: Why every job's cost is unknown without a snapshot.
NO_SNAPSHOT = f"no price snapshot ({SNAPSHOT_PATH}): {REFRESH_HINT}"


@dataclass(frozen=True)
class Line:
    """One SKU's part of a pool's hourly rate: ``quantity`` units at ``usd_per_unit``."""

    role: str
    sku_id: str
    description: str
    #: Units of the SKU the whole pool uses an hour (GiB for a per-GiB-month disk SKU).
    quantity: float
    #: The SKU's usage unit (``h``, ``GiBy.h``, ``GiBy.mo``).
    unit: str
    #: What a unit counts for a reader (``vCPU``, ``GiB``, ``NVIDIA_TESLA_T4``).
    what: str
    usd_per_unit: float
    usd_per_hour: float


@dataclass(frozen=True)
class PoolCost:
    """What one worker pool costs an hour, and from which SKUs."""

    role: str  # WorkerPool.role
    replicas: int
    machine: str
    accelerator: str | None  # accelerator type, None without one
    accelerator_count: int
    hourly_usd: float | None  # None when any price is unknown
    unknown: tuple[str, ...]  # why a price is unknown
    lines: tuple[Line, ...] = ()


@dataclass(frozen=True)
class Estimate:
    """What one job costs an hour, and the most it can cost."""

    hourly_usd: float | None  # sum over pools (one trial); None when any is unknown
    hours: float  # scheduling.timeout in hours, or Vertex's default (7 days) when none is set
    timeout_is_default: bool
    trials: int  # 1 for a training job, max_trials for a tuning job
    max_usd: float | None  # hourly_usd x hours x trials; None when unknown
    strategy: str  # STANDARD, SPOT or FLEX_START
    pools: tuple[PoolCost, ...]
    unknown: tuple[str, ...]
    local: bool = False  # a local-backend job: nothing runs on Google Cloud
    parallel_trials: int = 1
    #: The day the snapshot's prices were read (ISO 8601), None without a snapshot.
    prices_read: str | None = None
    #: Submissions counted: ``retry.attempts`` (1 without retry).
    attempts: int = 1
    #: The region and strategy the rate is of, for a job with retry (the dearest
    #: attempt's); "" without.
    priced_as: str = ""
    #: The pools (roles) that run on a specific reservation, priced by its rule.
    reserved: tuple[str, ...] = ()
    #: The persistent resource the job runs on, which is billed instead of it ("": none).
    on_persistent_resource: str = ""
    #: A persistent resource's estimate: billed while it exists, ``hours`` is a month.
    until_deleted: bool = False

    @property
    def lines(self) -> tuple[Line, ...]:
        """Every pool's SKU lines, in pool order."""
        return tuple(line for pool in self.pools for line in pool.lines)

    @property
    def peak_usd_per_hour(self) -> float | None:
        """The rate with ``parallel_trials`` trials running at once."""
        return None if self.hourly_usd is None else self.hourly_usd * self.parallel_trials


def _missing(want: billing.Want, region: str, snapshot: Snapshot) -> str:
    return (
        f"no SKU '{want.description}' ({want.service}, {want.usage_type}) for {region} in "
        f"the prices read {snapshot.read_date.isoformat()}: refresh prices (make prices)"
    )


def _missing_shape(machine: str, region: str, snapshot: Snapshot) -> str:
    read = snapshot.shapes_read_date
    if read is None:
        return (
            f"no vCPUs and memory for machine type {machine}: the snapshot holds no "
            f"machine types: refresh prices (make prices)"
        )
    where = f"the machine types read {read.isoformat()} from {snapshot.shapes_source}"
    if region not in snapshot.regions:
        fix = (
            f"refresh prices with {region} among the regions "
            f'(make prices PRICES_REGIONS="{region} ...")'
        )
    else:
        fix = "no zone of the regions refreshed offered it then: refresh prices (make prices)"
    return f"no vCPUs and memory for machine type {machine} in {where}: {fix}"


def pool_cost(
    pool: WorkerPool,
    region: str,
    strategy: str,
    index: PriceIndex | None,
    *,
    usage_hours: float = 1.0,
) -> PoolCost:
    """The hourly rate of one worker pool in ``region`` under ``strategy``.

    ``usage_hours`` (the job's hours x trials) picks each SKU's tier.
    """
    accelerator = pool.accelerator.type if pool.accelerator else None
    count = pool.accelerator.count if pool.accelerator else 0

    def result(hourly: float | None, unknown: tuple[str, ...], lines: tuple[Line, ...]) -> PoolCost:
        return PoolCost(
            pool.role, pool.replicas, pool.machine, accelerator, count, hourly, unknown, lines
        )

    if index is None:
        return result(None, (NO_SNAPSHOT,), ())
    shape = None
    if not billing.billed_by_chips(pool.machine):
        read = index.snapshot.shape_of(pool.machine)
        if read is None:
            return result(None, (_missing_shape(pool.machine, region, index.snapshot),), ())
        shape = (float(read.guest_cpus), read.memory_gib)
    components, unknown = billing.replica_components(
        pool.machine,
        accelerator,
        count,
        shape=shape,
        disk_type=pool.disk.type,
        disk_gib=pool.disk.size_gb,
        strategy=strategy,
        tpu_topology=pool.tpu_topology,
    )
    lines: list[Line] = []
    for component in components:
        sku = index.find(component.want, region)
        if sku is None:
            unknown.append(_missing(component.want, region, index.snapshot))
            continue
        hours_per_unit = UNIT_HOURS[sku.unit]
        quantity = pool.replicas * component.quantity
        tier = sku.tier_for(quantity * usage_hours / hours_per_unit)
        lines.append(
            Line(
                role=pool.role,
                sku_id=sku.sku_id,
                description=sku.description,
                quantity=quantity,
                unit=sku.unit,
                what=component.what,
                usd_per_unit=tier.usd,
                usd_per_hour=quantity * tier.usd / hours_per_unit,
            )
        )
    hourly = None if unknown else sum(line.usd_per_hour for line in lines)
    return result(hourly, tuple(unknown), tuple(lines))


def estimate(job: JobSpec, prices: Snapshot | None) -> Estimate:
    """The hourly rate of ``job`` and the most it can cost, from the snapshot ``prices``
    (None: there is none, and the cost is unknown saying how to make one)."""
    strategy = job.scheduling.strategy or DEFAULT_STRATEGY
    timeout_s = job.scheduling.timeout_s
    timeout_is_default = timeout_s is None
    hours = (VERTEX_DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s) / SECONDS_PER_HOUR
    tuning = isinstance(job, TuningJobSpec)
    trials = job.study.max_trials if tuning else 1
    parallel = min(job.study.parallel_trials or 1, trials) if tuning else 1
    pools_in_use = [pool for pool in job.worker_pools if pool is not None]
    read = prices.read_date.isoformat() if prices is not None else None
    if not kind_of(job.backend).billed:
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
        return Estimate(
            0.0, hours, timeout_is_default, trials, 0.0, strategy, free, (), True, parallel, read
        )
    if job.persistent_resource_id:
        return Estimate(
            0.0,
            hours,
            timeout_is_default,
            trials,
            0.0,
            strategy,
            (),
            (),
            parallel_trials=parallel,
            prices_read=read,
            on_persistent_resource=job.persistent_resource_id,
        )
    index = PriceIndex(prices) if prices is not None else None
    usage_hours = hours * trials
    retry = job.retry.attempts if job.retry is not None else []
    where = list(dict.fromkeys((a.region, a.strategy) for a in retry))
    attempts = len(retry) or 1
    priced = [
        _priced(pools_in_use, region, strategy, index, usage_hours)
        for region, strategy in (where or [(job.region, strategy)])
    ]
    unknown = tuple(dict.fromkeys(why for _, _, whys in priced for why in whys))
    dearest = max(range(len(priced)), key=lambda i: priced[i][1] or 0.0)
    pools, rate, _ = priced[dearest]
    hourly = None if unknown else rate
    return Estimate(
        hourly_usd=hourly,
        hours=hours,
        timeout_is_default=timeout_is_default,
        trials=trials,
        max_usd=None if hourly is None else hourly * hours * trials * attempts,
        strategy=where[dearest][1] if where else strategy,
        pools=pools,
        unknown=unknown,
        parallel_trials=parallel,
        prices_read=read,
        attempts=attempts,
        priced_as=f"{where[dearest][0]} {where[dearest][1]}" if where else "",
        reserved=tuple(p.role for p in pools_in_use if _on_reservation(p)),
    )


def persistent_estimate(pools: list[WorkerPool], region: str, prices: Snapshot | None) -> Estimate:
    """What a persistent resource with ``pools`` in ``region`` costs an hour for as long
    as it exists, and for a month of it (its ``max_usd``: no timeout bounds it)."""
    index = PriceIndex(prices) if prices is not None else None
    read = prices.read_date.isoformat() if prices is not None else None
    priced, hourly, unknown = _priced(
        pools, region, DEFAULT_STRATEGY, index, float(HOURS_PER_MONTH)
    )
    return Estimate(
        hourly_usd=hourly,
        hours=float(HOURS_PER_MONTH),
        timeout_is_default=False,
        trials=1,
        max_usd=None if hourly is None else hourly * HOURS_PER_MONTH,
        strategy=DEFAULT_STRATEGY,
        pools=priced,
        unknown=unknown,
        prices_read=read,
        until_deleted=True,
    )


def _priced(
    pools_in_use: list[WorkerPool],
    region: str,
    strategy: str,
    index: PriceIndex | None,
    usage_hours: float,
) -> tuple[tuple[PoolCost, ...], float | None, tuple[str, ...]]:
    """The job's pools priced in ``region`` under ``strategy``: each pool's cost, the
    hourly rate (None when a price is unknown) and why any is unknown."""
    pools = tuple(
        pool_cost(pool, region, _billed_as(pool, strategy), index, usage_hours=usage_hours)
        for pool in pools_in_use
    )
    unknown = tuple(dict.fromkeys(why for pool in pools for why in pool.unknown))
    hourly = None if unknown else sum(pool.hourly_usd or 0.0 for pool in pools)
    return pools, hourly, unknown


def _on_reservation(pool: WorkerPool) -> bool:
    """Whether the pool runs on a specific reservation."""
    return pool.reservation is not None and pool.reservation.type == SPECIFIC


def _billed_as(pool: WorkerPool, strategy: str) -> str:
    """The rule a pool is priced by: the reservation's when it runs on a specific one."""
    return billing.RESERVED if _on_reservation(pool) else strategy


def _usd(value: float) -> str:
    return f"${value:,.2f}"


def _duration(hours: float) -> str:
    """``72h``, ``30m``, ``1.5h``: the timeout as a reviewer reads it."""
    if hours < 1:
        return f"{hours * MINUTES_PER_HOUR:g}m"
    return f"{hours:g}h"


def describe(estimate: Estimate) -> str:
    """One line for a reviewer: ``$3.21/h; at most $231.12 (72h timeout)``."""
    if estimate.local:
        return "runs locally: no Google Cloud cost"
    if estimate.on_persistent_resource:
        return (
            f"runs on the persistent resource `{estimate.on_persistent_resource}`: billed as "
            "that resource, not on its own"
        )
    if estimate.until_deleted:
        if estimate.hourly_usd is None or estimate.max_usd is None:
            return f"unknown: {'; '.join(estimate.unknown)}"
        return (
            f"{_usd(estimate.hourly_usd)}/h for as long as it exists, whether a job runs "
            f"or not (no timeout bounds it): {_usd(estimate.max_usd)} a month "
            f"({HOURS_PER_MONTH}h)"
        )
    if estimate.timeout_is_default:
        timeout = f"{estimate.hours / HOURS_PER_DAY:g}d default timeout"
    else:
        timeout = f"{_duration(estimate.hours)} timeout"
    if estimate.trials != 1:
        timeout += f" x {estimate.trials} trials"
    if estimate.attempts != 1:
        timeout += f" x {estimate.attempts} attempts, each priced as {estimate.priced_as}"
    strategy = "" if estimate.strategy == DEFAULT_STRATEGY else f" {estimate.strategy}"
    if estimate.hourly_usd is None or estimate.max_usd is None:
        return f"unknown: {'; '.join(estimate.unknown)} ({timeout})"
    rate = f"{_usd(estimate.hourly_usd)}/h{strategy}"
    if estimate.trials != 1:
        peak = estimate.peak_usd_per_hour or 0.0
        rate += f" a trial, {_usd(peak)}/h with {estimate.parallel_trials} at once"
    reserved = ""
    if estimate.reserved:
        reserved = (
            f"; {', '.join(estimate.reserved)} on a reservation: Compute Engine bills the "
            "reserved machines at their on-demand rate (less any committed use discount) "
            "whether or not the job runs, and the job adds Vertex AI's management fee"
        )
    return f"{rate}; at most {_usd(estimate.max_usd)} ({timeout}){reserved}"


def describe_line(line: Line) -> str:
    """``worker: 24 vCPU x $0.0380/h = $0.9120/h (SKU 1A2B-..., N1 ... in Iowa)``."""
    per = "/GiB-month" if line.unit == "GiBy.mo" else "/h"
    return (
        f"{line.role}: {line.quantity:g} {line.what} x ${line.usd_per_unit:.6g}{per} = "
        f"${line.usd_per_hour:.4f}/h (SKU {line.sku_id}, {line.description})"
    )


def to_json(estimate: Estimate) -> dict[str, Any]:
    """``{usd_per_hour, max_usd, prices_read, breakdown}`` (plus strategy, hours, trials)."""
    return {
        "usd_per_hour": estimate.hourly_usd,
        "max_usd": estimate.max_usd,
        "prices_read": estimate.prices_read,
        "strategy": estimate.strategy,
        "hours": estimate.hours,
        "trials": estimate.trials,
        "parallel_trials": estimate.parallel_trials,
        "attempts": estimate.attempts,
        "priced_as": estimate.priced_as,
        "reserved_pools": list(estimate.reserved),
        "on_persistent_resource": estimate.on_persistent_resource or None,
        "until_deleted": estimate.until_deleted,
        "unknown": list(estimate.unknown),
        "breakdown": [
            {
                "pool": line.role,
                "sku_id": line.sku_id,
                "description": line.description,
                "quantity": line.quantity,
                "unit": line.unit,
                "what": line.what,
                "usd_per_unit": line.usd_per_unit,
                "usd_per_hour": line.usd_per_hour,
            }
            for line in estimate.lines
        ],
    }


#: An estimate's amounts are given to a millionth of a dollar.
USD_DECIMALS = 6
#: The metadata of an output an SDK types as maybe absent, and leaves out when None.
_UNSET = {"required": False, "unset": None}


@dataclass(frozen=True)
class CostEstimate:
    """What a job may cost (a job's `estimate`), from the price snapshot the provider's
    `prices` names (docs/cost.md): worked out when the job is created or updated, or in a
    preview; amounts in USD, to a millionth of a dollar."""

    hourly_usd: float | None = field(
        metadata={
            **_UNSET,
            "description": "The job's rate in USD an hour (a tuning job's: one trial's); "
            "absent when unknown.",
        }
    )
    max_usd: float | None = field(
        metadata={
            **_UNSET,
            "description": "The most the job can cost in USD: the rate for its whole "
            "`scheduling.timeout` (Vertex AI's 7 days when unset), x trials, x attempts; "
            "absent when unknown.",
        }
    )
    hours: float = field(
        metadata={"description": "The hours the most is counted for: the job's timeout."}
    )
    strategy: str = field(
        metadata={
            "description": "The scheduling strategy priced: `STANDARD`, `SPOT` or `FLEX_START`."
        }
    )
    prices_read: str | None = field(
        metadata={
            **_UNSET,
            "description": "The day the snapshot's prices were read, `YYYY-MM-DD`; absent "
            "without a snapshot.",
        }
    )
    prices_source: str | None = field(
        metadata={
            **_UNSET,
            "description": "Where the snapshot's prices were read from "
            "(`cloudbilling.googleapis.com`); absent without a snapshot.",
        }
    )
    unknown: tuple[str, ...] = field(
        metadata={
            "description": "Why the cost is unknown, each reason with what to do (none when "
            "it is known)."
        }
    )
    summary: str = field(
        metadata={
            "description": "The estimate in one line, as `vertex-training render` prints it: "
            "`$0.29/h; at most $0.29 (1h timeout)`."
        }
    )

    @classmethod
    def of(cls, estimate: Estimate, snapshot: Snapshot | None) -> CostEstimate:
        """``estimate`` as a job's ``estimate`` output, priced from ``snapshot`` (None
        without one): its amounts rounded to ``USD_DECIMALS``."""

        def usd(amount: float | None) -> float | None:
            return None if amount is None else round(amount, USD_DECIMALS)

        return cls(
            hourly_usd=usd(estimate.hourly_usd),
            max_usd=usd(estimate.max_usd),
            hours=estimate.hours,
            strategy=estimate.strategy,
            prices_read=snapshot.read_date.isoformat() if snapshot is not None else None,
            prices_source=snapshot.source if snapshot is not None else None,
            unknown=estimate.unknown,
            summary=describe(estimate),
        )


def load_prices(
    path: Path, today: datetime.date | None = None
) -> tuple[Snapshot | None, str | None]:
    """The snapshot in ``path`` and what to say about it: none there (how to make one),
    unreadable (why), or read too long ago; (snapshot, None) when all is well."""
    try:
        snapshot = prices.load_if_present(path)
    except PricesError as exc:
        return None, str(exc)
    if snapshot is None:
        return None, f"no price snapshot ({path}): {REFRESH_HINT}"
    return snapshot, snapshot.stale_warning(today)
