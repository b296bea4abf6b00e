"""Machine shapes from Compute Engine's MachineTypes API: ``read_shapes``.

Google bills custom training per resource (vCPU hours, GiB hours of memory,
accelerators, disk), so an estimate needs each machine type's vCPUs and memory. They are
read from Google, not typed: ``read_shapes`` asks ``MachineTypes.AggregatedList``
(``GET /compute/v1/projects/{project}/aggregated/machineTypes``) for the machine types
``vertex_training.catalog.machines`` offers, at refresh time, with the user's credentials; the
snapshot (``vertex_training.catalog.prices``) keeps what came back, dated.

The API, as Google's reference gives it (the compute v1 discovery document, generated
into google-cloud-compute 1.57.0, googleapis/google-cloud-python
``packages/google-cloud-compute/google/cloud/compute_v1/types/compute.py``; the same
fields in googleapis/googleapis ``google/cloud/compute/v1/compute.proto``):

- ``AggregatedListMachineTypesRequest``: ``project`` (required), ``filter`` (a regular
  expression with ``eq`` against one field, matching "the entire field", RE2 syntax;
  "You cannot combine constraints on multiple fields using regular expressions", so the
  zones are kept here, not filtered there), ``maxResults`` ("Acceptable values are 0 to
  500 ... (Default: 500)"), ``pageToken``. The method's docstring advises "set the
  ``returnPartialSuccess`` parameter to ``true``", but 1.57.0's request message has no such
  field (the client cannot send it): zones Google could not reach come back in
  ``unreachables``, and are reported.
- ``MachineTypeAggregatedList``: ``items`` (a map ``zones/<zone>`` ->
  ``MachineTypesScopedList`` with ``machineTypes`` and, for an empty scope, a
  ``warning``), ``nextPageToken``, ``unreachables``.
- ``MachineType``: ``guestCpus`` ("the number of virtual CPUs that are available to the
  instance"), ``memoryMb`` ("the amount of physical memory available to the instance,
  defined in MB"), ``accelerators`` (``guestAcceleratorType``, ``guestAcceleratorCount``),
  ``isSharedCpu``, ``deprecated`` (a ``DeprecationStatus`` with ``state``), ``zone``.

``memoryMb`` is MiB, whatever "MB" says: a recorded answer for n1-standard-1 reads
``"description": "1 vCPU, 3.75 GB RAM"``, ``"memoryMb": 3840`` (3.75 x 1024;
kubernetes/autoscaler ``cluster-autoscaler/cloudprovider/gce/gce_cloud_provider_test.go``,
whose provider reads ``MemoryMb * units.MiB``). The catalog prices RAM per GiB hour:
GiB = memoryMb / 1024 (``vertex_training.catalog.prices.MIB_PER_GIB``).

What is asked for: every machine type of the catalogue except those billed for their TPU
chips (``vertex_training.catalog.billing.billed_by_chips``: ``cloud-tpu`` is not a Compute Engine
machine type at all; ``ct5lp-*`` and ``ct4p-*`` are Cloud TPU hosts, whose vCPUs and memory
Vertex AI does not bill). A predefined machine type has one shape in every zone that
offers it; the shape kept is the one served in the first zone (by name) of the regions
refreshed, and its zone is recorded. A machine no zone of those regions offers is left
out: its estimate is unknown, naming it (``vertex_training.review.cost``).

- The client is ``google.cloud.compute_v1.MachineTypesClient`` (google-cloud-compute,
  REST transport), imported only here and only when a refresh runs.
- Credentials and retries are the catalog's (``vertex_training.catalog.refresh``): application
  default credentials or an API key (``client_options.api_key``; to a loopback endpoint
  as an ``x-goog-api-key`` header), transient errors (503, 504, 500, 429) retried with
  backoff, page by page; others become ``PricesError`` with the fix.
- ``endpoint`` (``HOST:PORT``) points the client elsewhere: a loopback host is spoken to
  over plain HTTP with anonymous credentials (``http://`` in ``api_endpoint``, which the
  REST transport keeps: its ``url_scheme`` applies only to a host without one), the fake
  of ``vertex_training.testing.fake_compute``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from vertex_training.catalog import billing, machines
from vertex_training.catalog._google import catalog_credentials, credentials_advice, is_loopback
from vertex_training.catalog.prices import MachineShape
from vertex_training.errors import PricesError

if TYPE_CHECKING:
    from google.cloud.compute_v1 import MachineTypesClient

#: Told after each page: (what is read, machine types read so far, shapes kept so far).
Progress = Callable[[str, int, int], None]

#: The MachineTypes API's own host (the client's ``DEFAULT_ENDPOINT``).
DEFAULT_ENDPOINT = "compute.googleapis.com"
#: Machine types asked for a page: the API's largest (and default) ``maxResults``.
PAGE_SIZE = 500
#: What ``progress`` is told the reads are of.
PROGRESS_NAME = f"{DEFAULT_ENDPOINT} machineTypes"
#: The project a loopback fake is asked about when none is given (the fake takes any).
LOOPBACK_PROJECT = "local"
#: Where the project comes from when ``--project`` is not given (then ADC's own).
PROJECT_ENV = ("GOOGLE_CLOUD_PROJECT", "CLOUDSDK_CORE_PROJECT")
INSTALL_HINT = ".venv/bin/python -m pip install google-cloud-compute==1.57.0"


def _compute() -> Any:
    """The google-cloud-compute module, or the error that says how to install it."""
    try:
        from google.cloud import compute_v1
    except ImportError:
        raise PricesError(
            f"reading machine types needs google-cloud-compute, which is not installed: "
            f"{INSTALL_HINT}"
        ) from None
    return compute_v1


def wanted_machines() -> tuple[str, ...]:
    """The catalogue's machine types whose vCPUs and memory an estimate prices, sorted."""
    return tuple(sorted(m for m in machines.MACHINE_TYPES if not billing.billed_by_chips(m)))


