"""Vertex AI prebuilt prediction images: which image serves a model of a framework version.

A training job that registers its model in the Vertex AI Model Registry names the model's
serving container by image URI or by ``framework: {name, version}``; this module resolves
the second form to Google's prebuilt *prediction* image, as ``catalog.images`` resolves
``framework:`` to a prebuilt *training* image, and reads the first
(``named_prediction_image``) to apply the same dates. Nothing here knows the stack
config's shape.

Source (``SOURCE``; every row of ``PREDICTION_IMAGES`` names it): Google Cloud docs,
"Prebuilt containers for inference and explanation" (``CATALOGUE_URL``; the page was
formerly at cloud.google.com/vertex-ai/docs/predictions/pre-built-containers), read on
2026-11-29 (``CATALOGUE_DATE``) whole, from a stored Markdown copy of the page whose front
matter names that address: its TensorFlow, PyTorch, scikit-learn and XGBoost tables.
Copied from it, row by row: the version, the Python where the version cell gives one
("2.4 (Python 3.9)"), the accelerator ("CPU only", "GPU (CUDA ...)", "Cloud TPU"), "End of
patch and support date", "End of availability", and the image name from the "Supported
images" cell (its us, europe and asia URIs differ only in the host). Checked against, the
same day: the beginnings of three other stored copies (the former address in English and
in Chinese, the current one in Chinese), which show TensorFlow rows 2.15 to 2.10 only. They
agree with the table but for one date: the former English copy gives TensorFlow 2.15 an end
of support of Jan 14, 2026, where the current page and its Chinese copy give July 14, 2026;
the table follows the current page.

Left empty, because the page does not give them (no value is guessed):

- ``PredictionImage.python`` for every TensorFlow row, PyTorch 1.11 and 1.12, scikit-learn
  1.0 and older, XGBoost 1.6 and older (their version cells name no Python).
- ``PredictionImage.name`` for every row whose "Supported images" cell is empty: each
  version past its end of availability on the reading day (TensorFlow 2.13 and older,
  PyTorch 2.1 and older, scikit-learn 1.3 and older, XGBoost 1.7 and older). Their dates
  are kept, so that a job naming one is told when Vertex AI stopped serving it.

Not catalogued: the page's "Optimized TensorFlow runtime" images (``tf_opt-*`` under
``vertex-ai-restricted/prediction``, a different repository with nightly builds). PyTorch's
Cloud TPU rows are in the table, but ``prediction_image`` offers CPU or GPU only.

Rules (``prediction_image``), those of ``catalog.images`` (Vertex AI's framework support
policy): a version past its end of availability is refused, naming the nearest version
Vertex AI still serves; past its end of support it is accepted with a warning naming the
newest supported version; within ``images.WARN_BEFORE_END_OF_SUPPORT_DAYS`` of it, warned.
A version the table lacks is refused, naming the nearest version with an image for that
framework and hardware, and all of them. Unlike a training image, a version newer than the table
is refused rather than named from the pattern: nothing here says Google published it. A
table compiled more than ``images.CATALOGUE_MAX_AGE_MONTHS`` months before ``today`` is
warned about. ``today`` is injectable so that tests are stable.

Registry host by region, and the path prediction images live under:
``catalog.image_uris`` (``registry_host``, ``PREBUILT_PREDICTION_PATHS``).

With a snapshot of Google's registry that read its ``prediction`` repositories
(``catalog.registry``, ``prices/images.json``, made by ``make images``), the registry
decides which prediction images exist in the registry location of the job's region: a
version the table has but the snapshot does not hold there is refused, naming the versions
it holds; a version the snapshot holds that the table lacks (published after the table was
read) is accepted, with a warning that its support dates are not known. The table keeps the
dates. A snapshot made before prediction images were read says nothing of them: the table
decides alone.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final, Literal

from vertex_training.api import image_refs
from vertex_training.catalog import registry
from vertex_training.catalog.image_uris import (
    PREBUILT_PREDICTION_PATHS,
    registry_host,
    registry_location,
)
from vertex_training.catalog.images import (
    CATALOGUE_MAX_AGE_MONTHS,
    FRAMEWORK_NAMES,
    WARN_BEFORE_END_OF_SUPPORT_DAYS,
    Source,
)

__all__ = [
    "CATALOGUE_DATE",
    "CATALOGUE_URL",
    "PREDICTION_FRAMEWORKS",
    "PREDICTION_IMAGES",
    "PREDICTION_TAG",
    "SOURCE",
    "PredictionChoice",
    "PredictionImage",
    "PredictionRefusal",
    "named_prediction_image",
    "prediction_framework_names",
    "prediction_image",
    "prediction_versions",
]

CATALOGUE_TITLE: Final = "Google Cloud docs: Prebuilt containers for inference and explanation"
CATALOGUE_URL: Final = (
    "https://docs.cloud.google.com/gemini-enterprise-agent-platform/machine-learning/"
    "predictions/pre-built-containers"
)
#: The day the rows were read from ``CATALOGUE_URL``.
CATALOGUE_DATE: Final = "2026-11-29"
SOURCE: Final = Source(CATALOGUE_TITLE, CATALOGUE_URL, datetime.date.fromisoformat(CATALOGUE_DATE))
#: "Using image names without the latest tag isn't supported" (the page).
PREDICTION_TAG: Final = "latest"

CPU: Final = "cpu"
GPU: Final = "gpu"
TPU: Final = "tpu"

# framework, version, Python ("" where the page gives none), kind, image name ("" where the
# page lists none), end of patch and support, end of availability. Newest first per framework.
_ROWS: tuple[tuple[str, str, str, str, str, str, str], ...] = (
    # TensorFlow
    ("tensorflow", "2.15", "", CPU, "tf2-cpu.2-15", "2026-07-14", "2027-01-14"),
    ("tensorflow", "2.15", "", GPU, "tf2-gpu.2-15", "2026-07-14", "2027-01-14"),
    ("tensorflow", "2.14", "", CPU, "tf2-cpu.2-14", "2026-01-14", "2027-01-14"),
    ("tensorflow", "2.14", "", GPU, "tf2-gpu.2-14", "2026-01-14", "2027-01-14"),
    ("tensorflow", "2.13", "", CPU, "", "2024-11-28", "2025-11-28"),
    ("tensorflow", "2.13", "", GPU, "", "2024-11-28", "2025-11-28"),
    ("tensorflow", "2.12", "", CPU, "", "2024-06-30", "2025-06-30"),
    ("tensorflow", "2.12", "", GPU, "", "2024-06-30", "2025-06-30"),
    *(
        ("tensorflow", version, "", kind, "", "2023-11-15", "2024-11-15")
        for version in (
            *("2.11", "2.10", "2.9", "2.8", "2.7", "2.6", "2.5", "2.4", "2.3", "2.2"),
            *("2.1", "1.15"),
        )
        for kind in (CPU, GPU)
    ),
    # PyTorch
    ("pytorch", "2.4", "3.9", CPU, "pytorch-cpu.2-4", "2026-07-14", "2027-01-14"),
    ("pytorch", "2.4", "3.9", GPU, "pytorch-gpu.2-4", "2026-07-14", "2027-01-14"),
    ("pytorch", "2.4", "3.9", TPU, "pytorch-tpu.2-4", "2026-07-14", "2027-01-14"),
    ("pytorch", "2.3", "3.9", CPU, "pytorch-cpu.2-3", "2026-01-14", "2027-01-14"),
    ("pytorch", "2.3", "3.9", GPU, "pytorch-gpu.2-3", "2026-01-14", "2027-01-14"),
    ("pytorch", "2.3", "3.9", TPU, "pytorch-tpu.2-3", "2026-01-14", "2027-01-14"),
    ("pytorch", "2.2", "3.9", CPU, "pytorch-cpu.2-2", "2026-01-14", "2027-01-14"),
    ("pytorch", "2.2", "3.9", GPU, "pytorch-gpu.2-2", "2026-01-14", "2027-01-14"),
    ("pytorch", "2.2", "3.9", TPU, "pytorch-tpu.2-2", "2026-01-14", "2027-01-14"),
    ("pytorch", "2.1", "3.9", CPU, "", "2024-12-01", "2025-12-01"),
    ("pytorch", "2.1", "3.9", GPU, "", "2024-12-01", "2025-12-01"),
    ("pytorch", "2.1", "3.9", TPU, "", "2024-12-01", "2025-12-01"),
    ("pytorch", "2.0", "3.9", CPU, "", "2024-07-27", "2025-07-27"),
    ("pytorch", "2.0", "3.9", GPU, "", "2024-07-27", "2025-07-27"),
    ("pytorch", "1.13", "3.8", CPU, "", "2024-05-15", "2025-05-15"),
    ("pytorch", "1.13", "3.8", GPU, "", "2024-05-15", "2025-05-15"),
    ("pytorch", "1.12", "", CPU, "", "2024-05-15", "2025-05-15"),
    ("pytorch", "1.12", "", GPU, "", "2024-05-15", "2025-05-15"),
    ("pytorch", "1.11", "", CPU, "", "2024-05-15", "2025-05-15"),
    ("pytorch", "1.11", "", GPU, "", "2024-05-15", "2025-05-15"),
    # scikit-learn: CPU only
    ("sklearn", "1.6", "3.10", CPU, "sklearn-cpu.1-6", "2026-10-14", "2027-10-14"),
    ("sklearn", "1.5", "3.10", CPU, "sklearn-cpu.1-5", "2026-07-14", "2027-01-14"),
    ("sklearn", "1.4", "3.10", CPU, "sklearn-cpu.1-4", "2026-01-14", "2027-01-14"),
    ("sklearn", "1.3", "3.10", CPU, "", "2024-11-28", "2025-11-28"),
    ("sklearn", "1.2", "3.10", CPU, "", "2024-06-30", "2025-06-30"),
    *(
        ("sklearn", version, "", CPU, "", "2023-11-15", "2024-11-15")
        for version in ("1.0", "0.24", "0.23", "0.22", "0.20")
    ),
    # XGBoost: CPU only
    ("xgboost", "2.1", "3.10", CPU, "xgboost-cpu.2-1", "2026-07-14", "2027-01-14"),
    ("xgboost", "2.0", "3.10", CPU, "xgboost-cpu.2-0", "2026-01-14", "2027-01-14"),
    ("xgboost", "1.7", "3.10", CPU, "", "2024-06-30", "2025-12-30"),
    *(
        ("xgboost", version, "", CPU, "", "2023-11-15", "2024-11-15")
        for version in ("1.6", "1.5", "1.4", "1.3", "1.2", "1.1", "0.90", "0.82")
    ),
)


@dataclass(frozen=True)
class PredictionImage:
    """One row of the page: a framework version's prediction image for one accelerator kind."""

    #: ``framework.name`` as the training side writes it (``images.FRAMEWORK_NAMES``).
    framework: str
    #: MAJOR.MINOR as the page writes it ("0.90" for XGBoost 0.90).
    version: str
    #: "cpu", "gpu" or "tpu".
    kind: str
    #: The image's name under ``<host>/vertex-ai/prediction/``, without the tag; None where
    #: the page lists no image (versions it no longer serves).
    name: str | None
    #: "End of patch and support date": no more patches; warned after it.
    end_of_support: datetime.date
    #: "End of availability": Vertex AI no longer serves it; refused after it.
    end_of_availability: datetime.date
    #: None where the page names no Python.
    python: str | None = None
    source: Source = SOURCE

    def uri(self, region: str) -> str:
        """The image URI on the registry host that serves ``region``."""
        if self.name is None:
            raise ValueError(f"{self.label}: the page lists no image for it")
        host = registry_host(region)
        return f"{host}/{PREBUILT_PREDICTION_PATHS[host]}/{self.name}:{PREDICTION_TAG}"

    @property
    def label(self) -> str:
        """'PyTorch 2.4 GPU'."""
        return f"{FRAMEWORK_NAMES[self.framework]} {self.version} {self.kind.upper()}"


