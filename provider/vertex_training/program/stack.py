"""The stack-config way: everything a stack's ``vertex-training:*`` keys declare, in one call.

stack config (read once by ``vertex_training.stackconfig.load_stack``: settings,
platform, packages, jobs) -> platform (APIs, bucket, repository, service account, IAM)
-> trainer packages (built, uploaded) -> jobs (after the platform's APIs and grants) ->
one waiter (for the jobs that wait to be running or succeeded) -> stack outputs (the
platform's places, and one ``jobs`` Output for all jobs, unknown in a preview).

Every job's config is handed to its resource as written (with its package directories
resolved to package URIs); the resource's provider checks it at ``pulumi preview``, so
each mistake is reported against its stack config key.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp

from vertex_training.program.exports import job_resource, jobs_exports
from vertex_training.program.platform import (
    TrainingPlatform,
    job_dependencies,
    job_stack_settings,
    platform_outputs,
    upload_packages,
)
from vertex_training.program.settings import jobs_are_secret, program_stack
from vertex_training.resources.job_arguments import owner_settings
from vertex_training.resources.state import ProviderSettings
from vertex_training.resources.training_job import TrainingJob, waiter_input
from vertex_training.resources.waiter import JobWaiter

#: The waiter's resource name (the state of every stack deployed so far names it).
WAITER_NAME = "wait-for-jobs"


@dataclass(frozen=True)
class StackResources:
    """What ``deploy_stack_config`` made: the platform (None when the stack creates
    none), the uploaded trainer packages by directory, the jobs and the waiter."""

    platform: TrainingPlatform | None
    packages: dict[str, gcp.storage.BucketObject]
    jobs: dict[str, TrainingJob]
    waiter: JobWaiter


def deploy_stack_config(project_dir: Path | None = None, *, export: bool = True) -> StackResources:
    """Declare everything the running stack's ``vertex-training:*`` and ``gcp:*`` keys
    say, as this repository's program does; ``project_dir``: where package directories
    and local jobs' files are (default: the working directory, the project's).

    A mistake in a stack-wide key stops the program at ``pulumi preview`` with its key;
    a job's own mistakes are reported by its resource's check. ``export``: export the
    stack outputs (``bucket``, ``repository_url``, ``service_account``, ``tensorboard``
    and ``jobs``: docs/operations.md).
    """
    project_dir = project_dir or Path.cwd()
    stack = program_stack(project_dir)
    component = (
        TrainingPlatform(
            "platform",
            stack.platform,
            vertex_api_role=bool(stack.jobs_calling_vertex_api()),
        )
        if stack.platform is not None and stack.platform.create
        else None
    )
    packages = upload_packages(stack.packages.uploads, stack.platform, component, project_dir)
    settings = job_stack_settings({**stack.settings.model_dump(), **owner_settings()}, component)
    jobs = {
        name: job_resource(
            name,
            loaded.config,
            settings,
            job_dependencies(component, packages, stack.packages.job_uploads.get(name, [])),
            secret=jobs_are_secret(),
        )
        for name, loaded in stack.jobs.items()
    }
    waits: dict[str, Any] = {
        name: waiter_input(job, until)
        for name, job in jobs.items()
        if (until := stack.waits_until(name)) != "submitted"
    }
    waiter = JobWaiter(WAITER_NAME, waits, settings)
    if export:
        for key, value in platform_outputs(stack.platform, component).items():
            pulumi.export(key, value)
        local_root = ProviderSettings(base_dir=str(project_dir)).local_root
        pulumi.export("jobs", jobs_exports(jobs, waiter, local_root, stack))
    return StackResources(platform=component, packages=packages, jobs=jobs, waiter=waiter)
