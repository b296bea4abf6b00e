"""The team's review rules: one evaluation for ``plan``, ``review`` and the CrossGuard pack
in ``policy/``, configured by a stack's ``vertex-training:policies`` (``parse_policies``)
or by a policy pack config file (``from_pack_config``).

A stack opts in rule by rule; a rule not listed is off. Each rule is ``advisory`` (the
reviewer is told) or ``mandatory`` (the change must not go in), ``mandatory`` unless the
stack says otherwise::

    vertex-training:policies:
      required_labels: {enforcement: mandatory, labels: [team, cost-center]}
      allowed_regions: {enforcement: mandatory, regions: [us-central1, europe-west4]}
      max_accelerators_per_job: {enforcement: advisory, count: 8}
      max_cost_per_job: {enforcement: mandatory, usd: 500}
      max_cost_per_change: {enforcement: advisory, usd: 2000}
      spot_only: {enforcement: mandatory}
      require_timeout: {enforcement: mandatory}
      no_primitive_roles: {enforcement: mandatory}
      no_public_buckets: {enforcement: mandatory}

``evaluate`` judges validated jobs (``vertex_training.stackconfig.JobSpec``), their cost estimates
(``vertex_training.review.cost``) and the platform's IAM grants and buckets. ``plan`` derives the
grants and buckets from the resolved platform (``platform_grants``, ``platform_buckets``,
what ``vertex_training.program.platform`` creates); the pack hands over the ones the engine
registers. A fix names a job's setting as its program wrote it: by stack config key
(``vertex-training:jobs.train.labels``), or by argument path (``job.labels``) for a job a
program gives as a resource's arguments (``evaluate``'s ``keys``).
A job on the local backend costs nothing on Google Cloud: it is exempt from the region,
SPOT and cost rules. Pure: no Pulumi, no Google clients (docs/policies.md).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from vertex_training.api.labels import label_key_ok
from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import machines
from vertex_training.errors import Issue, SpecError
from vertex_training.keys import JOBS_KEY, POLICIES_KEY, job_key
from vertex_training.stackconfig import calls_vertex_api, did_you_mean, invalid, issues_from, one_of
from vertex_training.stackconfig import platform as stack_platform

if TYPE_CHECKING:
    from vertex_training.review.cost import Estimate
    from vertex_training.stackconfig import JobSpec
    from vertex_training.stackconfig.platform import Platform

__all__ = [
    "ADVISORY",
    "CONFIG_POLICY",
    "COVERAGE_POLICY",
    "ENFORCEMENTS",
    "MANDATORY",
    "PACK_ALL",
    "PACK_DISABLED",
    "PACK_LEVEL_KEY",
    "POLICIES_KEY",
    "PROGRAM_JOB_KEY",
    "PUBLIC_MEMBERS",
    "RULES",
    "BucketAccess",
    "Grant",
    "PoliciesConfig",
    "RuleResult",
    "evaluate",
    "from_pack_config",
    "parse_policies",
    "platform_buckets",
    "platform_grants",
    "stack_policy",
]

Enforcement = Literal["advisory", "mandatory"]
ADVISORY: Final = "advisory"
MANDATORY: Final = "mandatory"
ENFORCEMENTS: tuple[Enforcement, ...] = (ADVISORY, MANDATORY)
#: IAM members that make whatever they are granted public.
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")
#: The only public access prevention that keeps a bucket private whatever its IAM says.
PREVENTION_ENFORCED = "enforced"
#: The bucket setting of vertex_training.program.platform's staging bucket.
PLATFORM_PREVENTION = PREVENTION_ENFORCED

#: How a program names the settings of a job it gives as a resource's arguments (the
#: Python package's ``TrainingJob(name, job)``) or properties (the plugin's ``job``):
#: ``job.labels``, as ``vertex_training.resources.job_arguments.argument_issue`` does (its
#: ``JOB_ARGUMENT``; not imported: that module needs Pulumi).
PROGRAM_JOB_KEY: Final = "job"

#: Where a value's shape is documented: issues_from points at the jobs' reference.
_SPEC_DOC = "docs/config-shape.md"
_POLICIES_DOC = "docs/policies.md"

#: Every rule, in the order results are reported, with what it asks of a stack (the pack
#: shows these as its policies' descriptions).
RULES: Mapping[str, str] = {
    "required_labels": "Every job carries the labels the team requires.",
    "allowed_regions": "Vertex AI jobs run only in the regions the team allows.",
    "max_accelerators_per_job": "No job asks for more accelerators at once than the ceiling.",
    "max_cost_per_job": "No Vertex AI job may cost more than the ceiling (its estimated most).",
    "max_cost_per_change": (
        "The jobs a change submits or replaces may not cost more than the ceiling together."
    ),
    "spot_only": "Vertex AI jobs run on SPOT capacity only.",
    "require_timeout": "Every job sets scheduling.timeout.",
    "no_primitive_roles": "The platform grants no primitive role (owner, editor, viewer).",
    "no_public_buckets": "The platform's buckets are never public.",
}


# ----------------------------------------------------------------- the YAML shape (input)


class _Rule(BaseModel):
    """A rule's settings; ``enforcement`` says what a failure does."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enforcement: Enforcement = MANDATORY

    @field_validator("enforcement", mode="before")
    @classmethod
    def _enforcement(cls, value: Any) -> Any:
        if value not in ENFORCEMENTS:
            hint = did_you_mean(str(value), ENFORCEMENTS)
            raise invalid(f"must be {one_of(ENFORCEMENTS)}{'.' + hint if hint else ''}")
        return value


