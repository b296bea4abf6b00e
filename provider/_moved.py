"""Modules that earlier releases pickled into Pulumi state, under their new names.

The engine hands a dynamic resource's serialized provider back from the state for
``read`` and ``delete``; dill pickled it by reference (``provider.training_job`` +
``TrainingJobProvider``). A stack last updated by a release from before the package
was regrouped (state schema 1) therefore names modules that no longer exist; this
finder answers those names with the modules that hold the classes now, so such a
stack can still refresh and delete its jobs.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

#: Old module name -> the module that holds its pickled classes now.
MOVED_MODULES = {
    "provider.training_job": "provider.resources.training_job",
    "provider.tuning_job": "provider.resources.tuning_job",
    "provider.waiter": "provider.resources.waiter",
}


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
    """Finds the old names of ``MOVED_MODULES``."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        moved_to = MOVED_MODULES.get(fullname)
        if moved_to is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(moved_to))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once per process."""
    if not any(isinstance(finder, MovedModuleFinder) for finder in sys.meta_path):
        sys.meta_path.append(MovedModuleFinder())
