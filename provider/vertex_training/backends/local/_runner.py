"""The supervisor of one local custom job (``Supervisor``), run by
``python -m vertex_training.backends.local <job dir>``.

(A hyperparameter tuning job's supervisor is ``vertex_training.backends.local._study``'s
``StudySupervisor``, started the same way; it runs each trial with ``Supervisor`` below.)

``LocalBackend.submit`` starts it in its own session; it outlives the process that
submitted the job. It moves the job QUEUED -> PENDING (installing packages) -> RUNNING
(replicas started) -> SUCCEEDED, FAILED or CANCELLED, and is the only writer of the job's
state while it lives.

What it does as Vertex AI would, and how:

- One process per replica, each in its own session, its stdout and stderr in
  ``logs/workerpool<P>-<I>.log``. The job succeeds when the primary replica (pool 0) and
  every worker (pool 1) exit 0; parameter servers and evaluators are then stopped. Any
  replica exiting non-zero fails the job with the last lines of its log.
- The environment Vertex sets: CLUSTER_SPEC and TF_CONFIG (addresses on 127.0.0.1, one
  free port per replica, below the ephemeral ports), torch-style MASTER_ADDR,
  MASTER_PORT, WORLD_SIZE and RANK for pools 0 and 1, AIP_MODEL_DIR, AIP_CHECKPOINT_DIR,
  AIP_TENSORBOARD_LOG_DIR under the base output directory, CLOUD_ML_JOB_ID. The job's
  own ``env`` entries are applied first, so these win. Args (``--job-dir`` included)
  pass through unchanged.
- ``scheduling.timeout`` (default 7 days) counts from the first replica start; a job
  still running then is stopped and FAILED.
- A replica killed by a signal nobody here sent (the OOM killer, say) is the local
  counterpart of a worker VM failing: it is restarted, or the whole job is with
  ``scheduling.restartJobOnWorkerRestart``, at most MAX_WORKER_RESTARTS times;
  ``scheduling.disableRetries`` fails the job instead.
- Python package pools run ``python -m <pythonModule> <args>`` from a virtualenv of their
  own (``VirtualenvCache``): made from this interpreter without the provider's packages,
  holding the framework of the executor image (``_images``), cloudml-hypertune, and
  the job's packages with their dependencies, as pip installs them on Vertex AI; cached
  under ``root/_venvs/<hash of all that>``, its wheels under ``root/_wheels/``. Container
  pools run through docker or podman with the host network, and the output directory
  mounted at the same path.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertex_training.api import states
from vertex_training.backends.local._containers import (
    container_engine,
    container_name,
    remove_containers,
)
from vertex_training.backends.local._images import image_requirements
from vertex_training.backends.local._record import (
    CANCEL_GRACE_S,
    JobRecord,
    ProcessRef,
    replica_name,
    tail,
)
from vertex_training.backends.local._registry import finish
from vertex_training.backends.local._venvs import InstallError, StepFailed, VirtualenvCache
from vertex_training.backends.local.gpus import gpus_needed, local_gpus

#: The variable that gives a replica its GPUs (CUDA and the frameworks read it).
CUDA_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
#: Interval between two looks at the replicas, the cancel marker and the clock.
POLL_INTERVAL_S = 0.2
#: Vertex's default scheduling.timeout.
DEFAULT_TIMEOUT_S = 7 * 24 * 3600.0
#: How many times replicas killed by a foreign signal are restarted before the job fails.
MAX_WORKER_RESTARTS = 3

LOOPBACK = "127.0.0.1"
#: TF_CONFIG task type of each worker pool position (Vertex AI always names pool 0 "chief").
TF_TASK_TYPES = {0: "chief", 1: "worker", 2: "ps", 3: "evaluator"}
#: Pools listed in TF_CONFIG's cluster: evaluators are not part of the training cluster.
TF_CLUSTER_POOLS = (0, 1, 2)
#: Pools that form the torch process group, and whose replicas must all exit 0.
TRAINING_POOLS = (0, 1)
#: Variables of the supervisor's environment a replica keeps; Vertex gives a clean one.
INHERITED_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR")


class _Cancelled(Exception):
    """A cancel was requested."""


class _PrepareError(Exception):
    """The job cannot start: a package does not install, no container engine, ..."""


def parse_duration_s(value: str | float | None, default: float) -> float:
    """Seconds in a protobuf JSON Duration ("3600s", "1.5s"), or ``default`` when unset."""
    if value in (None, ""):
        return default
    if isinstance(value, str):
        return float(value.removesuffix("s"))
    return float(value)


def pool_sizes(job_spec: dict[str, Any]) -> dict[int, int]:
    """Replica count by pool position, for the pools in use (an empty spec is a free slot)."""
    sizes = {}
    for position, pool in enumerate(job_spec["workerPoolSpecs"]):
        count = int(pool.get("replicaCount", 1)) if pool else 0
        if count > 0:
            sizes[position] = count
    return sizes


def cluster_environment(
    job_spec: dict[str, Any], addresses: dict[int, list[str]], pool: int, index: int
) -> dict[str, str]:
    """CLUSTER_SPEC, TF_CONFIG and the torch variables of replica ``index`` of ``pool``.

    ``addresses`` holds each pool's ``host:port`` list. As on Vertex AI, TF_CONFIG's
    cluster never lists evaluators, and the torch variables cover pools 0 and 1 only:
    WORLD_SIZE counts their replicas, RANK is 0 on the primary and 1 + i on worker i.
    """
    cluster_spec = {
        "cluster": {f"workerpool{p}": hosts for p, hosts in addresses.items()},
        "environment": "cloud",
        "task": {"type": f"workerpool{pool}", "index": index},
        "job": job_spec,
    }
    tf_cluster = {TF_TASK_TYPES[p]: h for p, h in addresses.items() if p in TF_CLUSTER_POOLS}
    tf_config = {
        "cluster": tf_cluster,
        "environment": "cloud",
        "task": {"type": TF_TASK_TYPES[pool], "index": index},
        "job": job_spec,
    }
    env = {"CLUSTER_SPEC": _json(cluster_spec), "TF_CONFIG": _json(tf_config)}
    if pool in TRAINING_POOLS:
        primary_host, primary_port = addresses[0][0].rsplit(":", 1)
        env |= {
            "MASTER_ADDR": primary_host,
            "MASTER_PORT": primary_port,
            "WORLD_SIZE": str(sum(len(addresses.get(p, [])) for p in TRAINING_POOLS)),
            "RANK": str(0 if pool == 0 else 1 + index),
        }
    return env


def output_environment(output_dir: Path) -> dict[str, str]:
    """The AIP_* directories Vertex derives from baseOutputDirectory."""
    return {
        "AIP_MODEL_DIR": f"{output_dir}/model/",
        "AIP_CHECKPOINT_DIR": f"{output_dir}/checkpoints/",
        "AIP_TENSORBOARD_LOG_DIR": f"{output_dir}/logs/",
    }


def _json(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


#: Where a job's replicas listen: below the kernel's ephemeral ports (Linux's default
#: 32768-60999, IANA's 49152-65535), which ``bind`` to port 0 and every outgoing
#: connection take. A port picked there is free only until another process's connection
#: takes it, before the replica binds it (seen: TensorFlow's "Could not start gRPC
#: server" beside a busy test run); here only a process that names the port can.
_CLUSTER_PORTS = range(20000, 32768)


def _free_port(taken: set[int]) -> int:
    """A port of ``_CLUSTER_PORTS`` that nothing listens on and ``taken`` (the job's own
    picks so far) does not hold; added to ``taken``."""
    for port in random.sample(_CLUSTER_PORTS, 100):
        if port in taken:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((LOOPBACK, port))
            except OSError:
                continue
        taken.add(port)
        return port
    raise _PrepareError(
        f"no free port on {LOOPBACK} between {_CLUSTER_PORTS.start} and "
        f"{_CLUSTER_PORTS.stop - 1} for the job's replicas: stop what listens there"
    )


def _tee(process: subprocess.Popen[bytes], output: list[bytes]) -> None:
    """Copy a step's output to this process's stdout (the supervisor log) and ``output``."""
    assert process.stdout is not None
    for line in process.stdout:
        output.append(line)
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


@dataclass
class _Replica:
    """One replica process: how to start it, and the running process."""

    pool: int
    index: int
    argv: list[str]
    env: dict[str, str]
    cwd: Path
    log: Path
    #: Container name and engine, for container replicas (removed when stopped).
    container: tuple[str, str] | None = None
    process: subprocess.Popen[bytes] | None = None
    exit_code: int | None = None
    starts: int = 0

    @property
    def name(self) -> str:
        return replica_name(self.pool, self.index)

    def start(self) -> None:
        with self.log.open("ab") as log:
            if self.starts:
                log.write(f"--- restarting {self.name} (restart {self.starts}) ---\n".encode())
                log.flush()
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.exit_code = None
        self.starts += 1

    def running(self) -> bool:
        return self.process is not None and self.exit_code is None

    def poll(self) -> int | None:
        """The exit code, once, when the process has just been seen to exit; else None.

        Whatever the process left behind in its group is killed, as a container's
        processes end with it.
        """
        if not self.running():
            return None
        assert self.process is not None
        code = self.process.poll()
        if code is not None:
            self.exit_code = code
            self._signal_group(signal.SIGKILL)
        return code

    def terminate(self) -> None:
        if self.running():
            self._signal_group(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL the process group if it still runs; remove the container if any."""
        if self.process is None:
            return
        if self.running():
            self._signal_group(signal.SIGKILL)
            self.exit_code = self.process.wait()
        if self.container is not None:
            engine, name = self.container
            remove_containers([name], (engine,))

    def _signal_group(self, signum: int) -> None:
        assert self.process is not None
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signum)


