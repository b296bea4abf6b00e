"""What a review rule is: one ``Rule`` entry of ``vertex_training.review.rules.REGISTRY``.

An entry names everything the review, ``plan`` and the policy pack need of a rule: its
name (the key under ``vertex-training:policies``, the pack's policy), its description (the
pack's policy description), its settings model (a ``RuleSettings``: ``enforcement`` and
whatever the rule takes, each field described for the pack's config schema), its scope
(what one verdict is about: a job, the platform, the whole change), its check, the words
of its fix (the reference page's) and an example of its settings (the hint a mistake
shows). ``config_model`` derives the model of ``vertex-training:policies`` from the
registry: one optional field per rule, in the registry's order.

Also here: what the rules judge (``Change``, ``Grant``, ``BucketAccess``, ``JobKey``) and
what they give (``RuleResult``). Pure: no Pulumi, no Google clients.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal, cast

from pydantic import BaseModel, ConfigDict, create_model, field_validator

from vertex_training.keys import JOBS_KEY
from vertex_training.stackconfig import did_you_mean, invalid, one_of

if TYPE_CHECKING:
    from vertex_training.review.cost import Estimate
    from vertex_training.stackconfig import JobSpec

__all__ = [
    "ADVISORY",
    "ENFORCEMENTS",
    "MANDATORY",
    "BucketAccess",
    "Change",
    "Enforcement",
    "Flag",
    "Grant",
    "JobCheck",
    "JobKey",
    "Rule",
    "RuleResult",
    "RuleSettings",
    "RulesConfig",
    "Scope",
    "StackCheck",
    "config_model",
    "descriptions",
]

Enforcement = Literal["advisory", "mandatory"]
ADVISORY: Final = "advisory"
MANDATORY: Final = "mandatory"
ENFORCEMENTS: tuple[Enforcement, ...] = (ADVISORY, MANDATORY)


# ------------------------------------------------------------------ a rule's settings


class RuleSettings(BaseModel):
    """A rule's settings; ``enforcement`` says what a failure does. A rule's own settings
    model adds its fields, each with a ``description`` (the pack declares it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enforcement: Enforcement = MANDATORY

    @field_validator("enforcement", mode="before")
    @classmethod
    def _enforcement(cls, value: Any) -> Any:
        if value not in ENFORCEMENTS:
            hint = did_you_mean(str(value), ENFORCEMENTS)
            raise invalid(f"must be {one_of(ENFORCEMENTS)}{'.' + hint if hint else ''}")
        return value

    @classmethod
    def described(cls) -> dict[str, str]:
        """The settings besides ``enforcement``, by name, with their descriptions."""
        return {
            name: field.description or ""
            for name, field in cls.model_fields.items()
            if name != "enforcement"
        }


class Flag(RuleSettings):
    """A rule with no setting but its enforcement: ``spot_only: {}``."""


# ------------------------------------------------------------- what the rules judge


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
class JobKey:
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


@dataclass(frozen=True)
class Change:
    """The change under review as a platform or change rule sees it (``evaluate``'s
    arguments, the grants and buckets resolved)."""

    jobs: Mapping[str, JobSpec]
    estimates: Mapping[str, Estimate]
    #: The jobs the change submits or replaces (None: every job).
    changed: Collection[str] | None
    grants: Sequence[Grant]
    buckets: Sequence[BucketAccess]
    #: What else the change starts that costs, by name (None: of unknown cost).
    others: Mapping[str, Estimate | None]


@dataclass(frozen=True)
class RuleResult:
    """One rule's verdict on one job (or, with ``job`` None, on the whole stack)."""

    rule: str
    enforcement: Enforcement
    passed: bool
    job: str | None
    #: What is wrong and what to write instead, or why it passes.
    message: str


# ------------------------------------------------------------------------- the entry


class Scope(StrEnum):
    """What one verdict of a rule is about."""

    #: Each job, by name: the check judges one job at a time.
    JOB = "job"
    #: The platform's IAM grants and buckets.
    PLATFORM = "platform"
    #: The jobs the change submits or replaces, together.
    CHANGE = "change"


#: A job rule's check: its settings, the job's key, the job and every job's estimate ->
#: passed, and what is wrong and what to write instead (or why it passes).
JobCheck = Callable[[Any, JobKey, "JobSpec", Mapping[str, "Estimate"]], tuple[bool, str]]
#: A platform or change rule's check: its settings and the change -> its verdicts.
StackCheck = Callable[[Any, Change], list[tuple[bool, str]]]


@dataclass(frozen=True)
class Rule:
    """One rule of the review: everything ``evaluate``, ``parse_policies`` and the policy
    pack read of it."""

    #: Its key under ``vertex-training:policies`` and its policy's name in the pack.
    name: str
    #: What it asks of a stack, one sentence (the pack's policy description).
    description: str
    #: Its settings: ``Flag`` for none but ``enforcement``.
    settings: type[RuleSettings]
    scope: Scope
    #: A ``JobCheck`` for ``Scope.JOB``, else a ``StackCheck``.
    check: JobCheck | StackCheck
    #: What a failure asks the author to do, in words (the rules' reference page).
    fix: str
    #: Its settings besides ``enforcement`` as a stack file writes them (``usd: 500``);
    #: empty for a rule that takes none.
    example: str = ""

    def __post_init__(self) -> None:
        if bool(self.example) != bool(self.settings.described()):
            raise ValueError(f"rule {self.name}: give an example exactly when it has settings")

    def judge(
        self,
        settings: RuleSettings,
        change: Change,
        keys: Mapping[str, str],
        job_key: Callable[[str], str],
    ) -> list[RuleResult]:
        """Its results on ``change``: one per job, by name, for a job rule (``keys`` name
        a job's settings, else ``job_key``), the check's verdicts for the others."""
        if self.scope is Scope.JOB:
            check_job = cast("JobCheck", self.check)
            results = []
            for name in sorted(change.jobs):
                key = JobKey(name, keys.get(name) or job_key(name))
                passed, message = check_job(settings, key, change.jobs[name], change.estimates)
                results.append(RuleResult(self.name, settings.enforcement, passed, name, message))
            return results
        check_stack = cast("StackCheck", self.check)
        return [
            RuleResult(self.name, settings.enforcement, passed, None, message)
            for passed, message in check_stack(settings, change)
        ]


# ---------------------------------------------------------------- the derived config


class RulesConfig(BaseModel):
    """``vertex-training:policies``, as written; a rule left out (None) is off. Its
    fields are the registry's rules (``config_model``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    def enabled(self) -> dict[str, RuleSettings]:
        """The rules this stack turned on, by name, in the registry's order."""
        return {
            name: settings
            for name in type(self).model_fields
            if (settings := getattr(self, name)) is not None
        }


def config_model(registry: Mapping[str, Rule]) -> type[RulesConfig]:
    """The model of ``vertex-training:policies`` (and of a pack config's rules) for the
    rules of ``registry``: one optional field per rule, its settings model; one model per
    set of rules, so that two configs of the same rules compare equal."""
    return _config_model(tuple((name, rule.settings) for name, rule in registry.items()))


@functools.cache
def _config_model(fields: tuple[tuple[str, type[RuleSettings]], ...]) -> type[RulesConfig]:
    definitions: dict[str, Any] = {name: (settings | None, None) for name, settings in fields}
    return create_model("PoliciesConfig", __base__=RulesConfig, __module__=__name__, **definitions)


class _Descriptions(Mapping[str, str]):
    """A registry read as rule name -> description, as it stands when read."""

    def __init__(self, registry: Mapping[str, Rule]) -> None:
        self._registry = registry

    def __getitem__(self, name: str) -> str:
        return self._registry[name].description

    def __iter__(self) -> Iterator[str]:
        return iter(self._registry)

    def __len__(self) -> int:
        return len(self._registry)

    def __repr__(self) -> str:
        return repr(dict(self))


def descriptions(registry: Mapping[str, Rule]) -> Mapping[str, str]:
    """Each rule's description by name, in the registry's order (a live view)."""
    return _Descriptions(registry)
