"""This machine's NVIDIA GPUs, for local jobs with accelerators.

Vertex AI gives each replica a machine with its pool's accelerators; locally each replica
gets ``accelerator.count`` GPUs of its own (``CUDA_VISIBLE_DEVICES``, ``--gpus`` for a
container), from those ``nvidia-smi`` lists. A job asking for more GPUs than there are is
refused at preview with the count found; on a machine without GPUs a job with
accelerators is refused unless the stack says ``vertex-training:localAccelerators: cpu``.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from vertex_training.api.bodies import job_spec_of
from vertex_training.keys import LOCAL_CPU

#: ``vertex-training:localAccelerators``: a local job with NVIDIA accelerators needs this
#: machine's GPUs (``gpu``), or runs on the CPU when there are none (``cpu``).
#: Lists this machine's NVIDIA GPUs, one index a line.
NVIDIA_SMI = ("nvidia-smi", "--query-gpu=index", "--format=csv,noheader")
NVIDIA_SMI_TIMEOUT_S = 10.0


def local_gpus() -> list[str]:
    """The indices of this machine's NVIDIA GPUs, as ``nvidia-smi`` lists them; [] when
    there is no ``nvidia-smi`` or it answers with an error (no driver, no GPU)."""
    if shutil.which(NVIDIA_SMI[0]) is None:
        return []
    try:
        listed = subprocess.run(
            NVIDIA_SMI,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=NVIDIA_SMI_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    if listed.returncode != 0:
        return []
    return [line.strip() for line in listed.stdout.splitlines() if line.strip()]


def gpus_needed(body: dict[str, Any]) -> list[tuple[int, int, int]]:
    """(pool position, replicas, GPUs each) of every pool with NVIDIA accelerators."""
    needed = []
    for position, pool in enumerate(job_spec_of(body).get("workerPoolSpecs") or []):
        machine = (pool or {}).get("machineSpec") or {}
        if str(machine.get("acceleratorType", "")).startswith("NVIDIA_"):
            count = int(machine.get("acceleratorCount") or 0)
            if count:
                needed.append((position, int(pool.get("replicaCount") or 1), count))
    return needed


def gpu_problems(body: dict[str, Any], accelerators: str) -> list[tuple[int, int, str]]:
    """(pool position, accelerator count, message) when this machine lacks the GPUs the
    job asks for; ``accelerators`` is the stack's ``localAccelerators``."""
    needed = gpus_needed(body)
    if not needed:
        return []
    total = sum(replicas * count for _, replicas, count in needed)
    found = local_gpus()
    position, _, count = needed[0]
    if not found:
        if accelerators == LOCAL_CPU:
            return []
        return [
            (
                position,
                count,
                "this machine has no NVIDIA GPU (nvidia-smi lists none): set "
                "vertex-training:localAccelerators: cpu to run the job on the CPU here, or "
                "run it on Vertex AI (backend: vertex)",
            )
        ]
    if total > len(found):
        return [
            (
                position,
                count,
                f"the job needs {total} GPUs here (replicas x accelerator.count over its "
                f"pools) and this machine has {len(found)} (nvidia-smi): lower the count or "
                "the replicas, or run it on Vertex AI (backend: vertex)",
            )
        ]
    return []
