"""What Google's registry (``catalog.registry``'s snapshot) adds to the image lookups of
``catalog.images``, over its rows: the images only the registry shows (``registry_only``)
and why a version it does not hold is refused (``not_held``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Protocol

from vertex_training.catalog import registry


class Row(Protocol):
    """What these functions read of a row of the image table."""

    @property
    def framework(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def python(self) -> str: ...
    @property
    def kinds(self) -> frozenset[str]: ...
    @property
    def name(self) -> str: ...


def registry_only(
    snapshot: registry.RegistrySnapshot, table: Sequence[Row]
) -> Iterator[registry.ImageName]:
    """The images the registry holds and ``table`` lacks, each with its Python: a name
    without one (``sklearn-cpu.1-7``, as Google names scikit-learn's) runs the Python of
    the newest table row of its framework and kind."""
    listed = {row.name for row in table}
    for name in snapshot.names():
        parsed = registry.parse_name(name)
        if name in listed or parsed is None:
            continue
        same = (r for r in table if r.framework == parsed.framework and parsed.kind in r.kinds)
        python = parsed.python or next((r.python for r in same), None)
        if python is not None:
            yield registry.ImageName(parsed.framework, parsed.version, parsed.kind, python, name)


def not_held(
    snapshot: registry.RegistrySnapshot,
    rows: Iterable[Row],
    wanted: registry.ImageName,
    *,
    location: str,
    running: set[str],
    label: str,
) -> str | None:
    """Why ``wanted`` (its framework, version, kind and Python, None for any) is refused
    when the registry does not hold it in ``location``, naming the nearest versions it
    holds for that framework, kind and Python among the ``running`` ones; None when held."""
    held = [
        row
        for row in rows
        if row.framework == wanted.framework
        and wanted.kind in row.kinds
        and snapshot.holds(row.name, location)
    ]
    python = wanted.python
    if any(r.version == wanted.version and python in (None, r.python) for r in held):
        return None
    held = [r for r in held if r.version in running]
    same_python = [r for r in held if python in (None, r.python)]
    nearest = sorted(
        {r.version for r in same_python or held},
        key=lambda v: (registry.version_distance(v, wanted.version), _descending(v)),
    )[:3]
    kind = wanted.kind.upper()
    for_python = f" for Python {python}" if python and same_python else ""
    holds = (
        f"the nearest versions it holds for {kind}{for_python}: "
        f"{', '.join(sorted(nearest, key=_descending))}"
        if nearest
        else f"it holds no {label} {kind} image Vertex AI still runs in {location}"
    )
    wrote = f"{label} {wanted.version} {kind}" + (f" (Python {python})" if python else "")
    return (
        f"{snapshot.describe()} holds no {wrote} prebuilt training image in {location}; "
        f"{holds}. Write one of those, or refresh the snapshot (`make images`) if Google "
        "published it since"
    )


def _descending(version: str) -> list[int]:
    return [-int(part) for part in version.split(".")]