class GpuAssigner:
    """Hands each replica the accelerator count of its pool in GPUs of its own, as Vertex AI
    gives each replica its own machine: replicas in pool order take the next free indices
    ``nvidia-smi`` lists. With no GPU on this machine (``localAccelerators: cpu``, which the
    preview allowed), each replica gets none, and says so in its log."""

    def __init__(self) -> None:
        self.free = local_gpus()
        self.on_cpu = not self.free

    def take(self, replica: str, pool_spec: dict[str, Any]) -> list[str] | None:
        """The GPU indices for this replica; [] on the CPU; None when its pool has none."""
        machine = pool_spec.get("machineSpec") or {}
        count = int(machine.get("acceleratorCount") or 0)
        if not count or not str(machine.get("acceleratorType", "")).startswith("NVIDIA_"):
            return None
        if self.on_cpu:
            print(
                f"{replica}: no NVIDIA GPU on this machine: it runs on the CPU "
                f"(localAccelerators: cpu), not on {count} x {machine['acceleratorType']}",
                flush=True,
            )
            return []
        if len(self.free) < count:
            raise _PrepareError(
                f"{replica} needs {count} GPUs and only {len(self.free)} are left of this "
                "machine's; lower accelerator.count or the replicas"
            )
        taken, self.free = self.free[:count], self.free[count:]
        return taken


