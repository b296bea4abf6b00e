"""What a change to a stack file does to its jobs, for a reviewer: ``python -m vertex_training
plan``.

The jobs the stack file defines at a git ref (the pull request's base) are compared with
the working tree, with no engine and one cloud call (quotas), the way the TrainingJob
provider's diff compares them: a job whose request or location changes is replaced (submitted
again), one whose other keys change (``wait``, ``adopt``) is updated in place, one only in
the working tree is submitted, one only at the base is deleted (cancelled, then deleted).
Each job carries its pools' machines and accelerators, its cost estimate
(``vertex_training.review.cost``), and the stack's rules are evaluated on the result
(``vertex_training.review.policies``). The one cloud call: the project's custom-training quotas,
read through ``quota_reader`` and set against the submitted jobs' needs
(``vertex_training.review.quota_check``); without credentials the plan says they could not be
checked.

The base tree is read with ``git archive`` into a temporary folder, so the trainer
sources at the base decide the base's package URIs: a change to a trainer's code is a
replacement of the jobs that run it, as ``pulumi up`` would make it.
"""

from __future__ import annotations

import datetime
import io
import json
import subprocess
import tarfile
import tempfile
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from vertex_training.api.bodies import key_replaces, runs_differently
from vertex_training.errors import Issue, SpecError
from vertex_training.keys import JOBS_KEY

if TYPE_CHECKING:
    from vertex_training.catalog.cloud_quotas import Reader
    from vertex_training.catalog.prices import Snapshot
    from vertex_training.review.cost import Estimate
    from vertex_training.review.policies import PoliciesConfig, RuleResult
    from vertex_training.review.quota_check import QuotaCheck
    from vertex_training.stackconfig import JobSpec, ModelUpload, StackSettings, WorkerPool
    from vertex_training.stackconfig.platform import Platform

SUBMIT, REPLACE, UPDATE, DELETE, UNCHANGED, INVALID = (
    "submit",
    "replace",
    "update",
    "delete",
    "unchanged",
    "invalid",
)
#: The changes that submit a job, and so may cost money.
SUBMITTING = (SUBMIT, REPLACE)
#: The changes after which what ran before no longer runs.
ENDING = (REPLACE, DELETE)
UNSET = "(unset)"
#: Rates closer than this (as a fraction) are not given a factor.
SAME_RATE = 0.005
#: What a plan entry is: a job, or a persistent resource (machines billed while it exists).
JOB, PERSISTENT = "job", "persistent resource"
#: The keys whose change alone resubmits a job without changing how it trains.
_LABEL_KEYS = ("labels", "display_name", "displayName")


@dataclass(frozen=True)
class KeyChange:
    """One config key of a job, before and after, in the user's words."""

    key: str
    before: str
    after: str
    #: Whether this key's change is what replaces the job (a review of a preview says so
    #: where the engine does: a replace that also updates names which key forces it).
    replaces: bool = False


@dataclass
class StackJobs:
    """A stack file's jobs as the spec sees them: valid ones, and the mistakes of others."""

    stack: str
    #: Each job's config as written (any YAML value), by job name.
    raw: dict[str, Any] = field(default_factory=dict)
    jobs: dict[str, JobSpec] = field(default_factory=dict)
    issues: dict[str, list[Issue]] = field(default_factory=dict)
    stack_issues: list[Issue] = field(default_factory=list)
    settings: StackSettings | None = None
    #: The stack's platform (None: the stack has none at all).
    platform: Platform | None = None
    #: The stack's rules (None when the stack's keys or its rules are invalid).
    policies: PoliciesConfig | None = None


@dataclass
class JobPlan:
    """What the change does to one job."""

    name: str
    change: str
    keys: list[KeyChange] = field(default_factory=list)
    #: The job after the change (before it, for a deleted job); None for an invalid one.
    job: JobSpec | None = None
    estimate: Estimate | None = None
    issues: list[Issue] = field(default_factory=list)
    #: What `pulumi preview` warns about the job (``key: message``), e.g. an image's end of support.
    warnings: list[str] = field(default_factory=list)
    #: Why the job cannot be read before `pulumi up` (a value the preview cannot know yet).
    unknown: str = ""
    #: The model version the job registered last (its resource's or its waiter's ``model``
    #: output, in either naming), where the review read a state; {} otherwise.
    last_model: dict[str, Any] = field(default_factory=dict)
    #: What it cost before the change, for one replaced or deleted (None otherwise).
    before: Estimate | None = None
    #: Who declares it when another provider does ("" for this project's resources).
    declared_by: str = ""
    #: Why the review cannot judge it ("" when it can): another provider's resource.
    not_reviewed: str = ""
    kind: str = JOB
    #: Its pools as shown when it is no job of this project (a persistent resource's).
    pools: list[str] = field(default_factory=list)

    @property
    def label_only(self) -> bool:
        """Whether only its labels or display name force its replacement."""
        forcing = [k.key for k in self.keys if k.replaces]
        # A plugin's keys are under its ``job`` property.
        heads = [k.removeprefix("job.").split(".", 1)[0] for k in forcing]
        return bool(heads) and all(head in _LABEL_KEYS for head in heads)


