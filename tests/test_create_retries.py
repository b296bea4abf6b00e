"""Creates that fail in a way that may or may not have created the job (INTERNAL,
DEADLINE_EXCEEDED, UNKNOWN, UNAVAILABLE): retried, bounded, each attempt after a look-up of the
identity label, so that no job is ever submitted twice. Against the fake Vertex
JobService, whose fault injection models both outcomes of each such code
(google/rpc/code.proto), for custom jobs and hyperparameter tuning jobs alike."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from tests.clients import configured, registered
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.backends.pacing import PacingPolicy
from vertex_training.backends.vertex import UNCERTAIN_CODES, RetryPolicy, VertexBackend
from vertex_training.errors import PermanentError, TransientError, UncertainError
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.submission import (
    CREATE_RETRY,
    CreateRetry,
    Owner,
    identity_label,
    labelled_request,
    submit,
)
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.resources.tuning_job import HyperparameterTuningJobProvider
from vertex_training.testing import FakeVertex
from vertex_training.testing._faults import MAY_TAKE_EFFECT_CODES, REFUSAL_CODES

pytestmark = pytest.mark.timeout(60)

PROJECT, REGION = "test-project", "us-central1"
IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"epochs": {"type": "integer", "min": 1, "max": 20}},
    "algorithm": "random",
    "max_trials": 2,
    "parallel_trials": 1,
}
#: The codes that leave a create's outcome unknown (google/rpc/code.proto).
UNCERTAIN = [
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.UNAVAILABLE,
]
#: The provider's retry, with waits short enough for tests.
FAST_CREATE = CreateRetry(attempts=3, initial_s=0.01, multiplier=2.0, max_s=0.05)
#: The backend's own retries (the label look-up's), as short.
FAST_RETRY = RetryPolicy(initial_s=0.01, max_s=0.05, multiplier=2.0, deadline_s=2.0)
#: Calls refused for quota made again within FAST_RETRY's longest wait (0.05 s).
FAST_PACING = PacingPolicy(window_s=1.0, min_rate_per_s=20.0, lift_after_s=2.0)


class FastTrainingJobProvider(TrainingJobProvider):
    create_retry = FAST_CREATE


class FastTuningJobProvider(HyperparameterTuningJobProvider):
    create_retry = FAST_CREATE


@dataclass(frozen=True)
class Kind:
    """One kind of job: its provider, a config, and the fake's view of its jobs."""

    name: str
    provider: type[TrainingJobProvider]
    config: dict[str, Any]
    create_method: str

    def jobs(self, fake: FakeVertex) -> dict[str, Any]:
        return dict(fake.tuning_jobs) if self.name == "sweep" else dict(fake.jobs)

    def registered(self, fake: FakeVertex) -> dict[str, Any]:
        """The properties __main__.py registers for the job, before check."""
        return registered(fake, self.name, self.config)

    def checked(self, fake: FakeVertex) -> dict[str, Any]:
        result = configured(self.provider(), fake).check({}, self.registered(fake))
        assert not result.failures, [f.reason for f in result.failures]
        return result.inputs


CUSTOM = Kind("train", FastTrainingJobProvider, {"image": IMAGE}, "CreateCustomJob")
TUNING = Kind(
    "sweep",
    FastTuningJobProvider,
    {"image": IMAGE, "study": STUDY},
    "CreateHyperparameterTuningJob",
)


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.05, pending_s=0.05, run_s=0.3, trial_s=0.3) as server:
        yield server


@pytest.fixture(params=[CUSTOM, TUNING], ids=lambda kind: kind.create_method)
def kind(request: pytest.FixtureRequest) -> Kind:
    return request.param  # type: ignore[no-any-return]


def calls_to(fake: FakeVertex, method: str) -> int:
    return sum(call.method == method for call in fake.calls)


def the_one_job(fake: FakeVertex, kind: Kind, inputs: dict[str, Any], created: Any) -> None:
    """Exactly one job exists, carries the identity label, and is the one created."""
    jobs = kind.jobs(fake)
    assert list(jobs) == [created.id]
    expected = identity_label(Owner("test"), kind.name, recorded_view(inputs)["request"])
    assert jobs[created.id].labels[IDENTITY_LABEL] == expected


