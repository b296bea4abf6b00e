"""Small Python packages written by tests, for jobs to install and run."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "{name}"
version = "0.1.0"

[tool.setuptools]
packages = ["{name}"]
"""


def write_package(root: Path, name: str, modules: Mapping[str, str]) -> Path:
    """A setuptools project in ``root`` whose package ``name`` holds these modules
    (module name -> source, dedented). Returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT.format(name=name))
    package = root / name
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("")
    for module, source in modules.items():
        (package / f"{module}.py").write_text(textwrap.dedent(source))
    return root
