"""A local job's record: its files, the processes it started, and how they are named.

``JobRecord`` is the directory of one job, read and written by the backend (any process)
and by the job's supervisor; ``ProcessRef`` identifies a process beyond its pid (Linux
``/proc``); beside them the JSON and log-tail IO, the resource names of local jobs, and
the waits and grace periods for stopping processes.

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
(``vertex_training.backends.local._study``) and adds::

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
import fcntl
import json
import os
import re
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vertex_training.api import states
from vertex_training.api.bodies import job_spec_of
from vertex_training.backends.base import LOCAL_NAME_ROOT
from vertex_training.backends.local._containers import container_name, remove_containers
from vertex_training.errors import PermanentError

#: How long the supervisor lets replicas stop after SIGTERM before it sends SIGKILL.
CANCEL_GRACE_S = 10.0
#: How long ``stop_processes`` waits for SIGKILLed processes to be gone.
KILL_WAIT_S = 2.0
#: Interval between two looks at a job's files while waiting for it.
WAIT_POLL_S = 0.05
#: How many lines of a failing replica's log go into the job's error message.
LOG_TAIL_LINES = 20
#: How far from the end of a log ``tail`` reads to find those lines.
TAIL_WINDOW_BYTES = 64 * 1024

#: Every local custom job's resource name starts with this; a tuning job's with the other.
#: (``backends.base.location_of`` tells a local job by that first segment.)
NAME_PREFIX = f"{LOCAL_NAME_ROOT}/customJobs/"
TUNING_NAME_PREFIX = f"{LOCAL_NAME_ROOT}/hyperparameterTuningJobs/"
#: A training pipeline's: it runs its job (either kind) in its own record.
PIPELINE_NAME_PREFIX = f"{LOCAL_NAME_ROOT}/trainingPipelines/"
_NAME_PATTERN = re.compile(
    rf"^{LOCAL_NAME_ROOT}/(?:customJobs|hyperparameterTuningJobs|trainingPipelines)/(\d+)$"
)


def job_name(job_id: str, *, tuning: bool = False, pipeline: bool = False) -> str:
    """The resource name of a local job: ``local/customJobs/<id>``,
    ``local/hyperparameterTuningJobs/<id>`` for a tuning job, or
    ``local/trainingPipelines/<id>`` for a training pipeline."""
    if pipeline:
        return f"{PIPELINE_NAME_PREFIX}{job_id}"
    return f"{TUNING_NAME_PREFIX if tuning else NAME_PREFIX}{job_id}"


def parse_job_name(name: str) -> str:
    """The job ID in a local job's resource name; PermanentError for any other name."""
    match = _NAME_PATTERN.match(name)
    if match is None:
        raise PermanentError(
            f"{name!r} is not a local job name (expected {NAME_PREFIX}<digits>, "
            f"{TUNING_NAME_PREFIX}<digits> or {PIPELINE_NAME_PREFIX}<digits>)"
        )
    return match.group(1)


def replica_name(pool: int, index: int) -> str:
    """A replica's name as Vertex uses it in web access URIs and log names."""
    return f"workerpool{pool}-{index}"


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


def process_group_members(groups: set[int]) -> set[int]:
    """Live processes whose process group is one of ``groups`` (Linux /proc; else none)."""
    members = set()
    proc = Path("/proc")
    for entry in proc.iterdir() if proc.is_dir() else ():
        fields = _proc_stat(entry.name) if entry.name.isdigit() else None
        if fields is not None and int(fields[2]) in groups:
            members.add(int(entry.name))
    return members


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
        wait_until(lambda: not any(ref.alive() for ref in refs), KILL_WAIT_S)
        # Containers are not in those groups: the engine runs them.
        with contextlib.suppress(FileNotFoundError, ValueError):
            job = json.loads(self.job_file.read_text())
            pools = job_spec_of(job).get("workerPoolSpecs") or []
            if any("containerSpec" in (pool or {}) for pool in pools):
                remove_containers([container_name(self.job_id, name) for name in self.replicas()])


def wait_until(condition: Callable[[], bool], timeout_s: float) -> bool:
    """Poll ``condition()`` every WAIT_POLL_S until it holds or ``timeout_s`` passes."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            return False
        time.sleep(WAIT_POLL_S)
    return True