class RequiredLabels(_Rule):
    """``required_labels: {labels: [team, ...]}``."""

    labels: list[str] = Field(min_length=1)

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


class AllowedRegions(_Rule):
    """``allowed_regions: {regions: [us-central1, ...]}``."""

    regions: list[str] = Field(min_length=1)

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


class MaxAccelerators(_Rule):
    """``max_accelerators_per_job: {count: 8}``: GPUs or TPU chips a job holds at once."""

    count: int = Field(ge=0)


class MaxCost(_Rule):
    """``max_cost_per_job`` / ``max_cost_per_change``: ``{usd: 500}``."""

    usd: float = Field(ge=0)


class Flag(_Rule):
    """A rule with no setting but its enforcement: ``spot_only: {}``."""


class PoliciesConfig(BaseModel):
    """``vertex-training:policies``, as written; a rule left out (None) is off."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    required_labels: RequiredLabels | None = None
    allowed_regions: AllowedRegions | None = None
    max_accelerators_per_job: MaxAccelerators | None = None
    max_cost_per_job: MaxCost | None = None
    max_cost_per_change: MaxCost | None = None
    spot_only: Flag | None = None
    require_timeout: Flag | None = None
    no_primitive_roles: Flag | None = None
    no_public_buckets: Flag | None = None

    def enabled(self) -> dict[str, _Rule]:
        """The rules this stack turned on, by name, in RULES order."""
        return {name: rule for name in RULES if (rule := getattr(self, name)) is not None}


# ------------------------------------------------------------- what the platform exposes


@dataclass(frozen=True)
class Grant:
    """One IAM grant: ``member`` gets ``role`` on ``target`` (e.g. ``project my-project``)."""

    member: str
    role: str
    target: str


@dataclass(frozen=True)
class BucketAccess:
    """Who can read a bucket: its public access prevention and its public IAM members.

    ``prevention`` is None where it is not known (a bucket managed outside the stack).
    """

    name: str
    prevention: str | None
    public_members: tuple[str, ...] = ()
    managed: bool = True


@dataclass(frozen=True)
class RuleResult:
    """One rule's verdict on one job (or, with ``job`` None, on the whole stack)."""

    rule: str
    enforcement: Enforcement
    passed: bool
    job: str | None
    #: What is wrong and what to write instead, or why it passes.
    message: str


# ------------------------------------------------------------------------ the public API


