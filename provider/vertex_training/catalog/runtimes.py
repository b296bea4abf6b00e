"""Legacy AI Platform Training runtime versions -> the TensorFlow image replacing each
(``pick_runtime_image``): the rules of ``vertex_training.catalog.images`` applied to
``LEGACY_RUNTIMES``."""

from __future__ import annotations

import datetime

from vertex_training.catalog._runtime_rows import LEGACY_RUNTIMES, LegacyRuntime
from vertex_training.catalog.images import (
    ImageChoice,
    ImageRefusal,
    PrebuiltImage,
    _check_dates,
    _none_available,
    _version_key,
    available_versions,
    catalogue,
)


def _runtime_alternatives(kind: str, today: datetime.date) -> str:
    """Runtime versions whose image Vertex AI still runs, or what to write when none is."""
    running = [
        r.runtime_version
        for r in LEGACY_RUNTIMES.values()
        if any(
            i.framework == "tensorflow"
            and i.version == r.tensorflow
            and kind in i.kinds
            and today <= i.end_of_availability
            for i in catalogue()
        )
    ]
    if running:
        return f"runtime versions whose image Vertex AI still runs: {', '.join(running)}"
    versions = available_versions("tensorflow", kind, today)
    if versions:
        return (
            f"no runtime version has a {kind.upper()} image Vertex AI still runs: replace "
            f'runtime_version with framework: {{name: tensorflow, version: "{versions[0]}"}} '
            f"(TensorFlow versions with one: {', '.join(versions)})"
        )
    return f"no runtime version's image is still available on {today}: " + _none_available(
        "tensorflow", kind, today, "runtime"
    )


def _runtime_images(
    runtime_version: str, kind: str, today: datetime.date
) -> tuple[LegacyRuntime, list[PrebuiltImage]] | ImageRefusal:
    """A runtime version's row and its TensorFlow ``kind`` images, or why it has none."""
    runtime = LEGACY_RUNTIMES.get(runtime_version)
    if runtime is None:
        return ImageRefusal(
            "runtime_version",
            f"AI Platform runtime version {runtime_version} has no Vertex AI prebuilt image; "
            f"{_runtime_alternatives(kind, today)}",
        )
    images = [
        i
        for i in catalogue()
        if i.framework == "tensorflow" and i.version == runtime.tensorflow and kind in i.kinds
    ]
    if not images:
        return ImageRefusal(
            "runtime_version",
            f"runtime version {runtime_version} maps to TensorFlow {runtime.tensorflow}, which "
            f"has no {kind.upper()} prebuilt training image on Vertex AI; "
            f"{_runtime_alternatives(kind, today)}",
        )
    return runtime, images


def pick_runtime_image(
    runtime_version: str,
    python_version: str | None,
    *,
    kind: str,
    region: str,
    today: datetime.date,
) -> ImageChoice | ImageRefusal:
    """The prebuilt image that replaces an AI Platform Training runtime version.

    Refusals concern ``runtime_version`` or ``python_version``. The choice always carries
    a warning that the runtime's scikit-learn and XGBoost now have images of their own.
    """
    found = _runtime_images(runtime_version, kind, today)
    if isinstance(found, ImageRefusal):
        return found
    runtime, images = found
    # Retired first: a Python suggested for a retired runtime would be refused next.
    newest = max(images, key=lambda i: _version_key(i.python))
    retired = _check_dates(newest, kind, today, advice="runtime")
    if isinstance(retired, ImageRefusal):
        return ImageRefusal(
            "runtime_version",
            f"runtime version {runtime_version} maps to the {newest.name} image: {retired.message}",
            retired=retired.retired,
        )
    offered = sorted({i.python for i in images}, key=_version_key, reverse=True)
    python = python_version or runtime.default_python
    if python not in runtime.pythons:
        usable = [p for p in runtime.pythons if p in offered]
        return ImageRefusal(
            "python_version",
            f"runtime version {runtime_version} offered Python {' or '.join(runtime.pythons)}, "
            f"not {python}; Vertex AI's image runs Python {' or '.join(usable or offered)}: "
            "write that",
        )
    by_python = [i for i in images if i.python == python]
    if not by_python:
        unset = " (its default when pythonVersion is not set)" if python_version is None else ""
        return ImageRefusal(
            "python_version",
            f"runtime version {runtime_version} ran Python {python}{unset}, and Vertex AI's "
            f"TensorFlow {runtime.tensorflow} {kind.upper()} image runs Python "
            f'{" or ".join(offered)}: write python_version: "{offered[0]}" once the trainer '
            "runs on it",
        )
    image = by_python[0]
    dates = _check_dates(image, kind, today, advice="runtime")
    if isinstance(dates, ImageRefusal):
        return ImageRefusal(
            "runtime_version",
            f"runtime version {runtime_version} maps to the {image.name} image: {dates.message}",
            retired=dates.retired,
        )
    notes = [
        f"runtime version {runtime_version} runs on the {image.label} image {image.name}; "
        "the runtime also bundled scikit-learn and XGBoost, which have images of their own "
        "on Vertex AI: a trainer built on them should say framework: {name: sklearn | "
        "xgboost, version: ...} instead",
    ]
    if runtime.tensorflow != runtime_version:
        notes.append(f"runtime version {runtime_version}: {runtime.reasoning}")
    return ImageChoice(uri=image.uri(region), image=image, warnings=(*notes, *dates))
