"""Which Vertex AI custom-training quotas a job consumes, per region, and how much.

This module is data and arithmetic, with no cloud call: ``job_needs`` maps one resolved
job (any object shaped like ``vertex_training.stackconfig.JobSpec``) to the quota amounts it holds
while it runs; ``compare`` sets the needs of several jobs against the project's limits as
``vertex_training.catalog.cloud_quotas`` reads them from the Cloud Quotas API.

What a job consumes (each ``Need`` carries its reasons, each ``Quota`` its source):

- vCPUs: ``replicas x`` the machine's vCPUs, for every pool, a reduction server included.
  The vCPUs come from the price snapshot's machine shapes (``shapes_from``: Compute
  Engine's ``guestCpus``, read by ``make prices``) when it has the machine, else from the
  machine catalogue where the name gives them (``catalogue_vcpus``: ``n2-standard-16``),
  and the reason names which. A machine with neither is named in ``JobNeeds.unknown``.
- Accelerators: ``replicas x accelerator count``, against the accelerator's own quota.
  TPU machines hold their TPU quota only (not a CPU quota; not verified).
- ``scheduling.strategy: SPOT`` holds the *preemptible* variant of each quota instead.
  FLEX_START holds the preemptible GPU quotas too (Vertex AI's flex-start page, read
  2026-11-26: ``machines.NEWEST_GPU_SOURCES["flex-start"]``), and the standard CPU quotas
  (its CPUs are not said; not verified).
- A job on a reservation (``reservation_affinity``) holds the same quotas as one without:
  Google's pages on reservations with Vertex AI ask for enough quota for the jobs and name
  no quota of their own (read 2026-11-26).
- A tuning job holds ``parallel_trials`` trials' worth at once (``copies``).

Sources, read 2026-11-23 (``QUOTAS_DATE``) with the search tool over stored copies:

- The Cloud Quotas API (github.com/googleapis/googleapis, ``google/api/cloudquotas/v1/
  resources.proto``): a ``QuotaInfo`` has ``quota_id``, ``metric`` (example
  ``compute.googleapis.com/cpus``), ``dimensions`` (e.g. ``region``), ``dimensions_infos``
  whose ``details.value`` is "the value currently in effect and being enforced", and a
  ``DimensionsInfo`` without a dimension "applies to all the dimension values except for
  those that have another DimensionsInfo instance configured for the specific value".
- Google's page "Recommended quotas" of the tabular workflows
  (``TABULAR_QUOTAS_URL``): names the Vertex AI quota "Restricted image training CPUs for
  N1/E2 machine types per region", so CPU quotas of training are per region and per
  machine family. It is the only Google page read here that names a training quota.
- The metric names themselves were **not** read on a Google page: the stored copies of
  Vertex AI's quota page (``VERTEX_QUOTAS_URL``) show its request quotas only.
  ``custom_model_training_cpus``, ``custom_model_training_nvidia_t4_gpus``,
  ``..._nvidia_p4_gpus``, ``..._nvidia_l4_gpus``, ``..._nvidia_a100_gpus`` and
  ``custom_model_training_preemptible_nvidia_t4_gpus`` appear in the error text Vertex AI
  returns, as users quote it in public repositories ("The following quota metrics exceed
  quota limits: aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus"); every
  other name below follows their pattern and is marked ``confirmed=False``, but for the
  TPU v5e quota (``custom_model_training_tpu_v5e``, per chip), which Google's Vertex AI
  samples name (``vertex_training.catalog.machines.TPU_TRAINING_QUOTAS``). A name that the
  project's quotas do not list is reported as such (``Comparison.limit is None``), never as
  a pass: correct the row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Protocol

from vertex_training.api.bodies import FLEX_START_STRATEGY, SPOT_STRATEGY, STANDARD_STRATEGY
from vertex_training.catalog import machines

QUOTAS_DATE = "2026-11-23"
#: The service whose quotas custom training consumes.
SERVICE = "aiplatform.googleapis.com"
VERTEX_QUOTAS_URL = "https://cloud.google.com/vertex-ai/docs/quotas"
TABULAR_QUOTAS_URL = "https://cloud.google.com/vertex-ai/docs/tabular-data/tabular-workflows/quotas"
CLOUD_QUOTAS_PROTO = "googleapis/googleapis google/api/cloudquotas/v1/resources.proto"
#: The console page of one quota (the form users quote; not read on a Google page).
QUOTA_PAGE = (
    "https://console.cloud.google.com/iam-admin/quotas?project={project}"
    "&service=aiplatform.googleapis.com&metric={metric}"
)
STANDARD, SPOT, FLEX_START = STANDARD_STRATEGY, SPOT_STRATEGY, FLEX_START_STRATEGY
#: Machine families whose vCPUs count against the plain CPU quota.
PLAIN_CPU_FAMILIES = ("n1", "e2")

SEEN_IN_ERRORS = (
    "seen in Vertex AI's quota error text as users quote it (not read on a Google page)"
)
BY_PATTERN = "not confirmed: follows the pattern of the names seen in error text"
SAMPLED = (
    "named in Google's Vertex AI samples, as vertex_training.catalog.machines "
    "TPU_TRAINING_QUOTAS records (per chip)"
)
FAMILY_CPUS = (
    "not confirmed: a per-family CPU quota, as the tabular workflows page names "
    "'Restricted image training CPUs for N1/E2 machine types per region'"
)


@dataclass(frozen=True)
class Quota:
    """One custom-training quota of Vertex AI: its metric, what it counts, its source."""

    #: The short metric name, e.g. ``custom_model_training_cpus``.
    name: str
    #: What one unit is, for a reader: ``vCPUs``, ``NVIDIA_TESLA_T4``.
    unit: str
    confirmed: bool
    how: str
    url: str = VERTEX_QUOTAS_URL

    @property
    def metric(self) -> str:
        """The full metric, as ``QuotaInfo.metric`` gives it."""
        return f"{SERVICE}/{self.name}"


#: GPU -> its metric's middle part (``custom_model_training_<part>_gpus``), confirmed?
_GPU_PARTS: Mapping[str, tuple[str, bool]] = MappingProxyType(
    {
        "NVIDIA_TESLA_T4": ("nvidia_t4", True),
        "NVIDIA_TESLA_P4": ("nvidia_p4", True),
        "NVIDIA_L4": ("nvidia_l4", True),
        "NVIDIA_TESLA_A100": ("nvidia_a100", True),
        "NVIDIA_TESLA_V100": ("nvidia_v100", False),
        "NVIDIA_TESLA_P100": ("nvidia_p100", False),
        "NVIDIA_A100_80GB": ("nvidia_a100_80gb", False),
        "NVIDIA_H100_80GB": ("nvidia_h100", False),
        "NVIDIA_H100_MEGA_80GB": ("nvidia_h100_mega", False),
        "NVIDIA_H200_141GB": ("nvidia_h200", False),
        "NVIDIA_B200": ("nvidia_b200", False),
        "NVIDIA_GB200": ("nvidia_gb200", False),
        "NVIDIA_RTX_PRO_6000": ("nvidia_rtx_pro_6000", False),
    }
)
#: TPU -> its metric (unit: the job's acceleratorCount; cores or chips, not confirmed).
_TPU_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "TPU_V2": "custom_model_training_tpu_v2",
        "TPU_V3": "custom_model_training_tpu_v3",
        "TPU_V4_POD": "custom_model_training_tpu_v4_pod",
        "TPU_V5_LITEPOD": "custom_model_training_tpu_v5_litepod",
    }
)
#: The preemptible quotas SPOT jobs hold: seen in error text for the T4 only.
_PREEMPTIBLE_SEEN = frozenset({"custom_model_training_preemptible_nvidia_t4_gpus"})


def cpu_quota(family: str, strategy: str = STANDARD) -> Quota:
    """The CPU quota a machine of ``family`` holds under ``strategy``."""
    middle = "" if family in PLAIN_CPU_FAMILIES else f"{family}_"
    spot = "preemptible_" if strategy == SPOT else ""
    name = f"custom_model_training_{spot}{middle}cpus"
    if name == "custom_model_training_cpus":
        return Quota(name, "vCPUs", True, SEEN_IN_ERRORS)
    return Quota(name, "vCPUs", False, FAMILY_CPUS if middle else BY_PATTERN, TABULAR_QUOTAS_URL)


def accelerator_quota(accelerator: str, strategy: str = STANDARD) -> Quota | None:
    """The quota ``accelerator`` holds under ``strategy``; None for one not known here.

    SPOT jobs and flex-start jobs both hold the preemptible GPU quotas (flex-start: its page,
    ``machines.NEWEST_GPU_SOURCES["flex-start"]``; its machines are not preempted)."""
    spot = "preemptible_" if strategy in (SPOT, FLEX_START) else ""
    if accelerator in _GPU_PARTS:
        part, seen = _GPU_PARTS[accelerator]
        name = f"custom_model_training_{spot}{part}_gpus"
        confirmed = name in _PREEMPTIBLE_SEEN if spot else seen
        return Quota(name, accelerator, confirmed, SEEN_IN_ERRORS if confirmed else BY_PATTERN)
    # The machine catalogue's TPU quotas were read in Google's own samples (per chip).
    sampled: Mapping[str, str] = getattr(machines, "TPU_TRAINING_QUOTAS", {})
    if accelerator in sampled and not spot:
        name = sampled[accelerator].rsplit("/", 1)[-1]
        return Quota(name, accelerator, True, SAMPLED, "vertex_training.catalog.machines")
    if accelerator in _TPU_NAMES:
        name = _TPU_NAMES[accelerator].replace("training_", f"training_{spot}", 1)
        return Quota(name, accelerator, False, BY_PATTERN)
    return None


# ------------------------------------------------------------------------- the mapping


class _Accelerator(Protocol):
    @property
    def type(self) -> str: ...
    @property
    def count(self) -> int: ...


class _Pool(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def replicas(self) -> int: ...
    @property
    def machine(self) -> str: ...
    @property
    def accelerator(self) -> _Accelerator | None: ...
    @property
    def tpu_topology(self) -> str | None: ...


class _Scheduling(Protocol):
    @property
    def strategy(self) -> str | None: ...


class QuotaJob(Protocol):
    """What ``job_needs`` reads of a job (``vertex_training.stackconfig.JobSpec`` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def region(self) -> str: ...
    @property
    def worker_pools(self) -> Sequence[_Pool | None]: ...
    @property
    def scheduling(self) -> _Scheduling: ...


#: A machine's vCPUs and where the figure comes from, or None when unknown.
ShapeLookup = Callable[[str], tuple[float, str] | None]


class _SnapshotShape(Protocol):
    @property
    def guest_cpus(self) -> int: ...


def catalogue_vcpus(machine: str) -> tuple[float, str] | None:
    """vCPUs of ``machine`` where the machine catalogue (``vertex_training.catalog.machines``)
    gives them: its CPU and N1 families and G2 are named ``<family>-<shape>-<vCPUs>``;
    the A2, A3, A4 and TPU machines' names carry no vCPU count (None)."""
    family, _, rest = machine.partition("-")
    shape, _, count = rest.rpartition("-")
    if not count.isdigit():
        return None
    vcpus = int(count)
    listed = (
        vcpus in machines.N1_MACHINE_SHAPES.get(shape, ())
        if family == "n1"
        else vcpus in machines.CPU_MACHINE_SHAPES.get(family, {}).get(shape, ())
        or (family == "g2" and shape == "standard" and vcpus in machines.G2_STANDARD_L4_COUNTS)
    )
    if not listed:
        return None
    return float(vcpus), f"the machine type's name (machines.py, {machines.CATALOGUE_DATE})"


def shapes_from(snapshot: object | None) -> ShapeLookup:
    """vCPUs from the price snapshot's machine shapes (``Snapshot.shape_of``: Compute
    Engine's ``guestCpus``) when it has the machine, else from the machine catalogue."""
    shape_of = getattr(snapshot, "shape_of", None)
    if not callable(shape_of):
        return catalogue_vcpus
    source = getattr(snapshot, "shapes_source", "") or "the price snapshot"

    def lookup(machine: str) -> tuple[float, str] | None:
        read: _SnapshotShape | None = shape_of(machine)
        cpus = getattr(read, "guest_cpus", None)
        if isinstance(cpus, int) and cpus > 0:
            return float(cpus), f"guestCpus in the price snapshot, from {source}"
        return catalogue_vcpus(machine)

    return lookup


@dataclass(frozen=True)
class Need:
    """How much of one quota a job holds while it runs, and why."""

    quota: Quota
    amount: float
    #: One line per pool: ``workerpool0: 2 x n1-standard-8 (8 vCPUs: shapes.py, ...)``.
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class JobNeeds:
    """What one job holds in its region; ``unknown`` says what could not be counted."""

    job: str
    region: str
    strategy: str
    needs: tuple[Need, ...]
    unknown: tuple[str, ...] = ()


def job_needs(
    job: QuotaJob, *, copies: int = 1, shape_of: ShapeLookup = catalogue_vcpus
) -> JobNeeds:
    """The quotas ``job`` holds in its region: ``copies`` of it at once (a tuning job's
    ``parallel_trials``), vCPUs from ``shape_of``."""
    strategy = job.scheduling.strategy or STANDARD
    amounts: dict[str, float] = {}
    quotas: dict[str, Quota] = {}
    reasons: dict[str, list[str]] = {}
    unknown: list[str] = []

    def add(quota: Quota, amount: float, reason: str) -> None:
        quotas[quota.name] = quota
        amounts[quota.name] = amounts.get(quota.name, 0) + amount
        reasons.setdefault(quota.name, []).append(reason)

    times = f" x {copies} trials at once" if copies > 1 else ""
    for pool in job.worker_pools:
        if pool is None:
            continue
        replicas = pool.replicas * copies
        machine = machines.MACHINE_TYPES.get(pool.machine)
        if machine is None or not machine.tpu:
            shape = shape_of(pool.machine)
            if shape is None:
                unknown.append(f"{pool.role}: no vCPU count for {pool.machine}")
            else:
                vcpus, source = shape
                family = pool.machine.split("-", 1)[0]
                add(
                    cpu_quota(family, strategy),
                    replicas * vcpus,
                    f"{pool.role}: {pool.replicas} x {pool.machine}{times} "
                    f"({vcpus:g} vCPUs each: {source})",
                )
        chips = machines.tpu_chips(pool.machine, pool.tpu_topology)
        if pool.accelerator is not None:
            accelerator, count = pool.accelerator.type, pool.accelerator.count
        elif chips is not None:
            accelerator, count = chips  # built into the machine, a whole slice's
        else:
            continue
        quota = accelerator_quota(accelerator, strategy)
        if quota is None:
            unknown.append(f"{pool.role}: no quota known for {accelerator}")
            continue
        affinity = getattr(pool, "reservation", None)
        reserved = (
            " (on a reservation: its jobs need the quota too)"
            if affinity is not None and affinity.type != "NO_RESERVATION"
            else ""
        )
        add(
            quota,
            replicas * count,
            f"{pool.role}: {pool.replicas} x {count} {accelerator}{times}{reserved}",
        )
    needs = tuple(Need(quotas[n], amounts[n], tuple(reasons[n])) for n in sorted(quotas))
    return JobNeeds(job.name, job.region, strategy, needs, tuple(unknown))


# ---------------------------------------------------------------------- the comparison


@dataclass(frozen=True)
class Limit:
    """One quota's value in one region, as the Cloud Quotas API reported it."""

    metric: str
    region: str
    #: ``details.value``; None when the quota has no limit there (a negative value).
    value: int | None
    quota_id: str
    #: Whether the value came from a DimensionsInfo naming this region (else the default).
    specific: bool = True


@dataclass
class Limits:
    """The project's custom-training limits: (metric, region) -> Limit."""

    project: str
    source: str
    by_key: dict[tuple[str, str], Limit] = field(default_factory=dict)
    #: Every metric the service listed (a metric needed but not here is unknown by name).
    metrics: frozenset[str] = frozenset()

    def get(self, metric: str, region: str) -> Limit | None:
        return self.by_key.get((metric, region))


@dataclass(frozen=True)
class Comparison:
    """One quota in one region: what the change's jobs need against the project's limit."""

    region: str
    quota: Quota
    #: Each job's own need.
    by_job: tuple[tuple[str, float], ...]
    limit: Limit | None
    #: Why there is no limit, when ``limit`` is None.
    note: str = ""

    @property
    def total(self) -> float:
        return sum(amount for _job, amount in self.by_job)

    @property
    def exceeding_jobs(self) -> tuple[str, ...]:
        """Jobs that need more than the limit on their own: they cannot start at all."""
        if self.limit is None or self.limit.value is None:
            return ()
        value = self.limit.value
        return tuple(job for job, amount in self.by_job if amount > value)

    @property
    def together_exceed(self) -> bool:
        """The jobs need more than the limit together (they queue one after another)."""
        if self.limit is None or self.limit.value is None:
            return False
        return self.total > self.limit.value


def compare(needs: Iterable[JobNeeds], limits: Limits) -> list[Comparison]:
    """Each (region, quota) the jobs need, summed, against ``limits``."""
    grouped: dict[tuple[str, str], list[tuple[str, float]]] = {}
    quotas: dict[str, Quota] = {}
    for job in needs:
        for need in job.needs:
            quotas[need.quota.name] = need.quota
            grouped.setdefault((job.region, need.quota.name), []).append((job.job, need.amount))
    comparisons = []
    for (region, name), by_job in sorted(grouped.items()):
        quota = quotas[name]
        limit = limits.get(quota.metric, region)
        note = ""
        if limit is None:
            note = (
                f"no quota {quota.metric} among the project's {SERVICE} quotas: "
                f"the name may be wrong (vertex_training.catalog.quotas, {quota.how})"
                if quota.metric not in limits.metrics
                else f"{quota.metric} has no value for {region}"
            )
        comparisons.append(Comparison(region, quota, tuple(by_job), limit, note))
    return comparisons


def quota_page(project: str, quota: Quota) -> str:
    """The console page where ``quota`` of ``project`` is seen and raised."""
    return QUOTA_PAGE.format(project=project, metric=quota.metric)
