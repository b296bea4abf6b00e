"""A create or update that did its work and then failed: the engine keeps the resource.

A JobWaiter whose wait a job failed has still waited: it saw each job's state, a tuning
job's trials, why a job failed. The provider protocol lets a create or update say so:
its call fails with an ``ErrorResourceInitFailed`` detail (pulumi's provider.proto)
carrying the resource's ID and properties. The engine then records the resource with
those properties and the failure's reasons, reports the reasons as the step's error, and
creates nothing that depends on it; at the next `pulumi up` it updates the resource
again, whatever its inputs (what the dynamic waiter gets by recording its outputs and
failing the program afterwards, ``resources.waiter``).

The Pulumi SDK's provider server has no way to send that detail, so the plugin's
servicer does (``vertex_training.plugin.__main__``): an operation raises
``InitFailedError``, and the call ends with the status this module builds, as the
server itself builds the status of an input property error (its details in the
``grpc-status-details-bin`` trailer).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.provider.experimental.property_value import PropertyValue

from vertex_training.errors import BackendError


class InitFailedError(BackendError):
    """A create or update that made or changed its resource, then failed: the engine
    keeps ``resource_id`` with ``properties`` and reports the message."""

    def __init__(
        self,
        message: str,
        resource_id: str,
        properties: Mapping[str, PropertyValue],
        inputs: Mapping[str, PropertyValue],
    ) -> None:
        super().__init__(message)
        self.resource_id = resource_id
        self.properties = dict(properties)
        self.inputs = dict(inputs)


def init_failed_status(error: InitFailedError) -> Any:
    """The gRPC status that ends a call with ``error``: UNKNOWN, its message, and the
    ``ErrorResourceInitFailed`` detail the engine reads the resource from."""
    import grpc
    from google.protobuf import any_pb2
    from google.rpc import status_pb2
    from pulumi.runtime.proto import provider_pb2

    detail = provider_pb2.ErrorResourceInitFailed(
        id=error.resource_id,
        properties=PropertyValue.marshal_map(error.properties),
        inputs=PropertyValue.marshal_map(error.inputs),
        reasons=[str(error)],
    )
    packed = any_pb2.Any()
    packed.Pack(detail)
    code = grpc.StatusCode.UNKNOWN
    carried = status_pb2.Status(code=code.value[0], message=str(error), details=[packed])
    status = grpc.Status()
    status.code = code
    status.details = str(error)
    status.trailing_metadata = (("grpc-status-details-bin", carried.SerializeToString()),)
    return status
