"""What the engine shows the pack -> the arguments of ``vertex_training.review.policies.evaluate``.

Pure (no ``pulumi_policy``): the pack's ``__main__`` hands over what the engine configured
each policy with (``Configure``) and each resource as its type token, URN and plain
properties, with every value the preview cannot know yet replaced by ``UNKNOWN``. This
module then finds

- the rules: those the policy pack config (``--policy-pack-config``) turns on, read by
  ``policies.from_pack_config``; else the stack's ``vertex-training:policies``: in its
  stack file ``<project>/<stackConfigDir>/Pulumi.<stack>.yaml`` (the CLI runs the pack in
  the project directory; the stack is the URNs'), else as the engine configured the
  default providers with it (a key kept in Pulumi.yaml's ``config:``). The pack config
  wins: it is the one the team's pipeline (or Pulumi Cloud) applies, ``vertex-training
  review`` reads it before the stack's key too, and a stack must not weaken it;
- the jobs: each job resource's own inputs, read by
  ``vertex_training.preview.resources.job_of``, whatever program declared it (the plugin's
  ``vertex-training:index:*`` from any language, a Python program's dynamic resources in
  code or from its stack file); each named in fixes as its program names it;
- the platform: every IAM grant (``*IAMMember`` / ``*IamMember``, ``*IAMBinding``,
  ``*IAMPolicy`` of pulumi-gcp) and every ``gcp:storage/bucket:Bucket`` it registers;
- the prices: the snapshot the stack's ``vertex-training:prices`` names (read as the
  rules are), else ``prices/snapshot.json``, relative to the project.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vertex_training.errors import SpecError
from vertex_training.keys import CONFIG_NAMESPACE, POLICIES_KEY
from vertex_training.preview.resources import (  # noqa: F401 - the pack's names
    BUCKET_TYPE,
    DYNAMIC_JOB_TYPES,
    JOB_TYPES,
    PLUGIN_JOB_TYPES,
    UNKNOWN,
    Resource,
    ResourceJob,
    buckets_of,
    grants_of,
    job_of,
)
from vertex_training.resources.state import whole_numbers
from vertex_training.review import cost, policies
from vertex_training.review.rules import REGISTRY
from vertex_training.stackconfig import read_stack_file
from vertex_training.urns import Urn

#: The project's price snapshot, which the cost rules price jobs from (docs/cost.md).
PRICES_FILE = Path("prices") / "snapshot.json"
#: The provider config key that names another snapshot, relative to the project (the
#: plugin's ``prices`` setting); the plugin's provider resource shows it as ``prices``.
PRICES_KEY = f"{CONFIG_NAMESPACE}:prices"
#: The default providers whose inputs are the stack's config as the engine read it (its
#: stack file, Pulumi.yaml's ``config:``, environments): the plugin's, with the
#: ``vertex-training`` keys less their namespace, and the Python dynamic providers', with
#: every key whole.
PLUGIN_PROVIDER_TYPE = f"pulumi:providers:{CONFIG_NAMESPACE}"
DYNAMIC_PROVIDER_TYPE = "pulumi:providers:pulumi-python"
DEFAULT_PROVIDER_PREFIX = "default"
#: How a mistake in the policy pack config is named (the pack is not told the file's name).
PACK_CONFIG_SOURCE = "--policy-pack-config"
#: Where the rules came from (``StackView.source``).
FROM_PACK_CONFIG = "pack config"
FROM_STACK = "stack"


@dataclass(frozen=True)
class RulePolicy:
    """One of the pack's policies that report a rule (``rule_policies``)."""

    name: str
    rule: str
    #: The rule's description (its registry entry's).
    description: str
    #: Its level when the pack starts: ``disabled`` for the pack config's, the stack's
    #: enforcement for the stack's.
    level: str
    #: Where the rules it reports come from: ``FROM_PACK_CONFIG`` or ``FROM_STACK``.
    source: str
    #: The rule's settings as the pack declares them to CrossGuard (its ``config_schema``):
    #: named and described, not typed, so that the engine hands every value to the pack,
    #: which refuses a wrong one as ``vertex-training review`` does
    #: (``policies.from_pack_config``: the key, the value and the fix), not the engine
    #: before the preview with its own words. Empty for the stack's and a rule with none.
    settings: Mapping[str, dict[str, Any]] = field(default_factory=dict)


