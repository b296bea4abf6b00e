"""``pulumi preview --json`` of any program -> the plan a reviewer reads:
``vertex-training review``.

The engine's preview already knows, for every resource, what the change does to it (its
step: create, update, replace, delete, same), what the program gives it (the step's old
and new inputs) and why it is replaced (the provider's detailed diff). This module picks
the job resources out of the steps, whatever host made them (``resources.job_of``), and
builds the ``vertex_training.review.plan.Plan`` that ``vertex-training plan`` builds from
a stack file, so both print through the same renderer: each job submitted, replaced (the
keys that changed in the program's own words, those that force the replacement marked),
updated, deleted or unchanged, its pools, its cost from a price snapshot, the preview's
warnings about it, the team's rules and the quota section.

Nothing here runs the program or calls Google but the quota reader it is given: the
preview's JSON holds all that is judged. Secrets stay as the engine printed them
(``[secret]``).
"""

from __future__ import annotations

import contextlib
import datetime
import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vertex_training.errors import Issue, SpecError
from vertex_training.keys import POLICIES_KEY
from vertex_training.preview.resources import (
    JOB_TYPES,
    Resource,
    ResourceJob,
    buckets_of,
    grants_of,
    job_of,
)
from vertex_training.review.plan import (
    DELETE,
    INVALID,
    PERSISTENT,
    REPLACE,
    SUBMIT,
    SUBMITTING,
    UNCHANGED,
    UPDATE,
    JobPlan,
    KeyChange,
    Plan,
    key_changes,
    pool_text,
)
from vertex_training.urns import Urn

if TYPE_CHECKING:
    from vertex_training.catalog.cloud_quotas import Reader
    from vertex_training.preview.pulumi_gcp import PersistentResource
    from vertex_training.review.policies import PoliciesConfig

#: The engine's step operations -> what they do to a job. A replacement shows as one
#: ``replace`` step or as its parts (``create-replacement``, ``delete-replaced``).
OPERATIONS = {
    "create": SUBMIT,
    "same": UNCHANGED,
    "update": UPDATE,
    "replace": REPLACE,
    "create-replacement": REPLACE,
    "delete-replaced": REPLACE,
    "delete": DELETE,
    # `pulumi import` (or an `import` option) adopts a job already there: nothing runs.
    "import": UNCHANGED,
    "import-replacement": REPLACE,
    "read": UNCHANGED,
    "refresh": UNCHANGED,
}
#: The kinds of a detailed diff that replace the resource.
REPLACING_KINDS = ("add-replace", "delete-replace", "update-replace")
#: The provider config key that names a price snapshot (the plugin's ``prices``).
PRICES_CONFIG = "vertex-training:prices"
PREVIEW_KEY = "pulumi preview"
#: How a mistake names the command's own arguments.
PREVIEW_ARGUMENT = "review PREVIEW"
PACK_CONFIG_OPTION = "--policy-pack-config"
#: How the review names what it compares with.
AGAINST = "`pulumi preview` against the stack's state"


@dataclass(frozen=True)
class Refusal(Issue):
    """A mistake as the preview printed it: its property path and the words that follow,
    which name the bad value already."""

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


#: How the engine words a check failure before the provider's own text.
CHECK_FAILURE = " has a problem: "


def refusal(message: str) -> Refusal:
    """One of the preview's error messages as a mistake: a check failure's own text
    (``job.machine: ... (got 'e2-standrd-4')``) by its property path, anything else whole."""
    reason = message.split(CHECK_FAILURE, 1)[-1] if CHECK_FAILURE in message else ""
    key, colon, rest = reason.partition(": ")
    if colon and " " not in key:
        return Refusal(key, None, rest)
    return Refusal(PREVIEW_KEY, None, message)


@dataclass
class _Seen:
    """One job resource across the preview's steps."""

    change: str
    old: ResourceJob | None = None
    new: ResourceJob | None = None
    replace_reasons: list[str] = field(default_factory=list)
    detailed: dict[str, Any] = field(default_factory=dict)
    #: What the job registered last, as its old state's ``model`` output has it.
    last_model: dict[str, Any] = field(default_factory=dict)


