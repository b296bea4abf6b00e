"""What differs between the places a job can run, as data: one descriptor per backend.

A job runs on Vertex AI (``vertex``) or on this machine (``local``). Everything the rest
of the package must know about that difference is a field of :class:`BackendKind`: whether
Google bills it, whether it runs in a Google Cloud project and region (so that regions,
quotas, buckets and the Vertex-only keys apply), the project a job records when the stack
names none, the first segment of its resource names, and whether this machine checks it
before submission. Code outside ``vertex_training.backends`` asks ``kind_of(job.backend)``
and never compares a backend's name; a new backend is one more descriptor here and one
more module in ``vertex_training.backends``.

The module is in the lowest layer because the lowest layer that reads a job's backend
(``packaging``, which uploads a package only for a job that runs on Google Cloud) is below
the stack config that parses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "KINDS",
    "LOCAL",
    "VERTEX",
    "BackendKind",
    "BackendName",
    "kind_of",
    "kind_of_resource",
]

#: The names a stack file's ``vertex-training:backend`` and a job's ``backend`` take.
BackendName = Literal["vertex", "local"]


@dataclass(frozen=True)
class BackendKind:
    """One backend, as the code that is not the backend itself sees it."""

    name: BackendName
    #: Google bills its jobs: the review prices them, the cost rules count them, a
    #: preview reads the price snapshot for them.
    billed: bool
    #: Its jobs run in a Google Cloud project and region: the region, quota and capacity
    #: rules apply, a package is uploaded to the staging bucket, the platform is created by
    #: default, and the keys only Vertex AI reads (networks, reservations, TensorBoard,
    #: prebuilt images of a region) are checked.
    cloud: bool
    #: The project a job records when its stack names none ("" when one must be named).
    default_project: str
    #: The first segment of its jobs' resource names (``projects/P/locations/R/...``, or
    #: ``local/...``).
    name_root: str
    #: This machine can check a job before submitting it (its image, its GPUs, its
    #: paths): ``vertex_training.backends.local.preflight``.
    preflight: bool
    #: How a review names where a job runs when a Google-only rule does not apply to it.
    runs_on: str


VERTEX: Final = BackendKind(
    name="vertex",
    billed=True,
    cloud=True,
    default_project="",
    name_root="projects",
    preflight=False,
    runs_on="runs on Vertex AI",
)
LOCAL: Final = BackendKind(
    name="local",
    billed=False,
    cloud=False,
    default_project="local",
    name_root="local",
    preflight=True,
    runs_on="runs on the local backend",
)

#: Every backend by name, the default first.
KINDS: Mapping[str, BackendKind] = {kind.name: kind for kind in (VERTEX, LOCAL)}
BACKENDS: tuple[BackendName, ...] = tuple(kind.name for kind in KINDS.values())
#: The backend of a job whose stack and job name none.
DEFAULT_BACKEND: Final[BackendName] = VERTEX.name


def kind_of(name: str | None) -> BackendKind:
    """The descriptor of backend ``name`` (the default's for none); ValueError for a name
    no backend has (a stack file's is refused at parse, naming the key)."""
    if not name:
        return KINDS[DEFAULT_BACKEND]
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown backend {name!r}: one of {', '.join(BACKENDS)}") from None


def kind_of_resource(resource_name: str) -> BackendKind | None:
    """The backend whose jobs' resource names start as ``resource_name`` does; None for a
    name of no backend's form."""
    root = resource_name.split("/", 1)[0]
    return next((kind for kind in KINDS.values() if kind.name_root == root), None)
