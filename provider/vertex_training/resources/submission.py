"""Submitting a job: its identity label, and a create's attempts after uncertain failures.

Each job carries a label derived from its stack, resource name and request
(``identity_label``); a create looks for that label before it submits, so a rerun after
an interrupted ``pulumi up`` adopts the job instead of submitting it twice. A submission
that fails in a way that may or may not have created the job (``UncertainError``) is
tried again, at most ``CREATE_ATTEMPTS`` times in all with backoff (``CreateRetry``),
each attempt preceded by the label lookup (``submit``).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from vertex_training.api.bodies import canonical_request
from vertex_training.api.labels import IDENTITY_LABEL, RESOURCE_LABEL, STACK_LABEL, label_value
from vertex_training.errors import TransientError, UncertainError
from vertex_training.resources.state import engine_numbers

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus

#: Length of the request hash kept in the identity label (hex digits).
IDENTITY_HASH_LEN = 40

#: How many times a create submits a job in all when each submission fails in a way that
#: may or may not have created it (``UncertainError``); the label is looked up first
#: every time.
CREATE_ATTEMPTS = 5
#: Backoff between those attempts: first wait, growth factor, longest wait. The five
#: attempts span 2 + 4 + 8 + 16 = 30 s of waiting at most.
CREATE_BACKOFF_INITIAL_S = 2.0
CREATE_BACKOFF_MULTIPLIER = 2.0
CREATE_BACKOFF_MAX_S = 30.0


@dataclass(frozen=True)
class CreateRetry:
    """How a create tries again after an uncertain failure: ``attempts`` submissions in
    all, waiting ``initial_s`` before the second, growing by ``multiplier`` up to
    ``max_s``."""

    attempts: int = CREATE_ATTEMPTS
    initial_s: float = CREATE_BACKOFF_INITIAL_S
    multiplier: float = CREATE_BACKOFF_MULTIPLIER
    max_s: float = CREATE_BACKOFF_MAX_S

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError(f"attempts must be at least 1, got {self.attempts}")

    def waits_s(self) -> list[float]:
        """The wait before each attempt after the first (``attempts - 1`` of them)."""
        return [
            min(self.initial_s * self.multiplier**n, self.max_s) for n in range(self.attempts - 1)
        ]


#: How every create tries again.
CREATE_RETRY = CreateRetry()


def identity_label(stack: str, resource: str, request: Mapping[str, Any], attempt: int = 1) -> str:
    """The value of IDENTITY_LABEL: a hash of the stack, resource name and request (in
    its canonical form, so that the same job always gets the same label), and of the
    attempt number from the second attempt of a job with ``retry`` on (the first
    attempt's label is the one every earlier release gave the job)."""
    parts: list[Any] = [stack, resource, engine_numbers(canonical_request(request))]
    if attempt > 1:
        parts.append(attempt)
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:IDENTITY_HASH_LEN]


def labelled_request(
    request: Mapping[str, Any], stack: str, resource: str, attempt: int = 1
) -> dict[str, Any]:
    """The request as submitted (as attempt ``attempt``): the user's labels plus the
    provider's three."""
    body: dict[str, Any] = json.loads(json.dumps(request))
    body["labels"] = {
        **body.get("labels", {}),
        IDENTITY_LABEL: identity_label(stack, resource, request, attempt),
        STACK_LABEL: label_value(stack),
        RESOURCE_LABEL: label_value(resource),
    }
    return body


def find_submitted(backend: Backend, body: Mapping[str, Any]) -> JobStatus | None:
    """The job an earlier, interrupted create submitted with the same identity, if any."""
    found = backend.find_by_label(IDENTITY_LABEL, body["labels"][IDENTITY_LABEL])
    return found[0] if found else None


def submit(
    backend: Backend, body: Mapping[str, Any], retry: CreateRetry = CREATE_RETRY
) -> JobStatus:
    """Submit a job that no job carries the identity label of yet (``create`` looked);
    return it.

    After a failure that may or may not have created the job (``UncertainError``), wait,
    look the label up, and adopt the job if that attempt created it, else submit again:
    at most ``retry.attempts`` submissions in all. After another transient failure (the
    backend's own retries of RESOURCE_EXHAUSTED ran out), look once and adopt or give
    up. User errors (``PermanentError``) fail at once, with no lookup.
    """
    waits_s = retry.waits_s()
    failure: TransientError | None = None
    made = 0
    while made < retry.attempts:
        if made:
            time.sleep(waits_s[made - 1])
            submitted = find_submitted(backend, body)
            if submitted is not None:
                return submitted
        made += 1
        try:
            return backend.submit(dict(body))
        except UncertainError as exc:
            failure = exc
        except TransientError as exc:
            failure = exc
            break
    submitted = find_submitted(backend, body)
    if submitted is not None:
        return submitted
    assert failure is not None, "CreateRetry makes at least one attempt"
    label = f"{IDENTITY_LABEL}={body['labels'][IDENTITY_LABEL]}"
    last = str(failure).rstrip(".")
    failed = f"failed with {last}" if made == 1 else f"failed {made} times, last with {last}"
    raise TransientError(
        f"submitting the job {failed}; no job carries the label {label}, so none was "
        "created and running `pulumi up` again is safe"
    ) from failure
