"""Wires the stack config to resources.

stack config (read once by ``provider.stackconfig.load_stack``: settings, platform,
packages, jobs) -> platform (APIs, bucket, repository, service account, IAM) -> trainer
packages (built, uploaded) -> jobs (after the platform's APIs and grants) -> one waiter
(for the jobs that wait to be running or succeeded) -> exports (one Output for all jobs,
unknown in a preview).

Every job's config is handed to its resource as written (with its package directories
resolved to package URIs); the resource's provider checks it at `pulumi preview`, so each
mistake is reported against its stack config key.
"""

from pathlib import Path

import pulumi

from provider.program.exports import job_resource, jobs_exports
from provider.program.platform import (
    TrainingPlatform,
    job_dependencies,
    job_stack_settings,
    platform_outputs,
    upload_packages,
)
from provider.program.settings import jobs_are_secret, program_stack
from provider.resources.state import ProviderSettings
from provider.resources.training_job import waiter_input
from provider.resources.waiter import JobWaiter

project_dir = Path.cwd()
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
package_objects = upload_packages(stack.packages.uploads, stack.platform, component, project_dir)

settings = job_stack_settings(stack.settings.model_dump(), component)
jobs = {
    name: job_resource(
        name,
        loaded.config,
        settings,
        job_dependencies(component, package_objects, stack.packages.job_uploads.get(name, [])),
        secret=jobs_are_secret(),
    )
    for name, loaded in stack.jobs.items()
}

waiter = JobWaiter(
    "wait-for-jobs",
    {
        name: waiter_input(job, until)
        for name, job in jobs.items()
        if (until := stack.waits_until(name)) != "submitted"
    },
    settings,
)

for key, value in platform_outputs(stack.platform, component).items():
    pulumi.export(key, value)
local_root = ProviderSettings(base_dir=str(project_dir)).local_root
pulumi.export("jobs", jobs_exports(jobs, waiter, local_root, stack))