def read_preview(text: str, source: str) -> dict[str, Any]:
    """The preview's JSON document, refused with the fix when it is none."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise SpecError([Issue(PREVIEW_ARGUMENT, source, f"is no JSON ({exc}): {_HOW}")]) from None
    if not isinstance(document, Mapping) or not isinstance(document.get("steps", []), list):
        raise SpecError([Issue(PREVIEW_ARGUMENT, source, f"holds no preview steps: {_HOW}")])
    return dict(document)


def review_file(
    preview: str,
    *,
    pack_config: Path | None = None,
    **options: Any,
) -> Plan:
    """``review_preview`` of the preview in the file ``preview`` (``-``: stdin), with the
    rules of the policy pack config file ``pack_config`` when one is given."""
    source = "stdin" if preview == "-" else preview
    try:
        text = sys.stdin.read() if preview == "-" else Path(preview).read_text()
    except OSError as exc:
        issue = Issue(PREVIEW_ARGUMENT, preview, f"cannot be read ({exc.strerror}): {_HOW}")
        raise SpecError([issue]) from None
    rules = read_pack_config(pack_config) if pack_config is not None else None
    return review_preview(read_preview(text, source), policies=rules, **options)


def read_pack_config(path: Path) -> PoliciesConfig:
    """The rules a policy pack config file turns on (``policies.from_pack_config``)."""
    from vertex_training.review.policies import from_pack_config

    try:
        raw = json.loads(path.read_text())
    except OSError as exc:
        message = f"cannot be read ({exc.strerror}); name a JSON file (docs/policies.md)"
        raise SpecError([Issue(PACK_CONFIG_OPTION, str(path), message)]) from None
    except ValueError as exc:
        message = f"is no JSON ({exc}): see docs/policies.md"
        raise SpecError([Issue(PACK_CONFIG_OPTION, str(path), message)]) from None
    return from_pack_config(raw, str(path))


_HOW = "give the output of `pulumi preview --json --stack <stack>` (stdout only)"


def review_preview(
    document: Mapping[str, Any],
    *,
    stack: str | None = None,
    prices_file: Path | None = None,
    policies: PoliciesConfig | None = None,
    quota_reader: Reader | None = None,
    today: datetime.date | None = None,
) -> Plan:
    """The plan of the change ``document`` (``pulumi preview --json``) previews.

    Prices come from ``prices_file``, else the snapshot the program's provider config
    names (``vertex-training:prices``, relative to the working directory), else
    ``prices/snapshot.json`` there. The rules are ``policies``, else the stack's
    ``vertex-training:policies`` as the preview's config shows it, else none.
    """
    from vertex_training.review import cost
    from vertex_training.review import policies as rules
    from vertex_training.review.quota_check import check_quotas

    config = document.get("config") or {}
    snapshot, prices_note = cost.load_prices(_prices_path(prices_file, config), today)
    stack_issues: list[Issue] = []
    if policies is None:
        try:
            policies = _stack_policies(config)
        except SpecError as exc:
            stack_issues.extend(exc.issues)
    seen, resources = _jobs_and_resources(document.get("steps") or [])
    errors, warnings = _diagnostics(document.get("diagnostics") or [])
    waited = waited_models(document.get("steps") or [])
    plans = [
        _plan(urn, job, snapshot, errors, warnings, waited=waited) for urn, job in seen.items()
    ]
    for urn, messages in errors.items():
        refused: list[Issue] = [refusal(message) for message in messages]
        if urn in seen:
            continue
        parsed = Urn.parse(urn)
        if parsed and parsed.type in JOB_TYPES:  # refused by its check: no step was made
            plans.append(JobPlan(parsed.name, INVALID, issues=refused))
        else:
            stack_issues += refused
    plans.sort(key=lambda p: p.name)
    results = []
    if policies is not None:
        judged = {p.name: p.job for p in plans if p.job is not None and p.change != DELETE}
        estimates = {p.name: p.estimate for p in plans if p.estimate is not None}
        changed = [p.name for p in plans if p.change in SUBMITTING]
        grants = [grant for resource in resources for grant in grants_of(resource)]
        # What else the change starts that costs, with no job to judge: a persistent
        # resource (a month of it), a job whose cost is unknown (not read, or not known yet).
        others = {p.name: p.estimate for p in plans if p.change in SUBMITTING and p.job is None}
        results = rules.evaluate(
            policies,
            judged,
            None,
            estimates,
            changed,
            others=others,
            grants=grants,
            buckets=buckets_of(resources, grants),
            keys={job.name: job.key for job in _shown_jobs(seen)},
        )
    quotas = check_quotas(plans, quota_reader, snapshot)
    name = stack or _stack_of(seen, resources) or "(unknown stack)"
    return Plan(
        name,
        "",
        plans,
        results,
        stack_issues,
        snapshot,
        prices_note,
        quotas,
        against=AGAINST,
    )


def _prices_path(given: Path | None, config: Mapping[str, Any]) -> Path:
    from vertex_training.catalog.prices import SNAPSHOT_PATH

    if given is not None:
        return given
    named = config.get(PRICES_CONFIG)
    return Path(named) if isinstance(named, str) and named else SNAPSHOT_PATH


def _stack_policies(config: Mapping[str, Any]) -> PoliciesConfig | None:
    """The stack's rules as its config holds them (the preview prints an object's value
    as its JSON text); None when it has none."""
    from vertex_training.review.policies import parse_policies

    raw = config.get(POLICIES_KEY)
    if raw is None:
        return None
    if isinstance(raw, str):
        with contextlib.suppress(ValueError):  # a plain text: refused as the rules
            raw = json.loads(raw)
    return parse_policies(raw)


def _jobs_and_resources(
    steps: list[Any],
) -> tuple[dict[str, _Seen], list[Resource]]:
    """Each job resource's change and its old and new job; every resource the change
    keeps or makes, for the platform rules."""
    seen: dict[str, _Seen] = {}
    resources: list[Resource] = []
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            continue
        op = str(step.get("op"))
        urn = step.get("urn")
        old = _resource(step.get("oldState"), urn, index, "oldState")
        new = _resource(step.get("newState"), urn, index, "newState")
        if new is not None and op not in ("delete", "delete-replaced"):
            resources.append(new)
        change = OPERATIONS.get(op)
        shown = new if new is not None else old
        if change is None or shown is None:
            continue
        found = job_of(shown)
        if found is None:
            continue
        entry = seen.setdefault(str(step.get("urn") or shown.urn), _Seen(change))
        if change == REPLACE:
            entry.change = REPLACE
        entry.new = entry.new or (job_of(new) if new is not None else None)
        entry.old = entry.old or (job_of(old) if old is not None else None)
        entry.replace_reasons += [str(r) for r in step.get("replaceReasons") or []]
        entry.detailed.update(step.get("detailedDiff") or {})
        entry.last_model = entry.last_model or _outputs(step.get("oldState")).get("model") or {}
    return seen, resources


def _version_of(model: Mapping[str, Any]) -> str:
    """The version a ``model`` output names, in either naming ("" for none)."""
    return str(model.get("version_id") or model.get("versionId") or "")


def _outputs(state: Any) -> Mapping[str, Any]:
    """A step's state's outputs ({} when it has none)."""
    outputs = state.get("outputs") if isinstance(state, Mapping) else None
    return outputs if isinstance(outputs, Mapping) else {}


def waited_models(steps: list[Any]) -> dict[str, Any]:
    """What the waiters of a preview's old states last saw each job register, by job
    name (a dynamic job that waits records its model in its waiter only)."""
    found: dict[str, Any] = {}
    for step in steps:
        models = _outputs(step.get("oldState") if isinstance(step, Mapping) else None).get("models")
        if isinstance(models, Mapping):
            found.update(models)
    return found


def _resource(state: Any, step_urn: Any, index: int, where: str) -> Resource | None:
    """The resource a step's state shows, by its URN (else the step's); a state that
    names neither is refused, naming the step."""
    if not isinstance(state, Mapping) or not state.get("type"):
        return None
    urn = state.get("urn") or step_urn
    if not isinstance(urn, str) or Urn.parse(urn) is None:
        message = (
            f"names no Pulumi resource URN (got {urn!r}) for its {state['type']} resource: "
            f"{_HOW}, unedited"
        )
        raise SpecError([Issue(f"{PREVIEW_ARGUMENT} steps[{index}].{where}.urn", urn, message)])
    inputs = state.get("inputs")
    return Resource(str(state["type"]), urn, inputs if isinstance(inputs, Mapping) else {})


def _diagnostics(
    diagnostics: list[Any],
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """The preview's errors and warnings, by the URN they are about ("" for none)."""
    errors: dict[str, list[str]] = {}
    warnings: dict[str, list[str]] = {}
    for diagnostic in diagnostics:
        if not isinstance(diagnostic, Mapping):
            continue
        severity = diagnostic.get("severity")
        target = errors if severity == "error" else warnings if severity == "warning" else None
        message = str(diagnostic.get("message") or "").strip().removeprefix("error: ")
        if target is not None and message:
            target.setdefault(str(diagnostic.get("urn") or ""), []).append(message)
    return errors, warnings


