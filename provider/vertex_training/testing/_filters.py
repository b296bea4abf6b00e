"""The list methods' request fields: the ``filter`` (https://google.aip.dev/160) and
``page_size`` / ``page_token`` (https://google.aip.dev/158), parsed or refused.

It depends only on ``_faults`` (for ``RpcError``).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from enum import Enum

import grpc
from google.cloud.aiplatform_v1.types.job_state import JobState

from vertex_training.testing._faults import RpcError, VertexMessage

#: AIP-158: the server picks the page size when none is given, and coerces larger ones.
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 1000

_FILTER_TERM = re.compile(
    r"""^(?P<field>[A-Za-z_]+(?:\.[^\s=!:<>]+)?)\s*(?P<op>!=|<=|>=|=|:|<|>)\s*"""
    r"""(?P<value>"[^"]*"|\S+)$"""
)
_FILTER_UNSUPPORTED = re.compile(r"(^|\s)(OR|NOT)(\s|$)|[()]|^-")
_QUOTED = re.compile(r'"[^"]*"')
#: AND between terms, outside double quotes (an even number of quotes follows it).
_FILTER_AND = re.compile(r'\s+AND\s+(?=(?:[^"]*"[^"]*")*[^"]*$)')

#: A text field a filter compares: its name in the filter -> how to read it.
TextFields = Mapping[str, Callable[[VertexMessage], str]]
#: The text fields the job and pipeline list methods filter on.
DISPLAY_NAME: TextFields = {"display_name": lambda message: str(message.display_name)}


def parse_filter(
    text: str, *, states: type[Enum] | None = JobState, fields: TextFields = DISPLAY_NAME
) -> list[Callable[[VertexMessage], bool]]:
    """Parse an AIP-160 filter made of ``field op value`` terms joined by AND.

    Supported, as job_service.proto ListCustomJobsRequest.filter lists them:
    ``display_name`` (=, !=, : with * wildcards), ``state`` (=, !=) and ``labels.KEY``
    (=, !=, ``:*`` for existence). OR, NOT, parentheses and create_time comparisons are
    valid Vertex filters that this fake does not implement (UNIMPLEMENTED). ``states``
    is the enum a ``state`` term names (JobState; PipelineState for training
    pipelines; None where ``state`` is no filter field), ``fields`` the text fields
    besides it (ListModels adds ``model``, and takes camelCase names too).
    """
    text = text.strip()
    if not text:
        return []
    if _FILTER_UNSUPPORTED.search(_QUOTED.sub('""', text)):
        raise RpcError(
            grpc.StatusCode.UNIMPLEMENTED,
            f"The fake JobService supports only terms joined by AND, got filter {text!r}.",
        )
    return [_parse_term(term, states, fields) for term in _FILTER_AND.split(text)]


def _parse_term(
    term: str, states: type[Enum] | None, fields: TextFields
) -> Callable[[VertexMessage], bool]:
    parsed = _FILTER_TERM.match(term.strip())
    if parsed is None:
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid filter term {term!r}.")
    field, op, value = parsed["field"], parsed["op"], parsed["value"].strip('"')
    if field == "create_time":
        raise RpcError(
            grpc.StatusCode.UNIMPLEMENTED,
            "The fake JobService does not filter on create_time.",
        )
    if op in ("<", "<=", ">", ">="):
        raise RpcError(
            grpc.StatusCode.INVALID_ARGUMENT, f"{field} does not support {op} ({term!r})."
        )
    negate = op == "!="
    if field in fields:
        read = fields[field]
        if op == ":":
            return lambda job: fnmatch.fnmatchcase(read(job), value)
        return lambda job: (read(job) == value) != negate
    if field == "state" and op != ":" and states is not None:
        if value not in states.__members__:
            raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid state {value!r}.")
        number = states.__members__[value]
        return lambda job: (job.state == number) != negate
    if field.startswith("labels."):
        key = field.removeprefix("labels.")
        if op == ":":
            if value != "*":
                raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid filter term {term!r}.")
            return lambda job: key in job.labels
        return lambda job: (job.labels.get(key) == value) != negate
    raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Unsupported filter field {field!r}.")


def parse_page_size(page_size: int) -> int:
    """The page size to use for a request's ``page_size`` (AIP-158: 0 for the default,
    larger than the maximum coerced to it)."""
    if page_size < 0:
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, "page_size must not be negative.")
    return min(page_size or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


def parse_page_token(token: str) -> int | None:
    """The number of the last job a previous page returned; None for the first page."""
    if not token:
        return None
    if not token.isdecimal():
        raise RpcError(grpc.StatusCode.INVALID_ARGUMENT, f"Invalid page token {token!r}.")
    return int(token)
