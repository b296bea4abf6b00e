"""Jobs no stack knows: ``vertex-training jobs orphans``.

Jobs here are custom jobs, tuning jobs and the training pipelines of jobs that register
their model (``vertex_training.api.pipelines``; a pipeline's backing job is its own, never
listed apart). Acting on a pipeline cancels or deletes the pipeline, never its model.

A job this project submitted carries its identity label (``vertex_training_key``,
``vertex_training.api.labels``). After ``pulumi stack rm --force``, a lost state file or
an engine killed on another machine, such a job may be recorded in no stack's state: it
keeps running, and costing, where only Google remembers it. This module lists the jobs of
one project and region that carry the label, reads the states of the stacks that are
meant to own them (``pulumi stack export``, or a state file), and names the jobs none of
them records, each with its state, age, labels and what it has cost so far by the price
snapshot. ``act`` cancels them, or cancels and deletes them.

What counts as recorded:

- a job whose resource name (its location, kind and ID: Vertex AI gives the project by
  number or ID) appears anywhere in a state: a job resource's ID, a retry's attempts, a
  waiter's entries, an ``adopt:``;
- a job of a resource whose create a state holds pending (an engine killed between the
  submission and its record): its ``pulumi_project``, ``pulumi_stack`` and
  ``pulumi_resource`` labels name it, and the stack's next ``pulumi up`` adopts it by
  label. It is reported apart, never acted on.

A state is one stack of one Pulumi project, read from its resources' URNs: its pending
creates count only for the jobs of that project (``pulumi_project``), so that two
projects sharing a Google Cloud project, a stack name and a resource name never cover
each other's orphans. A job without that label (submitted by a release up to 0.3.0,
``vertex_training.resources.submission``) names no project: a pending create of its stack
and resource covers it, as those releases' creates adopt it. The job IDs a state records
are recorded whatever the job's labels.

``--project-name NAME`` lists only the jobs of that Pulumi project (its label value,
``label_value(NAME)``); the listing names each job's project, or says it has none.

A job without the identity label was not submitted by this project: the listing never
selects one (its filter requires the label), and ``act`` refuses one all the same.
"""

from __future__ import annotations

import datetime
import gzip
import json
import re
import subprocess
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertex_training.api import states
from vertex_training.api.labels import (
    IDENTITY_LABEL,
    PROJECT_LABEL,
    RESOURCE_LABEL,
    STACK_LABEL,
    label_key_ok,
    label_value,
    label_value_ok,
)
from vertex_training.api.times import epoch_s
from vertex_training.urns import Urn

if TYPE_CHECKING:
    from vertex_training.backends.base import JobStatus
    from vertex_training.backends.vertex import VertexBackend
    from vertex_training.catalog.prices import Snapshot

#: A job's resource name anywhere in a state: its location, kind and ID.
JOB_NAME = re.compile(
    r"projects/[^/\s\"]+/locations/([^/\s\"]+)/"
    r"(customJobs|hyperparameterTuningJobs|trainingPipelines)/(\d+)"
)
#: How long ``pulumi stack export`` of one stack may take.
EXPORT_TIMEOUT_S = 120
#: How long a delete waits for a cancelled job to end, and how often it looks.
CANCEL_WAIT_S = 15 * 60
CANCEL_POLL_S = 1.0
SECONDS_PER_HOUR = 3600
#: The states of a job that a cancel can still stop.
CANCELLABLE = (states.QUEUED, states.PENDING, states.RUNNING, states.PAUSED, states.UPDATING)

CANCEL = "cancel"
DELETE = "delete"
#: Why the command wants stacks, a Pulumi project or a label.
NO_SCOPE = (
    "name the stacks whose jobs are not orphans (--stack NAME, --state FILE), or restrict "
    "the listing to a Pulumi project (--project-name NAME) or a label (--label KEY=VALUE): "
    "without either, every job of the project would be listed as one"
)
#: A Pulumi project's name, as Pulumi's ``tokens.ValidateProjectName`` (pulumi/pulumi,
#: sdk/go/common/tokens) accepts it: 1 to 100 letters, digits, ``-``, ``_`` and ``.``.
PULUMI_PROJECT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
#: What the listing says of a job without the ``pulumi_project`` label.
NO_PROJECT = "(none: submitted by a release up to 0.3.0)"


class StateError(Exception):
    """A stack's state could not be read: no job may be judged without it."""


