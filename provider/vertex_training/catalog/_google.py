"""What the two reads of a refresh share: loopback endpoints, API keys, advice, retries.

``vertex_training.catalog.refresh`` (the Cloud Billing Catalog, gRPC) and
``vertex_training.catalog.shapes`` (Compute Engine's MachineTypes, REST) reach Google the same
way: the credentials pulumi-gcp would use (``vertex_training.credentials``: its
variables, else application default credentials) or an API key, a loopback endpoint for
a fake, transient errors retried with the same backoff. The registry and Cloud Quotas
clients take their credentials from here too (``catalog_credentials``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vertex_training.credentials import google_credentials

if TYPE_CHECKING:
    from google.auth.credentials import Credentials

#: Retry of transient errors: first wait, longest wait, multiplier, and total deadline.
RETRY_INITIAL_S = 0.5
RETRY_MAX_S = 10.0
RETRY_MULTIPLIER = 2.0
RETRY_DEADLINE_S = 120.0
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]", "::1")
#: How an API key travels to a loopback endpoint (as metadata, beside no call
#: credentials): the header Google's front ends read.
API_KEY_HEADER = "x-goog-api-key"


def is_loopback(endpoint: str) -> bool:
    """Whether ``endpoint`` (``HOST:PORT``) is this machine: a fake, not Google."""
    host = endpoint.rsplit(":", 1)[0] if endpoint.count(":") == 1 else endpoint
    return host in LOOPBACK_HOSTS or endpoint.startswith("[::1]")


def catalog_credentials(endpoint: str | None) -> Credentials | None:
    """The credentials a catalog client sends: from the variables pulumi-gcp reads, else
    application default credentials; none to a loopback endpoint that is given none.
    ``CredentialsError`` names the variable that cannot be used."""
    return google_credentials(loopback=bool(endpoint and is_loopback(endpoint)))


def credentials_advice(
    exc: BaseException, what: str = "price catalog", *, api_key: bool = True
) -> str:
    """What to do when Google refuses the caller (or no credentials are found); ``api_key``
    when an API key (``CLOUD_BILLING_API_KEY``) is another way in."""
    key = (
        ", or set CLOUD_BILLING_API_KEY to an API key of a project with the Cloud Billing "
        "API enabled"
        if api_key
        else " (any Google identity may list Google's public images)"
    )
    return (
        f"cannot read Google's {what} ({type(exc).__name__}: {exc}): sign in with "
        f"`gcloud auth application-default login` (or set GOOGLE_OAUTH_ACCESS_TOKEN or "
        f"GOOGLE_CREDENTIALS){key}"
    )


def transient_retry(deadline_s: float = RETRY_DEADLINE_S, max_s: float = RETRY_MAX_S) -> Any:
    """The retry of UNAVAILABLE, DEADLINE_EXCEEDED, INTERNAL and RESOURCE_EXHAUSTED (over
    HTTP: 503, 504, 500 and 429), with backoff up to ``max_s`` a wait, for ``deadline_s``
    in all."""
    from google.api_core import exceptions, retry

    return retry.Retry(
        predicate=retry.if_exception_type(
            exceptions.ServiceUnavailable,
            exceptions.DeadlineExceeded,
            exceptions.InternalServerError,
            exceptions.ResourceExhausted,
        ),
        initial=RETRY_INITIAL_S,
        maximum=max_s,
        multiplier=RETRY_MULTIPLIER,
        timeout=deadline_s,
    )
