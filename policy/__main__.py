"""The team's review rules as a CrossGuard policy pack (pulumi-policy): wiring only.

The rules, their configuration and their evaluation are
``vertex_training.review.policies``, the same that ``vertex-training plan`` and ``review``
apply; each rule is one entry of ``vertex_training.review.rules.REGISTRY``, from which
``policy/resources.py`` lists the pack's policies (``rule_policies``). That module reads
what the engine shows into their arguments: each job from its resource's own inputs,
whatever program declared it. The rules come from one of two places (docs/policies.md):

- the policy pack config (``pulumi preview --policy-pack-config config.json``): each rule
  is a policy of its own name (``require_timeout``), ``disabled`` until the file gives it
  a level, so it reports at the level the file gives;
- else the stack's ``vertex-training:policies`` in its stack file: CrossGuard fixes a
  policy's level when the pack starts, before the pack reads the stack file, so each rule
  is also two policies, ``<rule>.mandatory`` and ``<rule>.advisory``, and a failure is
  reported by the one the stack chose.

``policies-config`` reports rules that cannot be read (mandatory); ``policies-coverage``
names the jobs not judged and what else a reviewer should know (advisory).
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

#: The repository: the pack evaluates the project's own rules, from the package's source
#: (its virtualenv cannot hold the package's dependencies: policy/requirements.txt).
REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "provider")]

from google.protobuf import json_format  # noqa: E402 - after the repository is on sys.path
from pulumi.runtime.proto import analyzer_pb2  # noqa: E402
from pulumi_policy import (  # noqa: E402
    EnforcementLevel,
    PolicyConfigSchema,
    PolicyPack,
    ReportViolation,
    Secret,
    StackValidationArgs,
    StackValidationPolicy,
    proxy,
)
from pulumi_policy import policy as sdk  # noqa: E402

from policy import resources  # noqa: E402
from vertex_training.review import policies  # noqa: E402

PACK_NAME = "vertex-training-policies"
#: The sentinels pulumi-policy leaves for values a preview cannot know.
SENTINELS = frozenset(
    getattr(proxy, name)
    for name in dir(proxy)
    if name.startswith("UNKNOWN_") and name.endswith("_VALUE")
)
#: What the engine configured each policy with (``Configure``): level and settings.
CONFIGURED: dict[str, tuple[str, dict[str, Any]]] = {}


def _hear_configure() -> None:
    """Keep what the engine configures the pack with, every policy at once.

    pulumi-policy hands a policy only its own settings (``args.get_config()``), and runs
    none that is ``disabled``; the pack must see the whole file to refuse a misspelt rule,
    ``all`` or settings without a level (``policies.from_pack_config``) with its mandatory
    ``policies-config``. So it wraps the SDK's ``Configure`` (pulumi-policy 1.21.0, pinned
    in requirements.txt; tests/test_engine_policy.py runs it). When the file gives ``all``,
    which the engine applies to every policy, ``policies-config`` keeps its own level
    (mandatory) so that the refusal stops the preview.
    """
    servicer = sdk._PolicyAnalyzerServicer  # private to the SDK: see the docstring
    configure = servicer.Configure

    def heard(self: Any, request: Any, context: Any) -> Any:
        CONFIGURED.clear()
        for name, given in request.policyConfig.items():
            level = analyzer_pb2.EnforcementLevel.Name(given.enforcementLevel).lower()
            CONFIGURED[name] = (level, json_format.MessageToDict(given.properties))
        if policies.PACK_ALL in CONFIGURED and policies.CONFIG_POLICY in request.policyConfig:
            request.policyConfig[policies.CONFIG_POLICY].enforcementLevel = analyzer_pb2.MANDATORY
        return configure(self, request, context)

    servicer.Configure = heard


def _plain(value: Any) -> Any:
    """pulumi-policy's proxies and secrets -> plain data, unknowns as resources.UNKNOWN."""
    if isinstance(value, Secret):
        return _plain(value.value)
    try:
        target = value["__target"]
    except (TypeError, KeyError, IndexError):
        target = value
    if isinstance(target, dict):
        return {str(k): _plain(v) for k, v in target.items()}
    if isinstance(target, list):
        return [_plain(v) for v in target]
    if isinstance(target, str) and target in SENTINELS:
        return resources.UNKNOWN
    return target


#: The last analysis's stack, by what it was read from (one entry).
_views: dict[str, resources.StackView] = {}
_lock = threading.Lock()


