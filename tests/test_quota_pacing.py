"""Request quotas: the process-wide pacer (provider/vertex_training/backends/pacing.py) on a clock
the
test moves, the fake JobService's request quotas, and the Vertex backend submitting from
four threads (as the Pulumi provider host does) against them."""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
from google.api_core import exceptions
from google.cloud.aiplatform_v1 import JobServiceClient

from tests.clients import job_service_client
from tests.test_vertex_backend import body
from vertex_training.backends.pacing import (
    CRUD,
    SUBMIT,
    Pacer,
    PacerKey,
    PacingPolicy,
    Turn,
    pacer_for,
)
from vertex_training.backends.vertex import RETRY_DEADLINE_S, RetryPolicy, VertexBackend
from vertex_training.errors import BackendError
from vertex_training.testing import FakeVertex, ManualClock

pytestmark = pytest.mark.timeout(60)

PROJECT, REGION = "test-project", "us-central1"
PARENT = f"projects/{PROJECT}/locations/{REGION}"
KEY = PacerKey("vertex.example:443", PROJECT, REGION, SUBMIT)
#: The production policy's shape: a 60 s window, at least 1 call per 2 s.
POLICY = PacingPolicy(window_s=60.0, min_rate_per_s=0.5, regain_calls=20, lift_after_s=120.0)


