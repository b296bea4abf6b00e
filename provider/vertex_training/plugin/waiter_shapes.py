"""The JobWaiter's shapes in the plugin: its properties as the dynamic waiter's, a job's
``waiterEntry`` (its wait plan), which entries of its ``jobs`` changed (``waiter_diff``),
what its preview says of jobs it waits for again, and the trials it saw as the schema's
types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pulumi.provider.experimental.property_value import PropertyValue
from pulumi.provider.experimental.provider import CheckFailure, PropertyDiff, PropertyDiffKind

from vertex_training.backends.base import WaitedTrialsOutput
from vertex_training.plugin import shapes
from vertex_training.plugin.values import property_value
from vertex_training.resources.job_arguments import UNKNOWN_TEXT
from vertex_training.resources.state import is_unknown
from vertex_training.stackconfig import WAIT_UNTIL, WAITED

if TYPE_CHECKING:
    from vertex_training.stackconfig import JobSpec

#: The keys every job's ``waiterEntry`` has (``waiter_entry``).
ENTRY_KEYS = ("name", "resourceName", "until")
#: The keys of its wait plan: how long the wait may last, and (only when the job's
#: ``wait`` gives one) how long the job may take to start running.
TIMEOUT_KEY, START_TIMEOUT_KEY = PLAN_KEYS = ("timeoutS", "startTimeoutS")
#: The keys an entry adds for a job with ``retry`` (the waiter submits its next attempts
#: from them), and the only ones an entry of a build before the plan had beside
#: ``ENTRY_KEYS``: the job's keys and settings as its check read them.
RESUBMISSION_KEYS = ("config", "stack")
#: How a program lists a job in a JobWaiter, in each language of the docs.
LIST_ENTRY = (
    "list the job's `waiterEntry` output (`${train.waiterEntry}` in YAML, "
    "`train.waiterEntry` in TypeScript, `train.WaiterEntry` in Go)"
)


def entry_failures(jobs: Any) -> list[CheckFailure]:
    """What a JobWaiter's ``jobs`` holds that is no job's ``waiterEntry`` (one written by
    hand, say, in a YAML program), each on its property path, and a job listed twice. An
    entry not known yet (a job still to be made) is checked once it is. The entries'
    values are never shown: a job's keys may hold a secret."""
    if is_unknown(jobs) or jobs is None:
        return []
    if not isinstance(jobs, list):
        return [CheckFailure("jobs", f"jobs: must be a list of jobs' entries; {LIST_ENTRY}")]
    failures, seen = [], set()
    for index, entry in enumerate(jobs):
        path = f"jobs[{index}]"
        if is_unknown(entry):
            continue
        missing = _missing(entry)
        if missing:
            what = (
                f"it lacks {', '.join(missing)}"
                if isinstance(entry, Mapping)
                else (f"it is a {type(entry).__name__}")
            )
            failures.append(
                CheckFailure(path, f"{path}: is no job's waiterEntry ({what}); {LIST_ENTRY}")
            )
        elif not is_unknown(entry["until"]) and entry["until"] not in WAIT_UNTIL:
            failures.append(
                CheckFailure(
                    f"{path}.until",
                    f"{path}.until: must be one of {', '.join(WAIT_UNTIL)}, as the job's "
                    f"`wait` sets it; {LIST_ENTRY} (got {entry['until']!r})",
                )
            )
        elif (wrong := _plan_failure(path, entry)) is not None:
            failures.append(wrong)
        elif entry["name"] in seen:
            failures.append(
                CheckFailure(
                    path, f"{path}: lists job {entry['name']} a second time; list each job once"
                )
            )
        if isinstance(entry, Mapping) and not is_unknown(entry.get("name")):
            seen.add(entry.get("name"))
    return failures


def _missing(entry: Any) -> list[str]:
    """The keys a job's entry must have that ``entry`` lacks: ``ENTRY_KEYS``, and its wait
    plan's ``timeoutS`` unless it has the job's keys and settings (``config``, ``stack``)."""
    if not isinstance(entry, Mapping):
        return [*ENTRY_KEYS, TIMEOUT_KEY]
    missing = [key for key in ENTRY_KEYS if key not in entry]
    if TIMEOUT_KEY not in entry and not all(key in entry for key in RESUBMISSION_KEYS):
        missing.append(TIMEOUT_KEY)
    return missing


