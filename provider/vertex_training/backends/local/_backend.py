"""The ``local`` backend: run a Vertex AI CustomJob or HyperparameterTuningJob on this machine.

``LocalBackend.submit`` takes the same CustomJob REST body the ``vertex`` backend sends,
writes a job record under ``root`` (``_record``, which draws the files), and starts a
detached supervisor (``python -m vertex_training.backends.local <job dir>``) in its own session,
in the project directory ``base_dir``. The
supervisor installs the job's Python packages into a cached virtualenv (or uses docker or
podman for container pools), starts one process per replica with the environment Vertex
gives a job, and records the job's state; it outlives the ``pulumi`` run that submitted it.
Every other call (get, cancel, delete, find_by_label) works from the files alone, so any
process, thread or later ``pulumi`` run sees the same jobs. ``preflight`` and
``container_engine`` let the provider refuse, at preview, a job that cannot run here.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
import json
import os
import secrets
import shutil
import signal
import site
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from vertex_training.api import states
from vertex_training.api.bodies import (
    is_tuning_body,
    job_spec_key,
    job_spec_of,
    named_output_directory,
)
from vertex_training.api.pipelines import (
    MODEL_ID_KEY,
    MODEL_KEY,
    PARENT_KEY,
    is_pipeline_body,
    task_body,
)
from vertex_training.api.scheduling import shape_of_spec
from vertex_training.backends.base import JobStatus, RegisteredModel, Trial
from vertex_training.backends.local._containers import container_engine
from vertex_training.backends.local._images import UNMAPPED_IMAGE, image_requirements
from vertex_training.backends.local._record import (
    CANCEL_GRACE_S,
    TUNING_NAME_PREFIX,
    JobRecord,
    ProcessRef,
    job_name,
    now_rfc3339,
    parse_job_name,
    process_group_members,
    read_json,
    tail,
    wait_until,
    write_json_atomic,
)
from vertex_training.backends.local._registry import PIPELINE_FILE, LocalRegistry, registered
from vertex_training.backends.local.gpus import gpu_problems
from vertex_training.errors import BackendError, Issue, PermanentError
from vertex_training.keys import LOCAL_GPU

#: How long ``cancel`` waits for the supervisor to record CANCELLED and exit, before
#: killing the job's process groups itself.
CANCEL_WAIT_S = CANCEL_GRACE_S + 5.0
#: How long ``delete`` waits for a stopped job's supervisor to exit before killing it.
DELETE_WAIT_S = 10.0
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
#: The package the supervisor runs (``python -m vertex_training.backends.local``).
_SUPERVISOR_PACKAGE = "vertex_training"


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
    (``_images``). Each issue's key is ``<key_prefix>.<stack config key>``, e.g.
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
    images: dict[str, str] = {}
    for position, pool in enumerate(job_spec_of(body).get("workerPoolSpecs") or []):
        image = ((pool or {}).get("pythonPackageSpec") or {}).get("executorImageUri")
        if image and image_requirements(image) is None:
            images.setdefault(image, f"{POOL_CONFIG_KEYS[position]}python_package.executor_image")
    return [(key, image, UNMAPPED_IMAGE) for image, key in images.items()]


def console_url_at(root: Path, name: str) -> str:
    """``LocalBackend(root).console_url(name)``, with no backend made (the stack outputs
    derive it in the program)."""
    return JobRecord(root, parse_job_name(name)).path.as_uri()


def output_directory_at(root: Path, name: str, named: str) -> str:
    """``LocalBackend(root).output_directory(name)`` of a job whose request names
    ``named`` as its base output directory ("" for none), with no backend made."""
    return named or str(JobRecord(root, parse_job_name(name)).default_output_dir)


def logs_url_at(root: Path, name: str) -> str:
    """``LocalBackend(root).logs_url(name)``, with no backend made."""
    record = JobRecord(root, parse_job_name(name))
    if name.startswith(TUNING_NAME_PREFIX) or _runs_study(record):
        return record.supervisor_log.as_uri()
    return record.log_path(_PRIMARY_REPLICA).as_uri()


def _runs_study(record: JobRecord) -> bool:
    """Whether a (pipeline's) record runs a tuning job; False when it cannot be read."""
    try:
        return is_tuning_body(record.read_job())
    except (FileNotFoundError, ValueError):
        return False


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
        the study (``vertex_training.backends.local._study``). A training pipeline's body
        runs its job in the same way, then registers the model in the local registry
        (``vertex_training.backends.local._registry``).
        """
        pipeline = is_pipeline_body(body)
        job = _localized(task_body(body) if pipeline else body, self.base_dir)
        record = self._new_record()
        name = job_name(record.job_id, tuning=is_tuning_body(job), pipeline=pipeline)
        try:
            record.logs_dir.mkdir()
            if pipeline:
                upload = {k: body[k] for k in (MODEL_KEY, MODEL_ID_KEY, PARENT_KEY) if k in body}
                write_json_atomic(record.path / PIPELINE_FILE, upload)
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
                    [sys.executable, "-m", "vertex_training.backends.local", str(record.path)],
                    cwd=self.base_dir,
                    env=_supervisor_environment(),
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

    def find_model(self, model_id: str, owner_labels: Mapping[str, str]) -> str | None:
        """The local model a pipeline registers its next version of, or None."""
        return LocalRegistry(self.root).find(model_id, owner_labels)

    def model_versions(self, model: str) -> list[RegisteredModel]:
        """Every version of the local model ``model``, oldest first."""
        return LocalRegistry(self.root).versions(model)

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
        wait_until(lambda: not _supervisor_alive(record), CANCEL_WAIT_S)
        if not _ended(record):
            record.stop_processes()
            with contextlib.suppress(FileNotFoundError):
                record.update_state(states.CANCELLED, "cancelled")

    def delete(self, name: str) -> None:
        """Cancel the job if it still runs, wait for its supervisor to exit, remove the
        record (a pipeline's model stays in the local registry)."""
        record = self._record(name)
        if not record.path.exists():
            return
        self.cancel(name)
        supervisor = record.supervisor()
        if supervisor is not None and not wait_until(lambda: not supervisor.alive(), DELETE_WAIT_S):
            supervisor.signal_group(signal.SIGKILL)
        trash = self.root / f"_deleted-{record.job_id}-{secrets.token_hex(4)}"
        try:
            os.rename(record.path, trash)
        except FileNotFoundError:
            return
        shutil.rmtree(trash, ignore_errors=True)

    def console_url(self, name: str) -> str:
        """A file:// URI of the job's directory."""
        return console_url_at(self.root, name)

    def logs_url(self, name: str) -> str:
        """A file:// URI of the primary replica's log (of the study's log, which names each
        trial's, for a tuning job)."""
        return logs_url_at(self.root, name)

    def log_tail(self, name: str, replica: str, lines: int, end_time: str = "") -> list[str]:
        """The last ``lines`` lines of the replica's log file (``logs/<replica>.log``)."""
        path = self._record(name).log_path(replica)
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise BackendError(f"{path}: {exc.strerror or exc}") from exc
        return text.rstrip("\n").splitlines()[-lines:] if lines > 0 else []

    def output_directory(self, name: str) -> str:
        """The job's base output directory, as an absolute path; kept when it is deleted.

        A tuning job's trials write under ``<this>/<trial id>/``.
        """
        job = json.loads(self._record(name).job_file.read_text())
        return output_directory_at(self.root, name, named_output_directory(job))

    def pids(self, name: str) -> list[int]:
        """The job's live processes: supervisor, replicas (every trial's), and the rest of
        their groups."""
        record = self._record(name)
        refs = record.process_refs()
        leaders = {ref.pid for ref in refs if ref.alive()}
        return sorted(leaders | process_group_members({ref.pid for ref in refs}))

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
        pools, strategy = shape_of_spec(job.get("trialJobSpec") or job.get("jobSpec") or {})
        return JobStatus(
            name=job.get("name") or record.name,
            state=state["state"],
            display_name=job.get("displayName", ""),
            error=state.get("error", ""),
            error_code=_error_code(state),
            pools=pools,
            strategy=strategy,
            create_time=state.get("createTime", ""),
            start_time=state.get("startTime", ""),
            end_time=state.get("endTime", ""),
            labels=dict(job.get("labels") or {}),
            trials=[_trial(t) for t in record.read_trials()],
            metric_id=metrics[0].get("metricId", ""),
            goal=metrics[0].get("goal", "") if "studySpec" in job else "",
            max_trials=int(job.get("maxTrialCount") or 0),
            model=registered(record),
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


def _error_code(state: dict[str, Any]) -> int:
    """The google.rpc code a local job's error would carry on Vertex AI: CANCELLED (1)
    for a cancelled job, INVALID_ARGUMENT (3, as Vertex AI gives a replica's non-zero
    exit) for a failed one, 0 otherwise."""
    if state.get("state") == states.CANCELLED:
        return 1
    return 3 if state.get("state") == states.FAILED and state.get("error") else 0


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


def _supervisor_environment() -> dict[str, str]:
    """The environment of a job's supervisor: this process's, with the directory this
    process imports the ``vertex_training`` package from first on PYTHONPATH.

    The supervisor runs in the project directory (``base_dir``), not where the package
    lives, and must import this same package: from a checkout, an installed copy or a
    ``PYTHONPATH`` entry alike. A directory this interpreter searches anyway (its site
    packages) is not added, so that nothing of the provider's environment reaches the
    supervisor's pip steps through PYTHONPATH.
    """
    env = dict(os.environ)
    spec = importlib.util.find_spec(_SUPERVISOR_PACKAGE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return env
    import_root = str(Path(locations[0]).resolve().parent)
    searched = {str(Path(p).resolve()) for p in site.getsitepackages()}
    entries = [e for e in env.get("PYTHONPATH", "").split(os.pathsep) if e]
    if import_root not in searched and import_root not in entries:
        env["PYTHONPATH"] = os.pathsep.join([import_root, *entries])
    return env
