"""Wires the stack config to resources.

stack config -> platform (APIs, bucket, repository, service account, IAM) -> trainer
packages (built, uploaded) -> jobs (after the platform's APIs and grants) -> one waiter
-> exports.

Every job's config is handed to its resource as written (with its package directories
resolved to package URIs); the resource's provider checks it at `pulumi preview`, so each
mistake is reported against its stack config key.
"""

from pathlib import Path

import pulumi

from provider.program.platform import (
    TrainingPlatform,
    job_dependencies,
    job_stack_settings,
    platform_outputs,
    upload_packages,
)
from provider.program.settings import (
    connection_settings,
    job_configs,
    jobs_are_secret,
    platform_settings,
    stack_settings,
    trainer_packages,
    warn_about,
)
from provider.resources.tuning_job import job_exports, job_resource
from provider.resources.waiter import JobWaiter
from provider.stackconfig.platform import needs_vertex_api_role

project_dir = Path.cwd()
config = pulumi.Config("vertex-training")
stack = stack_settings(pulumi.get_stack())
platform = platform_settings(pulumi.get_stack())
connection = connection_settings(
    config.get("apiEndpoint"), project_dir, config.get("localAccelerators")
)
job_config = job_configs()

component = (
    TrainingPlatform(
        "platform",
        platform,
        vertex_api_role=bool(needs_vertex_api_role(job_config, stack["backend"])),
    )
    if platform is not None and platform.create
    else None
)
packages = trainer_packages(job_config, stack, platform, project_dir)
package_objects = upload_packages(packages.uploads, platform, component, project_dir)
warn_about(packages.configs, stack)

jobs = {
    name: job_resource(
        name,
        config_with_packages,
        job_stack_settings(stack, component),
        connection,
        job_dependencies(component, package_objects, packages.job_uploads.get(name, [])),
        secret=jobs_are_secret(),
    )
    for name, config_with_packages in packages.configs.items()
}

waiter = JobWaiter(
    "wait-for-jobs",
    {
        name: {
            "resource_name": job.resource_name,
            "wait": job.wait,
            "location": job.location,
            "connection": job.connection,
        }
        for name, job in jobs.items()
    },
)

for key, value in platform_outputs(platform, component).items():
    pulumi.export(key, value)
pulumi.export("jobs", {name: job_exports(name, job, waiter) for name, job in jobs.items()})
pulumi.export("waited", waiter.states)
