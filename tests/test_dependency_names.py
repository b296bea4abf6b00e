"""The package uses only public names of its dependencies: a release of the Pulumi SDK (or
of a Google library) may move or drop a private name without notice, and a pin bump would
then break the plugin or the dynamic providers with no deprecation to warn of it.

The tests read every import and every dotted attribute of a dependency's module in the
package's sources, and check that none names anything private (a segment that starts
with an underscore) and that each resolves in the pinned releases installed here: a
public name that moves fails here, before a user's `pulumi up` does."""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.engine import REPO

PACKAGE = REPO / "provider" / "vertex_training"
#: The modules the package is made of, and what importing the package's parts needs of
#: Python itself: neither is a dependency.
OWN = {"vertex_training"}
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


@dataclass(frozen=True)
class Use:
    """One dotted name of a dependency, where the package uses it."""

    name: str
    where: str

    @property
    def private(self) -> bool:
        return any(
            part.startswith("_") and not part.startswith("__") for part in self.name.split(".")
        )


def dependency(name: str) -> bool:
    top = name.split(".", maxsplit=1)[0]
    return top not in OWN and top not in STDLIB


def dotted(node: ast.expr) -> tuple[str, list[str]] | None:
    """The bare name an attribute chain starts from and its attributes, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not parts:
        return None
    return node.id, list(reversed(parts))


def uses_in(path: Path) -> Iterator[Use]:
    tree = ast.parse(path.read_text(), filename=str(path))
    where = str(path.relative_to(REPO))
    # What a module's names bind of a dependency (`import pulumi.runtime` binds `pulumi`,
    # `import pulumi_gcp as gcp` binds `gcp`, `from pulumi import dynamic` binds
    # `dynamic`): attribute chains on them are the dependency's names too.
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if dependency(alias.name):
                    yield Use(alias.name, f"{where}:{node.lineno}")
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".", maxsplit=1)[0]
                        bound[top] = top
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and node.module
            and dependency(node.module)
        ):
            for alias in node.names:
                yield Use(f"{node.module}.{alias.name}", f"{where}:{node.lineno}")
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
            chain = dotted(node)
            if chain and chain[0] in bound:
                yield Use(".".join([bound[chain[0]], *chain[1]]), f"{where}:{node.lineno}")


def all_uses() -> list[Use]:
    return [use for path in sorted(PACKAGE.rglob("*.py")) for use in uses_in(path)]


def resolve(name: str) -> object:
    """The object ``name`` names: the longest importable module, then attributes."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            found: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            found = getattr(found, attribute)
        return found
    raise ImportError(name)


USES = all_uses()


def test_the_sources_are_read() -> None:
    """The reading finds the names the plugin is served with (a reading that found nothing
    would pass the checks below)."""
    names = {use.name for use in USES}
    assert "pulumi.provider.experimental.server.ProviderServicer" in names
    assert "pulumi.runtime.proto.provider_pb2_grpc" in names
    assert "pulumi.runtime.is_dry_run" in names


def test_no_private_name_of_a_dependency() -> None:
    private = sorted(f"{use.where}: {use.name}" for use in USES if use.private)
    assert not private, "private names of dependencies:\n" + "\n".join(private)


@pytest.mark.parametrize("name", sorted({use.name for use in USES}))
def test_each_public_name_resolves_in_the_pinned_releases(name: str) -> None:
    """A name the package uses is there in the releases requirements.txt pins."""
    try:
        resolve(name)
    except (ImportError, AttributeError) as exc:
        where = ", ".join(use.where for use in USES if use.name == name)
        pytest.fail(f"{name} (used at {where}) does not resolve: {exc}")
