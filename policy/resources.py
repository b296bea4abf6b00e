"""What the engine shows the pack -> the arguments of ``vertex_training.review.policies.evaluate``.

Pure (no ``pulumi_policy``): the pack's ``__main__`` hands each resource over as its type
token, URN and plain properties, with every value the preview cannot know yet replaced by
``UNKNOWN``. This module then finds

- the stack (from the URNs) and its rules: ``vertex-training:policies`` in the stack file
  ``<project>/<stackConfigDir>/Pulumi.<stack>.yaml``, the one the program ran with, since
  the CLI runs the pack in the project directory;
- the jobs: for each TrainingJob / HyperparameterTuningJob dynamic resource (type
  ``pulumi-python:dynamic/vertex:<class>``), that job as ``vertex_training.stackconfig.load_stack``
  reads it from the same stack file (the loader the program gave it to the resource with);
- the platform: every IAM grant (``*IAMMember`` / ``*IamMember``, ``*IAMBinding``,
  ``*IAMPolicy`` of pulumi-gcp) and every ``gcp:storage/bucket:Bucket`` it registers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vertex_training import stackconfig
from vertex_training.errors import SpecError
from vertex_training.preview.resources import (  # noqa: F401 - the pack's names
    BUCKET_TYPE,
    UNKNOWN,
    Resource,
    buckets_of,
    grants_of,
)
from vertex_training.review import cost, policies
from vertex_training.stackconfig import platform as stack_platform

#: The type tokens of this project's job resources (``pulumi.dynamic.Resource`` subclasses
#: declared with ``module="vertex"``: vertex_training.resources.training_job and .tuning_job).
JOB_TYPES = (
    "pulumi-python:dynamic/vertex:TrainingJob",
    "pulumi-python:dynamic/vertex:HyperparameterTuningJob",
)
#: The project's price snapshot, which the cost rules price jobs from (docs/cost.md).
PRICES_FILE = Path("prices") / "snapshot.json"


@dataclass
class StackView:
    """Everything ``evaluate`` needs, and what kept it from being read."""

    stack: str | None = None
    config: policies.PoliciesConfig | None = None
    jobs: dict[str, Any] = field(default_factory=dict)
    #: Each job's resource URN, by job name.
    urns: dict[str, str] = field(default_factory=dict)
    platform: stack_platform.Platform | None = None
    grants: list[policies.Grant] = field(default_factory=list)
    buckets: list[policies.BucketAccess] = field(default_factory=list)
    #: Mistakes in the stack's rules, or why they could not be read (mandatory).
    issues: list[str] = field(default_factory=list)
    #: Jobs left out of the evaluation, and why (advisory).
    skipped: list[str] = field(default_factory=list)
    #: The project's price snapshot (prices/snapshot.json), None when there is none.
    prices: Any = None

    def results(self) -> list[policies.RuleResult]:
        """The rules' results; ``changed`` is every job (the engine does not tell a
        policy which resources the change touches)."""
        if self.config is None:
            return []
        estimates = {name: cost.estimate(job, self.prices) for name, job in self.jobs.items()}
        return policies.evaluate(
            self.config,
            self.jobs,
            self.platform,
            estimates,
            None,
            grants=self.grants,
            buckets=self.buckets,
        )


def stack_of(urn: str) -> str:
    """``urn:pulumi:<stack>::<project>::<type>::<name>`` -> ``<stack>``."""
    return urn.removeprefix("urn:pulumi:").split("::", 1)[0]


def stack_file(project_dir: Path, stack: str) -> Path:
    """Where the project keeps the stack's config (Pulumi.yaml's ``stackConfigDir``)."""
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text()) or {}
    return project_dir / str(project.get("stackConfigDir") or ".") / f"Pulumi.{stack}.yaml"


def view(resources: Iterable[Resource], project_dir: Path) -> StackView:
    """Read the stack's rules, jobs and platform from the engine's resources."""
    resources = list(resources)
    result = StackView()
    if not resources:
        return result
    result.stack = stack_of(resources[0].urn)
    result.prices, _note = cost.load_prices(project_dir / PRICES_FILE)
    path = stack_file(project_dir, result.stack)
    try:
        stack = stackconfig.load_stack_file(path, project_dir=project_dir)
    except (OSError, SpecError) as exc:
        result.issues.append(f"cannot read the stack's rules from {path}: {exc}")
        return result
    if stack.issues:
        result.issues.extend(str(issue) for issue in stack.issues)
        return result
    try:
        result.config = policies.parse_policies(stack.keys.get(policies.POLICIES_KEY))
    except SpecError as exc:
        result.issues.extend(str(issue) for issue in exc.issues)
        return result
    result.platform = stack.platform
    for resource in resources:
        if resource.type in JOB_TYPES:
            _add_job(result, resource, stack)
        result.grants.extend(grants_of(resource))
    result.buckets = buckets_of(resources, result.grants)
    return result


def _add_job(result: StackView, resource: Resource, stack: stackconfig.Stack) -> None:
    """The job behind a job resource, as the loader read it from the stack file (the
    program gave the resource the same job through the same loader: its one input,
    ``job``, holds the job's name, config and stack settings)."""
    job = resource.props.get("job")
    named = job.get("name") if isinstance(job, dict) else None
    name = str(named or resource.urn.rsplit("::", 1)[-1])
    result.urns[name] = resource.urn
    loaded = stack.jobs.get(name)
    if loaded is None:
        result.skipped.append(f"{name}: not in the stack file {stack.name}")
    elif loaded.job is None:
        problems = "; ".join(str(issue) for issue in loaded.issues)
        result.skipped.append(f"{name}: {problems}")
    else:
        result.jobs[name] = loaded.job
