"""The rules of a job's own settings in the job resolver: scheduling (flex-start's limits),
the wait, the service account and networking, an adopted job's name, the jobs a job runs
after."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from vertex_training.api.bodies import SPECIFIC_RESERVATION as SPECIFIC
from vertex_training.catalog import machines
from vertex_training.errors import Issue
from vertex_training.stackconfig._config import JobConfig, SchedulingConfig, WaitConfig
from vertex_training.stackconfig._constants import (
    _JOB_RESOURCE_RE,
    _KMS_KEY_RE,
    CUSTOM_JOBS,
    FLEX_START,
    GCS_PREFIX,
    JOBS_KEY,
    TUNING_JOBS,
)
from vertex_training.stackconfig._issues import full_key, one_of
from vertex_training.stackconfig._job import Scheduling, StackSettings, WorkerPool

#: A job ``run_after`` may name: a Vertex AI custom or tuning job, or a local one.
_RUN_AFTER_RE = re.compile(
    rf"(projects/[^/\s]+/locations/[^/\s]+|local)/({CUSTOM_JOBS}|{TUNING_JOBS})/\d+"
)


class JobSettingsRules:
    """The job-settings rules of the job resolver; the resolver provides what is declared
    here."""

    name: str
    config: JobConfig
    stack: StackSettings
    vertex: bool
    region: str
    warnings: list[Issue]

    def fail(self, path: Sequence[str | int], value: Any, message: str) -> None:
        """Record an issue (the resolver's)."""
        raise NotImplementedError

    def _resolve_scheduling(self) -> Scheduling:
        config = self.config.scheduling or SchedulingConfig()
        if config.max_wait_duration is not None and config.strategy != FLEX_START:
            self.fail(
                ("scheduling", "max_wait_duration"),
                config.max_wait_duration,
                "max_wait_duration applies only with strategy: FLEX_START; set that strategy "
                "or remove max_wait_duration",
            )
        return Scheduling(
            timeout_s=config.timeout,
            restart_job_on_worker_restart=config.restart_job_on_worker_restart,
            disable_retries=config.disable_retries,
            strategy=config.strategy,
            max_wait_duration_s=config.max_wait_duration,
        )

    def _check_wait(self, wait: WaitConfig) -> None:
        """``wait.start_timeout`` bounds a wait for the job to run: it needs ``until:
        running`` or ``succeeded``, and is shorter than the whole wait's ``timeout``."""
        if wait.start_timeout is None:
            return
        if wait.until == "submitted":
            self.fail(
                ("wait", "start_timeout"),
                wait.start_timeout,
                "start_timeout bounds the wait for the job to start running; set "
                "wait.until to running or succeeded, or remove start_timeout",
            )
        elif wait.start_timeout > wait.timeout:
            self.fail(
                ("wait", "start_timeout"),
                wait.start_timeout,
                f"must not be longer than wait.timeout ({wait.timeout}s), which bounds the "
                "whole wait; shorten it or lengthen timeout",
            )

    def _check_job_settings(self, service_account: str | None, tensorboard: str | None) -> None:
        config = self.config
        if tensorboard and not service_account:
            self.fail(
                ("tensorboard",),
                config.tensorboard,
                "a job that writes to a TensorBoard needs service_account (one with "
                "roles/aiplatform.user and storage access); set service_account",
            )
        if config.reserved_ip_ranges and not config.network:
            self.fail(
                ("reserved_ip_ranges",),
                config.reserved_ip_ranges,
                "reserved IP ranges belong to a peered VPC network: set network as well",
            )
        self._check_run_after(config.run_after or [])
        if not self.vertex:
            return
        if config.base_output_directory and not config.base_output_directory.startswith(GCS_PREFIX):
            self.fail(
                ("base_output_directory",),
                config.base_output_directory,
                "the vertex backend writes outputs to Cloud Storage: write gs://bucket/path "
                "(local paths work on the local backend only)",
            )
        if config.kms_key and self.region:
            match = _KMS_KEY_RE.fullmatch(config.kms_key)
            if match and match["location"] != self.region:
                self.fail(
                    ("kms_key",),
                    config.kms_key,
                    f"the key must be in the job's region ({self.region}), not "
                    f"{match['location']}; use a key ring in {self.region}",
                )
        if config.adopt:
            self._check_adopt(config.adopt)

    def _check_run_after(self, names: Sequence[str]) -> None:
        """``run_after`` lists jobs by resource name, each once; an adopted job was
        submitted already, so it runs after nothing."""
        if names and self.config.adopt:
            self.fail(
                ("run_after",),
                list(names),
                "an adopted job is already submitted, so it cannot wait for other jobs "
                "first; remove run_after, or remove adopt to submit a new job after them",
            )
        example = (
            f"projects/{self.stack.project or 'PROJECT'}/locations/{self.region}/{CUSTOM_JOBS}/ID"
        )
        for index, name in enumerate(names):
            if not _RUN_AFTER_RE.fullmatch(name):
                self.fail(
                    ("run_after", index),
                    name,
                    f"must be a job's resource name ({example}, or a local job's "
                    f"local/{CUSTOM_JOBS}/ID): in a program, pass the other job's ID "
                    "(its `id` output)",
                )
            elif name in names[:index]:
                self.fail(
                    ("run_after", index),
                    name,
                    "is listed twice; list each job once",
                )

    def _check_adopt(self, name: str) -> None:
        project_id = self.stack.project or "PROJECT"
        tuning = self.config.study is not None
        collection = TUNING_JOBS if tuning else CUSTOM_JOBS
        example = f"projects/{project_id}/locations/{self.region}/{collection}/ID"
        match = _JOB_RESOURCE_RE.fullmatch(name)
        if match is None or match["collection"] != collection:
            kind = "hyperparameter tuning job" if tuning else "custom job"
            self.fail(("adopt",), name, f"must be a {kind} resource name: {example}")
            return
        project = match["project"]
        if project != self.stack.project and not project.isdigit():
            self.fail(
                ("adopt",),
                name,
                f"the job is in project {project}, not this stack's {self.stack.project}; "
                f"adopt a job of this project: {example}",
            )
        if match["location"] != self.region:
            self.fail(
                ("adopt",),
                name,
                f"the job is in {match['location']}, not this job's region {self.region}; set "
                f"region: {match['location']} or adopt a job in {self.region}",
            )

    def _check_capacity(self, pools: Sequence[WorkerPool | None], scheduling: Scheduling) -> None:
        """Where the pools' machines come from: flex-start's limits (which GPUs, a timeout
        of at most 7 days, one machine configuration in every pool), GB200's shared
        reservations, A4X's ARM hosts."""
        if not self.vertex:
            return
        present = [p for p in pools if p is not None]
        for pool in present:
            gpu = pool.accelerator.type if pool.accelerator else None
            reserved = pool.reservation is not None and pool.reservation.type != "NO_RESERVATION"
            if gpu in machines.RESERVATION_ONLY_ACCELERATORS and not reserved:
                self.fail(
                    (*_pool_path(pool), "reservation_affinity"),
                    None,
                    f"{gpu} capacity comes only from a shared Compute Engine reservation "
                    f"({machines.CONFIGURE_COMPUTE_URL}): add reservation_affinity: {{type: "
                    "SPECIFIC_RESERVATION, values: [projects/PROJECT/zones/ZONE/reservations/"
                    "NAME]}",
                )
            if pool.machine in machines.ARM_MACHINES:
                self.warnings.append(
                    Issue(
                        full_key(f"{JOBS_KEY}.{self.name}", (*_pool_path(pool), "machine")),
                        pool.machine,
                        f"{pool.machine} has ARM (arm64) hosts: its image must be built for "
                        "arm64, and each replica has 4 GPUs, not 8",
                    )
                )
        if scheduling.strategy != FLEX_START:
            return
        if scheduling.timeout_s is not None and (
            scheduling.timeout_s > machines.FLEX_START_MAX_TIMEOUT_S
        ):
            self.fail(
                ("scheduling", "timeout"),
                self.config.scheduling.timeout if self.config.scheduling else None,
                f"a flex-start job runs at most 7 days ({machines.FLEX_START_URL}): write "
                "timeout: 7d or less, or another strategy",
            )
        first = present[0] if present else None
        for pool in present:
            gpu = pool.accelerator.type if pool.accelerator else None
            if first is not None and _shape(pool) != _shape(first):
                self.fail(
                    (*_pool_path(pool), "machine"),
                    pool.machine,
                    f"flex-start runs every worker pool on one machine configuration "
                    f"({machines.FLEX_START_URL}); the primary pool has {_shape_text(first)} "
                    f"and {pool.role} {_shape_text(pool)}: give them the same, or another "
                    "strategy",
                )
            if gpu not in machines.FLEX_START_ACCELERATORS:
                self.fail(
                    (*_pool_path(pool), "machine"),
                    pool.machine,
                    f"flex-start schedules jobs on {one_of(_FLEX_GPU_NAMES)} GPUs "
                    f"({machines.FLEX_START_URL}); this pool has "
                    f"{gpu or 'no GPU'}: pick such a GPU, or another strategy",
                )


#: The flex-start GPUs as its page names them.
_FLEX_GPU_NAMES = ("L4", "A100", "H100", "H200", "B200")


def _pool_path(pool: WorkerPool) -> tuple[str, ...]:
    """The stack config key of a pool under its job: the job's own keys for the primary."""
    return () if pool.role == "primary" else (pool.role,)


def _shape(pool: WorkerPool) -> tuple[str, str | None, int]:
    gpus = pool.accelerator
    return pool.machine, gpus.type if gpus else None, gpus.count if gpus else 0


def _shape_text(pool: WorkerPool) -> str:
    gpus = pool.accelerator
    return f"{pool.machine}" + (f" with {gpus.count} {gpus.type}" if gpus else "")


def reserved_retry_issue(
    pools: Sequence[WorkerPool | None], regions: Sequence[str], region: str
) -> str | None:
    """Why retry.regions cannot hold a job on a specific reservation (a zonal resource of
    the job's region), or None."""
    reserved = [
        p.role
        for p in pools
        if p is not None and p.reservation is not None and p.reservation.type == SPECIFIC
    ]
    elsewhere = [r for r in regions if r != region]
    if not reserved or not elsewhere:
        return None
    return (
        f"the {one_of(reserved, 'and')} pool{'s run' if len(reserved) > 1 else ' runs'} on a "
        f"specific reservation, which is in {region}'s "
        f"zones: an attempt in {one_of(elsewhere)} could not use it. Retry in {region} only "
        "(remove regions), or take reservation_affinity off"
    )