def _plan_failure(path: str, entry: Mapping[str, Any]) -> CheckFailure | None:
    """What in an entry's wait plan the waiter could not follow: a timeout that is no
    number of seconds over 0, or (the job's location is read from it) a resource name of
    no job; None for a plan it can, and for an entry with none (``RESUBMISSION_KEYS``)."""
    from vertex_training.backends.base import location_of

    if TIMEOUT_KEY not in entry:
        return None
    for key in PLAN_KEYS:
        value = entry.get(key)
        if key not in entry or is_unknown(value):
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            return CheckFailure(
                f"{path}.{key}",
                f"{path}.{key}: must be a number of seconds over 0, as the job's `wait` "
                f"sets it; {LIST_ENTRY} (got {value!r})",
            )
    resource_name = entry["resourceName"]
    if is_unknown(resource_name):
        return None
    try:
        location_of(str(resource_name))
    except ValueError:
        return CheckFailure(
            f"{path}.resourceName",
            f"{path}.resourceName: {resource_name!r} names no Vertex AI or local job; {LIST_ENTRY}",
        )
    return None


def diff_kind(old: Any, new: Any, replace: bool) -> PropertyDiffKind:
    if old is None:
        return PropertyDiffKind.ADD_REPLACE if replace else PropertyDiffKind.ADD
    if new is None:
        return PropertyDiffKind.DELETE_REPLACE if replace else PropertyDiffKind.DELETE
    return PropertyDiffKind.UPDATE_REPLACE if replace else PropertyDiffKind.UPDATE


def waiting_again(olds: Mapping[str, Any], news: Mapping[str, Any]) -> str:
    """What a JobWaiter's preview says of the jobs it waits for again because the last
    wait did not see them through (its recorded ``problems``: a job that failed it, or
    one it was stopped before, by Ctrl-C), or nothing when there are none."""
    from vertex_training.resources.cancellation import STOPPED

    problems = olds.get("problems") or {}
    listed = {e.get("name") for e in news.get("jobs") or [] if isinstance(e, Mapping)}
    again = {name: str(problems[name]) for name in sorted(problems) if name in listed}
    stopped = [name for name, problem in again.items() if problem.startswith(STOPPED)]
    failed = [name for name in again if name not in stopped]
    said = []
    if failed:
        said.append(
            f"waits again for {', '.join(failed)}, which failed the last wait: a job that "
            "ended FAILED fails it again until the job is changed or its `rerun` bumped "
            "(which submits it again)"
        )
    if stopped:
        said.append(f"waits again for {', '.join(stopped)}, whose last wait was stopped (Ctrl-C)")
    return "; ".join(said)


def waiter_state(props: Mapping[str, Any]) -> dict[str, Any]:
    """A JobWaiter's properties (plain, in the schema's naming) as the dynamic waiter's:
    the jobs it waits for by name (those whose ``wait`` is ``submitted`` left out), each
    with its wait plan (``state.Waited``: its timeouts; the job's keys and settings for one
    with ``retry``), and what it saw. (Its progress goes on the row of its URN, which the
    engine names: ``JobWaiterProvider.create_at``.)"""
    from vertex_training.resources.waiter import SEEN_OUTPUTS

    jobs = {}
    for entry in props.get("jobs") or []:
        if not isinstance(entry, Mapping) or entry.get("until") not in WAITED:
            continue
        waited = {"resource_name": entry.get("resourceName"), "until": entry["until"]}
        if all(key in entry for key in RESUBMISSION_KEYS):
            waited.update({key: entry[key] or {} for key in RESUBMISSION_KEYS})
        else:
            waited.update(
                {shapes.snake(key): entry[key] for key in PLAN_KEYS if entry.get(key) is not None}
            )
        jobs[str(entry["name"])] = waited
    seen = {key: props[key] for key in SEEN_OUTPUTS if key in props}
    return {"jobs": jobs, "stack": {}, **seen}


def waiter_entry(
    name: str,
    resource_name: str,
    spec: JobSpec | None,
    keys: tuple[Any, Any],
    secret: bool,
) -> PropertyValue:
    """A job's ``waiterEntry``: its name, resource name and wait plan (the state its wait
    is for, and how long it may last), which the JobWaiter follows as it is; for a job
    with ``retry``, also its keys and settings (``keys``: config, settings), from which
    the waiter submits its next attempts. A plan holds no secret; an entry with the keys
    is secret whole when the job's inputs hold a secret (Pulumi YAML passes a secret
    nested in an output on as ``{}``, Node makes the whole output secret). ``spec``: the
    job as its provider reads it; None in a preview that cannot read it yet, whose plan is
    unknown."""
    from vertex_training.resources.unwaited import wait_until

    config, settings = keys
    entry: dict[str, Any] = {
        "name": name,
        "resourceName": resource_name,
        "until": wait_until(config),
    }
    if spec is None:
        entry[TIMEOUT_KEY] = UNKNOWN_TEXT
        return property_value(entry)
    provider_side = spec.settings()
    wait = provider_side["wait"]
    entry[TIMEOUT_KEY] = wait["timeout_s"]
    if wait.get("start_timeout_s") is not None:
        entry[START_TIMEOUT_KEY] = wait["start_timeout_s"]
    if "retry" not in provider_side:
        return property_value(entry)
    entry.update(zip(RESUBMISSION_KEYS, (config, settings), strict=True))
    return property_value(entry, secret=secret)


