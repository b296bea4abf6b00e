"""Every rule of the review, one ``Rule`` entry each in ``REGISTRY``, in the order results
are reported; each rule's settings model (``Flag`` for a rule with none) and check sit
above the entries.

A new rule is one entry of ``REGISTRY``, with its check (and its settings model, if it
takes settings) beside it: ``vertex-training:policies`` and the policy pack config accept
it, ``evaluate`` runs it, ``plan``, ``review`` and the pack report it, and the pack lists
it among its policies. ``vertex_training.review.rule_model`` says what each field of an
entry is for.

A job on the local backend costs nothing on Google Cloud: the region, SPOT and cost rules
pass it. Pure: no Pulumi, no Google clients (docs/policies.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, field_validator

from vertex_training.api.labels import label_key_ok
from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import machines
from vertex_training.review.rule_model import Change, Flag, JobKey, Rule, RuleSettings, Scope
from vertex_training.stackconfig import did_you_mean, invalid, one_of
from vertex_training.stackconfig import platform as stack_platform

if TYPE_CHECKING:
    from collections.abc import Mapping

    from vertex_training.review.cost import Estimate
    from vertex_training.stackconfig import JobSpec

__all__ = ["PREVENTION_ENFORCED", "REGISTRY"]

#: The only public access prevention that keeps a bucket private whatever its IAM says.
PREVENTION_ENFORCED = "enforced"
#: What a cost rule says when a cost is unknown.
_REFRESH_PRICES = (
    "refresh prices (`make prices` with Google credentials, then commit prices/snapshot.json)"
)


# ------------------------------------------------------------------- settings models


class RequiredLabels(RuleSettings):
    """``required_labels: {labels: [team, ...]}``."""

    labels: list[str] = Field(
        min_length=1, description='The label keys every job carries, e.g. ["team"].'
    )

    @field_validator("labels")
    @classmethod
    def _label_keys(cls, value: list[str]) -> list[str]:
        problems = [
            (
                (index,),
                key,
                "label keys have 1 to 63 lowercase letters, digits, _ or -, "
                "starting with a lowercase letter; write e.g. team or cost-center",
            )
            for index, key in enumerate(value)
            if not label_key_ok(key)
        ]
        if problems:
            raise invalid("invalid label keys", problems)
        return value


class AllowedRegions(RuleSettings):
    """``allowed_regions: {regions: [us-central1, ...]}``."""

    regions: list[str] = Field(
        min_length=1, description='The training regions jobs may run in, e.g. ["us-central1"].'
    )

    @field_validator("regions")
    @classmethod
    def _training_regions(cls, value: list[str]) -> list[str]:
        problems = []
        for index, region in enumerate(value):
            if region not in machines.TRAINING_REGIONS:
                hint = did_you_mean(region, machines.TRAINING_REGIONS)
                problems.append(
                    (
                        (index,),
                        region,
                        "Vertex AI custom training does not run there; write a training "
                        f"region such as us-central1 or europe-west4.{hint}".rstrip("."),
                    )
                )
        if problems:
            raise invalid("not training regions", problems)
        return value


class MaxAccelerators(RuleSettings):
    """``max_accelerators_per_job: {count: 8}``: GPUs or TPU chips a job holds at once."""

    count: int = Field(ge=0, description="The most GPUs or TPU chips one job holds at once.")


class MaxCost(RuleSettings):
    """``max_cost_per_job: {usd: 500}``."""

    usd: float = Field(
        ge=0, description="The most one job may cost, in US dollars (its estimated most)."
    )


class MaxChangeCost(RuleSettings):
    """``max_cost_per_change: {usd: 2000}``."""

    usd: float = Field(
        ge=0, description="The most the jobs of one change may cost together, in USD."
    )


# ------------------------------------------------------------------------- job checks


def _required_labels(
    rule: RequiredLabels, key: JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    missing = [label for label in rule.labels if label not in job.labels]
    if not missing:
        return True, f"has the required labels {one_of(rule.labels, 'and')}"
    example = ", ".join(f"{label}: ..." for label in missing)
    return False, (
        f"lacks the required label{'s' if len(missing) > 1 else ''} "
        f"{one_of(missing, 'and')}: add {key('labels')}: {{{example}}}"
    )


def _allowed_regions(
    rule: AllowedRegions, key: JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if not kind_of(job.backend).cloud:
        return True, f"{kind_of(job.backend).runs_on}: the region rule does not apply"
    if job.region in rule.regions:
        return True, f"runs in {job.region}, an allowed region"
    return False, (
        f"runs in {job.region}, which is not an allowed region: set "
        f"{key('region')} (or {key.region_too}) to {one_of(rule.regions)}"
    )


def _accelerators(job: JobSpec) -> tuple[int, list[str]]:
    """Accelerators the job holds at once (parallel trials included), and where they are."""
    total, parts = 0, []
    for pool in job.worker_pools:
        if pool is None or pool.accelerator is None:
            continue
        count = pool.replicas * pool.accelerator.count
        total += count
        parts.append(
            f"{pool.replicas} x {pool.accelerator.count} {pool.accelerator.type} ({pool.role})"
        )
    study = getattr(job, "study", None)
    if study is not None and total:
        parallel = study.parallel_trials
        total *= parallel
        parts.append(f"x {parallel} parallel trials")
    return total, parts


def _max_accelerators(
    rule: MaxAccelerators, key: JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    total, parts = _accelerators(job)
    if total <= rule.count:
        return True, f"holds {total} accelerators at once, at most {rule.count}"
    where = " ".join(parts)
    fix = "fewer replicas or accelerators"
    if getattr(job, "study", None) is not None:
        fix += f", or lower {key('study', 'parallel_trials')}"
    return False, f"holds {total} accelerators at once ({where}), more than {rule.count}: use {fix}"


def _max_cost(
    rule: MaxCost, key: JobKey, job: JobSpec, estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if not kind_of(job.backend).billed:
        return True, f"{kind_of(job.backend).runs_on}: it costs nothing on Google Cloud"
    estimate = estimates.get(key.name)
    if estimate is None or estimate.max_usd is None:
        return (
            False,
            f"its cost is unknown ({_unknown_why(estimate)}), so it cannot be held to "
            f"${rule.usd:,.2f}: {_REFRESH_PRICES}",
        )
    if estimate.max_usd <= rule.usd:
        return True, f"may cost up to ${estimate.max_usd:,.2f}, at most ${rule.usd:,.2f}"
    return False, (
        f"may cost up to ${estimate.max_usd:,.2f}{_estimate_terms(estimate)}, more than "
        f"${rule.usd:,.2f}: set a shorter {key('scheduling', 'timeout')}, smaller "
        "machines or fewer replicas (or trials), or scheduling.strategy: SPOT"
    )


def _spot_only(
    _rule: Flag, key: JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if not kind_of(job.backend).cloud:
        return True, f"{kind_of(job.backend).runs_on}: the SPOT rule does not apply"
    if job.scheduling.strategy == "SPOT":
        return True, "runs on SPOT capacity"
    strategy = job.scheduling.strategy or "STANDARD (the default)"
    return False, f"runs with strategy {strategy}: write {key('scheduling', 'strategy')}: SPOT"


def _require_timeout(
    _rule: Flag, key: JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if job.scheduling.timeout_s is not None:
        return True, f"stops after {_hours(job.scheduling.timeout_s)} at most"
    return False, (
        "has no timeout, so Vertex AI lets it run for up to 7 days: write "
        f"{key('scheduling', 'timeout')}: 4h (or the longest it should take)"
    )


# --------------------------------------------------------- change and platform checks


def _change_cost(rule: MaxChangeCost, change: Change) -> list[tuple[bool, str]]:
    jobs, changed, others = change.jobs, change.changed, change.others
    names = sorted(jobs if changed is None else (n for n in changed if n in jobs))
    names = [n for n in names if kind_of(jobs[n].backend).billed]
    estimates = {**change.estimates, **{n: e for n, e in others.items() if e is not None}}
    names = sorted({*names, *others})
    unknown = [n for n in names if (e := estimates.get(n)) is None or e.max_usd is None]
    if unknown:
        why = "; ".join(f"{n}: {_unknown_why(estimates.get(n))}" for n in unknown)
        return [
            (
                False,
                f"the change's cost is unknown ({why}), so it cannot be held to "
                f"${rule.usd:,.2f}: {_REFRESH_PRICES}",
            )
        ]
    total = sum(estimates[n].max_usd or 0.0 for n in names)
    submitted = one_of(names, "and") if names else "no Vertex AI job"
    if total <= rule.usd:
        return [
            (True, f"the change starts {submitted}: up to ${total:,.2f}, at most ${rule.usd:,.2f}")
        ]
    return [
        (
            False,
            f"the change starts {submitted}, which may cost up to ${total:,.2f} together, "
            f"more than ${rule.usd:,.2f}: split it into smaller changes, or lower the jobs' "
            "scheduling.timeout, machines or replicas",
        )
    ]


def _primitive_roles(_rule: Flag, change: Change) -> list[tuple[bool, str]]:
    grants = change.grants
    bad = [g for g in grants if g.role in stack_platform.PRIMITIVE_ROLES]
    if not bad:
        roles = sorted({g.role for g in grants})
        granted = one_of(roles, "and") if roles else "no role"
        return [(True, f"the platform grants {granted}; no primitive role")]
    return [
        (
            False,
            f"{g.member} is granted {g.role} on {g.target}, a primitive role: grant the "
            "predefined roles it needs instead (docs/platform.md lists the platform's)",
        )
        for g in bad
    ]


def _public_buckets(_rule: Flag, change: Change) -> list[tuple[bool, str]]:
    if not change.buckets:
        return [(True, "the platform has no bucket of its own")]
    verdicts = []
    for bucket in change.buckets:
        problems = []
        if bucket.public_members:
            problems.append(f"grants a role to {one_of(list(bucket.public_members), 'and')}")
        if bucket.managed and bucket.prevention != PREVENTION_ENFORCED:
            problems.append(
                f"has public access prevention {bucket.prevention or 'unset'} (inherited), "
                "not enforced"
            )
        if problems:
            verdicts.append(
                (
                    False,
                    f"bucket {bucket.name} {' and '.join(problems)}: set "
                    "public_access_prevention to enforced and grant nothing to allUsers or "
                    "allAuthenticatedUsers",
                )
            )
        elif not bucket.managed:
            verdicts.append(
                (
                    True,
                    f"bucket {bucket.name} is managed outside this stack "
                    f"({stack_platform.PLATFORM_KEY}.existing.bucket); its access is not "
                    "checked here",
                )
            )
        else:
            verdicts.append((True, f"bucket {bucket.name} enforces public access prevention"))
    return verdicts


# -------------------------------------------------------------------------- the registry


def _registry(*rules: Rule) -> dict[str, Rule]:
    return {rule.name: rule for rule in rules}


#: Every rule, by name, in the order results are reported.
REGISTRY: dict[str, Rule] = _registry(
    Rule(
        name="required_labels",
        description="Every job carries the labels the team requires.",
        settings=RequiredLabels,
        scope=Scope.JOB,
        check=_required_labels,
        fix="add the missing labels to the job's labels",
        example="labels: [team]",
    ),
    Rule(
        name="allowed_regions",
        description="Vertex AI jobs run only in the regions the team allows.",
        settings=AllowedRegions,
        scope=Scope.JOB,
        check=_allowed_regions,
        fix="set the job's region (or the stack's gcp:region) to an allowed one",
        example="regions: [us-central1]",
    ),
    Rule(
        name="max_accelerators_per_job",
        description="No job asks for more accelerators at once than the ceiling.",
        settings=MaxAccelerators,
        scope=Scope.JOB,
        check=_max_accelerators,
        fix="use fewer replicas or accelerators, or fewer study.parallel_trials",
        example="count: 8",
    ),
    Rule(
        name="max_cost_per_job",
        description="No Vertex AI job may cost more than the ceiling (its estimated most).",
        settings=MaxCost,
        scope=Scope.JOB,
        check=_max_cost,
        fix=(
            "set a shorter scheduling.timeout, smaller machines, fewer replicas or trials, or "
            "scheduling.strategy: SPOT; an unknown cost: refresh prices (make prices)"
        ),
        example="usd: 500",
    ),
    Rule(
        name="max_cost_per_change",
        description=(
            "The jobs a change submits or replaces may not cost more than the ceiling together."
        ),
        settings=MaxChangeCost,
        scope=Scope.CHANGE,
        check=_change_cost,
        fix=(
            "split the change, or lower the jobs' scheduling.timeout, machines or replicas; "
            "an unknown cost: refresh prices (make prices)"
        ),
        example="usd: 2000",
    ),
    Rule(
        name="spot_only",
        description="Vertex AI jobs run on SPOT capacity only.",
        settings=Flag,
        scope=Scope.JOB,
        check=_spot_only,
        fix="write scheduling.strategy: SPOT",
    ),
    Rule(
        name="require_timeout",
        description="Every job sets scheduling.timeout.",
        settings=Flag,
        scope=Scope.JOB,
        check=_require_timeout,
        fix="write scheduling.timeout (the longest the job should take)",
    ),
    Rule(
        name="no_primitive_roles",
        description="The platform grants no primitive role (owner, editor, viewer).",
        settings=Flag,
        scope=Scope.PLATFORM,
        check=_primitive_roles,
        fix="grant the predefined roles the member needs instead",
    ),
    Rule(
        name="no_public_buckets",
        description="The platform's buckets are never public.",
        settings=Flag,
        scope=Scope.PLATFORM,
        check=_public_buckets,
        fix=(
            "set public_access_prevention to enforced and grant nothing to allUsers or "
            "allAuthenticatedUsers"
        ),
    ),
)


# ---------------------------------------------------------------------------- internals


def _unknown_why(estimate: Any) -> str:
    if estimate is None:
        return "no estimate"
    unknown = list(getattr(estimate, "unknown", ()) or ())
    return "; ".join(unknown) if unknown else "no price for its machines"


def _estimate_terms(estimate: Any) -> str:
    """`` ($H/h x N h x T trials)`` where the estimate says so."""
    parts = []
    if getattr(estimate, "hourly_usd", None) is not None:
        parts.append(f"${estimate.hourly_usd:,.2f}/h")
    if getattr(estimate, "hours", None) is not None:
        parts.append(f"{estimate.hours:g} h")
    trials = getattr(estimate, "trials", None)
    if trials and trials > 1:
        parts.append(f"{trials} trials")
    return f" ({' x '.join(parts)})" if parts else ""


def _hours(seconds: int) -> str:
    """A duration as a reviewer reads it: 90 s -> '90s', 7200 -> '2h', 259200 -> '3d'."""
    for unit, size in (("d", 86_400), ("h", 3_600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