class FakeTime:
    """A clock for one thread, and a sleep that moves it."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def pacer(fake_time: FakeTime) -> Pacer:
    return Pacer(KEY, POLICY, clock=fake_time.clock, sleep=fake_time.sleep)


def admit(pacer: Pacer, fake_time: FakeTime, calls: int, every_s: float) -> None:
    """``calls`` calls, each admitted, one every ``every_s`` seconds."""
    for _ in range(calls):
        pacer.admitted(pacer.wait_turn())
        fake_time.now += every_s


def refuse(pacer: Pacer) -> float:
    """One call, refused in its turn; what ``refused`` answered."""
    return pacer.refused(pacer.wait_turn())


class TestPacer:
    """The pacer's rate: halved on refusal, grown by admitted calls, lifted when quiet."""

    def test_calls_go_at_full_speed_until_a_refusal(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """Unpaced, no call waits, however many there are."""
        admit(pacer, fake_time, 500, every_s=0.0)
        assert pacer.rate_per_s is None
        assert fake_time.slept == []

    def test_a_refusal_halves_the_rate_admitted_over_the_window(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """60 calls admitted within the last minute, then a refusal: 30 a minute."""
        admit(pacer, fake_time, 60, every_s=0.05)
        refuse(pacer)
        assert pacer.rate_per_s == pytest.approx(60 / 60.0 / 2)

    def test_calls_older_than_the_window_do_not_count(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """Calls admitted more than a window ago are not part of the admitted rate."""
        admit(pacer, fake_time, 200, every_s=0.0)
        fake_time.now += 61.0
        admit(pacer, fake_time, 120, every_s=0.0)
        refuse(pacer)
        assert pacer.rate_per_s == pytest.approx(120 / 60.0 / 2)

    def test_the_rate_never_goes_below_the_floor(self, pacer: Pacer) -> None:
        """A first call refused, nothing admitted: the floor, 1 call per 2 s."""
        refuse(pacer)
        assert pacer.rate_per_s == POLICY.min_rate_per_s

    def test_paced_calls_wait_their_turn_one_interval_apart(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """Once paced at 1 call per 2 s, calls asking at once go 2 s apart, in order."""
        admit(pacer, fake_time, 60, every_s=0.0)
        refused_at = fake_time.now
        refuse(pacer)
        turns = [pacer.reserve() for _ in range(3)]
        assert [turn.started - refused_at for turn in turns] == pytest.approx([2.0, 4.0, 6.0])
        assert [turn.waited_s for turn in turns] == pytest.approx([2.0, 4.0, 6.0])

    def test_wait_turn_sleeps_until_the_turn(self, pacer: Pacer, fake_time: FakeTime) -> None:
        """wait_turn sleeps the time to its slot, and the refused call's retry waits."""
        admit(pacer, fake_time, 60, every_s=0.0)
        refuse(pacer)
        turn = pacer.wait_turn()
        assert fake_time.slept == [pytest.approx(2.0)]
        assert turn.started == fake_time.now

    def test_refusals_of_calls_sent_before_the_decrease_do_not_decrease_again(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """Three calls in flight at full speed, all refused: the rate is halved once."""
        admit(pacer, fake_time, 60, every_s=0.0)
        in_flight = [pacer.wait_turn() for _ in range(3)]
        for turn in in_flight:
            pacer.refused(turn)
        assert pacer.rate_per_s == pytest.approx(0.5)

    def test_refusals_at_the_new_rate_halve_it_again(self, fake_time: FakeTime) -> None:
        """A call sent at the new rate and refused halves it again, down to the floor."""
        pacer = Pacer(KEY, POLICY, clock=fake_time.clock, sleep=fake_time.sleep)
        admit(pacer, fake_time, 240, every_s=0.0)
        rates = []
        for _ in range(4):
            refuse(pacer)
            rates.append(pacer.rate_per_s)
        assert rates == pytest.approx([2.0, 1.0, 0.5, 0.5])

    def test_admitted_calls_raise_the_rate_by_half_the_admitted_rate(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """regain_calls calls admitted after a decrease add half the admitted rate."""
        admit(pacer, fake_time, 120, every_s=0.0)
        refuse(pacer)
        assert pacer.rate_per_s == pytest.approx(1.0)
        for _ in range(POLICY.regain_calls):
            pacer.admitted(pacer.wait_turn())
        assert pacer.rate_per_s == pytest.approx(2.0)

    def test_calls_sent_before_the_decrease_do_not_raise_the_rate(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """A call that went before the refusal and is admitted after adds nothing."""
        admit(pacer, fake_time, 60, every_s=0.0)
        early = pacer.wait_turn()
        refuse(pacer)
        pacer.admitted(early)
        assert pacer.rate_per_s == pytest.approx(0.5)

    def test_the_pace_is_lifted_after_a_quiet_while(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """lift_after_s with no refusal: full speed again, no call waits."""
        admit(pacer, fake_time, 60, every_s=0.0)
        refuse(pacer)
        fake_time.now += POLICY.lift_after_s - 1
        just_before = pacer.rate_per_s
        fake_time.now += 1
        assert (just_before, pacer.rate_per_s) == (0.5, None)
        assert pacer.wait_turn().waited_s == 0.0

    def test_refused_tells_how_long_the_quota_admitted_nothing(
        self, pacer: Pacer, fake_time: FakeTime
    ) -> None:
        """What counts toward giving up is the time since any call was admitted (or since
        the pacing began), not how long this call has waited."""
        assert refuse(pacer) == 0.0
        fake_time.now += 100.0
        assert refuse(pacer) == pytest.approx(100.0)
        admit(pacer, fake_time, 1, every_s=0.0)
        fake_time.now += 5.0
        assert refuse(pacer) == pytest.approx(5.0)

    def test_threads_get_distinct_turns_one_interval_apart(self) -> None:
        """Eight threads reserving at once get distinct slots, exactly 1/rate apart."""
        pacer = Pacer(KEY, POLICY, clock=lambda: 50.0, sleep=lambda s: None)
        pacer.refused(pacer.reserve())
        interval = 1 / POLICY.min_rate_per_s
        start = threading.Barrier(8)

        def reserve_many() -> list[Turn]:
            start.wait()
            return [pacer.reserve() for _ in range(200)]

        with ThreadPoolExecutor(8) as pool:
            turns = [
                turn for batch in pool.map(lambda _: reserve_many(), range(8)) for turn in batch
            ]
        slots = sorted(turn.started for turn in turns)
        assert len(set(slots)) == 1600
        assert [b - a for a, b in itertools.pairwise(slots)] == pytest.approx([interval] * 1599)

    def test_threads_admitting_and_refusing_at_once_keep_a_valid_rate(self) -> None:
        """Concurrent admitted and refused calls leave the rate between floor and start."""
        pacer = Pacer(KEY, POLICY, clock=time.monotonic, sleep=lambda s: None)

        def work(index: int) -> None:
            for call in range(300):
                turn = pacer.reserve()
                if (index + call) % 7:
                    pacer.admitted(turn)
                else:
                    pacer.refused(turn)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(work, range(8)))
        rate = pacer.rate_per_s
        assert rate is not None and math.isfinite(rate) and rate >= POLICY.min_rate_per_s

    def test_backends_share_one_pacer_per_quota(self) -> None:
        """Same endpoint, project, region, quota and policy: one pacer; else another."""
        assert pacer_for(KEY, POLICY) is pacer_for(PacerKey(*KEY), POLICY)
        assert pacer_for(KEY, POLICY) is not pacer_for(KEY._replace(kind=CRUD), POLICY)
        assert pacer_for(KEY, POLICY) is not pacer_for(KEY._replace(region="europe-west4"), POLICY)


def simulate_up(jobs: int, quota_per_minute: int, threads: int = 4, call_s: float = 0.3) -> Any:
    """A first `pulumi up` on a simulated clock: ``threads`` threads submit ``jobs`` jobs
    through one production-shaped pacer, against a quota of fixed one-minute windows;
    each call takes ``call_s``. Returns the minutes until the last job was submitted,
    the calls refused, and the longest time without an admitted call that a refusal
    reported (the backend fails a call past RETRY_DEADLINE_S)."""
    now = 0.0
    pacer = Pacer(KEY, POLICY, clock=lambda: now, sleep=lambda s: None)
    admitted_in: Counter[int] = Counter()
    # (when, thread, the turn of its call in flight or None when it is free to call)
    events: list[tuple[float, int, Turn | None]] = [
        (0.0, thread, None) for thread in range(threads)
    ]
    left, refusals, worst_stall_s, last_s = jobs, 0, 0.0, 0.0
    retrying: set[int] = set()
    while events:
        now, thread, turn = heapq.heappop(events)
        if turn is None:
            if thread not in retrying:
                if not left:
                    continue
                left -= 1
            turn = pacer.reserve()
            heapq.heappush(events, (turn.started + call_s, thread, turn))
            continue
        window = math.floor(now / 60.0)
        if admitted_in[window] < quota_per_minute:
            admitted_in[window] += 1
            pacer.admitted(turn)
            retrying.discard(thread)
            last_s = now
        else:
            refusals += 1
            worst_stall_s = max(worst_stall_s, pacer.refused(turn))
            retrying.add(thread)
        heapq.heappush(events, (now, thread, None))
    return last_s / 60.0, refusals, worst_stall_s


class TestSimulatedUp:
    """The production policy on a simulated clock: what docs/operations.md promises."""

    def test_400_submissions_at_the_default_quota_take_about_seven_minutes(self) -> None:
        """400 jobs against 60 submissions a minute: at most 7.5 minutes (6.7 minutes'
        worth of quota), fewer than 100 calls refused, none failed."""
        minutes, refusals, worst_stall_s = simulate_up(400, quota_per_minute=60)
        assert 400 / 60 - 1 < minutes < 7.5
        assert refusals < 100
        assert worst_stall_s < RETRY_DEADLINE_S

    def test_a_raised_quota_is_never_slowed(self) -> None:
        """400 jobs against 1,000 a minute: never refused, never paced, full speed."""
        minutes, refusals, _ = simulate_up(400, quota_per_minute=1000)
        assert refusals == 0
        assert minutes == pytest.approx(400 / 4 * 0.3 / 60)


# -- the fake's request quotas --------------------------------------------------------------


@pytest.fixture
def quota_fake(clock: ManualClock) -> Iterator[FakeVertex]:
    with FakeVertex(
        clock=clock, request_quotas={SUBMIT: 2, CRUD: 3}, request_window_s=60.0
    ) as fake:
        yield fake


@pytest.fixture
def client(quota_fake: FakeVertex) -> Iterator[JobServiceClient]:
    with job_service_client(quota_fake.address) as service:
        yield service


def create(
    client: JobServiceClient, display_name: str = "t", parent: str = PARENT, retry: Any = None
) -> Any:
    """CreateCustomJob through the real client, with ``retry`` (none by default)."""
    from google.cloud.aiplatform_v1.types import CustomJob
    from google.protobuf import json_format

    job = CustomJob.wrap(json_format.ParseDict(body(display_name), CustomJob.pb()()))
    return client.create_custom_job(parent=parent, custom_job=job, retry=retry)


class TestFakeRequestQuotas:
    """FakeVertex(request_quotas=...) refuses calls past a quota, as Vertex AI does."""

    def test_no_request_quota_by_default(self) -> None:
        """Without request_quotas nothing is counted and nothing refused."""
        with FakeVertex() as fake, job_service_client(fake.address) as service:
            for index in range(30):
                create(service, f"j{index}")
            assert (len(fake.jobs), fake.refused, fake.quota_windows) == (30, [], [])

    def test_a_submission_past_the_quota_is_refused_as_google_words_it(
        self, quota_fake: FakeVertex, client: JobServiceClient
    ) -> None:
        """The third create in a window of a quota of 2: RESOURCE_EXHAUSTED, no job."""
        create(client, "a")
        create(client, "b")
        with pytest.raises(exceptions.ResourceExhausted) as raised:
            create(client, "c")
        assert raised.value.message.startswith(
            "Quota exceeded for quota metric 'Job or LRO submission requests' and limit "
            "'Job or LRO submission requests per minute per region' of service "
            "'aiplatform.googleapis.com' for consumer 'project_number:"
        )
        assert sorted(job.display_name for job in quota_fake.jobs.values()) == ["a", "b"]
        assert [call.method for call in quota_fake.refused] == ["CreateCustomJob"]
        (window,) = quota_fake.quota_windows
        assert (window.kind, window.project, window.region) == (SUBMIT, PROJECT, REGION)
        assert (window.admitted, window.refused) == (2, 1)

    def test_the_next_window_admits_again(
        self, quota_fake: FakeVertex, client: JobServiceClient, clock: ManualClock
    ) -> None:
        """Once the window turns the quota is whole again."""
        create(client, "a")
        create(client, "b")
        clock.advance(60.0)
        create(client, "c")
        assert len(quota_fake.jobs) == 3
        assert [(w.admitted, w.refused) for w in quota_fake.quota_windows] == [(2, 0), (1, 0)]

    def test_reads_count_against_resource_management_not_submissions(
        self, quota_fake: FakeVertex, client: JobServiceClient
    ) -> None:
        """Submissions spent, reads still go; the fourth of a quota of 3 is refused (a call
        answered with an injected fault was admitted: it counts)."""
        name = create(client, "a").name
        create(client, "b")
        quota_fake.fail_next("GetCustomJob", grpc.StatusCode.UNAVAILABLE)
        with pytest.raises(exceptions.ServiceUnavailable):
            client.get_custom_job(name=name, retry=None)
        client.get_custom_job(name=name, retry=None)
        client.list_custom_jobs(parent=PARENT, retry=None)
        with pytest.raises(exceptions.ResourceExhausted, match="Resource management"):
            client.cancel_custom_job(name=name, retry=None)
        assert [call.method for call in quota_fake.refused] == ["CancelCustomJob"]

    def test_each_project_and_region_has_its_own_quota(
        self, quota_fake: FakeVertex, client: JobServiceClient
    ) -> None:
        """Quotas are per project and per region."""
        for parent in (
            PARENT,
            f"projects/{PROJECT}/locations/europe-west4",
            "projects/o/locations/us-central1",
        ):
            create(client, "a", parent)
            create(client, "b", parent)
        assert len(quota_fake.jobs) == 6
        assert quota_fake.refused == []

    def test_an_unknown_quota_is_refused(self) -> None:
        """request_quotas names "submit" and "crud" only."""
        with pytest.raises(ValueError, match="unknown request quotas"):
            FakeVertex(request_quotas={"create": 1})


# -- the backend from four threads against the fake's quota ---------------------------------

#: Jobs a test submits from THREADS threads (the Pulumi provider host's four).
JOBS, THREADS = 40, 4
#: The fake's submission quota: calls per window.
QUOTA, WINDOW_S = 10, 0.5
#: The production policy's shape at the fake's scale: its window; a floor of half the
#: quota (production: 30 a minute against 60); a climb back over a third of a window's
#: quota (production: 20 calls against 60); lifted after two windows.
SCALED = PacingPolicy(
    window_s=WINDOW_S, min_rate_per_s=QUOTA / WINDOW_S / 2, regain_calls=4, lift_after_s=1.0
)
#: Backoff of outages, short: a call refused for quota must not be failed by it.
SHORT_RETRY = RetryPolicy(initial_s=0.01, max_s=0.05, multiplier=2.0, deadline_s=1.0)


def submit_all(submit: Callable[[str], object]) -> list[BaseException]:
    """Submit JOBS jobs from THREADS threads; return the errors raised."""
    errors: list[BaseException] = []

    def one(index: int) -> None:
        try:
            submit(f"job-{index}")
        except (BackendError, exceptions.GoogleAPIError) as exc:
            errors.append(exc)

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(one, range(JOBS)))
    return errors


def submission_windows(fake: FakeVertex) -> list[tuple[int, int]]:
    return [(w.admitted, w.refused) for w in fake.quota_windows if w.kind == SUBMIT]


class TestBackendUnderQuota:
    """Four threads of VertexBackends against a submission quota slow down, never fail."""

    def test_every_job_is_created_once_within_the_quota_and_few_are_refused(self) -> None:
        """40 jobs at 10 per window from 4 threads: all created once, none failed, no
        window over quota, and far fewer refusals than the same threads retrying each on
        its own (the backend before the pacer, measured here against a second fake)."""
        with FakeVertex(request_quotas={SUBMIT: QUOTA}, request_window_s=WINDOW_S) as fake:

            def submit(name: str) -> object:
                # A backend per job, as the provider host makes one per operation.
                backend = VertexBackend(
                    PROJECT, REGION, api_endpoint=fake.address, retry=SHORT_RETRY, pacing=SCALED
                )
                return backend.submit(body(name))

            errors = submit_all(submit)
            paced_refusals = len(fake.refused)
            names = Counter(job.display_name for job in fake.jobs.values())
            windows = submission_windows(fake)
        assert errors == []
        assert names == Counter(f"job-{index}" for index in range(JOBS))
        assert all(admitted <= QUOTA for admitted, _ in windows)
        # At least one refusal taught the pacer the quota; at most one per job.
        assert 1 <= paced_refusals < JOBS

        with (
            FakeVertex(request_quotas={SUBMIT: QUOTA}, request_window_s=WINDOW_S) as unpaced,
            job_service_client(unpaced.address) as service,
        ):
            retry = SHORT_RETRY.build(lambda exc: isinstance(exc, exceptions.ResourceExhausted))
            submit_all(lambda name: create(service, name, retry=retry))
            unpaced_refusals = len(unpaced.refused)
        assert paced_refusals * 5 <= unpaced_refusals, (paced_refusals, unpaced_refusals)

    def test_a_create_refused_for_quota_waits_and_is_made_again(self) -> None:
        """Injected RESOURCE_EXHAUSTED three times: the create waits its paced turns and
        the job is created once, instead of the create failing."""
        with FakeVertex() as fake:
            backend = VertexBackend(
                PROJECT, REGION, api_endpoint=fake.address, retry=SHORT_RETRY, pacing=SCALED
            )
            fake.fail_next("CreateCustomJob", grpc.StatusCode.RESOURCE_EXHAUSTED, times=3)
            started = time.monotonic()
            status = backend.submit(body("refused-thrice"))
            elapsed = time.monotonic() - started
            assert list(fake.jobs) == [status.name]
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 4
        # Three waits of one interval at the floor.
        assert elapsed >= 3 / SCALED.min_rate_per_s * 0.9

    def test_a_quota_that_admits_nothing_fails_after_the_retry_deadline(self) -> None:
        """A quota that never admits anything (as a quota of 0): BackendError after the
        retry deadline, naming the quota and where to raise it; no job."""
        with FakeVertex(request_quotas={SUBMIT: 0}, request_window_s=WINDOW_S) as fake:
            backend = VertexBackend(
                PROJECT, REGION, api_endpoint=fake.address, retry=SHORT_RETRY, pacing=SCALED
            )
            with pytest.raises(BackendError, match="job submission requests") as raised:
                backend.submit(body("never"))
            assert fake.jobs == {}
        assert "Quota exceeded for quota metric" in str(raised.value)
        assert "iam-admin/quotas" in str(raised.value)
