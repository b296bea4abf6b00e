"""TrainingJob: a Vertex AI CustomJob as a Pulumi dynamic resource.

Lifecycle, as the engine drives it:

- check: parse the job's stack config with ``vertex_training.stackconfig``; every mistake becomes a
  CheckFailure naming the stack config key, the bad value and the fix. The checked
  inputs are what the user wrote (the job's config, and the stack settings it was
  given) and the state's ``schema`` (``vertex_training.resources.state``: every state read goes
  through its migration); nothing derived, so the state holds each job once.
- diff, create, read, update, delete: derive what they need (the exact API request,
  where the job runs, its ``wait``, ``adopt`` and ``retry``: ``JobView``) by parsing the
  recorded config again, as check did. A change to anything that runs replaces the job
  (the API has no update) and lists the changed keys; a change to provider-side
  settings only is an in-place update; no change is no diff. Both hosts read the one
  diff, ``diff_job`` (``vertex_training.resources.changes``).
- create: submits and returns at once with the server-chosen resource name as the ID.
  Waiting is done for all jobs together by ``vertex_training.resources.waiter.JobWaiter``,
  so a stack of many jobs is not held in batches by the provider host's four threads;
  only a job with ``run_after`` waits first, for the jobs it names to succeed
  (``vertex_training.resources.run_after``); the plugin's tuning jobs wait for
  themselves after their create (``vertex_training.plugin.provider``). Each job carries
  a label derived from its stack, resource name and request; a create looks for that
  label first (in one listing of the stack's jobs per update, ``resources.listing``), so
  a rerun after an interrupted ``pulumi up`` adopts the job it had already submitted
  instead of submitting it twice. A submission that fails in a way
  that may or may not have created the job (INTERNAL, DEADLINE_EXCEEDED, UNKNOWN,
  UNAVAILABLE: the backend raises ``UncertainError``) is tried again, at most
  ``CREATE_ATTEMPTS`` times in all with backoff (``CreateRetry``), each attempt preceded
  by the label lookup: a job an earlier attempt created is adopted, so no job is ever
  submitted twice.
- read: brings back the job's state; a job deleted outside Pulumi leaves the state.
- delete: cancels a job that has not ended, waits for it to stop, deletes its record.

The provider object is pickled into the state with every resource: it holds no fields
when pickled, and every client is made inside an operation. How this machine reaches the
backends (``ProviderSettings``) is read by ``configure``, which the provider host calls
after loading it, from the stack config; it is never stored per job.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import pulumi
from pulumi.dynamic import (
    CheckFailure,
    CheckResult,
    CreateResult,
    DiffResult,
    ReadResult,
    UpdateResult,
)

from vertex_training.api import states
from vertex_training.api.bodies import (
    run_key_differs,
    runs_differently,
)
from vertex_training.api.pipelines import is_pipeline_name
from vertex_training.backend_kinds import DEFAULT_BACKEND, kind_of
from vertex_training.backends.base import location_of
from vertex_training.errors import BackendError, KeyIssue, SpecError
from vertex_training.keys import job_key
from vertex_training.resources.attempts import (
    Attempt,
    Attempts,
    connect_backend,
    owner_of,
    stop,
)
from vertex_training.resources.changes import (
    Cause,
    JobChange,
    key_changes,
    replacing_keys,
)
from vertex_training.resources.job_arguments import (
    JOB_ARGUMENT,
    UNKNOWN_PASSED_THROUGH,
    JobPlatform,
    argument_issue,
    from_program,
    program_settings,
    read_job,
    recorded_view,
    with_packages,
)
from vertex_training.resources.listing import StackListing
from vertex_training.resources.progress import (
    BACKENDS_LOGGER,
    EngineLog,
    backend_notices,
    kept_text,
    resource_urn,
)
from vertex_training.resources.records import JobObserved, JobRecord
from vertex_training.resources.run_after import runs_after, wait_to_run
from vertex_training.resources.state import (
    CONFIG_KEY,
    OWNER_VIEW_KEYS,
    SCHEMA_KEY,
    ConfiguredProvider,
    ProviderSettings,
    is_unknown,
    whole_numbers,
)
from vertex_training.resources.submission import (
    CREATE_RETRY,
    CreateRetry,
)
from vertex_training.resources.unwaited import expect_waiter, taken

if TYPE_CHECKING:
    from vertex_training.backend_kinds import BackendName
    from vertex_training.backends.base import Backend, JobStatus, RegisteredModel
    from vertex_training.errors import Issue
    from vertex_training.resources.arguments import ImageRowArgs, TrainingJobArgs
    from vertex_training.resources.state import JobView
    from vertex_training.stackconfig import JobSpec

#: Where a create says it took a job over (shown on the resource's row, ``backend_notices``).
_LOG = logging.getLogger(BACKENDS_LOGGER)

#: The one input the program gives a job's resource: its name, config and stack settings
#: (``TrainingJob``), which ``check`` turns into the job's recorded inputs.
JOB_INPUT = "job"

#: Jobs that a create in this process took over instead of submitting. The provider
#: host is one process for a whole `pulumi up`; when a replacement takes over the very
#: job it replaces (`pulumi up --replace` of an unchanged job: same identity label),
#: deleting the old resource must not delete the job the new one now tracks. Module
#: state of the host process: never part of the pickled provider.
_TAKEN_OVER: set[str] = set()

#: The outputs the program reads of every TrainingJob, for its stack outputs in an update
#: (``vertex_training.program.exports``, which derives the others: the resource name is the ID):
#: always recorded. The others are left out when empty (every key of every job is
#: carried and logged by the engine at each step); a job with ``retry`` always records
#: ``attempts``, which its stack outputs read.
EXPORTED_OUTPUT_KEYS = ("state", "error")
#: The outputs a job records (and its program reads) when it sets the key of the same
#: name: a job with ``retry``'s ``attempts``, a job with ``model``'s ``model``.
OPTIONAL_OUTPUTS = {"retry": "attempts", "model": "model"}


class TrainingJobProvider(ConfiguredProvider):
    """The job operations, and the dynamic provider behind TrainingJob. Stateless: see
    the module docstring.

    Its typed operations (``check_job``, ``diff_job``, ``create_job``, ``read_job``,
    ``update_job``, ``delete_job``: ``resources.records``) are what either host calls;
    ``check``, ``diff``, ``create``, ``read``, ``update`` and ``delete`` adapt them to the
    dynamic providers' dicts. A subclass (``vertex_training.resources.tuning_job``) runs
    tuning jobs (``tuning``: their outputs add the trials).
    """

    #: Those outputs the program reads (its resource registers a placeholder for each).
    exported_keys: tuple[str, ...] = EXPORTED_OUTPUT_KEYS
    resource_type: ClassVar[str] = "TrainingJob"
    #: Whether a job with a study is refused (a tuning job is another resource's).
    runs_no_study: ClassVar[bool] = True
    #: Whether its jobs are tuning jobs, with trials (``JobObserved.trials``).
    tuning: ClassVar[bool] = False
    #: How a create tries again after an uncertain failure (a class attribute, never
    #: pickled into the state; tests subclass to wait less).
    create_retry: ClassVar[CreateRetry] = CREATE_RETRY

    def start(self, settings: ProviderSettings) -> None:
        """Keep the settings, and start this update's listing of the stack's jobs
        (``vertex_training.resources.listing``)."""
        super().start(settings)
        self._listing = StackListing()

    # ------------------------------------------------------------ the dynamic adapters

    def check(self, olds: Any, news: Any) -> CheckResult:
        checked, issues = self.check_job(JobRecord.of_state(olds or {}), news[JOB_INPUT])
        return CheckResult(checked.recorded(), [_failure(checked.name, issue) for issue in issues])

    def diff(self, id_: str, olds: Any, news: Any) -> DiffResult:
        last = JobObserved.of_outputs(id_, olds)
        change = self.diff_job(JobRecord.of_state(olds), JobRecord.of_state(news), last)
        return DiffResult(
            changes=change.changes,
            replaces=list(change.replaces),
            stables=["name"],
            delete_before_replace=False,
        )

    def create(self, props: Any) -> CreateResult:
        record = JobRecord.of_state(props)
        observed = self.create_job(record)
        return CreateResult(observed.resource_name, self.state_of(record, observed))

    def read(self, id_: str, props: Any) -> ReadResult:
        record = JobRecord.of_state(props)
        observed = self.read_job(id_, record)
        if observed is None:
            return ReadResult("", {})
        return ReadResult(observed.resource_name, self.state_of(record, observed))

    def update(self, id_: str, _olds: Any, news: Any) -> UpdateResult:
        record = JobRecord.of_state(news)
        return UpdateResult(self.state_of(record, self.update_job(id_, record)))

    def delete(self, id_: str, props: Any) -> None:
        self.delete_job(id_, JobRecord.of_state(props))

    def state_of(self, record: JobRecord, observed: JobObserved) -> dict[str, Any]:
        """A job resource's state: its ``record`` (nothing derived from it) and what the
        backend reports of the job it tracks, those that are empty left out but the
        ones its program reads (``EXPORTED_OUTPUT_KEYS``; a job with ``retry``'s
        ``attempts``, and one with ``model``'s ``model``: ``OPTIONAL_OUTPUTS``)."""
        optional = (out for key, out in OPTIONAL_OUTPUTS.items() if record.sets(key))
        kept = (*self.exported_keys, *optional)
        return {**record.recorded(), **observed.outputs(kept)}

    # ------------------------------------------------------------ the typed operations

    def check_job(self, old: JobRecord, job: Mapping[str, Any]) -> tuple[JobRecord, list[Issue]]:
        """The job's record (its checked inputs, as the state keeps them), and its mistakes
        named as its program wrote them: by argument path (``job.workers.machine``) for a
        program's job, by stack config key for a stack config's. ``job``: its ``job``
        input (name, config, stack settings); ``old``: its record before (empty for a
        new job). Both hosts render the mistakes (``check``, and the plugin's on its
        property paths)."""
        from vertex_training.stackconfig.study import is_tuning_job

        name, config, stack_values = job["name"], job.get(CONFIG_KEY), job["stack"]
        # The job as written; what runs is derived from it again where it is needed
        # (``recorded_view``).
        unchecked = JobRecord(name, config, stack_values)
        if is_unknown(config) or is_unknown(stack_values):
            # Not known yet (computed from resources still to be created): nothing can be
            # validated now; the check at `pulumi up` sees the values.
            return unchecked, []
        # In a preview, stack settings may hold values known only once the platform
        # exists (the name of a TensorBoard still to be created). Those the spec passes
        # through verbatim go in as Pulumi's unknown sentinel and come out of the request
        # as unknown, which the preview shows as such; the job is validated without them.
        # Any other unknown setting means the job cannot be validated yet.
        unknown = {key for key, value in stack_values.items() if is_unknown(value)}
        if unknown - UNKNOWN_PASSED_THROUGH:
            return unchecked, []
        # The engine hands a dynamic provider every number as a float; the program (and
        # render, plan, the policy pack) got whole numbers as ints from the same config.
        config = whole_numbers(config or {})
        stack = {**stack_values, **dict.fromkeys(unknown, pulumi.runtime.rpc.UNKNOWN)}
        checked = JobRecord(name, config, stack)
        if not unknown and old.same_job(checked):
            # Checked before, as it is (same config, same stack settings): it passed, and
            # an unchanged job is never submitted again, so it is not parsed again (a
            # no-change preview of many jobs then parses none).
            return checked, []
        if self.runs_no_study and is_tuning_job(config):
            # Parsed, it would be a tuning job, which this resource neither submits as one
            # nor gives trial outputs.
            key = JOB_ARGUMENT if from_program(stack) else job_key(name)
            message = (
                "a TrainingJob runs no study; declare this job as a HyperparameterTuningJob "
                "(docs/tuning.md), or remove study"
            )
            return checked, [KeyIssue(f"{key}.study", None, message)]
        # A value of a program's other resources may be unknown in a preview: the rest of
        # the job is checked, and the mistakes about it reported; it is checked once known.
        read = read_job(name, config, stack)
        if read.job is None:
            return checked, [_shown(name, issue, stack) for issue in read.issues]
        preflight = [] if read.partly_known else _preflight(read.job, self.settings)
        return checked, [_shown(name, issue, stack) for issue in preflight]

    def diff_job(
        self, old: JobRecord, new: JobRecord, last: JobObserved | None = None
    ) -> JobChange:
        """What changed between a job's ``old`` record and its ``new`` one, for either host
        (``resources.changes``); ``last``: what the resource last saw of its job (a
        failed job with ``retry`` may have an attempt left)."""
        failed = last is not None and last.state == states.FAILED
        if old.same_job(new) and not failed:
            # The same config and stack settings make the same job (``recorded_view``
            # derives it from nothing else): no change, with no parse (a no-change
            # preview of many jobs).
            return JobChange()
        try:
            was = recorded_view(old.recorded())
        except SpecError:
            # Recorded by a release that read it differently: what it runs is unknown,
            # so every key counts as changed (the job is replaced).
            was = {}
        now = new.recorded()
        with contextlib.suppress(SpecError):
            now = recorded_view(now)  # a job with unknown values in a preview stays unparsed
        # The stack settings count through what they change: the request and location.
        # The schema a state was written in is no change by itself.
        # Nor is whom the job belongs to: a job recorded before the view named its Pulumi
        # project is the same job with it.
        keys = (set(was) | set(now)) - {"stack", SCHEMA_KEY, *OWNER_VIEW_KEYS}
        changed = sorted(k for k in keys if run_key_differs(k, was, now))
        replaces = replacing_keys(changed, runs_differently(was, now))
        cause: Cause = ""
        if not replaces and retries_on_next_up(last, now):
            # The recorded job (as the last read, update or `pulumi refresh` saw it)
            # failed in a way its `retry` names and attempts are left. The engine calls
            # create only for a new or replaced resource, so the resubmission is reported
            # as a replacement caused by `retry`: create then finds the failed attempt by
            # its label and submits the next one (``Attempts.advance``), and the delete of
            # the replaced state leaves alone the attempts the new one lists.
            replaces, changed, cause = ["retry"], sorted({*changed, "retry"}), "retry"
        config_keys = key_changes(old.config, new.config, bool(replaces))
        if replaces and not cause and not any(key.replaces for key in config_keys):
            cause = "settings"  # a default the job took, or a stack setting, changed
        return JobChange(tuple(changed), tuple(replaces), config_keys, cause)

    def create_job(self, record: JobRecord, urn: str = "") -> JobObserved:
        """Submit the job of ``record`` (or take over the one an earlier `pulumi up`
        submitted, or the one it adopts), once the jobs it runs after have succeeded.
        What slows the submission down (a request quota) is shown on the row of the
        resource ``urn`` (by default the dynamic resource's of the job's name)."""
        view = record.view()
        owner = owner_of(view)
        log = EngineLog.from_process(
            urn or resource_urn(owner.stack, self.resource_type, view["name"], owner.project)
        )
        with contextlib.closing(log), backend_notices(log):
            if prerequisites := runs_after(view):
                wait_to_run(view["name"], prerequisites, self.settings, log)
            return self._submit(view)

    def _submit(self, view: JobView) -> JobObserved:
        if view.get("adopt"):
            backend = connect_backend(view["location"], self.settings)
            status = backend.get(view["adopt"])
            if status is None:
                raise BackendError(
                    f"{job_key(view['name'], 'adopt')} names {view['adopt']}, "
                    "which does not exist; remove `adopt` to submit a new job"
                )
            attempts: list[Attempt] = []
        else:
            # A job without retry looks its label up in the stack's listing (one list
            # call per location for the whole update); the attempts of one with retry
            # are looked up afresh (the waiter may have submitted some).
            listing = None if view.get("retry") else getattr(self, "_listing", None)
            job = Attempts(view, self.settings, listing)
            tracked, attempts = job.advance(self.create_retry)
            assert tracked.status is not None
            status, backend = tracked.status, job.backend(tracked)
            # Every attempt found (not submitted) is taken over: the delete of the
            # resource this one replaces (same labels: its job is among them) must leave
            # them, and the attempt submitted after them, to this one.
            _TAKEN_OVER.update(a.status.name for a in attempts if a.status and not a.submitted)
            if not tracked.submitted:
                _LOG.warning(
                    "took over %s, which an earlier `pulumi up` submitted (found by its "
                    "labels); if this update warned of a pending create of this resource, "
                    "an engine was stopped before recording it: run `pulumi refresh --yes "
                    "--clear-pending-creates` once this update is done",
                    status.name,
                )
        return JobObserved.of_status(status, backend, view, attempts, tuning=self.tuning)

    def _follow(self, id_: str, view: JobView) -> tuple[JobStatus | None, Backend, list[Attempt]]:
        """The job the resource tracks: for a job with ``retry``, its current attempt
        (``Attempts.current``: the waiter or an earlier run may have moved on from
        ``id_``), else ``id_`` itself."""
        if view.get("retry") and not view.get("adopt"):
            job = Attempts(view, self.settings)
            found = job.find()
            current = Attempts.current(found)
            if current is not None:
                return current.status, job.backend(current), found
        backend = connect_backend(location_of(id_), self.settings)
        return backend.get(id_), backend, []

    def read_job(self, id_: str, record: JobRecord) -> JobObserved | None:
        """The job the resource of ``record`` tracks (``id_``, or its current attempt), as
        its backend reports it now; None when it is gone (deleted outside Pulumi)."""
        view = record.view()
        status, backend, attempts = self._follow(id_, view)
        if status is None:
            return None
        return JobObserved.of_status(status, backend, view, attempts, tuning=self.tuning)

    def update_job(self, id_: str, record: JobRecord) -> JobObserved:
        """An update of what only the provider reads (``wait``, ``adopt``, ``retry``,
        ``run_after``): the job as it is now, which must still exist."""
        observed = self.read_job(id_, record)
        if observed is None:
            raise BackendError(
                f"job {id_} no longer exists; run `pulumi refresh` to drop it from the stack"
            )
        return observed

    def delete_job(self, id_: str, record: JobRecord) -> None:
        """Cancel the job (every attempt of one with ``retry``), wait for it to stop, and
        delete it; a job this process took over for another resource is left to it."""
        if not id_ or id_ in _TAKEN_OVER:
            return
        doomed: dict[str, Backend] = {}
        # Only a job with retry needs its config read: every attempt, each in its region
        # (one the waiter submitted after the one this state records included), so none
        # is left behind. Any other is deleted by its resource name alone.
        if record.sets("retry"):
            view = record.view()
            if view.get("retry") and not view.get("adopt"):
                job = Attempts(view, self.settings)
                for attempt in job.find():
                    assert attempt.status is not None
                    doomed[attempt.status.name] = job.backend(attempt)
        if id_ not in doomed:
            doomed[id_] = connect_backend(location_of(id_), self.settings)
        registered = [model for name, where in doomed.items() if (model := _model_of(where, name))]
        for name, where in doomed.items():
            stop(where, name)
            where.delete(name)
        if registered:
            view = record.view()
            owner = owner_of(view)
            urn = resource_urn(owner.stack, self.resource_type, view["name"], owner.project)
            with contextlib.closing(EngineLog.from_process(urn)) as log:
                for model in registered:
                    log.lasting(kept_text(model, doomed[id_].model_versions(model.name)))


def _model_of(backend: Backend, name: str) -> RegisteredModel | None:
    """The model version the training pipeline ``name`` registered, if any."""
    status = backend.get(name) if is_pipeline_name(name) else None
    return status.model if status is not None else None


def retries_on_next_up(last: JobObserved | None, view: Mapping[str, Any]) -> bool:
    """Whether a job's ``last`` state is a failure its ``retry`` (of its ``view``) names,
    with attempts left: then the next `pulumi up` submits its next attempt (``diff``)."""
    retry = view.get("retry") or {}
    if not retry or last is None or last.state != states.FAILED:
        return False
    kind = last.failure.get("class")
    used = max((int(a.get("attempt", 1)) for a in last.attempts), default=1)
    return kind in (retry.get("when") or ()) and used < len(retry.get("attempts") or ())


def _shown(name: str, issue: Issue, stack: Mapping[str, Any]) -> Issue:
    """``issue`` named as the job's program wrote it (``check_job``)."""
    return argument_issue(name, issue) if from_program(stack) else issue


def _failure(name: str, issue: Issue) -> CheckFailure:
    """``issue`` as a dynamic provider's check failure, on the job's top-level key."""
    tail = ""
    for prefix in (f"{job_key(name)}.", f"{JOB_ARGUMENT}."):
        if issue.key.startswith(prefix):
            tail = issue.key[len(prefix) :]
    return CheckFailure(tail.split(".")[0] or "config", str(issue))


def _preflight(job: JobSpec, settings: ProviderSettings) -> list[Issue]:
    """Problems a backend can see before submission (no cloud call)."""
    if not kind_of(job.backend).preflight:
        return []
    from vertex_training.backends.local import preflight

    return preflight(
        job.request_body(),
        key_prefix=job_key(job.name),
        base_dir=settings.base_dir,
        accelerators=settings.local_accelerators,
    )


class TrainingJob(pulumi.dynamic.Resource, module="vertex", name="TrainingJob"):
    """A training job, run by Vertex AI or on this machine (docs/library.md)."""

    if TYPE_CHECKING:
        # Every annotation of the class is for type checkers only: the SDK reads a
        # resource class's annotations again for every instance (``get_type_hints``, a
        # cost per job), class variables' included.
        job_provider_class: type[TrainingJobProvider]
        state: pulumi.Output[str]
        error: pulumi.Output[str]
        attempts: pulumi.Output[list[dict[str, Any]]]
        #: What a job with ``model`` registered (``state.JobOutputs.model``).
        model: pulumi.Output[dict[str, Any]]

    #: The provider of this kind of job (a subclass may name another); its
    #: ``exported_keys`` are the outputs the program reads of every job of this kind (a
    #: job with ``retry`` adds ``attempts``). Each is a property placeholder, an Output
    #: the program resolves: a cost per job, paid in an update only.
    job_provider_class = TrainingJobProvider

    def __init__(
        self,
        name: str,
        job: TrainingJobArgs | Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
        *,
        platform: JobPlatform | None = None,
        project: pulumi.Input[str] | None = None,
        region: pulumi.Input[str] | None = None,
        backend: BackendName | None = None,
        service_account: pulumi.Input[str] | None = None,
        output_root: pulumi.Input[str] | None = None,
        image_repository: pulumi.Input[str] | None = None,
        tensorboard: pulumi.Input[str] | None = None,
        images: Sequence[ImageRowArgs] | None = None,
        secret: bool = False,
        stack: Mapping[str, Any] | None = None,
    ) -> None:
        """``job``: the job's keys, as a stack config job has them (``TrainingJobArgs``).

        Where it runs: ``platform`` (a ``TrainingPlatform``, whose APIs and grants the job
        waits for) and the other arguments, which win (``job_arguments.program_settings``);
        or ``stack``, the settings of a stack config job (``vertex_training.program``).
        ``images``: rows added to the catalogue of prebuilt images, as the stack config key
        ``vertex-training:images`` takes them (docs/images.md).
        ``secret``: the job holds a secret (an env value); keep it encrypted in the state.

        The job is one input (``job``: name, config, stack settings), recorded by
        ``check`` as the job's inputs: every property a resource registers is an Output
        the program resolves, a cost per job; so one, and the outputs the stack outputs
        read, in an update only. The provider host sees plain values, and the engine
        marks a checked input secret when the input of that name was: so a secret config
        goes with a secret placeholder named ``config``.
        """
        config = dict(job)
        given = {
            "project": project,
            "region": region,
            "backend": backend,
            "service_account": service_account,
            "output_root": output_root,
            "image_repository": image_repository,
            "tensorboard": tensorboard,
            "images": [dict(row) for row in images] if images else None,
        }
        settings = dict(stack) if stack is not None else program_settings(platform, given)
        if stack is None:
            config, uploads = with_packages(name, config, backend or DEFAULT_BACKEND, platform)
            waits = [*(platform.dependencies if platform else []), *uploads]
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=waits))
        #: The job's name, keys and stack settings as given (``wait_for_jobs`` reads them).
        self.job_name, self.config, self.settings, self.secret = name, config, settings, secret
        optional = tuple(out for key, out in OPTIONAL_OUTPUTS.items() if key in config)
        # A stack config job's outputs are read in an update only (none in a preview:
        # ``jobs_exports``); a program's job has them always, for the program to use.
        preview = stack is not None and pulumi.runtime.is_dry_run()
        exported = () if preview else self.job_provider_class.exported_keys
        #: The outputs this job's stack outputs read.
        self.read_outputs: tuple[str, ...] = (*exported, *optional) if exported else ()
        job_input: dict[str, Any] = {"name": name, CONFIG_KEY: config, "stack": settings}
        props: dict[str, Any] = {JOB_INPUT: job_input, **dict.fromkeys(self.read_outputs)}
        if secret:
            job_input[CONFIG_KEY] = pulumi.Output.secret(config)
            props[CONFIG_KEY] = pulumi.Output.secret(None)
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=[CONFIG_KEY])
            )
        super().__init__(self.job_provider_class(), name, props, opts)
        if stack is None:  # (a stack config's jobs are all given to its waiter)
            expect_waiter(self, name, config)


def waiter_input(job: TrainingJob, until: str) -> dict[str, Any]:
    """The waiter's input for ``job``: the submission to wait for, and ``until`` which
    state (``running`` or ``succeeded``). Nothing else of the job: the waiter reads its
    timeouts, location and retries from the stack config (``waiter.wait_entries``)."""
    taken(job)
    return {"resource_name": job.id, "until": until}