def _shown_jobs(seen: Mapping[str, _Seen]) -> list[ResourceJob]:
    """Each job as the change leaves it (as it was, for a deleted one)."""
    shown = [entry.new if entry.new is not None else entry.old for entry in seen.values()]
    return [job for job in shown if job is not None]


def _plan(
    urn: str,
    seen: _Seen,
    snapshot: Any,
    errors: Mapping[str, list[str]],
    warnings: Mapping[str, list[str]],
    *,
    waited: Mapping[str, Any],
) -> JobPlan:
    from vertex_training.review import cost

    shown = seen.new if seen.change != DELETE and seen.new is not None else seen.old
    assert shown is not None
    plan = JobPlan(shown.name, seen.change, warnings=list(warnings.get(urn, [])))
    plan.declared_by, plan.not_reviewed = shown.declared_by, shown.not_reviewed
    if shown.persistent is not None:
        return _persistent_plan(plan, seen, shown.persistent, snapshot)
    # What the job registered last: its resource's output once it names a version (a job
    # records its pipeline's backing job alone until it is read again), else what its
    # waiter saw.
    recorded = [seen.last_model, waited.get(shown.name) or {}]
    plan.last_model = dict(next((m for m in recorded if _version_of(m)), {}))
    refused = errors.get(urn, [])
    if refused or (shown.issues and seen.change != DELETE):
        plan.change = INVALID
        plan.issues = [refusal(m) for m in refused] or list(shown.issues)
        return plan
    plan.job = shown.job
    plan.unknown = f"unknown until pulumi up: {shown.unknown}" if shown.unknown else ""
    if seen.change in (UPDATE, REPLACE) and seen.old is not None and seen.new is not None:
        plan.keys = _changed_keys(seen)
    if shown.job is not None and seen.change != DELETE:  # a deleted job costs nothing more
        plan.estimate = cost.estimate(shown.job, snapshot)
    old = seen.old.job if seen.old is not None else None
    if old is not None and seen.change in (REPLACE, DELETE):  # what it costs before the change
        plan.before = cost.estimate(old, snapshot)
    return plan