def _view(args: StackValidationArgs) -> resources.StackView:
    """The stack as the rules see it, read once for all the policies of one analysis."""
    with _lock:  # a job's outputs, completed by its inputs (``_hear_inputs``)
        inputs = {r.urn: INPUTS.get(r.urn, {}) for r in args.resources}
    seen = [
        resources.Resource(r.resource_type, r.urn, {**inputs[r.urn], **_plain(r.props)})
        for r in args.resources
    ]
    fingerprint = json.dumps(
        [[[r.type, r.urn, r.props] for r in seen], sorted(CONFIGURED.items())],
        sort_keys=True,
        default=str,
    )
    with _lock:
        if fingerprint not in _views:
            _views.clear()
            _views[fingerprint] = resources.view(seen, Path.cwd(), CONFIGURED)
        return _views[fingerprint]


def _report_failures(
    stack: resources.StackView, rule: str, enforcement: str | None, report: ReportViolation
) -> None:
    for result in stack.results():
        if result.rule != rule or result.passed:
            continue
        if enforcement is not None and result.enforcement != enforcement:
            continue
        if result.job:
            report(f"{result.job}: {result.message}", stack.urns.get(result.job))
        else:
            report(result.message)


#: Each job resource's inputs, by URN, as the engine sent them to ``Analyze``
#: (``_hear_inputs``).
INPUTS: dict[str, Any] = {}


def _hear_inputs() -> None:
    """Keep each job resource's inputs, as the engine sends them to ``Analyze``.

    A stack policy sees each resource's outputs (the engine runs ``AnalyzeStack`` on the
    stack's final state), and a plugin job's state keeps the job's keys once, as an input
    (``vertex_training.plugin.job_shapes.RECORDED_INPUTS``). The engine sends every
    resource the program registers to ``Analyze`` first, with its checked inputs, whether
    it changes or not: the pack keeps a job resource's, and reads the job from its inputs
    and outputs together (``_view``). The pack has no resource policy, so the SDK's own
    ``Analyze`` (pulumi-policy 1.21.0, as ``_hear_configure``) reports nothing.
    """
    servicer = sdk._PolicyAnalyzerServicer  # private to the SDK: see the docstring
    analyze = servicer.Analyze

    def heard(self: Any, request: Any, context: Any) -> Any:
        if request.type in resources.JOB_TYPES:
            given = sdk.deserialize_properties(json_format.MessageToDict(request.properties))
            plain = _plain(proxy.unknown_checking_proxy(given))
            with _lock:
                INPUTS[request.urn] = plain
        return analyze(self, request, context)

    servicer.Analyze = heard


def _rule_policy(policy: resources.RulePolicy) -> StackValidationPolicy:
    """A rule's policy (``resources.rule_policies``): it reports the rule's failures when
    the rules come from its source, at its level (the pack config's: at the level the file
    gives; the stack's: only those at its enforcement)."""
    enforcement = None if policy.source == resources.FROM_PACK_CONFIG else policy.level
    schema = PolicyConfigSchema(properties=dict(policy.settings)) if policy.settings else None

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        stack = _view(args)
        if stack.source == policy.source:
            _report_failures(stack, policy.rule, enforcement, report)

    return StackValidationPolicy(
        name=policy.name,
        description=policy.description,
        enforcement_level=EnforcementLevel(policy.level),
        validate=validate,
        config_schema=schema,
    )


def _config_policy() -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for issue in _view(args).issues:
            report(issue)

    return StackValidationPolicy(
        name=policies.CONFIG_POLICY,
        description=(
            "The rules can be read: the policy pack config's, else the stack's "
            f"{policies.POLICIES_KEY}."
        ),
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=validate,
    )


def _coverage_policy() -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        stack = _view(args)
        for note in stack.notes:
            report(note)
        if stack.config is not None and stack.config.enabled():
            for skipped, urn in stack.skipped:
                report(f"not judged: {skipped}", urn)

    return StackValidationPolicy(
        name=policies.COVERAGE_POLICY,
        description="Every job of the stack is judged by the rules.",
        enforcement_level=EnforcementLevel.ADVISORY,
        validate=validate,
    )


def main() -> None:
    _hear_configure()
    _hear_inputs()
    rules = [_config_policy(), _coverage_policy()]
    rules += [_rule_policy(policy) for policy in resources.rule_policies()]
    PolicyPack(name=PACK_NAME, policies=list(rules))


main()