@dataclass
class Plan:
    """What the change does to a stack: its jobs, the rules' results, the change's cost."""

    stack: str
    base: str
    jobs: list[JobPlan]
    rules: list[RuleResult]
    stack_issues: list[Issue]
    #: The price snapshot the estimates used, or None.
    prices: Snapshot | None = None
    #: Said about the prices: none to be had, or read too long ago.
    prices_note: str | None = None
    #: The quota check of the jobs this change submits (``check_quotas``).
    quotas: QuotaCheck | None = None
    #: What the change is compared with, as the heading says it (Markdown).
    against: str = ""

    @property
    def invalid(self) -> bool:
        return bool(self.stack_issues) or any(j.change == INVALID for j in self.jobs)

    @property
    def mandatory_failures(self) -> list[RuleResult]:
        return [r for r in self.rules if not r.passed and r.enforcement == "mandatory"]

    def rates(self) -> tuple[tuple[float | None, float | None], tuple[float | None, float | None]]:
        """The hourly rate and the most of what the change ends (replaced and deleted,
        as they were) and of what it starts (submitted and replaced): (before, after),
        each (rate, most), None where one is unknown."""
        ended = [j.before for j in self.jobs if j.change in ENDING]
        started = [j.estimate for j in self.jobs if j.change in SUBMITTING]
        return _sums(ended), _sums(started)

    def change_cost(self) -> tuple[float | None, list[str]]:
        """The most the jobs this change submits can cost, or None with the reasons."""
        total, unknown = 0.0, []
        for job in self.jobs:
            if job.change not in SUBMITTING:
                continue
            if job.estimate is None or job.estimate.max_usd is None:
                unknown.append(job.name)
            else:
                total += job.estimate.max_usd
        return (None if unknown else total), unknown


def _sums(estimates: list[Estimate | None]) -> tuple[float | None, float | None]:
    """The summed hourly rate and most of ``estimates`` (None where any is unknown)."""
    if any(e is None or e.hourly_usd is None for e in estimates):
        return None, None
    rate = sum(e.hourly_usd or 0.0 for e in estimates if e is not None)
    if any(e is None or e.max_usd is None for e in estimates):
        return rate, None
    return rate, sum(e.max_usd or 0.0 for e in estimates if e is not None)


# ---------------------------------------------------------------------- reading stacks


def read_stack(
    stack_file: Path, project_dir: Path, today: datetime.date | None = None
) -> StackJobs:
    """Each job of the stack file, parsed on its own (one invalid job leaves the others),
    through the loader every entry point uses (``vertex_training.stackconfig.load_stack``)."""
    from vertex_training.review import policies
    from vertex_training.stackconfig import load_stack_file

    stack = load_stack_file(stack_file, project_dir=project_dir, today=today)
    result = StackJobs(stack=stack.name, settings=stack.settings, platform=stack.platform)
    if stack.issues:
        result.stack_issues.extend(stack.issues)
        return result
    try:
        result.policies = policies.parse_policies(stack.keys.get(policies.POLICIES_KEY))
    except SpecError as exc:
        result.stack_issues.extend(exc.issues)
        return result
    result.raw = {str(name): job for name, job in (stack.keys.get(JOBS_KEY) or {}).items()}
    for name, loaded in stack.jobs.items():
        if loaded.job is None:
            result.issues[name] = list(loaded.issues)
        else:
            result.jobs[name] = loaded.job
    return result


def git_root(path: Path) -> Path:
    out = _git(path.parent, "rev-parse", "--show-toplevel")
    return Path(out.decode().strip())


