"""Whether this process has reached an endpoint, and how an endpoint it never reached is
reported: within ``UNREACHABLE_AFTER_S`` of the first failed connection, naming the
endpoint and what set it, instead of after every call's whole retry deadline.

A connection that could not be made (refused, no such host, no route) is gRPC's
UNAVAILABLE with a connect error in its message; nothing reached the server, so even a
create is safe to make again, and retrying helps only while the endpoint may yet come up.
Once an endpoint has answered in this process, its failures are transient errors as
before (a blip of a service that was there); until then, connect failures are retried
for ``UNREACHABLE_AFTER_S`` at most, then every call to it fails at once with the same
message.
"""

from __future__ import annotations

import threading
import time
from typing import Final

#: How long connections to an endpoint never reached may fail before it is reported.
UNREACHABLE_AFTER_S: Final = 12.0
#: Words of gRPC's (and the OS's) connect errors, in the message of an UNAVAILABLE.
CONNECT_FAILURES: Final = (
    "failed to connect to all addresses",
    "connection refused",
    "dns resolution failed",
    "name resolution",
    "could not contact dns servers",
    "network is unreachable",
    "no route to host",
    "connect failed",
)

_LOCK = threading.Lock()
_REACHED: set[str] = set()
_FIRST_FAILURE: dict[str, float] = {}
_UNREACHABLE: dict[str, str] = {}


def is_connect_failure(code: str, message: str) -> bool:
    """Whether an error (its gRPC code name and message) says no connection was made."""
    lowered = message.lower()
    return code == "UNAVAILABLE" and any(words in lowered for words in CONNECT_FAILURES)


def reached(endpoint: str) -> None:
    """An answer came from ``endpoint``: its later failures are ordinary ones."""
    with _LOCK:
        _REACHED.add(endpoint)
        _FIRST_FAILURE.pop(endpoint, None)


def keep_trying(endpoint: str) -> bool:
    """After a connect failure: whether to try again (an endpoint reached before, or one
    failing for less than ``UNREACHABLE_AFTER_S``)."""
    now = time.monotonic()
    with _LOCK:
        if endpoint in _REACHED:
            return True
        first = _FIRST_FAILURE.setdefault(endpoint, now)
        return now - first < UNREACHABLE_AFTER_S


def never_reached(endpoint: str) -> bool:
    with _LOCK:
        return endpoint not in _REACHED


def unreachable(endpoint: str, message: str) -> str:
    """Record ``endpoint`` as unreachable with ``message``; return the message."""
    with _LOCK:
        return _UNREACHABLE.setdefault(endpoint, message)


def known_unreachable(endpoint: str) -> str | None:
    """The message an endpoint was reported unreachable with, if it was."""
    with _LOCK:
        return _UNREACHABLE.get(endpoint)


def failing_for_s(endpoint: str) -> float:
    """How long connections to ``endpoint`` have failed (0 when they have not)."""
    with _LOCK:
        first = _FIRST_FAILURE.get(endpoint)
    return time.monotonic() - first if first is not None else 0.0


def forget() -> None:
    """Forget every endpoint (tests)."""
    with _LOCK:
        _REACHED.clear()
        _FIRST_FAILURE.clear()
        _UNREACHABLE.clear()
