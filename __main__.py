"""Wires the stack config to resources: stack config -> jobs -> one waiter -> exports.

Every job's config is handed to its resource as written; the resource's provider checks
it at `pulumi preview`, so each mistake is reported against its stack config key.
"""

from pathlib import Path

import pulumi

from provider.config import connection_settings, stack_settings
from provider.training_job import TrainingJob
from provider.waiter import JobWaiter, latest_state

config = pulumi.Config("vertex-training")
stack = stack_settings(pulumi.get_stack())
connection = connection_settings(config.get("apiEndpoint"), Path.cwd())

jobs = {
    name: TrainingJob(name, job_config, stack, connection)
    for name, job_config in (config.get_object("jobs") or {}).items()
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

pulumi.export(
    "jobs",
    {
        name: {
            "resource_name": job.resource_name,
            "job_id": job.job_id,
            "state": pulumi.Output.all(job.state, waiter.states).apply(
                lambda pair, name=name: latest_state(pair[0], pair[1], name)
            ),
            "error": job.error,
            "console_url": job.console_url,
            "logs_url": job.logs_url,
            "output_directory": job.output_directory,
            "model_directory": job.model_directory,
        }
        for name, job in jobs.items()
    },
)
pulumi.export("waited", waiter.states)
