"""The provider plugin: a second host of the job resources' operations.

The engine calls the plugin with each resource's properties in the schema's naming
(``schema.json``: a job's keys under ``job``, in camelCase, and its settings beside
them). Each job call makes the job's record once (``record_of``: a
``resources.records.JobRecord`` of the job's name, its keys as a stack config has them,
its stack settings) and calls the typed job operations of ``vertex_training.resources``
(``TrainingJobProvider.check_job``, ``diff_job``, ``create_job``, ``read_job``,
``update_job``, ``delete_job``; the tuning job's provider; ``JobWaiterProvider``): one
implementation of the refusals, the diff, waits, retries, adoption by label and
cancel-then-delete, whichever host runs it. What comes back is typed too and rendered
once: the job's outputs (``JobObserved``) in camelCase beside the inputs as given, its
diff (``JobChange``) on property paths, and a check's mistakes (``check_job``'s issues,
keyed by argument path) on the schema's property paths.

The state records the inputs as the program gave them (with the provider's defaults
filled in by ``check``, so that a changed default shows as a change) and the outputs:
no pickled code. ``read`` with no inputs is ``pulumi import``: the job's keys are read
from the server's job (``vertex_training.plugin.importing``).

Calls that reach a service (create, read, update, delete, and the waiter's waits) run on
threads (``asyncio.to_thread``), so the plugin serves every call of an update at once,
as the engine makes them; a create that first waits for the jobs it runs after
(``run_after``) runs on a pool of its own, so the others never queue behind it. Check
and diff reach none (they parse a job at most, and not at all when it is unchanged) and
run on the event loop: on threads they would only contend for the interpreter
(docs/testing.md, "Through the provider plugin").

A preview of a create or an update (the plugin supports previews) submits and waits for
nothing, and runs on the event loop too: a job's properties are its inputs, the request
its create would submit and its cost estimate (``request``, ``estimate``: a preview's
alone, the state keeps neither), and every other output unknown (docs/plugin.md, "What a
preview shows"). The estimate's prices come from the snapshot
``vertex-training:prices`` names (``PriceSnapshot``), read once, by the first job that
needs it: a no-change preview reads none.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pulumi.provider.experimental.property_value import PropertyValue
from pulumi.provider.experimental.provider import (
    CheckFailure,
    CheckRequest,
    CheckResponse,
    ConfigureRequest,
    ConfigureResponse,
    ConstructRequest,
    ConstructResponse,
    CreateRequest,
    CreateResponse,
    DeleteRequest,
    DiffRequest,
    DiffResponse,
    GetSchemaRequest,
    GetSchemaResponse,
    PropertyDiff,
    PropertyDiffKind,
    Provider,
    ReadRequest,
    ReadResponse,
    UpdateRequest,
    UpdateResponse,
)

from vertex_training.backend_kinds import DEFAULT_BACKEND
from vertex_training.credentials import GoogleAuth
from vertex_training.errors import BackendError
from vertex_training.keys import LOCAL_ACCELERATOR_MODES
from vertex_training.plugin import schema
from vertex_training.plugin.importing import imported_inputs
from vertex_training.plugin.inputs import job_input, owner_of, resource_urn
from vertex_training.plugin.job_shapes import (
    RECORDED_INPUTS,
    Host,
    detailed_diff,
    job_preview,
    job_properties,
    last_observed,
    plugin_failures,
    property_failure,
    record_of,
    replaces,
    top,
    unchanged,
)
from vertex_training.plugin.previews import (
    PriceSnapshot,
    Replacement,
    preview_text,
    show,
    unseen,
    waits_in_create,
)
from vertex_training.plugin.values import is_secret, plain_map, property_value
from vertex_training.plugin.waiter_shapes import (
    attempt_outputs,
    camel_keys,
    entry_failures,
    waited_trials,
    waiter_diff,
    waiter_state,
    waiting_again,
)
from vertex_training.resources.job_arguments import UNKNOWN_TEXT
from vertex_training.resources.records import JobObserved, JobRecord
from vertex_training.resources.state import ProviderSettings

if TYPE_CHECKING:
    from vertex_training.resources.training_job import TrainingJobProvider

#: How many creates may wait for the jobs they run after at once (a pipeline's steps each
#: wait in their own; more queue until one of those has submitted its job).
WAITING_CREATES = 64
#: A JobWaiter's ID (the dynamic waiter's: one waiter of a stack's jobs).
WAITER_ID = "jobs"


@dataclasses.dataclass(frozen=True)
class Defaults:
    """The provider's config: how this machine reaches the backends, and the project,
    region and backend of every job that names none."""

    settings: ProviderSettings = dataclasses.field(default_factory=ProviderSettings)
    project: str = ""
    region: str = ""
    backend: str = ""
    #: ``vertex-training:prices``: the price snapshot's path (``PriceSnapshot``).
    prices: str = ""

    @classmethod
    def from_args(cls, args: Mapping[str, Any], base_dir: Path) -> Defaults:
        def text(name: str) -> str:
            value = args.get(name)
            return value if isinstance(value, str) else ""

        settings = ProviderSettings(
            api_endpoint=text("apiEndpoint"),
            base_dir=str(base_dir),
            local_accelerators=text("localAccelerators") or "gpu",
            auth=GoogleAuth.of(
                args.get("accessToken"),
                args.get("credentials"),
                args.get("impersonateServiceAccount"),
            ),
        )
        return cls(settings, text("project"), text("region"), text("backend"), text("prices"))

    def filled(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """A job resource's inputs with the provider's defaults for what they leave out
        (recorded, so that a default changed later shows as a change to the job)."""
        filled = dict(inputs)
        given = inputs.get("platform")
        platform: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
        for name, default in (("project", self.project), ("region", self.region)):
            if not filled.get(name) and not platform.get(name) and default:
                filled[name] = default
        if not filled.get("backend"):
            filled["backend"] = self.backend or DEFAULT_BACKEND
        return filled


class VertexTrainingProvider(Provider):
    """The ``vertex-training`` package's provider: TrainingJob, HyperparameterTuningJob
    and JobWaiter resources, run by the dynamic providers' classes, and the
    TrainingPlatform component."""

    def __init__(self, version: str) -> None:
        from vertex_training.resources.waiter import JobWaiterProvider

        self.version = version
        self.defaults = Defaults(ProviderSettings(base_dir=str(Path.cwd())))
        self.prices = PriceSnapshot(Path.cwd())
        #: Each job type's provider, made when its first resource is met (the tuning
        #: job's loads the study's models, which a stack of training jobs never needs).
        self.jobs: dict[str, TrainingJobProvider] = {}
        self.waiter = JobWaiterProvider()
        #: Why each job the engine is replacing is replaced (``diff``), for the line its
        #: replacement's preview writes (``create``), by URN.
        self.replacements: dict[str, Replacement] = {}
        #: The threads of the creates that wait for the jobs they run after (``run_after``):
        #: as many as a program's steps wait at once, apart from those of every other call.
        self.waits = ThreadPoolExecutor(max_workers=WAITING_CREATES, thread_name_prefix="run-after")
        self._start()

    def _start(self) -> None:
        for provider in (*self.jobs.values(), self.waiter):
            provider.start(self.defaults.settings)

    def _job_provider(self, type_: str) -> TrainingJobProvider:
        if type_ not in self.jobs:
            provider: TrainingJobProvider
            if type_ == schema.TRAINING_JOB:
                from vertex_training.resources.training_job import TrainingJobProvider

                provider = TrainingJobProvider()
            elif type_ == schema.TUNING_JOB:
                from vertex_training.resources.tuning_job import HyperparameterTuningJobProvider

                provider = HyperparameterTuningJobProvider()
            else:
                raise BackendError(f"the vertex-training plugin has no resource type {type_}")
            provider.start(self.defaults.settings)
            self.jobs[type_] = provider
        return self.jobs[type_]

    def _host(self, provider: TrainingJobProvider) -> Host:
        """What a job's properties take of this plugin (``job_shapes.job_properties``)."""
        kept = (*provider.exported_keys, "attempts")
        return Host(self.defaults.settings.local_root, kept)

    async def get_schema(self, request: GetSchemaRequest) -> GetSchemaResponse:
        return GetSchemaResponse(schema=schema.served(self.version))

    async def check_config(self, request: CheckRequest) -> CheckResponse:
        """Refuse a provider setting the plugin cannot use, naming it and the fix; record
        the plugin's version (the state names the release that made it, not code). The
        credential settings the schema marks secret are recorded as secrets, however
        they were given (the engine encrypts them in the state)."""
        from vertex_training.stackconfig import (
            BACKENDS,
            backend_issue,
            local_accelerators_issue,
        )

        news = plain_map(request.new_inputs)
        failures = []
        rules = {
            "backend": (BACKENDS, backend_issue),
            "localAccelerators": (LOCAL_ACCELERATOR_MODES, local_accelerators_issue),
        }
        for name, (values, refusal) in rules.items():
            value = news.get(name)
            if value not in (None, "", UNKNOWN_TEXT, *values):
                failures.append(CheckFailure(name, str(refusal(value))))
        inputs = {**request.new_inputs, "version": PropertyValue(self.version)}
        for name in schema.SECRET_SETTINGS:
            if name in inputs and not inputs[name].is_secret:
                given = inputs[name]
                inputs[name] = PropertyValue(given.value, True, given.dependencies)
        return CheckResponse(inputs=inputs, failures=failures)

    async def diff_config(self, request: DiffRequest) -> DiffResponse:
        """A provider setting or the plugin's version changed: an update of the provider,
        never its replacement (which would replace every job of the stack). A new
        endpoint or default reaches the jobs through their own diff."""
        olds, news = plain_map(request.old_state), plain_map(request.new_inputs)
        changed = sorted(k for k in set(olds) | set(news) if olds.get(k) != news.get(k))
        return DiffResponse(changes=bool(changed), diffs=changed)

    async def configure(self, request: ConfigureRequest) -> ConfigureResponse:
        """Read the provider's config (its arguments; the older engines' variables)."""
        args = (
            plain_map(request.args)
            if request.args
            else {key.rsplit(":", 1)[-1]: value for key, value in request.variables.items()}
        )
        self.defaults = Defaults.from_args(args, Path.cwd())
        self.prices = PriceSnapshot(Path.cwd(), self.defaults.prices)
        self._start()
        # A preview of a create or an update submits and waits for nothing
        # (``job_shapes.job_preview``, ``previews.unseen``).
        return ConfigureResponse(accept_secrets=True, supports_preview=True, accept_resources=True)

    async def check(self, request: CheckRequest) -> CheckResponse:
        if request.type == schema.JOB_WAITER:
            failures = entry_failures(plain_map(request.new_inputs).get("jobs"))
            return CheckResponse(inputs=request.new_inputs, failures=failures)
        provider = self._job_provider(request.type)
        news = self.defaults.filled(plain_map(request.new_inputs))
        inputs = dict(request.new_inputs)
        for name in RECORDED_INPUTS:  # those the provider's config may fill in
            if name in news and name not in inputs:
                inputs[name] = property_value(news[name])
        if inputs == request.old_inputs:
            # Checked before as it is (its record's ``same_job``): it passed, and nothing
            # is read again (a no-change preview of many jobs).
            return CheckResponse(inputs=inputs, failures=[])
        olds = plain_map(request.old_inputs)
        owner = owner_of(request.urn)
        old = record_of(request.name, owner, olds) if olds else JobRecord("", None, {})
        job = job_input(request.name, owner, news)
        _, issues = provider.check_job(old, job)
        failures = [property_failure(issue) for issue in issues]
        if not old.same_job(JobRecord(**job)):
            # Checked before as it is, the job passed these too (and a no-change preview
            # loads none of the stack config's models, as the job's own check does not).
            failures = plugin_failures(job["config"]) or failures
        return CheckResponse(inputs=inputs, failures=failures)

    async def diff(self, request: DiffRequest) -> DiffResponse:
        if request.type != schema.JOB_WAITER and unchanged(request.old_state, request.new_inputs):
            return DiffResponse(changes=False)
        olds, news = plain_map(request.old_state), plain_map(request.new_inputs)
        if request.type == schema.JOB_WAITER:
            old, new = waiter_state(olds), waiter_state(news)
            result = self.waiter.diff(request.resource_id, old, new)
            if not result.changes:
                return DiffResponse(changes=False)
            # Only the entries that changed; and when jobs that failed the last wait are
            # waited for again, the problems recorded then, which the wait replaces (its
            # preview names the jobs: ``waiting_again``).
            detailed = waiter_diff(olds, news)
            if waiting_again(olds, news):
                detailed["problems"] = PropertyDiff(PropertyDiffKind.UPDATE, input_diff=False)
            diffs = sorted({top(path) for path in detailed})
            return DiffResponse(changes=True, diffs=diffs, detailed_diff=detailed)
        provider = self._job_provider(request.type)
        owner = owner_of(request.urn)
        change = provider.diff_job(
            record_of(request.name, owner, olds),
            record_of(request.name, owner, news),
            last_observed(request.resource_id, olds),
        )
        if not change.changes:
            return DiffResponse(changes=False)
        replacing = change.replacing
        detailed = detailed_diff(change, olds, news)
        if replacing and not any(replaces(d) for d in detailed.values()):
            # Nothing the program wrote forces it: the job's retry submits its next
            # attempt, or a default it took changed (``JobChange.cause``).
            detailed["job.retry" if change.cause == "retry" else "job"] = PropertyDiff(
                PropertyDiffKind.UPDATE_REPLACE, input_diff=True
            )
        if replacing:  # the line under its replacement in a preview says why
            self.replacements[request.urn] = Replacement(
                tuple(path for path, d in detailed.items() if replaces(d)),
                tuple(path for path, d in detailed.items() if not replaces(d)),
            )
        return DiffResponse(
            changes=True,
            replaces=sorted({top(path) for path, d in detailed.items() if replaces(d)}),
            diffs=sorted({top(path) for path in detailed}),
            detailed_diff=detailed,
            delete_before_replace=False,
        )

    async def create(self, request: CreateRequest) -> CreateResponse:
        # Why a replacement is one: said in its preview, and kept no longer either way.
        replacement = self.replacements.pop(request.urn, None)
        if request.preview and request.type == schema.JOB_WAITER:
            return CreateResponse(None, unseen(request.properties))
        if request.preview:  # a create, or a replacement: say what it submits and costs
            properties = job_preview(request.urn, request.properties, self.prices)
            text = preview_text(
                properties, is_secret(request.properties), replacement, request.type
            )
            await asyncio.to_thread(show, request.urn, text)
            return CreateResponse(None, properties)
        props = plain_map(request.properties)
        if request.type == schema.JOB_WAITER:
            wait = functools.partial(
                self.waiter.create_at, waiter_state(props), request.urn, request.timeout
            )
            waited = await self._wait(wait, WAITER_ID, request.properties, {})
            return CreateResponse(WAITER_ID, waited)
        provider = self._job_provider(request.type)
        record = record_of(request.name, owner_of(request.urn), props)
        until = waits_in_create(request.type, record.config)

        def create() -> CreateResponse:
            created = provider.create_job(record, request.urn)
            if until:
                outputs = self._waited_job(
                    request.urn,
                    provider,
                    record,
                    created,
                    inputs=request.properties,
                    deadline_s=request.timeout,
                )
            else:
                host = self._host(provider)
                outputs = job_properties(request.properties, record, created, host=host)
            return CreateResponse(created.resource_name, outputs)

        if until or record.sets("run_after"):
            # It waits (for itself, or for the jobs it runs after): on a thread of its
            # own, not one of the few the other creates share (they would queue behind it).
            return await asyncio.get_running_loop().run_in_executor(self.waits, create)
        return await asyncio.to_thread(create)

    async def read(self, request: ReadRequest) -> ReadResponse:
        if request.type == schema.JOB_WAITER:
            return ReadResponse(request.resource_id, request.properties, request.inputs)
        provider = self._job_provider(request.type)
        inputs = request.inputs
        if not inputs:  # `pulumi import`: the job's keys from the server's job
            imported = await asyncio.to_thread(
                imported_inputs,
                request.type,
                request.name,
                request.resource_id,
                self.defaults.settings,
            )
            inputs = {key: property_value(value) for key, value in imported.items()}
        record = record_of(request.name, owner_of(request.urn), plain_map(inputs))
        found = await asyncio.to_thread(provider.read_job, request.resource_id, record)
        if found is None:  # deleted outside Pulumi: the engine drops it from the state
            return ReadResponse(None, {}, {})
        host = self._host(provider)
        outputs = await asyncio.to_thread(job_properties, inputs, record, found, host=host)
        return ReadResponse(found.resource_name, outputs, inputs)

    async def update(self, request: UpdateRequest) -> UpdateResponse:
        if request.preview and request.type == schema.JOB_WAITER:
            if again := waiting_again(plain_map(request.olds), plain_map(request.news)):
                await asyncio.to_thread(show, request.urn, again)
            return UpdateResponse(unseen(request.news))
        if request.preview:
            if until := waits_in_create(request.type, plain_map(request.news).get("job")):
                text = f"its update waits for it (`wait: {until}`), which fills its `bestTrial`"
                await asyncio.to_thread(show, request.urn, text)
            return UpdateResponse(
                job_preview(
                    request.urn, request.news, self.prices, request.resource_id, request.olds
                )
            )
        olds, news = plain_map(request.olds), plain_map(request.news)
        if request.type == schema.JOB_WAITER:
            old, new = waiter_state(olds), waiter_state(news)
            update = functools.partial(
                self.waiter.update_at, old, new, request.urn, request.timeout
            )
            return UpdateResponse(await self._wait(update, request.resource_id, request.news, olds))
        provider = self._job_provider(request.type)
        record = record_of(request.name, owner_of(request.urn), news)
        found = await asyncio.to_thread(provider.update_job, request.resource_id, record)
        if not waits_in_create(request.type, record.config):
            host = self._host(provider)
            return UpdateResponse(
                await asyncio.to_thread(job_properties, request.news, record, found, host=host)
            )
        # Its wait, given now or stopped before (the engine updates a job it kept after a
        # failed create or update), is waited for here as in its create.
        wait = functools.partial(
            self._waited_job,
            request.urn,
            provider,
            record,
            found,
            inputs=request.news,
            deadline_s=request.timeout,
        )
        return UpdateResponse(await asyncio.get_running_loop().run_in_executor(self.waits, wait))

    async def delete(self, request: DeleteRequest) -> None:
        if request.type == schema.JOB_WAITER:
            return
        provider = self._job_provider(request.type)
        record = record_of(request.name, owner_of(request.urn), plain_map(request.properties))
        await asyncio.to_thread(provider.delete_job, request.resource_id, record)

    async def cancel(self) -> None:
        """The engine's cancel (the first Ctrl-C): every wait in progress stops now and
        fails its waiter naming each job's last state; the jobs keep running and are in
        the state already (``vertex_training.resources.cancellation``)."""
        from vertex_training.resources.cancellation import PROCESS

        PROCESS.cancel()

    async def construct(self, request: ConstructRequest) -> ConstructResponse:
        """A TrainingPlatform (``vertex_training.program.platform``), as a Python program
        makes one: its outputs, and ``jobSettings`` for the jobs that run on it, which
        depends on the platform's APIs and grants (a job given it waits for them)."""
        from vertex_training.plugin.platform import construct_platform

        if request.resource_type != schema.TRAINING_PLATFORM:
            raise BackendError(
                f"the vertex-training plugin constructs no {request.resource_type}; its "
                f"component is {schema.TRAINING_PLATFORM}"
            )
        return await construct_platform(request)

    async def _wait(
        self,
        call: Callable[[], Any],
        resource_id: str,
        inputs: Mapping[str, PropertyValue],
        olds: Mapping[str, Any],
    ) -> dict[str, PropertyValue]:
        """A JobWaiter's create or update (``call``, on a thread): its properties
        (``_waited``). A wait the engine's cancel stopped keeps the waiter too, with what it
        had seen (over what it recorded before, ``olds``) and each job it had not seen
        through as a problem, so that the next `pulumi up` waits for those again."""
        from vertex_training.resources.cancellation import WaitCancelledError
        from vertex_training.resources.waiter import SEEN_OUTPUTS

        try:
            result = await asyncio.to_thread(call)
        except WaitCancelledError as stopped:
            seen = {key: dict(olds.get(key) or {}) for key in SEEN_OUTPUTS}
            seen["states"].update(stopped.last_states)
            seen["problems"].update(dict.fromkeys(stopped.unfinished, str(stopped)))
            self._waited(resource_id, inputs, seen, str(stopped))
            raise  # (``_waited`` raised: there are problems)
        return self._waited(resource_id, inputs, result.outs or {})

    def _waited(
        self,
        resource_id: str,
        inputs: Mapping[str, PropertyValue],
        outs: Mapping[str, Any],
        message: str = "",
    ) -> dict[str, PropertyValue]:
        """A JobWaiter's properties: its inputs and what the wait saw. A job that failed
        the wait fails the create or update, naming why (``message``, else each job's
        problem), with the waiter kept as it is (``InitFailedError``): its ``states``,
        ``trials`` and ``problems`` are recorded, and the next `pulumi up` waits again for
        the jobs that failed."""
        from vertex_training.plugin.init_failed import InitFailedError
        from vertex_training.resources.waiter import SEEN_OUTPUTS

        seen = {key: outs.get(key) or {} for key in SEEN_OUTPUTS}
        seen["trials"] = {name: waited_trials(trials) for name, trials in seen["trials"].items()}
        seen["attempts"] = {name: attempt_outputs(a) for name, a in seen["attempts"].items()}
        seen["models"] = {name: camel_keys(model) for name, model in seen["models"].items()}
        properties = {**inputs, **{key: property_value(value) for key, value in seen.items()}}
        problems = seen["problems"]
        if problems:
            message = message or "\n".join(problems[name] for name in sorted(problems))
            raise InitFailedError(message, resource_id, properties, inputs)
        return properties

    def _waited_job(
        self,
        urn: str,
        provider: TrainingJobProvider,
        record: JobRecord,
        submitted: JobObserved,
        *,
        inputs: Mapping[str, PropertyValue],
        deadline_s: float = 0.0,
    ) -> dict[str, PropertyValue]:
        """A job's properties once its own create or update has waited for it
        (``waits_in_create``), from its ``inputs`` and the job as ``submitted``: read
        again when the wait ends, so that its state, ``trials`` and ``bestTrial`` are
        those the `pulumi up` saw. The wait is a waiter's (``JobWaiterProvider.wait_one``),
        on the job's own row. A job that failed the wait, and a wait the engine's cancel
        stopped, fail the call with the job kept (``InitFailedError``), as a waiter is
        kept: the next `pulumi up` updates it, which waits again, and submits nothing
        twice. ``deadline_s``: the engine's timeout for the create or update (its
        ``customTimeouts``; 0 for none), which the wait keeps."""
        from vertex_training.plugin.init_failed import InitFailedError
        from vertex_training.resources.cancellation import WaitCancelledError

        resource_id = submitted.resource_name
        waits = {
            "resource_name": resource_id,
            "until": waits_in_create(resource_urn(urn).type, record.config),
            "config": record.config,
            "stack": record.stack,
        }
        try:
            seen = self.waiter.wait_one(record.name, waits, urn, deadline_s)
            message = "\n".join(seen["problems"].values())
        except WaitCancelledError as stopped:
            message = str(stopped)
        found = provider.read_job(resource_id, record) or submitted  # (gone: as submitted)
        properties = job_properties(inputs, record, found, host=self._host(provider))
        if message:
            raise InitFailedError(message, resource_id, properties, inputs)
        return properties
