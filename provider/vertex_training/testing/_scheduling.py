"""How the fake schedules custom jobs when a test asks it to fail like Google: a quota per
region, stockouts, preemption of SPOT jobs, FLEX_START waits that run out.

With none of these set (the default) every job follows its script's fixed phases, as
before. Each behaviour, and the page that documents it:

- Quota: "if your Google Cloud project does not have sufficient remaining custom
  training quotas for your job, then Vertex AI keeps the job queued until you have
  sufficient quotas" (https://cloud.google.com/vertex-ai/docs/training/
  understanding-training-service). A region's quota is given as vCPUs (``"cpus"``) and
  accelerators by type (``"NVIDIA_TESLA_T4"``); a job is held QUEUED while the jobs
  holding quota (PENDING, RUNNING, CANCELLING) and it would exceed any of them, and is
  admitted, oldest first, once they fit. A machine's vCPUs are read from its name's last
  number (``n1-standard-4``: 4), the fake's approximation; a name without one counts 0.
- Stockout: the next N jobs created in a region fail before they run with Vertex AI's
  "Resources are insufficient in region: REGION." (``_jobs.STOCKOUT_MESSAGE``). A job
  whose every pool consumes a specific reservation is not one of them: its machines are
  held for it ("You can immediately consume the reserved resources, and they remain
  available until you delete the reservation",
  https://cloud.google.com/compute/docs/instances/reservations-overview), so it neither
  fails nor uses up a stockout.
- Preemption: the next N SPOT jobs (``scheduling.strategy: SPOT``) fail ``after_s``
  seconds into running ("Spot VMs ... can be preempted",
  https://cloud.google.com/vertex-ai/docs/training/use-spot-vms).
- FLEX_START: capacity for FLEX_START jobs comes ``capacity_after_s`` after submission;
  a job whose ``max_wait_duration`` (non-zero) is shorter fails when it runs out
  (https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws), one that can
  wait runs once it comes.

It depends on ``_faults`` and ``_jobs``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from google.cloud.aiplatform_v1.types.accelerator_type import AcceleratorType

from vertex_training.api import states
from vertex_training.testing._faults import VertexMessage
from vertex_training.testing._jobs import (
    CUSTOM,
    FLEX_EXPIRED_MESSAGE,
    PREEMPTED_CODE,
    PREEMPTED_MESSAGE,
    STOCKOUT_CODE,
    STOCKOUT_MESSAGE,
    Ending,
    JobRecord,
)

CPUS = "cpus"
#: States in which a job holds its quota.
HOLDING = (states.PENDING, states.RUNNING, states.CANCELLING)
_TRAILING_NUMBER = re.compile(r"-(\d+)$")
#: Scheduling.Strategy values, as the API's enum names them.
_SPOT, _FLEX_START = 4, 6
#: ReservationAffinity.Type.SPECIFIC_RESERVATION.
_SPECIFIC_RESERVATION = 3


def usage(record: JobRecord) -> dict[str, float]:
    """What the job holds while it runs: vCPUs and accelerators by type."""
    used: dict[str, float] = {}
    spec = getattr(record.job, "job_spec", None) or getattr(record.job, "trial_job_spec", None)
    for pool in spec.worker_pool_specs if spec is not None else ():
        machine = pool.machine_spec
        number = _TRAILING_NUMBER.search(machine.machine_type)
        vcpus = float(number.group(1)) if number else 0.0
        used[CPUS] = used.get(CPUS, 0.0) + vcpus * pool.replica_count
        if machine.accelerator_count:
            kind = AcceleratorType(machine.accelerator_type).name
            used[kind] = used.get(kind, 0.0) + machine.accelerator_count * pool.replica_count
    return used


class Scheduling:
    """The scheduling faults and limits a test set. Not thread-safe: the fake calls it
    with its lock held."""

    def __init__(self, quotas: Mapping[str, Mapping[str, float]] | None = None) -> None:
        self.quotas = {region: dict(limits) for region, limits in (quotas or {}).items()}
        self.stockouts: dict[str, int] = {}
        self.preemptions: list[float] = []
        self.flex_capacity_after_s: float | None = None

    def created(self, record: JobRecord) -> None:
        """A job was just created: decide what holds it back or ends it."""
        region = _region(record)
        if self.stockouts.get(region, 0) > 0 and not _on_specific_reservations(record):
            self.stockouts[region] -= 1
            after = record.script.queued_s + record.script.pending_s
            message = STOCKOUT_MESSAGE.format(region=region)
            record.ending = Ending(after, STOCKOUT_CODE, message, before_run=True)
            return
        scheduling = _scheduling(record)
        strategy = scheduling.strategy if scheduling is not None else 0
        if (
            scheduling is not None
            and strategy == _FLEX_START
            and self.flex_capacity_after_s is not None
        ):
            wait_s = scheduling.max_wait_duration.ToTimedelta().total_seconds()
            if wait_s and wait_s < self.flex_capacity_after_s:
                message = FLEX_EXPIRED_MESSAGE.format(seconds=int(wait_s))
                record.ending = Ending(wait_s, STOCKOUT_CODE, message, before_run=True)
                return
            record.held_back = True
        if strategy == _SPOT and self.preemptions:
            after = self.preemptions.pop(0)
            record.ending = Ending(after, PREEMPTED_CODE, PREEMPTED_MESSAGE, before_run=False)
        if region in self.quotas:
            record.held_back = True

    def admit(self, records: Iterable[JobRecord], now: float) -> None:
        """Let held-back jobs leave QUEUED, oldest first, when their quota (and FLEX_START
        capacity) allows at ``now``."""
        ordered = sorted(records, key=lambda r: r.number)
        for record in ordered:
            if not record.held_back or record.admitted_at is not None:
                continue
            if record.cancel_at is not None or now < record.created_at + record.script.queued_s:
                continue
            if not self._capacity_came(record, now) or not self._fits(record, ordered, now):
                continue
            record.admitted_at = now

    def _capacity_came(self, record: JobRecord, now: float) -> bool:
        scheduling = _scheduling(record)
        if scheduling is None or scheduling.strategy != _FLEX_START:
            return True
        after = self.flex_capacity_after_s or 0.0
        return now >= record.created_at + after

    def _fits(self, record: JobRecord, records: list[JobRecord], now: float) -> bool:
        region = _region(record)
        limits = self.quotas.get(region)
        if limits is None:
            return True
        held: dict[str, float] = {}
        for other in records:
            if other is record or _region(other) != region:
                continue
            if other.held_back and other.admitted_at is None:
                continue
            if other.state_at(now)[1] in HOLDING:
                for key, amount in usage(other).items():
                    held[key] = held.get(key, 0.0) + amount
        need = usage(record)
        return all(
            held.get(key, 0.0) + amount <= limits.get(key, 0.0) for key, amount in need.items()
        )


def _on_specific_reservations(record: JobRecord) -> bool:
    """Whether every pool of the job runs on a specific reservation."""
    spec = getattr(record.job, "job_spec", None) or getattr(record.job, "trial_job_spec", None)
    pools = [p for p in (spec.worker_pool_specs if spec is not None else ()) if p.replica_count]
    return bool(pools) and all(
        p.machine_spec.reservation_affinity.reservation_affinity_type == _SPECIFIC_RESERVATION
        for p in pools
    )


def _region(record: JobRecord) -> str:
    parts = record.kind.parse(record.job.name)
    return parts.get("location", "") if parts else ""


def _scheduling(record: JobRecord) -> VertexMessage | None:
    """The custom job's Scheduling message, or None when it has none (a tuning job)."""
    if record.kind is not CUSTOM or not record.job.job_spec.HasField("scheduling"):
        return None
    return record.job.job_spec.scheduling