def parse_policies(raw: Any) -> PoliciesConfig:
    """Validate ``vertex-training:policies`` (None or ``{}``: every rule off).

    Raises ``SpecError`` whose issues name the full key, the bad value and the fix.
    """
    if raw is None:
        return PoliciesConfig()
    if not isinstance(raw, Mapping):
        raise SpecError(
            [
                Issue(
                    POLICIES_KEY,
                    raw,
                    "must be a mapping of rule: settings, e.g. "
                    "{require_timeout: {enforcement: mandatory}}",
                )
            ]
        )
    issues: list[Issue] = []
    settings: dict[str, Any] = {}
    for name, value in raw.items():
        if name in RULES and not isinstance(value, Mapping):
            issues.append(
                Issue(
                    f"{POLICIES_KEY}.{name}",
                    value,
                    "a rule's settings are a mapping: write e.g. "
                    f"{name}: {{enforcement: mandatory}} ({_settings_hint(str(name))}), "
                    "or leave the rule out to turn it off",
                )
            )
        else:
            settings[str(name)] = value
    try:
        config = PoliciesConfig.model_validate(settings)
    except ValidationError as exc:
        issues.extend(
            Issue(issue.key, issue.value, issue.message.replace(_SPEC_DOC, _POLICIES_DOC))
            for issue in issues_from(exc, POLICIES_KEY, PoliciesConfig)
        )
    if issues:
        raise SpecError(issues)
    return config


#: A CrossGuard policy pack config's own keys (``pulumi preview --policy-pack-config``): a
#: policy's level, ``all`` (the level of every policy of the pack, which this pack refuses:
#: ``from_pack_config``) and the level that turns a policy off.
PACK_LEVEL_KEY = "enforcementLevel"
PACK_ALL = "all"
PACK_DISABLED = "disabled"
#: The pack's (``policy/``) policies besides the rules it names after them: the one that
#: reports rules that cannot be read (mandatory) and the one that names what is not judged
#: (advisory). A pack config may set their levels as any CrossGuard policy's.
CONFIG_POLICY = "policies-config"
COVERAGE_POLICY = "policies-coverage"


def stack_policy(rule: str, enforcement: str) -> str:
    """The pack's policy that reports ``rule`` at ``enforcement`` for a stack that turns it
    on in ``vertex-training:policies`` (``require_timeout.mandatory``): CrossGuard fixes a
    policy's level when the pack starts, before the pack reads the stack file."""
    return f"{rule}.{enforcement}"


#: Every policy of the pack that is not a rule configured by the pack config.
_PACK_OWN_POLICIES = frozenset(
    {CONFIG_POLICY, COVERAGE_POLICY, *(stack_policy(r, e) for r in RULES for e in ENFORCEMENTS)}
)


def from_pack_config(raw: Any, source: str) -> PoliciesConfig:
    """The rules a CrossGuard policy pack config turns on, as ``parse_policies`` reads them.

    The file CrossGuard reads (``--policy-pack-config``, JSON) names each policy with its
    level, ``{"require_timeout": "mandatory"}``, or with its level and settings,
    ``{"max_cost_per_job": {"enforcementLevel": "advisory", "usd": 500}}``. The pack's
    policies named after the rules (``RULES``) are ``disabled`` unless the file gives them
    a level, as the engine applies the file: a rule left out, ``disabled``, or named
    without a level is off, and one named with settings but no level is a mistake (it
    would be off). ``all`` is refused: the engine gives its level to every policy of the
    pack, named or not, so the rules the file leaves out could not be told from those it
    names. The pack's other policies (``policies-config``, ``policies-coverage``,
    ``<rule>.mandatory``, ``<rule>.advisory``) are skipped: their levels are CrossGuard's
    to apply. A mistake raises ``SpecError`` naming ``source`` and the policy's key.
    """
    if not isinstance(raw, Mapping):
        raise SpecError(
            [
                Issue(
                    source,
                    raw,
                    'must be a JSON object of policy: level, e.g. {"spot_only": "mandatory"}',
                )
            ]
        )
    if PACK_ALL in raw:
        raise SpecError(
            [
                Issue(
                    f"{source}.{PACK_ALL}",
                    raw[PACK_ALL],
                    "the engine gives its level to every policy of the pack, turning on "
                    "the rules the file leaves out (and relevelling the pack's own "
                    f"{CONFIG_POLICY}); give each rule its own level instead, e.g. "
                    '"require_timeout": "mandatory"',
                )
            ]
        )
    issues: list[Issue] = []
    rules: dict[str, Any] = {}
    for name, value in raw.items():
        if name in _PACK_OWN_POLICIES:
            continue
        settings = dict(value) if isinstance(value, Mapping) else {PACK_LEVEL_KEY: value}
        level = settings.pop(PACK_LEVEL_KEY, PACK_DISABLED)
        if level == PACK_DISABLED and name in RULES:
            if settings:
                issues.append(
                    Issue(
                        f"{source}.{name}",
                        value,
                        f"has settings but no {PACK_LEVEL_KEY}, so the rule is off: add "
                        f'"{PACK_LEVEL_KEY}": "mandatory" (or "advisory"), or write '
                        f'"{name}": "{PACK_DISABLED}" to turn it off',
                    )
                )
            continue
        rules[str(name)] = {"enforcement": level, **settings}
    try:
        config = parse_policies(rules)
    except SpecError as exc:
        written = {f"{POLICIES_KEY}.{name}": value for name, value in raw.items()}
        issues.extend(
            Issue(
                issue.key.replace(POLICIES_KEY, source, 1).replace(
                    ".enforcement", f".{PACK_LEVEL_KEY}"
                ),
                written.get(issue.key, issue.value),  # a policy's value as the file has it
                issue.message.replace("enforcement: ", f"{PACK_LEVEL_KEY}: "),
            )
            for issue in exc.issues
        )
    if issues:
        raise SpecError(issues)
    return config


