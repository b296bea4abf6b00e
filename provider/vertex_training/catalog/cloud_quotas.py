"""Read a project's Vertex AI quotas from the Cloud Quotas API: ``read_limits``.

``read_limits`` lists the QuotaInfos of ``aiplatform.googleapis.com``
(``CloudQuotas.ListQuotaInfos``, ``google/api/cloudquotas/v1/cloudquotas.proto``; parent
``projects/P/locations/global/services/aiplatform.googleapis.com``: the ID after
``locations/`` "must be global", resources.proto) page by page, and keeps, for the
metrics asked for, each region's value: the ``DimensionsInfo`` whose ``dimensions`` name
the region, else the one with no ``region`` dimension, which "applies to all the dimension
values except for those that have another DimensionsInfo" (resources.proto). Its
``details.value`` is "the value currently in effect and being enforced": a limit, not what
is free. Cloud Quotas reports no usage; jobs already running use part of the limit.

- The client is ``google.cloud.cloudquotas_v1.CloudQuotasClient`` (google-cloud-quotas),
  imported only when a read runs; without the package the error gives the pip command.
- Credentials: those pulumi-gcp would use (``vertex_training.credentials``: its
  variables, else application default credentials: ``gcloud auth application-default
  login``, or CI's workload identity). Without them, ``QuotasError`` says so; a caller
  reports "could not be checked", never a pass.
- ``endpoint`` (``HOST:PORT``): a loopback host gets a local channel, with no credentials
  unless some are set (the fake of ``vertex_training.testing.fake_quotas``), any other
  host TLS; ``client`` replaces the client.
- Transient errors (UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL, RESOURCE_EXHAUSTED) are
  retried with backoff (the service's own config retries UNAVAILABLE,
  ``cloudquotas_v1_grpc_service_config.json``) for at most ``DEADLINE_S`` in all; every
  other failure is ``QuotasError`` with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from vertex_training.catalog._google import catalog_credentials, is_loopback, transient_retry
from vertex_training.catalog.quotas import SERVICE, Limit, Limits
from vertex_training.credentials import loopback_channel
from vertex_training.errors import CredentialsError, QuotasError

if TYPE_CHECKING:
    from google.cloud.cloudquotas_v1 import CloudQuotasClient

#: The API's own host (the proto's ``default_host``).
DEFAULT_ENDPOINT = "cloudquotas.googleapis.com"
#: QuotaInfos asked for a page (the server "may return fewer").
PAGE_SIZE = 500
#: Per-call timeout of one page (the service config's is 60 s; a plan waits less).
PAGE_TIMEOUT_S = 10.0
#: The longest wait between two tries (shorter than the catalog reads': plan waits on it).
RETRY_MAX_S = 5.0
#: The whole read, every page and retry included, ends within this.
DEADLINE_S = 30.0
#: The dimension that names a region (resources.proto: "region", "zone", ...).
REGION_DIMENSION = "region"
INSTALL_HINT = ".venv/bin/python -m pip install google-cloud-quotas==0.6.3"
CREDENTIALS_HINT = "run with Google credentials (gcloud auth application-default login)"

#: Reads (project, metrics, regions) -> limits: what ``vertex_training.review.plan`` is given.
Reader = Callable[[str, Iterable[str], Iterable[str]], Limits]


def _cloudquotas() -> Any:
    """The google-cloud-quotas module, or the error that says how to install it."""
    try:
        from google.cloud import cloudquotas_v1
    except ImportError:
        raise QuotasError(
            f"reading quotas needs google-cloud-quotas, which is not installed: {INSTALL_HINT}"
        ) from None
    return cloudquotas_v1


def make_client(endpoint: str | None = None) -> CloudQuotasClient:
    """A Cloud Quotas client for ``endpoint`` (default: Google's), with the credentials
    pulumi-gcp would use (``catalog_credentials``)."""
    cloudquotas_v1 = _cloudquotas()
    try:
        credentials = catalog_credentials(endpoint)
    except CredentialsError as exc:
        # The message's fix is a laptop's; the reason alone names what was wrong.
        head = str(exc).split(":", 1)[0]
        found = "no Google credentials" if head.startswith("no Google credentials") else None
        reason = found or f"no usable Google credentials ({head})"
        raise QuotasError(str(exc), reason) from exc
    if endpoint and is_loopback(endpoint):
        from google.cloud.cloudquotas_v1.services.cloud_quotas.transports import (
            CloudQuotasGrpcTransport,
        )

        transport = CloudQuotasGrpcTransport(channel=loopback_channel(endpoint, credentials))
        client: CloudQuotasClient = cloudquotas_v1.CloudQuotasClient(transport=transport)
        return client
    try:
        client = cloudquotas_v1.CloudQuotasClient(
            credentials=credentials,
            client_options={"api_endpoint": endpoint} if endpoint else None,
        )
    except Exception as exc:  # google.auth's DefaultCredentialsError and kin
        raise QuotasError(f"no Google credentials ({type(exc).__name__})") from exc
    return client


def service_parent(project: str) -> str:
    """``projects/P/locations/global/services/aiplatform.googleapis.com``. The client has
    path helpers for locations and QuotaInfos but none for the Service resource."""
    cloudquotas_v1 = _cloudquotas()
    location: str = cloudquotas_v1.CloudQuotasClient.common_location_path(project, "global")
    return f"{location}/services/{SERVICE}"


def read_limits(
    project: str,
    metrics: Iterable[str],
    regions: Iterable[str],
    *,
    client: CloudQuotasClient | None = None,
    endpoint: str | None = None,
    deadline_s: float = DEADLINE_S,
    clock: Callable[[], float] = time.monotonic,
) -> Limits:
    """The limits of ``metrics`` (full names, ``aiplatform.googleapis.com/...``) in
    ``regions`` of ``project``; ``QuotasError`` says why they could not be read."""
    from google.api_core import exceptions

    wanted, places = frozenset(metrics), tuple(sorted(set(regions)))
    quotas = client if client is not None else make_client(endpoint)
    source = endpoint or DEFAULT_ENDPOINT
    limits = Limits(project=project, source=source)
    seen: set[str] = set()
    ends = clock() + deadline_s
    try:
        pager = quotas.list_quota_infos(
            request={"parent": service_parent(project), "page_size": PAGE_SIZE},
            retry=transient_retry(deadline_s, RETRY_MAX_S),
            timeout=PAGE_TIMEOUT_S,
        )
        for page in pager.pages:
            for info in type(page).pb(page).quota_infos:
                seen.add(info.metric)
                if info.metric in wanted:
                    for region in places:
                        limit = _limit(info, region)
                        if limit is not None:
                            limits.by_key[(info.metric, region)] = limit
            if clock() > ends:
                raise QuotasError(f"{source} answered too slowly (over {deadline_s:g}s)")
    except exceptions.RetryError as exc:
        raise QuotasError(f"{source} kept failing for {deadline_s:g}s ({exc.cause})") from exc
    except (exceptions.PermissionDenied, exceptions.Unauthenticated) as exc:
        raise QuotasError(
            f"{source} refused to list the quotas of {project} ({exc.message}): the identity "
            "needs cloudquotas.quotas.get (roles/cloudquotas.viewer)"
        ) from exc
    except exceptions.GoogleAPICallError as exc:
        code = exc.grpc_status_code.name if exc.grpc_status_code is not None else ""
        raise QuotasError(f"{source} answered {code} {exc.message}".strip()) from exc
    except Exception as exc:  # google.auth's errors when credentials are missing or refused
        if isinstance(exc, QuotasError):
            raise
        if type(exc).__module__.startswith("google.auth"):
            raise QuotasError(f"no Google credentials ({type(exc).__name__})") from exc
        raise
    limits.metrics = frozenset(seen)
    return limits


def _limit(info: Any, region: str) -> Limit | None:
    """The value of the QuotaInfo ``info`` in ``region``: the DimensionsInfo naming it,
    else the one without a region dimension; None when neither exists."""
    fallback = None
    for entry in info.dimensions_infos:
        named = entry.dimensions.get(REGION_DIMENSION)
        if named == region:
            return _as_limit(info, region, entry.details.value, specific=True)
        if named is None and fallback is None:
            fallback = entry
    if fallback is None:
        return None
    return _as_limit(info, region, fallback.details.value, specific=False)


def _as_limit(info: Any, region: str, value: int, *, specific: bool) -> Limit:
    # A negative value reads as no limit, as QuotaConfig's -1 means "unlimited"
    # (resources.proto); QuotaDetails does not say so itself.
    return Limit(info.metric, region, value if value >= 0 else None, info.quota_id, specific)


def reader(endpoint: str | None = None, client: CloudQuotasClient | None = None) -> Reader:
    """A ``Reader`` for ``vertex_training.review.plan``: ``read_limits`` at ``endpoint``."""

    def read(project: str, metrics: Iterable[str], regions: Iterable[str]) -> Limits:
        return read_limits(project, metrics, regions, client=client, endpoint=endpoint)

    return read
