"""The module names that state written by earlier releases holds, answered with today's.

The engine hands a dynamic resource's serialized provider back from the state for
``read`` and ``delete``; dill pickled it by reference (module and class name). Before
0.2.0 the package was a folder of the repository imported as ``provider``, and before
state schema 2 its resources lived at its top (``provider.training_job``). A stack last
updated by such a release names those modules, and keeps naming them: the engine keeps a
resource's recorded outputs, the serialized provider among them, until the resource
itself is updated or replaced.

Nothing here is installed by importing the package: a program whose state names
``provider.…`` makes ``provider`` a module that calls ``serve_legacy_package`` (the
repository's ``provider.py`` does), found first on the provider host's path, which starts
in the project directory. The finder then answers ``provider.X`` with the module
``vertex_training.X`` (the same module object, never a second copy).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import MutableMapping, Sequence
from types import ModuleType
from typing import Any

#: The package's import name before 0.2.0.
LEGACY_PACKAGE = "provider"
PACKAGE = "vertex_training"
#: Modules that moved inside the package before it was renamed (state schema 1), by
#: their old name under it -> where they are now.
MOVED_MODULES = {
    "training_job": "resources.training_job",
    "tuning_job": "resources.tuning_job",
    "waiter": "resources.waiter",
}


def current_name(old: str) -> str | None:
    """The module that holds what the legacy module ``old`` held; None for a name that is
    not under the legacy package."""
    if not old.startswith(f"{LEGACY_PACKAGE}."):
        return None
    rest = old.removeprefix(f"{LEGACY_PACKAGE}.")
    return f"{PACKAGE}.{MOVED_MODULES.get(rest, rest)}"


class _AliasLoader(importlib.abc.Loader):
    """Loads an old name as the module it moved to (the same module object)."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.target_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self.target)
        self.target_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the target is loaded; give it back the spec the import set."""
        module.__spec__ = self.target_spec


class MovedModuleFinder(importlib.abc.MetaPathFinder):
    """Finds the legacy names of the package's modules (``current_name``)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        moved_to = current_name(fullname)
        if moved_to is None or importlib.util.find_spec(moved_to) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(moved_to))


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once per process.

    First: a legacy subpackage is the package's own module object, whose ``__path__``
    the path finder would search for the next name and load a second copy of the module
    under the legacy name (two copies of the classes, and of the process-wide state).
    """
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, MovedModuleFinder())


def serve_legacy_package(module_globals: MutableMapping[str, Any]) -> None:
    """Make the module whose globals these are (named ``provider``) a package whose
    submodules are the package's modules under their legacy names."""
    module_globals["__path__"] = []
    install()
