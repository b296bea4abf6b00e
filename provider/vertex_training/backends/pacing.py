"""Request pacing: every Vertex backend of the process slows down together when Vertex AI
refuses a call for quota, instead of each thread hammering the API until its retries run
out.

The quotas. Vertex AI limits requests per project and region
(https://cloud.google.com/vertex-ai/docs/quotas, "Request quotas" table):
"Resource management (CRUD) requests", 600 per minute, and "Job or long-running
operation (LRO) submission requests", 60 per minute. The page does not list methods; our
reading is that CreateCustomJob and CreateHyperparameterTuningJob are job submissions
(``SUBMIT``) and that Get, List, Cancel and Delete are resource management (``CRUD``). A
call over quota is refused with gRPC RESOURCE_EXHAUSTED before anything is done, so even
a create may be made again. The limits can be raised per project in the console: no rate
is preset here, and a project with a raised quota is never slowed.

Why a pacer shared by the process. The Pulumi dynamic provider host serves every resource
of a stack from one process (four threads). A first ``pulumi up`` of 400 jobs makes about
400 submissions within a minute, besides its reads; against 60 submissions a minute,
threads retrying each on its own keep the quota exhausted, and a create can run out of
retries and fail the update. Here all calls of one quota (``PacerKey``: API endpoint,
project, region and kind) share one ``Pacer``, whichever backend makes them
(``pacer_for``).

The algorithm: additive increase, multiplicative decrease (AIMD, as TCP's congestion
control).

- **Unpaced** at first: calls go at once, at full speed.
- **Decrease.** When a call is refused, the pacer sets a rate for every thread: half the
  rate at which its calls were admitted over the last ``window_s`` (the quotas are per
  minute, so that rate is about the quota, and half of it leaves room for the quota's
  window to turn), or half the current rate if that is lower, never below
  ``min_rate_per_s``. Calls then start one at a time, spaced by 1/rate, in the order
  they asked (first come, first served); the refused call waits its turn and is made
  again. A refusal of a call that started before the last decrease does not decrease
  again: it was sent at the old rate, which that decrease already answered. Refusals
  of calls sent at the new rate halve it again: the window's quota is spent, and calls
  back off, all together, until it turns.
- **Increase.** Every call admitted after the last decrease raises the rate by
  1/``regain_calls`` of half the admitted rate (of the rate itself, if higher): the pace
  climbs back by half the quota every ``regain_calls`` admitted calls, even from the
  floor, until the next refusal halves it.
- **Lift.** After ``lift_after_s`` with no refusal the rate is dropped and calls go at
  full speed again (the burst that met the quota is over, or the quota was raised).

The constants were chosen on a simulation of 4 threads submitting 400 jobs against 60
submissions a minute (fixed and sliding windows; 0.1 to 1 s per call): 6.3 to 7.1
minutes in all (400 / 60 = 6.7 minutes' worth of quota) and 40 to 80 refused calls,
none failed; 1,200 calls against 600 a minute took 1.6 to 2.0 minutes (2 minutes'
worth).
``tests/test_quota_pacing.py`` (``TestSimulatedUp``) keeps the first of these.

What a caller waits, and when it gives up. Waiting for one's turn never counts toward
failing: a call waits as long as the queue ahead of it, one call per other thread (the
provider host has four, so at most three calls are ahead, each 1/rate apart: 6 s at the
floor, ``MIN_RATE_PER_S``). The one bound is on the pacer's progress:
``Pacer.refused`` answers how long its quota has admitted none of the pacer's calls, and
the backend gives up when that reaches its retry deadline (``RETRY_DEADLINE_S``, 300 s:
five quota windows in which nothing got through mean the quota is held by someone else,
or is zero). A refused call goes to the back of the queue and is made again in its next
turn; while the quota admits other calls it never fails for quota.

Only ``logging`` is used to tell the user: one WARNING when a quota starts being paced
(naming the quota, the rate and why), INFO when the rate drops again or the pace is
lifted. The dynamic provider host configures no logging, so the WARNING reaches the
host's standard error through Python's last-resort handler.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

#: The two request quotas of Vertex AI (see above), and what each is called on the
#: quotas page.
SUBMIT = "submit"
CRUD = "crud"
QUOTA_NAMES = {
    SUBMIT: "job submission requests",
    CRUD: "resource management (CRUD) requests",
}

#: The console page of a project's Vertex AI quotas, where a quota is raised.
QUOTAS_PAGE = (
    "https://console.cloud.google.com/iam-admin/quotas?project={project}"
    "&service=aiplatform.googleapis.com"
)

#: Length of a quota's window: Vertex AI's request quotas are per minute.
WINDOW_S = 60.0
#: The slowest pace, 1 call per 2 s (30 a minute): half the smallest default quota
#: (submissions, 60 a minute), reached when calls keep being refused (the window's quota
#: is spent, or another client of the project holds it). At this pace the queue of the
#: host's four threads waits at most 6 s for its turn, and a refused call is made again
#: within 8 s. Slower floors made the simulated 400 submissions take 9 to 15 minutes
#: instead of 7, for fewer refusals (refusals cost nothing but the wait).
MIN_RATE_PER_S = 0.5
#: Admitted calls over which the pace climbs back by half the admitted rate. At the
#: default submission quota the pace climbs from 30 to 60 a minute in about 30 s, so a
#: long burst meets the quota about once a minute, as often as the quota's window turns
#: (10 climbed faster and was refused more; 40 was slower by a minute in 7).
REGAIN_CALLS = 20
#: Time without a refusal after which a quota is no longer paced: two windows.
LIFT_AFTER_S = 2 * WINDOW_S

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PacingPolicy:
    """How a pacer paces (see the module's docstring); every field in seconds or calls."""

    window_s: float = WINDOW_S
    min_rate_per_s: float = MIN_RATE_PER_S
    regain_calls: int = REGAIN_CALLS
    lift_after_s: float = LIFT_AFTER_S


#: How every backend paces its calls.
DEFAULT_PACING = PacingPolicy()


class PacerKey(NamedTuple):
    """What one quota is counted on: the API endpoint, the project, the region and the
    quota (``SUBMIT`` or ``CRUD``)."""

    endpoint: str
    project: str
    region: str
    kind: str

    def describe(self) -> str:
        """The quota in words: "the quota of Vertex AI job submission requests of
        project P in us-central1"."""
        return (
            f"the quota of Vertex AI {QUOTA_NAMES[self.kind]} of project {self.project} "
            f"in {self.region}"
        )


class Turn(NamedTuple):
    """A call's turn: the clock reading at which it went, and how long it waited."""

    started: float
    waited_s: float


class Pacer:
    """Paces the calls of one quota across threads (thread-safe). ``clock`` and ``sleep``
    are injectable for tests (``time.monotonic`` and ``time.sleep``)."""

    def __init__(
        self,
        key: PacerKey,
        policy: PacingPolicy = DEFAULT_PACING,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.key = key
        self.policy = policy
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        #: Calls per second while paced; None when calls go at full speed.
        self._rate: float | None = None
        #: What each admitted call adds to the rate (set by the last decrease).
        self._step = 0.0
        #: When the next call may go.
        self._next_slot = -math.inf
        #: When the rate was last decreased, and when the last refusal came.
        self._decreased_at = -math.inf
        self._refused_at = -math.inf
        #: When this bout of pacing began, and when a call was last admitted.
        self._paced_since = -math.inf
        self._admitted_at = -math.inf
        #: When the calls admitted within the last window were answered.
        self._admitted: deque[float] = deque()

    @property
    def rate_per_s(self) -> float | None:
        """Calls per second now, or None when not paced."""
        with self._lock:
            self._lift_if_quiet(self._clock())
            return self._rate

    def wait_turn(self) -> Turn:
        """Wait for this call's turn: at once when not paced, else the next free slot."""
        turn = self.reserve()
        if turn.waited_s > 0:
            self._sleep(turn.waited_s)
        return turn

    def reserve(self) -> Turn:
        """Take the next free slot without waiting for it (``wait_turn`` waits)."""
        with self._lock:
            now = self._clock()
            self._lift_if_quiet(now)
            if self._rate is None:
                return Turn(now, 0.0)
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self._rate
            return Turn(slot, slot - now)

    def admitted(self, turn: Turn) -> None:
        """The call that went at ``turn`` was served (whatever its answer, but quota)."""
        with self._lock:
            now = self._clock()
            self._admitted_at = now
            self._admitted.append(now)
            self._forget_before(now - self.policy.window_s)
            if self._rate is not None and turn.started > self._decreased_at:
                self._rate += self._step

    def refused(self, turn: Turn, message: str = "") -> float:
        """The call that went at ``turn`` was refused for quota: slow everyone down (once
        per rate). Return how long the quota has admitted none of this pacer's calls
        since this bout of pacing began; the caller gives up past its deadline."""
        with self._lock:
            now = self._clock()
            self._refused_at = now
            if self._rate is None:
                self._paced_since = now
                self._decrease(now, math.inf)
                _log.warning(
                    "Vertex AI refused a call for quota (RESOURCE_EXHAUSTED%s). From now on "
                    "this process's calls against %s go one at a time, %s: they wait their "
                    "turn and are not failed for quota. A higher quota goes faster: %s",
                    f": {message}" if message else "",
                    self.key.describe(),
                    _per_minute(self._rate),
                    QUOTAS_PAGE.format(project=self.key.project),
                )
            elif turn.started > self._decreased_at:
                self._decrease(now, self._rate)
                _log.info(
                    "Refused again for %s: now %s", self.key.describe(), _per_minute(self._rate)
                )
            return now - max(self._admitted_at, self._paced_since)

    def _decrease(self, now: float, current: float) -> None:
        """Halve the lower of the current rate and the admitted rate over the window."""
        self._forget_before(now - self.policy.window_s)
        admitted = len(self._admitted) / self.policy.window_s
        rate = max(self.policy.min_rate_per_s, min(current, admitted) / 2)
        self._rate = rate
        self._step = max(rate, admitted / 2) / self.policy.regain_calls
        self._decreased_at = now
        # The quota is spent for now: the next call waits at least one interval.
        self._next_slot = max(self._next_slot, now + 1.0 / rate)

    def _lift_if_quiet(self, now: float) -> None:
        if self._rate is not None and now - self._refused_at >= self.policy.lift_after_s:
            self._rate = None
            _log.info(
                "No refusal for %s in %.0fs: its calls go at full speed again",
                self.key.describe(),
                self.policy.lift_after_s,
            )

    def _forget_before(self, start: float) -> None:
        while self._admitted and self._admitted[0] < start:
            self._admitted.popleft()


def _per_minute(rate: float | None) -> str:
    return "at full speed" if rate is None else f"{rate * 60:.3g} a minute"


_pacers: dict[tuple[PacerKey, PacingPolicy], Pacer] = {}
_pacers_lock = threading.Lock()


def pacer_for(key: PacerKey, policy: PacingPolicy = DEFAULT_PACING) -> Pacer:
    """The process's pacer of ``key`` (made on first use); callers with the same key and
    policy share it."""
    with _pacers_lock:
        pacer = _pacers.get((key, policy))
        if pacer is None:
            pacer = _pacers[key, policy] = Pacer(key, policy)
        return pacer
