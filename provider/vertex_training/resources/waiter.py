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

This module holds the resource, its dynamic provider (which the state names by this
module's path) and ``wait_for``; the wait itself is in parts: the plan read once from the
waiter's entries (``wait_plan``), a pure readiness checker per kind of job
(``readiness``), the loop with its schedule, deadline, cancel and observers
(``wait_loop``), and the attempts of jobs with ``retry`` (``retries``).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pulumi
from pulumi.dynamic import (
    ConfigureRequest,
    CreateResult,
    DiffResult,
    ReadResult,
    UpdateResult,
)

from vertex_training.errors import JobEndedError
from vertex_training.resources import interrupted
from vertex_training.resources.cancellation import PROCESS, Cancellation
from vertex_training.resources.progress import EngineLog, backend_notices
from vertex_training.resources.state import ConfiguredProvider, ProviderSettings, migrate_waiter
from vertex_training.resources.wait_loop import (
    POLL_FRACTION,
    POLL_MAX_S,
    POLL_MIN_S,
    Timing,
    follow,
    poll_interval_s,
)
from vertex_training.resources.wait_plan import WaitPlan, read_plan
from vertex_training.stackconfig import NOT_WAITED, WAITED

#: The waiter's names, the polling schedule's among them (``wait_loop`` defines it).
__all__ = [
    "POLL_FRACTION",
    "POLL_MAX_S",
    "POLL_MIN_S",
    "RUNNING",
    "SEEN_OUTPUTS",
    "SUBMITTED",
    "SUCCEEDED",
    "URN_INPUT",
    "JobWaiter",
    "JobWaiterProvider",
    "fail_on_problems",
    "poll_interval_s",
    "wait_entries",
    "wait_for",
]

#: The waiter's input that holds its own URN, which progress messages name (the name
#: `urn` itself is the Resource attribute of the same name).
URN_INPUT = "progress_urn"

#: Wait policies, from the stack config's `wait` key (``stackconfig.WAIT_UNTIL``).
SUBMITTED, (RUNNING, SUCCEEDED) = NOT_WAITED, WAITED


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
    deadline_s: float | None = None,
) -> dict[str, str]:
    """Wait until each job is where its policy asks; return each job's last state.

    ``entries`` maps a job's name to its ``resource_name``, ``wait`` policy
    (``until``, ``timeout_s``) and ``location`` (a ``WaitEntry``), read once into a
    ``WaitPlan``; ``settings`` say how this machine reaches the backends (default: the
    current directory's project, no endpoint override). Raises JobEndedError
    naming every job that failed or timed out, after all others were waited for.
    ``seen``, when given, receives each polled job's last ``JobStatus``; ``report``
    receives ``reasons`` (why a job was not running yet, the last one given),
    ``failures`` (a failed job's class, message, fix and last log lines) and
    ``problems`` (why a job failed the wait: the JobEndedError's text for it), by job
    name.
    A job not running after its ``start_timeout_s`` fails the wait. ``log`` shows the
    progress on the waiter's row (``vertex_training.resources.progress``): a status line
    while jobs are waited for, a lasting line for each job as it leaves the wait. A job is
    read only when its next read is due (``poll_interval_s``). ``clock`` (wall time,
    compared with the server's timestamps), ``monotonic`` and ``sleep`` are injectable for
    tests. ``cancel`` (the engine's cancel, Ctrl-C, through the plugin: ``cancellation``)
    ends the wait at once with ``WaitCancelledError``; ``sleep`` defaults to its pause.
    ``deadline_s``: the engine's timeout for the operation that waits, from now (None:
    none); a job still waited for then fails the wait.
    """
    return follow(
        WaitPlan.of_entries(entries),
        seen,
        report=report,
        settings=settings,
        log=log,
        timing=Timing(clock, monotonic, sleep),
        cancel=cancel,
        deadline_s=deadline_s,
    )


def wait_entries(
    waited: Mapping[str, Mapping[str, Any]],
    stack: Mapping[str, Any],
    keys: Mapping[str, Any],
    project_dir: Path,
) -> dict[str, dict[str, Any]]:
    """What ``wait_for`` needs of each waited-for job (a ``WaitEntry``), from the
    waiter's input (``waited``: job name -> the ``resource_name`` it waits for and
    ``until``) and the stack config: the plan ``read_plan`` reads, entry by entry."""
    return read_plan(waited, stack, keys, project_dir).entries()


#: What a wait records, by job name, beside the jobs it waited for: the waiter's outputs.
SEEN_OUTPUTS = ("states", "trials", "reasons", "attempts", "problems", "models")