PREDICTION_IMAGES: tuple[PredictionImage, ...] = tuple(
    PredictionImage(
        framework=framework,
        version=version,
        python=python or None,
        kind=kind,
        name=name or None,
        end_of_support=datetime.date.fromisoformat(end_of_support),
        end_of_availability=datetime.date.fromisoformat(end_of_availability),
    )
    for framework, version, python, kind, name, end_of_support, end_of_availability in _ROWS
)

#: ``framework.name`` values with prediction images, in the training side's order.
PREDICTION_FRAMEWORKS: tuple[str, ...] = tuple(
    name for name in FRAMEWORK_NAMES if any(i.framework == name for i in PREDICTION_IMAGES)
)

#: Image name -> row, for an image a job names by URI.
_BY_NAME: Mapping[str, PredictionImage] = MappingProxyType(
    {i.name: i for i in PREDICTION_IMAGES if i.name is not None}
)
_VERSION_RE = re.compile(r"\d+\.\d+")


def prediction_framework_names() -> tuple[str, ...]:
    """The ``framework.name`` values a serving container may name: tensorflow, pytorch,
    sklearn, xgboost."""
    return PREDICTION_FRAMEWORKS


# ------------------------------------------------------------------------------ the lookups


@dataclass(frozen=True)
class PredictionChoice:
    """The serving image a model gets, and warnings (without a config key) about it."""

    uri: str
    image: PredictionImage
    warnings: list[str] = field(default_factory=list)


