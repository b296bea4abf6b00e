"""``TranslationContext``: what the legacy translator's parts share while they read one
``trainingInput`` block: the block, the issues, warnings and key origins found so far, and
readers of legacy values (text, counts, flags, versions, durations) that refuse bad ones.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from vertex_training.catalog.images import LEGACY_RUNTIMES
from vertex_training.errors import Issue
from vertex_training.stackconfig.legacy._tables import _DURATION_RE
from vertex_training.stackconfig.legacy._translation import _did_you_mean, _key, _one_of, _Origin

#: A legacy key below the block, as its parts (``("masterConfig", "imageUri")``).
Path = tuple[str | int, ...]


class TranslationContext:
    """One ``trainingInput`` block being translated, and what the translation found so far."""

    def __init__(self, source: Mapping[str, Any], *, legacy_base: str, native_base: str) -> None:
        self.source = source
        self.legacy_base = legacy_base
        self.native_base = native_base
        self.issues: list[Issue] = []
        self.warnings: list[Issue] = []
        self.origins: list[_Origin] = []

    def key(self, path: Path) -> str:
        return _key(self.legacy_base, path)

    def refuse(self, path: Path, value: Any, message: str) -> None:
        self.issues.append(Issue(self.key(path), value, message))

    def warn(self, path: Path, value: Any, message: str) -> None:
        self.warnings.append(Issue(self.key(path), value, message))

    def came_from(self, native: str, legacy: Path, *, keep_suffix: bool = False) -> None:
        """Record that native key ``native`` was translated from legacy ``legacy``."""
        self.origins.append(_Origin(native, self.key(legacy), keep_suffix))

    def block(self, path: Path, value: Any, keys: Sequence[str]) -> Mapping[str, Any]:
        """A legacy mapping with only ``keys`` (others refused); {} for null or a non-mapping."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.refuse(path, value, "must be a mapping of key: value lines")
            return {}
        for name in value:
            if name not in keys:
                hint = _did_you_mean(str(name), keys)
                self.refuse(
                    (*path, str(name)),
                    value[name],
                    f"not a key of this AI Platform Training block.{hint} The keys here are "
                    f"{_one_of(keys)}",
                )
        return value

    def text(self, path: Path, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value
        self.refuse(path, value, "must be text")
        return None

    def text_list(self, path: Path, value: Any) -> list[str] | None:
        """A list of scalars as text (``[--epochs, 3]`` -> ``["--epochs", "3"]``)."""
        if value is None:
            return None
        if not isinstance(value, list):
            self.refuse(path, value, "must be a list, like [a, b]")
            return None
        texts: list[str] = []
        for index, item in enumerate(value):
            if isinstance(item, bool):
                texts.append("true" if item else "false")
            elif isinstance(item, str | int | float):
                texts.append(str(item))
            else:
                self.refuse((*path, index), item, "must be text or a number")
        return texts

    def count(self, path: Path, value: Any) -> int | None:
        """A replica or accelerator count: an int64 (YAML number or JSON string)."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and value.strip().isdigit():
            number = int(value)
        else:
            self.refuse(path, value, "must be a whole number")
            return None
        if number < 0:
            self.refuse(path, value, "must not be negative")
            return None
        return number

    def flag(self, path: Path, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.refuse(path, value, "must be true or false")
        return None

    def version_text(self, path: Path, value: Any, runtime: bool) -> str | None:
        """runtimeVersion / pythonVersion as gcloud sent them (YAML numbers become text)."""
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = str(value)
            with_zero = f"{text}0"
            if runtime and "." in text and with_zero in LEGACY_RUNTIMES:
                self.warn(
                    path,
                    value,
                    f"written as a number, which YAML reads as {text} (gcloud sent "
                    f'"{text}"); if {with_zero} was meant, quote it: "{with_zero}"',
                )
            return text
        self.refuse(path, value, "must be a version number, MAJOR.MINOR, written as text")
        return None

    def duration(self, path: Path, value: Any) -> int | None:
        """A google.protobuf.Duration in JSON form ("7200s") as whole seconds (rounded up)."""
        if value is None:
            return None
        match = _DURATION_RE.fullmatch(value.strip()) if isinstance(value, str) else None
        if match is None:
            self.refuse(path, value, 'must be a duration in seconds, like "7200s"')
            return None
        return math.ceil(float(match["seconds"]))