class TestCreateRetry:
    """CreateRetry: the bound and the backoff of a create's attempts."""

    def test_the_default_waits_grow_from_the_first(self) -> None:
        """Between attempts, each wait is the one before times the multiplier, capped."""
        waits = CREATE_RETRY.waits_s()
        assert len(waits) == CREATE_RETRY.attempts - 1
        for before, after in itertools.pairwise(waits):
            assert after == min(before * CREATE_RETRY.multiplier, CREATE_RETRY.max_s)

    def test_waits_stop_growing_at_the_maximum(self) -> None:
        """The backoff grows by its multiplier up to max_s."""
        retry = CreateRetry(attempts=6, initial_s=1.0, multiplier=3.0, max_s=10.0)
        assert retry.waits_s() == [1.0, 3.0, 9.0, 10.0, 10.0]

    def test_no_attempt_at_all_is_refused(self) -> None:
        """A create makes at least one attempt."""
        with pytest.raises(ValueError, match="at least 1"):
            CreateRetry(attempts=0)


class TestUncertainFailures:
    """An uncertain failure of a create: looked up, adopted or submitted again, once."""

    @pytest.mark.parametrize("take_effect", [True, False], ids=["took-effect", "did-not"])
    @pytest.mark.parametrize("code", UNCERTAIN, ids=lambda code: code.name)
    def test_one_failure_leaves_exactly_one_labelled_job(
        self, fake: FakeVertex, kind: Kind, code: grpc.StatusCode, take_effect: bool
    ) -> None:
        """Whether or not the failed call created the job, one job exists and is returned."""
        fake.fail_next(kind.create_method, code, take_effect=take_effect)
        inputs = kind.checked(fake)
        created = configured(kind.provider(), fake).create(inputs)
        the_one_job(fake, kind, inputs, created)
        assert calls_to(fake, kind.create_method) == (1 if take_effect else 2)

    @pytest.mark.parametrize("code", UNCERTAIN, ids=lambda code: code.name)
    def test_consecutive_failures_within_the_bound_succeed(
        self, fake: FakeVertex, kind: Kind, code: grpc.StatusCode
    ) -> None:
        """Failures that created nothing on every attempt but the last: the last submits."""
        fake.fail_next(kind.create_method, code, times=FAST_CREATE.attempts - 1)
        inputs = kind.checked(fake)
        created = configured(kind.provider(), fake).create(inputs)
        the_one_job(fake, kind, inputs, created)
        assert calls_to(fake, kind.create_method) == FAST_CREATE.attempts

    def test_a_later_attempt_that_took_effect_is_adopted(
        self, fake: FakeVertex, kind: Kind
    ) -> None:
        """INTERNAL (nothing created), then UNKNOWN after creating: the second is adopted."""
        fake.fail_next(kind.create_method, grpc.StatusCode.INTERNAL)
        fake.fail_next(kind.create_method, grpc.StatusCode.UNKNOWN, take_effect=True)
        inputs = kind.checked(fake)
        created = configured(kind.provider(), fake).create(inputs)
        the_one_job(fake, kind, inputs, created)
        assert calls_to(fake, kind.create_method) == 2

    def test_every_attempt_is_preceded_by_the_label_lookup(
        self, fake: FakeVertex, kind: Kind
    ) -> None:
        """Each failed create is followed by a look-up of the label before the next create."""
        fake.fail_next(kind.create_method, grpc.StatusCode.INTERNAL, times=2)
        configured(kind.provider(), fake).create(kind.checked(fake))
        creates_and_lookups = [
            "create" if call.method == kind.create_method else "lookup"
            for call in fake.calls
            if call.method in (kind.create_method, "ListCustomJobs", "ListHyperparameterTuningJobs")
        ]
        assert creates_and_lookups == ["lookup", "lookup", "create"] * 3

    @pytest.mark.parametrize("code", UNCERTAIN, ids=lambda code: code.name)
    def test_failures_beyond_the_bound_fail_naming_the_code_and_label(
        self, fake: FakeVertex, kind: Kind, code: grpc.StatusCode
    ) -> None:
        """After the last attempt the create fails: the code, and that no job has the label."""
        fake.fail_next(kind.create_method, code, times=FAST_CREATE.attempts + 1)
        inputs = kind.checked(fake)
        label = identity_label(Owner("test"), kind.name, recorded_view(inputs)["request"])
        with pytest.raises(TransientError) as raised:
            configured(kind.provider(), fake).create(inputs)
        message = str(raised.value)
        assert f"failed {FAST_CREATE.attempts} times, last with {code.name}: Injected" in message
        assert f"no job carries the label {IDENTITY_LABEL}={label}" in message
        assert "`pulumi up` again is safe" in message
        assert kind.jobs(fake) == {}
        assert calls_to(fake, kind.create_method) == FAST_CREATE.attempts

    @pytest.mark.parametrize(
        "code",
        [
            grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.PERMISSION_DENIED,
            grpc.StatusCode.NOT_FOUND,
        ],
        ids=lambda code: code.name,
    )
    def test_a_user_error_is_not_retried(
        self, fake: FakeVertex, kind: Kind, code: grpc.StatusCode
    ) -> None:
        """A refusal fails the create after one call, with the API's message."""
        fake.fail_next(kind.create_method, code, message="refused: fix the request")
        with pytest.raises(PermanentError, match="refused: fix the request"):
            configured(kind.provider(), fake).create(kind.checked(fake))
        assert calls_to(fake, kind.create_method) == 1
        assert kind.jobs(fake) == {}

    def test_a_job_an_interrupted_run_submitted_is_still_adopted(
        self, fake: FakeVertex, kind: Kind
    ) -> None:
        """The look-up before the first attempt still adopts an earlier run's job."""
        inputs = kind.checked(fake)
        earlier = VertexBackend(PROJECT, REGION, api_endpoint=fake.address).submit(
            labelled_request(recorded_view(inputs)["request"], Owner("test"), kind.name)
        )
        fake.fail_next(kind.create_method, grpc.StatusCode.INTERNAL, times=10)
        assert configured(kind.provider(), fake).create(inputs).id == earlier.name
        assert calls_to(fake, kind.create_method) == 1

    def test_the_lookup_retries_its_own_transient_errors(
        self, fake: FakeVertex, kind: Kind
    ) -> None:
        """An UNKNOWN from ListCustomJobs during a create is retried; one job results."""
        fake.fail_next("ListCustomJobs", grpc.StatusCode.UNKNOWN)
        inputs = kind.checked(fake)
        created = configured(kind.provider(), fake).create(inputs)
        the_one_job(fake, kind, inputs, created)
        assert calls_to(fake, kind.create_method) == 1


