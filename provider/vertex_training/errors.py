"""Errors raised by vertex-training.

The hierarchy::

    VertexTrainingError
    ├── SpecError              a stack config that Vertex AI would refuse
    ├── PricesError            a price snapshot unreadable, or a price refresh that failed
    ├── QuotasError            the project's quotas could not be read (Cloud Quotas API)
    └── BackendError           a backend call that did not succeed
        ├── TransientError     worth retrying (UNAVAILABLE, DEADLINE_EXCEEDED, ...)
        │   └── UncertainError a create that may or may not have taken effect
        ├── PermanentError     the API refused the request (INVALID_ARGUMENT, ...)
        ├── CredentialsError   Google credentials missing, unreadable or refused
        └── JobEndedError      a job ended FAILED, CANCELLED or EXPIRED

User mistakes in a stack config are reported to Pulumi as check failures built from
``SpecError.issues``; exceptions are for cloud failures and bugs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

#: How pydantic's error types read to someone editing a stack config.
TYPE_MESSAGES: Mapping[str, str] = {
    "string_type": "must be text; quote it in YAML",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "list_type": "must be a list, like [a, b]",
    "dict_type": "must be a mapping of key: value lines",
    "model_type": "must be a mapping of key: value lines",
    "model_attributes_type": "must be a mapping of key: value lines",
}


class VertexTrainingError(Exception):
    """Base class of every error this package raises on purpose."""


@dataclass(frozen=True)
class Issue:
    """One mistake in a stack config: the key, the bad value, and what to write instead."""

    key: str
    value: object
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message} (got {self.value!r})"


@dataclass(frozen=True)
class KeyIssue(Issue):
    """A mistake about a key as a whole (a study on a job that runs none), with no one bad
    value to show: its ``value`` is None and not shown."""

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


@dataclass(frozen=True)
class MissingSetting(Issue):
    """A setting of where a job runs that it lacks (``setting``: its Google Cloud
    ``project``, its ``region``). The message says where a stack config gives it; each
    host tells its own user where to give it instead (the plugin: ``property_failure``)."""

    setting: str = ""


def rekeyed(issue: Issue, names: Mapping[str, str]) -> Issue:
    """``issue`` under another name: the first key of ``names`` that is its key or a
    prefix of it (followed by ``.`` or ``[``) replaced by that key's value (a stack config
    key -> the program's argument that says the same)."""
    for written, name in names.items():
        if issue.key == written or issue.key.startswith((f"{written}.", f"{written}[")):
            return replace(issue, key=name + issue.key.removeprefix(written))
    return issue


@dataclass(frozen=True)
class RetiredImage(Issue):
    """A prebuilt image Vertex AI no longer runs (past its end of availability): refused
    like any issue, but ``convert`` still writes a job whose only issues are these."""


class SpecError(VertexTrainingError):
    """A stack config that cannot be submitted; ``issues`` lists every mistake found."""

    def __init__(self, issues: list[Issue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(issue) for issue in issues))


class PricesError(VertexTrainingError):
    """A price snapshot that cannot be read, or a refresh of it that failed; says the fix."""


class QuotasError(VertexTrainingError):
    """The project's quotas could not be read; the message says why and what to do,
    ``reason`` why alone (for a line whose fix is given apart)."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message


class BackendError(VertexTrainingError):
    """A backend call failed; the message is the API's own where there is one."""


class TransientError(BackendError):
    """A failure that may pass on its own; callers retry it with backoff."""


class UncertainError(TransientError):
    """A create failed with a code (``code``: INTERNAL, DEADLINE_EXCEEDED, UNKNOWN,
    UNAVAILABLE) that leaves open whether the job was created; look before resubmitting."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


class PermanentError(BackendError):
    """The API refused the request; retrying the same request cannot help."""


class CredentialsError(BackendError):
    """Google credentials that are missing, cannot be read or were refused; the message
    names the setting they came from (never its value) and what to set instead."""


class JobEndedError(BackendError):
    """A job that was waited for ended FAILED, CANCELLED or EXPIRED."""
