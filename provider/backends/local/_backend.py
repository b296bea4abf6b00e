"""The ``local`` backend: run a Vertex AI CustomJob or HyperparameterTuningJob on this machine.

``LocalBackend.submit`` takes the same CustomJob REST body the ``vertex`` backend sends,
writes a job record under ``root``, and starts a detached supervisor
(``python -m provider.backends.local <job dir>``) in its own session. The
supervisor installs the job's Python packages into a cached virtualenv (or uses docker or
podman for container pools), starts one process per replica with the environment Vertex
gives a job, and records the job's state; it outlives the ``pulumi`` run that submitted it.
Every other call (get, cancel, delete, find_by_label) works from the files alone, so any
process, thread or later ``pulumi`` run sees the same jobs. ``preflight`` and
``container_engine`` let the provider refuse, at preview, a job that cannot run here.

On-disk layout::

    root/
      _venvs/<hash>/          cached job virtualenvs, one per set of package contents,
                              image requirements and interpreter
      _venvs/<hash>.lock      held while that virtualenv is built
      _wheels/                the wheels of jobs' dependencies, shared (offline installs)
      <job-id>/
        job.json              the request body (package and output paths made absolute) + name
        state.json            state, error, createTime, startTime, endTime
        state.lock            serializes state transitions (fcntl.flock)
        supervisor.json       pid and kernel start time of the supervisor
        replicas.json         pid and kernel start time of each replica process
        cancel                present once a cancel was requested
        hypertune/            cloudml-hypertune metric files, one per replica
        logs/supervisor.log   the supervisor and package installation output
        logs/workerpool<P>-<I>.log   stdout and stderr of replica I of pool P
      outputs/<job-id>/       default base output directory (model/, checkpoints/, logs/),
                              kept when the job's record is deleted

A hyperparameter tuning job (a body with a ``studySpec``) has the same record, named
``local/hyperparameterTuningJobs/<id>``; its supervisor runs a real study
(``provider.backends.local._study``) and adds::

      <job-id>/
        trials.json           every trial: id, state, parameters, metrics, times, reason
        trials/<trial-id>/    each trial's own job record (job.json, state.json, logs/,
                              hypertune/, replicas.json), run as a local custom job
      outputs/<job-id>/<trial-id>/   each trial's base output directory (unless named)

Every JSON file is written atomically (temporary file, then ``os.replace``); a state that
is terminal never changes again.
"""

from __future__ import annotations

import contextlib
import copy
import fcntl
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from provider.api import states
from provider.backends.base import (
    JobStatus,
    Trial,
    is_tuning_body,
    job_spec_key,
    job_spec_of,
)
from provider.backends.local._images import UNMAPPED_IMAGE, image_requirements
from provider.backends.local.gpus import LOCAL_GPU, gpu_problems
from provider.errors import BackendError, Issue, PermanentError

#: Container engines tried in order; the first whose daemon answers runs container jobs.
CONTAINER_ENGINES = ("docker", "podman")
#: Every container a local job starts is named ``<prefix><job id>-<replica>``.
CONTAINER_PREFIX = "vertex-training-"
#: How long ``<engine> info`` may take before the engine counts as absent.
ENGINE_PROBE_TIMEOUT_S = 5.0
#: How long the supervisor lets replicas stop after SIGTERM before it sends SIGKILL.
CANCEL_GRACE_S = 10.0
#: How long ``cancel`` waits for the supervisor to record CANCELLED and exit, before
#: killing the job's process groups itself.
CANCEL_WAIT_S = CANCEL_GRACE_S + 5.0
#: How long ``delete`` waits for a stopped job's supervisor to exit before killing it.
DELETE_WAIT_S = 10.0
#: How long ``stop_processes`` waits for SIGKILLed processes to be gone.
KILL_WAIT_S = 2.0
#: Interval between two looks at a job's files while waiting for it.
WAIT_POLL_S = 0.05
#: How many lines of a failing replica's log go into the job's error message.
LOG_TAIL_LINES = 20
#: How far from the end of a log ``tail`` reads to find those lines.
TAIL_WINDOW_BYTES = 64 * 1024

