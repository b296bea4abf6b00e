"""Public names a package re-exports from its private modules, imported on first use.

``lazy_exports(__name__, EXPORTS)`` gives a package the module-level ``__getattr__`` and
``__dir__`` (PEP 562) that load a name's module only when the name is first read, so that
importing the package, or one of its modules, loads nothing else.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, exports: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose public names are the keys of
    ``exports`` (name -> the module that defines it)."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__
