"""Read prices from Google's Cloud Billing Catalog, and machine shapes from Compute
Engine, into a snapshot: ``refresh``.

``refresh`` lists every SKU of Vertex AI's and Compute Engine's services
(``CloudCatalog.ListSkus``, ``google/cloud/billing/v1/cloud_catalog.proto``; the pager
fetches each page in turn), keeps the ones an estimate may use
(``vertex_training.catalog.billing.keep``) in the regions asked for, and returns a
``vertex_training.catalog.prices.Snapshot`` dated now. Tens of thousands of SKUs are read and
a few hundred kept; ``progress`` is told after every page.

- The client is ``google.cloud.billing_v1.CloudCatalogClient`` (google-cloud-billing),
  imported only here and only when a refresh runs; without the package the error gives
  the pip command that installs it.
- Credentials: an API key (``api_key``, sent as ``client_options.api_key``; to a
  loopback endpoint as ``x-goog-api-key`` metadata), else those pulumi-gcp would use
  (``vertex_training.credentials``: ``GOOGLE_OAUTH_ACCESS_TOKEN``, ``GOOGLE_CREDENTIALS``,
  else application default credentials: ``gcloud auth application-default login``, or
  the workload identity of CI).
- ``endpoint`` (``HOST:PORT``) points the client elsewhere: a loopback host gets a
  local channel, with no credentials unless some are set (the fake catalog of
  ``vertex_training.testing.fake_catalog``), any other host TLS. ``client`` replaces the
  client altogether.
- Transient errors (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED) are
  retried with backoff, page by page; other errors become ``PricesError`` with the fix.
- Before the SKUs, the vCPUs and memory of the catalogue's machine types are read from
  Compute Engine's MachineTypes API (``vertex_training.catalog.shapes``) in a ``project``, the
  same way: ``compute_endpoint`` (a loopback one is ``vertex_training.testing.fake_compute``),
  ``compute_client``, the same credentials, API key and retries.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from vertex_training.catalog import billing, machines, shapes
from vertex_training.catalog._google import (
    API_KEY_HEADER,
    RETRY_DEADLINE_S,
    catalog_credentials,
    credentials_advice,
    is_loopback,
    transient_retry,
)
from vertex_training.catalog.prices import MachineShape, Sku, Snapshot, Tier, usd
from vertex_training.credentials import loopback_channel
from vertex_training.errors import PricesError

if TYPE_CHECKING:
    from google.cloud.billing_v1 import CloudCatalogClient
    from google.cloud.compute_v1 import MachineTypesClient

__all__ = ["DEFAULT_ENDPOINT", "Progress", "is_loopback", "make_client", "refresh"]

#: The catalog's own host (the proto's ``default_host``).
DEFAULT_ENDPOINT = "cloudbilling.googleapis.com"
#: SKUs asked for a page (the proto's default; a server may send fewer).
PAGE_SIZE = 5000
CURRENCY = "USD"
#: Per-call timeout of one page.
PAGE_TIMEOUT_S = 60.0
INSTALL_HINT = ".venv/bin/python -m pip install google-cloud-billing==1.21.0"

#: Told after each page: (service, SKUs read so far, SKUs kept so far).
Progress = Callable[[str, int, int], None]


def _billing() -> Any:
    """The google-cloud-billing module, or the error that says how to install it."""
    try:
        from google.cloud import billing_v1
    except ImportError:
        raise PricesError(
            f"reading prices needs google-cloud-billing, which is not installed: {INSTALL_HINT}"
        ) from None
    return billing_v1


def make_client(endpoint: str | None = None, api_key: str | None = None) -> CloudCatalogClient:
    """A catalog client for ``endpoint`` (default: Google's), with ``api_key``, else the
    credentials pulumi-gcp would use (``catalog_credentials``)."""
    billing_v1 = _billing()
    try:
        credentials = None if api_key else catalog_credentials(endpoint)
    except Exception as exc:  # CredentialsError, google.auth's errors
        raise PricesError(credentials_advice(exc)) from exc
    if endpoint and is_loopback(endpoint):
        from google.cloud.billing_v1.services.cloud_catalog.transports import (
            CloudCatalogGrpcTransport,
        )

        channel = loopback_channel(endpoint, credentials)
        transport = CloudCatalogGrpcTransport(channel=channel)
        client: CloudCatalogClient = billing_v1.CloudCatalogClient(transport=transport)
        return client
    options: dict[str, str] = {}
    if endpoint:
        options["api_endpoint"] = endpoint
    if api_key:
        options["api_key"] = api_key
    try:
        client = billing_v1.CloudCatalogClient(
            credentials=credentials, client_options=options or None
        )
    except Exception as exc:  # google.auth's DefaultCredentialsError and kin
        raise PricesError(credentials_advice(exc)) from exc
    return client


def _sku(pb: Any, service: str) -> Sku | None:
    """A catalog ``Sku`` message as a snapshot ``Sku``; None when it has no price."""
    if not pb.pricing_info:
        return None
    info = pb.pricing_info[-1]  # "a timeline ... in chronological order": the last is now
    expression = info.pricing_expression
    tiers = tuple(
        Tier(rate.start_usage_amount, usd(rate.unit_price.units, rate.unit_price.nanos))
        for rate in sorted(expression.tiered_rates, key=lambda r: r.start_usage_amount)
    )
    if not tiers:
        return None
    effective = info.effective_time
    return Sku(
        sku_id=pb.sku_id,
        description=pb.description,
        service=service,
        resource_family=pb.category.resource_family,
        resource_group=pb.category.resource_group,
        usage_type=pb.category.usage_type,
        regions=tuple(pb.service_regions),
        unit=expression.usage_unit,
        unit_description=expression.usage_unit_description,
        tiers=tiers,
        effective_time=(
            effective.ToDatetime(datetime.UTC).isoformat() if effective.seconds else ""
        ),
    )


def refresh(
    regions: Sequence[str] | None = None,
    *,
    client: CloudCatalogClient | None = None,
    endpoint: str | None = None,
    api_key: str | None = None,
    progress: Progress | None = None,
    now: Callable[[], datetime.datetime] | None = None,
    compute_client: MachineTypesClient | None = None,
    compute_endpoint: str | None = None,
    project: str | None = None,
) -> Snapshot:
    """Read the machine types' shapes and both services' SKUs; keep those estimates use
    in ``regions``.

    ``regions`` defaults to every region Vertex AI trains in
    (``vertex_training.catalog.machines.TRAINING_REGIONS``). ``project`` is the one machine
    types are listed in (``shapes.project_for``).
    """
    from google.api_core import exceptions

    wanted_regions = tuple(sorted(regions or machines.TRAINING_REGIONS))
    unknown = [r for r in wanted_regions if r not in machines.TRAINING_REGIONS]
    if unknown:
        raise PricesError(
            f"--region {', '.join(unknown)}: not a region Vertex AI trains in, as this "
            f"package's catalogue lists them: {', '.join(sorted(machines.TRAINING_REGIONS))}"
        )
    clock = now or (lambda: datetime.datetime.now(datetime.UTC))
    machine_shapes = _read_shapes(
        wanted_regions,
        client=compute_client,
        endpoint=compute_endpoint,
        api_key=api_key,
        project=project,
        progress=progress,
    )
    shapes_read_at = clock()
    catalog = client if client is not None else make_client(endpoint, api_key)
    metadata = _key_metadata(api_key, endpoint, client)
    kept: list[Sku] = []
    for service in billing.SERVICES:
        try:
            kept += _read_service(catalog, service, wanted_regions, metadata, progress)
        except exceptions.GoogleAPICallError as exc:
            raise PricesError(_call_advice(service, exc)) from exc
        except exceptions.RetryError as exc:
            raise PricesError(
                f"{service}: the price catalog kept failing for {RETRY_DEADLINE_S:g}s "
                f"({exc.cause}); try again later"
            ) from exc
    return Snapshot(
        read_at=clock(),
        source=endpoint or DEFAULT_ENDPOINT,
        regions=wanted_regions,
        skus=tuple(kept),
        machine_shapes=machine_shapes,
        shapes_read_at=shapes_read_at,
        shapes_source=compute_endpoint or shapes.DEFAULT_ENDPOINT,
    )


def _key_metadata(api_key: str | None, endpoint: str | None, client: Any) -> list[tuple[str, str]]:
    """The API key as a header, for a loopback endpoint this module's client talks to."""
    loopback_key = api_key if endpoint and is_loopback(endpoint) and client is None else None
    return [(API_KEY_HEADER, loopback_key)] if loopback_key else []


def _read_shapes(
    regions: tuple[str, ...],
    *,
    client: Any,
    endpoint: str | None,
    api_key: str | None,
    project: str | None,
    progress: Progress | None,
) -> tuple[MachineShape, ...]:
    """The machine types' shapes in ``regions`` (``shapes.read_shapes``)."""
    import requests
    from google.api_core import exceptions

    where = f"{shapes.DEFAULT_ENDPOINT} machineTypes"
    compute = client if client is not None else shapes.make_client(endpoint, api_key)
    try:
        found, unreachable = shapes.read_shapes(
            compute,
            shapes.project_for(project, endpoint),
            regions,
            metadata=_key_metadata(api_key, endpoint, client),
            retry=transient_retry(),
            timeout=PAGE_TIMEOUT_S,
            progress=progress,
        )
    except exceptions.GoogleAPICallError as exc:
        # Over HTTP the message is "GET <url>: <Google's message>": the URL is left out.
        said = str(exc.message).split(": ", 1)[-1] if exc.response is not None else exc.message
        refused = (exceptions.Forbidden, exceptions.Unauthorized)  # 403, 401 (and gRPC's kin)
        if isinstance(exc, refused):
            raise PricesError(
                f"{where}: {said}: {credentials_advice(exc, 'machine types')} (the identity "
                "must be allowed compute.machineTypes.list, as in roles/compute.viewer)"
            ) from exc
        raise PricesError(f"{where}: Compute Engine answered {exc.code} {said}") from exc
    except exceptions.RetryError as exc:
        raise PricesError(
            f"{where}: Compute Engine kept failing for {RETRY_DEADLINE_S:g}s "
            f"({exc.cause}); try again later"
        ) from exc
    except requests.exceptions.ConnectionError as exc:  # the REST transport's own
        raise PricesError(
            f"{where}: {endpoint or shapes.DEFAULT_ENDPOINT} could not be reached "
            f"({type(exc).__name__}): check --compute-endpoint and the network"
        ) from exc
    if unreachable and progress is not None:
        progress(f"{where} (unreachable: {', '.join(unreachable)})", 0, len(found))
    return found


def _read_service(
    catalog: Any,
    service: str,
    regions: Iterable[str],
    metadata: list[tuple[str, str]],
    progress: Progress | None,
) -> list[Sku]:
    pager = catalog.list_skus(
        request={"parent": service, "currency_code": CURRENCY, "page_size": PAGE_SIZE},
        retry=transient_retry(),
        timeout=PAGE_TIMEOUT_S,
        metadata=metadata,
    )
    read, kept = 0, []
    for page in pager.pages:
        raw = type(page).pb(page).skus  # the protobuf messages, without proto-plus wrappers
        read += len(raw)
        converted = [sku for pb in raw if (sku := _sku(pb, service)) is not None]
        kept += billing.keep(converted, regions)
        if progress is not None:
            progress(service, read, len(kept))
    return kept


def _call_advice(service: str, exc: Any) -> str:
    from google.api_core import exceptions

    if isinstance(exc, (exceptions.PermissionDenied, exceptions.Unauthenticated)):
        return f"{service}: {exc.message}: {credentials_advice(exc)}"
    return (
        f"{service}: the price catalog answered {exc.code.name if exc.code else ''} {exc.message}"
    )
