"""The team's review rules as a CrossGuard policy pack (pulumi-policy): wiring only.

The rules, their configuration (``vertex-training:policies`` in the stack file) and their
evaluation are ``vertex_training.review.policies``, the same that ``vertex-training plan``
applies; ``policy/resources.py`` reads what the engine shows into their arguments.

CrossGuard fixes a policy's enforcement level when the pack starts, before the pack knows
the stack; a stack chooses each rule's level. So every rule is two stack policies,
``<rule>.mandatory`` and ``<rule>.advisory``, and a failure is reported by the one the
stack chose; a rule the stack leaves out reports nothing. ``policies-config`` reports a
stack whose rules cannot be read (mandatory). See docs/policies.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

#: The repository: the pack evaluates the project's own rules, from the package's source
#: (its virtualenv cannot hold the package's dependencies: policy/requirements.txt).
REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "provider")]

from pulumi_policy import (  # noqa: E402 - after the repository is on sys.path
    EnforcementLevel,
    PolicyPack,
    ReportViolation,
    Secret,
    StackValidationArgs,
    StackValidationPolicy,
    proxy,
)

from policy import resources  # noqa: E402
from vertex_training.preview.resources import UNKNOWN  # noqa: E402
from vertex_training.review import policies  # noqa: E402

PACK_NAME = "vertex-training-policies"
LEVELS = {
    policies.MANDATORY: EnforcementLevel.MANDATORY,
    policies.ADVISORY: EnforcementLevel.ADVISORY,
}
#: The sentinels pulumi-policy leaves for values a preview cannot know.
SENTINELS = frozenset(
    getattr(proxy, name)
    for name in dir(proxy)
    if name.startswith("UNKNOWN_") and name.endswith("_VALUE")
)


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
        return UNKNOWN
    return target


def _view(args: StackValidationArgs) -> resources.StackView:
    seen = [resources.Resource(r.resource_type, r.urn, _plain(r.props)) for r in args.resources]
    return resources.view(seen, Path.cwd())


def _rule_policy(rule: str, enforcement: str) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        stack = _view(args)
        for result in stack.results():
            if result.rule == rule and result.enforcement == enforcement and not result.passed:
                if result.job:
                    report(f"{result.job}: {result.message}", stack.urns.get(result.job))
                else:
                    report(result.message)

    return StackValidationPolicy(
        name=f"{rule}.{enforcement}",
        description=policies.RULES[rule],
        enforcement_level=LEVELS[enforcement],
        validate=validate,
    )


def _config_policy() -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        stack = _view(args)
        for issue in stack.issues:
            report(issue)

    return StackValidationPolicy(
        name="policies-config",
        description=f"The stack's {policies.POLICIES_KEY} can be read.",
        enforcement_level=EnforcementLevel.MANDATORY,
        validate=validate,
    )


def _skipped_policy() -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        for skipped in _view(args).skipped:
            report(f"not judged: {skipped}")

    return StackValidationPolicy(
        name="policies-coverage",
        description="Every job of the stack is judged by the rules.",
        enforcement_level=EnforcementLevel.ADVISORY,
        validate=validate,
    )


def main() -> None:
    rules = [_config_policy(), _skipped_policy()]
    rules += [_rule_policy(rule, level) for rule in policies.RULES for level in LEVELS]
    PolicyPack(name=PACK_NAME, policies=list(rules))


main()
