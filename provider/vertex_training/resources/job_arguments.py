"""A job given by a program of its own: its settings from arguments, its mistakes by argument.

A stack config job gets its stack settings (project, region, backend, the platform's
account, bucket and repository) from the stack's keys, and its mistakes are named by
stack config key (``vertex-training:jobs.train.machine``). A job a program makes with
``TrainingJob("train", {...}, project=..., platform=...)`` gets them from its arguments
and from a ``TrainingPlatform`` (any object with ``job_settings`` and ``dependencies``),
and its mistakes are named by argument path (``job.machine``). Its values may be Outputs
of the program's other resources: in a preview, those not known yet are left out of the
check, and checked once known, at ``pulumi up``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import pulumi

from vertex_training.errors import Issue, SpecError, rekeyed
from vertex_training.keys import IMAGES_KEY, job_key
from vertex_training.packaging import TrainerPackage, plan_packages
from vertex_training.resources.state import CONFIG_KEY, is_unknown, view_of
from vertex_training.resources.submission import ORGANIZATION_SETTING, PROJECT_SETTING

if TYPE_CHECKING:
    from vertex_training.stackconfig import JobSpec, StackSettings

#: ``StackSettings.config_from`` of a job a program gives as arguments.
PROGRAM = "program"
#: The argument a job's config is given as (``TrainingJob(name, job, ...)``), and the one
#: its rows of the image catalogue are (``vertex-training:images`` in a stack config).
JOB_ARGUMENT = "job"
IMAGES_ARGUMENT = "images"
#: What stands for a value a preview does not know yet, while the rest is checked.
UNKNOWN_TEXT = pulumi.runtime.rpc.UNKNOWN


class JobPlatform(Protocol):
    """What a job takes from the platform it runs on (``TrainingPlatform``)."""

    @property
    def dependencies(self) -> list[pulumi.Resource]:
        """What a job must wait for (APIs enabled, grants in place)."""
        ...

    def job_settings(self) -> dict[str, Any]:
        """The stack settings a job defaults from: project, region, service account,
        output root, image repository, TensorBoard."""
        ...

    @property
    def bucket_name(self) -> str | None:
        """The bucket a vertex job's package directories are uploaded to."""
        ...

    def upload(self, packages: Mapping[str, TrainerPackage]) -> list[pulumi.Resource]:
        """Upload each package's sdist (by package directory) once, into that bucket."""
        ...


def owner_settings() -> dict[str, str]:
    """The stack settings that say whom this program's jobs belong to: its stack, its
    Pulumi project and its organization (``vertex_training.resources.submission.Owner``)."""
    return {
        "stack": pulumi.get_stack(),
        PROJECT_SETTING: pulumi.get_project(),
        ORGANIZATION_SETTING: pulumi.get_organization(),
    }


def program_settings(platform: JobPlatform | None, given: Mapping[str, Any]) -> dict[str, Any]:
    """A program's job's stack settings: this stack's name, the platform's settings, then
    the arguments ``given`` (those not None), which win."""
    settings: dict[str, Any] = {**owner_settings(), "config_from": PROGRAM}
    if platform is not None:
        settings.update(platform.job_settings())
    settings.update({key: value for key, value in given.items() if value is not None})
    return settings


def from_program(stack: Mapping[str, Any]) -> bool:
    """Whether the job with these stack settings was given as a program's arguments."""
    return stack.get("config_from") == PROGRAM


def argument_issue(name: str, issue: Issue) -> Issue:
    """``issue`` named by argument path (``job.workers.machine``) instead of stack config
    key (``vertex-training:jobs.<name>.workers.machine``)."""
    return rekeyed(issue, {job_key(name): JOB_ARGUMENT, IMAGES_KEY: IMAGES_ARGUMENT})


def mark_unknowns(value: Any) -> tuple[Any, bool]:
    """``value`` with every unknown in it (at any depth) as ``UNKNOWN_TEXT``, and whether
    it held any."""
    if is_unknown(value):
        return UNKNOWN_TEXT, True
    if isinstance(value, Mapping):
        pairs = {key: mark_unknowns(item) for key, item in value.items()}
        return {key: item for key, (item, _) in pairs.items()}, any(
            found for _, found in pairs.values()
        )
    if isinstance(value, list):
        items = [mark_unknowns(item) for item in value]
        return [item for item, _ in items], any(found for _, found in items)
    return value, False


def about_known_values(issues: list[Issue]) -> list[Issue]:
    """The issues that are not about a value a preview does not know yet."""
    return [issue for issue in issues if UNKNOWN_TEXT not in repr(issue.value)]


#: Stack settings that may be unknown in a preview and that the spec copies verbatim into
#: the request (so they stay unknown there): the platform TensorBoard's name.
UNKNOWN_PASSED_THROUGH = frozenset({"tensorboard"})