#: The input at fault: the framework's name, its version, or the hardware (``gpu``).
RefusedField = Literal["name", "version", "gpu"]


@dataclass(frozen=True)
class PredictionRefusal:
    """No serving image: ``field`` is the input at fault; ``message`` says why and what to
    write, naming ``versions``."""

    field: RefusedField
    message: str
    #: The versions (newest first) with an image Vertex AI still serves on the hardware
    #: ``gpu`` says; empty when there are none, or when the framework is not known.
    versions: tuple[str, ...] = ()
    gpu: bool = False
    #: Refused only because Vertex AI no longer serves the version (its end of availability).
    retired: bool = False


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _kind(gpu: bool) -> str:
    return GPU if gpu else CPU


def _served(framework: str, kind: str, today: datetime.date) -> list[PredictionImage]:
    """The ``kind`` images of ``framework`` Vertex AI still serves on ``today``, newest first."""
    rows = [
        i
        for i in PREDICTION_IMAGES
        if i.framework == framework
        and i.kind == kind
        and i.name is not None
        and today <= i.end_of_availability
    ]
    return sorted(rows, key=lambda i: _version_key(i.version), reverse=True)


def prediction_versions(framework: str, *, gpu: bool, today: datetime.date) -> list[str]:
    """The versions (newest first) of ``framework`` with a CPU (or GPU) prediction image
    Vertex AI still serves on ``today``; empty for a framework it has none of."""
    return [i.version for i in _served(framework, _kind(gpu), today)]


