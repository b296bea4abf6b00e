"""The plan's quota section: what the jobs a change submits need against the project's
Vertex AI custom-training quotas, region by region.

``check_quotas`` maps each Vertex AI job the change submits or replaces to the quotas it
holds (``vertex_training.catalog.quotas.job_needs``; a tuning job ``parallel_trials`` times),
reads the project's limits through a ``Reader`` (``vertex_training.catalog.cloud_quotas``), and
compares them (``vertex_training.catalog.quotas.compare``). A job that needs more of a quota
than the limit on its own is named: Vertex AI keeps it queued, or refuses it, until the
quota is raised. Jobs that fit alone but not together are said to queue one after another.

Cloud Quotas gives limits, not usage: jobs already running use part of each limit, and
the section says so. Without credentials, network or package, the section says in one
line "quotas could not be checked: <why>" and the fix: in CI (``CI`` set, as CI services
set it) the role the CI identity needs, elsewhere how to sign in, then what the jobs need,
totalled per region and quota. It never passes silently, and never fails the plan (the
exit status stays the rules' and the config's). A job on a persistent resource needs no
quota of its own: it runs on the machines the resource holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import quotas
from vertex_training.errors import QuotasError

if TYPE_CHECKING:
    from vertex_training.catalog.cloud_quotas import Reader
    from vertex_training.catalog.quotas import Comparison, JobNeeds
    from vertex_training.stackconfig import JobSpec

SUBMITTING = ("submit", "replace")
NOT_ASKED = "no quota reader was given (vertex-training plan reads them)"
#: The role that reads a project's quotas (``cloudquotas.quotas.get``).
QUOTA_ROLE = "roles/cloudquotas.viewer"
QUOTA_DOCS = "docs/review.md#quota"
#: The variable CI services set (GitHub Actions, GitLab CI, and others: ``CI=true``).
CI_VARIABLE = "CI"
LIMIT_NOT_USAGE = (
    "limits, not what is free: Cloud Quotas reports no usage, and jobs already running "
    "hold part of each"
)


class Planned(Protocol):
    """What the check reads of a plan's job (``vertex_training.review.plan.JobPlan``)."""

    @property
    def change(self) -> str: ...
    @property
    def job(self) -> JobSpec | None: ...


@dataclass
class QuotaCheck:
    """The quota section of a plan."""

    #: The project whose quotas were read (None when no job needed any).
    project: str | None = None
    source: str = ""
    needs: list[JobNeeds] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    #: Why quotas could not be checked; None when they were (or nothing needed checking).
    unchecked: str | None = None
    #: Why, without the fix the reader's message gives (a CI line names the role instead).
    reason: str | None = None
    #: Whether the check ran in CI (advice for a CI identity, not a laptop).
    ci: bool = field(
        default_factory=lambda: os.environ.get(CI_VARIABLE, "") not in ("", "0", "false")
    )

    @property
    def exceeded(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.exceeding_jobs]


def _copies(job: Any) -> int:
    study = getattr(job, "study", None)
    parallel = getattr(study, "parallel_trials", 1)
    return parallel if isinstance(parallel, int) and parallel > 0 else 1


def check_quotas(
    plans: Iterable[Planned], reader: Reader | None, snapshot: object | None = None
) -> QuotaCheck:
    """The quota section for ``plans``; vCPUs from ``snapshot``'s machine shapes where it
    has them (``vertex_training.catalog.quotas.shapes_from``)."""
    shape_of = quotas.shapes_from(snapshot)
    check = QuotaCheck()
    projects: set[str] = set()
    for plan in plans:
        job = plan.job
        if plan.change not in SUBMITTING or job is None or not kind_of(job.backend).cloud:
            continue
        if job.persistent_resource_id:  # it runs on the machines that resource holds
            continue
        check.needs.append(quotas.job_needs(job, copies=_copies(job), shape_of=shape_of))
        if job.project:
            projects.add(job.project)
    if not check.needs:
        return check
    if reader is None:
        check.unchecked = NOT_ASKED
        return check
    if len(projects) != 1:
        check.unchecked = (
            "the jobs name no project" if not projects else f"several projects: {sorted(projects)}"
        )
        return check
    check.project = projects.pop()
    metrics = {n.quota.metric for job in check.needs for n in job.needs}
    regions = {job.region for job in check.needs}
    try:
        limits = reader(check.project, metrics, regions)
    except QuotasError as exc:
        check.unchecked = str(exc)
        check.reason = exc.reason
        return check
    check.source = limits.source
    check.comparisons = quotas.compare(check.needs, limits)
    return check


