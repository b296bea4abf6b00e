"""Clients the tests point at the fake Vertex service."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from vertex_training.keys import API_ENDPOINT_KEY
from vertex_training.resources.state import ProviderSettings

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


def job_made_outside(
    address: str,
    *,
    display_name: str,
    image: str,
    args: list[str] | None = None,
    labels: dict[str, str] | None = None,
) -> str:
    """Create a one-replica container job on e2-standard-4 in test-project/us-central1
    at the service at ``address`` with the real client, as a person would outside
    Pulumi (no label of the provider's); its resource name."""
    container: dict[str, Any] = {"image_uri": image}
    if args:
        container["args"] = args
    with job_service_client(address) as client:
        job = client.create_custom_job(
            parent="projects/test-project/locations/us-central1",
            custom_job={
                "display_name": display_name,
                "job_spec": {
                    "worker_pool_specs": [
                        {
                            "machine_spec": {"machine_type": "e2-standard-4"},
                            "replica_count": 1,
                            "container_spec": container,
                        }
                    ]
                },
                "labels": labels or {},
            },
        )
    return str(job.name)


def configured(
    provider: P,
    fake: Any = None,
    base_dir: Path | None = None,
    config: Mapping[str, Any] | None = None,
) -> P:
    """``provider`` configured as the provider host configures it: from a stack config
    whose ``vertex-training:apiEndpoint`` is ``fake``'s address (a FakeVertex, an address,
    or None for none), plus ``config``'s keys (each as the engine hands it: objects as
    JSON text), in the project directory ``base_dir`` (default: the repository)."""
    from pulumi.dynamic import ConfigureRequest
    from pulumi.dynamic.config import Config

    address = fake if isinstance(fake, str) else getattr(fake, "address", "")
    keys = {API_ENDPOINT_KEY: address} if address else {}
    keys.update(
        {
            key: value if isinstance(value, str) else json.dumps(value)
            for key, value in (config or {}).items()
        }
    )
    with contextlib.chdir(base_dir or REPO):
        provider.configure(ConfigureRequest(Config(keys, "vertex-training")))
    return provider


def waiter_for(fake: Any, jobs: Mapping[str, Any], stack: str = "test") -> Any:
    """A JobWaiterProvider configured as the provider host configures it for a stack of
    ``jobs`` (stack config of each, by name) on Vertex AI in test-project, us-central1,
    reached at ``fake``."""
    from vertex_training.resources.waiter import JobWaiterProvider

    config = {
        "gcp:project": "test-project",
        "gcp:region": "us-central1",
        "vertex-training:jobs": dict(jobs),
    }
    return configured(JobWaiterProvider(), fake, config=config)


def registered(fake: Any, name: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The properties __main__.py registers for the job ``name`` (its one input, before
    check), of a stack on Vertex AI in test-project, us-central1, reached at ``fake``."""
    stack = {
        "stack": "test",
        "project": "test-project",
        "region": "us-central1",
        "backend": "vertex",
        "api_endpoint": fake.address,
    }
    return {"job": {"name": name, "config": config, "stack": stack}}


def waited(resource_name: str, until: str = "succeeded") -> dict[str, str]:
    """A job's entry in the waiter's ``jobs`` input (``vertex_training.resources.state.Waited``)."""
    return {"resource_name": resource_name, "until": until}


def reaching(fake: Any) -> ProviderSettings:
    """Provider settings whose endpoint is ``fake``'s (a FakeVertex or an address)."""
    return ProviderSettings(api_endpoint=fake if isinstance(fake, str) else fake.address)