class Supervisor:
    """Runs one job to its end and records each state on the way."""

    def __init__(self, record: JobRecord) -> None:
        self.record = record
        self.venvs = VirtualenvCache(record.venv_root, self._run_step, self._check_cancel)

    def run(self) -> None:
        self.record.update_state(states.PENDING)
        replicas: list[_Replica] = []
        try:
            self._check_cancel()
            job = self.record.read_job()
            replicas = self._prepare(job)
            state, error = self._supervise(replicas, job["jobSpec"].get("scheduling") or {})
        except _Cancelled:
            state, error = states.CANCELLED, "cancelled"
        except (_PrepareError, InstallError) as exc:
            state, error = states.FAILED, f"the job could not start: {exc}"
        finally:
            self._stop(replicas)
        finish(self.record, state, error)

    # -- preparing -------------------------------------------------------------------

    def _prepare(self, job: dict[str, Any]) -> list[_Replica]:
        """Install packages, pick ports and build each replica's command and environment."""
        job_spec = job["jobSpec"]
        sizes = pool_sizes(job_spec)
        taken: set[int] = set()
        addresses = {
            pool: [f"{LOOPBACK}:{_free_port(taken)}" for _ in range(count)]
            for pool, count in sizes.items()
        }
        output_dir = Path(
            (job_spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
            or self.record.default_output_dir
        )
        for sub in ("model", "checkpoints", "logs"):
            (output_dir / sub).mkdir(parents=True, exist_ok=True)
        self.record.hypertune_dir.mkdir(exist_ok=True)
        inherited = {k: os.environ[k] for k in INHERITED_ENV if k in os.environ}
        gpus = GpuAssigner() if gpus_needed(job) else None
        replicas = []
        for pool, count in sizes.items():
            pool_spec = job_spec["workerPoolSpecs"][pool]
            package = pool_spec.get("pythonPackageSpec")
            run_spec = package or pool_spec["containerSpec"]
            user_env = {e["name"]: e.get("value", "") for e in run_spec.get("env") or []}
            if package:
                python = self.venvs.python_for(
                    [Path(p) for p in package["packageUris"]],
                    self._image_requirements(package.get("executorImageUri")),
                )
                command = [str(python), "-m", package["pythonModule"], *package.get("args", [])]
            else:
                engine = self._engine()
            for index in range(count):
                name = replica_name(pool, index)
                job_env = {
                    **user_env,
                    **cluster_environment(job_spec, addresses, pool, index),
                    **output_environment(output_dir),
                    "CLOUD_ML_JOB_ID": self.record.job_id,
                    "CLOUD_ML_HP_METRIC_FILE": str(self.record.hypertune_dir / f"{name}.metrics"),
                    "PYTHONUNBUFFERED": "1",
                }
                devices = gpus.take(name, pool_spec) if gpus is not None else None
                if devices is not None:
                    job_env[CUDA_VISIBLE_DEVICES] = ",".join(devices)
                where = (self.record.path, self.record.log_path(name))
                if package:
                    replicas.append(_Replica(pool, index, command, inherited | job_env, *where))
                    continue
                container = container_name(self.record.job_id, name)
                mounts = (output_dir, self.record.hypertune_dir)
                argv = _container_argv(
                    engine, container, run_spec, list(job_env), mounts, gpus=devices or []
                )
                replicas.append(
                    _Replica(
                        pool, index, argv, dict(os.environ) | job_env, *where, (engine, container)
                    )
                )
        return replicas

    @staticmethod
    def _engine() -> str:
        engine = container_engine()
        if engine is None:
            raise _PrepareError("no container engine (docker or podman) answers on this machine")
        return engine

    @staticmethod
    def _image_requirements(image: str | None) -> list[str]:
        """What the executor image carries, for the job's virtualenv (``_images``)."""
        requirements = image_requirements(image)
        if requirements is None:
            print(f"{image} is not a prebuilt training image: no framework added", flush=True)
            return []
        return requirements

    def _run_step(self, argv: list[str], cwd: Path | None) -> str:
        """Run a preparation command, its output in the supervisor log; stop it on cancel.

        Returns the command's output; StepFailed (with it) when it exits non-zero.
        """
        print(f"$ {shlex.join(argv)}", flush=True)
        process = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        output: list[bytes] = []
        reader = threading.Thread(target=_tee, args=(process, output), daemon=True)
        reader.start()
        while True:
            try:
                code = process.wait(timeout=POLL_INTERVAL_S)
                break
            except subprocess.TimeoutExpired:
                if self.record.cancel_requested():
                    process.kill()
                    process.wait()
                    reader.join()
                    raise _Cancelled from None
        reader.join()
        text = b"".join(output).decode("utf-8", errors="replace")
        if code != 0:
            raise StepFailed(argv, code, text)
        return text

    def _check_cancel(self) -> None:
        if self.record.cancel_requested():
            raise _Cancelled

    # -- running ---------------------------------------------------------------------

    def _supervise(self, replicas: list[_Replica], scheduling: dict[str, Any]) -> tuple[str, str]:
        """Run the replicas until the job ends; return its final state and error."""
        timeout_s = parse_duration_s(scheduling.get("timeout"), DEFAULT_TIMEOUT_S)
        disable_retries = bool(scheduling.get("disableRetries"))
        restart_job = bool(scheduling.get("restartJobOnWorkerRestart")) and not disable_retries
        restarts = 0
        self._start(replicas)
        deadline = time.monotonic() + timeout_s
        while True:
            self._check_cancel()
            if time.monotonic() > deadline:
                return states.FAILED, (
                    f"The job was stopped: it ran longer than its scheduling.timeout "
                    f"of {scheduling.get('timeout')}."
                )
            for replica in replicas:
                code = replica.poll()
                if code is None or code == 0:
                    continue
                if code > 0:
                    return states.FAILED, self._failure(
                        replica, f"exited with a non-zero status of {code}"
                    )
                killed = f"was killed by signal {signal.Signals(-code).name}"
                if disable_retries or restarts >= MAX_WORKER_RESTARTS:
                    return states.FAILED, self._failure(replica, killed)
                restarts += 1
                print(
                    f"{replica.name} {killed}; restart {restarts} of at most {MAX_WORKER_RESTARTS}",
                    flush=True,
                )
                targets = replicas if restart_job else [replica]
                self._stop(targets)
                self._start(targets)
                break
            if all(r.exit_code == 0 for r in replicas if r.pool in TRAINING_POOLS):
                return states.SUCCEEDED, ""
            time.sleep(POLL_INTERVAL_S)

    def _start(self, replicas: list[_Replica]) -> None:
        for replica in replicas:
            replica.start()
        self.record.write_replicas(
            {r.name: ProcessRef.of(r.process.pid) for r in replicas if r.process is not None}
        )
        self.record.update_state(states.RUNNING)

    def _failure(self, replica: _Replica, what: str) -> str:
        return (
            f"The replica {replica.name} {what}. Last lines of its log "
            f"({replica.log}):\n{tail(replica.log)}"
        )

    @staticmethod
    def _stop(replicas: list[_Replica]) -> None:
        """SIGTERM running replicas, SIGKILL what is left after CANCEL_GRACE_S."""
        for replica in replicas:
            replica.terminate()
        deadline = time.monotonic() + CANCEL_GRACE_S
        while time.monotonic() < deadline:
            for replica in replicas:
                replica.poll()
            if not any(r.running() for r in replicas):
                break
            time.sleep(POLL_INTERVAL_S)
        for replica in replicas:
            replica.kill()


def _container_argv(
    engine: str,
    name: str,
    spec: dict[str, Any],
    env_names: list[str],
    mounts: tuple[Path, ...],
    *,
    gpus: list[str],
) -> list[str]:
    """``<engine> run`` for a containerSpec: env passed by name, command as entrypoint, the
    replica's GPUs (``--gpus device=...``, which docker and podman both take)."""
    command = list(spec.get("command") or [])
    argv = [engine, "run", "--rm", "--name", name, "--network", "host"]
    if gpus:
        argv += ["--gpus", f"device={','.join(gpus)}"]
    for mount in mounts:
        argv += ["--volume", f"{mount}:{mount}"]
    for env_name in env_names:
        argv += ["--env", env_name]
    if command:
        argv += ["--entrypoint", command[0]]
    return [*argv, spec["imageUri"], *command[1:], *spec.get("args", [])]


def supervise(record: JobRecord, run: Callable[[], None] | None = None) -> bool:
    """Run the job (``run``, default ``Supervisor(record).run``) to its end; record FAILED
    on a crash and return False."""
    try:
        (run or Supervisor(record).run)()
    except Exception as exc:  # noqa: BLE001 - any crash must end the job, not leave it RUNNING
        traceback.print_exc()
        record.update_state(states.FAILED, f"the local supervisor failed: {exc!r}")
        return False
    return True
