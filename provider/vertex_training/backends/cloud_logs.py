"""The last lines of a Vertex AI job's replica log, read from Cloud Logging.

A custom job's logs are Cloud Logging entries of the monitored resource ``ml_job``,
labelled with the numeric ``job_id`` and the replica's ``task_name`` ("workerpool0-0";
Cloud Logging's monitored resource list, and gcloud's own reader,
``googlecloudsdk/command_lib/ml_engine/log_utils.py``, which reads ``task_name`` from the
resource labels). ``CloudLogs.tail`` asks ``LoggingServiceV2.ListLogEntries``
(google/logging/v2/logging.proto) for one page, newest first, with a filter that bounds
the time searched (``LOG_WINDOW_S`` before the job's end) and the lines returned: one
call, never a scan of the project's logs.

``google-cloud-logging`` is imported inside the call (a preview never pays for it). The
client is injectable; otherwise its credentials are ``credentials``, else those of
``auth`` as the JobService client's (``vertex_training.credentials``). A loopback
endpoint gets a local channel, with no credentials unless some are configured, as the
JobService client does, which is how tests reach ``vertex_training.testing.fake_logging``.
Every failure is a ``BackendError`` for the caller to report ("logs could not be read:
...") and go on.
"""

from __future__ import annotations

import ipaddress
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from vertex_training.api.times import epoch_s
from vertex_training.credentials import GoogleAuth, google_credentials, loopback_channel
from vertex_training.errors import BackendError

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client

#: Cloud Logging's global endpoint.
LOGGING_ENDPOINT = "logging.googleapis.com"
#: How far back from the job's end (or from now) the entries are looked for, in seconds:
#: the last lines of a failing replica are written just before the job ends.
LOG_WINDOW_S = 24 * 3600.0
#: How long after the job's end an entry may still carry a timestamp (ingestion is by
#: the entry's own time, written by the replica's clock).
LOG_GRACE_S = 300.0
#: One ListLogEntries call's deadline, in seconds: a failure report does not wait longer.
LOG_TIMEOUT_S = 10.0
#: The most lines asked for (ListLogEntriesRequest.page_size allows 1000).
MAX_LINES = 1000


def log_filter(job_id: str, replica: str, since: str, until: str) -> str:
    """The Logging query language filter of one replica's entries in a time window."""
    return (
        f'resource.type="ml_job" AND resource.labels.job_id="{job_id}" AND '
        f'resource.labels.task_name="{replica}" AND '
        f'timestamp>="{since}" AND timestamp<="{until}"'
    )


class CloudLogs:
    """Reads a project's Vertex AI job logs."""

    def __init__(
        self,
        project: str,
        *,
        client: LoggingServiceV2Client | None = None,
        api_endpoint: str | None = None,
        credentials: Credentials | None = None,
        auth: GoogleAuth | None = None,
        clock: float | None = None,
    ) -> None:
        self.project = project
        self.api_endpoint = api_endpoint
        self._client = client
        self._credentials = credentials
        self.auth = auth
        self._now = clock

    def tail(self, job_id: str, replica: str, lines: int, end_time: str = "") -> list[str]:
        """The last ``lines`` lines (oldest first) the replica logged up to the job's
        ``end_time`` (RFC 3339; now when ""). BackendError when they cannot be read."""
        until_s = epoch_s(end_time) or (self._now if self._now is not None else time.time())
        since = _rfc3339(until_s - LOG_WINDOW_S)
        until = _rfc3339(until_s + LOG_GRACE_S)
        try:
            from google.api_core import exceptions
        except ImportError as exc:  # pragma: no cover - a pinned dependency
            raise BackendError(f"{exc}; run `pip install -r requirements.txt`") from exc
        try:
            client = self._client or self._make_client()
            pager = client.list_log_entries(
                request={
                    "resource_names": [f"projects/{self.project}"],
                    "filter": log_filter(job_id, replica, since, until),
                    "order_by": "timestamp desc",
                    "page_size": min(max(lines, 1), MAX_LINES),
                },
                timeout=LOG_TIMEOUT_S,
            )
            page = next(iter(pager.pages), None)
        except exceptions.GoogleAPICallError as exc:
            raise BackendError(self._answered(_code(exc), exc.message)) from exc
        except BackendError:  # credentials that cannot be had: the message says why
            raise
        except Exception as exc:
            # Credentials not found, a channel that failed: all mean "could not read".
            raise BackendError(f"{type(exc).__name__}: {exc}") from exc
        entries = list(page.entries)[:lines] if page is not None else []
        return [_text(entry) for entry in reversed(entries)]

    def _answered(self, code: str, message: str) -> str:
        """What Cloud Logging's refusal says, where it came from, and the likely why."""
        endpoint = self.api_endpoint or LOGGING_ENDPOINT
        text = f"Cloud Logging at {endpoint} answered {code}: {message}"
        if code == "UNIMPLEMENTED" and is_loopback(endpoint):
            text += (
                " (a fake JobService serves logs only when started with --serve-logging: "
                "python -m vertex_training.testing.fake_vertex --serve-logging)"
            )
        elif code in ("PERMISSION_DENIED", "UNAUTHENTICATED"):
            text += " (reading job logs needs roles/logging.viewer on the project)"
        return text

    def _make_client(self) -> LoggingServiceV2Client:
        from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client

        endpoint = self.api_endpoint or LOGGING_ENDPOINT
        loopback = is_loopback(endpoint)
        credentials = self._credentials or google_credentials(self.auth, loopback=loopback)
        if loopback:
            from google.cloud.logging_v2.services.logging_service_v2.transports.grpc import (
                LoggingServiceV2GrpcTransport,
            )

            channel = loopback_channel(endpoint, credentials)
            return LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=channel))
        return LoggingServiceV2Client(
            credentials=credentials, client_options={"api_endpoint": endpoint}
        )


def is_loopback(endpoint: str) -> bool:
    """True for HOST[:PORT] endpoints on this machine: localhost, 127.0.0.0/8, [::1]."""
    host = urlsplit(f"//{endpoint}").hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _text(entry: object) -> str:
    """An entry's line: its text payload, or a JSON payload's ``message``."""
    text = getattr(entry, "text_payload", "")
    if text:
        return str(text).rstrip("\n")
    payload = getattr(entry, "json_payload", None)
    if payload:
        return str(dict(payload).get("message", dict(payload))).rstrip("\n")
    return ""


def _rfc3339(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _code(exc: BaseException) -> str:
    code = getattr(exc, "grpc_status_code", None)
    return code.name if code is not None else type(exc).__name__
