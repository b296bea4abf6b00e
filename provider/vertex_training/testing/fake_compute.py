"""A fake of Compute Engine's MachineTypes API (compute v1), HTTP/JSON on loopback.

The real ``google.cloud.compute_v1.MachineTypesClient`` talks to it over its REST
transport, pointed here with ``client_options={"api_endpoint": "http://127.0.0.1:PORT"}``
and anonymous credentials (``vertex_training.catalog.shapes.make_client`` with a loopback
endpoint). It is a stdlib ``http.server`` in a thread.

**Every shape here is invented.** The names are real machine type names, but each one's
vCPUs and memory come from the rule of ``shape_of`` (a per-family ratio chosen so that
tests can compute expected figures, deliberately not Google's): a snapshot read from this
fake must never be committed. Its ``shapes_source`` is the fake's loopback address,
which says so.

References (the compute v1 discovery document, as generated into google-cloud-compute
1.57.0, ``google/cloud/compute_v1/types/compute.py`` and the REST transport's
``rest_base.py``), cited beside each behaviour:

- ``GET /compute/v1/projects/{project}/aggregated/machineTypes``
  (``MachineTypes.AggregatedList``) and ``GET /compute/v1/projects/{project}/zones/{zone}
  /machineTypes`` (``MachineTypes.List``), with ``filter``, ``maxResults`` ("0 to 500,
  inclusive. (Default: 500)"), ``pageToken`` and ``returnPartialSuccess``; other query
  parameters (``$alt``, ``orderBy``, ``includeAllScopes``) are accepted and ignored.
- ``filter``: the regular-expression form only (``name eq "n1-standard-4|e2-.*"``, RE2
  matching "the entire field"; ``ne`` for its negation), on ``name``; anything else is
  400 INVALID_ARGUMENT here (Google accepts more).
- ``MachineTypeAggregatedList``: ``kind``, ``id``, ``items`` keyed ``zones/<zone>``, each a
  ``MachineTypesScopedList`` of ``machineTypes`` or, when empty, a ``warning`` (code
  ``NO_RESULTS_ON_PAGE``); ``nextPageToken`` (absent on the last page); ``unreachables``
  (the zones ``unreachable`` names, their machines left out). ``returnPartialSuccess`` is
  accepted and changes nothing: the method's docstring recommends it, but 1.57.0's
  ``AggregatedListMachineTypesRequest`` has no such field, so the client never sends it.
- ``MachineType``: ``kind``, ``id`` (a uint64, as a JSON string), ``name``,
  ``description``, ``guestCpus``, ``memoryMb`` (MiB), ``isSharedCpu``, ``accelerators``
  (``guestAcceleratorType``, ``guestAcceleratorCount``), ``deprecated`` (``state``),
  ``zone``, ``selfLink``, ``maximumPersistentDisks``, ``maximumPersistentDisksSizeGb``.
- Errors are Google's JSON error body (``{"error": {"code", "message", "status",
  "errors"}}``), which ``google.api_core.exceptions.from_http_response`` maps: 503 is
  ``ServiceUnavailable``, the transient error ``fail_next`` injects.

What it serves by default: every machine of ``MACHINE_NAMES`` in every zone of
``ZONES``, except ``a3-ultragpu-8g`` (us-central1-a only), ``LACKING`` (``a4-highgpu-8g``,
served nowhere), decoys no estimate asks for (``e2-micro``, shared-core), and a deprecated
``n1-highcpu-96``.

Command line (``make prices`` points a refresh at it)::

    python -m vertex_training.testing.fake_compute --port 0 [--unavailable 2]

prints the address (``127.0.0.1:PORT``) on its first line and serves until stopped.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import urllib.parse
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType
from typing import Any, NamedTuple, Self

from vertex_training.testing._loopback import LOOPBACK_HOST, LoopbackServer, serve_until_stopped

__all__ = [
    "LACKING",
    "MACHINE_NAMES",
    "ZONES",
    "Call",
    "FakeCompute",
    "FakeMachine",
    "main",
    "shape_of",
]

API_KEY_HEADER = "x-goog-api-key"
#: ``maxResults``: the API's largest and default page (compute.py).
API_MAX_RESULTS = 500
DEFAULT_MAX_PAGE_SIZE = API_MAX_RESULTS
MIB_PER_GIB = 1024
AGGREGATED = re.compile(r"^/compute/v1/projects/(?P<project>[^/]+)/aggregated/machineTypes$")
ZONAL = re.compile(r"^/compute/v1/projects/(?P<project>[^/]+)/zones/(?P<zone>[^/]+)/machineTypes$")
FILTER = re.compile(r'^\s*name\s+(?P<op>eq|ne)\s+(?P<quote>["\']?)(?P<pattern>.+?)(?P=quote)\s*$')

#: Zones served: two of each region here (names as Compute Engine spells them).
ZONES: tuple[str, ...] = tuple(
    f"{region}-{letter}"
    for region in (
        "us-central1",
        "us-east1",
        "us-west1",
        "europe-west1",
        "europe-west4",
        "asia-east1",
        "asia-southeast1",
    )
    for letter in ("a", "b")
)

#: Invented GiB of memory per vCPU, by the machine's shape word (not Google's ratios).
GIB_PER_VCPU: Mapping[str, float] = MappingProxyType(
    {"standard": 3.5, "highmem": 7.5, "highcpu": 1.25, "megamem": 15.5, "ultramem": 24.25}
)
#: Invented vCPUs and GiB per GPU of an accelerator-optimized machine (``<series>-<n>g``).
VCPUS_PER_GPU = 11
GIB_PER_GPU = 83.5
#: The GPU each series' machines come with, as Compute Engine names accelerator types.
SERIES_GPUS: Mapping[str, str] = MappingProxyType(
    {
        "a2-highgpu": "nvidia-tesla-a100",
        "a2-megagpu": "nvidia-tesla-a100",
        "a2-ultragpu": "nvidia-a100-80gb",
        "a3-highgpu": "nvidia-h100-80gb",
        "a3-megagpu": "nvidia-h100-mega-80gb",
        "a3-ultragpu": "nvidia-h200-141gb",
        "a4-highgpu": "nvidia-b200",
        "a4x-highgpu": "nvidia-gb200",
    }
)
_CPU_SIZES = (2, 4, 8, 12, 16, 24, 30, 32, 48, 56, 60, 64, 80, 96, 112, 128, 224)
_CPU_FAMILIES = ("e2", "n1", "n2", "n2d", "c2", "c2d")
_GPU_COUNTS = (1, 2, 4, 8, 16)

#: Every predefined machine type name the fake knows (served or not).
MACHINE_NAMES: tuple[str, ...] = (
    *(
        f"{family}-{shape}-{size}"
        for family in _CPU_FAMILIES
        for shape in ("standard", "highmem", "highcpu")
        for size in _CPU_SIZES
    ),
    *(f"g2-standard-{size}" for size in (4, 8, 12, 16, 24, 32, 48, 96)),
    *(f"g4-standard-{size}" for size in (48, 96, 192, 384)),
    *(f"m1-ultramem-{size}" for size in (40, 80, 160)),
    "m1-megamem-96",
    *(f"{series}-{count}g" for series in SERIES_GPUS for count in _GPU_COUNTS),
)
#: A machine the catalogue offers that the fake serves in no zone.
LACKING = "a4-highgpu-8g"
#: Machines served in these zones only (the others: every zone).
ONLY_IN: Mapping[str, tuple[str, ...]] = MappingProxyType({"a3-ultragpu-8g": ("us-central1-a",)})
#: Shared-core decoys: (name, guestCpus, memoryMb), never asked for by a refresh.
SHARED_CORE: tuple[tuple[str, int, int], ...] = (("e2-micro", 2, 1024), ("e2-small", 2, 2048))
#: A deprecated machine: name -> ``deprecated.state``.
DEPRECATED: Mapping[str, str] = MappingProxyType({"n1-highcpu-96": "DEPRECATED"})


@dataclass(frozen=True)
class FakeMachine:
    """One machine type as the fake serves it (in every zone it is offered in)."""

    name: str
    guest_cpus: int
    memory_mb: int
    accelerators: tuple[tuple[str, int], ...] = ()
    is_shared_cpu: bool = False
    deprecated: str = ""

    @property
    def memory_gib(self) -> float:
        return self.memory_mb / MIB_PER_GIB

    def to_json(self, project: str, zone: str) -> dict[str, Any]:
        """The machine as ``MachineType`` JSON in ``zone``."""
        body: dict[str, Any] = {
            "kind": "compute#machineType",
            "id": str(zlib.crc32(self.name.encode())),
            "creationTimestamp": "1969-12-31T16:00:00.000-08:00",
            "name": self.name,
            "description": f"{self.guest_cpus} vCPUs, {self.memory_gib:g} GB RAM (invented)",
            "guestCpus": self.guest_cpus,
            "memoryMb": self.memory_mb,
            "maximumPersistentDisks": 128,
            "maximumPersistentDisksSizeGb": "263168",
            "zone": zone,
            "selfLink": (
                f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}"
                f"/machineTypes/{self.name}"
            ),
            "isSharedCpu": self.is_shared_cpu,
            "architecture": "X86_64",
        }
        if self.accelerators:
            body["accelerators"] = [
                {"guestAcceleratorType": kind, "guestAcceleratorCount": count}
                for kind, count in self.accelerators
            ]
        if self.deprecated:
            body["deprecated"] = {"state": self.deprecated, "replacement": ""}
        return body


def shape_of(name: str) -> FakeMachine:
    """The invented shape of ``name``: ``<family>-<shape>-<vCPUs>`` has that many vCPUs and
    ``GIB_PER_VCPU[shape]`` GiB each; ``<series>-<n>g`` has ``n`` GPUs, ``VCPUS_PER_GPU``
    vCPUs and ``GIB_PER_GPU`` GiB per GPU."""
    if match := re.fullmatch(r"(?P<series>[a-z0-9]+-[a-z]+gpu)-(?P<count>\d+)g", name):
        count = int(match["count"])
        return FakeMachine(
            name,
            VCPUS_PER_GPU * count,
            round(GIB_PER_GPU * count * MIB_PER_GIB),
            ((SERIES_GPUS[match["series"]], count),),
            deprecated=DEPRECATED.get(name, ""),
        )
    _family, shape, size = name.rsplit("-", 2)
    vcpus = int(size)
    return FakeMachine(
        name,
        vcpus,
        round(vcpus * GIB_PER_VCPU[shape] * MIB_PER_GIB),
        deprecated=DEPRECATED.get(name, ""),
    )


def default_machines() -> dict[str, tuple[FakeMachine, tuple[str, ...]]]:
    """name -> (machine, zones serving it): what the fake serves by default."""
    served = {
        name: (shape_of(name), ONLY_IN.get(name, ZONES))
        for name in MACHINE_NAMES
        if name != LACKING
    }
    for name, cpus, memory in SHARED_CORE:
        served[name] = (FakeMachine(name, cpus, memory, is_shared_cpu=True), ZONES)
    return served


class Call(NamedTuple):
    """One request the fake received: its path, query parameters and headers."""

    path: str
    query: dict[str, str]
    headers: dict[str, str]


class _Error(Exception):
    def __init__(self, status: HTTPStatus, message: str, reason: str) -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason


#: Google's ``status`` word for each HTTP status the fake answers.
_STATUS_WORDS: Mapping[int, str] = MappingProxyType(
    {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        500: "INTERNAL",
        503: "UNAVAILABLE",
    }
)


class FakeCompute(LoopbackServer):
    """A fake MachineTypes API on 127.0.0.1, for the real REST client; a context manager.

    ``max_page_size`` caps a page below ``maxResults``; ``unreachable`` names zones that
    are down; ``api_key`` makes every call without that ``x-goog-api-key`` 401.
    ``fail_next`` injects errors; ``calls`` shows what was asked.
    """

    def __init__(
        self,
        *,
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        unreachable: Sequence[str] = (),
        api_key: str | None = None,
        port: int = 0,
    ) -> None:
        self.machines = default_machines()
        self._max_page_size = max_page_size
        self._unreachable = tuple(unreachable)
        self._api_key = api_key
        self._port = port
        self._lock = threading.Lock()
        self._failures: list[HTTPStatus] = []
        self._calls: list[Call] = []
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.address = ""

    def start(self) -> Self:
        """Start serving; ``address`` is then ``127.0.0.1:PORT``."""
        if self._server is None:
            fake = self

            class Handler(BaseHTTPRequestHandler):
                def do_GET(self) -> None:  # the http.server hook's name
                    fake._answer(self)

                def log_message(self, format: str, *args: Any) -> None:  # quiet
                    return

            server = ThreadingHTTPServer((LOOPBACK_HOST, self._port), Handler)
            server.daemon_threads = True
            self._server = server
            self._thread = threading.Thread(target=server.serve_forever, daemon=True)
            self._thread.start()
            self.address = f"{LOOPBACK_HOST}:{server.server_address[1]}"
        return self

    def stop(self) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    @property
    def calls(self) -> list[Call]:
        """Every request so far, in order."""
        with self._lock:
            return list(self._calls)

    def fail_next(
        self, times: int = 1, status: HTTPStatus = HTTPStatus.SERVICE_UNAVAILABLE
    ) -> None:
        """Fail the next ``times`` requests with ``status`` (503: transient)."""
        with self._lock:
            self._failures += [status] * times

    # -- the service ---------------------------------------------------------------------

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        url = urllib.parse.urlsplit(request.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query).items()}
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            self._calls.append(Call(url.path, query, headers))
            failure = self._failures.pop(0) if self._failures else None
        try:
            if failure is not None:
                raise _Error(failure, f"{failure.phrase} (injected by the fake).", "backendError")
            if self._api_key is not None and headers.get(API_KEY_HEADER) != self._api_key:
                raise _Error(
                    HTTPStatus.UNAUTHORIZED, "API key not valid (fake compute).", "authError"
                )
            if match := AGGREGATED.match(url.path):
                body = self._aggregated(match["project"], query)
            elif match := ZONAL.match(url.path):
                body = self._zonal(match["project"], match["zone"], query)
            else:
                raise _Error(HTTPStatus.NOT_FOUND, f"{url.path} not found", "notFound")
            self._send(request, HTTPStatus.OK, body)
        except _Error as error:
            self._send(
                request,
                error.status,
                {
                    "error": {
                        "code": int(error.status),
                        "message": error.message,
                        "status": _STATUS_WORDS.get(int(error.status), "UNKNOWN"),
                        "errors": [
                            {"message": error.message, "domain": "global", "reason": error.reason}
                        ],
                    }
                },
            )

    @staticmethod
    def _send(request: BaseHTTPRequestHandler, status: HTTPStatus, body: Mapping[str, Any]) -> None:
        data = json.dumps(body).encode()
        request.send_response(status)
        request.send_header("Content-Type", "application/json; charset=UTF-8")
        request.send_header("Content-Length", str(len(data)))
        request.end_headers()
        request.wfile.write(data)

    def _matches(self, query: Mapping[str, str]) -> Any:
        """The ``filter`` as a predicate on a name (the regular-expression form only)."""
        text = query.get("filter", "")
        if not text:
            return lambda name: True
        match = FILTER.match(text)
        if match is None:
            raise _Error(
                HTTPStatus.BAD_REQUEST,
                f"Invalid value for field 'filter': '{text}' (the fake reads `name eq REGEX` only)",
                "invalid",
            )
        try:
            pattern = re.compile(match["pattern"])
        except re.error as exc:
            raise _Error(
                HTTPStatus.BAD_REQUEST, f"Invalid filter regex: {exc}", "invalid"
            ) from None
        keep = match["op"] == "eq"
        return lambda name: (pattern.fullmatch(name) is not None) == keep

    def _page_size(self, query: Mapping[str, str]) -> int:
        try:
            asked = int(query.get("maxResults", API_MAX_RESULTS))
        except ValueError:
            raise _Error(
                HTTPStatus.BAD_REQUEST, "Invalid value for maxResults", "invalid"
            ) from None
        if not 0 <= asked <= API_MAX_RESULTS:
            raise _Error(
                HTTPStatus.BAD_REQUEST,
                f"Invalid value for field 'maxResults': {asked}. Must be in [0, 500].",
                "invalid",
            )
        return min(asked or API_MAX_RESULTS, self._max_page_size)

    def _offset(self, query: Mapping[str, str]) -> int:
        token = query.get("pageToken", "")
        try:
            return int(token.removeprefix("page-")) if token else 0
        except ValueError:
            raise _Error(
                HTTPStatus.BAD_REQUEST, f"Invalid pageToken {token!r}", "invalid"
            ) from None

    def _listed(
        self, zones: Sequence[str], query: Mapping[str, str]
    ) -> list[tuple[str, FakeMachine]]:
        matches = self._matches(query)
        return [
            (zone, machine)
            for zone in sorted(zones)
            for name, (machine, served) in sorted(self.machines.items())
            if zone in served and matches(name)
        ]

    def _aggregated(self, project: str, query: Mapping[str, str]) -> dict[str, Any]:
        down = [z for z in self._unreachable if z in ZONES]
        rows = self._listed([z for z in ZONES if z not in down], query)
        start, size = self._offset(query), self._page_size(query)
        page = rows[start : start + size]
        items: dict[str, Any] = {}
        for zone in ZONES:
            in_zone = [m.to_json(project, zone) for z, m in page if z == zone]
            items[f"zones/{zone}"] = (
                {"machineTypes": in_zone}
                if in_zone
                else {
                    "warning": {
                        "code": "NO_RESULTS_ON_PAGE",
                        "message": "There are no results for scope 'zones/"
                        + zone
                        + "' on this page.",
                        "data": [{"key": "scope", "value": f"zones/{zone}"}],
                    }
                }
            )
        body: dict[str, Any] = {
            "kind": "compute#machineTypeAggregatedList",
            "id": f"projects/{project}/aggregated/machineTypes",
            "items": items,
            "selfLink": f"https://www.googleapis.com/compute/v1/projects/{project}/aggregated/machineTypes",
        }
        if start + size < len(rows):
            body["nextPageToken"] = f"page-{start + size}"
        if down:
            body["unreachables"] = [f"zones/{z}" for z in down]
        return body

    def _zonal(self, project: str, zone: str, query: Mapping[str, str]) -> dict[str, Any]:
        if zone not in ZONES:
            raise _Error(
                HTTPStatus.NOT_FOUND, f"The resource 'zones/{zone}' was not found", "notFound"
            )
        rows = self._listed([zone], query)
        start, size = self._offset(query), self._page_size(query)
        body: dict[str, Any] = {
            "kind": "compute#machineTypeList",
            "id": f"projects/{project}/zones/{zone}/machineTypes",
            "items": [m.to_json(project, zone) for _, m in rows[start : start + size]],
        }
        if start + size < len(rows):
            body["nextPageToken"] = f"page-{start + size}"
        return body


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake MachineTypes API (invented shapes) until SIGTERM or SIGINT; print the
    address."""
    parser = argparse.ArgumentParser(
        prog="python -m vertex_training.testing.fake_compute", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--max-page-size", type=int, default=DEFAULT_MAX_PAGE_SIZE)
    parser.add_argument(
        "--unavailable", type=int, default=0, help="fail the first N requests with 503"
    )
    args = parser.parse_args(argv)
    fake = FakeCompute(max_page_size=args.max_page_size, port=args.port)
    fake.fail_next(args.unavailable)
    return serve_until_stopped(fake)


if __name__ == "__main__":
    sys.exit(main())