def _amount(value: float) -> str:
    return f"{value:g}"


def markdown(check: QuotaCheck) -> list[str]:
    """The section's lines: a table per region, the quotas a job would exceed first."""
    if not check.needs:
        return []
    lines = ["", "**Quota**", ""]
    if check.unchecked is not None:
        why = check.reason or check.unchecked  # the reader's own advice is a laptop's
        if check.ci:
            fix = f"give the CI identity `{QUOTA_ROLE}` on the project"
        else:
            fix = (
                "run with Google credentials (`gcloud auth application-default login`) that "
                f"hold `{QUOTA_ROLE}`"
            )
        lines.append(f"- :warning: quotas could not be checked: {why}; {fix} ({QUOTA_DOCS})")
        lines += _needs_only(check)
        return lines
    project = check.project or ""
    for c in check.exceeded:
        value = c.limit.value if c.limit is not None else None
        for job in c.exceeding_jobs:
            lines.append(
                f"- :x: `{job}` would exceed {c.quota.metric} in {c.region}: it needs "
                f"{_amount(dict(c.by_job)[job])}, the limit is {value}; Vertex AI keeps it "
                f"queued or refuses it until the quota is raised "
                f"({quotas.quota_page(project, c.quota)})"
            )
    for c in check.comparisons:
        if c.together_exceed and not c.exceeding_jobs:
            value = c.limit.value if c.limit is not None else None
            lines.append(
                f"- :warning: together the jobs need {_amount(c.total)} of {c.quota.metric} "
                f"in {c.region} (limit {value}): they queue one after another"
            )
    lines += [
        "",
        f"Limits of project `{project}` read from `{check.source}` ({LIMIT_NOT_USAGE}).",
        "",
        "| region | quota | needed | limit | jobs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for c in check.comparisons:
        if c.limit is None:
            limit = f"unknown: {c.note}"
        elif c.limit.value is None:
            limit = "no limit"
        else:
            limit = str(c.limit.value) + ("" if c.limit.specific else " (default)")
        jobs = ", ".join(f"`{job}` {_amount(amount)}" for job, amount in c.by_job)
        mark = " :x:" if c.exceeding_jobs else ""
        lines.append(
            f"| {c.region} | `{c.quota.name}`{mark} | {_amount(c.total)} | {limit} | {jobs} |"
        )
    lines += _unknown(check)
    return lines


def _needs_only(check: QuotaCheck) -> list[str]:
    """What the jobs need, totalled per region and quota, each job's part beside."""
    totals: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for job in check.needs:
        for need in job.needs:
            totals.setdefault((job.region, need.quota.name), []).append((job.job, need.amount))
    lines = ["", "| region | quota | needed | jobs |", "| --- | --- | --- | --- |"]
    for (region, quota), parts in sorted(totals.items()):
        jobs = ", ".join(f"`{name}` {_amount(amount)}" for name, amount in parts)
        total = _amount(sum(amount for _, amount in parts))
        lines.append(f"| {region} | `{quota}` | {total} | {jobs} |")
    return (lines if totals else []) + _unknown(check)


def _unknown(check: QuotaCheck) -> list[str]:
    return [
        f"- :warning: `{job.job}`: not counted: {reason}"
        for job in check.needs
        for reason in job.unknown
    ]


def to_json(check: QuotaCheck | None) -> dict[str, Any] | None:
    """The section for scripts."""
    if check is None:
        return None
    return {
        "project": check.project,
        "source": check.source,
        "unchecked": check.unchecked,
        "needs": [
            {
                "job": job.job,
                "region": job.region,
                "strategy": job.strategy,
                "quotas": {
                    n.quota.metric: {
                        "amount": n.amount,
                        "reasons": list(n.reasons),
                        "confirmed": n.quota.confirmed,
                    }
                    for n in job.needs
                },
                "unknown": list(job.unknown),
            }
            for job in check.needs
        ],
        "comparisons": [
            {
                "region": c.region,
                "metric": c.quota.metric,
                "needed": c.total,
                "by_job": dict(c.by_job),
                "limit": None if c.limit is None else c.limit.value,
                "quota_id": None if c.limit is None else c.limit.quota_id,
                "exceeded_by": list(c.exceeding_jobs),
                "together_exceed": c.together_exceed,
                "note": c.note,
            }
            for c in check.comparisons
        ],
    }