def platform_grants(platform: Platform | None, jobs: Mapping[str, JobSpec]) -> list[Grant]:
    """The IAM grants ``vertex_training.program.platform`` makes for this platform (none unless it
    creates
    one): the jobs' account on the bucket, the repository and the project, and the
    deployers' right to act as that account."""
    if platform is None or not platform.create:
        return []
    account = f"serviceAccount:{platform.service_account}"
    grants = [
        Grant(account, role, f"bucket {platform.bucket}") for role in stack_platform.BUCKET_ROLES
    ]
    grants += [
        Grant(account, role, f"repository {platform.repository_id}")
        for role in stack_platform.REPOSITORY_ROLES
    ]
    roles = [*stack_platform.PROJECT_ROLES]
    if any(calls_vertex_api(job, platform) for job in jobs.values()):
        roles.append(stack_platform.VERTEX_API_ROLE)
    grants += [Grant(account, role, f"project {platform.project}") for role in roles]
    deployers = platform.deployers or ("the identity that runs pulumi up",)
    grants += [
        Grant(member, stack_platform.DEPLOYER_ROLE, f"service account {platform.service_account}")
        for member in deployers
    ]
    return grants


def platform_buckets(platform: Platform | None) -> list[BucketAccess]:
    """The platform's bucket: created with public access prevention enforced, or named in
    ``existing.bucket`` and managed elsewhere (its settings unknown here)."""
    if platform is None or not platform.bucket:
        return []
    if platform.create:
        return [BucketAccess(platform.bucket, PLATFORM_PREVENTION)]
    return [BucketAccess(platform.bucket, None, managed=False)]


