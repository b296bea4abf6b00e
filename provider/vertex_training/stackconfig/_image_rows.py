"""``vertex-training:images``: rows a project adds to the catalogue of prebuilt images.

The package's catalogue (``vertex_training.catalog.images``) is compiled from Google's
page of prebuilt training containers on a given day. A project that needs a version
Google published since (or a date Google moved) adds the row itself, read from the same
page, with the page and the day it read it::

    vertex-training:images:
      - framework: pytorch
        version: "2.5"
        python: "3.10"
        kinds: [gpu]
        name: pytorch-gpu.2-5.py310
        end_of_support: "2026-12-31"
        end_of_availability: "2027-06-30"
        source: https://cloud.google.com/vertex-ai/docs/training/pre-built-containers
        read_on: "2026-11-26"

A row of the same ``name`` as one of the package's replaces it. The rows are validated
here (each mistake named by its key, ``vertex-training:images[0].name``) and kept as
written in the stack settings every job gets, so the provider's check reads them too.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from vertex_training.catalog import images
from vertex_training.errors import Issue
from vertex_training.keys import IMAGES_KEY
from vertex_training.stackconfig._issues import invalid, issues_from
from vertex_training.stackconfig._rules import _choice

#: An image name under ``<host>/vertex-ai/training/``: no host, path or tag.
_NAME_RE = re.compile(r"[a-z0-9][a-z0-9._-]*")
_VERSION_RE = re.compile(r"\d+\.\d+")
_PAGE_RE = re.compile(r"https://\S+")


def _version(value: str) -> str:
    if not _VERSION_RE.fullmatch(value):
        raise invalid('write MAJOR.MINOR as text, e.g. "2.5"')
    return value


def _date(value: Any) -> str:
    """A day, as ISO text (YAML may read an unquoted date as a date)."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    try:
        return datetime.date.fromisoformat(str(value)).isoformat()
    except ValueError:
        raise invalid('write the day as "YYYY-MM-DD", as Google\'s page gives it') from None


def _name(value: str) -> str:
    if not _NAME_RE.fullmatch(value):
        raise invalid(
            "write the image's name as the page lists it, without host, path or tag, "
            "e.g. pytorch-gpu.2-5.py310"
        )
    return value


def _page(value: str) -> str:
    if not _PAGE_RE.fullmatch(value):
        raise invalid(
            f"write the https:// address of the page the row was read from ({images.CATALOGUE_URL})"
        )
    return value


Version = Annotated[str, AfterValidator(_version)]
Day = Annotated[str, BeforeValidator(_date)]
#: The kinds of machine a prebuilt image runs on.
ImageKind = Literal["cpu", "gpu", "tpu"]


class ImageRow(BaseModel):
    """A row added to the catalogue of prebuilt images (``vertex-training:images``, as
    docs/images.md shows), read from Google's page on ``read_on``."""

    model_config = ConfigDict(extra="forbid")

    framework: Annotated[str, BeforeValidator(_choice(tuple(images.FRAMEWORK_NAMES)))] = Field(
        description="`tensorflow`, `pytorch`, `sklearn` or `xgboost`"
    )
    version: Version = Field(description="the framework's `MAJOR.MINOR`, as text")
    python: Version = Field(description="the image's Python, as text (`3.10`)")
    kinds: list[ImageKind] = Field(
        min_length=1, description="what the image runs on: `cpu`, `gpu`, `tpu`"
    )
    name: Annotated[str, AfterValidator(_name)] = Field(
        description="the image's name on Google's page, without host or tag"
    )
    end_of_support: Day = Field(description="the day Google ends the image's support, `YYYY-MM-DD`")
    end_of_availability: Day = Field(
        description="the day Google stops offering the image, `YYYY-MM-DD`"
    )
    source: Annotated[str, AfterValidator(_page)] = Field(
        description="the page the row was read from"
    )
    read_on: Day = Field(description="the day the page was read, `YYYY-MM-DD`")


def parse_image_rows(raw: Any) -> tuple[list[dict[str, Any]], list[Issue]]:
    """The rows of ``vertex-training:images`` as written (validated), and each mistake."""
    if raw is None:
        return [], []
    if not isinstance(raw, list):
        return [], [Issue(IMAGES_KEY, raw, "must be a list of image rows, e.g. - {framework: ...}")]
    rows: list[dict[str, Any]] = []
    issues: list[Issue] = []
    for index, item in enumerate(raw):
        key = f"{IMAGES_KEY}[{index}]"
        if not isinstance(item, Mapping):
            issues.append(Issue(key, item, "must be a mapping: framework, version, python, ..."))
            continue
        try:
            row = ImageRow.model_validate(dict(item))
        except ValidationError as exc:
            issues.extend(issues_from(exc, key, ImageRow))
            continue
        if row.end_of_availability < row.end_of_support:
            issues.append(
                Issue(
                    f"{key}.end_of_availability",
                    row.end_of_availability,
                    f"comes before end_of_support ({row.end_of_support}): Google's page gives "
                    "the end of availability after the end of support; check both dates",
                )
            )
            continue
        rows.append(row.model_dump())
    return rows, issues


def image_of(row: Mapping[str, Any]) -> images.PrebuiltImage:
    """The catalogue row of a validated row of ``vertex-training:images``."""
    return images.PrebuiltImage(
        framework=row["framework"],
        version=row["version"],
        python=row["python"],
        kinds=frozenset(row["kinds"]),
        name=row["name"],
        end_of_support=datetime.date.fromisoformat(row["end_of_support"]),
        end_of_availability=datetime.date.fromisoformat(row["end_of_availability"]),
        source=images.Source(
            f"{IMAGES_KEY} of this stack",
            row["source"],
            datetime.date.fromisoformat(row["read_on"]),
        ),
    )
