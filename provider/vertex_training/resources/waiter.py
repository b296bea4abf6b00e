"""JobWaiter: one resource that waits for all of a stack's jobs in a single call.

The Python dynamic provider host serves every dynamic resource of a program from one
process with four threads. If each TrainingJob waited in its own create, a stack of
twelve jobs would run in batches of four. Instead a TrainingJob's create returns as soon
as the job is submitted, and this resource, which depends on every job, polls them all
together: `pulumi up` takes about as long as the longest job.

A job that ends FAILED, CANCELLED or EXPIRED, or that is not where its policy asks when
its timeout runs out, fails the update with the job's error and a link to its logs. The
jobs themselves are already in the stack's state at that point, so nothing is left
running outside it. The waiter is recorded too, with what it saw (``problems`` says why
each such job failed the wait), and so are the stack outputs; then the program fails
the update (``fail_on_problems``). The next `pulumi up` waits for those jobs again.

Each job is read on its own schedule (``poll_interval_s``): after 5% of the time it has
run, between 2 s and 60 s. While it waits, the waiter shows each job's state on its row
of `pulumi up`, and leaves a lasting line for each job that leaves the wait
(``vertex_training.resources.progress``).

Hyperparameter tuning jobs are waited for the same way; for them the waiter also keeps
the trials it last saw (``trials`` output: job name -> ``trials`` and ``best_trial``),
newer than what the job's resource recorded at submission.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pulumi
from pulumi.dynamic import (
    ConfigureRequest,
    CreateResult,
    DiffResult,
    ReadResult,
    UpdateResult,
)

from vertex_training.api import states
from vertex_training.api.times import epoch_s
from vertex_training.backends.base import location_of
from vertex_training.errors import BackendError, JobEndedError
from vertex_training.keys import job_key
from vertex_training.resources import interrupted
from vertex_training.resources.cancellation import PROCESS, Cancellation, WaitCancelledError
from vertex_training.resources.progress import EngineLog, Progress, age_s, backend_notices
from vertex_training.resources.why import Why, failure_of
from vertex_training.stackconfig import NOT_WAITED, WAITED

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus
from vertex_training.resources.state import (
    OWNER_VIEW_KEYS,
    RESUBMISSION_KEYS,
    ConfiguredProvider,
    ProviderSettings,
    migrate_waiter,
    view_of,
    whole_numbers,
)

#: Polling. Each job is read again after POLL_FRACTION of the time it has run (since it
#: started RUNNING; before that, since it was created), never sooner than POLL_MIN_S
#: after the last read and never later than POLL_MAX_S: a job's end is noticed within
#: max(2 s, 5% of its running time), and a job that has run for 20 minutes or more costs
#: one read (GetCustomJob or GetHyperparameterTuningJob) a minute.
#:
#: The quota this is designed for: Vertex AI's "Resource management (CRUD) requests",
#: 600 requests per minute per project and region by default (the request quotas table
#: of https://cloud.google.com/vertex-ai/docs/quotas; JobService reads count there: the
#: page gives no separate figure for them). At steady state a stack of N long jobs takes
#: N reads a minute (12 jobs: 2% of the quota). A job's first hour costs about 130 reads:
#: one every 2 s for its first 40 s, then one per 5% of its age, then one a minute from
#: minute 20. The burst is at the start, where N jobs submitted together read 30 times a
#: minute each for 40 s: 20 jobs started at once would use the region's whole quota for
#: those seconds (a read refused for quota, RESOURCE_EXHAUSTED, is retried with backoff
#: by the Vertex backend).
POLL_FRACTION = 0.05
POLL_MIN_S = 2.0
POLL_MAX_S = 60.0

#: The waiter's input that holds its own URN, which progress messages name (the name
#: `urn` itself is the Resource attribute of the same name).
URN_INPUT = "progress_urn"

#: Wait policies, from the stack config's `wait` key (``stackconfig.WAIT_UNTIL``).
SUBMITTED, (RUNNING, SUCCEEDED) = NOT_WAITED, WAITED


def poll_interval_s(age: float | None) -> float:
    """Seconds until a job that has run ``age`` seconds is read again (POLL_MIN_S when
    its age is unknown)."""
    if age is None:
        return POLL_MIN_S
    return min(max(POLL_FRACTION * age, POLL_MIN_S), POLL_MAX_S)


def _reached(state: str, until: str) -> bool:
    if until == RUNNING:
        return state in states.STARTED_STATES
    return state == states.SUCCEEDED


def _problem(
    name: str,
    entry: Mapping[str, Any],
    status: JobStatus | None,
    backend: Backend,
    waited_s: float,
) -> str | None:
    """Why the job fails the wait, "" when it reached its policy, or None when it is to be
    read again."""
    job, until, timeout_s = (
        entry["resource_name"],
        entry["wait"]["until"],
        entry["wait"]["timeout_s"],
    )
    if status is None:
        return f"job {name} ({job}) no longer exists; run `pulumi refresh`"
    if status.state not in states.FAILED_STATES and _reached(status.state, until):
        return ""
    if status.state in states.TERMINAL_STATES:
        failure = failure_of(status)
        # A failed job's message alone: the local backend appends its log, which the
        # failure shows apart (``why.failure_text``).
        error = failure.summary if failure is not None else status.error
        return (
            f"job {name} ({job}) ended {status.state}: {error or 'no error given'}"
            f"\n  logs: {backend.logs_url(job)}"
        )
    start_timeout_s = entry["wait"].get("start_timeout_s")
    if (
        start_timeout_s
        and status.state not in states.STARTED_STATES
        and waited_s >= start_timeout_s
    ):
        return (
            f"job {name} ({job}) is still {status.state} after {start_timeout_s}s, the "
            f"{job_key(name, 'wait', 'start_timeout')} it may take to start running; it stays "
            f"submitted and in the stack, and the next `pulumi up` waits for it again "
            f"(cancel it with `pulumi destroy`, or raise start_timeout)"
            f"\n  logs: {backend.logs_url(job)}"
        )
    if waited_s >= timeout_s:
        return (
            f"job {name} ({job}) is still {status.state} after waiting {timeout_s}s for it "
            f"to be {until}; it keeps running and stays in the stack, and the next "
            f"`pulumi up` waits for it again\n  logs: {backend.logs_url(job)}"
        )
    return None


def wait_for(
    entries: Mapping[str, Mapping[str, Any]],
    seen: dict[str, Any] | None = None,
    *,
    report: dict[str, dict[str, Any]] | None = None,
    settings: ProviderSettings | None = None,
    log: EngineLog | None = None,
    clock: Callable[[], float] = time.time,
    monotonic: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] | None = None,
    cancel: Cancellation = PROCESS,
) -> dict[str, str]:
    """Wait until each job is where its policy asks; return each job's last state.

    ``entries`` maps a job's name to its ``resource_name``, ``wait`` policy
    (``until``, ``timeout_s``) and ``location`` (a ``WaitEntry``); ``settings`` say how
    this machine reaches the backends (default: the current directory's project, no
    endpoint override). Raises JobEndedError
    naming every job that failed or timed out, after all others were waited for.
    ``seen``, when given, receives each polled job's last ``JobStatus``; ``report``
    receives ``reasons`` (why a job was not running yet, the last one given),
    ``failures`` (a failed job's class, message, fix and last log lines) and
    ``problems`` (why a job failed the wait: the JobEndedError's text for it), by job
    name.
    A job not running after its ``start_timeout_s`` fails the wait. ``log`` shows the
    progress on the waiter's row (``vertex_training.resources.progress``): a status line while jobs
    are
    waited for, a lasting line for each job as it leaves the wait. A job is read only
    when its next read is due (``poll_interval_s``). ``clock`` (wall time, compared with
    the server's timestamps), ``monotonic`` and ``sleep`` are injectable for tests.
    ``cancel`` (the engine's cancel, Ctrl-C, through the plugin: ``cancellation``) ends
    the wait at once with ``WaitCancelledError``; ``sleep`` defaults to its pause.
    """
    settings = settings or ProviderSettings(base_dir=str(Path.cwd()))
    connection = settings.connection()
    progress = Progress(log or EngineLog(None, ""))
    start = monotonic()
    pending = {name: e for name, e in entries.items() if e["wait"]["until"] != SUBMITTED}
    due = dict.fromkeys(pending, start)
    # When each job's current attempt began to be waited for: a resubmitted attempt gets
    # the wait's timeouts afresh.
    starts = dict.fromkeys(pending, start)
    report = {} if report is None else report
    retries = _Retries(entries, settings, progress, report)
    latest: dict[str, Any] = {}
    final: dict[str, str] = {}
    backends: dict[str, Backend] = {}
    why = Why(report)
    while pending:
        for name, entry in sorted(pending.items()):
            if due[name] > monotonic():
                continue
            backend, job = _backend(backends, entry, connection), entry["resource_name"]
            status = latest[name] = backend.get(job)
            if seen is not None and status is not None:
                seen[name] = status
            why.observe(name, entry, status, clock())
            problem = _problem(name, entry, status, backend, monotonic() - starts[name])
            moved = retries.after_failure(name, status) if problem else None
            if moved is not None:
                # Its next attempt (or a live one an earlier run submitted): wait for that
                # one instead, from now.
                pending[name], latest[name] = moved
                due[name] = starts[name] = monotonic()
                why.left(name)
                continue
            if problem and status is not None:
                problem += why.failed(name, backend, status)
            if problem is None:
                assert status is not None  # a job that is gone is a problem
                # Read again when due, and no later than when a timeout runs out.
                interval = poll_interval_s(age_s(status, clock()))
                due[name] = min(monotonic() + interval, starts[name] + _timeout_s(entry, status))
                continue
            if problem:
                why.problems[name] = problem
            elif status is not None:
                final[name] = status.state
            del pending[name], latest[name], due[name]
            why.left(name)
            if status is not None:
                attempt, first_created = retries.ended(name, status)
                progress.ended(
                    name,
                    status,
                    backend.console_url(job),
                    backend.logs_url(job),
                    attempt=attempt,
                    first_created=first_created,
                )
        progress.waiting(latest, clock(), monotonic(), retries.with_attempts(why.reasons))
        if pending:
            _pause(min(due.values()) - monotonic(), sleep, cancel, final, latest)
    if why.problems:
        raise JobEndedError("\n".join(why.problems.values()))
    return final


def _pause(
    seconds: float,
    sleep: Callable[[float], None] | None,
    cancel: Cancellation,
    final: Mapping[str, str],
    pending: Mapping[str, JobStatus | None],
) -> None:
    """Pause a wait between its reads (``sleep``, else ``cancel``'s pause, which ends at
    the cancel). Once cancelled, ``WaitCancelledError`` with each job's last state (those
    that left the wait, ``final``, and those still waited for, ``pending``), the jobs still
    waited for named as unfinished."""
    (sleep or cancel.sleep)(max(0.0, seconds))
    if cancel.cancelled:
        raise WaitCancelledError({**final, **_states(pending)}, sorted(pending))


def _states(latest: Mapping[str, JobStatus | None]) -> dict[str, str]:
    return {name: status.state for name, status in latest.items() if status is not None}


def _backend(backends: dict[str, Backend], entry: Mapping[str, Any], connection: Any) -> Backend:
    """The backend of ``entry``'s location, connected once per location."""
    from vertex_training.backends import connect

    key = json.dumps(entry["location"], sort_keys=True)
    if key not in backends:
        backends[key] = connect(entry["location"], connection)
    return backends[key]


def _timeout_s(entry: Mapping[str, Any], status: JobStatus | None) -> float:
    """How long the wait for this job may last from its start, as of ``status``: its
    ``start_timeout_s`` while it has not started running, else its ``timeout_s``."""
    wait = entry["wait"]
    start_timeout_s = wait.get("start_timeout_s")
    if start_timeout_s and status is not None and status.state not in states.STARTED_STATES:
        return float(min(start_timeout_s, wait["timeout_s"]))
    return float(wait["timeout_s"])


class _Retries:
    """The attempts of the jobs with ``retry``
    (``vertex_training.resources.attempts.Attempts``):
    submits a job's next attempt after a failure its ``retry.when`` names, says so on the
    status line and in a lasting line, and gives ``report`` each such job's ``attempts``
    (as its resource's ``attempts`` output lists them)."""

    def __init__(
        self,
        entries: Mapping[str, Mapping[str, Any]],
        settings: ProviderSettings,
        progress: Progress,
        report: dict[str, Any],
    ) -> None:
        self._jobs = {
            name: _job_inputs(name, entry) for name, entry in entries.items() if entry.get("retry")
        }
        self._settings = settings
        self._progress = progress
        self._attempts: dict[str, list[Any]] = {}
        self._noted: dict[str, set[int]] = {}
        self._report: dict[str, Any] = report.setdefault("attempts", {})

    def after_failure(
        self, name: str, status: JobStatus | None
    ) -> tuple[dict[str, Any], JobStatus] | None:
        """The entry to wait for instead of the job ``status`` says FAILED, and its status:
        its next attempt, submitted now, or a live attempt an earlier run left; None when the job
        did not fail, has no retry, the failure is not one it names, or its attempts ran
        out."""
        from vertex_training.resources.attempts import Attempts

        inputs = self._jobs.get(name)
        if inputs is None or status is None or status.state != states.FAILED:
            return None
        job = Attempts(inputs, self._settings)
        tracked, attempts = job.advance()
        self._attempts[name] = attempts
        self._report[name] = [a.output() for a in attempts]
        if tracked.status is None or tracked.status.name == status.name:
            return None
        total = len(job.plan())
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
        entry = {
            **inputs,
            "wait": dict(inputs["wait"]),
            "resource_name": tracked.status.name,
            "location": dict(tracked.location),
        }
        return entry, tracked.status

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
        total = len(self._jobs[name]["retry"]["attempts"])
        return (
            f"attempt {attempts[-1].number}/{total}",
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
                f"attempt {current.number}/{len(self._jobs[name]['retry']['attempts'])} in "
                f"{current.region} ({current.strategy}), after {after}"
            )
            texts[name] = f"{text}; {texts[name]}" if texts.get(name) else text
        return texts


def _times(count: int) -> str:
    """'' once, ' twice', ' 3 times'."""
    return "" if count == 1 else " twice" if count == 2 else f" {count} times"


def _job_inputs(name: str, entry: Mapping[str, Any]) -> dict[str, Any]:
    """What ``Attempts`` needs of a job, from its waiter entry (``WaitEntry``)."""
    return {
        "name": entry.get("name") or name,
        "request": entry["request"],
        "location": entry["location"],
        "stack_name": entry["stack_name"],
        "retry": entry["retry"],
        "wait": entry["wait"],
        **{key: entry[key] for key in (*OWNER_VIEW_KEYS, "model", "dataset") if key in entry},
    }


def _models(seen: Mapping[str, Any]) -> dict[str, Any]:
    """What each training pipeline among the statuses seen registered (and its backing
    job), by job name: ``JobStatus.model_output``."""
    outputs = {name: status.model_output() for name, status in seen.items()}
    return {name: output for name, output in outputs.items() if output}


def _trials(seen: Mapping[str, Any]) -> dict[str, Any]:
    """The trials (and best trial) of each tuning job among the statuses seen."""
    return {name: status.trial_outputs() for name, status in seen.items() if status.metric_id}


def _changed(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    old_jobs = olds.get("jobs") or {}
    return {n: e for n, e in (news.get("jobs") or {}).items() if old_jobs.get(n) != e}


def wait_entries(
    waited: Mapping[str, Mapping[str, Any]],
    stack: Mapping[str, Any],
    keys: Mapping[str, Any],
    project_dir: Path,
) -> dict[str, dict[str, Any]]:
    """What ``wait_for`` needs of each waited-for job (a ``WaitEntry``), from the
    waiter's input (``waited``: job name -> the ``resource_name`` it waits for and
    ``until``) and the stack config.

    The waiter records no other copy of a stack config job: its wait policy, location
    and (for a job with ``retry``) what submitting its next attempt takes are read here
    from the stack config the engine handed the provider (``keys``) by the loader the
    program used, and each job is parsed as its resource's ``check`` parsed it, against
    the stack settings the jobs were given (``stack``): the same request, so the same
    labels. A job a program gave as arguments has its ``config`` and ``stack`` in its
    entry (``vertex_training.program.library.wait_for_jobs``), or, a plugin job without
    ``retry``, its wait plan (``timeout_s``; its location is its resource name's).
    """
    if not waited:
        return {}
    from vertex_training import stackconfig

    stack_jobs: dict[str, Any] = {}
    if any("config" not in waits and "timeout_s" not in waits for waits in waited.values()):
        loaded = stackconfig.load_stack(keys, str(stack["stack"]), project_dir=project_dir)
        stack_jobs = {name: job.config for name, job in loaded.jobs.items()}
    entries: dict[str, dict[str, Any]] = {}
    for name, waits in waited.items():
        if "config" not in waits and "timeout_s" in waits:  # a plugin job's wait plan
            entries[name] = planned_entry(waits)
            continue
        if "config" in waits:  # a job a program gave as arguments (``wait_for_jobs``)
            settings, config = stackconfig.StackSettings(**waits["stack"]), waits["config"]
        elif name in stack_jobs:
            settings, config = stackconfig.StackSettings(**stack), stack_jobs[name]
        else:
            raise BackendError(
                f"{job_key(name)} is not in the stack config the provider was given; "
                "run `pulumi up` again"
            )
        spec = stackconfig.parse_job(name, whole_numbers(config), settings)
        view = view_of(spec, settings)
        entry: dict[str, Any] = {
            "resource_name": waits["resource_name"],
            "wait": {**view["wait"], "until": waits["until"]},
            "location": view["location"],
        }
        if "retry" in view:
            entry.update({key: value for key, value in view.items() if key in RESUBMISSION_KEYS})
        entries[name] = entry
    return entries


def planned_entry(waits: Mapping[str, Any]) -> dict[str, Any]:
    """The ``WaitEntry`` of a job given by its wait plan (``state.Waited``): where it runs
    is read from its resource name (``projects/P/locations/R/...``, or a local job's)."""
    wait = {key: waits[key] for key in ("until", "timeout_s", "start_timeout_s") if key in waits}
    return {
        "resource_name": waits["resource_name"],
        "wait": wait,
        "location": location_of(str(waits["resource_name"])),
    }


#: What a wait records, by job name, beside the jobs it waited for: the waiter's outputs.
SEEN_OUTPUTS = ("states", "trials", "reasons", "attempts", "problems", "models")


def _wait(
    entries: Mapping[str, Any],
    urn: str | None,
    settings: ProviderSettings,
    *,
    create: bool = False,
) -> dict[str, dict[str, Any]]:
    """Wait for ``entries``, showing progress on the row of the resource ``urn``;
    return what it saw, as the waiter's ``SEEN_OUTPUTS``: the state each job was last
    seen in, the tuning jobs' trials, why jobs waited, the attempts of jobs with
    ``retry``, and why jobs failed the wait (``problems``). A job that fails the wait
    is recorded, not raised: the waiter is kept with what it saw, the stack outputs are
    recorded, and then the program fails the update (``JobWaiter``). A failure to
    wait at all (an endpoint that cannot be reached, a configuration the provider
    cannot read) is raised. A ``create``'s wait is marked while it runs, and warns when
    an earlier engine stopped during one (``vertex_training.resources.interrupted``)."""
    seen: dict[str, Any] = {}
    report: dict[str, dict[str, Any]] = {}
    log = EngineLog.from_process(urn)
    mark = (
        interrupted.marked(settings.base_dir, log.urn, log.address or "")
        if create and entries
        else contextlib.nullcontext(False)
    )
    try:
        with mark as stopped_before, backend_notices(log):
            if stopped_before:
                log.warning(interrupted.INTERRUPTED)
            reached = wait_for(entries, seen, report=report, settings=settings, log=log)
    except JobEndedError:
        reached = {name: status.state for name, status in seen.items() if name in entries}
    finally:
        log.close()
    return {
        "states": reached,
        "trials": _trials(seen),
        "reasons": report.get("reasons", {}),
        "attempts": report.get("attempts", {}),
        "problems": report.get("problems", {}),
        "models": _models(seen),
    }


def _failed_before(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Any]:
    """The jobs of ``news`` that failed the last wait: waited for again, as a changed
    job is (an earlier release recorded no ``problems``: none)."""
    failed = olds.get("problems") or {}
    return {n: e for n, e in (news.get("jobs") or {}).items() if n in failed}


class JobWaiterProvider(ConfiguredProvider):
    """Waits in create and update, for the jobs that are new or changed, or that failed
    the last wait."""

    def configure(self, req: ConfigureRequest) -> None:
        """Read how this machine reaches the backends, and keep the stack config the
        jobs' wait policies are read from when there is a wait (``wait_entries``)."""
        super().configure(req)
        self._config = req.config

    def _entries(self, waited: Mapping[str, Any], props: Mapping[str, Any]) -> dict[str, Any]:
        if not waited:
            return {}
        from vertex_training import stackconfig

        config = getattr(self, "_config", None)
        keys = stackconfig.engine_keys(config.get) if config is not None else {}
        return wait_entries(waited, props.get("stack") or {}, keys, Path(self.settings.base_dir))

    def diff(self, _id: str, olds: Any, news: Any) -> DiffResult:
        olds = migrate_waiter(olds)
        changes = olds.get("jobs") != news.get("jobs") or bool(_failed_before(olds, news))
        return DiffResult(changes=changes, replaces=[])

    def create(self, props: Any) -> CreateResult:
        return self.create_at(props, props.get(URN_INPUT))

    def create_at(self, props: Any, urn: str | None) -> CreateResult:
        """``create``, showing the wait's progress on the row of the resource ``urn`` (a
        dynamic waiter's records its own, ``URN_INPUT``; the plugin's is the engine's)."""
        jobs = props.get("jobs") or {}
        seen = _wait(self._entries(jobs, props), urn, self.settings, create=True)
        return CreateResult("jobs", {"jobs": jobs, **seen, URN_INPUT: props.get(URN_INPUT)})

    def update(self, _id: str, olds: Any, news: Any) -> UpdateResult:
        return self.update_at(olds, news, news.get(URN_INPUT))

    def update_at(self, olds: Any, news: Any, urn: str | None) -> UpdateResult:
        """``update``, showing the wait's progress on the row of the resource ``urn``."""
        jobs = news.get("jobs") or {}
        olds = migrate_waiter(olds)
        waited = {**_changed(olds, news), **_failed_before(olds, news)}
        seen = _wait(self._entries(waited, news), urn, self.settings)
        # What the last wait saw of the jobs not waited for now is kept; a job waited
        # for now has only what this wait saw of it (its last problem is gone if it
        # has none now).
        outs: dict[str, Any] = {"jobs": jobs}
        for key in SEEN_OUTPUTS:
            kept = {
                n: value
                for n, value in (olds.get(key) or {}).items()
                if n in jobs and (n not in waited or key in ("states", "trials", "models"))
            }
            outs[key] = {**kept, **seen[key]}
        return UpdateResult({**outs, URN_INPUT: news.get(URN_INPUT)})

    def wait_one(self, name: str, waits: Mapping[str, Any], urn: str) -> dict[str, Any]:
        """Wait for one job as a waiter waits for it (``waits``: its ``resource_name``,
        ``until``, ``config`` and ``stack``, as a waiter's input gives them), showing the
        progress on the row of ``urn``; return what the wait saw (``SEEN_OUTPUTS``). A
        job that fails the wait is among the ``problems``; the engine's cancel raises
        ``WaitCancelledError``. The plugin's tuning jobs wait so in their own create."""
        jobs = {name: waits}
        return _wait(self._entries(jobs, {"jobs": jobs, "stack": {}}), urn, self.settings)

    def read(self, id_: str, props: Any) -> ReadResult:
        return ReadResult(
            id_,
            {
                "jobs": props.get("jobs") or {},
                **{key: props.get(key) for key in SEEN_OUTPUTS},
                URN_INPUT: props.get(URN_INPUT),
            },
        )


class JobWaiter(pulumi.dynamic.Resource, module="vertex", name="JobWaiter"):
    """Waits for every job of the stack that asks to be waited for."""

    states: pulumi.Output[dict[str, str]]
    trials: pulumi.Output[dict[str, Any]]
    #: Why a job was not running yet, the last reason the wait gave (job name -> text).
    reasons: pulumi.Output[dict[str, str]]
    #: The attempts of each job with ``retry`` that the wait saw (job name -> list, as
    #: the job's ``attempts`` output lists them).
    attempts: pulumi.Output[dict[str, Any]]
    #: Why each job that failed the last wait failed it (job name -> text: its state, error,
    #: class, fix and last log lines, or why it never started). Such a job is waited for
    #: again by the next `pulumi up`.
    problems: pulumi.Output[dict[str, str]]
    #: What each job with ``model`` registered once its training pipeline succeeded, and
    #: its backing job (job name -> the job's ``model`` output).
    models: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        jobs: Mapping[str, Any],
        stack: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """``jobs``: the jobs to wait for, by name: the ``resource_name`` of the submission
        and ``until`` (``running`` or ``succeeded``; ``waiter_input``); ``stack``: the
        stack settings the jobs were given (the waiter reads the rest of each job from
        the stack config, ``wait_entries``).

        A job that fails the wait fails the update once the waiter is recorded with what
        it saw, and the stack outputs with it (``fail_on_problems``): the update's one
        error names every such job."""
        # The provider's create and update get the resource's properties, not its URN,
        # and progress messages must name it. So the waiter is given its own URN as an
        # input, computed here by the SDK's `create_urn` from the same name, type and
        # parent the registration below uses (a parent given in `opts` included, and the
        # stack and project of this very run), so it cannot drift from the URN the engine
        # assigns, and it is known at preview. `diff` ignores it: a renamed stack or
        # project changes it without making the waiter wait again.
        urn = pulumi.resource.create_urn(
            name, f"pulumi-python:{self._resource_type_name}", opts.parent if opts else None
        )
        props = {
            "jobs": dict(jobs),
            "stack": dict(stack),
            "states": None,
            "trials": None,
            "reasons": None,
            "attempts": None,
            "problems": None,
            "models": None,
            URN_INPUT: urn,
        }
        super().__init__(JobWaiterProvider(), name, props, opts)
        if not pulumi.runtime.is_dry_run():
            registered = super().urn
            self.__dict__[_GATED_URN] = pulumi.Output.all(registered, self.problems).apply(
                _urn_unless_failed
            )

    @property
    def urn(self) -> pulumi.Output[str]:
        """The waiter's URN; in an update, known only once every job it waits for is
        where it was asked to be.

        A resource that depends on the waiter (``depends_on=[waiter]``, or an input
        made of its outputs: a model upload, an endpoint, a notification) is registered
        once the SDK has the URNs of its dependencies. So when a job failed the wait,
        such a resource is not registered, as it would not be were the waiter's create
        to fail, while the waiter itself is recorded with what it saw
        (``fail_on_problems``). In a preview it is the URN the SDK resolves.
        """
        gated: pulumi.Output[str] | None = self.__dict__.get(_GATED_URN)
        return gated if gated is not None else super().urn


#: Where a JobWaiter keeps its gated URN (``JobWaiter.urn``), beside the SDK's own.
_GATED_URN = "_vertex_training_gated_urn"


def _urn_unless_failed(urn_and_problems: list[Any]) -> str:
    urn, problems = urn_and_problems
    fail_on_problems(problems)
    return str(urn)


def fail_on_problems(problems: Mapping[str, str] | None) -> None:
    """Fail the update with why each job failed the wait, if any did.

    Raised where the waiter's URN is resolved (``JobWaiter.urn``), after the waiter's
    create or update has returned: the state keeps the waiter with what it saw. The SDK
    sends every other registration the program made (the stack's outputs among them:
    the jobs' states, errors and reasons) before it raises what an apply raised; a
    registration that depends on the waiter is not sent, and fails with this error (as
    do stack outputs made of such a resource's outputs). A ``RunError``
    is shown by the language host as its message, without a traceback, under the
    stack's row: one error for the update however many jobs failed (Pulumi adds its
    own line, that the program exited with code 1)."""
    if problems:
        raise pulumi.RunError("\n".join(problems[name] for name in sorted(problems)))
