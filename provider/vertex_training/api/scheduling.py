"""Why a job is not running yet: the custom-training quotas its shape consumes, and what
QUEUED and PENDING mean while it waits.

"If your Google Cloud project does not have sufficient remaining custom training quotas
for your job, then Vertex AI keeps the job queued until you have sufficient quotas"
(https://cloud.google.com/vertex-ai/docs/training/understanding-training-service, "Queue
a new job"). Which quotas a job consumes: Vertex AI's quotas page
(https://cloud.google.com/vertex-ai/docs/quotas, "Custom training") counts, per project
and region, the vCPUs of the job's machines (``custom_model_training_cpus``) and its
GPUs by model (``custom_model_training_nvidia_t4_gpus``, ...); jobs on Spot VMs
(``scheduling.strategy: SPOT``) consume the preemptible variants instead
(``custom_model_training_preemptible_cpus``,
``custom_model_training_preemptible_nvidia_t4_gpus``), as errors citing those metrics
show (for example "The following quota metrics exceed quota limits:
aiplatform.googleapis.com/custom_model_training_cpus", vertex-ai-samples issue 3479).
Which metric and how much: ``vertex_training.catalog.quotas`` (the one home of the quota
names, with the source of each); this module says what the states mean and when to say
so. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vertex_training.api import states

#: A job QUEUED or PENDING longer than these, in seconds, gets a reason on its progress
#: line and in the waiter's outputs. QUEUED: Google calls the queue "usually brief"
#: (understanding-training-service): a job still queued after 2 minutes is waiting for
#: quota, not for the scheduler. PENDING is machines being provisioned and images
#: pulled, a few minutes for a GPU machine and its multi-GB image: after 5 minutes the
#: line says how long it has been.
QUEUED_REASON_AFTER_S = 120.0
PENDING_REASON_AFTER_S = 300.0

#: Vertex AI's quotas page, where the custom-training quotas are listed.
QUOTAS_PAGE = "https://cloud.google.com/vertex-ai/docs/quotas"


@dataclass(frozen=True)
class PoolShape:
    """One worker pool as it uses quota: its machine, accelerators and replicas."""

    machine_type: str
    replica_count: int
    accelerator_type: str = ""
    accelerator_count: int = 0


def shape_of_spec(spec: Mapping[str, Any]) -> tuple[tuple[PoolShape, ...], str]:
    """The pools and strategy of a CustomJobSpec in REST JSON form (a CustomJob's
    ``jobSpec``, a tuning job's ``trialJobSpec``); an empty pool keeps its position and
    uses nothing."""
    pools = []
    for pool in spec.get("workerPoolSpecs") or []:
        machine = pool.get("machineSpec") or {}
        pools.append(
            PoolShape(
                machine_type=str(machine.get("machineType") or ""),
                replica_count=int(pool.get("replicaCount") or 0),
                accelerator_type=str(machine.get("acceleratorType") or ""),
                accelerator_count=int(machine.get("acceleratorCount") or 0),
            )
        )
    strategy = str((spec.get("scheduling") or {}).get("strategy") or "")
    return tuple(pools), strategy


def waiting_reason(
    state: str, in_state_s: float, region: str, quotas: Sequence[str], quota_url: str
) -> str:
    """Why a job that has been ``in_state_s`` seconds in ``state`` is not running, or ""
    when it has not been there long enough to say (QUEUED_REASON_AFTER_S,
    PENDING_REASON_AFTER_S) or is in another state. ``quotas``: the quotas the job
    consumes in ``region``, as they are to read ("custom_model_training_cpus (4)")."""
    if state == states.QUEUED and in_state_s >= QUEUED_REASON_AFTER_S:
        names = ", ".join(quotas) or f"the custom-training quotas ({QUOTAS_PAGE})"
        return (
            f"queued for quota: Vertex AI keeps a job queued until the project has enough "
            f"custom-training quota in {region}; this job needs {names}; see {quota_url}"
        )
    if state == states.PENDING and in_state_s >= PENDING_REASON_AFTER_S:
        return f"resources being provisioned for {_minutes(in_state_s)}"
    return ""


def _minutes(seconds: float) -> str:
    whole = int(seconds)
    if whole < 3600:
        return f"{whole // 60}m"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"
