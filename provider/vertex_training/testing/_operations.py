"""The long-running operations of the fake (google/longrunning/operations.proto): those
the Delete methods start, and ``GetOperation``, with which the client polls them.

It depends on ``_clock`` and ``_faults``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
from google.cloud.aiplatform_v1.types import operation as operation_types
from google.longrunning import operations_pb2
from google.protobuf import empty_pb2

from vertex_training.testing._clock import timestamp
from vertex_training.testing._faults import RpcError


@dataclass
class OperationRecord:
    """A delete operation: not done until ``done_at``, then done with an Empty response."""

    name: str
    created_at: float
    done_at: float

    def render(self, now: float) -> operations_pb2.Operation:
        """The operation as GetOperation returns it at ``now``."""
        done = now >= self.done_at
        metadata = operation_types.DeleteOperationMetadata.pb()()
        metadata.generic_metadata.create_time.CopyFrom(timestamp(self.created_at))
        metadata.generic_metadata.update_time.CopyFrom(
            timestamp(self.done_at if done else self.created_at)
        )
        result = operations_pb2.Operation(name=self.name, done=done)
        result.metadata.Pack(metadata)
        if done:
            result.response.Pack(empty_pb2.Empty())
        return result


class Operations:
    """The operations started so far, by name; they are never forgotten.

    Not thread-safe: the fake calls it with its lock held.
    """

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._by_name: dict[str, OperationRecord] = {}

    def start(self, name: str, now: float, duration_s: float) -> OperationRecord:
        """Start an operation that is done ``duration_s`` after ``now``."""
        operation = OperationRecord(name=name, created_at=now, done_at=now + duration_s)
        self._by_name[operation.name] = operation
        return operation

    def __getitem__(self, name: str) -> OperationRecord:
        return self._by_name[name]

    def get_operation(
        self, request: operations_pb2.GetOperationRequest
    ) -> operations_pb2.Operation:
        # google/longrunning/operations.proto GetOperation: "Clients can use this method
        # to poll the operation result at intervals".
        operation = self._by_name.get(request.name)
        if operation is None:
            raise RpcError(grpc.StatusCode.NOT_FOUND, f"Operation {request.name} is not found.")
        return operation.render(self._clock())