def _key_path(key: str) -> str:
    """A map key as a step of a property path (``.args``, or ``["a.b"]``)."""
    if key.isidentifier():
        return f".{key}"
    escaped = key.replace("\\", "\\\\").replace('"', '\\"')
    return f'["{escaped}"]'


def _entry_diff(
    path: str, old: Mapping[str, Any], new: Mapping[str, Any]
) -> dict[str, PropertyDiff]:
    """What changed in one job's waiter entry, by property path under ``path``: each of
    its job's keys and settings on its own (``jobs[1].config.args``)."""
    detailed = {}
    for key in sorted(set(old) | set(new)):
        was, now = old.get(key), new.get(key)
        if was == now:
            continue
        if key in ("config", "stack") and isinstance(was, Mapping) and isinstance(now, Mapping):
            for inner in sorted(set(was) | set(now)):
                if was.get(inner) != now.get(inner):
                    kind = diff_kind(was.get(inner), now.get(inner), False)
                    detailed[f"{path}.{key}{_key_path(inner)}"] = PropertyDiff(kind, True)
            continue
        detailed[f"{path}.{key}"] = PropertyDiff(diff_kind(was, now, False), True)
    return detailed


def waiter_diff(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, PropertyDiff]:
    """What changed in a JobWaiter's ``jobs`` (plain), by property path as the engine
    reads one (an index of the recorded list for a removal, of the new list otherwise):
    the entries of the jobs added or removed, and the keys that changed in the others.
    Entries are matched by their job's name, so a reordered list is no change; one that
    moved and changed, or is not known yet (a job a preview replaces), is shown whole at
    its new place, and two changes at one place as an update of it."""
    olds_jobs, news_jobs = olds.get("jobs"), news.get("jobs")
    if not isinstance(olds_jobs, list) or not isinstance(news_jobs, list):
        return {"jobs": PropertyDiff(PropertyDiffKind.UPDATE, True)}
    was = {str(e.get("name")): (i, e) for i, e in enumerate(olds_jobs) if isinstance(e, Mapping)}
    now = {str(e.get("name")): (i, e) for i, e in enumerate(news_jobs) if isinstance(e, Mapping)}
    unknown = [i for i, entry in enumerate(news_jobs) if not isinstance(entry, Mapping)]
    detailed: dict[str, PropertyDiff] = {}

    def whole(index: int, kind: PropertyDiffKind) -> None:
        path = f"jobs[{index}]"
        detailed[path] = PropertyDiff(PropertyDiffKind.UPDATE if path in detailed else kind, True)

    gone = sorted(set(was) - set(now))
    if len(gone) > len(unknown):  # some were removed (which, when others are unknown?)
        for name in gone:
            whole(was[name][0], PropertyDiffKind.DELETE)
    for index in unknown:
        whole(index, PropertyDiffKind.UPDATE if index < len(olds_jobs) else PropertyDiffKind.ADD)
    for name, (index, entry) in sorted(now.items()):
        at, old = was.get(name, (index, None))
        if old is None:
            whole(index, PropertyDiffKind.ADD)
        elif old != entry and at == index:
            detailed.update(_entry_diff(f"jobs[{index}]", old, entry))
        elif old != entry:
            whole(index, PropertyDiffKind.UPDATE)
    return detailed


def camel_keys(value: Any) -> Any:
    """A mapping's keys in camelCase (``resource_name`` -> ``resourceName``), its values
    as they are; anything else (none yet, say) as it is."""
    if not isinstance(value, Mapping):
        return value
    return {shapes.camel(key): item for key, item in value.items()}


def attempt_outputs(attempts: Any) -> Any:
    """A job's attempts (``resources.attempts.Attempt.output``) as the schema's Attempt
    type: ``resourceName``, ``jobId``, ``consoleUrl``, ``logsUrl`` for their snake_case."""
    if not isinstance(attempts, list):
        return attempts
    return [camel_keys(attempt) for attempt in attempts]


def waited_trials(trials: Any) -> Any:
    """A JobWaiter's trials of one tuning job (``trials``, ``best_trial``) as the schema's
    WaitedTrials type (``backends.base.WaitedTrialsOutput``), each trial a Trial."""
    if not isinstance(trials, Mapping):
        return trials
    return shapes.properties(trials, WaitedTrialsOutput)