@pytest.fixture
def backend(fake: FakeVertex) -> VertexBackend:
    return VertexBackend(
        PROJECT, REGION, api_endpoint=fake.address, retry=FAST_RETRY, pacing=FAST_PACING
    )


class TestQuotaRefusals:
    """RESOURCE_EXHAUSTED: retried by the backend (nothing was created), not by the create."""

    def test_exhausted_retries_fail_once_saying_no_job_carries_the_label(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """When the backend's retries run out, the create looks once more and gives up."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.RESOURCE_EXHAUSTED, times=10_000)
        body = labelled_request({"displayName": "t", "jobSpec": JOB_SPEC}, Owner("test"), "t")
        with pytest.raises(TransientError) as raised:
            submit(backend, body, FAST_CREATE)
        message = str(raised.value)
        assert "failed with" in message and "Injected RESOURCE_EXHAUSTED" in message
        assert f"no job carries the label {IDENTITY_LABEL}=" in message
        assert fake.jobs == {}


class TestVertexBackend:
    """VertexBackend: which create errors it retries, and the label look-up's retries."""

    @pytest.mark.parametrize("code", UNCERTAIN, ids=lambda code: code.name)
    def test_submit_raises_uncertain_errors_with_their_code_after_one_call(
        self, fake: FakeVertex, backend: VertexBackend, kind: Kind, code: grpc.StatusCode
    ) -> None:
        """An uncertain create error is not retried by the backend: UncertainError(code)."""
        fake.fail_next(kind.create_method, code)
        body = labelled_request(
            recorded_view(kind.checked(fake))["request"], Owner("test"), kind.name
        )
        with pytest.raises(UncertainError) as raised:
            backend.submit(body)
        assert raised.value.code == code.name
        assert calls_to(fake, kind.create_method) == 1

    def test_uncertain_codes_are_those_that_may_take_effect(self) -> None:
        """The backend leaves to the caller every code the fake may carry out."""
        assert {code.name for code in UNCERTAIN} == UNCERTAIN_CODES
        assert {code.name for code in MAY_TAKE_EFFECT_CODES} == UNCERTAIN_CODES

    def test_resource_exhausted_is_retried_by_the_backend(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A quota refusal created nothing: submit retries it and makes exactly one job."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.RESOURCE_EXHAUSTED, times=2)
        created = backend.submit({"displayName": "t", "jobSpec": JOB_SPEC})
        assert calls_to(fake, "CreateCustomJob") == 3
        assert list(fake.jobs) == [created.name]

    @pytest.mark.parametrize(
        "code",
        [*UNCERTAIN, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED],
        ids=lambda code: code.name,
    )
    @pytest.mark.parametrize("method", ["ListCustomJobs", "ListHyperparameterTuningJobs"])
    def test_find_by_label_retries_transient_errors(
        self, fake: FakeVertex, backend: VertexBackend, method: str, code: grpc.StatusCode
    ) -> None:
        """Two transient errors from a list call are retried; the job is found."""
        created = backend.submit(
            labelled_request({"displayName": "t", "jobSpec": JOB_SPEC}, Owner("test"), "t")
        )
        fake.fail_next(method, code, times=2)
        key = created.labels[IDENTITY_LABEL]
        assert [job.name for job in backend.find_by_label(IDENTITY_LABEL, key)] == [created.name]
        assert calls_to(fake, method) == 3

    def test_find_by_label_does_not_retry_a_refusal(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """PERMISSION_DENIED on the look-up fails it at once."""
        fake.fail_next("ListCustomJobs", grpc.StatusCode.PERMISSION_DENIED, message="denied")
        with pytest.raises(PermanentError, match="denied"):
            backend.find_by_label(IDENTITY_LABEL, "x")
        assert calls_to(fake, "ListCustomJobs") == 1


JOB_SPEC: dict[str, Any] = {
    "workerPoolSpecs": [
        {
            "machineSpec": {"machineType": "n1-standard-4"},
            "replicaCount": "1",
            "containerSpec": {"imageUri": IMAGE},
        }
    ]
}


class TestFakeFaults:
    """The fake's fault injection follows google/rpc/code.proto for each code."""

    @pytest.mark.parametrize("code", MAY_TAKE_EFFECT_CODES, ids=lambda code: code.name)
    def test_a_code_that_may_take_effect_can_either_way(
        self, fake: FakeVertex, backend: VertexBackend, kind: Kind, code: grpc.StatusCode
    ) -> None:
        """take_effect creates the job before failing; without it nothing is created."""
        body = labelled_request(
            recorded_view(kind.checked(fake))["request"], Owner("test"), kind.name
        )
        fake.fail_next(kind.create_method, code, take_effect=True)
        with pytest.raises(TransientError):
            backend.submit(body)
        assert len(kind.jobs(fake)) == 1
        fake.fail_next(kind.create_method, code, times=100)
        with pytest.raises(TransientError):
            backend.submit(body)
        assert len(kind.jobs(fake)) == 1

    @pytest.mark.parametrize("code", REFUSAL_CODES, ids=lambda code: code.name)
    def test_a_refusal_never_takes_effect(self, fake: FakeVertex, code: grpc.StatusCode) -> None:
        """A refusal is not carried out, so take_effect is refused for it."""
        with pytest.raises(ValueError, match="take_effect"):
            fake.fail_next("CreateCustomJob", code, take_effect=True)

    def test_unknown_is_injectable(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """UNKNOWN reaches the client as UNKNOWN, with the message given."""
        fake.fail_next("GetCustomJob", grpc.StatusCode.UNKNOWN, message="lost", times=100)
        with pytest.raises(TransientError, match="lost"):
            backend.get(f"projects/{PROJECT}/locations/{REGION}/customJobs/1")
