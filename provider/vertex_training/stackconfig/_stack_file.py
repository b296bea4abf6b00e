"""Reading ``stacks/Pulumi.<stack>.yaml``: the stack name from the file name, the raw keys
from its ``config:``.
"""

from __future__ import annotations

import re
from os import PathLike
from pathlib import Path
from typing import Any

from vertex_training.errors import Issue, SpecError

_STACK_FILE_RE = re.compile(r"Pulumi\.(?P<stack>[^/]+)\.ya?ml")


def read_stack_file(path: str | PathLike[str]) -> tuple[str, dict[str, Any]]:
    """The stack name and config keys of ``stacks/Pulumi.<stack>.yaml`` (unvalidated), each
    key with the value the Pulumi program gets for it (``_yaml.read_config``: YAML 1.2 as
    the CLI reads it, so ``yes`` stays ``"yes"``). A key written without a namespace gets
    the project's name, as the CLI gives it (the project: the nearest Pulumi.yaml above
    the file)."""
    import yaml  # only this entry point reads YAML

    from vertex_training.stackconfig._yaml import StackYAMLError, read_config

    file = Path(path)
    match = _STACK_FILE_RE.fullmatch(file.name)
    if match is None:
        raise SpecError([Issue(str(file), file.name, "stack files are named Pulumi.<stack>.yaml")])
    try:
        config = read_config(file.read_text(encoding="utf-8"), str(file), _project_name(file))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "cannot be parsed"
        raise SpecError(
            [Issue(str(file), None, f"is not valid YAML{where}: {problem}; fix the syntax")]
        ) from None
    except StackYAMLError as exc:
        raise SpecError([Issue(str(file), None, f"is not read by Pulumi: {exc}")]) from None
    return match["stack"], config


def _project_name(stack_file: Path) -> str | None:
    """The ``name:`` of the Pulumi project the stack file belongs to, or None."""
    import yaml

    from vertex_training.packaging import project_dir_of

    project_file = project_dir_of(stack_file) / "Pulumi.yaml"
    try:
        project = yaml.safe_load(project_file.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    name = project.get("name") if isinstance(project, dict) else None
    return name if isinstance(name, str) and name else None
