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

The rules themselves are the entries of ``vertex_training.review.rules.REGISTRY`` (what
an entry holds: ``vertex_training.review.rule_model``): ``RULES``, ``PoliciesConfig``,
``evaluate``, the hints of ``parse_policies`` and the pack's policies all read it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from pydantic import ValidationError

from vertex_training.errors import Issue, SpecError
from vertex_training.keys import POLICIES_KEY, job_key
from vertex_training.review.rule_model import (
    ADVISORY,
    ENFORCEMENTS,
    MANDATORY,
    BucketAccess,
    Change,
    Grant,
    RuleResult,
    RulesConfig,
    config_model,
    descriptions,
)
from vertex_training.review.rules import PREVENTION_ENFORCED, REGISTRY
from vertex_training.stackconfig import calls_vertex_api, issues_from
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
    "pack_own_policies",
    "parse_policies",
    "platform_buckets",
    "platform_grants",
    "stack_policy",
]


#: IAM members that make whatever they are granted public.
PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")
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
#: shows these as its policies' descriptions): ``REGISTRY`` read by name.
RULES: Mapping[str, str] = descriptions(REGISTRY)

if TYPE_CHECKING:
    PoliciesConfig: TypeAlias = RulesConfig
else:
    #: ``vertex-training:policies``, as written: one optional field per rule of
    #: ``REGISTRY`` (its settings model); a rule left out (None) is off.
    PoliciesConfig = config_model(REGISTRY)


# ------------------------------------------------------------------------ the public API


def parse_policies(raw: Any) -> PoliciesConfig:
    """Validate ``vertex-training:policies`` (None or ``{}``: every rule off).

    Raises ``SpecError`` whose issues name the full key, the bad value and the fix.
    """
    model = config_model(REGISTRY)
    if raw is None:
        return model()
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
        if name in REGISTRY and not isinstance(value, Mapping):
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
        config = model.model_validate(settings)
    except ValidationError as exc:
        issues.extend(
            Issue(issue.key, issue.value, issue.message.replace(_SPEC_DOC, _POLICIES_DOC))
            for issue in issues_from(exc, POLICIES_KEY, model)
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


def pack_own_policies() -> frozenset[str]:
    """Every policy of the pack that is not a rule configured by the pack config."""
    return frozenset(
        {
            CONFIG_POLICY,
            COVERAGE_POLICY,
            *(stack_policy(r, e) for r in REGISTRY for e in ENFORCEMENTS),
        }
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
    own = pack_own_policies()
    for name, value in raw.items():
        if name in own:
            continue
        settings = dict(value) if isinstance(value, Mapping) else {PACK_LEVEL_KEY: value}
        level = settings.pop(PACK_LEVEL_KEY, PACK_DISABLED)
        if level == PACK_DISABLED and name in REGISTRY:
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
    change = Change(
        jobs,
        estimates,
        changed,
        platform_grants(platform, jobs) if grants is None else grants,
        platform_buckets(platform) if buckets is None else buckets,
        others or {},
    )
    keys = keys or {}
    return [
        result
        for name, settings in config.enabled().items()
        for result in REGISTRY[name].judge(settings, change, keys, job_key)
    ]


# ------------------------------------------------------------------------------ internals


def _settings_hint(rule: str) -> str:
    """The settings ``rule`` takes besides ``enforcement``: its registry entry's example."""
    example = REGISTRY[rule].example
    return f"with {example}" if example else "it takes no other setting"
