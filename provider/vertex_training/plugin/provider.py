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
its create would submit and its cost estimate (``request``, ``estimate``: known in the
preview, and kept as outputs once the job is made), and every other output unknown
(docs/plugin.md, "What a preview shows"). The estimate's prices come from the snapshot
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

from vertex_training.credentials import GoogleAuth
from vertex_training.errors import BackendError, MissingSetting
from vertex_training.keys import GCP_PROJECT_KEY, GCP_REGION_KEY, LOCAL_ACCELERATOR_MODES
from vertex_training.packaging import POOL_KEYS
from vertex_training.plugin import schema, shapes
from vertex_training.plugin.importing import imported_inputs
from vertex_training.plugin.inputs import job_input, owner_of, resource_urn
from vertex_training.plugin.previews import (
    NAMING_OUTPUTS,
    PREVIEWED_OUTPUTS,
    UNKNOWN,
    PriceSnapshot,
    Replacement,
    preview_text,
    request_and_estimate,
    show,
    spec_of,
    unseen,
    waits_in_create,
)
from vertex_training.plugin.values import is_secret, plain_map, property_value
from vertex_training.plugin.waiter_shapes import (
    attempt_outputs,
    camel_keys,
    diff_kind,
    entry_failures,
    trial_output,
    waited_trials,
    waiter_diff,
    waiter_entry,
    waiter_state,
    waiting_again,
)
from vertex_training.resources.arguments import ImageRowArgs, TrainingJobArgs
from vertex_training.resources.job_arguments import UNKNOWN_TEXT
from vertex_training.resources.pages import job_outputs
from vertex_training.resources.records import JobObserved, JobRecord
from vertex_training.resources.state import (
    ProviderSettings,
)

if TYPE_CHECKING:
    from vertex_training.errors import Issue
    from vertex_training.resources.changes import JobChange
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
            filled["backend"] = self.backend or "vertex"
        return filled


def record_of(name: str, owner: Mapping[str, str], inputs: Mapping[str, Any]) -> JobRecord:
    """A job resource's record for the job operations (``resources.records``), from its
    inputs (plain, in the schema's naming: ``job_input``)."""
    return JobRecord(**job_input(name, owner, inputs))


def last_observed(resource_id: str, properties: Mapping[str, Any]) -> JobObserved:
    """What a job resource's recorded properties (plain) say of its job when it was last
    seen: its state, its failure and attempts (all a diff reads of them)."""
    return JobObserved(
        resource_id,
        state=str(properties.get("state") or ""),
        failure=properties.get("failure") or {},
        attempts=tuple(properties.get("attempts") or ()),
    )


#: The stack-wide settings a stack config's refusal names, as a program sets them for a
#: plugin's resource: its own property.
SETTING_PROPERTIES = {GCP_PROJECT_KEY: "project", GCP_REGION_KEY: "region"}

#: What a job that lacks a setting (``errors.MissingSetting``) tells a program's author,
#: where a stack config's author is told the stack config key.
MISSING_SETTINGS = {
    "project": (
        "jobs on the vertex backend need a Google Cloud project: give the resource's "
        "`project` (or a TrainingPlatform's `jobSettings` as its `platform`), or set the "
        "provider's default with `pulumi config set vertex-training:project <project-id>` "
        "(or set vertex-training:backend to local to run on this machine)"
    ),
    "region": (
        "no region: give the resource's `region` (or the job's own), or set the "
        "provider's default with `pulumi config set vertex-training:region us-central1`"
    ),
}


