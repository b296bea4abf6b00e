"""The rules' reference page, docs/rules.md, written from the registry
(``vertex_training.review.rules.REGISTRY``): ``python -m vertex_training.review.rules_page
docs/rules.md``. A test fails when the page is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import yaml

from vertex_training.keys import POLICIES_KEY
from vertex_training.review.policies import MANDATORY, PACK_LEVEL_KEY
from vertex_training.review.rule_model import Rule
from vertex_training.review.rules import REGISTRY

__all__ = ["PAGE", "render", "write"]

#: Where the page lives, relative to the repository.
PAGE = Path("docs") / "rules.md"

_HEAD = f"""# The review's rules

<!-- Written by `python -m vertex_training.review.rules_page {PAGE.as_posix()}` from the
rules' registry (provider/vertex_training/review/rules.py); do not edit by hand. -->

Each rule of the review, as `vertex-training plan`, `vertex-training review` and the policy
pack apply it (docs/policies.md says how to turn rules on). A rule is `{MANDATORY}` unless
its settings say `enforcement: advisory`. The scope says what one verdict is about: each
job, the platform's grants and buckets, or the jobs of the change together.

| rule | scope | what it asks | settings | a failure's fix |
| --- | --- | --- | --- | --- |
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(rule: Rule) -> str:
    described = rule.settings.described()
    settings = "; ".join(f"`{name}`: {text}" for name, text in described.items()) or "none"
    return (
        f"| `{rule.name}` | {rule.scope.value} | {_cell(rule.description)} | "
        f"{_cell(settings)} | {_cell(rule.fix)} |"
    )


def _examples() -> str:
    """Every rule turned on with its example settings, in a stack file and in a policy
    pack config."""
    stack, pack = [], {}
    for rule in REGISTRY.values():
        written = yaml.safe_load(f"{{{rule.example}}}")
        stack.append(
            f"    {rule.name}: {{enforcement: {MANDATORY}{', ' if rule.example else ''}"
            f"{rule.example}}}"
        )
        pack[rule.name] = {PACK_LEVEL_KEY: MANDATORY, **written} if written else MANDATORY
    lines = ["", "In a stack file:", "", "```yaml", "config:", f"  {POLICIES_KEY}:", *stack]
    lines += ["```", "", "In a policy pack config (`--policy-pack-config`):", "", "```json"]
    lines += [
        "{",
        ",\n".join(f"  {json.dumps(name)}: {json.dumps(value)}" for name, value in pack.items()),
        "}",
        "```",
    ]
    return "\n".join(lines) + "\n"


def render() -> str:
    """The page, as the registry stands."""
    rows = "\n".join(_row(rule) for rule in REGISTRY.values())
    return f"{_HEAD}{rows}\n{_examples()}"


def write(path: Path) -> None:
    path.write_text(render(), encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else PAGE)