def _persistent_plan(
    plan: JobPlan, seen: _Seen, resource: PersistentResource, snapshot: Any
) -> JobPlan:
    """A persistent resource's plan: its pools, and its rate while it exists (before the
    change too, for one replaced or deleted)."""
    from vertex_training.review import cost

    plan.kind = PERSISTENT
    plan.pools = [pool_text(pool) for pool in resource.pools]
    plan.pools += [f"{pool}: scales {least} to {most}" for pool, least, most in resource.scaling]
    if resource.pools and resource.region and seen.change != DELETE:
        plan.estimate = cost.persistent_estimate(resource.pools, resource.region, snapshot)
    old = seen.old.persistent if seen.old is not None else None
    if old is not None and old.pools and old.region and seen.change in (REPLACE, DELETE):
        plan.before = cost.persistent_estimate(old.pools, old.region, snapshot)
    return plan


def _changed_keys(seen: _Seen) -> list[KeyChange]:
    """The keys that changed, in the program's own words; those the engine says force the
    replacement marked (its detailed diff's ``*-replace`` kinds; without one, its
    replace reasons)."""
    assert seen.old is not None and seen.new is not None
    changes = key_changes(seen.old.written, seen.new.written)
    replacing = [
        path
        for path, diff in seen.detailed.items()
        if isinstance(diff, Mapping) and diff.get("kind") in REPLACING_KINDS
    ]
    if not replacing and not seen.detailed and seen.change == REPLACE:
        replacing = seen.replace_reasons
    named = seen.new.plugin or bool(seen.new.declared_by)  # paths are the inputs' own
    marked = []
    for change in changes:
        forces = any(_under(change.key, path, named) for path in replacing)
        marked.append(KeyChange(change.key, change.before, change.after, forces))
    return marked


def _under(key: str, path: str, plugin: bool) -> bool:
    """Whether the flattened ``key`` lies at or under the engine's property ``path``
    (a plugin's ``job.machine``; a dynamic provider's reason names a key of the job)."""
    path = path if plugin else path.removeprefix("config.")
    return key == path or key.startswith((f"{path}.", f"{path}["))


def _stack_of(seen: Mapping[str, _Seen], resources: list[Resource]) -> str | None:
    urns = [*seen, *(r.urn for r in resources)]
    return next((parsed.stack for parsed in map(Urn.parse, urns) if parsed), None)