def _nearest(
    framework: str, version: str, kind: str, today: datetime.date
) -> PredictionImage | None:
    """The image to move ``version`` to: itself where served (on other hardware), else the
    oldest served version newer than it (the smallest step forward), else the newest served
    one older than it."""
    served = _served(framework, kind, today)
    newer = [i for i in served if _version_key(i.version) >= _version_key(version)]
    older = [i for i in served if _version_key(i.version) < _version_key(version)]
    return newer[-1] if newer else (older[0] if older else None)


def _advice(framework: str, version: str, kind: str, today: datetime.date) -> str:
    """'the nearest version with a GPU image Vertex AI still serves is 2.2 (pytorch-gpu.2-2,
    served until 2027-01-14); write one of 2.4, 2.3, 2.2', or why there is none."""
    name = FRAMEWORK_NAMES[framework]
    served = prediction_versions(framework, gpu=kind == GPU, today=today)
    target = _nearest(framework, version, kind, today)
    if target is None:
        return (
            f"this package's table (read {CATALOGUE_DATE} from {CATALOGUE_URL}) has no "
            f"{name} {kind.upper()} prediction image Vertex AI still serves on {today}; "
            "check the page, or name a serving container of your own by image URI"
        )
    return (
        f"the nearest version with a {kind.upper()} prediction image Vertex AI still serves "
        f"is {target.version} ({target.name}, served until {target.end_of_availability}); "
        f"write one of {', '.join(served)}"
    )


def _refuse_unknown(framework: str) -> PredictionRefusal:
    return PredictionRefusal(
        "name",
        f"{framework!r} has no prebuilt prediction image: write one of "
        f"{', '.join(PREDICTION_FRAMEWORKS)}",
    )


def prediction_image(
    framework: str, version: str, *, region: str, gpu: bool, today: datetime.date
) -> PredictionChoice | PredictionRefusal:
    """The prebuilt prediction image of ``framework`` ``version`` for CPU (or GPU, when
    ``gpu``) serving in ``region``, or why there is none and which versions to write: by
    the table, then by the active snapshot of Google's registry where there is one
    (``registry.active``)."""
    found = _from_table(framework, version, region=region, gpu=gpu, today=today)
    snapshot = registry.active()
    if snapshot is None or not snapshot.read_repository(registry.PREDICTION):
        return found
    if framework not in PREDICTION_FRAMEWORKS or _VERSION_RE.fullmatch(version) is None:
        return found
    location = registry_location(region)
    name = image_name(framework, version, gpu=gpu)
    held = snapshot.holds(name, location, registry.PREDICTION)
    if isinstance(found, PredictionChoice):
        if held is not None:
            return found
        return _not_held(found.image.label, name, snapshot, location, framework, gpu=gpu)
    if held is None or found.retired:
        return found
    image = PredictionImage(
        framework=framework,
        version=version,
        kind=_kind(gpu),
        name=name,
        end_of_support=datetime.date.max,
        end_of_availability=datetime.date.max,
    )
    warning = (
        f"{image.label} ({name}) is not in this package's table of prediction images (read "
        f"{CATALOGUE_DATE}), but {snapshot.describe()} holds it: its support dates are not "
        "known here"
    )
    return PredictionChoice(uri=held.uri, image=image, warnings=[warning])


