"""A job's submissions (attempts): one for a job submitted once, one per entry of its
``retry.attempts`` for a job that is resubmitted after failures that are not its own.
Each attempt carries its own identity label, so the labels are the record of what was
submitted (``vertex_training.resources.submission``): the job's create and the waiter
(which submits the next attempt after a failure) find and advance them alike. Also how
a job is stopped (cancel, then wait for it to end), and whom a job belongs to.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from vertex_training.api import states
from vertex_training.api.bodies import strategy_of, with_strategy
from vertex_training.api.labels import IDENTITY_LABEL, PROJECT_LABEL
from vertex_training.api.pipelines import pipeline_body
from vertex_training.errors import TransientError
from vertex_training.keys import job_key
from vertex_training.resources.listing import StackListing
from vertex_training.resources.progress import BACKENDS_LOGGER
from vertex_training.resources.state import OWNER_VIEW_KEYS, ProviderSettings
from vertex_training.resources.submission import (
    CREATE_RETRY,
    CreateRetry,
    Owner,
    find_submitted,
    labelled_request,
    submit,
)

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus

#: Where a create says it took a job over (shown on the resource's row, ``backend_notices``).
_LOG = logging.getLogger(BACKENDS_LOGGER)

#: How long a delete waits for a cancelled job to stop before deleting it anyway.
STOP_TIMEOUT_S = 600.0
STOP_POLL_S = 2.0


def failure_output(status: JobStatus) -> dict[str, Any]:
    """A failed job's error, classified (``vertex_training.api.failures``); {} for any other."""
    if status.state != states.FAILED:
        return {}
    from vertex_training.api.failures import classify

    return classify(status.error_code, status.error).to_output()


def connect_backend(location: Mapping[str, Any], settings: ProviderSettings) -> Backend:
    from vertex_training.backends import connect

    return connect(location, settings.connection())


@dataclass(frozen=True)
class Attempt:
    """One submission of a job: its number (1 for the first), where it runs, under which
    strategy, the request as submitted (its own identity label), and the job found or
    submitted for it (None while there is none)."""

    number: int
    region: str
    strategy: str
    location: Mapping[str, Any]
    body: Mapping[str, Any]
    #: The request as a release up to 0.3.0 labelled it (``Owner.before_projects``), which
    #: a job that release submitted carries; None when ``body`` is labelled so already.
    earlier_body: Mapping[str, Any] | None = None
    status: JobStatus | None = None
    #: Whether this process submitted it (``Attempts.advance``), rather than found it.
    submitted: bool = False
    #: Its console and logs pages (its backend's), once there is a job.
    console_url: str = ""
    logs_url: str = ""

    def output(self) -> dict[str, Any]:
        """The attempt as an entry of the job's ``attempts`` output."""
        status = self.status
        failure = failure_output(status) if status is not None else {}
        return {
            "attempt": self.number,
            "region": self.region,
            "strategy": self.strategy,
            "state": status.state if status is not None else "",
            "class": failure.get("class", ""),
            "resource_name": status.name if status is not None else "",
            "job_id": status.job_id if status is not None else "",
            "console_url": self.console_url,
            "logs_url": self.logs_url,
        }


