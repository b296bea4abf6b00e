"""Command line tools of the provider package: ``python -m provider <command>``.

``render STACK_FILE`` prints, as JSON, the Vertex AI REST request body of every job the
stack would submit, keyed by job name, without calling any cloud API and without Pulumi:

    {"<job>": {"backend": ..., "customJob": {...}, "parent": "projects/P/locations/R",
               "region": ...}}

An invalid stack config prints each issue on stderr (the text ``pulumi preview`` shows)
and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import Any

from provider.errors import SpecError

#: Exit status for a stack config with mistakes in it (argparse also uses 2 for usage).
EXIT_INVALID_CONFIG = 2
JSON_INDENT = 2


def render(stack_file: str) -> dict[str, Any]:
    """The request bodies a stack file would submit, keyed by job name."""
    from provider.spec import load_stack_file

    _settings, jobs = load_stack_file(stack_file)
    return {
        name: {
            "region": job.region,
            "backend": job.backend,
            "parent": job.parent,
            "customJob": job.request_body(),
        }
        for name, job in jobs.items()
    }


def _cmd_render(args: argparse.Namespace) -> int:
    try:
        rendered = render(args.stack_file)
    except SpecError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return EXIT_INVALID_CONFIG
    except OSError as exc:
        print(f"{args.stack_file}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_INVALID_CONFIG
    json.dump(rendered, sys.stdout, indent=JSON_INDENT, sort_keys=True)
    sys.stdout.write("\n")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; add a command with another ``subparsers.add_parser``."""
    parser = argparse.ArgumentParser(
        prog="python -m provider", description="vertex-training command line tools"
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    render_parser = subparsers.add_parser(
        "render",
        help="print the Vertex AI request bodies a stack would submit (no cloud calls)",
        description=(
            "Validate a stack file and print, as JSON, the exact Vertex AI CustomJob "
            "request body of every job (REST field names). Exits 2 on an invalid config."
        ),
    )
    render_parser.add_argument("stack_file", help="stacks/Pulumi.<stack>.yaml")
    render_parser.set_defaults(handler=_cmd_render)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status."""
    args = build_parser().parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
