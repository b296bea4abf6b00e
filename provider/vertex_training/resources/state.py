"""What the job resources keep in the Pulumi state: named types, a schema version, and the
one migration from what earlier releases wrote.

A job resource's state is its checked inputs (the job's config as written, under
``config``; the stack settings it was given; its name and the schema) and the outputs its
backend reports (``JobOutputs``).
What the providers' operations need of a job (``JobView``: the exact request, where it
runs, its wait, adopt and retry settings) is derived from those inputs where it is
needed, never recorded (``recorded_view``). The waiter keeps one ``Waited`` per
job it waits for: the job's resource name and the state it waits for, nothing else (what
``wait_for`` needs of the job, a ``WaitEntry``, is read from the stack config at the
time of waiting).

``SCHEMA_VERSION`` is recorded in every job's inputs. Every state the providers read
(``read``, ``diff``, ``update``, ``delete``: the engine hands back what an earlier run
wrote, maybe by an earlier release) goes through ``migrate_job`` or ``migrate_waiter``
first, so a change of shape is written down once, here, and an upgrade never makes a
job look changed (which would replace it):

- schema 1 (releases up to 0361723, no ``schema`` key): each job and each waiter entry
  carried ``connection`` (the backend's endpoint and this machine's paths), now read by
  the providers' ``configure`` (``ProviderSettings``) instead; requests of tuning jobs
  may list study parameters in the stack config's order (``canonical_request`` orders
  them as today's requests are built); the key ``request_labels`` may be present and
  is dropped.
- the waiter's entries of releases up to 1467019 (a ``WaitEntry`` each: resource name,
  wait policy, location, and a job with ``retry``'s request; one for every job, even
  those with ``wait: submitted``) read as today's ``Waited``: the resource name and
  ``until``, jobs waited for ``submitted`` left out, so an upgrade waits for no job again.
- schema 2 (releases up to 365f823): the inputs recorded what ``check`` derived, a
  ``JobView`` (the request, location, stack name, and the settings in their derived
  form) beside the config keys (those of the settings left out), and the outputs
  repeated them, with ``resource_name``, ``job_id`` and ``model_directory``. Such a
  state keeps its shape (``migrate_job`` leaves it): its recorded request is what the
  job was submitted with, so a diff compares the new job's request with it. The
  engine records today's inputs at the next `pulumi up` (the job unchanged), and the
  outputs of today's shape at the job's next update (a refresh keeps the shape it
  reads). Outputs added meanwhile (``failure``,
  ``attempts``, the waiter's ``reasons`` and ``attempts``) and the optional inputs
  ``wait.start_timeout_s`` and ``retry`` needed no new version: a state without them
  reads as a job that has none.
- schema 3 (releases up to e0c255e): the inputs held the config's keys one by one, beside
  ``name``, ``schema`` and ``stack`` (and a secret config, one secret input per key).
  The engine marshals and logs every top-level property of every provider call, so
  schema 4 keeps the config under one key. ``migrate_recorded`` nests schema 3's keys:
  such a state reads as today's and an upgrade shows no change; the engine records
  today's inputs at the next `pulumi up`, and the outputs at the job's next update.
- schema 4: as described at the top and by the types below. Its outputs leave out the
  empty ones (``JobOutputs``); a state that has them reads the same.

The provider classes that earlier releases pickled into the state moved modules with
schema 2; ``vertex_training._moved`` lets the old names load.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pulumi.dynamic import ConfigureRequest, ResourceProvider

from vertex_training.api.bodies import canonical_request, is_tuning_body
from vertex_training.credentials import GoogleAuth
from vertex_training.keys import API_ENDPOINT_KEY, LOCAL_ACCELERATORS_KEY
from vertex_training.resources.rpc_errors import plain_errors

if TYPE_CHECKING:
    from vertex_training.stackconfig import JobSpec, StackSettings

#: The shape of the state the job resources write today.
SCHEMA_VERSION = 4
#: The schema whose inputs held the config's keys one by one (``migrate_recorded``).
FLAT_SCHEMA_VERSION = 3
#: The schema whose inputs recorded a ``JobView``: what ``migrate_job`` brings older ones to.
VIEW_SCHEMA_VERSION = 2
#: The input that records it.
SCHEMA_KEY = "schema"
#: Where the local backend keeps job records, logs and outputs, under the project.
LOCAL_ROOT = ".local-jobs"
#: A job's checked inputs besides its config (schema 3 and 4).
RECORDED_KEYS = ("name", SCHEMA_KEY, "stack")
#: The input that holds the job's config as written (schema 4).
CONFIG_KEY = "config"
#: Keys of schema 1 that schema 2 no longer keeps.
DROPPED_KEYS = ("connection", "request_labels")


class Location(TypedDict):
    """Where a job runs."""

    backend: str
    project: str | None
    region: str | None


class WaitPolicy(TypedDict):
    """How long ``pulumi up`` waits for a job."""

    until: str
    timeout_s: int
    #: Seconds the job may take to start running; absent when only ``timeout_s`` bounds
    #: the wait.
    start_timeout_s: NotRequired[int]


class RetryAttempt(TypedDict):
    """Where one attempt of a job runs."""

    region: str
    strategy: str


class RetryPolicy(TypedDict):
    """A job's ``retry``: the failure classes that submit it again, and every attempt
    (the first is the job's own region and strategy)."""

    when: list[str]
    attempts: list[RetryAttempt]


class JobView(TypedDict):
    """What the providers' operations need of a job, derived from its config and stack
    settings (recorded by schema 2 and older)."""

    name: str
    #: The exact Vertex AI REST request body.
    request: dict[str, Any]
    location: Location
    stack_name: str
    #: The Pulumi project and organization beside ``stack_name`` (``submission.Owner``);
    #: absent for a job recorded by a release up to 0.3.0 (no part of the diff).
    pulumi_project: NotRequired[str]
    pulumi_organization: NotRequired[str]
    wait: WaitPolicy
    #: The resource name of a job to adopt instead of submitting one, or "".
    adopt: str
    #: Absent for a job that is submitted once.
    retry: NotRequired[RetryPolicy]
    #: The resource names of the jobs it is submitted after, once each has succeeded;
    #: absent for a job that waits for none.
    run_after: NotRequired[list[str]]
    #: The model it registers (``modelToUpload`` and ``modelId`` or ``parentModel``): it
    #: runs as a training pipeline (``vertex_training.api.pipelines``). Absent without.
    model: NotRequired[dict[str, Any]]
    #: The managed dataset it reads (``inputDataConfig``): it runs as a training pipeline.
    #: Absent without.
    dataset: NotRequired[dict[str, Any]]


class JobOutputs(TypedDict):
    """What a job's backend reports, as the resource's outputs (its resource name is its
    ID). The resource records ``state`` and ``error`` always, the others when they are
    not empty (``training_job.EXPORTED_OUTPUT_KEYS``): a reader takes a missing one as
    empty."""

    state: str
    error: str
    create_time: str
    start_time: str
    end_time: str
    web_access_uris: dict[str, str]
    output_directory: str
    #: A FAILED job's error, classified (``vertex_training.api.failures.Failure.to_output``:
    #: class, code, message, fix, replica); {} for any other state.
    failure: dict[str, Any]
    #: Every attempt of a job with ``retry`` (attempt, region, strategy, state, class,
    #: resource_name, job_id, console_url, logs_url), oldest first (recorded even when
    #: empty); [] for any other job.
    attempts: list[dict[str, Any]]
    #: What a job with ``model`` registered once its training pipeline succeeded
    #: (``vertex_training.backends.base.RegisteredModel.to_output``: resource_name,
    #: model_id, version_id, version_name, aliases, artifact_uri, display_name,
    #: image_uri) and its pipeline's backing job (``backing_job``); {} for any other job.
    model: dict[str, Any]


class TuningOutputs(JobOutputs):
    """A tuning job's outputs: a job's, and its trials as its backend reports them
    (``vertex_training.backends.base.JobStatus.trial_outputs``)."""

    trials: list[dict[str, Any]]
    best_trial: dict[str, Any]


#: The outputs of every job's resource, besides its inputs, and those of a tuning job's:
#: the one list each host's outputs are named from.
OUTPUT_KEYS: tuple[str, ...] = tuple(JobOutputs.__annotations__)
TUNING_OUTPUT_KEYS: tuple[str, ...] = tuple(TuningOutputs.__annotations__)


class Waited(TypedDict):
    """One job in the waiter's inputs: the submission it waits for, and until what."""

    resource_name: str
    #: ``running`` or ``succeeded`` (a job waited for ``submitted`` has no entry).
    until: str
    #: A job a program gave as arguments (``wait_for_jobs``), and a plugin job with
    #: ``retry``: its config and stack settings, which a stack config job's waiter reads
    #: from the stack config instead.
    config: NotRequired[dict[str, Any]]
    stack: NotRequired[dict[str, Any]]
    #: A plugin job's wait plan (its ``waiterEntry`` without ``config``): how long the
    #: wait may last, and may take to see the job start running (``WaitPolicy``).
    timeout_s: NotRequired[float]
    start_timeout_s: NotRequired[float]


def model_directory_of(output_directory: str) -> str:
    """A custom job's ``model_directory`` output: where Vertex AI tells the trainer to
    save its model (``AIP_MODEL_DIR``) under the job's output directory."""
    return f"{output_directory}/model" if output_directory else ""


class WaitEntry(TypedDict):
    """What ``wait_for`` needs of one job (``waiter.wait_entries`` reads it)."""

    resource_name: str
    wait: WaitPolicy
    location: Location
    #: Only for a job with ``retry``: what the waiter needs to submit its next attempt
    #: (the job's checked inputs of the same names).
    retry: NotRequired[RetryPolicy]
    request: NotRequired[dict[str, Any]]
    stack_name: NotRequired[str]
    pulumi_project: NotRequired[str]
    pulumi_organization: NotRequired[str]
    name: NotRequired[str]


@dataclass(frozen=True)
class ProviderSettings:
    """How this machine reaches the backends and runs local jobs: the same for every job
    of a stack, so read once by each provider's ``configure`` (from the stack config the
    engine hands every dynamic provider, and the project directory the engine starts the
    provider host in) instead of being copied into every job's state. ``auth`` holds the
    Google credential settings (``vertex_training.credentials``; its repr hides the
    secrets): made by ``configure``, after the provider was pickled, so it never reaches
    the state."""

    api_endpoint: str = ""
    base_dir: str = "."
    local_accelerators: str = "gpu"
    auth: GoogleAuth = field(default_factory=GoogleAuth)

    @property
    def local_root(self) -> str:
        """The local backend's records, logs and outputs."""
        return str(Path(self.base_dir) / LOCAL_ROOT)

    def connection(self) -> dict[str, Any]:
        """What ``vertex_training.backends.connect`` takes."""
        return {
            "api_endpoint": self.api_endpoint,
            "local_root": self.local_root,
            "base_dir": self.base_dir,
            "local_accelerators": self.local_accelerators,
            "auth": self.auth,
        }

    @classmethod
    def from_config(cls, get: Callable[[str], Any], base_dir: Path) -> ProviderSettings:
        """From the stack config's keys (``vertex-training:apiEndpoint``,
        ``...:localAccelerators``, validated by the program at preview, and the Google
        credential keys ``...:accessToken``, ``...:credentials``,
        ``...:impersonateServiceAccount``; ``get`` reads a key, as
        ``pulumi.dynamic.Config.get`` does) and the project directory."""
        return cls(
            api_endpoint=str(get(API_ENDPOINT_KEY) or ""),
            base_dir=str(base_dir),
            local_accelerators=str(get(LOCAL_ACCELERATORS_KEY) or "gpu"),
            auth=GoogleAuth.from_config(get),
        )


def migrate_job(props: Mapping[str, Any]) -> dict[str, Any]:
    """A job resource's state (inputs and outputs) of schema 1 in schema 2's shape;
    unchanged when it is schema 2, 3 or 4 (see the module docstring)."""
    migrated = dict(props)
    if migrated.get(SCHEMA_KEY) in (VIEW_SCHEMA_VERSION, FLAT_SCHEMA_VERSION, SCHEMA_VERSION):
        return migrated
    for key in DROPPED_KEYS:
        migrated.pop(key, None)
    request = migrated.get("request")
    if isinstance(request, Mapping) and is_tuning_body(request):
        migrated["request"] = canonical_request(request)
    migrated[SCHEMA_KEY] = VIEW_SCHEMA_VERSION
    return migrated


#: The view's keys that name a job's Pulumi project and organization beside its
#: ``stack_name``: what runs does not depend on them, so they are no part of a diff.
OWNER_VIEW_KEYS = ("pulumi_project", "pulumi_organization")
#: What the waiter keeps of a job with ``retry`` to submit its next attempt.
RESUBMISSION_KEYS = (
    "name",
    "retry",
    "request",
    "model",
    "dataset",
    "stack_name",
    *OWNER_VIEW_KEYS,
)


def view_of(spec: JobSpec, stack: StackSettings) -> JobView:
    """What the provider's operations need of a parsed job: its name, exact request,
    location, provider-side settings (``wait``, ``adopt``, and ``retry`` and
    ``run_after`` when it has them) and its owner (its stack's name, and its Pulumi
    project and organization where ``stack`` names them; the waiter derives the same for
    a job it resubmits)."""
    settings = spec.settings()
    view: JobView = {
        "name": spec.name,
        "request": spec.request_body(),
        "location": spec.location(),
        "stack_name": stack.stack,
        "wait": settings["wait"],
        "adopt": settings["adopt"] or "",
    }
    if stack.pulumi_project:
        view["pulumi_project"] = stack.pulumi_project
    if stack.pulumi_organization:
        view["pulumi_organization"] = stack.pulumi_organization
    if "retry" in settings:
        view["retry"] = settings["retry"]
    if "run_after" in settings:
        view["run_after"] = settings["run_after"]
    if spec.model is not None:
        view["model"] = spec.model.request_body()
    if spec.dataset is not None:
        view["dataset"] = spec.dataset.request_body()
    return view


def migrate_recorded(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """A job's recorded inputs (its state without engine keys and outputs) of schema 3 in
    schema 4's shape: the config's keys under ``config``. Any other schema as it is."""
    if recorded.get(SCHEMA_KEY) != FLAT_SCHEMA_VERSION:
        return dict(recorded)
    nested = {key: recorded[key] for key in RECORDED_KEYS if key in recorded}
    config = {key: value for key, value in recorded.items() if key not in RECORDED_KEYS}
    return {**nested, SCHEMA_KEY: SCHEMA_VERSION, CONFIG_KEY: config}


def same_job(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Whether two recorded inputs of schema 4 hold the same config and stack settings."""
    return all(r.get(SCHEMA_KEY) == SCHEMA_VERSION for r in (old, new)) and old == new


def known_run_after(config: Any) -> Any:
    """``config`` with only the known jobs of its ``run_after``: the others are jobs still
    to be submitted in a preview, which change neither the request nor its checks (the
    create sees them all)."""
    if not isinstance(config, Mapping) or "run_after" not in config:
        return config
    jobs = config["run_after"]
    if is_unknown(jobs):
        return {key: value for key, value in config.items() if key != "run_after"}
    if not isinstance(jobs, list):
        return config
    return {**config, "run_after": [job for job in jobs if not is_unknown(job)]}


def is_unknown(value: Any) -> bool:
    """Whether ``value`` is unknown (computed) in a preview.

    Pulumi's dynamic provider host hands ``check`` ``pulumi.output.Unknown`` objects; the
    wire sentinel string means the same.
    """
    import pulumi

    return isinstance(value, pulumi.output.Unknown) or (
        isinstance(value, str) and value == pulumi.runtime.rpc.UNKNOWN
    )


def migrate_waiter(props: Mapping[str, Any]) -> dict[str, Any]:
    """The waiter's state in today's shape: each entry a ``Waited`` (an entry of an
    earlier release, a whole ``WaitEntry``, keeps its resource name and ``until``; one
    for a job waited for ``submitted`` is dropped)."""
    migrated = dict(props)
    jobs = migrated.get("jobs")
    if isinstance(jobs, Mapping):
        migrated["jobs"] = {
            name: waited for name, entry in jobs.items() if (waited := _waited(entry)) is not None
        }
    return migrated


def _waited(entry: Any) -> Any:
    """An entry of the waiter's ``jobs`` as a ``Waited``; None for one that waits for
    nothing (``submitted``)."""
    if not isinstance(entry, Mapping) or "wait" not in entry:
        return entry  # today's shape (or not an entry at all: left for the diff to see)
    until = (entry.get("wait") or {}).get("until")
    if until == "submitted":
        return None
    return {"resource_name": entry.get("resource_name"), "until": until}


def whole_numbers(value: Any) -> Any:
    """``value`` with every whole-number float as an int, at any depth.

    The Pulumi CLI hands the program a config's whole numbers as ints (``1.0`` reads as
    1); the engine turns every number of a resource's inputs into a float on its way to
    the provider. Turning whole floats back gives ``check`` the job the program read.
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: whole_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [whole_numbers(item) for item in value]
    return value


def engine_numbers(value: Any) -> Any:
    """``value`` with every number a float, as the engine hands a provider its inputs.

    The identity label hashes the request as ``create`` receives it, through the engine
    (``bootDiskSizeGb: 100.0``); a request built in this process (the waiter reads a
    job's from the stack config) hashes the same once its numbers are floats too.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, Mapping):
        return {key: engine_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [engine_numbers(item) for item in value]
    return value


class ConfiguredProvider(ResourceProvider):
    """A dynamic provider that reads ``ProviderSettings`` in ``configure``.

    The provider host calls ``configure`` once on each provider it loads from the state,
    with the stack's whole config, before any other call; it runs in the project
    directory. The provider is pickled before that, so the settings never reach the state.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each lifecycle method a provider defines ends its gRPC call with the project's
        own error message alone (``rpc_errors``)."""
        super().__init_subclass__(**kwargs)
        for name in ("check", "diff", "create", "read", "update", "delete"):
            if name in cls.__dict__:
                setattr(cls, name, plain_errors(cls.__dict__[name]))

    def configure(self, req: ConfigureRequest) -> None:
        """Read how this machine reaches the backends; from now on, stop the provider host
        should its engine go (``engine_watch``: a killed engine ends no provider)."""
        from vertex_training.resources.engine_watch import watch_engine
        from vertex_training.resources.progress import engine_address

        watch_engine(engine_address())
        self.start(ProviderSettings.from_config(req.config.get, Path.cwd()))

    def start(self, settings: ProviderSettings) -> None:
        """Begin an update with ``settings``: what ``configure`` does with what it read.
        The provider plugin (``vertex_training.plugin``) calls it with its own config."""
        self._settings = settings

    @property
    def settings(self) -> ProviderSettings:
        """What ``configure`` read (the defaults when nothing called it)."""
        configured: ProviderSettings | None = getattr(self, "_settings", None)
        return configured or ProviderSettings(base_dir=str(Path.cwd()))
