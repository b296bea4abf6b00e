"""The package's layout: no import cycles, modules of a readable size, pinned public names."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The package: provider/ is the distribution, vertex_training/ in it the import package.
DIST = REPO / "provider"
PACKAGE = DIST / "vertex_training"
#: Modules allowed past MAX_MODULE_LINES, and why: one coherent class or table.
LONG_MODULES: dict[str, str] = {}
MAX_MODULE_LINES = 800


def module_name(path: Path) -> str:
    parts = path.relative_to(DIST).with_suffix("").parts
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
            # `from vertex_training.stackconfig import legacy` imports the module
            # vertex_training.stackconfig.legacy; `... import parse_job`, the package.
            for alias in node.names:
                found.add(sub if (sub := f"{base}.{alias.name}") in MODULES else base)
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


#: The layers of the package, lowest first: a module may import its own package and the
#: packages of lower layers, never a higher layer nor another package of its own layer.
LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "vertex_training._moved",
        "vertex_training.backend_kinds",
        "vertex_training.errors",
        "vertex_training.keys",
        "vertex_training._exports",
        "vertex_training._version",
        "vertex_training.urns",
    ),
    ("vertex_training.credentials",),
    ("vertex_training.api",),
    ("vertex_training.catalog",),
    ("vertex_training.packaging",),
    ("vertex_training.stackconfig",),
    ("vertex_training.backends", "vertex_training.testing"),
    ("vertex_training.review",),
    ("vertex_training.orphans",),
    ("vertex_training.resources",),
    ("vertex_training.models",),
    ("vertex_training.program",),
    ("vertex_training.plugin",),
    ("vertex_training.preview",),
    ("vertex_training.__main__",),
    # The package's public names (its __init__): every layer's, re-exported.
    ("vertex_training",),
)


def unit_of(name: str) -> str | None:
    """The entry of LAYERS that holds module ``name`` (the longest that matches)."""
    units = [u for layer in LAYERS for u in layer if name == u or name.startswith(f"{u}.")]
    return max(units, key=len) if units else None


def layer_of(name: str) -> int | None:
    unit = unit_of(name)
    return next(i for i, layer in enumerate(LAYERS) if unit in layer) if unit else None


def may_import(name: str, target: str) -> bool:
    """Whether module ``name`` may import module ``target``."""
    here, there = layer_of(name), layer_of(target)
    if here is None or there is None:
        return False
    return there < here or unit_of(name) == unit_of(target)


def owner_of(dotted: str) -> str:
    """The package a private module or name belongs to: the package that holds it
    (``vertex_training.stackconfig._issues.x`` and ``vertex_training.api.labels._x`` ->
    their package)."""
    parts = dotted.split(".")
    first = next(i for i, part in enumerate(parts) if part.startswith("_") and i > 0)
    holder = ".".join(parts[:first])
    if holder in MODULES and MODULES[holder].name != "__init__.py":
        return holder.rpartition(".")[0]  # a private name of a module: its package
    return holder


def private_imports(name: str) -> list[str]:
    """The private modules and names ``name`` imports, as dotted paths (dunder names such
    as ``__future__`` are not private)."""
    path = MODULES[name]
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                dotted = f"{node.module}.{alias.name}"
                parts = dotted.split(".")
                private = [p for p in parts[1:] if p.startswith("_") and not p.startswith("__")]
                if dotted.startswith("vertex_training.") and private:
                    found.append(dotted)
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
        """Only vertex_training.stackconfig._parse (the entry) imports the study and legacy
        dialects."""
        dialects = ("vertex_training.stackconfig.study", "vertex_training.stackconfig.legacy")
        core = [
            name
            for name in MODULES
            if name.startswith("vertex_training.stackconfig._")
            and name != "vertex_training.stackconfig._parse"
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


class TestLayers:
    """Each layer of provider/ imports only the layers below it (docs/layout.md)."""

    def test_imports_point_down(self) -> None:
        """No module imports a module of its own layer's other packages or of a higher layer."""
        wrong = [
            f"{name} imports {target}"
            for name in MODULES
            for target in sorted(imported_modules(name))
            if not may_import(name, target)
        ]
        assert wrong == []

    def test_every_module_has_a_layer(self) -> None:
        """A new package or top-level module is placed in LAYERS before it is used."""
        assert [name for name in MODULES if layer_of(name) is None] == []

    def test_the_layer_check_can_fail(self) -> None:
        """An upward import and a sideways one are refused; a downward one is not."""
        assert not may_import("vertex_training.catalog.images", "vertex_training.stackconfig._job")
        assert not may_import("vertex_training.backends.vertex", "vertex_training.testing._jobs")
        assert may_import("vertex_training.review.plan", "vertex_training.stackconfig._job")


