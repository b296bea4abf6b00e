"""The fake's time: ``ManualClock``, a clock that tests move by hand, and clock readings
as the protobuf Timestamps the fake's messages carry.

Every other part of the fake reads time from a clock (``time.time`` unless a
``ManualClock`` is given); this module depends on no other part of it.
"""

from __future__ import annotations

import threading

from google.protobuf import timestamp_pb2


class ManualClock:
    """A clock that moves only when told to: deterministic job timelines in tests."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds``."""
        with self._lock:
            self._now += seconds


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    """A clock reading (seconds since the epoch) as a protobuf Timestamp."""
    stamp = timestamp_pb2.Timestamp()
    stamp.FromNanoseconds(round(seconds * 1e9))
    return stamp