def name_filter(names: Iterable[str]) -> str:
    """``name eq "a|b"``: the reference's regular-expression filter, whole names only."""
    listed = sorted(names)
    for name in listed:
        if not name.replace("-", "").isalnum():
            raise ValueError(f"{name!r} is not a machine type name")
    return f'name eq "{"|".join(listed)}"'


def make_client(endpoint: str | None = None, api_key: str | None = None) -> MachineTypesClient:
    """A MachineTypes client for ``endpoint`` (default: Google's), with ``api_key``, else
    the credentials pulumi-gcp would use (``catalog_credentials``; anonymous ones to a
    loopback fake given none)."""
    compute_v1 = _compute()
    try:
        credentials = None if api_key else catalog_credentials(endpoint)
    except Exception as exc:  # CredentialsError, google.auth's errors
        raise PricesError(credentials_advice(exc, "machine types")) from exc
    if endpoint and is_loopback(endpoint):
        from google.auth.credentials import AnonymousCredentials

        client: MachineTypesClient = compute_v1.MachineTypesClient(
            transport="rest",
            credentials=credentials or AnonymousCredentials(),  # type: ignore[no-untyped-call]
            client_options={"api_endpoint": f"http://{endpoint}"},
        )
        return client
    options: dict[str, str] = {}
    if endpoint:
        options["api_endpoint"] = endpoint
    if api_key:
        options["api_key"] = api_key
    try:
        client = compute_v1.MachineTypesClient(
            transport="rest", credentials=credentials, client_options=options or None
        )
    except Exception as exc:  # google.auth's DefaultCredentialsError and kin
        raise PricesError(credentials_advice(exc, "machine types")) from exc
    return client


def project_for(project: str | None, endpoint: str | None) -> str:
    """The project to list machine types in: ``project``, the environment's, a loopback
    fake's, or application default credentials' own; ``PricesError`` when none is found."""
    found = project or next((os.environ[k] for k in PROJECT_ENV if os.environ.get(k)), None)
    if found:
        return found
    if endpoint and is_loopback(endpoint):
        return LOOPBACK_PROJECT
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        _, found = google.auth.default()
    except DefaultCredentialsError:  # no ADC: the message below says what to do
        found = None
    if not found:
        raise PricesError(
            "reading machine types needs a Google Cloud project with the Compute Engine API "
            "enabled: pass --project (make prices PRICES_PROJECT=...), set "
            "GOOGLE_CLOUD_PROJECT, or `gcloud config set project`"
        )
    return str(found)


def _shape(pb: Any) -> MachineShape:
    """A ``MachineType`` message (the protobuf, not proto-plus) as a snapshot shape."""
    return MachineShape(
        machine=pb.name,
        guest_cpus=pb.guest_cpus,
        memory_mb=pb.memory_mb,
        zone=pb.zone,
        deprecated=pb.deprecated.state if pb.HasField("deprecated") else "",
        is_shared_cpu=pb.is_shared_cpu,
        accelerators=tuple(
            (a.guest_accelerator_type, a.guest_accelerator_count) for a in pb.accelerators
        ),
    )


def _region_of(zone: str) -> str:
    return zone.rsplit("-", 1)[0]


def read_shapes(
    client: Any,
    project: str,
    regions: Sequence[str],
    *,
    metadata: Sequence[tuple[str, str]] = (),
    retry: Any = None,
    timeout: float | None = None,
    progress: Progress | None = None,
) -> tuple[tuple[MachineShape, ...], tuple[str, ...]]:
    """Every wanted machine type's shape in ``regions``, and the scopes Google could not
    reach (``unreachables``: their machines may be missing). Raises the client's errors."""
    wanted = wanted_machines()
    pager = client.aggregated_list(
        request={
            "project": project,
            "filter": name_filter(wanted),
            "max_results": PAGE_SIZE,
        },
        retry=retry,
        timeout=timeout,
        metadata=list(metadata),
    )
    region_set, wanted_set = set(regions), set(wanted)
    found: dict[str, MachineShape] = {}
    unreachable: list[str] = []
    read = 0
    for page in pager.pages:
        raw = type(page).pb(page)  # the protobuf message, without proto-plus wrappers
        unreachable += raw.unreachables
        for scoped in raw.items.values():
            read += len(scoped.machine_types)
            for pb in scoped.machine_types:
                if pb.name not in wanted_set or _region_of(pb.zone) not in region_set:
                    continue
                if pb.name not in found or pb.zone < found[pb.name].zone:
                    found[pb.name] = _shape(pb)
        if progress is not None:
            progress(PROGRESS_NAME, read, len(found))
    return tuple(found[name] for name in sorted(found)), tuple(dict.fromkeys(unreachable))
