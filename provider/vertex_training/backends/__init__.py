"""Backends that run training jobs: Vertex AI, or this machine.

``connect`` builds one from the plain data a resource keeps in its state. The backend
modules are imported only here, and only when an operation needs one, so that a
no-change preview loads no Google client library.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertex_training.backend_kinds import LOCAL, VERTEX
from vertex_training.backends.base import Backend, JobStatus

__all__ = ["Backend", "JobStatus", "connect", "job_places"]


def connect(location: Mapping[str, Any], connection: Mapping[str, Any]) -> Backend:
    """Return the backend a job lives in.

    ``location`` says where the job runs (``backend``, ``project``, ``region``);
    ``connection`` says how this machine reaches it (``api_endpoint`` and ``auth``, the
    Google credential settings, for Vertex AI; ``local_root`` and ``base_dir`` for the
    local backend).
    """
    kind = location["backend"]
    if kind == VERTEX.name:
        from vertex_training.backends.vertex import VertexBackend

        return VertexBackend(
            location["project"],
            location["region"],
            api_endpoint=connection.get("api_endpoint") or None,
            auth=connection.get("auth"),
        )
    if kind == LOCAL.name:
        from vertex_training.backends.local import LocalBackend

        return LocalBackend(connection["local_root"], base_dir=connection["base_dir"])
    raise ValueError(f"unknown backend {kind!r}")


def job_places(name: str, local_root: str, named_output: str) -> dict[str, str]:
    """The ``console_url``, ``logs_url`` and ``output_directory`` of the job ``name`` (a
    resource name) whose request names ``named_output`` as its base output directory
    ("" for none), as its backend gives them, from these alone (and, for a local job,
    the local backend's root): the stack outputs derive them, so no job's state needs
    to record them."""
    from vertex_training.backends.base import location_of

    try:
        backend = location_of(name)["backend"]
    except ValueError:  # no job's name (a test's mocked ID): nothing to derive
        return {"console_url": "", "logs_url": "", "output_directory": named_output}
    if backend == LOCAL.name:
        from pathlib import Path

        from vertex_training.backends.local import console_url_at, logs_url_at, output_directory_at

        root = Path(local_root).resolve()  # as LocalBackend resolves it
        return {
            "console_url": console_url_at(root, name),
            "logs_url": logs_url_at(root, name),
            "output_directory": output_directory_at(root, name, named_output),
        }
    from vertex_training.backends.vertex import console_url_of, logs_url_of

    # Vertex AI gives a job that names no base output directory none.
    return {
        "console_url": console_url_of(name),
        "logs_url": logs_url_of(name),
        "output_directory": named_output,
    }
