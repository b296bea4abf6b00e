"""A fake Cloud Quotas service (``google.api.cloudquotas.v1.CloudQuotas``), real gRPC on loopback.

The real ``google.cloud.cloudquotas_v1.CloudQuotasClient`` talks to it through a
local channel to ``FakeQuotas.address`` (``vertex_training.catalog.cloud_quotas.make_client``
with a loopback endpoint). The package ships no servicer class, so the two read methods
are served with ``grpc.method_handlers_generic_handler`` under their real names.

**Every limit here is invented.** The metric names follow the ones Vertex AI's quota
errors quote (``aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus``); the
quota IDs are made up from them; no value is a project's real quota. This module keeps its
own copy of the names (the testing layer imports only ``vertex_training.api``).

References (github.com/googleapis/googleapis, ``google/api/cloudquotas/v1/``), cited beside
each behaviour below:

- ``cloudquotas.proto``, ``rpc ListQuotaInfos``: parent
  ``projects/*/locations/*/services/*``; ``page_size`` "Server may return fewer items than
  requested. If unspecified, server will pick an appropriate default"; ``next_page_token``
  "If this field is omitted, there are no subsequent pages". ``rpc GetQuotaInfo``: name
  ``projects/*/locations/*/services/*/quotaInfos/*``.
- ``resources.proto``, ``QuotaInfo``: "The ID component following "locations/" must be
  "global"" (the fake answers INVALID_ARGUMENT otherwise); ``quota_id``, ``metric``,
  ``service``, ``is_precise``, ``refresh_interval`` ("applies to rate quota only"),
  ``container_type``, ``dimensions``, ``dimensions_infos`` (one per region given a value,
  plus one without dimensions that "applies to all the dimension values except for those
  that have another DimensionsInfo"; ``applicable_locations``), ``details.value``,
  ``is_concurrent``.
- ``google/rpc/code.proto``: UNAVAILABLE "is most likely a transient condition", what
  ``fail_next`` injects; an unknown project or service is NOT_FOUND.

Served by default: the CPU, T4, L4 and A100 quotas of custom training and their
preemptible variants, with values per region (``DEFAULT_QUOTAS``), and request-rate quotas
that no job consumes (``filler``), over several pages (``max_page_size``).

Command line::

    python -m vertex_training.testing.fake_quotas --port 0 [--unavailable 2] [--project P]
        [--limit METRIC=REGION:VALUE ...]

prints the address (``127.0.0.1:PORT``) on its first line and serves until stopped.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import grpc
from google.cloud.cloudquotas_v1.types import cloudquotas as cq
from google.cloud.cloudquotas_v1.types import resources

from vertex_training.testing._loopback import GrpcLoopbackServer, serve_until_stopped

__all__ = ["DEFAULT_QUOTAS", "Call", "FakeQuota", "FakeQuotas", "main"]

QUOTAS_SERVICE = "google.api.cloudquotas.v1.CloudQuotas"
SERVICE = "aiplatform.googleapis.com"
#: The page size when a request names none (invented: the proto leaves it to the server).
DEFAULT_PAGE_SIZE = 100
DEFAULT_MAX_PAGE_SIZE = 10
#: Rate quotas served beside the training ones, so that a read spans several pages.
DEFAULT_FILLER = 25
_GRPC_WORKERS = 4


@dataclass(frozen=True)
class FakeQuota:
    """One quota as the fake serves it: its metric, and its value per region.

    ``values`` maps a region to its value; the key ``None`` is the default for every
    other region (a DimensionsInfo without dimensions). Values are invented.
    """

    metric: str
    values: Mapping[str | None, int]
    display_name: str = ""
    #: Rate quotas have one (resources.proto: "Refresh interval applies to rate quota only").
    refresh_interval: str = ""
    quota_id: str = field(default="")

    @property
    def id(self) -> str:
        """The quota ID: given, or made up from the metric (CamelCase, PerProjectPerRegion)."""
        if self.quota_id:
            return self.quota_id
        short = self.metric.rsplit("/", 1)[-1]
        return "".join(part.capitalize() for part in short.split("_")) + "PerProjectPerRegion"

    def to_pb(self, project: str) -> Any:
        """The quota as a ``google.api.cloudquotas.v1.QuotaInfo`` protobuf message."""
        infos = [
            {
                "dimensions": {"region": region},
                "details": {"value": value},
                "applicable_locations": [region],
            }
            for region, value in sorted((r, v) for r, v in self.values.items() if r is not None)
        ]
        if None in self.values:
            # The default's applicable_locations are not enumerated by the fake.
            infos.append({"dimensions": {}, "details": {"value": self.values[None]}})
        return resources.QuotaInfo.pb()(
            name=f"projects/{project}/locations/global/services/{SERVICE}/quotaInfos/{self.id}",
            quota_id=self.id,
            metric=self.metric,
            service=SERVICE,
            is_precise=not self.refresh_interval,
            refresh_interval=self.refresh_interval,
            container_type=resources.QuotaInfo.ContainerType.PROJECT,
            dimensions=["region"],
            metric_display_name=self.display_name or self.metric.rsplit("/", 1)[-1],
            quota_display_name=self.display_name or self.id,
            metric_unit="1" if not self.refresh_interval else "1/min/{project}/{region}",
            is_fixed=False,
            dimensions_infos=infos,
            is_concurrent=False,
        )


def _training(name: str, values: Mapping[str | None, int]) -> FakeQuota:
    return FakeQuota(f"{SERVICE}/custom_model_training_{name}", values)


#: The custom-training quotas served by default (values invented): us-central1 is
#: generous, europe-west4 small, every other region gets the default (key None).
DEFAULT_QUOTAS: tuple[FakeQuota, ...] = (
    _training("cpus", {"us-central1": 64, "europe-west4": 16, None: 8}),
    _training("preemptible_cpus", {"us-central1": 128, None: 16}),
    _training("nvidia_t4_gpus", {"us-central1": 4, "europe-west4": 1, None: 0}),
    _training("preemptible_nvidia_t4_gpus", {"us-central1": 8, None: 0}),
    _training("nvidia_l4_gpus", {"us-central1": 2, None: 0}),
    _training("nvidia_a100_gpus", {"us-central1": 0, None: 0}),
    _training("a2_cpus", {"us-central1": 48, None: 0}),
    _training("g2_cpus", {"us-central1": 24, None: 0}),
    _training("n2_cpus", {"us-central1": 32, None: 8}),
)


def filler(count: int) -> list[FakeQuota]:
    """``count`` request-rate quotas no job consumes (invented, like the real service's
    many online-prediction and generative AI rate quotas)."""
    return [
        FakeQuota(
            f"{SERVICE}/fake_requests_{number}",
            {None: 600},
            refresh_interval="minute",
        )
        for number in range(count)
    ]


class Call(NamedTuple):
    """One RPC the fake received: method, its parent or name, page token and size."""

    method: str
    target: str
    page_token: str
    page_size: int


class FakeQuotas(GrpcLoopbackServer):
    """A fake CloudQuotas on 127.0.0.1, for the real client; a context manager.

    ``quotas`` replaces the default quotas; ``filler`` adds that many rate quotas;
    ``max_page_size`` caps a page; ``projects`` limits the projects served (None: any).
    ``set_limit`` changes a value; ``fail_next`` injects errors; ``calls`` shows what was asked.
    """

    def __init__(
        self,
        *,
        quotas: Sequence[FakeQuota] | None = None,
        filler_count: int = DEFAULT_FILLER,
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        projects: Sequence[str] | None = None,
        port: int = 0,
    ) -> None:
        self.quotas: list[FakeQuota] = list(DEFAULT_QUOTAS if quotas is None else quotas)
        self.quotas += filler(filler_count)
        self._max_page_size = max_page_size
        self._projects = None if projects is None else frozenset(projects)
        super().__init__(port, workers=_GRPC_WORKERS)
        self._lock = threading.Lock()
        self._failures: list[grpc.StatusCode] = []
        self._calls: list[Call] = []

    def _handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        return (self._handler(),)

    @property
    def calls(self) -> list[Call]:
        """Every call so far, in order."""
        with self._lock:
            return list(self._calls)

    def set_limit(self, metric: str, region: str | None, value: int) -> None:
        """Set ``metric``'s value in ``region`` (None: the default), adding the quota if new."""
        with self._lock:
            for index, quota in enumerate(self.quotas):
                if quota.metric == metric:
                    values = {**quota.values, region: value}
                    self.quotas[index] = FakeQuota(quota.metric, values, quota.display_name)
                    return
            self.quotas.append(FakeQuota(metric, {region: value}))

    def fail_next(
        self, times: int = 1, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE
    ) -> None:
        """Fail the next ``times`` calls with ``code`` (UNAVAILABLE: transient, code.proto)."""
        with self._lock:
            self._failures += [code] * times

    # -- the service ---------------------------------------------------------------------

    def _handler(self) -> grpc.GenericRpcHandler:
        def serialize(message: Any) -> bytes:
            data: bytes = message.SerializeToString()
            return data

        return grpc.method_handlers_generic_handler(
            QUOTAS_SERVICE,
            {
                "ListQuotaInfos": grpc.unary_unary_rpc_method_handler(
                    self._list_quota_infos,
                    request_deserializer=cq.ListQuotaInfosRequest.deserialize,
                    response_serializer=serialize,
                ),
                "GetQuotaInfo": grpc.unary_unary_rpc_method_handler(
                    self._get_quota_info,
                    request_deserializer=cq.GetQuotaInfoRequest.deserialize,
                    response_serializer=serialize,
                ),
            },
        )

    def _enter(self, call: Call, context: Any) -> None:
        """Record the call; answer an injected failure."""
        with self._lock:
            self._calls.append(call)
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            context.abort(failure, "the service is unavailable (injected by the fake)")

    def _project_of(self, parent: str, context: Any) -> str:
        """The project of ``projects/P/locations/global/services/S``, or the error."""
        parts = parent.split("/")
        if len(parts) != 6 or parts[0] != "projects" or parts[2:5:2] != ["locations", "services"]:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"malformed parent {parent!r}")
        if parts[3] != "global":
            context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                'the ID component following "locations/" must be "global"',
            )
        if parts[5] != SERVICE:
            context.abort(grpc.StatusCode.NOT_FOUND, f"the fake serves {SERVICE} only")
        if self._projects is not None and parts[1] not in self._projects:
            context.abort(grpc.StatusCode.NOT_FOUND, f"project {parts[1]} not found")
        return parts[1]

    def _list_quota_infos(self, request: Any, context: Any) -> Any:
        self._enter(
            Call("ListQuotaInfos", request.parent, request.page_token, request.page_size),
            context,
        )
        project = self._project_of(request.parent, context)
        with self._lock:
            quotas = list(self.quotas)
        limit = min(request.page_size or DEFAULT_PAGE_SIZE, self._max_page_size)
        try:
            start = int(request.page_token.removeprefix("page-")) if request.page_token else 0
        except ValueError:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "invalid page_token")
        end = start + limit
        return cq.ListQuotaInfosResponse.pb()(
            quota_infos=[q.to_pb(project) for q in quotas[start:end]],
            next_page_token=f"page-{end}" if end < len(quotas) else "",
        )

    def _get_quota_info(self, request: Any, context: Any) -> Any:
        self._enter(Call("GetQuotaInfo", request.name, "", 0), context)
        parent, _, quota_id = request.name.partition("/quotaInfos/")
        project = self._project_of(parent, context)
        with self._lock:
            found = next((q for q in self.quotas if q.id == quota_id), None)
        if found is None:
            context.abort(grpc.StatusCode.NOT_FOUND, f"quota {quota_id} not found")
            return None  # abort raises; never reached
        return found.to_pb(project)


