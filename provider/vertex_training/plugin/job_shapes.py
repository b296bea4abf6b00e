"""A job resource of the plugin, in the schema's naming, and the job operations' records
and results: the one place the plugin converts between them.

- In: a resource's inputs as a job's record (``record_of``: ``resources.records``), and
  its recorded properties as what was last seen of its job (``last_observed``).
- Out: a job's mistakes on their property paths (``property_failure``: the stack
  config's argument path ``job.workers.python_package`` as ``job.workers.pythonPackage``),
  its diff as the engine shows it (``detailed_diff``: each changed key of ``JobChange``
  on its property path), and its properties (``job_properties``, ``job_preview``: what
  its backend reports, in camelCase, and what its keys give).

``vertex_training.plugin.provider`` calls these around the job operations; the waiter's
are ``waiter_shapes``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pulumi.provider.experimental.provider import CheckFailure, PropertyDiff, PropertyDiffKind

from vertex_training.api import states
from vertex_training.errors import MissingSetting
from vertex_training.keys import GCP_PROJECT_KEY, GCP_REGION_KEY
from vertex_training.packaging import POOL_KEYS
from vertex_training.plugin import schema, shapes
from vertex_training.plugin.inputs import job_input, owner_of, resource_urn
from vertex_training.plugin.previews import (
    NAMING_OUTPUTS,
    UNKNOWN,
    PriceSnapshot,
    request_and_estimate,
    spec_of,
)
from vertex_training.plugin.values import is_secret, plain_map, property_value
from vertex_training.plugin.waiter_shapes import diff_kind, waiter_entry
from vertex_training.resources.arguments import ImageRowArgs, TrainingJobArgs
from vertex_training.resources.job_arguments import UNKNOWN_TEXT
from vertex_training.resources.pages import JobPages, job_outputs
from vertex_training.resources.records import JobObserved, JobRecord

if TYPE_CHECKING:
    from pulumi.provider.experimental.property_value import PropertyValue

    from vertex_training.errors import Issue
    from vertex_training.resources.changes import JobChange


@dataclasses.dataclass(frozen=True)
class Host:
    """What a job's properties take of the plugin that makes them: where local jobs
    write (``local_root``) and the outputs recorded even when empty (``kept``: its job
    provider's exported ones and ``attempts``)."""

    local_root: str
    kept: tuple[str, ...]


#: The inputs a job resource's state keeps among its outputs: those its check may fill
#: in from the provider's own config, so that a program reads the project, region and
#: backend the job was made in. The others, its ``job`` first, are kept once, as inputs:
#: the TypeScript, Python and Go SDKs give a resource's own input back for an output the
#: state leaves out (Pulumi YAML's language host does not: docs/plugin.md).
RECORDED_INPUTS = ("project", "region", "backend")


def record_of(name: str, owner: Mapping[str, str], inputs: Mapping[str, Any]) -> JobRecord:
    """A job resource's record for the job operations (``resources.records``), from its
    inputs (plain, in the schema's naming: ``job_input``)."""
    return JobRecord(**job_input(name, owner, inputs))


def last_observed(resource_id: str, properties: Mapping[str, Any]) -> JobObserved:
    """What a job resource's recorded properties (plain) say of its job when it was last
    seen: its state, its failure and attempts (all a diff reads of them)."""
    return JobObserved(
        resource_id,
        state=str(properties.get("state") or ""),
        failure=properties.get("failure") or {},
        attempts=tuple(properties.get("attempts") or ()),
    )


#: The stack-wide settings a stack config's refusal names, as a program sets them for a
#: plugin's resource: its own property.
SETTING_PROPERTIES = {GCP_PROJECT_KEY: "project", GCP_REGION_KEY: "region"}

#: What a job that lacks a setting (``errors.MissingSetting``) tells a program's author,
#: where a stack config's author is told the stack config key.
MISSING_SETTINGS = {
    "project": (
        "jobs on the vertex backend need a Google Cloud project: give the resource's "
        "`project` (or a TrainingPlatform's `jobSettings` as its `platform`), or set the "
        "provider's default with `pulumi config set vertex-training:project <project-id>` "
        "(or set vertex-training:backend to local to run on this machine)"
    ),
    "region": (
        "no region: give the resource's `region` (or the job's own), or set the "
        "provider's default with `pulumi config set vertex-training:region us-central1`"
    ),
}


def property_failure(issue: Issue) -> CheckFailure:
    """A job's mistake (``TrainingJobProvider.check_job``: named by its argument path,
    ``job.workers.python_package``, in the stack config's keys) on its property path in
    the schema's naming (``job.workers.pythonPackage``); a missing setting with the
    advice a program's author can follow (``MISSING_SETTINGS``)."""
    message = issue.message
    if isinstance(issue, MissingSetting) and issue.setting in MISSING_SETTINGS:
        message = MISSING_SETTINGS[issue.setting]
    head, dot, tail = issue.key.partition(".")
    if issue.key in SETTING_PROPERTIES:
        path = SETTING_PROPERTIES[issue.key]
    elif head == "job":
        path = f"job.{shapes.property_path(TrainingJobArgs, tail)}" if dot else "job"
    elif head.startswith("images["):
        path = f"{head}.{shapes.property_path(ImageRowArgs, tail)}" if dot else head
    else:  # a key of no property of the resource: the job's
        return CheckFailure("job", str(dataclasses.replace(issue, message=message)))
    return CheckFailure(path, str(dataclasses.replace(issue, key=path, message=message)))


def plugin_failures(config: Any) -> list[CheckFailure]:
    """What a job of the plugin cannot be that a Python program's can: a package
    directory to build (a Python program builds and uploads it; here, the program
    uploads the sdist)."""
    if not isinstance(config, Mapping):
        return []
    failures = []
    for pool in ("", *POOL_KEYS):  # the pools a package may run in
        keys = config.get(pool) if pool else config
        package = keys.get("python_package") if isinstance(keys, Mapping) else None
        if isinstance(package, Mapping) and "package_path" in package:
            path = ".".join(p for p in (shapes.camel(pool), "pythonPackage.packagePath") if p)
            failures.append(
                CheckFailure(
                    f"job.{path}",
                    f"job.{path}: the plugin builds no trainer packages: build the "
                    "sdist (python -m build), upload it (a storage object of your "
                    "program) and list its gs:// URI in pythonPackage.packageUris "
                    f"(got {package['package_path']!r})",
                )
            )
    return failures


def unchanged(recorded: Mapping[str, PropertyValue], inputs: Mapping[str, PropertyValue]) -> bool:
    """Whether a job resource's diff is no change, read without converting anything: its
    new ``inputs`` are those ``recorded`` (its outputs with its inputs, as the servicer
    gives them) and its job did not last fail. That is ``diff_job``'s own first answer
    (the same job is no change, but a failed job with ``retry`` may have an attempt
    left), for a no-change preview of many jobs."""
    state = recorded.get("state")
    if state is not None and state.value == states.FAILED:
        return False
    return all(recorded.get(key) == inputs.get(key) for key in schema.JOB_INPUTS)


def top(path: str) -> str:
    """The resource's property a property path lies under (``job`` of ``job.machine``)."""
    return path.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0]