@dataclass
class ReadJob:
    """A job read from its keys and stack settings, as a preview knows them."""

    job: JobSpec | None = None
    #: Its mistakes about values already known.
    issues: list[Issue] = field(default_factory=list)
    #: Why it cannot be read before `pulumi up`: a value it needs is not known yet.
    unknown: str = ""
    #: Read, with a value of its keys not known yet (held as ``UNKNOWN_TEXT``): what
    #: only the whole job can tell (the local backend's preflight) waits for `pulumi up`.
    partly_known: bool = False
    #: The stack settings it was read against, once read.
    settings: StackSettings | None = None


def read_job(name: str, config: Any, settings: Any) -> ReadJob:
    """Parse a job's keys (``config``) against its stack settings: the one parse of a
    recorded or checked job, which every operation that reads one goes through (the
    providers' check and diff, a preview's review, the plugin's previews). A preview may
    not know every value: a value of another resource unknown in the keys is kept as
    ``UNKNOWN_TEXT`` (the request then holds it), and a job whose keys, or settings the
    request does not copy verbatim, are unknown is not read (its review, its estimate and
    its rules wait for `pulumi up`)."""
    from vertex_training import stackconfig
    from vertex_training.resources.state import known_run_after, whole_numbers

    if is_unknown(config) or is_unknown(settings):
        return ReadJob(unknown="its keys are not known before pulumi up")
    if not isinstance(settings, Mapping):
        issue = Issue(job_key(name), settings, "the job's stack settings are no mapping")
        return ReadJob(issues=[issue])
    unknown = sorted(
        k for k, v in settings.items() if is_unknown(v) and k not in UNKNOWN_PASSED_THROUGH
    )
    if unknown:
        return ReadJob(
            unknown=f"its {', '.join(unknown)} is not known before pulumi up "
            "(a resource still to be made)"
        )
    marked, partly_known = mark_unknowns(whole_numbers(known_run_after(config)))
    stack = {k: UNKNOWN_TEXT if is_unknown(v) else v for k, v in settings.items()}
    try:
        read = stackconfig.StackSettings(**stack)
        spec = stackconfig.parse_job(name, marked, read)
        return ReadJob(spec, partly_known=partly_known, settings=read)
    except SpecError as exc:
        issues = about_known_values(exc.issues) if partly_known else exc.issues
        why = "" if issues else "a value it needs is not known before pulumi up"
        return ReadJob(issues=list(issues), unknown=why)
    except (TypeError, ValueError) as exc:
        return ReadJob(issues=[Issue(job_key(name), settings, f"unreadable stack settings: {exc}")])


def recorded_view(recorded: Mapping[str, Any], read: ReadJob | None = None) -> dict[str, Any]:
    """A job's recorded inputs (its state without engine keys and outputs, in schema 4's
    shape or 2's) with its ``JobView``: read from a state of schema 2 or older, which
    recorded them; else derived by parsing the recorded config against the recorded
    stack settings, as ``check`` parsed it. The config's keys are given one by one
    beside the view's, so that a diff names each key that changed. A config that no
    longer parses raises ``SpecError``. ``read``: the recorded job as its record parsed
    it already (``JobRecord.spec``), which is then not parsed again."""
    if "request" in recorded:
        return dict(recorded)
    from vertex_training import stackconfig

    name = str(recorded.get("name"))
    config = recorded.get(CONFIG_KEY)
    if not isinstance(config, Mapping):
        issue = Issue(job_key(name), config, "the recorded config is no mapping")
        raise SpecError([issue])
    read = read or read_job(name, config, recorded.get("stack"))
    if read.job is None:
        raise SpecError(read.issues or [Issue(job_key(name), config, read.unknown)])
    stack = read.settings or stackconfig.StackSettings(**recorded["stack"])
    others = {key: value for key, value in recorded.items() if key != CONFIG_KEY}
    return {**config, **others, **view_of(read.job, stack)}


def with_packages(
    name: str,
    config: dict[str, Any],
    backend: str,
    platform: JobPlatform | None,
) -> tuple[dict[str, Any], list[pulumi.Resource]]:
    """The job's config with each ``package_path`` (a package directory of the project,
    the working directory) built into an sdist and named by its URI in ``package_uris``,
    as a stack config job's is; and what the job must wait for (the uploads). A vertex
    job's package is uploaded into ``platform``'s bucket. A mistake stops the program,
    named by argument."""
    plan = plan_packages(
        {name: config},
        backend=backend,
        bucket=platform.bucket_name if platform is not None else None,
        project_dir=Path.cwd(),
        build=True,
        no_bucket=(
            "a vertex job's package is uploaded to its platform's bucket: give the job "
            "platform=TrainingPlatform(...), or upload the sdist yourself and list its gs:// "
            "URI in package_uris"
        ),
    )
    if plan.issues:
        issues = [argument_issue(name, issue) for issue in plan.issues]
        raise pulumi.RunError("\n".join(f"{name}: {issue}" for issue in issues))
    uploads = platform.upload(plan.uploads) if platform is not None and plan.uploads else []
    return dict(plan.configs[name]), uploads