#: Every local custom job's resource name starts with this; a tuning job's with the other.
NAME_PREFIX = "local/customJobs/"
TUNING_NAME_PREFIX = "local/hyperparameterTuningJobs/"
_NAME_PATTERN = re.compile(r"^local/(?:customJobs|hyperparameterTuningJobs)/(\d+)$")
_PRIMARY_REPLICA = "workerpool0-0"
#: Stack config key of each worker pool position (docs/config-shape.md), for issue keys.
POOL_CONFIG_KEYS = {0: "", 1: "workers.", 2: "parameter_servers.", 3: "evaluators."}
_REDUCTION_SERVER_IMAGE = "/training/reductionserver"
NO_ENGINE = (
    "the local backend runs container images with docker or podman, and no container "
    "engine answers on this machine (`docker info` and `podman info` fail); start Docker "
    "or Podman, or give python_package instead of image"
)
REMOTE_PACKAGE = (
    "the local backend installs packages from this machine: give a package directory, "
    "wheel or sdist as a local path or file:// URI"
)
EMPTY_PACKAGES = "give at least one package directory, wheel or sdist"
REMOTE_OUTPUT = (
    "the local backend writes outputs on this machine: give a local directory or a file:// URI"
)
_REPO_ROOT = Path(__file__).resolve().parents[3]


def job_name(job_id: str, *, tuning: bool = False) -> str:
    """The resource name of a local job: ``local/customJobs/<id>``, or
    ``local/hyperparameterTuningJobs/<id>`` for a tuning job."""
    return f"{TUNING_NAME_PREFIX if tuning else NAME_PREFIX}{job_id}"


def parse_job_name(name: str) -> str:
    """The job ID in a local job's resource name; PermanentError for any other name."""
    match = _NAME_PATTERN.match(name)
    if match is None:
        raise PermanentError(
            f"{name!r} is not a local job name (expected {NAME_PREFIX}<digits> or "
            f"{TUNING_NAME_PREFIX}<digits>)"
        )
    return match.group(1)


def replica_name(pool: int, index: int) -> str:
    """A replica's name as Vertex uses it in web access URIs and log names."""
    return f"workerpool{pool}-{index}"


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


def local_path(uri: str, base_dir: Path) -> Path | None:
    """The absolute local path of a path (relative to ``base_dir``) or ``file://`` URI.

    None for any other URI scheme (gs://, https://, ...), which the local backend cannot use.
    """
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(parsed.path)
    if parsed.scheme:
        return None
    return Path(os.path.normpath(base_dir / uri))


def preflight(
    body: dict[str, Any],
    key_prefix: str = "",
    base_dir: str | Path | None = None,
    accelerators: str = LOCAL_GPU,
) -> list[Issue]:
    """What would stop this job on the local backend, found before submission.

    Checks that package URIs and the base output directory are local (relative paths
    resolve against ``base_dir``, default the current directory) and that the packages
    exist, that a container engine answers when a pool runs a container, and that this
    machine has the GPUs the job asks for (or, with ``accelerators`` ``cpu``, none at
    all), and that each executor image is one whose framework the job's virtualenv gets
    (``_local_images``). Each issue's key is ``<key_prefix>.<stack config key>``, e.g.
    ``vertex-training:jobs.mnist.workers.python_package.package_uris``.
    """
    base = Path(base_dir) if base_dir is not None else Path.cwd()
    return [
        Issue(f"{key_prefix}.{key}" if key_prefix else key, value, message)
        for key, value, message in [
            *_local_problems(body, base),
            *_image_problems(body),
            *(
                (f"{POOL_CONFIG_KEYS[position]}accelerator.count", count, message)
                for position, count, message in gpu_problems(body, accelerators)
            ),
        ]
    ]


def _image_problems(body: dict[str, Any]) -> list[tuple[str, object, str]]:
    """Each executor image (once, at the first pool naming it) that maps to no framework."""
    images = {}
    for position, pool in enumerate(job_spec_of(body).get("workerPoolSpecs") or []):
        image = ((pool or {}).get("pythonPackageSpec") or {}).get("executorImageUri")
        if image and image_requirements(image) is None:
            images.setdefault(image, f"{POOL_CONFIG_KEYS[position]}python_package.executor_image")
    return [(key, image, UNMAPPED_IMAGE) for image, key in images.items()]