def read_stack_at(
    ref: str, stack_file: Path, today: datetime.date | None = None
) -> StackJobs | None:
    """The stack file as it was at ``ref`` (None when it did not exist there)."""
    from vertex_training.packaging import project_dir_of

    root = git_root(stack_file)
    relative = stack_file.resolve().relative_to(root)
    project = project_dir_of(stack_file).resolve().relative_to(root)
    listed = _git(root, "ls-tree", "--name-only", ref, "--", relative.as_posix())
    if not listed.strip():
        return None
    with tempfile.TemporaryDirectory(prefix="vertex-training-plan-") as tmp:
        archive = _git(root, "archive", "--format=tar", ref)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        return read_stack(Path(tmp) / relative, Path(tmp) / project, today)


def _git(cwd: Path, *args: str) -> bytes:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout
    except subprocess.CalledProcessError as exc:
        message = exc.stderr.decode(errors="replace").strip()
        raise SpecError([Issue(f"git {' '.join(args)}", None, message)]) from None


# ------------------------------------------------------------------------- comparing


def plan_stack(
    stack_file: Path,
    base: str,
    today: datetime.date | None = None,
    prices_file: Path | None = None,
    quota_reader: Reader | None = None,
) -> Plan:
    """Compare the stack file at ``base`` with the working tree; prebuilt images are judged
    as of ``today`` (default: the real today), costs from ``prices_file`` (default: the
    project's ``prices/snapshot.json``), quotas read with ``quota_reader`` (None: not
    read, and the plan says so)."""
    from vertex_training.catalog import prices
    from vertex_training.packaging import project_dir_of
    from vertex_training.review import cost, policies

    snapshot_file = prices_file or prices.snapshot_path(project_dir_of(stack_file))
    snapshot, prices_note = cost.load_prices(snapshot_file, today)

    head = read_stack(stack_file, project_dir_of(stack_file), today)
    before = read_stack_at(base, stack_file, today)
    old_jobs = before.jobs if before else {}
    old_raw = before.raw if before else {}
    plans: list[JobPlan] = []
    for name in sorted(set(head.raw) | set(old_raw)):
        if name in head.issues:
            plans.append(JobPlan(name, INVALID, issues=head.issues[name]))
            continue
        new, old = head.jobs.get(name), old_jobs.get(name)
        was = cost.estimate(old, snapshot) if old is not None else None
        if new is None:
            plans.append(JobPlan(name, DELETE, job=old, before=was))
            continue
        keys = key_changes(old_raw.get(name), head.raw[name]) if old is not None else []
        if old is None:
            change = SUBMIT
        elif _runs_differently(old, new):
            change = REPLACE
            # Which keys force it, as the providers' diff marks them.
            keys = [replace(k, replaces=key_replaces(k.key, True)) for k in keys]
            if not keys:
                keys = [KeyChange("python_package (trainer sources)", "before", "changed", True)]
        else:
            change = UPDATE if keys else UNCHANGED
        plans.append(
            JobPlan(
                name,
                change,
                keys,
                new,
                cost.estimate(new, snapshot),
                warnings=new.warnings,
                before=was if change == REPLACE else None,
            )
        )
    rules: list[RuleResult] = []
    if head.policies is not None and not head.stack_issues:
        estimates = {p.name: p.estimate for p in plans if p.estimate is not None}
        changed = [p.name for p in plans if p.change in SUBMITTING]
        rules = policies.evaluate(head.policies, head.jobs, head.platform, estimates, changed)
    from vertex_training.review.quota_check import check_quotas

    quota_check = check_quotas(plans, quota_reader, snapshot)
    return Plan(
        head.stack, base, plans, rules, head.stack_issues, snapshot, prices_note, quota_check
    )


def _runs_differently(old: JobSpec, new: JobSpec) -> bool:
    """The provider's replace rule (``vertex_training.api.bodies.runs_differently``), on the
    request and location each job's resource would get."""
    return runs_differently(old.run_inputs(), new.run_inputs())


def key_changes(before: Any, after: Any) -> list[KeyChange]:
    """The config keys whose values differ, as dotted keys with their values as written."""
    old, new = _flatten(before), _flatten(after)
    return [
        KeyChange(key, _shown(old.get(key, UNSET)), _shown(new.get(key, UNSET)))
        for key in sorted(set(old) | set(new))
        if old.get(key, UNSET) != new.get(key, UNSET)
    ]


def _flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, Mapping) and value:
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat
    return {prefix: value} if prefix else {}


def _shown(value: Any) -> str:
    if value is UNSET or isinstance(value, str):
        return str(value)
    return yaml.safe_dump(value, default_flow_style=True, width=1000).strip().removesuffix("\n...")


# --------------------------------------------------------------------------- output