def _limit_arg(text: str) -> tuple[str, str | None, int]:
    """``METRIC=REGION:VALUE`` (REGION ``*``: the default) -> its parts."""
    metric, _, rest = text.partition("=")
    region, _, value = rest.rpartition(":")
    if not metric or not value.lstrip("-").isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: expected METRIC=REGION:VALUE")
    full = metric if "/" in metric else f"{SERVICE}/{metric}"
    return full, (None if region in ("", "*") else region), int(value)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake Cloud Quotas service (invented limits) until SIGTERM or SIGINT."""
    parser = argparse.ArgumentParser(
        prog="python -m vertex_training.testing.fake_quotas", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--max-page-size", type=int, default=DEFAULT_MAX_PAGE_SIZE)
    parser.add_argument(
        "--unavailable", type=int, default=0, help="fail the first N calls with UNAVAILABLE"
    )
    parser.add_argument(
        "--limit",
        type=_limit_arg,
        action="append",
        default=[],
        help="set a value: METRIC=REGION:VALUE (REGION * for the default), repeatable",
    )
    args = parser.parse_args(argv)
    fake = FakeQuotas(max_page_size=args.max_page_size, port=args.port)
    for metric, region, value in args.limit:
        fake.set_limit(metric, region, value)
    fake.fail_next(args.unavailable)
    return serve_until_stopped(fake)


if __name__ == "__main__":
    sys.exit(main())