def now_rfc3339() -> str:
    """The current UTC time in RFC 3339 form, as Vertex timestamps are written."""
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON to ``path`` so that readers see the old file or the new one, never a mix."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def read_json(path: Path) -> Any:
    """Read a JSON file; FileNotFoundError when it is not there."""
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    """The last ``lines`` lines of a text file, or "" when it does not exist."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - TAIL_WINDOW_BYTES))
            text = handle.read().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""
    return "\n".join(text.rstrip("\n").splitlines()[-lines:])


@dataclass(frozen=True)
class ProcessRef:
    """A process that leads its own process group, identified beyond its pid.

    ``start`` is the kernel's start time of the process (Linux ``/proc/<pid>/stat``), so
    that a pid reused after a reboot is not mistaken for the job's process. Where /proc
    does not exist, ``start`` is None and only the pid is checked.
    """

    pid: int
    start: str | None

    @classmethod
    def of(cls, pid: int) -> ProcessRef:
        """Reference a running process by pid."""
        return cls(pid, _kernel_start_time(pid))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcessRef:
        return cls(int(data["pid"]), data.get("start"))

    def to_json(self) -> dict[str, Any]:
        return {"pid": self.pid, "start": self.start}

    def alive(self) -> bool:
        """Whether this very process still runs (a zombie does not count)."""
        if Path("/proc").is_dir():
            return self.start is not None and _kernel_start_time(self.pid) == self.start
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def signal_group(self, signum: int) -> None:
        """Send ``signum`` to the process's whole group, if the process still runs."""
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signum)


def _kernel_start_time(pid: int) -> str | None:
    """The start time of a live process from /proc, or None (gone, zombie, no /proc)."""
    fields = _proc_stat(str(pid))
    return fields[19] if fields is not None else None


def _proc_stat(pid: str) -> list[str] | None:
    """Fields 3 onwards of /proc/<pid>/stat (state, ppid, pgrp, ...); None if gone or zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    return None if fields[0] in ("Z", "X") else fields


class JobRecord:
    """The files of one local job, under ``root/<job-id>/``."""

    def __init__(self, root: Path, job_id: str, venv_root: Path | None = None) -> None:
        """``venv_root``: where the job's virtualenvs are cached (default ``root/_venvs``;
        a tuning job's trials share their job's)."""
        self.root = root
        self.job_id = job_id
        self._venv_root = venv_root
        self.path = root / job_id
        self.job_file = self.path / "job.json"
        self.state_file = self.path / "state.json"
        self.lock_file = self.path / "state.lock"
        self.supervisor_file = self.path / "supervisor.json"
        self.replicas_file = self.path / "replicas.json"
        self.cancel_file = self.path / "cancel"
        self.logs_dir = self.path / "logs"
        self.hypertune_dir = self.path / "hypertune"
        self.supervisor_log = self.logs_dir / "supervisor.log"
        self.trials_file = self.path / "trials.json"
        self.trials_dir = self.path / "trials"
        # Outside the record, so that deleting a job (a replacement, `pulumi destroy`)
        # never deletes the model it trained.
        self.default_output_dir = root / "outputs" / job_id

    @property
    def name(self) -> str:
        return job_name(self.job_id)

    @property
    def venv_root(self) -> Path:
        """Where cached job virtualenvs live (shared by all jobs under the same root)."""
        return self._venv_root or self.root / "_venvs"

    def trial_record(self, trial_id: str) -> JobRecord:
        """The record of one trial of this (tuning) job."""
        return JobRecord(self.trials_dir, trial_id, venv_root=self.venv_root)

    def trial_records(self) -> list[JobRecord]:
        """The records of this job's trials (none for a custom job)."""
        if not self.trials_dir.is_dir():
            return []
        return [self.trial_record(p.name) for p in sorted(self.trials_dir.iterdir()) if p.is_dir()]

    def read_trials(self) -> list[dict[str, Any]]:
        """A tuning job's trials as its supervisor last recorded them ([] before any)."""
        try:
            return list(read_json(self.trials_file))
        except FileNotFoundError:
            return []

    def process_refs(self) -> list[ProcessRef]:
        """The supervisor, the replicas, and the replicas of every trial."""
        refs = [ref for ref in (self.supervisor(), *self.replicas().values()) if ref]
        for trial in self.trial_records():
            refs += trial.process_refs()
        return refs

    def log_path(self, replica: str) -> Path:
        return self.logs_dir / f"{replica}.log"

    def read_job(self) -> dict[str, Any]:
        return dict(read_json(self.job_file))

    def read_state(self) -> dict[str, Any]:
        return dict(read_json(self.state_file))

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the job's state lock (across threads and processes)."""
        with self.lock_file.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def update_state(self, state: str, error: str = "") -> dict[str, Any]:
        """Move the job to ``state`` unless it already ended; return the state recorded.

        RUNNING sets startTime the first time; a terminal state sets endTime.
        """
        with self.locked():
            current = self.read_state()
            if current["state"] in states.TERMINAL_STATES:
                return current
            current["state"] = state
            current["error"] = error
            if state == states.RUNNING and not current.get("startTime"):
                current["startTime"] = now_rfc3339()
            if state in states.TERMINAL_STATES:
                current["endTime"] = now_rfc3339()
            write_json_atomic(self.state_file, current)
            return current

    def supervisor(self) -> ProcessRef | None:
        try:
            return ProcessRef.from_json(read_json(self.supervisor_file))
        except FileNotFoundError:
            return None

    def replicas(self) -> dict[str, ProcessRef]:
        try:
            data = read_json(self.replicas_file)
        except FileNotFoundError:
            return {}
        return {name: ProcessRef.from_json(ref) for name, ref in data.items()}

    def write_replicas(self, refs: dict[str, ProcessRef]) -> None:
        write_json_atomic(self.replicas_file, {n: r.to_json() for n, r in refs.items()})

    def cancel_requested(self) -> bool:
        return self.cancel_file.exists()

    def request_cancel(self) -> None:
        write_json_atomic(self.cancel_file, {"requestedAt": now_rfc3339()})

    def stop_processes(self) -> None:
        """SIGKILL the supervisor's and every recorded replica's (a trial's too) process
        group, and wait (at most KILL_WAIT_S) until their leaders are gone."""
        refs = self.process_refs()
        for ref in refs:
            ref.signal_group(signal.SIGKILL)
        _wait(lambda: not any(ref.alive() for ref in refs), KILL_WAIT_S)
        # Containers are not in those groups: the engine runs them.
        with contextlib.suppress(FileNotFoundError, ValueError):
            job = json.loads(self.job_file.read_text())
            pools = job_spec_of(job).get("workerPoolSpecs") or []
            if any("containerSpec" in (pool or {}) for pool in pools):
                remove_containers([container_name(self.job_id, name) for name in self.replicas()])


