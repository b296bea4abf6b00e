"""A fake Cloud Billing Catalog (``google.cloud.billing.v1.CloudCatalog``), real gRPC on loopback.

The real ``google.cloud.billing_v1.CloudCatalogClient`` talks to it through a local
channel to ``FakeCatalog.address`` (``vertex_training.catalog.refresh.make_client`` with a
loopback endpoint). The package ships no servicer class, so the two methods are served
with ``grpc.method_handlers_generic_handler`` under their real names.

**Every price here is invented.** The descriptions, categories, units and regions
follow the shapes of real catalog output, but no figure is Google's: a snapshot read
from this fake must never be committed as ``prices/snapshot.json``. Its ``source`` is
the fake's loopback address, which says so.

References (github.com/googleapis/googleapis, ``google/cloud/billing/v1/cloud_catalog.proto``,
unless stated), cited beside each behaviour below:

- ``rpc ListServices`` / ``rpc ListSkus``: ``page_size`` "Defaults to 5000", and a
  response's ``next_page_token`` is empty on the last page. The fake serves at most
  ``max_page_size`` (default 500) a page, fewer than asked, as a server may (AIP-158:
  "the page size ... is a maximum").
- ``ListSkusRequest.parent``: "services/6F81-5844-456A"; an unknown service is
  NOT_FOUND. ``currency_code``: USD when unset; the fake serves USD only.
- ``Sku``: ``name``, ``sku_id``, ``description``, ``category`` (``service_display_name``,
  ``resource_family``, ``resource_group``, ``usage_type``), ``service_regions``,
  ``pricing_info`` (``effective_time``, ``pricing_expression`` with ``usage_unit``,
  ``usage_unit_description``, ``base_unit``, ``base_unit_conversion_factor``,
  ``display_quantity``, ``tiered_rates`` of ``start_usage_amount`` and a
  ``google.type.Money`` ``unit_price``), ``service_provider_name``, ``geo_taxonomy``.
- ``google/rpc/code.proto``: UNAVAILABLE "is most likely a transient condition", what
  ``fail_next`` injects.

The traps a client must survive, all served by default:

- Descriptions are not consistent: "RAM" and "Ram", "management fee" and "Management
  fee", "running in <place>" and "in <place>", and they name places ("Iowa",
  "Netherlands", "Americas"), never region IDs.
- Multi-region SKUs: Compute Engine's Spot and DWS SKUs cover several regions
  ("running in Americas"), and us-central1 also has its own N1 Spot SKU at another price.
- A free first tier: the "Storage PD Capacity" SKUs are free up to 30 GiBy.mo.
- Many pages (``max_page_size``), and ``filler`` SKUs that no estimate uses.
- Spot descriptions that contain on-demand ones ("Spot Preemptible N1 Predefined
  Instance Core" beside "N1 Predefined Instance Core", usage types "Preemptible" and
  "OnDemand"), and decoys: committed-use ("Commit1Yr") and reserved SKUs.
- A region lacking a GPU SKU: asia-east1 has no Vertex AI "NVIDIA L4" SKU.
- Transient UNAVAILABLE errors: ``fail_next`` (``--unavailable N`` on the command line).

Command line (``make prices`` points a refresh at it)::

    python -m vertex_training.testing.fake_catalog --port 0 [--filler 50000] [--unavailable 2]

prints the address (``127.0.0.1:PORT``) on its first line and serves until stopped.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import grpc
from google.cloud.billing_v1.types import cloud_catalog as cc

from vertex_training.testing._loopback import GrpcLoopbackServer, serve_until_stopped

__all__ = ["COMPUTE", "VERTEX", "Call", "FakeCatalog", "FakeSku", "default_skus", "main"]

CATALOG_SERVICE = "google.cloud.billing.v1.CloudCatalog"
VERTEX = "services/C7E2-9256-1C43"
COMPUTE = "services/6F81-5844-456A"
#: Services served: ID -> display name (renamed in 2026: clients look services up by ID).
SERVICES = {
    VERTEX: "Gemini Enterprise Agent Platform",
    COMPUTE: "Compute Engine",
    "services/95FF-2EF5-5EA1": "Cloud Storage",
}
#: cloud_catalog.proto: page_size "Defaults to 5000".
DEFAULT_PAGE_SIZE = 5000
DEFAULT_MAX_PAGE_SIZE = 500
API_KEY_HEADER = "x-goog-api-key"
EFFECTIVE_SECONDS = 1_767_225_600  # 2026-01-01T00:00:00Z, invented
NANOS = 1_000_000_000
_GRPC_WORKERS = 4

#: Regions served, with the place names descriptions use, and their multi-region group.
REGIONS: dict[str, tuple[str, str]] = {
    "us-central1": ("Iowa", "Americas"),
    "us-east1": ("South Carolina", "Americas"),
    "europe-west4": ("Netherlands", "EMEA"),
    "asia-east1": ("Taiwan", "APAC"),
}
#: Invented price multiplier per region.
REGION_FACTOR = {"us-central1": 1.0, "us-east1": 1.0, "europe-west4": 1.1, "asia-east1": 1.2}

# Invented base prices (USD per unit) by resource.
#: family -> (core name, ram name, USD per vCPU hour, USD per GiB hour)
FAMILIES: dict[str, tuple[str, str, float, float]] = {
    "n1": ("N1 Predefined Instance Core", "N1 Predefined Instance Ram", 0.0380, 0.0051),
    "e2": ("E2 Instance Core", "E2 Instance Ram", 0.0250, 0.0034),
    "n2": ("N2 Instance Core", "N2 Instance Ram", 0.0360, 0.0048),
    "n2d": ("N2D AMD Instance Core", "N2D AMD Instance Ram", 0.0310, 0.0042),
    "c2": ("Compute optimized Core", "Compute optimized Ram", 0.0390, 0.0052),
    "c2d": ("C2D AMD Instance Core", "C2D AMD Instance Ram", 0.0340, 0.0046),
    "m1": ("Memory-optimized Instance Core", "Memory-optimized Instance Ram", 0.0400, 0.0060),
    "a2": ("A2 Instance Core", "A2 Instance Ram", 0.0360, 0.0048),
    "a3": ("A3 Instance Core", "A3 Instance Ram", 0.0350, 0.0047),
    "a4": ("A4 Instance Core", "A4 Instance Ram", 0.0370, 0.0049),
    "g2": ("G2 Instance Core", "G2 Instance Ram", 0.0300, 0.0040),
}
#: accelerator -> (Vertex AI name, Compute Engine name, USD per hour)
GPUS: dict[str, tuple[str, str, float]] = {
    "P100": ("NVIDIA Tesla P100", "Nvidia Tesla P100 GPU", 1.50),
    "V100": ("NVIDIA Tesla V100", "Nvidia Tesla V100 GPU", 2.50),
    "P4": ("NVIDIA Tesla P4", "Nvidia Tesla P4 GPU", 0.60),
    "T4": ("NVIDIA Tesla T4", "Nvidia Tesla T4 GPU", 0.40),
    "A100": ("NVIDIA Tesla A100", "Nvidia Tesla A100 GPU", 2.90),
    "A100_80GB": ("NVIDIA Tesla A100 80GB", "Nvidia Tesla A100 80GB GPU", 3.90),
    "L4": ("NVIDIA L4", "Nvidia L4 GPU", 0.70),
    "H100": ("NVIDIA H100 80GB", "Nvidia H100 80GB GPU", 9.80),
    "H100_MEGA": ("NVIDIA H100 Mega 80GB", "Nvidia H100 Mega 80GB GPU", 10.50),
    "H200": ("NVIDIA H200 141GB", "Nvidia H200 141GB GPU", 11.00),
    "B200": ("NVIDIA B200", "Nvidia B200 GPU", 13.00),
}
#: TPU (Vertex AI only) -> (name, USD per chip hour)
TPUS: dict[str, tuple[str, float]] = {
    "TPU_V2": ("TPU v2", 0.55),
    "TPU_V3": ("TPU v3", 1.00),
    "TPU_V4_POD": ("TPU v4 Pod", 3.20),
    "TPU_V5_LITEPOD": ("TPU v5e", 1.20),
}
#: disk -> (name, resource group, USD per GiB month, free first tier in GiBy.mo)
DISKS: dict[str, tuple[str, str, float, float]] = {
    "pd-ssd": ("SSD backed PD Capacity", "SSD", 0.17, 0),
    "pd-standard": ("Storage PD Capacity", "PDStandard", 0.04, 30),
    "hyperdisk-balanced": ("Hyperdisk Balanced Capacity", "Hyperdisk", 0.08, 0),
}
#: Invented factors: Vertex AI's on-demand training price and its management fee, as
#: fractions of Compute Engine's on-demand price; Spot and DWS as fractions of it too.
VERTEX_FACTOR, FEE_FACTOR, SPOT_FACTOR, DWS_FACTOR = 1.15, 0.15, 0.30, 0.55
#: The N1 Spot SKU of us-central1 alone, beside the Americas one (invented).
N1_SPOT_US_CENTRAL1_FACTOR = 0.28
#: asia-east1 lacks this Vertex AI GPU SKU.
MISSING_VERTEX_GPU = ("asia-east1", "L4")


@dataclass(frozen=True)
class FakeSku:
    """One SKU as the fake serves it (the invented figures in plain form)."""

    service: str
    description: str
    resource_family: str
    resource_group: str
    usage_type: str
    regions: tuple[str, ...]
    unit: str
    unit_description: str
    #: (start_usage_amount, USD per unit), ascending.
    tiers: tuple[tuple[float, float], ...]
    sku_id: str = field(default="")

    def with_id(self) -> FakeSku:
        digest = hashlib.sha256(
            f"{self.service}|{self.description}|{self.usage_type}|{self.regions}".encode()
        ).hexdigest()[:12]
        sku_id = "-".join(digest[i : i + 4] for i in range(0, 12, 4)).upper()
        return FakeSku(**{**self.__dict__, "sku_id": sku_id})

    def usd(self, usage: float = 1.0) -> float:
        """The price per unit of the tier covering ``usage`` (for hand-computed checks)."""
        chosen = self.tiers[0][1]
        for start, price in self.tiers[1:]:
            if start < usage:
                chosen = price
        return chosen

    def to_pb(self) -> Any:
        """The SKU as a ``google.cloud.billing.v1.Sku`` protobuf message."""
        rates = [
            {
                "start_usage_amount": start,
                "unit_price": {
                    "currency_code": "USD",
                    "units": int(price),
                    "nanos": round((price - int(price)) * NANOS),
                },
            }
            for start, price in self.tiers
        ]
        base_unit, factor = ("s", 3600.0) if self.unit == "h" else ("By.s", 3600.0 * 2**30)
        if self.unit == "GiBy.mo":
            base_unit, factor = "By.s", 2**30 * 730 * 3600.0
        return cc.Sku.pb()(
            name=f"{self.service}/skus/{self.sku_id}",
            sku_id=self.sku_id,
            description=self.description,
            category={
                "service_display_name": SERVICES[self.service],
                "resource_family": self.resource_family,
                "resource_group": self.resource_group,
                "usage_type": self.usage_type,
            },
            service_regions=list(self.regions),
            pricing_info=[
                {
                    "effective_time": {"seconds": EFFECTIVE_SECONDS},
                    "pricing_expression": {
                        "usage_unit": self.unit,
                        "usage_unit_description": self.unit_description,
                        "base_unit": base_unit,
                        "base_unit_conversion_factor": factor,
                        "display_quantity": 1,
                        "tiered_rates": rates,
                    },
                    "currency_conversion_rate": 1.0,
                }
            ],
            service_provider_name="Google",
            geo_taxonomy={"type_": 3 if len(self.regions) > 1 else 2, "regions": self.regions},
        )


def _in(region: str, index: int) -> str:
    """A place clause, worded one way or the other (the catalog is not consistent)."""
    place = REGIONS[region][0]
    return f"running in {place}" if index % 2 else f"in {place}"


def default_skus() -> list[FakeSku]:
    """The fake's SKUs (prices invented), traps included; IDs filled in."""
    skus: list[FakeSku] = []

    def add(*args: Any) -> None:
        skus.append(FakeSku(*args).with_id())

    groups: dict[str, list[str]] = {}
    for region, (_place, group) in REGIONS.items():
        groups.setdefault(group, []).append(region)
    h, gib_h, gib_mo = ("h", "hour"), ("GiBy.h", "gibibyte hour"), ("GiBy.mo", "gibibyte month")
    for index, (region, factor) in enumerate(REGION_FACTOR.items()):
        regions: tuple[str, ...] = (region,)
        for family, (core, ram, core_usd, ram_usd) in FAMILIES.items():
            ram_word = ram if index % 2 else ram.replace("Ram", "RAM")
            group = "N1Standard" if family == "n1" else "CPU"
            vertex = "Vertex AI: Training/Pipelines on"
            fee = "Vertex AI: Training/Pipelines management fee on"
            fee_word = fee if index % 2 else fee.replace("management fee", "Management fee")
            add(
                VERTEX,
                f"{vertex} {core} {_in(region, index)}",
                "Compute",
                group,
                "OnDemand",
                regions,
                *h,
                ((0, core_usd * VERTEX_FACTOR * factor),),
            )
            add(
                VERTEX,
                f"{vertex} {ram_word} {_in(region, index + 1)}",
                "Compute",
                "N1Standard" if family == "n1" else "RAM",
                "OnDemand",
                regions,
                *gib_h,
                ((0, ram_usd * VERTEX_FACTOR * factor),),
            )
            add(
                VERTEX,
                f"{fee_word} {core} {_in(region, index)}",
                "Compute",
                group,
                "OnDemand",
                regions,
                *h,
                ((0, core_usd * FEE_FACTOR * factor),),
            )
            add(
                VERTEX,
                f"{fee_word} {ram_word} {_in(region, index)}",
                "Compute",
                "N1Standard" if family == "n1" else "RAM",
                "OnDemand",
                regions,
                *gib_h,
                ((0, ram_usd * FEE_FACTOR * factor),),
            )
        for gpu, (vertex_name, _compute_name, gpu_usd) in GPUS.items():
            fee_word = "management fee" if index % 2 else "Management fee"
            if (region, gpu) != MISSING_VERTEX_GPU:
                add(
                    VERTEX,
                    f"Vertex AI: Training/Pipelines on {vertex_name} {_in(region, index)}",
                    "Compute",
                    "GPU",
                    "OnDemand",
                    regions,
                    *h,
                    ((0, gpu_usd * VERTEX_FACTOR * factor),),
                )
            add(
                VERTEX,
                f"Vertex AI: Training/Pipelines {fee_word} on {vertex_name} {_in(region, index)}",
                "Compute",
                "GPU",
                "OnDemand",
                regions,
                *h,
                ((0, gpu_usd * FEE_FACTOR * factor),),
            )
        for name, tpu_usd in TPUS.values():
            add(
                VERTEX,
                f"Vertex AI: Training/Pipelines on {name} {_in(region, index)}",
                "Compute",
                "TPU",
                "OnDemand",
                regions,
                *h,
                ((0, tpu_usd * factor),),
            )
        for name, group, disk_usd, free in DISKS.values():
            tiers = ((0, 0.0), (free, disk_usd * factor)) if free else ((0, disk_usd * factor),)
            vertex_tiers = (
                ((0, 0.0), (free, disk_usd * VERTEX_FACTOR * factor))
                if free
                else ((0, disk_usd * VERTEX_FACTOR * factor),)
            )
            add(
                VERTEX,
                f"Vertex AI: Training/Pipelines on {name} {_in(region, index)}",
                "Storage",
                group,
                "OnDemand",
                regions,
                *gib_mo,
                vertex_tiers,
            )
            add(
                COMPUTE,
                f"{name} {_in(region, index)}",
                "Storage",
                group,
                "OnDemand",
                regions,
                *gib_mo,
                tiers,
            )
        # Compute Engine on-demand GPUs (decoys for Spot and DWS, which contain no place).
        for _vertex_name, compute_name, gpu_usd in GPUS.values():
            add(
                COMPUTE,
                f"{compute_name} running in {REGIONS[region][0]}",
                "Compute",
                "GPU",
                "OnDemand",
                regions,
                *h,
                ((0, gpu_usd * factor),),
            )
            add(
                COMPUTE,
                f"Reserved {compute_name} in {REGIONS[region][0]}",
                "Compute",
                "GPU",
                "Reserved",
                regions,
                *h,
                ((0, 0.0),),
            )
    # Compute Engine Spot and DWS SKUs: multi-region, "running in <group>".
    for group_name, members in groups.items():
        regions = tuple(members)
        factor = REGION_FACTOR[members[0]]
        for family, (core, ram, core_usd, ram_usd) in FAMILIES.items():
            group = "N1Standard" if family == "n1" else "CPU"
            ram_group = "N1Standard" if family == "n1" else "RAM"
            where = f"running in {group_name}"
            add(
                COMPUTE,
                f"{core} {where}",
                "Compute",
                group,
                "OnDemand",
                regions,
                *h,
                ((0, core_usd * factor),),
            )
            add(
                COMPUTE,
                f"{ram} {where}",
                "Compute",
                ram_group,
                "OnDemand",
                regions,
                *gib_h,
                ((0, ram_usd * factor),),
            )
            add(
                COMPUTE,
                f"Spot Preemptible {core} {where}",
                "Compute",
                group,
                "Preemptible",
                regions,
                *h,
                ((0, core_usd * SPOT_FACTOR * factor),),
            )
            add(
                COMPUTE,
                f"Spot Preemptible {ram} {where}",
                "Compute",
                ram_group,
                "Preemptible",
                regions,
                *gib_h,
                ((0, ram_usd * SPOT_FACTOR * factor),),
            )
            add(
                COMPUTE,
                f"DWS Defined Duration {core} {where}",
                "Compute",
                group,
                "OnDemand",
                regions,
                *h,
                ((0, core_usd * DWS_FACTOR * factor),),
            )
            add(
                COMPUTE,
                f"DWS Defined Duration {ram} {where}",
                "Compute",
                ram_group,
                "OnDemand",
                regions,
                *gib_h,
                ((0, ram_usd * DWS_FACTOR * factor),),
            )
            add(
                COMPUTE,
                f"Commitment v1: {core} in {group_name} for 1 Year",
                "Compute",
                group,
                "Commit1Yr",
                regions,
                *h,
                ((0, core_usd * 0.6 * factor),),
            )
        for _vertex_name, compute_name, gpu_usd in GPUS.values():
            add(
                COMPUTE,
                f"{compute_name} attached to Spot Preemptible VMs running in {group_name}",
                "Compute",
                "GPU",
                "Preemptible",
                regions,
                *h,
                ((0, gpu_usd * SPOT_FACTOR * factor),),
            )
            add(
                COMPUTE,
                f"{compute_name} attached to DWS Defined Duration VMs running in {group_name}",
                "Compute",
                "GPU",
                "OnDemand",
                regions,
                *h,
                ((0, gpu_usd * DWS_FACTOR * factor),),
            )
    # us-central1's own N1 Spot SKU, beside the Americas one.
    core, ram, core_usd, ram_usd = FAMILIES["n1"]
    add(
        COMPUTE,
        f"Spot Preemptible {core} running in Iowa",
        "Compute",
        "N1Standard",
        "Preemptible",
        ("us-central1",),
        *h,
        ((0, core_usd * N1_SPOT_US_CENTRAL1_FACTOR),),
    )
    return skus


