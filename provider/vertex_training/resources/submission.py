"""Submitting a job: its identity label, and a create's attempts after uncertain failures.

Each job carries a label derived from its owner (the Pulumi organization where the engine
names one, the Pulumi project and the stack), its resource name and its request
(``identity_label``), and the labels of its project, stack and resource; a create looks
for that label before it submits, so a rerun after an interrupted ``pulumi up`` adopts the
job instead of submitting it twice. It adopts a job only when the job's project, stack and
resource labels are its own (``find_submitted``): two Pulumi projects that share a Google
Cloud project, a stack name and a resource name never take each other's jobs.

Releases up to 0.3.0 derived the label from the stack, resource name and request alone,
and set no project label. A create whose owner names a project looks that earlier label
up too (``Owner.before_projects``), adopting only a job that carries no project label and
this resource's stack and resource labels: a create an earlier release began, interrupted
and rerun under this one, finds its job. A job submitted since carries the project label,
so no other project's create can take it that way. A submission
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
from vertex_training.api.labels import (
    IDENTITY_LABEL,
    PROJECT_LABEL,
    RESOURCE_LABEL,
    STACK_LABEL,
    label_value,
)
from vertex_training.api.pipelines import (
    MODEL_ID_KEY,
    MODEL_KEY,
    PARENT_KEY,
    is_pipeline_body,
    model_owner_labels,
    with_parent,
)
from vertex_training.errors import TransientError, UncertainError
from vertex_training.resources.state import OWNER_VIEW_KEYS, engine_numbers

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


#: The keys of a job's stack settings (and of its view) that name its owner beside the
#: stack (``Owner.of``): the program gives them (``vertex_training.program``) and the
#: plugin reads the project from the URN.
PROJECT_SETTING, ORGANIZATION_SETTING = OWNER_VIEW_KEYS
#: The organization the Pulumi SDK names when the engine gave it none (a self-managed
#: backend): no part of the identity.
NO_ORGANIZATION = "organization"


@dataclass(frozen=True)
class Owner:
    """Whom a job belongs to: a stack of a Pulumi project, of an organization where the
    engine names one. ``project`` is "" for a job recorded by a release up to 0.3.0, which
    did not know it: its identity is the one those releases gave."""

    stack: str
    project: str = ""
    organization: str = ""

    @classmethod
    def of(cls, stack_settings: Mapping[str, Any]) -> Owner:
        """The owner a job's recorded stack settings name."""
        organization = str(stack_settings.get(ORGANIZATION_SETTING) or "")
        return cls(
            stack=str(stack_settings.get("stack") or ""),
            project=str(stack_settings.get(PROJECT_SETTING) or ""),
            organization="" if organization == NO_ORGANIZATION else organization,
        )

    def before_projects(self) -> Owner | None:
        """The owner as a release up to 0.3.0 named it (the stack alone), or None when
        this one is that already."""
        return Owner(self.stack) if self.project else None


def identity_label(
    owner: Owner, resource: str, request: Mapping[str, Any], attempt: int = 1
) -> str:
    """The value of IDENTITY_LABEL: a hash of the owner, resource name and request (in
    its canonical form, so that the same job always gets the same label), and of the
    attempt number from the second attempt of a job with ``retry`` on. Without a project
    (``Owner.project``), the label releases up to 0.3.0 gave."""
    parts: list[Any] = [owner.stack, resource, engine_numbers(canonical_request(request))]
    if attempt > 1:
        parts.append(attempt)
    if owner.project:
        parts.insert(0, {"organization": owner.organization, "project": owner.project})
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:IDENTITY_HASH_LEN]


def labelled_request(
    request: Mapping[str, Any], owner: Owner, resource: str, attempt: int = 1
) -> dict[str, Any]:
    """The request as submitted (as attempt ``attempt``): the user's labels plus the
    provider's (the project's only when the owner names one)."""
    body: dict[str, Any] = json.loads(json.dumps(request))
    ours = {
        IDENTITY_LABEL: identity_label(owner, resource, request, attempt),
        PROJECT_LABEL: label_value(owner.project) if owner.project else None,
        STACK_LABEL: label_value(owner.stack),
        RESOURCE_LABEL: label_value(resource),
    }
    body["labels"] = {
        **body.get("labels", {}),
        **{key: value for key, value in ours.items() if value is not None},
    }
    return body


#: The labels a found job must share with a submission to be that submission's job.
OWNER_LABELS = (PROJECT_LABEL, STACK_LABEL, RESOURCE_LABEL)


def owns(labels: Mapping[str, str], job: JobStatus) -> bool:
    """Whether ``job`` is the job of a submission with ``labels``: the same project (or,
    for a submission of a release up to 0.3.0, none), stack and resource labels."""
    return all(job.labels.get(key, "") == labels.get(key, "") for key in OWNER_LABELS)


def find_submitted(backend: Backend, body: Mapping[str, Any]) -> JobStatus | None:
    """The job an earlier, interrupted create submitted with the same identity, if any
    (the newest, should there be several): one carrying ``body``'s identity label and its
    project, stack and resource labels."""
    labels = body["labels"]
    found = backend.find_by_label(IDENTITY_LABEL, labels[IDENTITY_LABEL])
    return next((job for job in found if owns(labels, job)), None)


def next_version(backend: Backend, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """A training pipeline's body registering the next version of its model when the
    model exists (the one of its ``modelId``, else the newest carrying its owner labels:
    a retrain), as it is otherwise (a new model, and any other body)."""
    if not is_pipeline_body(body) or MODEL_KEY not in body or body.get(PARENT_KEY):
        return body
    found = backend.find_model(str(body.get(MODEL_ID_KEY) or ""), model_owner_labels(body))
    return with_parent(body, found)


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
    body = next_version(backend, body)
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