def image_name(framework: str, version: str, *, gpu: bool) -> str:
    """The name Google gives a framework version's prediction image:
    ``<framework>-<cpu|gpu>.<MAJOR>-<MINOR>`` (TensorFlow 2's is ``tf2``)."""
    prefix = "tf2" if framework == "tensorflow" else framework
    return f"{prefix}-{_kind(gpu)}.{version.replace('.', '-')}"


def _not_held(
    label: str,
    name: str,
    snapshot: registry.RegistrySnapshot,
    location: str,
    framework: str,
    *,
    gpu: bool,
) -> PredictionRefusal:
    """The refusal of a version the table has but the registry does not hold where the
    job's region pulls from, naming the versions it holds there."""
    prefix = image_name(framework, "0.0", gpu=gpu).rsplit(".", 1)[0] + "."
    versions = sorted(
        (
            i.name.removeprefix(prefix).replace("-", ".")
            for i in snapshot.images
            if i.repository == registry.PREDICTION
            and i.location == location
            and i.name.startswith(prefix)
        ),
        key=_version_key,
        reverse=True,
    )
    held = f"write one of {', '.join(versions)}" if versions else "it holds none of this kind"
    return PredictionRefusal(
        "version",
        f"{label}'s prediction image {name} is not in {snapshot.describe()} in {location}: "
        f"{held} (or run `make images` again if Google has published it since)",
        versions=tuple(versions),
        gpu=gpu,
    )


def _from_table(
    framework: str, version: str, *, region: str, gpu: bool, today: datetime.date
) -> PredictionChoice | PredictionRefusal:
    """``prediction_image`` by the table alone."""
    if framework not in PREDICTION_FRAMEWORKS:
        return _refuse_unknown(framework)
    kind = _kind(gpu)
    served = tuple(prediction_versions(framework, gpu=gpu, today=today))
    name = FRAMEWORK_NAMES[framework]
    if _VERSION_RE.fullmatch(version) is None:
        example = f'like "{served[0]}"' if served else "MAJOR.MINOR"
        return PredictionRefusal(
            "version",
            f"write the version as MAJOR.MINOR, {example}; prebuilt prediction images carry "
            "the latest patch of a version",
            versions=served,
            gpu=gpu,
        )
    rows = [i for i in PREDICTION_IMAGES if i.framework == framework and i.version == version]
    if not rows:
        return PredictionRefusal(
            "version",
            f"{name} {version} has no prebuilt prediction image; "
            f"{_advice(framework, version, kind, today)}",
            versions=served,
            gpu=gpu,
        )
    image = next((i for i in rows if i.kind == kind), None)
    if image is None:
        return _refuse_hardware(framework, version, gpu=gpu, today=today)
    return _check(image, region=region, today=today, served=served)


def _refuse_hardware(
    framework: str, version: str, *, gpu: bool, today: datetime.date
) -> PredictionRefusal:
    """A version with no image for the hardware: name the versions that have one, or, for a
    framework Google publishes no such image of, the versions of the other hardware."""
    name = FRAMEWORK_NAMES[framework]
    kind = _kind(gpu)
    if any(i.framework == framework and i.kind == kind for i in PREDICTION_IMAGES):
        return PredictionRefusal(
            "version",
            f"{name} {version} has no {kind.upper()} prebuilt prediction image; "
            f"{_advice(framework, version, kind, today)}",
            versions=tuple(prediction_versions(framework, gpu=gpu, today=today)),
            gpu=gpu,
        )
    other = _kind(not gpu)
    versions = tuple(prediction_versions(framework, gpu=not gpu, today=today))
    return PredictionRefusal(
        "gpu",
        f"Google publishes no {kind.upper()} prediction image of {name}, only "
        f"{other.upper()} ones: serve the model on {other.upper()}; "
        f"{_advice(framework, version, other, today)}",
        versions=versions,
        gpu=not gpu,
    )