def _wait(
    plan: WaitPlan,
    urn: str | None,
    settings: ProviderSettings,
    *,
    create: bool = False,
    deadline_s: float | None = None,
) -> dict[str, dict[str, Any]]:
    """Wait for the jobs of ``plan``, showing progress on the row of the resource ``urn``;
    return what it saw, as the waiter's ``SEEN_OUTPUTS``: the state each job was last
    seen in, the tuning jobs' trials, why jobs waited, the attempts of jobs with
    ``retry``, and why jobs failed the wait (``problems``). A job that fails the wait
    is recorded, not raised: the waiter is kept with what it saw, the stack outputs are
    recorded, and then the program fails the update (``JobWaiter``). A failure to
    wait at all (an endpoint that cannot be reached, a configuration the provider
    cannot read) is raised. A ``create``'s wait is marked while it runs, and warns when
    an earlier engine stopped during one (``vertex_training.resources.interrupted``).
    ``deadline_s``: the engine's timeout for the operation (``follow``)."""
    seen: dict[str, Any] = {}
    report: dict[str, dict[str, Any]] = {}
    log = EngineLog.from_process(urn)
    mark = (
        interrupted.marked(settings.base_dir, log.urn, log.address or "")
        if create and plan.jobs
        else contextlib.nullcontext(False)
    )
    try:
        with mark as stopped_before, backend_notices(log):
            if stopped_before:
                log.warning(interrupted.INTERRUPTED)
            reached = follow(
                plan, seen, report=report, settings=settings, log=log, deadline_s=deadline_s
            )
    except JobEndedError:
        names = {job.name for job in plan.jobs}
        reached = {name: status.state for name, status in seen.items() if name in names}
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
        jobs' wait policies are read from when there is a wait (``read_plan``)."""
        super().configure(req)
        self._config = req.config

    def _plan(self, waited: Mapping[str, Any], props: Mapping[str, Any]) -> WaitPlan:
        """The plan of the jobs ``waited`` (entries of the waiter's ``jobs``), read once."""
        if not waited:
            return WaitPlan(())
        from vertex_training import stackconfig

        config = getattr(self, "_config", None)
        keys = stackconfig.engine_keys(config.get) if config is not None else {}
        return read_plan(waited, props.get("stack") or {}, keys, Path(self.settings.base_dir))

    def diff(self, _id: str, olds: Any, news: Any) -> DiffResult:
        olds = migrate_waiter(olds)
        changes = olds.get("jobs") != news.get("jobs") or bool(_failed_before(olds, news))
        return DiffResult(changes=changes, replaces=[])

    def create(self, props: Any) -> CreateResult:
        return self.create_at(props, props.get(URN_INPUT))

    def create_at(
        self, props: Any, urn: str | None, deadline_s: float | None = None
    ) -> CreateResult:
        """``create``, showing the wait's progress on the row of the resource ``urn`` (a
        dynamic waiter's records its own, ``URN_INPUT``; the plugin's is the engine's),
        within the engine's ``deadline_s`` for it when there is one (the plugin's)."""
        jobs = props.get("jobs") or {}
        plan = self._plan(jobs, props)
        seen = _wait(plan, urn, self.settings, create=True, deadline_s=deadline_s)
        return CreateResult("jobs", {"jobs": jobs, **seen, URN_INPUT: props.get(URN_INPUT)})

    def update(self, _id: str, olds: Any, news: Any) -> UpdateResult:
        return self.update_at(olds, news, news.get(URN_INPUT))

    def update_at(
        self, olds: Any, news: Any, urn: str | None, deadline_s: float | None = None
    ) -> UpdateResult:
        """``update``, showing the wait's progress on the row of the resource ``urn``,
        within the engine's ``deadline_s`` for it when there is one."""
        jobs = news.get("jobs") or {}
        olds = migrate_waiter(olds)
        waited = {**_changed(olds, news), **_failed_before(olds, news)}
        seen = _wait(self._plan(waited, news), urn, self.settings, deadline_s=deadline_s)
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

    def wait_one(
        self, name: str, waits: Mapping[str, Any], urn: str, deadline_s: float | None = None
    ) -> dict[str, Any]:
        """Wait for one job as a waiter waits for it (``waits``: its ``resource_name``,
        ``until``, ``config`` and ``stack``, as a waiter's input gives them), showing the
        progress on the row of ``urn``, within the engine's ``deadline_s`` when there is
        one; return what the wait saw (``SEEN_OUTPUTS``). A job that fails the wait is
        among the ``problems``; the engine's cancel raises ``WaitCancelledError``. The
        plugin's tuning jobs wait so in their own create."""
        jobs = {name: waits}
        plan = self._plan(jobs, {"jobs": jobs, "stack": {}})
        return _wait(plan, urn, self.settings, deadline_s=deadline_s)

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
        the stack config, ``wait_plan.read_plan``).

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