def pools_of(job: JobSpec) -> list[str]:
    """Each pool as ``role: replicas x machine [+ count x accelerator]``."""
    return [pool_text(pool) for pool in job.worker_pools if pool is not None]


def pool_text(pool: WorkerPool) -> str:
    """``role: replicas x machine [+ count x accelerator] [(topology)]``."""
    text = f"{pool.role}: {pool.replicas} x {pool.machine}"
    if pool.accelerator is not None:
        text += f" + {pool.accelerator.count} x {pool.accelerator.type}"
    if pool.tpu_topology:
        text += f" ({pool.tpu_topology})"
    return text


def _pools(job: JobPlan) -> list[str]:
    return pools_of(job.job) if job.job is not None else job.pools


def to_markdown(plan: Plan) -> str:
    """The plan as a pull-request comment: a table first, then each change's details."""
    against = plan.against or f"against `{plan.base}`"
    lines = [f"### `{plan.stack}`: what this change does ({against})", ""]
    if plan.prices is not None:
        lines += [_prices_header(plan.prices), ""]
    if plan.prices_note:
        lines += [f"- :warning: {plan.prices_note}", ""]
    lines += [_summary(plan), ""]
    for issue in plan.stack_issues:
        lines.append(f"- :x: {issue}")
    if plan.jobs:
        lines += ["| resource | change | pools | estimated cost |", "| --- | --- | --- | --- |"]
        for job in plan.jobs:
            named = f"`{job.name}`" + (f" ({job.declared_by})" if job.declared_by else "")
            pools = "<br>".join(_pools(job))
            lines.append(f"| {named} | {_change_text(job)} | {pools} | {_cost_cell(job)} |")
        lines.append("")
    lines += _breakdown(plan)
    for job in plan.jobs:
        lines += _details(job)
    if plan.rules:
        lines += ["", "**Rules**", ""]
        failed = [r for r in plan.rules if not r.passed]
        for rule in sorted(failed, key=lambda r: r.enforcement != "mandatory"):
            mark = ":x:" if rule.enforcement == "mandatory" else ":warning:"
            about = f" `{rule.job}`" if rule.job else ""
            lines.append(f"- {mark} {rule.rule} ({rule.enforcement}){about}: {rule.message}")
        passed = sorted({r.rule for r in plan.rules if r.passed} - {r.rule for r in failed})
        if passed and plan.jobs:  # with no job, no job keeps a rule
            lines.append(f"- :white_check_mark: every job keeps {', '.join(passed)}")
    lines += _quota_lines(plan)
    return "\n".join(lines).rstrip() + "\n"


def _prices_header(prices: Snapshot) -> str:
    """Where the prices and machine shapes come from; a fake's said to be one."""
    read = prices.read_date.isoformat()
    if prices.from_fake:
        text = (
            f"Costs from a fake Cloud Billing Catalog on this machine (`{prices.source}`): "
            f"invented prices read {read}, not Google's."
        )
    else:
        text = (
            f"Costs from the Cloud Billing Catalog at `{prices.source}`: prices read "
            f"{read}, list prices in USD."
        )
    if prices.shapes_from_fake:
        text += (
            f" Machine shapes (vCPUs, memory) from a fake Compute Engine on this machine "
            f"(`{prices.shapes_source}`), not read from Google."
        )
    return text


def _summary(plan: Plan) -> str:
    """The change in one sentence: what it submits, creates and deletes, and its cost
    before and after."""
    jobs = [j for j in plan.jobs if j.kind == JOB]
    counts = {c: sum(j.change == c for j in jobs) for c in (SUBMIT, REPLACE, DELETE)}
    text = f"{counts[SUBMIT]} to submit, {counts[REPLACE]} to replace, {counts[DELETE]} to delete"
    resources = [j for j in plan.jobs if j.kind == PERSISTENT and j.change != UNCHANGED]
    if resources:
        counted = Counter(_change_text(j) for j in resources)
        text += "; persistent resources: " + ", ".join(f"{n} to {c}" for c, n in counted.items())
    total, unknown = plan.change_cost()
    if not any(j.change in SUBMITTING for j in plan.jobs):
        text += "; this change submits no job."
    else:
        cost = f"at most ${total:,.2f}" if total is not None else f"unknown ({', '.join(unknown)})"
        if resources:
            text += (
                f"; the jobs it submits and the persistent resources it creates cost {cost} "
                "(a persistent resource counted for a month)."
            )
        else:
            text += f"; the jobs this change submits cost {cost}."
    (was_rate, was_most), (now_rate, now_most) = plan.rates()
    changes = {j.change for j in plan.jobs}
    if changes & set(ENDING) and changes & set(SUBMITTING):
        text += f" Before: {_rate(was_rate, was_most)}; after: {_rate(now_rate, now_most)}."
    return text


