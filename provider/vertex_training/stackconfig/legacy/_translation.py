"""What a translation gives: the native keys, the issues and warnings, and the origin of
each native key (``Translation.rekey`` maps an issue back to the legacy key).
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from vertex_training.errors import Issue
from vertex_training.stackconfig.legacy._tables import _JOB_ID_RE, MAX_JOB_ID_CHARS


@dataclass(frozen=True)
class _Origin:
    """A native key (dotted path under the job) and the legacy key it was translated from."""

    native: str
    legacy: str
    #: Whether a deeper native key keeps its tail (``.type``, ``[0]``) on the legacy key.
    keep_suffix: bool = False


@dataclass(frozen=True)
class Translation:
    """A job's native keys, and what the translation refused or warned about."""

    native: dict[str, Any]
    issues: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()
    #: The job's full config key (``vertex-training:jobs.<name>``).
    native_base: str = ""
    origins: tuple[_Origin, ...] = field(default=(), repr=False)

    def rekey(self, issue: Issue) -> Issue:
        """The issue with a translated native key replaced by the legacy key it came from."""
        if not self.origins or not issue.key.startswith(self.native_base):
            return issue
        rest = issue.key[len(self.native_base) :]
        if not rest.startswith((".", "[")):
            return issue
        path = rest.removeprefix(".")
        matches = [
            origin
            for origin in self.origins
            if path == origin.native or path.startswith((f"{origin.native}.", f"{origin.native}["))
        ]
        if not matches:
            return issue
        best = max(matches, key=lambda origin: len(origin.native))
        suffix = path[len(best.native) :] if best.keep_suffix else ""
        return dataclasses.replace(issue, key=best.legacy + suffix)

    def rekey_all(self, issues: Iterable[Issue]) -> list[Issue]:
        """``rekey`` for each issue; issues that become the same (a pool given the master's
        ``imageUri``, and the master) are kept once."""
        unique: list[Issue] = []
        for issue in map(self.rekey, issues):
            if issue not in unique:
                unique.append(issue)
        return unique


def _key(base: str, path: Iterable[str | int]) -> str:
    """A full key: ``base`` plus ``.name`` / ``[index]`` parts (as stackconfig writes them)."""
    key = base
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key


def _did_you_mean(value: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


def _one_of(values: Sequence[str]) -> str:
    texts = list(values)
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} or {texts[-1]}"


def check_job_id(job_id: Any) -> str | None:
    """Why ``job_id`` breaks the legacy job ID rules, or None when it keeps them."""
    if not isinstance(job_id, str):
        return "must be text: letters, digits and underscores, starting with a letter"
    if not 1 <= len(job_id) <= MAX_JOB_ID_CHARS:
        return f"legacy job IDs have 1 to {MAX_JOB_ID_CHARS} characters; this one has {len(job_id)}"
    if not _JOB_ID_RE.fullmatch(job_id):
        return (
            "legacy job IDs are letters, digits and underscores, starting with a letter "
            f"(e.g. {re.sub(r'[^A-Za-z0-9_]', '_', job_id).lstrip('_0123456789') or 'my_job_1'})"
        )
    return None