def _check(
    image: PredictionImage, *, region: str, today: datetime.date, served: tuple[str, ...]
) -> PredictionChoice | PredictionRefusal:
    """The date rules for one row: refused past its end of availability (or where the page
    lists no image), warned past or near its end of support."""
    gpu = image.kind == GPU
    advice = _advice(image.framework, image.version, image.kind, today)
    if today > image.end_of_availability:
        return PredictionRefusal(
            "version",
            f"{image.label} prebuilt prediction images reached end of availability on "
            f"{image.end_of_availability}: Vertex AI no longer serves them (end of support "
            f"was {image.end_of_support}); {advice}",
            versions=served,
            gpu=gpu,
            retired=True,
        )
    if image.name is None:
        return PredictionRefusal(
            "version",
            f"{image.label}: the page ({CATALOGUE_URL}, read {CATALOGUE_DATE}) lists its dates "
            f"but no image; {advice}",
            versions=served,
            gpu=gpu,
        )
    warnings = _date_warnings(image, today)
    age = _age_warning(today)
    if age is not None:
        warnings.append(age)
    return PredictionChoice(uri=image.uri(region), image=image, warnings=warnings)


def _date_warnings(image: PredictionImage, today: datetime.date) -> list[str]:
    """Past its end of support: a warning naming the newest supported version; near it, one
    that says when."""
    if today > image.end_of_support:
        days_left = (image.end_of_availability - today).days
        return [
            f"{image.label} prebuilt prediction image {image.name} reached end of support on "
            f"{image.end_of_support} and gets no more patches; Vertex AI serves it until "
            f"{image.end_of_availability} (in {days_left} days); "
            f"{_newest_supported(image, today)}"
        ]
    days_left = (image.end_of_support - today).days
    if days_left <= WARN_BEFORE_END_OF_SUPPORT_DAYS:
        return [
            f"{image.label} prebuilt prediction image {image.name} reaches end of support on "
            f"{image.end_of_support} (in {days_left} days; Vertex AI stops serving it on "
            f"{image.end_of_availability}): plan the move to a newer version"
        ]
    return []


def _newest_supported(image: PredictionImage, today: datetime.date) -> str:
    """The newest version still before its end of support, or that the table has none."""
    supported = [
        i for i in _served(image.framework, image.kind, today) if today <= i.end_of_support
    ]
    if supported:
        newest = supported[0]
        return (
            f"the newest supported version is {newest.version} ({newest.name}, supported "
            f"until {newest.end_of_support})"
        )
    return (
        f"this package's table (read {CATALOGUE_DATE}) has no "
        f"{FRAMEWORK_NAMES[image.framework]} {image.kind.upper()} prediction image still "
        f"supported on {today}; newer versions: {CATALOGUE_URL}"
    )


def _age_warning(today: datetime.date) -> str | None:
    """A warning when the table was read more than ``CATALOGUE_MAX_AGE_MONTHS`` before today."""
    read = SOURCE.read_on
    index = read.month - 1 + CATALOGUE_MAX_AGE_MONTHS
    year, month = read.year + index // 12, index % 12 + 1
    limit = datetime.date(year, month, min(read.day, calendar.monthrange(year, month)[1]))
    if today <= limit:
        return None
    return (
        f"this package's table of prebuilt prediction images was read on {CATALOGUE_DATE}, "
        f"more than {CATALOGUE_MAX_AGE_MONTHS} months before {today}: Google may have "
        f"published newer versions or moved dates since; check {CATALOGUE_URL}"
    )


def named_prediction_image(
    uri: str, *, today: datetime.date
) -> PredictionChoice | PredictionRefusal | None:
    """For a serving container named by URI: a prebuilt prediction image of the table gets
    its date rules (the URI kept as written); None for any other image (a container of the
    user's own, or a prediction image the table lacks)."""
    reference = image_refs.parse(uri.strip())
    if not isinstance(reference, image_refs.ImageReference) or reference.host is None:
        return None
    directory, _, name = reference.path.rpartition("/")
    if PREBUILT_PREDICTION_PATHS.get(reference.host) != directory or name not in _BY_NAME:
        return None
    image = _BY_NAME[name]
    served = tuple(i.version for i in _served(image.framework, image.kind, today))
    checked = _check(image, region="", today=today, served=served)
    if isinstance(checked, PredictionRefusal):
        return checked
    return PredictionChoice(uri=uri, image=image, warnings=checked.warnings)