def evaluate(
    config: PoliciesConfig,
    jobs: Mapping[str, JobSpec],
    platform: Platform | None,
    estimates: Mapping[str, Estimate],
    changed: Collection[str] | None = None,
    *,
    grants: Sequence[Grant] | None = None,
    buckets: Sequence[BucketAccess] | None = None,
    keys: Mapping[str, str] | None = None,
    others: Mapping[str, Estimate | None] | None = None,
) -> list[RuleResult]:
    """Every enabled rule's results: per job for job rules, one or more for stack rules.

    ``estimates`` holds each job's ``vertex_training.review.cost.Estimate`` by name (a job with
    none, or with ``max_usd`` None, fails the cost rules as of unknown cost). ``changed``
    names the jobs the change submits or replaces (None: every job). ``grants`` and
    ``buckets`` are what the platform grants and owns; None derives them from
    ``platform`` (``platform_grants``, ``platform_buckets``). ``keys`` names each job's
    settings in the fixes, by job name, as its program wrote them: ``PROGRAM_JOB_KEY``
    (``job``, then ``job.labels``) for a job given as a resource's arguments or
    properties; a job it leaves out is a stack config job
    (``vertex-training:jobs.<name>.labels``). ``others``: what else the change starts that
    costs, by name, which ``max_cost_per_change`` counts too: a persistent resource (its
    estimate), another provider's job the review cannot read (None: unknown).
    """
    if grants is None:
        grants = platform_grants(platform, jobs)
    if buckets is None:
        buckets = platform_buckets(platform)
    keys = keys or {}
    results: list[RuleResult] = []
    for name, rule in config.enabled().items():
        if name == "max_cost_per_change":
            assert isinstance(rule, MaxCost)
            results.append(_change_cost(rule, jobs, estimates, changed, others or {}))
        elif name == "no_primitive_roles":
            results.extend(_primitive_roles(rule, grants))
        elif name == "no_public_buckets":
            results.extend(_public_buckets(rule, buckets))
        else:
            for job_name in sorted(jobs):
                key = _JobKey(job_name, keys.get(job_name) or job_key(job_name))
                passed, message = _JOB_RULES[name](rule, key, jobs[job_name], estimates)
                results.append(RuleResult(name, rule.enforcement, passed, job_name, message))
    return results


# ------------------------------------------------------------------------------ job rules


@dataclass(frozen=True)
class _JobKey:
    """A job's name (its estimate's) and the key its settings are named under."""

    name: str
    prefix: str

    def __call__(self, *path: str) -> str:
        return ".".join((self.prefix, *path))

    @property
    def region_too(self) -> str:
        """Where else the job's region is set: the stack's ``gcp:region``, or the
        resource's own ``region`` (or its platform's, or the plugin's default)."""
        if self.prefix.startswith(f"{JOBS_KEY}."):
            return "gcp:region"
        return "the resource's region"


