"""Container engines for the local backend: which one answers, and its jobs' containers.

A container pool runs under docker or podman (the first whose daemon answers); each
replica's container is named after its job, so that whoever stops the job can remove it.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess

#: Container engines tried in order; the first whose daemon answers runs container jobs.
CONTAINER_ENGINES = ("docker", "podman")
#: Every container a local job starts is named ``<prefix><job id>-<replica>``.
CONTAINER_PREFIX = "vertex-training-"
#: How long ``<engine> info`` may take before the engine counts as absent.
ENGINE_PROBE_TIMEOUT_S = 5.0


def container_engine() -> str | None:
    """The container engine (``docker`` or ``podman``) whose daemon answers, or None.

    Having the CLI is not enough: ``<engine> info`` must succeed within
    ENGINE_PROBE_TIMEOUT_S. The provider's preview check calls this to refuse container
    jobs on a machine that cannot run them.
    """
    for engine in CONTAINER_ENGINES:
        if shutil.which(engine) is None:
            continue
        try:
            probe = subprocess.run(
                [engine, "info"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=ENGINE_PROBE_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0:
            return engine
    return None


def container_name(job_id: str, replica: str) -> str:
    """The name of a replica's container: removable by name whoever started it."""
    return f"{CONTAINER_PREFIX}{job_id}-{replica}"


def remove_containers(names: list[str], engines: tuple[str, ...] = CONTAINER_ENGINES) -> None:
    """Stop and remove these containers at once, under every engine that has them.

    ``rm --force`` kills the container: docker sends SIGKILL at once; podman first waits
    its stop timeout (10 s by default) unless told ``--time 0``. A container's main
    process is PID 1, which ignores SIGTERM unless it handles it, so a stopped job would
    otherwise keep its containers for that long, or for good when its supervisor is
    killed meanwhile.
    """
    for engine in engines:
        if not names or shutil.which(engine) is None:
            continue
        argv = [engine, "rm", "--force", *(["--time", "0"] if engine == "podman" else []), *names]
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=ENGINE_PROBE_TIMEOUT_S,
                check=False,
            )