@dataclass(frozen=True)
class Known:
    """What the given stacks' states record."""

    #: (location, kind, job ID) of every job named in a state.
    jobs: frozenset[tuple[str, str, str]] = frozenset()
    #: (project label, stack label, resource label) of every job resource whose create
    #: is pending, the project label that of its state's Pulumi project.
    pending: frozenset[tuple[str, str, str]] = frozenset()
    #: The states read: ``stack NAME`` or a file's path.
    stacks: tuple[str, ...] = ()
    #: The Pulumi project of each state read, by where it was read ("": a state with no
    #: resources, which names none).
    projects: Mapping[str, str] = field(default_factory=dict)

    def records(self, name: str) -> bool:
        """Whether a state names the job ``name``."""
        key = job_key(name)
        return key is not None and key in self.jobs

    def pending_create(self, labels: Mapping[str, str]) -> bool:
        """Whether the job with ``labels`` is the one a pending create will adopt: one of
        its stack and resource, in a state of its Pulumi project (any, for a job without
        the project label: a release up to 0.3.0 submitted it)."""
        project = labels.get(PROJECT_LABEL)
        stack, resource = labels.get(STACK_LABEL, ""), labels.get(RESOURCE_LABEL, "")
        return any(
            (stack, resource) == (pending_stack, pending_resource)
            and project in (None, pending_project)
            for pending_project, pending_stack, pending_resource in self.pending
        )


def job_key(name: str) -> tuple[str, str, str] | None:
    """A job resource name's location, kind and ID (the project left out: the API names
    it by number where a user may write its ID); None for another text."""
    found = JOB_NAME.fullmatch(name)
    return (found[1], found[2], found[3]) if found else None


def read_state_file(path: Path) -> dict[str, Any]:
    """The deployment in a state file: what ``pulumi stack export`` prints (``{version,
    deployment}``) or a file backend's stack file (``{version, checkpoint: {latest}}``),
    gzipped or not."""
    try:
        raw = path.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        document = json.loads(text)
    except (OSError, ValueError) as exc:
        raise StateError(f"{path}: cannot be read as a Pulumi state: {exc}") from exc
    return deployment_of(document, str(path))