class LocalBackend:
    """Runs Vertex AI CustomJobs as processes on this machine; records live under ``root``."""

    def __init__(self, root: str | Path, base_dir: str | Path | None = None) -> None:
        """Keep job records under ``root``; resolve relative paths in jobs against
        ``base_dir`` (the Pulumi project directory; default the current directory)."""
        self.root = Path(root).resolve()
        self.base_dir = Path(base_dir).resolve() if base_dir is not None else Path.cwd()

    # -- Backend protocol ------------------------------------------------------------

    def submit(self, body: dict[str, Any]) -> JobStatus:
        """Record the job, start its supervisor, and return it QUEUED.

        A body with a ``studySpec`` is a hyperparameter tuning job: its supervisor runs
        the study (``provider.backends.local._study``).
        """
        job = _localized(body, self.base_dir)
        record = self._new_record()
        name = job_name(record.job_id, tuning=is_tuning_body(job))
        try:
            record.logs_dir.mkdir()
            write_json_atomic(
                record.state_file,
                {
                    "state": states.QUEUED,
                    "error": "",
                    "createTime": now_rfc3339(),
                    "startTime": "",
                    "endTime": "",
                },
            )
            write_json_atomic(record.job_file, {**job, "name": name})
            with record.supervisor_log.open("ab") as log:
                process = subprocess.Popen(
                    [sys.executable, "-m", "provider.backends.local", str(record.path)],
                    cwd=_REPO_ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            write_json_atomic(record.supervisor_file, ProcessRef.of(process.pid).to_json())
        except OSError as exc:
            shutil.rmtree(record.path, ignore_errors=True)
            raise BackendError(f"could not start local job {name}: {exc}") from exc
        return self._status(record, {**job, "name": name}, record.read_state())

    def get(self, name: str) -> JobStatus | None:
        """The job's status, or None when its record is gone.

        A job whose supervisor died without recording an end (machine rebooted, process
        killed) is recorded FAILED here, and any replica it left behind is stopped.
        """
        record = self._record(name)
        try:
            job = record.read_job()
            state = record.read_state()
        except FileNotFoundError:
            return None
        if job.get("name", name) != name:
            return None  # the other kind of job has this ID
        if state["state"] not in states.TERMINAL_STATES and not _supervisor_alive(record):
            record.stop_processes()
            state = record.update_state(states.FAILED, _supervisor_stopped_message(record))
        return self._status(record, job, state)

    def find_by_label(self, key: str, value: str) -> list[JobStatus]:
        """The jobs (custom and tuning) labelled ``key=value``, newest first."""
        if not self.root.is_dir():
            return []
        found = []
        for path in self.root.iterdir():
            if not path.name.isdigit():
                continue
            try:
                job = read_json(path / "job.json")
            except (FileNotFoundError, NotADirectoryError):
                continue
            if (job.get("labels") or {}).get(key) == value:
                status = self.get(job.get("name") or job_name(path.name))
                if status is not None:
                    found.append(status)
        return sorted(found, key=lambda s: (s.create_time, s.job_id), reverse=True)

    def cancel(self, name: str) -> None:
        """Stop the job and its whole process tree (every trial's, for a tuning job); it
        ends CANCELLED.

        The supervisor stops the replicas (SIGTERM, then SIGKILL after CANCEL_GRACE_S) and
        records CANCELLED; when it has not done so within CANCEL_WAIT_S, or is gone, the
        process groups are killed here and CANCELLED recorded.
        """
        record = self._record(name)
        try:
            if record.read_state()["state"] in states.TERMINAL_STATES:
                return
            record.request_cancel()
        except FileNotFoundError:
            return
        _wait(lambda: not _supervisor_alive(record), CANCEL_WAIT_S)
        if not _ended(record):
            record.stop_processes()
            with contextlib.suppress(FileNotFoundError):
                record.update_state(states.CANCELLED, "cancelled")

    def delete(self, name: str) -> None:
        """Cancel the job if it still runs, wait for its supervisor to exit, remove the record."""
        record = self._record(name)
        if not record.path.exists():
            return
        self.cancel(name)
        supervisor = record.supervisor()
        if supervisor is not None and not _wait(lambda: not supervisor.alive(), DELETE_WAIT_S):
            supervisor.signal_group(signal.SIGKILL)
        trash = self.root / f"_deleted-{record.job_id}-{secrets.token_hex(4)}"
        try:
            os.rename(record.path, trash)
        except FileNotFoundError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def console_url(self, name: str) -> str:
        """A file:// URI of the job's directory."""
        return self._record(name).path.as_uri()

    def logs_url(self, name: str) -> str:
        """A file:// URI of the primary replica's log (of the study's log, which names each
        trial's, for a tuning job)."""
        record = self._record(name)
        if name.startswith(TUNING_NAME_PREFIX):
            return record.supervisor_log.as_uri()
        return record.log_path(_PRIMARY_REPLICA).as_uri()

    def output_directory(self, name: str) -> str:
        """The job's base output directory, as an absolute path; kept when it is deleted.

        A tuning job's trials write under ``<this>/<trial id>/``.
        """
        record = self._record(name)
        job = json.loads(record.job_file.read_text())
        named = job_spec_of(job).get("baseOutputDirectory", {}).get("outputUriPrefix")
        return named or str(record.default_output_dir)

    def pids(self, name: str) -> list[int]:
        """The job's live processes: supervisor, replicas (every trial's), and the rest of
        their groups."""
        record = self._record(name)
        refs = record.process_refs()
        leaders = {ref.pid for ref in refs if ref.alive()}
        return sorted(leaders | _process_group_members({ref.pid for ref in refs}))

    # -- helpers ---------------------------------------------------------------------

    def _record(self, name: str) -> JobRecord:
        return JobRecord(self.root, parse_job_name(name))

    def _new_record(self) -> JobRecord:
        """Create the directory of a new job with a fresh numeric ID, like Vertex's."""
        self.root.mkdir(parents=True, exist_ok=True)
        while True:
            job_id = f"{time.time_ns() // 1000}{secrets.randbelow(1000):03d}"
            record = JobRecord(self.root, job_id)
            try:
                record.path.mkdir()
            except FileExistsError:
                continue
            return record

    @staticmethod
    def _status(record: JobRecord, job: dict[str, Any], state: dict[str, Any]) -> JobStatus:
        metrics = (job.get("studySpec") or {}).get("metrics") or [{}]
        return JobStatus(
            name=job.get("name") or record.name,
            state=state["state"],
            display_name=job.get("displayName", ""),
            error=state.get("error", ""),
            create_time=state.get("createTime", ""),
            start_time=state.get("startTime", ""),
            end_time=state.get("endTime", ""),
            labels=dict(job.get("labels") or {}),
            trials=[_trial(t) for t in record.read_trials()],
            metric_id=metrics[0].get("metricId", ""),
            goal=metrics[0].get("goal", "") if "studySpec" in job else "",
            max_trials=int(job.get("maxTrialCount") or 0),
        )


def _localized(body: dict[str, Any], base_dir: Path) -> dict[str, Any]:
    """The request body with absolute local paths; PermanentError for what cannot run here."""
    key = job_spec_key(body)
    spec = job_spec_of(body)
    pools = spec.get("workerPoolSpecs") or []
    if not pools or not pools[0]:
        raise PermanentError(f"{key}.workerPoolSpecs[0] (the primary replica) is required")
    for position, pool in enumerate(pools):
        if pool and ("containerSpec" in pool) == ("pythonPackageSpec" in pool):
            raise PermanentError(
                f"{key}.workerPoolSpecs[{position}]: give exactly one of containerSpec "
                "and pythonPackageSpec"
            )
    problems = _local_problems(body, base_dir)
    if problems:
        raise PermanentError("; ".join(str(Issue(*problem)) for problem in problems))
    job = copy.deepcopy(body)
    for pool in job[key]["workerPoolSpecs"]:
        if pool and "pythonPackageSpec" in pool:
            package = pool["pythonPackageSpec"]
            package["packageUris"] = [
                str(local_path(uri, base_dir)) for uri in package["packageUris"]
            ]
    output = job[key].get("baseOutputDirectory", {}).get("outputUriPrefix")
    if output:
        job[key]["baseOutputDirectory"]["outputUriPrefix"] = str(local_path(output, base_dir))
    return job


def _local_problems(body: dict[str, Any], base_dir: Path) -> list[tuple[str, object, str]]:
    """(stack config key, value, message) of each thing the local backend cannot run."""
    spec = job_spec_of(body)
    problems: list[tuple[str, object, str]] = []
    engine_checked = False
    for position, pool in enumerate(spec.get("workerPoolSpecs") or []):
        if not pool:
            continue
        key = POOL_CONFIG_KEYS[position]
        package = pool.get("pythonPackageSpec")
        if package is not None:
            uris = package.get("packageUris") or []
            if not uris:
                problems.append((f"{key}python_package.package_uris", uris, EMPTY_PACKAGES))
            for uri in uris:
                path = local_path(uri, base_dir)
                if path is None:
                    problems.append((f"{key}python_package.package_uris", uri, REMOTE_PACKAGE))
                elif not path.exists():
                    message = f"{path} does not exist; give a package directory, wheel or sdist"
                    problems.append((f"{key}python_package.package_uris", uri, message))
        elif "containerSpec" in pool and not engine_checked:
            engine_checked = True
            if container_engine() is None:
                image = pool["containerSpec"].get("imageUri", "")
                if position == 2 and _REDUCTION_SERVER_IMAGE in image:
                    key = "reduction_server."
                problems.append((f"{key}image", image, NO_ENGINE))
    output = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix")
    if output and local_path(output, base_dir) is None:
        problems.append(("base_output_directory", output, REMOTE_OUTPUT))
    return problems


def _trial(data: dict[str, Any]) -> Trial:
    """A trial as the study supervisor records it in trials.json."""
    return Trial(
        id=data["id"],
        state=data["state"],
        parameters=dict(data.get("parameters") or {}),
        metrics=dict(data.get("metrics") or {}),
        start_time=data.get("startTime", ""),
        end_time=data.get("endTime", ""),
        infeasible_reason=data.get("infeasibleReason", ""),
    )


def _process_group_members(groups: set[int]) -> set[int]:
    """Live processes whose process group is one of ``groups`` (Linux /proc; else none)."""
    members = set()
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        fields = _proc_stat(entry.name) if entry.name.isdigit() else None
        if fields is not None and int(fields[2]) in groups:
            members.add(int(entry.name))
    return members


def _ended(record: JobRecord) -> bool:
    """Whether the job's state is terminal (or its record is gone)."""
    try:
        return record.read_state()["state"] in states.TERMINAL_STATES
    except FileNotFoundError:
        return True


def _supervisor_alive(record: JobRecord) -> bool:
    """Whether the job's supervisor runs; True while submit has not recorded it yet."""
    supervisor = record.supervisor()
    return supervisor is None or supervisor.alive()


def _supervisor_stopped_message(record: JobRecord) -> str:
    message = "the local supervisor stopped before the job ended"
    last_lines = tail(record.supervisor_log)
    return (
        f"{message}; last lines of {record.supervisor_log}:\n{last_lines}"
        if last_lines
        else message
    )


def _wait(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Poll ``condition()`` every WAIT_POLL_S until it holds or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(WAIT_POLL_S)
    return True