def rule_policies() -> list[RulePolicy]:
    """The pack's policies for the rules of the registry (``rules.REGISTRY``), in its
    order: each rule as the policy pack config turns it on (its own name, ``disabled``
    until the file gives it a level, with its settings), then as the stack's
    ``vertex-training:policies`` turns it on at each enforcement
    (``<rule>.mandatory``, ``<rule>.advisory``)."""
    found = []
    for name, rule in REGISTRY.items():
        settings = {
            key: {"description": description}
            for key, description in rule.settings.described().items()
        }
        found.append(
            RulePolicy(
                name, name, rule.description, policies.PACK_DISABLED, FROM_PACK_CONFIG, settings
            )
        )
    for name, rule in REGISTRY.items():
        found += [
            RulePolicy(
                policies.stack_policy(name, level), name, rule.description, level, FROM_STACK
            )
            for level in (policies.MANDATORY, policies.ADVISORY)
        ]
    return found


@dataclass
class StackView:
    """Everything ``evaluate`` needs, and what kept it from being read."""

    stack: str | None = None
    #: The rules, and where they came from (``FROM_PACK_CONFIG``, ``FROM_STACK``); None
    #: when there are none, or they cannot be read (``issues``).
    config: policies.PoliciesConfig | None = None
    source: str | None = None
    #: The judged jobs, by name; each one's resource URN and the key its fixes name its
    #: settings under (``job`` for a program's, ``vertex-training:jobs.<name>`` for a
    #: stack file's).
    jobs: dict[str, Any] = field(default_factory=dict)
    urns: dict[str, str] = field(default_factory=dict)
    keys: dict[str, str] = field(default_factory=dict)
    grants: list[policies.Grant] = field(default_factory=list)
    buckets: list[policies.BucketAccess] = field(default_factory=list)
    #: Mistakes in the rules, or why they could not be read (mandatory).
    issues: list[str] = field(default_factory=list)
    #: Jobs left out of the evaluation, why, and their resource's URN (advisory).
    skipped: list[tuple[str, str | None]] = field(default_factory=list)
    #: What else a reviewer should know about the rules (advisory).
    notes: list[str] = field(default_factory=list)
    #: Every job resource's job name, judged or not.
    seen: set[str] = field(default_factory=set)
    #: The price snapshot, None when there is none.
    prices: Any = None
    #: What else costs, by name, that is no job of this project's: a persistent resource
    #: (its estimate), another provider's job the pack cannot read (None: unknown).
    others: dict[str, Any] = field(default_factory=dict)
    _results: list[policies.RuleResult] | None = field(default=None, repr=False)

    def results(self) -> list[policies.RuleResult]:
        """The rules' results; ``changed`` is every job (the engine does not tell a
        policy which resources the change touches)."""
        if self.config is None:
            return []
        if self._results is None:
            self._results = self._evaluate(self.config)
        return self._results

    def _evaluate(self, config: policies.PoliciesConfig) -> list[policies.RuleResult]:
        estimates = {name: cost.estimate(job, self.prices) for name, job in self.jobs.items()}
        return policies.evaluate(
            config,
            self.jobs,
            None,
            estimates,
            None,
            grants=self.grants,
            buckets=self.buckets,
            keys=self.keys,
            others=self.others,
        )


def stack_of(urn: str) -> str:
    """The stack a resource's URN names ("" for no URN)."""
    parsed = Urn.parse(urn)
    return parsed.stack if parsed else ""


def stack_file(project_dir: Path, stack: str) -> Path:
    """Where the project keeps the stack's config (Pulumi.yaml's ``stackConfigDir``)."""
    project = yaml.safe_load((project_dir / "Pulumi.yaml").read_text()) or {}
    return project_dir / str(project.get("stackConfigDir") or ".") / f"Pulumi.{stack}.yaml"


