"""Vertex AI prebuilt training images: which image runs a framework version, and until when.

This module is data plus the lookups over it. ``vertex_training.stackconfig`` asks it for the image
of
a job that names a ``framework`` (or a legacy ``runtime_version``) instead of an image;
nothing here knows the stack config's shape.

Sources (``SOURCES``; every row of ``TRAINING_IMAGES`` names the page it was read from and
the day, ``PrebuiltImage.source``):

- Google Cloud docs, "Prebuilt containers for serverless training" (the page formerly
  "Prebuilt containers for custom training" under cloud.google.com/vertex-ai/docs, now
  under the product's new name: ``CATALOGUE_URL``), read on 2026-11-23: every row, each
  compared field by field (image name, Python, accelerators, both dates). Its newest
  images are TensorFlow 2.17, PyTorch 2.4, scikit-learn 1.6 and XGBoost 2.1; its Ray
  images (for Ray clusters on Vertex AI, not custom-job frameworks) are not catalogued.
  Earlier readings: the former page on 2026-11-21, and the "Supported frameworks list"
  page on 2026-11-23; neither differed.

Compiled on ``CATALOGUE_DATE`` (2026-11-23). Which rows are verified, which estimated:

- Verified (``PrebuiltImage.verified``): every row of ``TRAINING_IMAGES``. Image names,
  Python versions, CPU/GPU/TPU availability, "End of patch and support date" and "End
  of availability" are copied from the page. One judgement call: the page lists the
  PyTorch 2.1 TPU image as "Python 3.8" while its name says ``cp310``; the row follows the
  name (3.10).
- Estimated: a framework version *newer* than the newest row of that framework is not
  refused: its image name is built from the naming pattern of the newest row
  (``<framework>-<cpu|gpu>.<MAJOR>-<MINOR>[.pyXYZ]``, VERTEX-NOTES) and the job gets a
  warning that the image and its dates are not in this catalogue. No dates are guessed.

Rules (``pick_image``; ``check_named_image`` for an image a job names by URI), as Vertex
AI applies them (its framework support policy: no new image versions after the end of
patch and support date; the images can no longer be used after the end of availability):
past its end of availability a version is refused, naming that date and the nearest
version Vertex AI still runs (``nearest_available``); past its end of support it is
accepted with a warning naming the date and the newest supported version
(``newest_supported``); within ``WARN_BEFORE_END_OF_SUPPORT_DAYS`` of it, warned.
A catalogue compiled more than ``CATALOGUE_MAX_AGE_MONTHS`` months before ``today`` is
warned about (``catalogue_age_warning``): Google may have published versions since.
``today`` is injectable so that tests and ``vertex-training convert --today`` are
stable.

Legacy AI Platform Training runtime versions (``LEGACY_RUNTIMES``, picked by
``catalog.runtimes``) map to the TensorFlow image of the same version and Python (the
framework a runtime version was named after), with the reasoning per row. A runtime
version whose image Vertex AI no longer runs is refused the same way, advising
``framework: {name: tensorflow, version: ...}`` instead.

Registry host by region, and which URIs name a prebuilt image: ``catalog.image_uris``.

With a snapshot of Google's registry (``catalog.registry``, ``prices/images.json``), the
registry decides which images exist: ``catalogue`` adds an undated row for each image it
holds that the table lacks, and a version it does not hold in the registry location of
the job's region is refused naming the nearest versions it holds (``_held``). The table
keeps the dates. Legacy runtime versions: ``catalog.runtimes``.

A project adds rows of its own (a version Google published after this catalogue was
compiled, or corrected dates) in the stack config key ``vertex-training:images``, each with
its page and the day it was read (``vertex_training.stackconfig``): while a stack's jobs
are read, ``project_rows`` puts them before the package's rows (``catalogue``).
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from vertex_training.catalog import registry
from vertex_training.catalog._held import not_held, registry_only
from vertex_training.catalog._image_rows import ROWS
from vertex_training.catalog._runtime_rows import LEGACY_RUNTIMES, LegacyRuntime
from vertex_training.catalog.image_uris import (
    IMAGE_PATH,
    IMAGE_TAG,
    PREBUILT_PREDICTION_PATHS,
    PREBUILT_TRAINING_PATHS,
    is_prediction_image,
    prebuilt_image_name,
    registry_host,
    registry_location,
)

__all__ = [
    "CATALOGUE_DATE",
    "CATALOGUE_MAX_AGE_MONTHS",
    "CATALOGUE_SOURCE",
    "CPU",
    "FRAMEWORK_NAMES",
    "GPU",
    "LEGACY_RUNTIMES",
    "PREBUILT_PREDICTION_PATHS",
    "PREBUILT_TRAINING_PATHS",
    "PROJECT_ROWS_KEY",
    "SOURCES",
    "TPU",
    "TRAINING_IMAGES",
    "VERSION_PLACEHOLDER",
    "WARN_BEFORE_END_OF_SUPPORT_DAYS",
    "ImageChoice",
    "ImageRefusal",
    "LegacyRuntime",
    "PrebuiltImage",
    "Source",
    "available_versions",
    "catalogue",
    "catalogue_age_warning",
    "catalogued_image",
    "check_named_image",
    "is_prediction_image",
    "nearest_available",
    "newest_supported",
    "pick_image",
    "prebuilt_image_name",
    "project_rows",
    "registry_host",
    "supported_versions",
]

CATALOGUE_SOURCE: Final = "Google Cloud docs: Prebuilt containers for serverless training"
CATALOGUE_URL: Final = (
    "https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/"
    "training/pre-built-containers"
)
#: The day the rows were last compiled from the sources (``SOURCES``).
CATALOGUE_DATE: Final = "2026-11-23"
#: A catalogue older than this (months before ``today``) is warned about at preview.
CATALOGUE_MAX_AGE_MONTHS: Final = 6

#: A version this close to its end of support is accepted with a warning.
WARN_BEFORE_END_OF_SUPPORT_DAYS: Final = 90

#: Accelerator kinds an image serves.
CPU: Final = "cpu"
GPU: Final = "gpu"
TPU: Final = "tpu"
KINDS: Final = (CPU, GPU, TPU)

#: ``framework.name`` values -> the framework's name in messages.
FRAMEWORK_NAMES: Mapping[str, str] = MappingProxyType(
    {
        "tensorflow": "TensorFlow",
        "pytorch": "PyTorch",
        "sklearn": "scikit-learn",
        "xgboost": "XGBoost",
    }
)

_VERSION_RE = re.compile(r"(?P<major>\d+)\.(?P<minor>\d+)")
_PYTHON_RE = re.compile(r"3\.\d+")


# ------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Source:
    """A page rows were read from, and the day they were read."""

    title: str
    url: str
    read_on: datetime.date

    def __str__(self) -> str:
        return f"{self.title} ({self.url}, read {self.read_on})"


#: The pages the rows come from.
SOURCES: Mapping[str, Source] = MappingProxyType(
    {"pre-built-containers": Source(CATALOGUE_SOURCE, CATALOGUE_URL, datetime.date(2026, 11, 23))}
)


@dataclass(frozen=True)
class PrebuiltImage:
    """One prebuilt training image: a framework version for one Python and accelerator set."""

    framework: str
    #: MAJOR.MINOR; the image carries the latest patch of it.
    version: str
    python: str
    #: The accelerator kinds it runs on (CPU, GPU, TPU).
    kinds: frozenset[str]
    #: The image's name under ``<host>/vertex-ai/training/``, without the tag.
    name: str
    #: "End of patch and support date": no more patches; warned after it.
    end_of_support: datetime.date
    #: "End of availability": Vertex AI no longer runs it; refused after it.
    end_of_availability: datetime.date
    #: Where and when the row was read (None for an estimated image).
    source: Source | None = None
    verified: bool = True
    #: Held by Google's registry (``catalog.registry``) and absent from the table: it
    #: exists, its dates are unknown.
    from_registry: bool = False

    def uri(self, region: str) -> str:
        """The image URI on the registry host that serves ``region`` (by digest when the
        registry's snapshot shows no ``latest`` tag for it there)."""
        snapshot = registry.active()
        held = snapshot.holds(self.name, registry_location(region)) if snapshot else None
        return held.uri if held else f"{registry_host(region)}/{IMAGE_PATH}/{self.name}:{IMAGE_TAG}"

    @property
    def label(self) -> str:
        """'TensorFlow 2.17 (Python 3.10)'."""
        return f"{FRAMEWORK_NAMES[self.framework]} {self.version} (Python {self.python})"


def _image(row: tuple[str, str, str, str, str, str, str]) -> PrebuiltImage:
    framework, version, python, kinds, name, end_of_support, end_of_availability = row
    return PrebuiltImage(
        source=SOURCES["pre-built-containers"],
        framework=framework,
        version=version,
        python=python,
        kinds=frozenset(kinds.split("+")),
        name=name,
        end_of_support=datetime.date.fromisoformat(end_of_support),
        end_of_availability=datetime.date.fromisoformat(end_of_availability),
    )


TRAINING_IMAGES: tuple[PrebuiltImage, ...] = tuple(_image(row) for row in ROWS)

#: The stack config key whose rows a project adds to the catalogue (``project_rows``).
PROJECT_ROWS_KEY: Final = "vertex-training:images"
#: How a user adds a row, for messages.
ADD_A_ROW: Final = (
    f"add the image's row, read from that page, to the stack config key {PROJECT_ROWS_KEY} "
    "(docs/images.md)"
)
#: The rows the stack being read adds (``project_rows``): one value per thread (the
#: provider host checks jobs of one stack on four threads).
_PROJECT_ROWS: ContextVar[tuple[PrebuiltImage, ...]] = ContextVar("project_rows", default=())


@contextmanager
def project_rows(rows: Sequence[PrebuiltImage]) -> Iterator[None]:
    """Within the block, the catalogue holds ``rows`` too: a project's own rows (the
    stack config's ``vertex-training:images``) beside the package's, and before them:
    a row of the same image name replaces the package's."""
    token = _PROJECT_ROWS.set(tuple(rows))
    try:
        yield
    finally:
        _PROJECT_ROWS.reset(token)


def catalogue() -> tuple[PrebuiltImage, ...]:
    """The rows lookups read: the project's (``project_rows``), then the package's, then
    an undated row for each image Google's registry holds (its snapshot,
    ``registry.active``) that neither has."""
    own = _PROJECT_ROWS.get()
    snapshot = registry.active()
    key = (own, id(snapshot))
    cached = _CATALOGUES.get(key)
    if cached is not None and cached[0] is snapshot:
        return cached[1]
    names = {image.name for image in own}
    rows = (*own, *(image for image in TRAINING_IMAGES if image.name not in names))
    if snapshot is not None:
        rows = (*rows, *(_registry_row(found) for found in registry_only(snapshot, rows)))
    if len(_CATALOGUES) > _CATALOGUES_KEPT:
        _CATALOGUES.clear()
    _CATALOGUES[key] = (snapshot, rows)
    return rows


_CATALOGUES: dict[tuple[object, int], tuple[object, tuple[PrebuiltImage, ...]]] = {}
_CATALOGUES_KEPT = 64


# ------------------------------------------------------------------------------ the lookups


@dataclass(frozen=True)
class ImageChoice:
    """The image a job gets, and warnings (without a config key) about it."""

    uri: str
    image: PrebuiltImage
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ImageRefusal:
    """No image: ``field`` is the input at fault (name, version, python, runtime_version)."""

    field: str
    message: str
    #: Refused only because Vertex AI no longer runs the image (its end of availability).
    retired: bool = False


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _versions(framework: str, kind: str | None = None) -> list[str]:
    """Catalogued versions of a framework (newest first), optionally only for one kind."""
    found = {
        image.version
        for image in catalogue()
        if image.framework == framework and (kind is None or kind in image.kinds)
    }
    return sorted(found, key=_version_key, reverse=True)


def supported_versions(framework: str, kind: str, today: datetime.date) -> list[str]:
    """Versions (newest first) with a ``kind`` image still before its end of support."""
    found = {
        image.version
        for image in catalogue()
        if image.framework == framework and kind in image.kinds and today <= image.end_of_support
    }
    return sorted(found, key=_version_key, reverse=True)


def available_versions(framework: str, kind: str, today: datetime.date) -> list[str]:
    """Versions (newest first) with a ``kind`` image Vertex AI still runs on ``today``."""
    found = {
        image.version
        for image in catalogue()
        if image.framework == framework
        and kind in image.kinds
        and today <= image.end_of_availability
    }
    return sorted(found, key=_version_key, reverse=True)


def newest_supported(framework: str, kind: str, today: datetime.date) -> PrebuiltImage | None:
    """The newest ``kind`` image of ``framework`` still before its end of support."""
    versions = supported_versions(framework, kind, today)
    return _newest_image(framework, versions[0], kind) if versions else None


def nearest_available(
    framework: str, version: str, kind: str, today: datetime.date
) -> PrebuiltImage | None:
    """The ``kind`` image to move ``version`` to: the oldest available version newer than
    it (the smallest step forward), else the newest available one older than it."""
    available = available_versions(framework, kind, today)
    newer = [v for v in available if _version_key(v) > _version_key(version)]
    older = [v for v in available if _version_key(v) < _version_key(version)]
    chosen = newer[-1] if newer else (older[0] if older else None)
    return _newest_image(framework, chosen, kind) if chosen is not None else None


def _newest_image(framework: str, version: str, kind: str) -> PrebuiltImage:
    """The ``kind`` image of a catalogued version with the newest Python."""
    rows = [
        i
        for i in catalogue()
        if i.framework == framework and i.version == version and kind in i.kinds
    ]
    return max(rows, key=lambda i: _version_key(i.python))


#: What a refusal advises writing: ``framework.version``, ``framework:`` instead of a legacy
#: ``runtime_version``, or another image URI instead of the one the job names.
Advice = Literal["framework", "runtime", "image"]


def _none_available(framework: str, kind: str, today: datetime.date, advice: Advice) -> str:
    """Why the catalogue names no version to move to, what to write, and where to look."""
    name = FRAMEWORK_NAMES[framework]
    versions = _versions(framework, kind)
    newest = _newest_image(framework, versions[0], kind) if versions else None
    ended = (
        f" (the newest catalogued, {newest.version}, ended on {newest.end_of_availability})"
        if newest is not None
        else ""
    )
    if advice == "image":
        return (
            f"no catalogued {name} {kind.upper()} image is still available on {today}{ended}: "
            f"name a prebuilt image Vertex AI still runs ({CATALOGUE_URL}; this package's "
            f"catalogue was compiled {CATALOGUE_DATE}: {ADD_A_ROW}), or a container of your "
            "own that carries the framework version the trainer needs"
        )
    how = (
        f"replace runtime_version with framework: {{name: {framework}, version: ...}} "
        "naming a version Vertex AI still runs"
        if advice == "runtime"
        else "write a version Vertex AI still runs"
    )
    return (
        f"no catalogued {name} {kind.upper()} image is still available on {today}{ended}: "
        f"{how}, from {CATALOGUE_URL} (this package's catalogue was compiled "
        f"{CATALOGUE_DATE}: {ADD_A_ROW}), or give image / executor_image directly"
    )


def _move_to(
    image: PrebuiltImage, kind: str, today: datetime.date, advice: Advice, region: str
) -> str:
    """The advice of a refusal: the nearest version Vertex AI still runs, and how to ask."""
    name = FRAMEWORK_NAMES[image.framework]
    target = nearest_available(image.framework, image.version, kind, today)
    if target is None:
        return _none_available(image.framework, kind, today, advice)
    if advice == "runtime":
        how = (
            f"replace runtime_version with framework: {{name: {image.framework}, version: "
            f'"{target.version}"}}'
        )
    elif advice == "image":
        how = f"write {target.uri(region)}"
    else:
        how = f'write version: "{target.version}"'
    return (
        f"move to {name} {target.version}, the nearest version Vertex AI still runs "
        f"({_dates_of(target)}): {how}"
    )


def _dates_of(image: PrebuiltImage) -> str:
    """'tf-cpu.2-17.py310 until 2026-07-11, supported until 2025-07-11', or, for an image
    only the registry shows, that its dates are not known here."""
    if image.from_registry:
        return f"{image.name}, in Google's registry; its dates are not in this package's table"
    return f"{image.name} until {image.end_of_availability}, supported until {image.end_of_support}"


def _newest_supported_note(image: PrebuiltImage, kind: str, today: datetime.date) -> str:
    """The newest version still supported, or why the catalogue has none."""
    name = FRAMEWORK_NAMES[image.framework]
    newest = newest_supported(image.framework, kind, today)
    if newest is not None:
        return f"the newest supported {name} version is {newest.version} ({_dates_of(newest)})"
    return (
        f"no catalogued {name} {kind.upper()} image is still supported on {today}; newer "
        f"versions: {CATALOGUE_URL} (catalogue compiled {CATALOGUE_DATE})"
    )


def _check_dates(
    image: PrebuiltImage,
    kind: str,
    today: datetime.date,
    *,
    advice: Advice = "framework",
    region: str = "",
) -> ImageRefusal | tuple[str, ...]:
    """Refuse a version past its end of availability; warn past or near its end of support.

    ``advice`` says what the job wrote, so what a refusal tells it to write instead.
    """
    if today > image.end_of_availability:
        return ImageRefusal(
            "version",
            retired=True,
            message=f"{image.label} prebuilt training images reached end of availability on "
            f"{image.end_of_availability}: "
            f"Vertex AI no longer runs them (end of support was {image.end_of_support}); "
            f"{_move_to(image, kind, today, advice, region)}",
        )
    days_to_end = (image.end_of_availability - today).days
    if today > image.end_of_support:
        return (
            f"{image.label} prebuilt training images reached end of support on "
            f"{image.end_of_support} and get no more patches; Vertex AI runs them until "
            f"{image.end_of_availability} (in {days_to_end} days); "
            f"{_newest_supported_note(image, kind, today)}",
        )
    days_left = (image.end_of_support - today).days
    if days_left <= WARN_BEFORE_END_OF_SUPPORT_DAYS:
        return (
            f"{image.label} prebuilt training images reach end of support on "
            f"{image.end_of_support} (in {days_left} days; Vertex AI stops running them on "
            f"{image.end_of_availability}): plan the move to a newer version",
        )
    return ()


def catalogue_age_warning(today: datetime.date) -> str | None:
    """A warning when the registry's snapshot is older than its limit, or, without one,
    when the catalogue was compiled more than ``CATALOGUE_MAX_AGE_MONTHS`` ago."""
    snapshot = registry.active()
    if snapshot is not None:
        return snapshot.stale_warning(today)
    compiled = datetime.date.fromisoformat(CATALOGUE_DATE)
    if today <= _add_months(compiled, CATALOGUE_MAX_AGE_MONTHS):
        return None
    return (
        f"this package's catalogue of prebuilt training images was compiled on "
        f"{CATALOGUE_DATE}, more than {CATALOGUE_MAX_AGE_MONTHS} months before {today}: "
        f"Google may have published newer versions or moved dates since; check "
        f"{CATALOGUE_URL} (a row Google published since goes in the stack config key "
        f"{PROJECT_ROWS_KEY}: docs/images.md)"
    )


def _add_months(day: datetime.date, months: int) -> datetime.date:
    """``day`` plus whole months, on the last day of the month where it has no such day."""
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return datetime.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


_PY_SUFFIX_RE = re.compile(r"\.py\d+$")


def _pattern_image(
    framework: str, version: str, python: str | None, kind: str
) -> PrebuiltImage | None:
    """An unverified image for a version newer than the catalogue, named like the newest row."""
    if kind == TPU:
        return None  # TPU image names do not follow the CPU/GPU pattern
    newest = next((i for i in catalogue() if i.framework == framework and kind in i.kinds), None)
    if newest is None:
        return None
    dashed, old = version.replace(".", "-"), newest.version.replace(".", "-")
    name = newest.name.replace(f".{old}", f".{dashed}", 1)
    chosen_python = python or newest.python
    if _PY_SUFFIX_RE.search(name):
        name = _PY_SUFFIX_RE.sub(".py" + chosen_python.replace(".", ""), name)
    elif chosen_python != newest.python:
        return None  # the name carries no Python: only the newest row's Python is known
    return PrebuiltImage(
        framework=framework,
        version=version,
        python=chosen_python,
        kinds=frozenset({kind}),
        name=name,
        end_of_support=datetime.date.max,
        end_of_availability=datetime.date.max,
        verified=False,
    )


def pick_image(
    framework: str,
    version: str,
    python: str | None,
    *,
    kind: str,
    region: str,
    today: datetime.date,
) -> ImageChoice | ImageRefusal:
    """The prebuilt training image of ``framework`` ``version`` for ``kind`` in ``region``.

    ``python`` picks among the images of a version (the newest Python when ``None``).
    """
    refusal = _check_inputs(framework, version, python, kind=kind, today=today)
    if refusal is not None:
        return refusal
    images = [i for i in catalogue() if i.framework == framework and i.version == version]
    if not images:
        return _unknown_version(framework, version, python, kind=kind, region=region, today=today)
    newest = _select(images, framework, version, python=None, kind=kind, today=today)
    # A retired version is refused on its version first: a Python of it would be refused next.
    retired = newest if isinstance(newest, ImageRefusal) else _check_dates(newest, kind, today)
    if isinstance(retired, ImageRefusal):
        return retired
    image = _select(images, framework, version, python=python, kind=kind, today=today)
    if isinstance(image, ImageRefusal):
        return image
    dates = _verdict(image, kind, region, today)
    if isinstance(dates, ImageRefusal):
        return dates
    return ImageChoice(uri=image.uri(region), image=image, warnings=dates)


def _verdict(
    image: PrebuiltImage, kind: str, region: str, today: datetime.date
) -> ImageRefusal | tuple[str, ...]:
    """The dates' rules, then the registry's: refused when its snapshot lacks the image;
    warned when the table has no dates for an image only the registry shows."""
    dates = _check_dates(image, kind, today)
    if isinstance(dates, ImageRefusal):
        return dates
    wanted = registry.ImageName(image.framework, image.version, kind, image.python)
    missing = _not_held(wanted, region, today)
    if missing is not None:
        return missing
    return (*dates, _undated(image)) if image.from_registry else dates


def _registry_row(found: registry.ImageName) -> PrebuiltImage:
    """An undated row for an image only the registry shows."""
    return PrebuiltImage(
        framework=found.framework,
        version=found.version,
        python=found.python or "",
        kinds=frozenset({found.kind}),
        name=found.name,
        end_of_support=datetime.date.max,
        end_of_availability=datetime.date.max,
        verified=False,
        from_registry=True,
    )


def _not_held(wanted: registry.ImageName, region: str, today: datetime.date) -> ImageRefusal | None:
    """With a registry snapshot, the refusal of an image it does not hold for the region."""
    snapshot = registry.active()
    if snapshot is None:
        return None
    message = not_held(
        snapshot,
        catalogue(),
        wanted,
        location=registry_location(region),
        running=set(available_versions(wanted.framework, wanted.kind, today)),
        label=FRAMEWORK_NAMES[wanted.framework],
    )
    return ImageRefusal("version", message) if message is not None else None


def _undated(image: PrebuiltImage) -> str:
    """The warning for an image the registry holds and the table has no dates for."""
    snapshot = registry.active()
    seen = snapshot.describe() if snapshot is not None else "Google's registry"
    return (
        f"{image.label}: {seen} holds {image.name}, and this package's table of dates "
        f"(compiled {CATALOGUE_DATE}) has no end of support or availability for it: read "
        f"them at {CATALOGUE_URL} and {ADD_A_ROW}"
    )


#: What ``vertex-training convert`` writes as ``framework.version`` when no TensorFlow
#: version Vertex AI still runs is catalogued: the user fills it in.
VERSION_PLACEHOLDER: Final = "FILL-IN"


def _available_or_none(framework: str, kind: str, today: datetime.date) -> str:
    """The versions (newest first) Vertex AI still runs, or why there are none and what to do."""
    available = available_versions(framework, kind, today)
    if available:
        return ", ".join(available)
    return f"none still available on {today}; " + _none_available(
        framework, kind, today, "framework"
    )


def _check_inputs(
    framework: str, version: str, python: str | None, *, kind: str, today: datetime.date
) -> ImageRefusal | None:
    """Refuse a framework, version or Python that is not written as the table writes them."""
    if framework not in FRAMEWORK_NAMES:
        return ImageRefusal(
            "name", f"must be {', '.join(FRAMEWORK_NAMES)} (the frameworks with prebuilt images)"
        )
    if version == VERSION_PLACEHOLDER:
        return ImageRefusal(
            "version",
            f"a placeholder (written by vertex-training convert): "
            f"{_none_available(framework, kind, today, 'framework')}",
        )
    if _VERSION_RE.fullmatch(version) is None:
        available = available_versions(framework, kind, today)
        example = (
            f'like "{available[0]}"'
            if available
            else f"({_none_available(framework, kind, today, 'framework')})"
        )
        return ImageRefusal(
            "version",
            f"write MAJOR.MINOR, {example}; prebuilt images carry the latest patch of a version",
        )
    if python is not None and not _PYTHON_RE.fullmatch(python):
        return ImageRefusal("python", 'write the Python version as text, like "3.10"')
    return None


def _select(
    images: Sequence[PrebuiltImage],
    framework: str,
    version: str,
    *,
    python: str | None,
    kind: str,
    today: datetime.date,
) -> PrebuiltImage | ImageRefusal:
    """The image among one version's images that serves ``kind`` (and ``python``)."""
    name = FRAMEWORK_NAMES[framework]
    for_kind = [i for i in images if kind in i.kinds]
    if not for_kind:
        return ImageRefusal(
            "version",
            f"{name} {version} has no {kind.upper()} prebuilt training image; {name} versions "
            f"with one that Vertex AI still runs: {_available_or_none(framework, kind, today)}",
        )
    if python is None:
        return max(for_kind, key=lambda i: _version_key(i.python))
    for image in for_kind:
        if image.python == python:
            return image
    running = [i for i in for_kind if today <= i.end_of_availability] or for_kind
    pythons = sorted({i.python for i in running}, key=_version_key, reverse=True)
    return ImageRefusal(
        "python",
        f"{name} {version} {kind.upper()} images run Python {' or '.join(pythons)}; "
        "write one of those",
    )


def _unknown_version(
    framework: str,
    version: str,
    python: str | None,
    *,
    kind: str,
    region: str,
    today: datetime.date,
) -> ImageChoice | ImageRefusal:
    """A version with no row: estimated from the pattern if newer than all rows, else refused."""
    name = FRAMEWORK_NAMES[framework]
    known = _versions(framework)
    missing = _not_held(registry.ImageName(framework, version, kind, python), region, today)
    if missing is not None:
        return missing
    if _version_key(version) > _version_key(known[0]):
        image = _pattern_image(framework, version, python, kind)
        if image is not None:
            return ImageChoice(
                uri=image.uri(region),
                image=image,
                warnings=(
                    f"{name} {version} is newer than this package's catalogue of prebuilt "
                    f"training images (compiled {CATALOGUE_DATE}, newest {known[0]}): the image "
                    f"name {image.name} follows Google's naming pattern and its end of support "
                    f"and end of availability are unknown; check it at {CATALOGUE_URL} and "
                    f"{ADD_A_ROW}; or {registry.REFRESH_HINT}, which then decides",
                ),
            )
    return ImageRefusal(
        "version",
        f"{name} {version} has no Vertex AI prebuilt training image; versions Vertex AI still "
        f"runs: {_available_or_none(framework, kind, today)}",
    )


def catalogued_image(uri: str) -> PrebuiltImage | None:
    """The catalogue row of a prebuilt training image URI that a job names itself; None
    for any other image (a custom container, or a prebuilt one the catalogue lacks)."""
    name = prebuilt_image_name(uri)
    return next((i for i in catalogue() if i.name == name), None) if name else None


def check_named_image(
    image: PrebuiltImage, kind: str, *, region: str, today: datetime.date
) -> ImageRefusal | tuple[str, ...]:
    """``pick_image``'s date rules for a catalogued image the job names by URI: refused
    past its end of availability (advising the URI of the nearest version still run),
    warned past or near its end of support."""
    kind = kind if kind in image.kinds else min(image.kinds)
    return _check_dates(image, kind, today, advice="image", region=region)


# The legacy runtime versions' lookups read the table above: defined in their own module.