def property_failure(issue: Issue) -> CheckFailure:
    """A job's mistake (``TrainingJobProvider.check_job``: named by its argument path,
    ``job.workers.python_package``, in the stack config's keys) on its property path in
    the schema's naming (``job.workers.pythonPackage``); a missing setting with the
    advice a program's author can follow (``MISSING_SETTINGS``)."""
    message = issue.message
    if isinstance(issue, MissingSetting) and issue.setting in MISSING_SETTINGS:
        message = MISSING_SETTINGS[issue.setting]
    head, dot, tail = issue.key.partition(".")
    if issue.key in SETTING_PROPERTIES:
        path = SETTING_PROPERTIES[issue.key]
    elif head == "job":
        path = f"job.{shapes.property_path(TrainingJobArgs, tail)}" if dot else "job"
    elif head.startswith("images["):
        path = f"{head}.{shapes.property_path(ImageRowArgs, tail)}" if dot else head
    else:  # a key of no property of the resource: the job's
        return CheckFailure("job", str(dataclasses.replace(issue, message=message)))
    return CheckFailure(path, str(dataclasses.replace(issue, key=path, message=message)))


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
        # (``_job_preview``, ``_unseen``).
        return ConfigureResponse(accept_secrets=True, supports_preview=True, accept_resources=True)

    async def check(self, request: CheckRequest) -> CheckResponse:
        if request.type == schema.JOB_WAITER:
            failures = entry_failures(plain_map(request.new_inputs).get("jobs"))
            return CheckResponse(inputs=request.new_inputs, failures=failures)
        provider = self._job_provider(request.type)
        news = self.defaults.filled(plain_map(request.new_inputs))
        olds = plain_map(request.old_inputs)
        owner = owner_of(request.urn)
        old = record_of(request.name, owner, olds) if olds else JobRecord("", None, {})
        job = job_input(request.name, owner, news)
        _, issues = provider.check_job(old, job)
        failures = [property_failure(issue) for issue in issues]
        if not old.same_job(JobRecord(**job)):
            # Checked before as it is, the job passed these too (and a no-change preview
            # loads none of the stack config's models, as the job's own check does not).
            failures = self._plugin_failures(job["config"]) or failures
        inputs = dict(request.new_inputs)
        for name in ("project", "region", "backend"):
            if name in news and name not in inputs:
                inputs[name] = property_value(news[name])
        return CheckResponse(inputs=inputs, failures=failures)

    @staticmethod
    def _plugin_failures(config: Any) -> list[CheckFailure]:
        """What a job of the plugin cannot be that a Python program's can: a package
        directory to build (a Python program builds and uploads it; here, the program
        uploads the sdist)."""
        if not isinstance(config, Mapping):
            return []
        failures = []
        for pool in ("", *POOL_KEYS):  # the pools a package may run in
            keys = config.get(pool) if pool else config
            package = keys.get("python_package") if isinstance(keys, Mapping) else None
            if isinstance(package, Mapping) and "package_path" in package:
                path = ".".join(p for p in (shapes.camel(pool), "pythonPackage.packagePath") if p)
                failures.append(
                    CheckFailure(
                        f"job.{path}",
                        f"job.{path}: the plugin builds no trainer packages: build the "
                        "sdist (python -m build), upload it (a storage object of your "
                        "program) and list its gs:// URI in pythonPackage.packageUris "
                        f"(got {package['package_path']!r})",
                    )
                )
        return failures

    async def diff(self, request: DiffRequest) -> DiffResponse:
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
            diffs = sorted({_top(path) for path in detailed})
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
        detailed = _detailed_diff(change, olds, news)
        if replacing and not any(_replaces(d) for d in detailed.values()):
            # Nothing the program wrote forces it: the job's retry submits its next
            # attempt, or a default it took changed (``JobChange.cause``).
            detailed["job.retry" if change.cause == "retry" else "job"] = PropertyDiff(
                PropertyDiffKind.UPDATE_REPLACE, input_diff=True
            )
        if replacing:  # the line under its replacement in a preview says why
            self.replacements[request.urn] = Replacement(
                tuple(path for path, d in detailed.items() if _replaces(d)),
                tuple(path for path, d in detailed.items() if not _replaces(d)),
            )
        return DiffResponse(
            changes=True,
            replaces=sorted({_top(path) for path, d in detailed.items() if _replaces(d)}),
            diffs=sorted({_top(path) for path in detailed}),
            detailed_diff=detailed,
            delete_before_replace=False,
        )

    async def create(self, request: CreateRequest) -> CreateResponse:
        # Why a replacement is one: said in its preview, and kept no longer either way.
        replacement = self.replacements.pop(request.urn, None)
        if request.preview and request.type == schema.JOB_WAITER:
            return CreateResponse(None, unseen(request.properties))
        if request.preview:  # a create, or a replacement: say what it submits and costs
            properties = self._job_preview(request.urn, request.properties)
            text = preview_text(
                properties, is_secret(request.properties), replacement, request.type
            )
            await asyncio.to_thread(show, request.urn, text)
            return CreateResponse(None, properties)
        props = plain_map(request.properties)
        if request.type == schema.JOB_WAITER:
            wait = functools.partial(self.waiter.create_at, waiter_state(props), request.urn)
            waited = await self._wait(wait, WAITER_ID, request.properties, {})
            return CreateResponse(WAITER_ID, waited)
        provider = self._job_provider(request.type)
        record = record_of(request.name, owner_of(request.urn), props)
        until = waits_in_create(request.type, record.config)

        def create() -> CreateResponse:
            created = provider.create_job(record, request.urn)
            outputs = self._job_outputs(provider, request.properties, record, created)
            if until:
                outputs = self._waited_job(
                    request.urn,
                    provider,
                    record,
                    created,
                    outputs=outputs,
                    inputs=request.properties,
                )
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
        # The request and estimate the job was made with are kept (an imported job's,
        # and one made by an earlier release, are derived).
        made = {
            key: request.properties[key] for key in PREVIEWED_OUTPUTS if key in request.properties
        }
        outputs = await asyncio.to_thread(self._job_outputs, provider, inputs, record, found, made)
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
                self._job_preview(request.urn, request.news, request.resource_id, request.olds)
            )
        olds, news = plain_map(request.olds), plain_map(request.news)
        if request.type == schema.JOB_WAITER:
            old, new = waiter_state(olds), waiter_state(news)
            update = functools.partial(self.waiter.update_at, old, new, request.urn)
            return UpdateResponse(await self._wait(update, request.resource_id, request.news, olds))
        provider = self._job_provider(request.type)
        record = record_of(request.name, owner_of(request.urn), news)
        found = await asyncio.to_thread(provider.update_job, request.resource_id, record)
        outputs = await asyncio.to_thread(self._job_outputs, provider, request.news, record, found)
        if waits_in_create(request.type, record.config):
            # Its wait, given now or stopped before (the engine updates a job it kept
            # after a failed create or update), is waited for here as in its create.
            wait = functools.partial(
                self._waited_job,
                request.urn,
                provider,
                record,
                found,
                outputs=outputs,
                inputs=request.news,
            )
            outputs = await asyncio.get_running_loop().run_in_executor(self.waits, wait)
        return UpdateResponse(outputs)

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
        outputs: Mapping[str, PropertyValue],
        inputs: Mapping[str, PropertyValue],
    ) -> dict[str, PropertyValue]:
        """A job's properties once its own create or update has waited for it
        (``waits_in_create``), from its ``inputs`` and its properties when ``submitted``
        (``outputs``): read again when the wait ends, so that its state, ``trials`` and
        ``bestTrial`` are those the `pulumi up` saw. The wait is a waiter's
        (``JobWaiterProvider.wait_one``), on the job's own row. A job that failed the
        wait, and a wait the engine's cancel stopped, fail the call with the job kept
        (``InitFailedError``), as a waiter is kept: the next `pulumi up` updates it, which
        waits again, and submits nothing twice."""
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
            message = "\n".join(self.waiter.wait_one(record.name, waits, urn)["problems"].values())
        except WaitCancelledError as stopped:
            message = str(stopped)
        found = provider.read_job(resource_id, record) or submitted  # (gone: as submitted)
        made = {key: outputs[key] for key in PREVIEWED_OUTPUTS if key in outputs}
        properties = self._job_outputs(provider, inputs, record, found, made)
        if message:
            raise InitFailedError(message, resource_id, properties, inputs)
        return properties

    def _job_outputs(
        self,
        provider: TrainingJobProvider,
        inputs: Mapping[str, PropertyValue],
        record: JobRecord,
        observed: JobObserved,
        made: Mapping[str, PropertyValue] | None = None,
    ) -> dict[str, PropertyValue]:
        """A job resource's properties: its inputs as given, what its backend reports
        (``observed``, in camelCase: those that are empty left out but the ones every
        job has, ``schema.ALWAYS_SET``), what the job it runs as names (its ID, pages,
        model directory: ``resources.pages.job_outputs``), its ``waiterEntry``, and its
        request and estimate (``made``: as recorded; else from its keys,
        ``request_and_estimate``)."""
        resource_name = observed.resource_name
        derived = job_outputs(
            observed.attempts,
            resource_name,
            self.defaults.settings.local_root,
            observed.output_directory,
            observed.best_trial,
            tuning=observed.tuning,
        )
        reported = observed.outputs((*provider.exported_keys, "attempts"))
        values: dict[str, Any] = {shapes.camel(key): value for key, value in reported.items()}
        values["attempts"] = attempt_outputs(values["attempts"])  # the schema's types
        if "failure" in values:
            values["failure"] = camel_keys(values["failure"])
        if "trials" in values:  # the schema's Trial type
            values["trials"] = [trial_output(trial) for trial in values["trials"]]
        if "bestTrial" in values:
            values["bestTrial"] = trial_output(values["bestTrial"])
        values.update(
            jobId=derived["job_id"],
            consoleUrl=derived["console_url"],
            logsUrl=derived["logs_url"],
            outputDirectory=derived["output_directory"],
            modelDirectory=derived["model_directory"],
        )
        properties = {prop: property_value(value) for prop, value in values.items()}
        spec = spec_of(record.name, record.config, record.stack)
        properties["waiterEntry"] = waiter_entry(
            record.name, resource_name, spec, (record.config, record.stack), is_secret(inputs)
        )
        if made and set(made) == set(PREVIEWED_OUTPUTS):
            properties.update(made)
        else:
            properties.update(request_and_estimate(spec, is_secret(inputs), self.prices))
        return {**inputs, **properties}

    def _job_preview(
        self,
        urn: str,
        inputs: Mapping[str, PropertyValue],
        resource_id: str = "",
        olds: Mapping[str, PropertyValue] | None = None,
    ) -> dict[str, PropertyValue]:
        """A job resource's properties in a preview of its create (of its update, given
        its ID and recorded ``olds``): its inputs, its request and estimate
        (``request_and_estimate``), its waiter entry, with the resource name unknown
        until the job is submitted, and every other output unknown but those naming the
        job that an update keeps (``NAMING_OUTPUTS``)."""
        parsed = resource_urn(urn)
        type_, name = parsed.type, parsed.name
        job = record_of(name, owner_of(urn), plain_map(inputs))
        config, settings = job.config, job.stack
        outputs = dict.fromkeys(schema.JOB_OUTPUTS, UNKNOWN)
        if type_ == schema.TUNING_JOB:
            outputs.update(dict.fromkeys(schema.TUNING_OUTPUTS, UNKNOWN))
        kept = olds or {}
        outputs.update({prop: kept[prop] for prop in NAMING_OUTPUTS if prop in kept})
        spec = spec_of(name, config, settings)
        if isinstance(config, Mapping):
            outputs["waiterEntry"] = waiter_entry(
                name, resource_id or UNKNOWN_TEXT, spec, (config, settings), is_secret(inputs)
            )
        outputs.update(request_and_estimate(spec, is_secret(inputs), self.prices))
        return {**inputs, **outputs}