def pack_config(configured: Mapping[str, tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """What the engine configured the pack's policies with (``Configure``: each policy's
    level and settings, the file's ``--policy-pack-config`` applied to the pack's
    defaults) -> the pack config as ``policies.from_pack_config`` reads it, as near as
    the file wrote it: each entry that says something, a level other than ``disabled``
    (the pack's rules' own) alone or with its settings, or settings alone (the engine
    left the policy ``disabled``: the file gave it no level). Empty when the file turns
    no rule on (or there is none)."""
    found: dict[str, Any] = {}
    own = policies.pack_own_policies()
    for name, (level, settings) in configured.items():
        if name in own or (level == policies.PACK_DISABLED and not settings):
            continue
        written = whole_numbers(dict(settings))
        if level != policies.PACK_DISABLED:
            written = {policies.PACK_LEVEL_KEY: level, **written} if written else level
        found[name] = written
    return found


def view(
    resources: Iterable[Resource],
    project_dir: Path,
    configured: Mapping[str, tuple[str, Mapping[str, Any]]] | None = None,
) -> StackView:
    """Read the rules, the jobs and the platform from what the engine shows the pack
    (``configured``: the policies' levels and settings, as ``pack_config`` reads them)."""
    resources = list(resources)
    result = StackView()
    if not resources:
        return result
    result.stack = stack_of(resources[0].urn)
    keys = {**_engine_keys(resources), **_stack_keys(result, project_dir)}
    from_pack = pack_config(configured or {})
    if from_pack:
        _read_rules(result, FROM_PACK_CONFIG, from_pack)
        if keys.get(POLICIES_KEY) is not None:
            result.notes.append(
                f"the stack's {POLICIES_KEY} is not read: the policy pack config gives the "
                "rules (docs/policies.md); remove the key, or the pack config"
            )
    elif keys.get(POLICIES_KEY) is not None:
        _read_rules(result, FROM_STACK, keys[POLICIES_KEY])
    result.prices = _prices(project_dir, keys)
    for resource in resources:
        _add_job(result, resource)
        result.grants.extend(grants_of(resource))
    result.buckets = buckets_of(resources, result.grants)
    return result


def _stack_keys(result: StackView, project_dir: Path) -> dict[str, Any]:
    """The stack file's keys as written (none without a file: a program whose config is
    all in Pulumi.yaml, or that has none); a file that cannot be read is an issue."""
    assert result.stack is not None
    try:
        path = stack_file(project_dir, result.stack)
    except (OSError, yaml.YAMLError) as exc:
        result.issues.append(f"cannot read {project_dir / 'Pulumi.yaml'}: {exc}")
        return {}
    if not path.is_file():
        return {}
    try:
        _stack, keys = read_stack_file(path)
    except SpecError as exc:
        result.issues.extend(str(issue) for issue in exc.issues)
        return {}
    return keys


def _read_rules(result: StackView, source: str, raw: Any) -> None:
    try:
        if source == FROM_PACK_CONFIG:
            result.config = policies.from_pack_config(raw, PACK_CONFIG_SOURCE)
        else:
            result.config = policies.parse_policies(_object(raw))
    except SpecError as exc:
        result.issues.extend(str(issue) for issue in exc.issues)
        return
    result.source = source


def _object(value: Any) -> Any:
    """A config object as the engine may show it: its JSON text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value  # refused with its key
    return value


def _engine_keys(resources: list[Resource]) -> dict[str, Any]:
    """The stack's ``vertex-training:*`` keys as the engine configured the default
    providers with them: what a program keeps outside its stack file (a YAML program's
    Pulumi.yaml ``config:``) is found there."""
    keys: dict[str, Any] = {}
    namespace = f"{CONFIG_NAMESPACE}:"
    for resource in resources:
        if not resource.name.startswith(DEFAULT_PROVIDER_PREFIX):
            continue
        if resource.type == PLUGIN_PROVIDER_TYPE:
            keys.update({namespace + key: value for key, value in resource.props.items()})
        elif resource.type == DYNAMIC_PROVIDER_TYPE:
            keys.update({k: v for k, v in resource.props.items() if k.startswith(namespace)})
    return {key: value for key, value in keys.items() if value not in (None, "", UNKNOWN)}


def _prices(project_dir: Path, keys: Mapping[str, Any]) -> Any:
    named = keys.get(PRICES_KEY)
    path = project_dir / (named if isinstance(named, str) and named else PRICES_FILE)
    snapshot, _note = cost.load_prices(path)
    return snapshot


def _add_job(result: StackView, resource: Resource) -> None:
    """The job a job resource declares, from its own inputs; one that cannot be read
    before ``pulumi up`` (or that its own check refuses) is named as not judged."""
    found = job_of(resource)
    if found is None:
        return
    name = found.name
    if name in result.seen:  # two resources with one job name: tell them apart
        name = f"{name} ({resource.urn.rsplit('::', 2)[-2]})"
    result.seen.add(name)
    if found.persistent is not None and not found.not_reviewed:
        # Machines billed while it exists: max_cost_per_change counts a month of them.
        region, pools = found.persistent.region, found.persistent.pools
        result.others[name] = (
            cost.persistent_estimate(pools, region, result.prices) if region else None
        )
        return
    if found.job is None:
        why = found.not_reviewed or found.unknown or "; ".join(map(str, found.issues))
        if found.declared_by:
            result.others[name] = None  # its cost is unknown, not nothing
            why = f"{why} (declared by {found.declared_by})"
        result.skipped.append((f"{name}: {why}", resource.urn))
        return
    result.jobs[name] = found.job
    result.urns[name] = resource.urn
    result.keys[name] = found.key