class Attempts:
    """The attempts of one job (its checked inputs): one when it has no ``retry``, else
    one per entry of ``retry.attempts``, each in its region under its strategy with its
    own identity label.

    The labels are the record: ``find`` looks every attempt up, so whatever ran before (a
    killed engine, an earlier `pulumi up`) is seen, and ``advance`` never submits an
    attempt while another is alive, nor the same attempt twice.
    """

    def __init__(
        self,
        inputs: Mapping[str, Any],
        settings: ProviderSettings,
        listing: StackListing | None = None,
    ) -> None:
        """``listing``: where ``find`` looks the labels up (``vertex_training.resources.listing``:
        the stack's jobs listed once for the whole update); by default, one lookup each."""
        self.inputs = inputs
        self.settings = settings
        self.retry: Mapping[str, Any] = inputs.get("retry") or {}
        self._backends: dict[str, Backend] = {}
        self._listing = listing

    def plan(self) -> list[Attempt]:
        """Every attempt the job may make, without statuses."""
        request, location = self.inputs["request"], self.inputs["location"]
        owner, name = owner_of(self.inputs), self.inputs["name"]
        earlier = owner.before_projects()
        own = {"region": location.get("region") or "", "strategy": strategy_of(request)}
        planned = list(self.retry.get("attempts") or []) or [own]
        attempts = []
        model, dataset = self.inputs.get("model"), self.inputs.get("dataset")
        for number, where in enumerate(planned, start=1):
            # The first attempt is the job as configured: its request and label unchanged.
            body = request if number == 1 else with_strategy(request, where["strategy"])
            attempts.append(
                Attempt(
                    number=number,
                    region=where["region"],
                    strategy=where["strategy"],
                    location=location if number == 1 else {**location, "region": where["region"]},
                    body=_submitted(labelled_request(body, owner, name, number), model, dataset),
                    earlier_body=(
                        labelled_request(body, earlier, name, number) if earlier else None
                    ),
                )
            )
        return attempts

    def backend(self, attempt: Attempt) -> Backend:
        """The backend of ``attempt``'s location (one per location)."""
        key = json.dumps(attempt.location, sort_keys=True)
        if key not in self._backends:
            self._backends[key] = connect_backend(attempt.location, self.settings)
        return self._backends[key]

    def find(self) -> list[Attempt]:
        """The attempts that exist, by label, in order."""
        found = []
        for attempt in self.plan():
            status = self._look_up(attempt)
            if status is not None:
                found.append(self._with(attempt, status))
        return found

    def _look_up(self, attempt: Attempt) -> JobStatus | None:
        """The job of ``attempt`` by its identity label, else (a job a release up to 0.3.0
        submitted) by the label that release gave it."""
        found = self._find(attempt, attempt.body)
        if found is None and attempt.earlier_body is not None:
            found = self._find(attempt, attempt.earlier_body)
            if found is not None:
                _LOG.warning(
                    "%s: took over %s by the label a release up to 0.3.0 gave it (%s=%s, no "
                    "%s label); the jobs submitted from now on carry this project's label",
                    job_key(self.inputs["name"]),
                    found.name,
                    IDENTITY_LABEL,
                    attempt.earlier_body["labels"][IDENTITY_LABEL],
                    PROJECT_LABEL,
                )
        return found

    def _find(self, attempt: Attempt, body: Mapping[str, Any]) -> JobStatus | None:
        backend = self.backend(attempt)
        if self._listing is None:
            return find_submitted(backend, body)
        return self._listing.find(backend, attempt.location, body["labels"])

    def _with(self, attempt: Attempt, status: JobStatus, *, submitted: bool = False) -> Attempt:
        """``attempt`` with its job and that job's pages."""
        backend = self.backend(attempt)
        return replace(
            attempt,
            status=status,
            submitted=submitted,
            console_url=backend.console_url(status.name),
            logs_url=backend.logs_url(status.name),
        )

    def retries(self, status: JobStatus) -> bool:
        """Whether ``status`` ended in a failure ``retry.when`` names."""
        failure = failure_output(status)
        return bool(failure) and failure.get("class") in (self.retry.get("when") or ())

    def next_after(self, last: Attempt) -> Attempt | None:
        """The attempt to submit after ``last`` ended, or None: ``last`` did not fail in a
        way ``retry.when`` names, or it was the last attempt."""
        plan = self.plan()
        if last.status is None or not self.retries(last.status) or last.number >= len(plan):
            return None
        return plan[last.number]

    @staticmethod
    def current(found: list[Attempt]) -> Attempt | None:
        """The attempt the job's resource tracks: the live one, else the latest."""
        alive = [a for a in found if a.status and a.status.state not in states.TERMINAL_STATES]
        return alive[-1] if alive else (found[-1] if found else None)

    def advance(self, retry: CreateRetry = CREATE_RETRY) -> tuple[Attempt, list[Attempt]]:
        """The attempt to track now, and every attempt there is: a live attempt is
        adopted (an older live one, which only a crash between two submissions could
        leave, is cancelled: one attempt alive at a time); else, after an attempt that
        failed in a way ``retry.when`` names, the next one is submitted; else the latest
        attempt is kept; with none at all, the first is submitted."""
        found = self.find()
        alive = [a for a in found if a.status and a.status.state not in states.TERMINAL_STATES]
        for older in alive[:-1]:
            assert older.status is not None
            stop(self.backend(older), older.status.name)
        if alive:
            return alive[-1], found
        following = self.next_after(found[-1]) if found else self.plan()[0]
        if following is None:
            return found[-1], found
        status = submit(self.backend(following), following.body, retry)
        submitted = self._with(following, status, submitted=True)
        return submitted, [*found, submitted]


def _submitted(
    body: dict[str, Any], model: Mapping[str, Any] | None, dataset: Mapping[str, Any] | None
) -> dict[str, Any]:
    """What an attempt submits: its labelled job, run as a training pipeline that reads
    ``dataset`` and uploads ``model`` when the job has either
    (``vertex_training.api.pipelines``)."""
    return body if model is None and dataset is None else pipeline_body(body, model, dataset)


def attempt_outputs(attempts: list[Attempt], inputs: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``attempts`` output: every attempt of a job with ``retry`` on; [] without."""
    return [a.output() for a in attempts] if inputs.get("retry") else []


def owner_of(inputs: Mapping[str, Any]) -> Owner:
    """Whom a job belongs to, by its view (``recorded_view``) or its waiter entry."""
    return Owner.of(
        {
            "stack": inputs["stack_name"],
            **{key: inputs[key] for key in OWNER_VIEW_KEYS if key in inputs},
        }
    )


def stop(backend: Backend, name: str, timeout_s: float = STOP_TIMEOUT_S) -> None:
    """Cancel a job that has not ended and wait (bounded) until it has."""
    status = backend.get(name)
    if status is None or status.state in states.TERMINAL_STATES:
        return
    backend.cancel(name)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = backend.get(name)
        if status is None or status.state in states.TERMINAL_STATES:
            return
        time.sleep(STOP_POLL_S)
    raise TransientError(
        f"job {name} was cancelled but is still {status.state} after {timeout_s:.0f}s; "
        "run `pulumi destroy` again to finish deleting it"
    )