def filler_skus(count: int) -> list[Any]:
    """``count`` SKUs no estimate uses (egress, licences), as protobuf messages."""
    template = FakeSku(
        COMPUTE,
        "",
        "Network",
        "Egress",
        "OnDemand",
        ("us-central1",),
        "GiBy",
        "gibibyte",
        ((0, 0.01),),
    )
    base = template.to_pb()
    pbs = []
    for number in range(count):
        pb = cc.Sku.pb()()
        pb.CopyFrom(base)
        sku_id = f"F{number:03X}-0000-0000"[:14]
        pb.sku_id = f"{number:012X}"
        pb.name = f"{COMPUTE}/skus/{pb.sku_id}"
        pb.description = f"Network Egress via Carrier Peering Network {number} from Iowa ({sku_id})"
        pbs.append(pb)
    return pbs


class Call(NamedTuple):
    """One RPC the fake received: method, its parent and page token, and its metadata."""

    method: str
    parent: str
    page_token: str
    page_size: int
    metadata: dict[str, str]


class FakeCatalog(GrpcLoopbackServer):
    """A fake CloudCatalog on 127.0.0.1, for the real client; a context manager.

    ``skus`` replaces the default SKUs; ``filler`` adds that many unused ones (the
    benchmark's 50,000); ``max_page_size`` caps a page; ``api_key`` makes every call
    without that ``x-goog-api-key`` UNAUTHENTICATED. ``fail_next`` injects errors;
    ``calls`` shows what was asked.
    """

    def __init__(
        self,
        *,
        skus: Sequence[FakeSku] | None = None,
        filler: int = 0,
        max_page_size: int = DEFAULT_MAX_PAGE_SIZE,
        api_key: str | None = None,
        port: int = 0,
    ) -> None:
        self.skus = list(default_skus() if skus is None else skus)
        self._by_service: dict[str, list[Any]] = {service: [] for service in SERVICES}
        for sku in self.skus:
            self._by_service[sku.service].append(sku.to_pb())
        self._by_service[COMPUTE] += filler_skus(filler)
        self._max_page_size = max_page_size
        self._api_key = api_key
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

    def sku_count(self, service: str) -> int:
        """How many SKUs ``service`` serves."""
        return len(self._by_service.get(service, []))

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
            CATALOG_SERVICE,
            {
                "ListServices": grpc.unary_unary_rpc_method_handler(
                    self._list_services,
                    request_deserializer=cc.ListServicesRequest.deserialize,
                    response_serializer=serialize,
                ),
                "ListSkus": grpc.unary_unary_rpc_method_handler(
                    self._list_skus,
                    request_deserializer=cc.ListSkusRequest.deserialize,
                    response_serializer=serialize,
                ),
            },
        )

    def _enter(self, method: str, parent: str, token: str, size: int, context: Any) -> None:
        """Record the call; answer an injected failure or a missing API key."""
        metadata = {k: v for k, v in context.invocation_metadata() if isinstance(v, str)}
        with self._lock:
            self._calls.append(Call(method, parent, token, size, metadata))
            failure = self._failures.pop(0) if self._failures else None
        if failure is not None:
            context.abort(failure, "the service is unavailable (injected by the fake)")
        if self._api_key is not None and metadata.get(API_KEY_HEADER) != self._api_key:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "API key not valid (fake catalog)")

    def _page(self, items: list[Any], size: int, token: str, context: Any) -> tuple[list[Any], str]:
        """One page (AIP-158): at most ``max_page_size``; the token is the next offset."""
        limit = min(size or DEFAULT_PAGE_SIZE, self._max_page_size)
        try:
            start = int(token.removeprefix("page-")) if token else 0
        except ValueError:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"invalid page_token {token!r}")
        end = start + limit
        return items[start:end], (f"page-{end}" if end < len(items) else "")

    def _list_services(self, request: Any, context: Any) -> Any:
        self._enter("ListServices", "", request.page_token, request.page_size, context)
        services = [
            {
                "name": name,
                "service_id": name.split("/")[1],
                "display_name": display,
                "business_entity_name": "businessEntities/GCP",
            }
            for name, display in SERVICES.items()
        ]
        page, token = self._page(services, request.page_size, request.page_token, context)
        return cc.ListServicesResponse.pb()(services=page, next_page_token=token)

    def _list_skus(self, request: Any, context: Any) -> Any:
        self._enter("ListSkus", request.parent, request.page_token, request.page_size, context)
        if request.parent not in self._by_service:
            context.abort(grpc.StatusCode.NOT_FOUND, f"{request.parent} not found")
        if request.currency_code not in ("", "USD"):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the fake catalog serves USD only")
        page, token = self._page(
            self._by_service[request.parent], request.page_size, request.page_token, context
        )
        return cc.ListSkusResponse.pb()(skus=page, next_page_token=token)


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake Cloud Catalog (invented prices) until SIGTERM or SIGINT; print its address."""
    parser = argparse.ArgumentParser(
        prog="python -m vertex_training.testing.fake_catalog", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--filler", type=int, default=0, help="add this many unused SKUs")
    parser.add_argument("--max-page-size", type=int, default=DEFAULT_MAX_PAGE_SIZE)
    parser.add_argument(
        "--unavailable", type=int, default=0, help="fail the first N calls with UNAVAILABLE"
    )
    args = parser.parse_args(argv)
    fake = FakeCatalog(filler=args.filler, max_page_size=args.max_page_size, port=args.port)
    fake.fail_next(args.unavailable)
    return serve_until_stopped(fake)


if __name__ == "__main__":
    sys.exit(main())
