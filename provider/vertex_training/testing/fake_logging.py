"""A fake Cloud Logging: ``google.logging.v2.LoggingServiceV2.ListLogEntries`` over real
gRPC on loopback, for the real ``google-cloud-logging`` client.

It serves the log lines of a ``FakeVertex``'s jobs (``_logs``: invented, and marked
so). ``FakeVertex(serve_logging=True)`` serves it on the JobService fake's own port (how
an engine test's stack reaches both through ``vertex-training:apiEndpoint``);
``FakeLogging(fake_vertex)`` serves it on a port of its own.

Only the filter the provider sends (``vertex_training.backends.cloud_logs.log_filter``) is
understood: comparisons joined by ``AND`` of ``resource.type``, ``resource.labels.job_id``
and ``resource.labels.task_name`` (``=``) and ``timestamp`` (``>=``, ``<=``), as the
Logging query language writes them (https://cloud.google.com/logging/docs/view/
logging-query-language). Anything else, an ``order_by`` other than ``timestamp asc`` or
``timestamp desc``, or a ``page_token``, answers UNIMPLEMENTED, as the JobService fake
does for what it does not serve. ``resource_names`` must name one project
(google/logging/v2/logging.proto ListLogEntriesRequest); ``page_size`` bounds the answer
(default and most: 1000).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Protocol

import grpc
from google.cloud.logging_v2.types import logging as logging_types
from google.cloud.logging_v2.types.log_entry import LogEntry
from google.protobuf.message import Message

from vertex_training.testing._clock import timestamp
from vertex_training.testing._faults import VertexMessage
from vertex_training.testing._logs import LogLine
from vertex_training.testing._loopback import GrpcLoopbackServer


class LogSource(Protocol):
    """What the fake serves the logs of: ``FakeVertex``."""

    def log_entries(self) -> list[LogLine]: ...


LOGGING_SERVICE = "google.logging.v2.LoggingServiceV2"
MAX_PAGE_SIZE = 1000
_COMPARISON = re.compile(r'^\s*([\w.]+)\s*(>=|<=|=)\s*"([^"]*)"\s*$')
_EXTRA_DIGITS = re.compile(r"(\.\d{6})\d+")
_FIELDS = {
    "resource.type": "=",
    "resource.labels.job_id": "=",
    "resource.labels.task_name": "=",
    "timestamp": "<=>=",
}


class Unimplemented(Exception):
    """A request outside the subset the fake serves."""


def matcher(text: str) -> Callable[[LogLine], bool]:
    """A predicate for the provider's filter; Unimplemented for anything else."""
    tests: list[Callable[[LogLine], bool]] = []
    for part in re.split(r"\s+AND\s+", text.strip()) if text.strip() else []:
        found = _COMPARISON.match(part)
        if not found or found.group(2) not in _FIELDS.get(found.group(1), ""):
            raise Unimplemented(f"the fake Cloud Logging does not understand {part!r}")
        field, op, value = found.groups()
        tests.append(_test(field, op, value))
    return lambda line: all(test(line) for test in tests)


def _test(field: str, op: str, value: str) -> Callable[[LogLine], bool]:
    if field == "resource.type":
        return lambda line: value == "ml_job"
    if field == "resource.labels.job_id":
        return lambda line: line.job_id == value
    if field == "resource.labels.task_name":
        return lambda line: line.replica == value
    moment = datetime.fromisoformat(_EXTRA_DIGITS.sub(r"\1", value.replace("Z", "+00:00")))
    bound = moment.timestamp()
    if op == ">=":
        return lambda line: line.timestamp >= bound
    return lambda line: line.timestamp <= bound


def list_log_entries(request: VertexMessage, lines: Sequence[LogLine]) -> Message:
    """Answer a ListLogEntriesRequest from ``lines``."""
    if len(request.resource_names) != 1 or not request.resource_names[0].startswith("projects/"):
        raise Unimplemented("the fake serves resource_names of one project only")
    if request.page_token:
        raise Unimplemented("the fake serves one page only")
    order = request.order_by.strip() or "timestamp asc"
    if order not in ("timestamp asc", "timestamp desc"):
        raise Unimplemented(f"the fake does not order by {request.order_by!r}")
    project = request.resource_names[0]
    keep = matcher(request.filter)
    selected = [line for line in lines if keep(line)]
    if order == "timestamp desc":
        selected.reverse()
    size = min(request.page_size or MAX_PAGE_SIZE, MAX_PAGE_SIZE)
    response: Message = logging_types.ListLogEntriesResponse.pb()()
    for line in selected[:size]:
        entry = LogEntry.pb()()
        entry.log_name = f"{project}/logs/{line.replica}"
        entry.resource.type = "ml_job"
        entry.resource.labels.update({"job_id": line.job_id, "task_name": line.replica})
        entry.text_payload = line.text
        entry.timestamp.CopyFrom(timestamp(line.timestamp))
        response.entries.append(entry)  # type: ignore[attr-defined]
    return response


def logging_handlers(fake: LogSource) -> Sequence[grpc.GenericRpcHandler]:
    """The LoggingServiceV2 handlers that serve ``fake``'s jobs' log lines."""

    def serve(request: Message, context: grpc.ServicerContext) -> Message:
        try:
            return list_log_entries(request, fake.log_entries())
        except Unimplemented as exc:
            context.abort(grpc.StatusCode.UNIMPLEMENTED, str(exc))

    handler: grpc.RpcMethodHandler[Message, Message] = grpc.unary_unary_rpc_method_handler(
        serve,
        request_deserializer=logging_types.ListLogEntriesRequest.pb().FromString,
        response_serializer=_serialize,
    )
    return [grpc.method_handlers_generic_handler(LOGGING_SERVICE, {"ListLogEntries": handler})]


def _serialize(message: Message) -> bytes:
    return message.SerializeToString()


class FakeLogging(GrpcLoopbackServer):
    """The fake Cloud Logging on a loopback port of its own, serving ``fake``'s jobs'
    logs; a context manager. ``address`` is ``127.0.0.1:PORT`` once started."""

    def __init__(self, fake: LogSource, port: int = 0) -> None:
        super().__init__(port)
        self._fake = fake

    def _handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        return logging_handlers(self._fake)


def main(argv: Sequence[str] | None = None) -> int:
    """Say what serves the fake's logs: they are the jobs of a fake JobService, so it runs
    with one, on the JobService's port."""
    del argv
    print(
        "the fake Cloud Logging serves the log lines of a fake JobService's jobs: run "
        "`python -m vertex_training.testing.fake_vertex --serve-logging` and point "
        "vertex-training:apiEndpoint at the address it prints (it serves both)",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main())