def replaces(diff: PropertyDiff) -> bool:
    """Whether a property's diff replaces the resource."""
    return diff.kind in (
        PropertyDiffKind.ADD_REPLACE,
        PropertyDiffKind.DELETE_REPLACE,
        PropertyDiffKind.UPDATE_REPLACE,
    )


def detailed_diff(
    change: JobChange, olds: Mapping[str, Any], news: Mapping[str, Any]
) -> dict[str, PropertyDiff]:
    """A job's diff (``change``) as the engine shows it: each of the job's keys that
    changed on its property path (``job.machine``), replacing or not as the diff says;
    and each other input the program gave the resource (its ``project``, ``region``,
    ...; plain ``olds`` and ``news``) that changed, replacing when the job is replaced."""
    kinds = {
        ("add", False): PropertyDiffKind.ADD,
        ("add", True): PropertyDiffKind.ADD_REPLACE,
        ("delete", False): PropertyDiffKind.DELETE,
        ("delete", True): PropertyDiffKind.DELETE_REPLACE,
        ("update", False): PropertyDiffKind.UPDATE,
        ("update", True): PropertyDiffKind.UPDATE_REPLACE,
    }
    detailed = {
        f"job.{shapes.camel(key.key)}": PropertyDiff(kinds[key.kind, key.replaces], input_diff=True)
        for key in change.keys
    }
    for prop in sorted(set(olds) | set(news)):
        old, new = olds.get(prop), news.get(prop)
        if old == new or prop in schema.JOB_OUTPUTS or prop in schema.TUNING_OUTPUTS:
            continue
        if prop == "job" and change.keys:
            continue  # (its keys, above; a job with none to compare is shown whole)
        detailed[prop] = PropertyDiff(diff_kind(old, new, change.replacing), input_diff=True)
    return detailed