def _top(path: str) -> str:
    return path.split(".", maxsplit=1)[0].split("[", maxsplit=1)[0]


def _replaces(diff: PropertyDiff) -> bool:
    return diff.kind in (
        PropertyDiffKind.ADD_REPLACE,
        PropertyDiffKind.DELETE_REPLACE,
        PropertyDiffKind.UPDATE_REPLACE,
    )


def _detailed_diff(
    change: JobChange, olds: Mapping[str, Any], news: Mapping[str, Any]
) -> dict[str, PropertyDiff]:
    """A job's diff (``change``) as the engine shows it: each of the job's keys that
    changed on its property path (``job.machine``), replacing or not as the diff says;
    and each other input the program gave the resource (its ``project``, ``region``,
    ...; plain ``olds`` and ``news``) that changed, replacing when the job is replaced."""
    kinds = {
        ("add", False): PropertyDiffKind.ADD,
        ("add", True): PropertyDiffKind.ADD_REPLACE,
        ("delete", False): PropertyDiffKind.DELETE,
        ("delete", True): PropertyDiffKind.DELETE_REPLACE,
        ("update", False): PropertyDiffKind.UPDATE,
        ("update", True): PropertyDiffKind.UPDATE_REPLACE,
    }
    detailed = {
        f"job.{shapes.camel(key.key)}": PropertyDiff(kinds[key.kind, key.replaces], input_diff=True)
        for key in change.keys
    }
    for prop in sorted(set(olds) | set(news)):
        old, new = olds.get(prop), news.get(prop)
        if old == new or prop in schema.JOB_OUTPUTS or prop in schema.TUNING_OUTPUTS:
            continue
        if prop == "job" and change.keys:
            continue  # (its keys, above; a job with none to compare is shown whole)
        detailed[prop] = PropertyDiff(diff_kind(old, new, change.replacing), input_diff=True)
    return detailed