def _required_labels(
    rule: Any, key: _JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
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
    rule: Any, key: _JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
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
    rule: Any, key: _JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
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
    rule: Any, key: _JobKey, job: JobSpec, estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if not kind_of(job.backend).billed:
        return True, f"{kind_of(job.backend).runs_on}: it costs nothing on Google Cloud"
    estimate = estimates.get(key.name)
    if estimate is None or estimate.max_usd is None:
        return (
            False,
            f"its cost is unknown ({_unknown_why(estimate)}), so it cannot be held to "
            f"${rule.usd:,.2f}: refresh prices (`make prices` with Google credentials, then "
            "commit prices/snapshot.json)",
        )
    if estimate.max_usd <= rule.usd:
        return True, f"may cost up to ${estimate.max_usd:,.2f}, at most ${rule.usd:,.2f}"
    return False, (
        f"may cost up to ${estimate.max_usd:,.2f}{_estimate_terms(estimate)}, more than "
        f"${rule.usd:,.2f}: set a shorter {key('scheduling', 'timeout')}, smaller "
        "machines or fewer replicas (or trials), or scheduling.strategy: SPOT"
    )


def _spot_only(
    _rule: Any, key: _JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if not kind_of(job.backend).cloud:
        return True, f"{kind_of(job.backend).runs_on}: the SPOT rule does not apply"
    if job.scheduling.strategy == "SPOT":
        return True, "runs on SPOT capacity"
    strategy = job.scheduling.strategy or "STANDARD (the default)"
    return False, f"runs with strategy {strategy}: write {key('scheduling', 'strategy')}: SPOT"


def _require_timeout(
    _rule: Any, key: _JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    if job.scheduling.timeout_s is not None:
        return True, f"stops after {_hours(job.scheduling.timeout_s)} at most"
    return False, (
        "has no timeout, so Vertex AI lets it run for up to 7 days: write "
        f"{key('scheduling', 'timeout')}: 4h (or the longest it should take)"
    )


_JOB_RULES = {
    "required_labels": _required_labels,
    "allowed_regions": _allowed_regions,
    "max_accelerators_per_job": _max_accelerators,
    "max_cost_per_job": _max_cost,
    "spot_only": _spot_only,
    "require_timeout": _require_timeout,
}


# ---------------------------------------------------------------------------- stack rules


def _change_cost(
    rule: MaxCost,
    jobs: Mapping[str, JobSpec],
    estimates: Mapping[str, Estimate],
    changed: Collection[str] | None,
    others: Mapping[str, Estimate | None],
) -> RuleResult:
    names = sorted(jobs if changed is None else (n for n in changed if n in jobs))
    names = [n for n in names if kind_of(jobs[n].backend).billed]
    estimates = {**estimates, **{n: e for n, e in others.items() if e is not None}}
    names = sorted({*names, *others})
    unknown = [n for n in names if (e := estimates.get(n)) is None or e.max_usd is None]

    def result(passed: bool, message: str) -> RuleResult:
        return RuleResult("max_cost_per_change", rule.enforcement, passed, None, message)

    if unknown:
        why = "; ".join(f"{n}: {_unknown_why(estimates.get(n))}" for n in unknown)
        return result(
            False,
            f"the change's cost is unknown ({why}), so it cannot be held to ${rule.usd:,.2f}: "
            "refresh prices (`make prices` with Google credentials, then commit "
            "prices/snapshot.json)",
        )
    total = sum(estimates[n].max_usd or 0.0 for n in names)
    submitted = one_of(names, "and") if names else "no Vertex AI job"
    if total <= rule.usd:
        return result(
            True, f"the change submits {submitted}: up to ${total:,.2f}, at most ${rule.usd:,.2f}"
        )
    return result(
        False,
        f"the change submits {submitted}, which may cost up to ${total:,.2f} together, more "
        f"than ${rule.usd:,.2f}: split it into smaller changes, or lower the jobs' "
        "scheduling.timeout, machines or replicas",
    )


def _primitive_roles(rule: _Rule, grants: Sequence[Grant]) -> list[RuleResult]:
    bad = [g for g in grants if g.role in stack_platform.PRIMITIVE_ROLES]
    if not bad:
        roles = sorted({g.role for g in grants})
        granted = one_of(roles, "and") if roles else "no role"
        return [
            RuleResult(
                "no_primitive_roles",
                rule.enforcement,
                True,
                None,
                f"the platform grants {granted}; no primitive role",
            )
        ]
    return [
        RuleResult(
            "no_primitive_roles",
            rule.enforcement,
            False,
            None,
            f"{g.member} is granted {g.role} on {g.target}, a primitive role: grant the "
            "predefined roles it needs instead (docs/platform.md lists the platform's)",
        )
        for g in bad
    ]


def _public_buckets(rule: _Rule, buckets: Sequence[BucketAccess]) -> list[RuleResult]:
    def result(passed: bool, message: str) -> RuleResult:
        return RuleResult("no_public_buckets", rule.enforcement, passed, None, message)

    if not buckets:
        return [result(True, "the platform has no bucket of its own")]
    results = []
    for bucket in buckets:
        problems = []
        if bucket.public_members:
            problems.append(f"grants a role to {one_of(list(bucket.public_members), 'and')}")
        if bucket.managed and bucket.prevention != PREVENTION_ENFORCED:
            problems.append(
                f"has public access prevention {bucket.prevention or 'unset'} (inherited), "
                "not enforced"
            )
        if problems:
            results.append(
                result(
                    False,
                    f"bucket {bucket.name} {' and '.join(problems)}: set "
                    "public_access_prevention to enforced and grant nothing to allUsers or "
                    "allAuthenticatedUsers",
                )
            )
        elif not bucket.managed:
            results.append(
                result(
                    True,
                    f"bucket {bucket.name} is managed outside this stack "
                    f"({stack_platform.PLATFORM_KEY}.existing.bucket); its access is not "
                    "checked here",
                )
            )
        else:
            results.append(result(True, f"bucket {bucket.name} enforces public access prevention"))
    return results


# ------------------------------------------------------------------------------ internals


def _settings_hint(rule: str) -> str:
    """The settings a rule takes besides ``enforcement``."""
    examples = {
        "required_labels": "labels: [team]",
        "allowed_regions": "regions: [us-central1]",
        "max_accelerators_per_job": "count: 8",
        "max_cost_per_job": "usd: 500",
        "max_cost_per_change": "usd: 2000",
    }
    return f"with {examples[rule]}" if rule in examples else "it takes no other setting"


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