def documented_modules(text: str) -> list[str]:
    """The ``provider/`` files the tree in docs/layout.md lists (indentation: 2 a level)."""
    block = text.split("```\n")[1]
    found: list[str] = []
    folders: list[str] = []
    for line in block.splitlines():
        name = line.strip().split(" ")[0]
        depth = (len(line) - len(line.lstrip(" "))) // 2
        folders = folders[:depth]
        if name.endswith("/"):
            folders.append(name.rstrip("/"))
        elif folders and folders[0] == "provider" and name.endswith(".py"):
            found.append("/".join([*folders, name]))
    return found


#: The backends' names (``vertex_training.backend_kinds.BACKENDS``), which only the backends
#: themselves and their descriptors compare.
BACKEND_NAMES = frozenset({"vertex", "local"})
#: Where a backend's name may be compared: the backends, and the descriptors' own module.
BACKEND_HOMES = ("vertex_training.backends", "vertex_training.backend_kinds")


def backend_comparisons(source: str) -> list[int]:
    """The lines of ``source`` that compare a value with a backend's name: ``==``, ``!=``,
    ``in``, ``not in`` with the name as a literal on either side or in a literal tuple,
    list or set."""

    def names_a_backend(node: ast.expr) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in BACKEND_NAMES
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(names_a_backend(item) for item in node.elts)
        return False

    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Compare)
        and any(names_a_backend(side) for side in [node.left, *node.comparators])
    ]


class TestBackendsAsData:
    """What differs between backends is a descriptor's field: no code outside the
    backends compares a job's backend with a name (docs/layout.md, backend_kinds.py)."""

    def test_no_backend_name_is_compared_outside_the_backends(self) -> None:
        found = {
            name: lines
            for name, path in MODULES.items()
            if not name.startswith(BACKEND_HOMES)
            and (lines := backend_comparisons(path.read_text(encoding="utf-8")))
        }
        assert found == {}, "ask vertex_training.backend_kinds.kind_of(name) instead"

    def test_the_comparison_finder_can_fail(self) -> None:
        text = (
            'if job.backend == "local":\n    pass\n'
            'x = kind in ("vertex", "other")\n'
            "y = job.backend != other\n"
            'z = f(module="vertex")\n'
        )
        assert backend_comparisons(text) == [1, 3]


class TestLayoutDoc:
    """docs/layout.md shows the tree as it is."""

    def test_every_module_is_listed_once(self) -> None:
        """The tree lists exactly the modules of ``find provider -name '*.py'``."""
        listed = documented_modules((REPO / "docs" / "layout.md").read_text(encoding="utf-8"))
        present = sorted(path.relative_to(REPO).as_posix() for path in PACKAGE.rglob("*.py"))
        assert sorted(listed) == present
        assert len(listed) == len(set(listed))

    def test_the_reader_can_fail(self) -> None:
        """A nested module is read with its folders; a file outside provider/ is not."""
        text = "```\nprovider/   p\n  a/   x\n    b.py   y\n  c.py  z\nother.py  w\n```\n"
        assert documented_modules(text) == ["provider/a/b.py", "provider/c.py"]


class TestPrivateNames:
    """Nobody outside a package imports its private modules or private names."""

    def test_no_private_import_across_packages(self) -> None:
        """``from P._m import x`` and ``from P.m import _x`` only inside package P."""
        found = [
            f"{name}: {imported}"
            for name in MODULES
            for imported in private_imports(name)
            if not (name == owner_of(imported) or name.startswith(f"{owner_of(imported)}."))
        ]
        assert found == []

    def test_the_private_check_can_fail(self) -> None:
        """The owner of a private name is the package that holds its module."""
        assert (
            owner_of("vertex_training.stackconfig._issues.did_you_mean")
            == "vertex_training.stackconfig"
        )
        assert owner_of("vertex_training.api.labels._label_text_ok") == "vertex_training.api"
        assert (
            owner_of("vertex_training.backends.local._record.JobRecord")
            == "vertex_training.backends.local"
        )


class TestPublicNames:
    """vertex_training.stackconfig and its dialects re-export their public names, sorted and
    resolvable."""

    @pytest.mark.parametrize(
        "package",
        [
            "vertex_training.stackconfig",
            "vertex_training.stackconfig.study",
            "vertex_training.stackconfig.legacy",
        ],
    )
    def test_all_is_sorted_and_resolves(self, package: str) -> None:
        """``__all__`` is sorted (constants, classes, functions) and each name resolves."""
        module = importlib.import_module(package)
        names = module.__all__
        assert names == sorted(names, key=lambda n: (not n.isupper(), not n[0].isupper(), n))
        for name in names:
            assert getattr(module, name) is not None
