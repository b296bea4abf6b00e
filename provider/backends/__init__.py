"""Backends that run training jobs: Vertex AI, or this machine.

``connect`` builds one from the plain data a resource keeps in its state. The backend
modules are imported only here, and only when an operation needs one, so that a
no-change preview loads no Google client library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from provider.backends.base import Backend, JobStatus

__all__ = ["Backend", "JobStatus", "connect"]


def connect(location: Mapping[str, Any], connection: Mapping[str, Any]) -> Backend:
    """Return the backend a job lives in.

    ``location`` says where the job runs (``backend``, ``project``, ``region``);
    ``connection`` says how this machine reaches it (``api_endpoint`` for Vertex AI,
    ``local_root`` and ``base_dir`` for the local backend).
    """
    kind = location["backend"]
    if kind == "vertex":
        from provider.backends.vertex import VertexBackend

        return VertexBackend(
            location["project"],
            location["region"],
            api_endpoint=connection.get("api_endpoint") or None,
        )
    if kind == "local":
        from provider.backends.local import LocalBackend

        return LocalBackend(connection["local_root"], base_dir=connection["base_dir"])
    raise ValueError(f"unknown backend {kind!r}")
