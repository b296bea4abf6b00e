"""Clients the tests point at the fake Vertex service."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def job_service_client(address: str) -> Iterator[Any]:
    """The real aiplatform_v1 JobServiceClient on an insecure channel to ``address``."""
    import grpc
    from google.cloud.aiplatform_v1 import JobServiceClient
    from google.cloud.aiplatform_v1.services.job_service.transports import (
        JobServiceGrpcTransport,
    )

    channel = grpc.insecure_channel(address)
    try:
        yield JobServiceClient(transport=JobServiceGrpcTransport(channel=channel))
    finally:
        channel.close()