def job_properties(
    inputs: Mapping[str, PropertyValue],
    record: JobRecord,
    observed: JobObserved,
    *,
    host: Host,
) -> dict[str, PropertyValue]:
    """A job resource's properties as the state keeps them: of its inputs, those it may
    take from the provider's config (``RECORDED_INPUTS``), what its backend reports
    (``observed``, in camelCase: those that are empty left out but ``host.kept``), what
    the job it runs as names (its ID, pages, model directory:
    ``resources.pages.job_outputs``) and its ``waiterEntry``. What the inputs give is
    not kept twice: the request and the estimate are a preview's (``job_preview``), the
    job's keys are its inputs'."""
    resource_name = observed.resource_name
    derived = job_outputs(
        observed.attempts,
        resource_name,
        host.local_root,
        observed.output_directory,
        observed.best_trial,
        tuning=observed.tuning,
    )
    values = {
        **observed.outputs(host.kept),
        "output_directory": derived["output_directory"],  # (a local job's, under its root)
    }
    shaped = {**shapes.properties(values, JobObserved), **shapes.properties(JobPages.of(derived))}
    properties = {prop: property_value(value) for prop, value in shaped.items()}
    spec = record.spec()  # parsed once: the view the create submitted read the same
    properties["waiterEntry"] = waiter_entry(
        record.name, resource_name, spec, (record.config, record.stack), is_secret(inputs)
    )
    kept = {prop: value for prop, value in inputs.items() if prop in RECORDED_INPUTS}
    return {**kept, **properties}


def job_preview(
    urn: str,
    inputs: Mapping[str, PropertyValue],
    prices: PriceSnapshot,
    resource_id: str = "",
    olds: Mapping[str, PropertyValue] | None = None,
) -> dict[str, PropertyValue]:
    """A job resource's properties in a preview of its create (of its update, given
    its ID and recorded ``olds``): its inputs, its request and estimate
    (``request_and_estimate``), its waiter entry, with the resource name unknown
    until the job is submitted, and every other output unknown but those naming the
    job that an update keeps (``NAMING_OUTPUTS``)."""
    parsed = resource_urn(urn)
    type_, name = parsed.type, parsed.name
    job = record_of(name, owner_of(urn), plain_map(inputs))
    config, settings = job.config, job.stack
    outputs = dict.fromkeys(schema.JOB_OUTPUTS, UNKNOWN)
    if type_ == schema.TUNING_JOB:
        outputs.update(dict.fromkeys(schema.TUNING_OUTPUTS, UNKNOWN))
    kept = olds or {}
    outputs.update({prop: kept[prop] for prop in NAMING_OUTPUTS if prop in kept})
    spec = spec_of(name, config, settings)
    if isinstance(config, Mapping):
        outputs["waiterEntry"] = waiter_entry(
            name, resource_id or UNKNOWN_TEXT, spec, (config, settings), is_secret(inputs)
        )
    outputs.update(request_and_estimate(spec, is_secret(inputs), prices))
    return {**inputs, **outputs}
