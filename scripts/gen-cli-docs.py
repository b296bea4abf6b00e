"""Write docs/cli.md, the command line's reference, from its argument parser.

    python scripts/gen-cli-docs.py           # write docs/cli.md
    python scripts/gen-cli-docs.py --check   # exit 1 when docs/cli.md is stale

The page is built from ``vertex_training.__main__.build_parser()``: each command and
subcommand with its help, description, arguments and options, in the parser's own words.
It reads the parser's actions rather than argparse's help text, whose layout changes
between Python versions and with the terminal's width. tests/test_docs_facts.py fails
when the page and the parser disagree.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from vertex_training.__main__ import build_parser

PAGE = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

INTRO = """\
# Command line reference

<!-- Written by scripts/gen-cli-docs.py from the argument parser: do not edit by hand.
     Run `.venv/bin/python scripts/gen-cli-docs.py` after changing a command. -->

`vertex-training` is installed with the Python package (`pip install ./provider` from a
checkout); `python -m vertex_training` is the same program. `vertex-training --help` and
each command's `--help` print what this page says; a command's description gives its exit
statuses where they mean more than success and failure.
"""


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's commands, in the order they were added."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each command's one-line help, as ``--help`` lists it."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return {choice.dest: choice.help or "" for choice in action._choices_actions}
    return {}


def commands() -> dict[str, str]:
    """Every command the parser takes (``render``, ``prices refresh``, ...), each with its
    one-line help."""
    found: dict[str, str] = {}

    def walk(parser: argparse.ArgumentParser, path: list[str], help_text: str) -> None:
        subs = _subcommands(parser)
        if path and not subs:
            found[" ".join(path)] = help_text
        helps = _helps(parser)
        for name, sub in subs.items():
            walk(sub, [*path, name], helps.get(name, ""))

    walk(build_parser(), [], "")
    return found


def _escape(text: str) -> str:
    """``text`` as Markdown prints it in a table cell: no cell break, no HTML tag."""
    return text.replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _argument(action: argparse.Action) -> tuple[str, str]:
    """An argument's name as it is typed, and what it means (choices, default)."""
    if action.option_strings:
        name = ", ".join(action.option_strings)
        if action.nargs != 0:
            if action.choices:
                name += " {" + ",".join(str(c) for c in action.choices) + "}"
            else:
                name += " " + (str(action.metavar) if action.metavar else action.dest.upper())
    else:
        name = str(action.metavar or action.dest).upper()
    meaning = action.help or ""
    if action.required and action.option_strings:
        meaning = f"required; {meaning}" if meaning else "required"
    given = action.option_strings and action.nargs != 0
    if given and action.default not in (None, [], "") and "default" not in meaning:
        default = f"default: {action.default}"
        meaning = f"{meaning} ({default})" if meaning else default
    if isinstance(action, argparse._AppendAction) and "repeatable" not in meaning:
        meaning = f"{meaning}; repeatable" if meaning else "repeatable"
    return name, meaning


def _section(parser: argparse.ArgumentParser, path: list[str], help_text: str) -> list[str]:
    lines = [f"{'#' * min(len(path) + 1, 4)} `vertex-training {' '.join(path)}`", ""]
    if help_text:
        lines += [help_text[:1].upper() + help_text[1:] + ".", ""]
    subs = _subcommands(parser)
    if parser.description:
        lines += [_escape(parser.description), ""]
    rows = [
        _argument(action)
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
    ]
    if rows:
        lines += ["| Argument | Meaning |", "|---|---|"]
        lines += [f"| `{_escape(name)}` | {_escape(meaning)} |" for name, meaning in rows]
        lines.append("")
    if parser.epilog:
        lines += [parser.epilog, ""]
    helps = _helps(parser)
    for name, sub in subs.items():
        lines += _section(sub, [*path, name], helps.get(name, ""))
    return lines


def render() -> str:
    """The page, as the parser gives it."""
    parser = build_parser()
    helps = _helps(parser)
    lines = [INTRO, "## Commands", ""]
    lines += [f"- `{name}`: {meaning}" for name, meaning in commands().items()]
    lines.append("")
    for name, sub in _subcommands(parser).items():
        lines += _section(sub, [name], helps.get(name, ""))
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv == ["--check"]:
        if PAGE.read_text(encoding="utf-8") != text:
            print(f"{PAGE} is stale: run python scripts/gen-cli-docs.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
