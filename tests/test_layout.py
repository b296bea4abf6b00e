"""The package's layout: no import cycles, modules of a readable size, pinned public names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "provider"
#: Modules allowed past MAX_MODULE_LINES, and why: one coherent class or table.
LONG_MODULES: dict[str, str] = {}
MAX_MODULE_LINES = 800


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def imported_modules(name: str) -> set[str]:
    """The modules of the package that ``name`` imports, at any level of its code (an
    import inside a function is an edge too: it only hides a cycle)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1]])
                base = f"{base}.{node.module}" if node.module else base
            found.add(base)
            # `from provider.stackconfig import legacy` imports provider.stackconfig.legacy.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return {m for m in found if m in MODULES and m != name}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


class TestImports:
    """provider/ imports form no cycle, and the spec's dialects depend on its core only."""

    def test_no_import_cycles(self) -> None:
        """No two modules of provider/ import each other, directly or through others."""
        graph = {name: imported_modules(name) for name in MODULES}
        assert cycles(graph) == []

    def test_the_cycle_finder_finds_one(self) -> None:
        """The check above can fail: a two-module loop is reported."""
        assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]

    def test_the_spec_core_knows_no_dialect(self) -> None:
        """Only provider.stackconfig._parse (the entry) imports the study and legacy dialects."""
        dialects = ("provider.stackconfig.study", "provider.stackconfig.legacy")
        core = [
            name
            for name in MODULES
            if name.startswith("provider.stackconfig._") and name != "provider.stackconfig._parse"
        ]
        for name in core:
            reached = {m for m in imported_modules(name) if m.startswith(dialects)}
            assert not reached, f"{name} imports {sorted(reached)}"


class TestModuleSize:
    """Modules stay short enough to read in one sitting."""

    @pytest.mark.parametrize("name", sorted(MODULES))
    def test_module_length(self, name: str) -> None:
        """At most MAX_MODULE_LINES lines, unless LONG_MODULES says why."""
        lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
        if name in LONG_MODULES:
            return
        assert lines <= MAX_MODULE_LINES, f"{name} has {lines} lines"


class TestSpecPublicNames:
    """provider.stackconfig and its dialects re-export their public names, sorted and resolvable."""

    @pytest.mark.parametrize(
        "package",
        ["provider.stackconfig", "provider.stackconfig.study", "provider.stackconfig.legacy"],
    )
    def test_all_is_sorted_and_resolves(self, package: str) -> None:
        """``__all__`` is sorted (constants, classes, functions) and each name resolves."""
        module = importlib.import_module(package)
        names = module.__all__
        assert names == sorted(names, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
        for name in names:
            assert getattr(module, name) is not None

    def test_spec_names_are_pinned(self) -> None:
        """The names other code imports from provider.stackconfig are exactly these."""
        import provider.stackconfig

        assert provider.stackconfig.__all__ == [
            "DEFAULT_WAIT_TIMEOUT_S",
            "JOBS_KEY",
            "PLATFORM_KEY",
            "PROVIDER_LABEL_KEYS",
            "SECRET_PLACEHOLDER",
            "STUDY_KEY",
            "Accelerator",
            "Disk",
            "JobConfig",
            "JobSpec",
            "PythonPackage",
            "Scheduling",
            "SecretValue",
            "StackSettings",
            "WaitPolicy",
            "WorkerPool",
            "load_stack_file",
            "parse_duration",
            "parse_job",
            "parse_stack",
            "parse_stack_settings",
            "read_stack_file",
        ]