def _rate(rate: float | None, most: float | None) -> str:
    if rate is None:
        return "unknown"
    return f"${rate:,.2f}/h" + ("" if most is None else f", at most ${most:,.2f}")


def _change_text(job: JobPlan) -> str:
    if job.kind == PERSISTENT and job.change == SUBMIT:
        return "create"
    if job.change == REPLACE and job.label_only:
        return "replace (labels only)"
    return job.change


def _cost_cell(job: JobPlan) -> str:
    """A job's cost cell: its estimate; a replaced one's before and after; what a deleted
    one stops costing; why one is not reviewed."""
    from vertex_training.review.cost import describe

    if job.not_reviewed:
        return f"not reviewed: {job.not_reviewed}"
    now = describe(job.estimate) if job.estimate is not None else job.unknown
    before = job.before
    if job.change == DELETE:
        if job.kind == PERSISTENT:
            stops = f"stops {_usd_rate(before)}" if before is not None else "stops its cost"
            return f"deleted with its machines: {stops}"
        stops = f": stops up to {_usd_rate(before)}" if _billed(before) else ""
        return f"cancelled if it still runs, then deleted{stops}"
    if job.change == REPLACE and _billed(before) and job.estimate is not None:
        was = before.hourly_usd if before is not None else None
        new = job.estimate.hourly_usd
        factor = ""
        if was and new is not None and abs(new / was - 1) >= SAME_RATE:
            factor = f" (x{new / was:.3g} the rate)"
        most = f", at most ${before.max_usd:,.2f}" if before and before.max_usd is not None else ""
        return f"was {_usd_rate(before)}{most}; now {now}{factor}"
    return now


def _billed(estimate: Estimate | None) -> bool:
    return estimate is not None and estimate.hourly_usd is not None and not estimate.local


def _usd_rate(estimate: Estimate | None) -> str:
    rate = estimate.hourly_usd if estimate is not None else None
    return "unknown" if rate is None else f"${rate:,.2f}/h"


def _details(job: JobPlan) -> list[str]:
    """A job's changed keys, mistakes and warnings, one line each."""
    lines = []
    if job.keys:
        changed = "; ".join(_key_change(k) for k in job.keys)
        lines.append(f"- `{job.name}` ({job.change}): {changed}")
        if job.change == REPLACE and job.label_only:
            lines.append(f"  - {_label_only(job)}")
        elif job.change == REPLACE and any(k.replaces for k in job.keys):
            lines.append(f"  - {_why_replaced(job)}")
    if job.job is not None and job.job.model is not None and job.change in (SUBMIT, REPLACE):
        lines.append(f"- `{job.name}` {registers_text(job.job.model, job.last_model)}")
    if job.job is not None and job.job.dataset is not None and job.change in (SUBMIT, REPLACE):
        data = job.job.dataset.body
        where = (data.get("gcsDestination") or {}).get("outputUriPrefix") or (
            data.get("bigqueryDestination") or {}
        ).get("outputUri")
        lines.append(
            f"- `{job.name}` reads the managed dataset `{data['datasetId']}`, exported to `{where}`"
        )
    lines += [f"- `{job.name}` is invalid: {issue}" for issue in job.issues]
    lines += [f"- :warning: `{job.name}`: {warning}" for warning in job.warnings]
    return lines


def registers_text(model: ModelUpload, last: Mapping[str, Any]) -> str:
    """What a job's training pipeline registers, in a reviewer's words: the model, the
    version it will be (when the job's last version is known), the aliases it takes and
    the serving image."""
    named = model.parent or model.id
    last_name = str(last.get("resource_name") or last.get("resourceName") or "")
    last_version = str(last.get("version_id") or last.get("versionId") or "")
    if last_name and last_version.isdigit() and (not named or last_name.endswith(f"/{named}")):
        following = int(last_version) + 1
        what = f"version {following} of `{last_name}` (the job's last is version {last_version})"
    elif model.parent:
        what = f"the next version of `{model.parent}`"
    elif model.id:
        what = f"version 1 of a new model `{model.id}`, or its next version if it exists"
    else:
        what = "version 1 of a new model"
    aliases = ", ".join(f"`{a}`" for a in ("default", *model.aliases))
    return (
        f"registers `{model.display_name}`: {what}; moves {aliases} to it; serves from "
        f"`{model.serving.image}`"
    )


