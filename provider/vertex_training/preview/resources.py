"""What the engine shows of a resource -> what the review judges: jobs, grants, buckets.

A job is read from its resource's own inputs, never from a stack file: the plugin's
``vertex-training:index:TrainingJob`` and ``HyperparameterTuningJob`` through the very
function the plugin hands them to the dynamic providers with
(``vertex_training.plugin.inputs.job_input``), the Python package's dynamic resources
(``pulumi-python:dynamic/vertex:*``) from their ``job`` input, which holds the job's
name, its keys and its stack settings whether a stack file or the program's code gave
them. Both are parsed as the providers' ``check`` parses them
(``vertex_training.resources.job_arguments.read_job``), values the preview cannot know
yet kept unknown: a job whose settings are unknown (its platform still to be created) is
read as unknown, not as wrong.

Vertex AI training that pulumi-gcp declares (``gcp.vertex.AiCustomJob``,
``AiTrainingPipeline``, ``AiPersistentResource``) is read by
``vertex_training.preview.pulumi_gcp`` into the same ``ResourceJob``, marked with the
provider that declares it.

The grants and buckets are pulumi-gcp's: every IAM member, binding and policy, and every
``gcp:storage/bucket:Bucket``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vertex_training.errors import Issue
from vertex_training.keys import job_key
from vertex_training.plugin import schema
from vertex_training.plugin.inputs import job_input, owner_of
from vertex_training.preview import pulumi_gcp
from vertex_training.resources.job_arguments import UNKNOWN_TEXT, from_program, read_job
from vertex_training.resources.state import is_unknown, migrate_job, migrate_recorded
from vertex_training.review import policies

if TYPE_CHECKING:
    from vertex_training.stackconfig import JobSpec

#: The plugin's job types (any language's program declares them through its SDK).
PLUGIN_JOB_TYPES = (schema.TRAINING_JOB, schema.TUNING_JOB)
#: The Python package's dynamic job types (``pulumi.dynamic.Resource`` subclasses declared
#: with ``module="vertex"``: vertex_training.resources.training_job and .tuning_job).
DYNAMIC_JOB_TYPES = (
    "pulumi-python:dynamic/vertex:TrainingJob",
    "pulumi-python:dynamic/vertex:HyperparameterTuningJob",
)
JOB_TYPES = (*PLUGIN_JOB_TYPES, *DYNAMIC_JOB_TYPES, *pulumi_gcp.TYPES)
BUCKET_TYPE = "gcp:storage/bucket:Bucket"
#: How a value the preview cannot know yet is shown (the email of an account still to be
#: created); the engine's own sentinel (``UNKNOWN_TEXT``) reads the same.
UNKNOWN = "[unknown until pulumi up]"
#: The stack settings that say whom a job belongs to, not how it runs: no part of what a
#: reviewer reads as the job's keys.
OWNER_SETTINGS = ("stack", "pulumi_project", "pulumi_organization", "config_from")


@dataclass(frozen=True)
class Resource:
    """One resource as the engine shows it: type token, URN, plain inputs."""

    type: str
    urn: str
    props: Mapping[str, Any]

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]


@dataclass
class ResourceJob:
    """The job one resource declares, read from its own inputs."""

    name: str
    urn: str
    type: str
    #: The job as the program wrote it, in its own words, for a reviewer's diff: the
    #: plugin's properties (camelCase, ``job.machine``), or a Python program's keys and,
    #: under ``settings.``, its stack settings.
    written: dict[str, Any] = field(default_factory=dict)
    #: The parsed job; None when it is invalid (``issues``) or not known yet (``unknown``).
    job: JobSpec | None = None
    issues: list[Issue] = field(default_factory=list)
    #: Why the job cannot be read before `pulumi up` (a value the preview cannot know).
    unknown: str = ""
    #: Where a fix names the job's settings: a program's job by its argument
    #: (``job``: the plugin's property, or ``TrainingJob(name, job)``'s argument), a stack
    #: file's job by its stack config key (``vertex-training:jobs.<name>``).
    key: str = policies.PROGRAM_JOB_KEY
    #: Who declares it when another provider does (``pulumi-gcp `gcp.vertex.AiCustomJob```).
    declared_by: str = ""
    #: Why the review cannot judge another provider's job or resource ("" when it can).
    not_reviewed: str = ""
    #: A persistent resource pulumi-gcp declares (its ``job`` stays None).
    persistent: pulumi_gcp.PersistentResource | None = None

    @property
    def plugin(self) -> bool:
        return self.type in PLUGIN_JOB_TYPES


def job_of(resource: Resource) -> ResourceJob | None:
    """The job ``resource`` declares (None: it is no job resource)."""
    given: dict[str, Any] | None
    if resource.type in PLUGIN_JOB_TYPES:
        given = job_input(resource.name, owner_of(resource.urn), _sentinels(resource.props))
        shown = _shown(resource.props)
        written = {k: v for k, v in shown.items() if k not in schema.JOB_OUTPUTS}
    elif resource.type in DYNAMIC_JOB_TYPES:
        given = _dynamic_input(_sentinels(resource.props))
        if given is None:
            found = ResourceJob(resource.name, resource.urn, resource.type)
            found.unknown = "its job input is not known before pulumi up"
            return found
        written = _written(_shown(given))
    elif resource.type in pulumi_gcp.TYPES:
        return _pulumi_gcp(resource)
    else:
        return None
    found = ResourceJob(str(given.get("name") or resource.name), resource.urn, resource.type)
    found.written = written
    settings = given.get("stack")
    if not found.plugin and not (isinstance(settings, Mapping) and from_program(settings)):
        found.key = job_key(found.name)
    _parse(found, given)
    return found


def _pulumi_gcp(resource: Resource) -> ResourceJob:
    """A job or persistent resource pulumi-gcp declares, its keys written as its inputs."""
    props = _sentinels(resource.props)
    found = ResourceJob(resource.name, resource.urn, resource.type, key=resource.name)
    found.written = _shown(pulumi_gcp.shown_inputs(props))
    if resource.type == pulumi_gcp.PERSISTENT_RESOURCE:
        found.persistent = pulumi_gcp.persistent_resource_of(props)
        found.declared_by = found.persistent.declared_by
        found.not_reviewed = found.persistent.not_reviewed
        return found
    read = pulumi_gcp.job_of(resource.type, resource.name, props)
    found.job, found.declared_by, found.not_reviewed = read.job, read.declared_by, read.not_reviewed
    return found


def _dynamic_input(props: Mapping[str, Any]) -> dict[str, Any] | None:
    """A dynamic job's ``job`` input: as the program gives it (``job``: name, config,
    stack settings), or as its provider's check recorded it (those keys at the top, in
    the state's schema; an older schema's read in today's, as the provider reads it)."""
    given = props.get("job")
    if isinstance(given, Mapping):
        return dict(given)
    if "name" not in props:
        return None
    return migrate_recorded(migrate_job(props))


