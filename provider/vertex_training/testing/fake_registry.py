"""A fake Artifact Registry (``google.devtools.artifactregistry.v1.ArtifactRegistry``), real
gRPC on loopback, serving Docker images of the ``vertex-ai`` project's ``training`` and
``prediction`` repositories.

The real ``google.cloud.artifactregistry_v1.ArtifactRegistryClient`` talks to it through a
local channel to ``FakeRegistry.address`` (``vertex_training.catalog.registry
.make_client`` with a loopback endpoint); the method is served with
``grpc.method_handlers_generic_handler`` under its real name.

**Every image here is invented**: names follow Google's pattern, but which versions
exist, their digests and upload times are made up. A snapshot read from this fake must
never be committed as ``prices/images.json``; its ``source`` is the fake's loopback
address, which says so.

References (github.com/googleapis/googleapis, ``google/devtools/artifactregistry/v1/
artifact.proto`` and ``repository.proto``), cited beside each behaviour:

- ``rpc ListDockerImages``: ``parent`` "The name of the parent resource whose docker
  images will be listed" (``projects/P/locations/L/repositories/R``); an unknown
  repository is NOT_FOUND. ``page_size`` "The maximum number of artifacts to return";
  ``next_page_token`` empty on the last page (AIP-158: a server may send fewer).
- ``DockerImage``: ``name`` ``projects/P/locations/L/repositories/R/dockerImages/
  IMAGE@sha256:DIGEST``, ``uri`` ``L-docker.pkg.dev/P/R/IMAGE@sha256:DIGEST``, ``tags``,
  ``upload_time``, ``media_type``, ``image_size_bytes``: one per digest, so an image
  rebuilt twice is listed twice, the newest carrying the ``latest`` tag.
- ``google/rpc/code.proto``: UNAVAILABLE "is most likely a transient condition", what
  ``fail_next`` injects; PERMISSION_DENIED what ``deny`` answers.

Command line::

    python -m vertex_training.testing.fake_registry --port 0 [--unavailable 2]

prints the address (``127.0.0.1:PORT``) on its first line and serves until stopped.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import sys
import threading
from collections.abc import Sequence
from typing import Any

import grpc
from google.cloud.artifactregistry_v1.types import artifact

from vertex_training.testing._loopback import GrpcLoopbackServer, serve_until_stopped

REGISTRY_SERVICE = "google.devtools.artifactregistry.v1.ArtifactRegistry"
LOCATIONS = ("us", "europe", "asia")
#: Image names listed per page at most, fewer than a client asks (AIP-158).
DEFAULT_MAX_PAGE_SIZE = 7
#: The invented images every location serves by default: Google's naming pattern, made-up
#: versions beside a few the package's table has (tf-cpu.2-17.py310 among them).
DEFAULT_IMAGES: tuple[str, ...] = (
    "tf-cpu.2-17.py310",
    "tf-gpu.2-17.py310",
    "tf-cpu.2-18.py310",
    "tf-gpu.2-18.py310",
    "pytorch-xla.2-4.py310",
    "pytorch-gpu.2-4.py310",
    "pytorch-xla.2-5.py310",
    "pytorch-gpu.2-5.py310",
    "pytorch-xla.2-6.py311",
    "pytorch-gpu.2-6.py311",
    "sklearn-cpu.1-6",
    "sklearn-cpu.1-7",
    "xgboost-cpu.2-1.py310",
    "xgboost-gpu.2-1.py310",
)
#: The invented prediction images (a model's serving image) every location serves by
#: default, in the ``prediction`` repository: Google's naming pattern, made-up versions
#: beside a few the package's table has.
DEFAULT_PREDICTION_IMAGES: tuple[str, ...] = (
    "tf2-cpu.2-15",
    "tf2-gpu.2-15",
    "pytorch-cpu.2-4",
    "pytorch-gpu.2-4",
    "sklearn-cpu.1-5",
    "sklearn-cpu.1-6",
    "sklearn-cpu.1-7",
    "xgboost-cpu.2-1",
)
#: Digests listed per image: each image was "rebuilt" this many times.
REBUILDS = 2
_EPOCH = datetime.datetime(2026, 10, 1, tzinfo=datetime.UTC)


def _digest(name: str, location: str, build: int) -> str:
    return "sha256:" + hashlib.sha256(f"{location}/{name}/{build}".encode()).hexdigest()


def docker_images(location: str, names: Sequence[str], repository: str = "training") -> list[Any]:
    """The DockerImage messages of one repository: every build of every name, the newest
    build tagged ``latest`` and with its version tag."""
    project = "vertex-ai"
    images = []
    for index, name in enumerate(names):
        for build in range(REBUILDS):
            digest = _digest(name, location, build)
            newest = build == REBUILDS - 1
            uploaded = _EPOCH + datetime.timedelta(days=index, hours=build)
            pb = artifact.DockerImage.pb()(
                name=f"projects/{project}/locations/{location}/repositories/{repository}/"
                f"dockerImages/{name}@{digest}",
                uri=f"{location}-docker.pkg.dev/{project}/{repository}/{name}@{digest}",
                tags=["latest", name.split(".", 1)[1]] if newest else [],
                image_size_bytes=4_000_000_000 + index,
                media_type="application/vnd.docker.distribution.manifest.v2+json",
            )
            pb.upload_time.FromDatetime(uploaded)
            images.append(pb)
    return images


class FakeRegistry(GrpcLoopbackServer):
    """A fake ArtifactRegistry on 127.0.0.1 serving ListDockerImages; a context manager.

    ``images`` maps a location to the image names its ``training`` repository holds
    (default: ``DEFAULT_IMAGES`` in each of us, europe and asia); ``prediction_images``
    those of its ``prediction`` repository (default: ``DEFAULT_PREDICTION_IMAGES`` in each
    location ``images`` names).
    """

    def __init__(
        self,
        *,
        images: dict[str, Sequence[str]] | None = None,
        prediction_images: dict[str, Sequence[str]] | None = None,
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        port: int = 0,
    ) -> None:
        chosen = images if images is not None else {loc: DEFAULT_IMAGES for loc in LOCATIONS}
        serving = (
            prediction_images
            if prediction_images is not None
            else {loc: DEFAULT_PREDICTION_IMAGES for loc in chosen}
        )
        self._by_parent = {
            f"projects/vertex-ai/locations/{location}/repositories/{repository}": docker_images(
                location, names, repository
            )
            for repository, held in (("training", chosen), ("prediction", serving))
            for location, names in held.items()
        }
        self._max_page_size = max_page_size
        super().__init__(port, workers=2)
        self._lock = threading.Lock()
        self._failures: list[grpc.StatusCode] = []
        self.calls: list[tuple[str, str]] = []

    def fail_next(
        self, times: int = 1, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    ) -> None:
        """Fail the next ``times`` calls with ``code``."""
        with self._lock:
            self._failures += [code] * times

    def deny(self) -> None:
        """Answer every call PERMISSION_DENIED, as Google does an identity it refuses."""
        self.fail_next(1_000_000, grpc.StatusCode.PERMISSION_DENIED)

    def _handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        def serialize(message: Any) -> bytes:
            data: bytes = message.SerializeToString()
            return data

        return (
            grpc.method_handlers_generic_handler(
                REGISTRY_SERVICE,
                {
                    "ListDockerImages": grpc.unary_unary_rpc_method_handler(
                        self._list_docker_images,
                        request_deserializer=artifact.ListDockerImagesRequest.deserialize,
                        response_serializer=serialize,
                    )
                },
            ),
        )

    def _list_docker_images(self, request: Any, context: Any) -> Any:
        with self._lock:
            self.calls.append((request.parent, request.page_token))
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            context.abort(failure, f"{failure.name} (injected by the fake registry)")
        if request.parent not in self._by_parent:
            context.abort(grpc.StatusCode.NOT_FOUND, f"Repository {request.parent} not found")
        images = self._by_parent[request.parent]
        limit = min(request.page_size or self._max_page_size, self._max_page_size)
        try:
            start = int(request.page_token) if request.page_token else 0
        except ValueError:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid page_token")
        end = start + limit
        return artifact.ListDockerImagesResponse.pb()(
            docker_images=images[start:end],
            next_page_token=str(end) if end < len(images) else "",
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake Artifact Registry (invented images) until stopped; print its address."""
    parser = argparse.ArgumentParser(
        prog="python -m vertex_training.testing.fake_registry", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument(
        "--unavailable", type=int, default=0, help="fail the first N calls with UNAVAILABLE"
    )
    args = parser.parse_args(argv)
    fake = FakeRegistry(port=args.port)
    fake.fail_next(args.unavailable)
    return serve_until_stopped(fake)


if __name__ == "__main__":
    sys.exit(main())
