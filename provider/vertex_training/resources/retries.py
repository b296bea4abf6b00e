"""The waiter's bookkeeping of the jobs with ``retry``: their attempts while it waits.

When a job with ``retry`` ends FAILED (``readiness`` says RETRY), the waiter asks
``Retries.after_failure`` for the attempt to wait for instead: the next one, submitted now
through ``vertex_training.resources.attempts.Attempts`` (whose labels are the record of
what was submitted), or a live one an earlier run left. ``Retries`` keeps each such job's
attempts for the waiter's ``attempts`` output, says on the status line which attempt a
job is at and after what, and leaves a lasting line for each attempt that ended and each
one submitted or found.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from vertex_training.api import states
from vertex_training.api.times import epoch_s
from vertex_training.resources.why import failure_of

if TYPE_CHECKING:
    from vertex_training.backends.base import JobStatus
    from vertex_training.resources.attempts import Attempt
    from vertex_training.resources.progress import Progress
    from vertex_training.resources.state import ProviderSettings
    from vertex_training.resources.wait_plan import JobWait, WaitPlan


class Retries:
    """The attempts of the jobs with ``retry`` (``Attempts``): submits a job's next
    attempt after a failure its ``retry.when`` names, says so on the status line and in a
    lasting line, and gives ``report`` each such job's ``attempts`` (as its resource's
    ``attempts`` output lists them)."""

    def __init__(
        self,
        plan: WaitPlan,
        settings: ProviderSettings,
        progress: Progress,
        report: dict[str, Any],
    ) -> None:
        self._jobs = {job.name: job.attempt_inputs() for job in plan.jobs if job.retries}
        self._settings = settings
        self._progress = progress
        self._attempts: dict[str, list[Attempt]] = {}
        self._noted: dict[str, set[int]] = {}
        self._report: dict[str, Any] = report.setdefault("attempts", {})

    def after_failure(self, job: JobWait, status: JobStatus) -> tuple[JobWait, JobStatus] | None:
        """The job to wait for instead of ``job``, which ``status`` says FAILED, and its
        status: its next attempt, submitted now, or a live attempt an earlier run left;
        None when it has no retry, the failure is not one it names, or its attempts ran
        out."""
        from vertex_training.resources.attempts import Attempts

        name = job.name
        inputs = self._jobs.get(name)
        if inputs is None or status.state != states.FAILED:
            return None
        attempts_of = Attempts(inputs, self._settings)
        tracked, attempts = attempts_of.advance()
        self._attempts[name] = attempts
        self._report[name] = [a.output() for a in attempts]
        if tracked.status is None or tracked.status.name == status.name:
            return None
        total = len(attempts_of.plan())
        # Every earlier attempt that ended gets its lasting line once per wait: the one
        # just read, and any that ended while no engine watched (killed between attempts).
        noted = self._noted.setdefault(name, set())
        for ended in attempts:
            if ended is tracked or ended.status is None or ended.number in noted:
                continue
            if ended.status.state not in states.TERMINAL_STATES:
                continue
            noted.add(ended.number)
            failure = failure_of(ended.status)
            kind = f", {failure.kind}: {failure.summary}" if failure is not None else ""
            self._progress.note(
                f"{name}: attempt {ended.number}/{total} in {ended.region} ({ended.strategy}) "
                f"ended {ended.status.state}{kind}"
            )
        verb = "submitted" if tracked.submitted else f"found {tracked.status.state}"
        self._progress.note(
            f"{name}: attempt {tracked.number}/{total} {verb} in {tracked.region} "
            f"({tracked.strategy}): {tracked.status.name}"
        )
        return job.attempt(tracked.status.name, tracked.location), tracked.status

    def ended(self, name: str, status: JobStatus) -> tuple[str, float | None]:
        """A job left the wait: its current attempt's last state goes in the report.
        Returns ``which`` attempt it is, for its lasting line."""
        attempts = self._attempts.get(name)
        if not attempts:
            return "", None
        last = attempts[-1]
        if last.status is not None and last.status.name == status.name:
            attempts[-1] = replace(last, status=status)
        self._report[name] = [a.output() for a in attempts]
        return self.which(name)

    def which(self, name: str) -> tuple[str, float | None]:
        """For a job past its first attempt: ``attempt 2/3`` and when attempt 1 was
        submitted (epoch seconds); ("", None) for any other job."""
        attempts = self._attempts.get(name) or []
        if len(attempts) < 2:
            return "", None
        first = attempts[0].status
        return (
            f"attempt {attempts[-1].number}/{self._total(name)}",
            epoch_s(first.create_time) if first is not None else None,
        )

    def with_attempts(self, reasons: Mapping[str, str]) -> dict[str, str]:
        """The status line's reasons, with the attempt of each job past its first:
        ``attempt 2/3 in us-east1 (STANDARD), after capacity in us-central1``."""
        texts = dict(reasons)
        for name, attempts in self._attempts.items():
            if len(attempts) < 2:
                continue
            current, earlier = attempts[-1], attempts[:-1]
            seen = Counter(
                f"{a.output()['class'] or a.output()['state']} in {a.region}" for a in earlier
            )
            after = ", ".join(f"{text}{_times(count)}" for text, count in seen.items())
            text = (
                f"attempt {current.number}/{self._total(name)} in "
                f"{current.region} ({current.strategy}), after {after}"
            )
            texts[name] = f"{text}; {texts[name]}" if texts.get(name) else text
        return texts

    def _total(self, name: str) -> int:
        """How many attempts ``retry.attempts`` gives the job."""
        return len(self._jobs[name]["retry"]["attempts"])


def _times(count: int) -> str:
    """'' once, ' twice', ' 3 times'."""
    return "" if count == 1 else " twice" if count == 2 else f" {count} times"