def _key_change(change: KeyChange) -> str:
    shown = f"`{change.key}` {change.before} -> {change.after}"
    return f"{shown} (forces replacement)" if change.replaces else shown


def _why_replaced(job: JobPlan) -> str:
    """A replace's reason in a reviewer's words: which keys force it, and that Vertex AI
    runs it again (it cannot update a job)."""
    forcing = [f"`{k.key}`" for k in job.keys if k.replaces]
    others = [f"`{k.key}`" for k in job.keys if not k.replaces]
    text = (
        f"submitted again because {', '.join(forcing)} changed (Vertex AI cannot update a "
        "submitted job: the running one is cancelled and deleted)"
    )
    if others:
        text += f"; {', '.join(others)} alone would only update it"
    return text


def _label_only(job: JobPlan) -> str:
    """A replace only labels or a display name force: said so, since it runs the job again."""
    forcing = ", ".join(f"`{k.key}`" for k in job.keys if k.replaces)
    others = [f"`{k.key}`" for k in job.keys if not k.replaces]
    text = (
        f"the job runs again for a label change: only {forcing} forces it, and Vertex AI "
        "cannot relabel a submitted job, so the running one is cancelled and deleted and "
        "the same training is submitted again, at its full cost"
    )
    return text + (f"; {', '.join(others)} alone would only update it" if others else "")


def _quota_lines(plan: Plan) -> list[str]:
    """The quota section (``vertex_training.review.quota_check``)."""
    from vertex_training.review import quota_check

    return quota_check.markdown(plan.quotas) if plan.quotas is not None else []


def _breakdown(plan: Plan) -> list[str]:
    """Each priced job's SKU lines, folded, so a reviewer can check the sums."""
    from vertex_training.review.cost import describe_line

    priced = [
        (j.name, j.estimate) for j in plan.jobs if j.estimate is not None and j.estimate.lines
    ]
    if not priced:
        return []
    lines = ["<details>", "<summary>Cost breakdown: one line per SKU</summary>", ""]
    for name, estimate in priced:
        lines.append(f"`{name}` ({estimate.strategy}, ${estimate.hourly_usd:,.4f}/h):")
        lines.append("")
        lines += [f"- {describe_line(line)}" for line in estimate.lines]
        lines.append("")
    lines += ["</details>", ""]
    return lines


def to_json(plan: Plan) -> str:
    """The plan for scripts."""
    total, unknown = plan.change_cost()
    document = {
        "stack": plan.stack,
        "base": plan.base,
        "prices_read": plan.prices.read_date.isoformat() if plan.prices is not None else None,
        "prices_note": plan.prices_note,
        "stack_issues": [_issue(i) for i in plan.stack_issues],
        "jobs": [
            {
                "name": job.name,
                "change": job.change,
                "keys": [asdict(k) for k in job.keys],
                "pools": _pools(job),
                "kind": job.kind,
                "declared_by": job.declared_by or None,
                "not_reviewed": job.not_reviewed or None,
                "before": _estimate(job.before),
                "estimate": _estimate(job.estimate),
                "issues": [_issue(i) for i in job.issues],
                "warnings": list(job.warnings),
                "unknown": job.unknown or None,
            }
            for job in plan.jobs
        ],
        "rules": [asdict(r) for r in plan.rules],
        "change_max_usd": total,
        "change_cost_unknown_for": unknown,
        "quotas": _quotas(plan),
    }
    return json.dumps(document, indent=2, sort_keys=True, default=str) + "\n"


def _quotas(plan: Plan) -> dict[str, Any] | None:
    from vertex_training.review import quota_check

    return quota_check.to_json(plan.quotas)


def _issue(issue: Issue) -> dict[str, Any]:
    return {"key": issue.key, "value": issue.value, "message": issue.message}


def _estimate(estimate: Estimate | None) -> dict[str, Any] | None:
    """The estimate as ``cost.to_json`` gives it, and two keys the plan's JSON has had
    beside: ``hourly_usd`` (``usd_per_hour`` under the plan's first name for it) and
    ``timeout_is_default``."""
    from vertex_training.review import cost

    if estimate is None:
        return None
    return {
        **cost.to_json(estimate),
        "hourly_usd": estimate.hourly_usd,
        "timeout_is_default": estimate.timeout_is_default,
    }