def export_stack(stack: str, cwd: Path, pulumi: str = "pulumi") -> dict[str, Any]:
    """The deployment of ``stack`` as ``pulumi stack export`` prints it, run in ``cwd``."""
    try:
        done = subprocess.run(
            [pulumi, "stack", "export", "--stack", stack, "--non-interactive"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=EXPORT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise StateError(f"`pulumi stack export --stack {stack}` could not run: {exc}") from exc
    if done.returncode != 0:
        why = done.stderr.strip() or done.stdout.strip()
        raise StateError(f"`pulumi stack export --stack {stack}` failed: {why}")
    try:
        document = json.loads(done.stdout)
    except ValueError as exc:
        raise StateError(f"`pulumi stack export --stack {stack}` printed no JSON: {exc}") from exc
    return deployment_of(document, f"stack {stack}")


def deployment_of(document: Any, source: str) -> dict[str, Any]:
    """The ``deployment`` of an export, or the ``latest`` of a file backend's checkpoint."""
    if isinstance(document, dict):
        if isinstance(document.get("deployment"), dict):
            return dict(document["deployment"])
        checkpoint = document.get("checkpoint")
        if isinstance(checkpoint, dict):
            latest = checkpoint.get("latest")
            return dict(latest) if isinstance(latest, dict) else {}
    raise StateError(
        f"{source}: not a Pulumi state (neither `pulumi stack export` output nor a stack file)"
    )


def known_jobs(deployments: Mapping[str, dict[str, Any]]) -> Known:
    """What ``deployments`` (each a stack's, as ``deployment_of`` gives it, by where it
    was read) record."""
    jobs: set[tuple[str, str, str]] = set()
    pending: set[tuple[str, str, str]] = set()
    projects: dict[str, str] = {}
    for source, deployment in deployments.items():
        for text in _texts(deployment):
            jobs.update((m[1], m[2], m[3]) for m in JOB_NAME.finditer(text))
        project = projects[source] = project_of(deployment, source)
        for operation in _pending_operations(deployment):
            urn = Urn.parse(str(operation["resource"].get("urn", "")))
            if urn is not None:
                pending.add((label_value(project), label_value(urn.stack), label_value(urn.name)))
    return Known(frozenset(jobs), frozenset(pending), tuple(deployments), projects)


def project_of(deployment: Mapping[str, Any], source: str) -> str:
    """The Pulumi project of a state, read from its resources' URNs ("" when it has none);
    ``StateError`` when they name several: a state is one stack of one project."""
    resources = deployment.get("resources") or []
    urns = [str(r.get("urn", "")) for r in resources if isinstance(r, dict)]
    urns += [str(op["resource"].get("urn", "")) for op in _pending_operations(deployment)]
    found = sorted({urn.project for urn in map(Urn.parse, urns) if urn and urn.project})
    if len(found) > 1:
        raise StateError(
            f"{source}: its resources' URNs name {len(found)} Pulumi projects "
            f"({', '.join(found)}): not one stack's state"
        )
    return found[0] if found else ""


def _pending_operations(deployment: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The pending operations of a state that name a resource."""
    operations = deployment.get("pending_operations") or []
    return [
        op for op in operations if isinstance(op, dict) and isinstance(op.get("resource"), dict)
    ]


def _texts(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def read_labels(texts: Sequence[str]) -> dict[str, str | None]:
    """``KEY=VALUE`` -> {KEY: VALUE}; ``KEY`` -> {KEY: None}, any value. A text that is no
    label (Google's rules, ``vertex_training.api.labels``) raises ValueError naming it."""
    labels: dict[str, str | None] = {}
    for text in texts:
        key, equals, value = text.partition("=")
        if not label_key_ok(key) or (equals and not label_value_ok(value)):
            raise ValueError(
                f"--label {text} is not a label: write KEY=VALUE (or KEY for any value), "
                "lowercase letters, digits, _ and -, the key starting with a letter"
            )
        labels[key] = value if equals else None
    return labels


def read_project_names(names: Sequence[str]) -> tuple[str, ...]:
    """The Pulumi projects ``--project-name`` names; a text that is no project name
    (``PULUMI_PROJECT_NAME``) raises ValueError naming it."""
    for name in names:
        if not PULUMI_PROJECT_NAME.fullmatch(name):
            raise ValueError(
                f"--project-name {name!r} is not a Pulumi project name: write the `name:` of "
                "the project's Pulumi.yaml (1 to 100 letters, digits, -, _ and .)"
            )
    return tuple(names)


def project_text(labels: Mapping[str, str]) -> str:
    """The Pulumi project a job's labels name (its label value), or NO_PROJECT."""
    return labels.get(PROJECT_LABEL, NO_PROJECT)


def read_states(stacks: Sequence[str], files: Sequence[Path], cwd: Path) -> Known:
    """What the stacks ``stacks`` (exported in ``cwd``) and the state files ``files``
    record; ``StateError`` when one cannot be read."""
    deployments = {f"stack {name}": export_stack(name, cwd) for name in stacks}
    deployments.update({str(path): read_state_file(path) for path in files})
    return known_jobs(deployments)


@dataclass(frozen=True)
class Cost:
    """What a job has cost so far: its hours run (a tuning job's: every trial's) times its
    hourly rate by the price snapshot; ``usd`` is None when the rate is unknown, and
    ``why`` says why."""

    usd: float | None
    hours: float
    why: str = ""


@dataclass(frozen=True)
class Orphan:
    """A labelled job no given stack records."""

    status: JobStatus
    age_s: float
    cost: Cost

    @property
    def name(self) -> str:
        return self.status.name


@dataclass
class Listing:
    """The labelled jobs of one project and region, judged against the given stacks."""

    where: str
    orphans: list[Orphan] = field(default_factory=list)
    #: Jobs a pending create of a given stack will adopt: left alone.
    pending: list[JobStatus] = field(default_factory=list)
    #: How many labelled jobs the given stacks record.
    recorded: int = 0


def find_orphans(
    backend: VertexBackend,
    known: Known,
    labels: Mapping[str, str | None],
    prices: Snapshot | None,
    *,
    project_names: Collection[str] = (),
    no_prices: str = "",
    now: Callable[[], float] = time.time,
) -> Listing:
    """The jobs in ``backend``'s project and region that carry the identity label and
    every label of ``labels`` (a value, or None for any), and the ``pulumi_project``
    label of one of ``project_names`` where it names any, judged against ``known``:
    the orphans grouped by Pulumi project (those without one last), then stack and
    resource. Each orphan is priced by ``prices`` (None: its cost is unknown,
    ``no_prices`` says why)."""
    from vertex_training.backends.vertex import label_filter

    projects = {label_value(name) for name in project_names}
    wanted: dict[str, str | None] = {IDENTITY_LABEL: None, **labels}
    if projects and PROJECT_LABEL not in wanted:  # one value filters; several, any value
        wanted[PROJECT_LABEL] = next(iter(projects)) if len(projects) == 1 else None
    listing = Listing(where=f"projects/{backend.project}/locations/{backend.region}")
    moment = now()
    for status in backend.list_jobs(label_filter(wanted)):
        if IDENTITY_LABEL not in status.labels:  # the filter said so; never trusted alone
            continue
        if projects and status.labels.get(PROJECT_LABEL) not in projects:
            continue
        if known.records(status.name):
            listing.recorded += 1
        elif known.pending_create(status.labels):
            listing.pending.append(status)
        else:
            created = epoch_s(status.create_time)
            age = moment - created if created is not None else 0.0
            # The body prices the job, and holds a tuning job's trials (their hours).
            needed = prices is not None or _is_tuning(status.name)
            body = (backend.get_body(status.name) or {}) if needed else {}
            listing.orphans.append(
                Orphan(status, age, cost_so_far(body, status, prices, no_prices, moment))
            )
    listing.orphans.sort(key=lambda orphan: _owner_order(orphan.status))
    listing.pending.sort(key=_owner_order)
    return listing


def _owner_order(status: JobStatus) -> tuple[bool, str, str, str, str]:
    """Jobs by Pulumi project (those without one last), stack, resource and name."""
    labels = status.labels
    return (
        PROJECT_LABEL not in labels,
        labels.get(PROJECT_LABEL, ""),
        labels.get(STACK_LABEL, ""),
        labels.get(RESOURCE_LABEL, ""),
        status.name,
    )


def cost_so_far(
    body: Mapping[str, Any],
    status: JobStatus,
    prices: Snapshot | None,
    no_prices: str,
    now: float,
) -> Cost:
    """What the job has cost by ``now``: its hours run (from its start, or each trial's,
    to its end or ``now``) at the hourly rate its pools have by ``prices``."""
    if _is_tuning(status.name):  # billed by its trials' hours
        spans = [(t.get("startTime", ""), t.get("endTime", "")) for t in body.get("trials") or []]
    else:
        spans = [(status.start_time, status.end_time)]
    hours = sum(_hours(start, end, now) for start, end in spans)
    if prices is None:
        return Cost(None, hours, no_prices or "no price snapshot")
    rate, why = hourly_rate(body, status, prices)
    return Cost(None if rate is None else rate * hours, hours, why)


def _is_tuning(name: str) -> bool:
    return "/hyperparameterTuningJobs/" in name


def _hours(start: str, end: str, now: float) -> float:
    began = epoch_s(start)
    if began is None:
        return 0.0
    ended = epoch_s(end)
    return max(0.0, ((ended if ended is not None else now) - began) / SECONDS_PER_HOUR)


def hourly_rate(
    body: Mapping[str, Any], status: JobStatus, prices: Snapshot
) -> tuple[float | None, str]:
    """The job's hourly rate (one trial's, for a tuning job) by ``prices``, read from its
    body as ``pulumi import`` reads a job; (None, why) when it cannot be priced."""
    from vertex_training import stackconfig
    from vertex_training.api.job_config import config_of_request
    from vertex_training.backends.base import location_of
    from vertex_training.errors import SpecError
    from vertex_training.review import cost

    location = location_of(status.name)
    try:
        config = config_of_request(body, name=status.job_id)
        settings = stackconfig.StackSettings(
            stack="orphans", project=str(location["project"]), region=str(location["region"])
        )
        job = stackconfig.parse_job(status.job_id, config, settings)
    except (ValueError, SpecError) as exc:
        return None, f"its pools could not be read for pricing: {exc}"
    estimate = cost.estimate(job, prices)
    if estimate.hourly_usd is None:
        return None, "; ".join(estimate.unknown)
    return estimate.hourly_usd, ""


@dataclass(frozen=True)
class Outcome:
    """What ``act`` did to one job: ``done`` (cancelled, deleted) or why not."""

    name: str
    done: str
    error: str = ""


def act(
    backend: VertexBackend,
    orphans: Sequence[Orphan],
    action: str,
    *,
    wait_s: float = CANCEL_WAIT_S,
    poll_s: float = CANCEL_POLL_S,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    progress: Callable[[str], None] = lambda line: None,
) -> list[Outcome]:
    """Cancel each orphan that still runs; for ``DELETE``, then wait for it to end and
    delete it (Vertex AI deletes only ended jobs). A job without the identity label is
    refused, whatever the caller passed."""
    outcomes: list[Outcome] = []
    cancelled: list[str] = []
    for orphan in orphans:
        if IDENTITY_LABEL not in orphan.status.labels:
            outcomes.append(Outcome(orphan.name, "", f"no {IDENTITY_LABEL} label: not ours"))
            continue
        if orphan.status.state in CANCELLABLE:
            backend.cancel(orphan.name)
            cancelled.append(orphan.name)
            progress(f"{orphan.name}: cancel requested")
        if action == CANCEL:
            done = "cancelled" if orphan.name in cancelled else f"left {orphan.status.state}"
            outcomes.append(Outcome(orphan.name, done))
    if action != DELETE:
        return outcomes
    if cancelled:
        progress(
            f"waiting for {len(cancelled)} cancelled job(s) to end: Vertex AI deletes ended jobs"
        )
    deadline = clock() + wait_s
    for orphan in orphans:
        if IDENTITY_LABEL not in orphan.status.labels:
            continue
        state = orphan.status.state
        while state not in states.TERMINAL_STATES:  # cancelled here, or CANCELLING already
            if clock() > deadline:
                break
            sleep(poll_s)
            current = backend.get(orphan.name)
            state = current.state if current is not None else states.CANCELLED
        if state not in states.TERMINAL_STATES:
            why = f"still {state} after {wait_s:g}s: run the command again once it has ended"
            outcomes.append(Outcome(orphan.name, "", why))
            continue
        backend.delete(orphan.name)
        outcomes.append(Outcome(orphan.name, "deleted"))
    return outcomes


# -- what the command prints


def age_text(seconds: float) -> str:
    """``3d04h``, ``2h05m``, ``4m10s``."""
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s"


def cost_text(cost: Cost) -> str:
    """``$0.0123`` or ``unknown``."""
    return "unknown" if cost.usd is None else f"${cost.usd:.4f}"


def to_text(
    listing: Listing, known: Known, prices: Snapshot | None = None, prices_file: Path | None = None
) -> str:
    """The listing as a table, the snapshot its costs come from (``prices``, read from
    ``prices_file``), then what was left alone and why."""
    stacks = ", ".join(_state_text(source, known) for source in known.stacks) or "none"
    lines = [
        f"{listing.where}: {len(listing.orphans)} job(s) with the {IDENTITY_LABEL} label that "
        f"no given stack records ({listing.recorded} recorded; stacks read: {stacks})"
    ]
    if listing.orphans:
        rows = [("JOB", "STATE", "AGE", "COST SO FAR", "PULUMI PROJECT", "LABELS")]
        for orphan in listing.orphans:
            labels = " ".join(
                f"{k}={v}"
                for k, v in sorted(orphan.status.labels.items())
                if k not in (IDENTITY_LABEL, PROJECT_LABEL)
            )
            rows.append(
                (
                    orphan.name,
                    orphan.status.state,
                    age_text(orphan.age_s),
                    cost_text(orphan.cost),
                    project_text(orphan.status.labels),
                    labels,
                )
            )
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        lines += [
            "  ".join(cell.ljust(width) for cell, width in zip(row[:5], widths, strict=True))
            + "  "
            + row[5]
            for row in rows
        ]
        whys = sorted({o.cost.why for o in listing.orphans if o.cost.usd is None and o.cost.why})
        lines += [f"cost unknown: {why}" for why in whys]
        if prices is not None:
            from vertex_training.catalog.refresh import is_loopback

            invented = " (a fake's invented prices)" if is_loopback(prices.source) else ""
            lines.append(
                f"costs so far by {prices_file or 'the price snapshot'}: prices read "
                f"{prices.read_date} from {prices.source}{invented}"
            )
    for status in listing.pending:
        lines.append(
            f"left alone: {status.name} ({status.state}) is the job of a create pending in "
            f"stack {status.labels.get(STACK_LABEL, '')}, Pulumi project "
            f"{project_text(status.labels)}: its next `pulumi up` adopts it"
        )
    return "\n".join(lines) + "\n"


def _state_text(source: str, known: Known) -> str:
    """``stack dev (Pulumi project training)``: a state read, and the project it counts for."""
    project = known.projects.get(source, "")
    return f"{source} (Pulumi project {project or 'unknown: no resources'})"


def to_json(listing: Listing, known: Known, now: float) -> dict[str, Any]:
    """The listing as plain data."""
    return {
        "where": listing.where,
        "read_at": datetime.datetime.fromtimestamp(now, datetime.UTC).isoformat(),
        "stacks": list(known.stacks),
        "stack_projects": {source: known.projects.get(source, "") for source in known.stacks},
        "recorded": listing.recorded,
        "orphans": [
            {
                "name": o.name,
                "state": o.status.state,
                "create_time": o.status.create_time,
                "age_s": round(o.age_s, 1),
                "pulumi_project": o.status.labels.get(PROJECT_LABEL),
                "labels": o.status.labels,
                "hours_run": round(o.cost.hours, 6),
                "cost_usd": o.cost.usd,
                "cost_unknown": o.cost.why if o.cost.usd is None else "",
            }
            for o in listing.orphans
        ],
        "pending_creates": [s.name for s in listing.pending],
    }