def _written(given: Mapping[str, Any]) -> dict[str, Any]:
    """A dynamic job's keys as its program wrote them, and the stack settings it was given
    (``settings.region``) but those that only say whom it belongs to."""
    config = given.get("config")
    stack = given.get("stack")
    written = dict(config) if isinstance(config, Mapping) else {}
    if isinstance(stack, Mapping):
        written.update(
            {f"settings.{k}": v for k, v in stack.items() if k not in OWNER_SETTINGS and v}
        )
    return written


def _shown(value: Any) -> Any:
    """``value`` with the engine's sentinel for what is not known yet as ``UNKNOWN``."""
    if is_unknown(value):
        return UNKNOWN
    if isinstance(value, Mapping):
        return {key: _shown(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shown(item) for item in value]
    return value


def _sentinels(value: Any) -> Any:
    """``value`` with the policy pack's shown unknown as the engine's sentinel."""
    if value == UNKNOWN:
        return UNKNOWN_TEXT
    if isinstance(value, Mapping):
        return {key: _sentinels(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_sentinels(item) for item in value]
    return value


def _parse(found: ResourceJob, given: Mapping[str, Any]) -> None:
    """Parse the job as the providers' check does, values not known yet kept unknown."""
    read = read_job(found.name, given.get("config"), given.get("stack"))
    found.job, found.issues, found.unknown = read.job, read.issues, read.unknown


def grants_of(resource: Resource) -> list[policies.Grant]:
    """The IAM grants of a pulumi-gcp member, binding or policy resource (none for others)."""
    if not resource.type.startswith("gcp:"):
        return []
    kind = resource.type.rsplit(":", 1)[-1].lower()
    props = resource.props
    target = _target(resource)
    if kind.endswith("iammember") or kind.endswith("iambinding"):
        members = [props.get("member")] if "member" in props else list(props.get("members") or [])
        return [
            policies.Grant(str(member), str(props.get("role")), target)
            for member in members
            if member is not None
        ]
    if kind.endswith("iampolicy") and isinstance(props.get("policyData"), str):
        try:
            data = json.loads(props["policyData"])
        except ValueError:
            return []
        return [
            policies.Grant(str(member), str(binding.get("role")), target)
            for binding in data.get("bindings") or []
            for member in binding.get("members") or []
        ]
    return []


def buckets_of(
    resources: Iterable[Resource], grants: Iterable[policies.Grant]
) -> list[policies.BucketAccess]:
    """Each bucket the stack creates: its public access prevention and public members."""
    grants = list(grants)
    found = []
    for resource in resources:
        if resource.type != BUCKET_TYPE:
            continue
        name = str(resource.props.get("name") or resource.name)
        public = tuple(
            sorted(
                {
                    g.member
                    for g in grants
                    if g.target == f"bucket {name}" and g.member in policies.PUBLIC_MEMBERS
                }
            )
        )
        prevention = resource.props.get("publicAccessPrevention")
        found.append(
            policies.BucketAccess(name, None if prevention is None else str(prevention), public)
        )
    return found


def _target(resource: Resource) -> str:
    props = resource.props
    for key, label in (
        ("bucket", "bucket"),
        ("repository", "repository"),
        ("serviceAccountId", "service account"),
        ("project", "project"),
    ):
        if props.get(key):
            return f"{label} {props[key]}"
    return resource.name
