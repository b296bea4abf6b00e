"""Clients the tests point at the fake Vertex service."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from provider.keys import API_ENDPOINT_KEY
from provider.resources.state import ProviderSettings

REPO = Path(__file__).resolve().parent.parent
P = TypeVar("P")


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


def configured(provider: P, fake: Any = None, base_dir: Path | None = None) -> P:
    """``provider`` configured as the provider host configures it: from a stack config
    whose ``vertex-training:apiEndpoint`` is ``fake``'s address (a FakeVertex, an address,
    or None for none), in the project directory ``base_dir`` (default: the repository)."""
    from pulumi.dynamic import ConfigureRequest
    from pulumi.dynamic.config import Config

    address = fake if isinstance(fake, str) else getattr(fake, "address", "")
    config = Config({API_ENDPOINT_KEY: address} if address else {}, "vertex-training")
    with contextlib.chdir(base_dir or REPO):
        provider.configure(ConfigureRequest(config))
    return provider


def reaching(fake: Any) -> ProviderSettings:
    """Provider settings whose endpoint is ``fake``'s (a FakeVertex or an address)."""
    return ProviderSettings(api_endpoint=fake if isinstance(fake, str) else fake.address)
