"""TrainingJob: a Vertex AI CustomJob as a Pulumi dynamic resource.

Lifecycle, as the engine drives it:

- check: parse the job's stack config with ``provider.stackconfig``; every mistake becomes a
  CheckFailure naming the stack config key, the bad value and the fix. The checked
  inputs are the canonical job (user terms), the exact API request, where the job runs
  (``location``), the provider-side settings (``wait``, ``adopt``) and the state's
  ``schema`` (``provider.resources.state``: every state read goes through its migration).
- diff: a change to anything that runs replaces the job (the API has no update) and
  lists the changed keys; a change to provider-side settings only is an in-place update;
  no change is no diff.
- create: submits and returns at once with the server-chosen resource name as the ID.
  Waiting is done for all jobs together by ``provider.resources.waiter.JobWaiter``, so a stack of
  many jobs is not held in batches by the provider host's four threads. Each job carries
  a label derived from its stack, resource name and request; a create looks for that
  label first, so a rerun after an interrupted ``pulumi up`` adopts the job it had
  already submitted instead of submitting it twice. A submission that fails in a way
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

import hashlib
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
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

from provider.api import states
from provider.api.bodies import canonical_request, run_key_differs, runs_differently
from provider.api.labels import IDENTITY_LABEL, RESOURCE_LABEL, STACK_LABEL, label_value
from provider.errors import BackendError, SpecError, TransientError, UncertainError
from provider.keys import job_key
from provider.resources.state import (
    SCHEMA_KEY,
    SCHEMA_VERSION,
    ConfiguredProvider,
    JobInputs,
    JobOutputs,
    ProviderSettings,
    migrate_job,
)

if TYPE_CHECKING:
    from provider.backends.base import Backend, JobStatus
    from provider.errors import Issue
    from provider.stackconfig import JobSpec

#: Inputs that never change what runs: changing them updates the resource in place.
PROVIDER_SIDE_KEYS = ("wait", "adopt", SCHEMA_KEY)
#: The stack config keys of a job that hold provider-side settings.
SETTINGS_KEYS = ("wait", "adopt")
#: ``RUN_KEYS`` (``provider.api.bodies``) say what runs and where. When one changes the
#: job is replaced, and the replacement lists every changed key (the user's config keys
#: among them); a change to config keys that leaves these alone (say, writing out a
#: default) is an update.
#: Stack settings that may be unknown in a preview and that the spec copies verbatim into
#: the request (so they stay unknown there): the platform TensorBoard's name.
UNKNOWN_PASSED_THROUGH = frozenset({"tensorboard"})
#: Inputs the engine hands back that are not the job's (the serialized provider).
ENGINE_KEYS = ("__provider",)

#: Length of the request hash kept in the identity label (hex digits).
IDENTITY_HASH_LEN = 40

#: How long a delete waits for a cancelled job to stop before deleting it anyway.
STOP_TIMEOUT_S = 600.0
STOP_POLL_S = 2.0

#: How many times a create submits a job in all when each submission fails in a way that
#: may or may not have created it (``UncertainError``); the label is looked up first
#: every time.
CREATE_ATTEMPTS = 5
#: Backoff between those attempts: first wait, growth factor, longest wait. The five
#: attempts span 2 + 4 + 8 + 16 = 30 s of waiting at most.
CREATE_BACKOFF_INITIAL_S = 2.0
CREATE_BACKOFF_MULTIPLIER = 2.0
CREATE_BACKOFF_MAX_S = 30.0

#: Jobs that a create in this process took over instead of submitting. The provider
#: host is one process for a whole `pulumi up`; when a replacement takes over the very
#: job it replaces (`pulumi up --replace` of an unchanged job: same identity label),
#: deleting the old resource must not delete the job the new one now tracks. Module
#: state of the host process: never part of the pickled provider.
_TAKEN_OVER: set[str] = set()

#: Outputs every TrainingJob has, besides its inputs.
OUTPUT_KEYS = (
    "resource_name",
    "job_id",
    "state",
    "error",
    "create_time",
    "start_time",
    "end_time",
    "web_access_uris",
    "console_url",
    "logs_url",
    "output_directory",
    "model_directory",
    "failure",
)


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


def identity_label(stack: str, resource: str, request: Mapping[str, Any]) -> str:
    """The value of IDENTITY_LABEL: a hash of the stack, resource name and request (in
    its canonical form, so that the same job always gets the same label)."""
    canonical = json.dumps(
        [stack, resource, canonical_request(request)], sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()[:IDENTITY_HASH_LEN]


def labelled_request(request: Mapping[str, Any], stack: str, resource: str) -> dict[str, Any]:
    """The request as submitted: the user's labels plus the provider's three."""
    body: dict[str, Any] = json.loads(json.dumps(request))
    body["labels"] = {
        **body.get("labels", {}),
        IDENTITY_LABEL: identity_label(stack, resource, request),
        STACK_LABEL: label_value(stack),
        RESOURCE_LABEL: label_value(resource),
    }
    return body


def _job_inputs(
    props: Mapping[str, Any], output_keys: tuple[str, ...] = OUTPUT_KEYS
) -> dict[str, Any]:
    """The checked inputs of a job, without engine keys and outputs."""
    return {k: v for k, v in props.items() if k not in ENGINE_KEYS and k not in output_keys}


def _status_outputs(status: JobStatus, backend: Backend, request: Mapping[str, Any]) -> JobOutputs:
    """The outputs of a job from what its backend reports."""
    from provider.api.bodies import job_spec_of

    spec = job_spec_of(request)
    named = spec.get("baseOutputDirectory", {}).get("outputUriPrefix", "")
    base = (backend.output_directory(status.name) or named).rstrip("/")
    return {
        "resource_name": status.name,
        "job_id": status.job_id,
        "state": status.state,
        "error": status.error,
        "create_time": status.create_time,
        "start_time": status.start_time,
        "end_time": status.end_time,
        "web_access_uris": dict(status.web_access_uris),
        "console_url": backend.console_url(status.name),
        "logs_url": backend.logs_url(status.name),
        "output_directory": base,
        "model_directory": f"{base}/model" if base else "",
        "failure": _failure_output(status),
    }


def _failure_output(status: JobStatus) -> dict[str, Any]:
    """A failed job's error, classified (``provider.api.failures``); {} for any other."""
    if status.state != states.FAILED:
        return {}
    from provider.api.failures import classify

    return classify(status.error_code, status.error).to_output()


def _connect(props: Mapping[str, Any], settings: ProviderSettings) -> Backend:
    from provider.backends import connect

    return connect(props["location"], settings.connection())


class TrainingJobProvider(ConfiguredProvider):
    """The dynamic provider behind TrainingJob. Stateless: see the module docstring.

    Subclasses (provider.resources.tuning_job) add outputs through ``output_keys`` and ``outputs``.
    """

    #: The outputs of this kind of job, besides its inputs.
    output_keys: tuple[str, ...] = OUTPUT_KEYS
    #: How a create tries again after an uncertain failure (a class attribute, never
    #: pickled into the state; tests subclass to wait less).
    create_retry: ClassVar[CreateRetry] = CREATE_RETRY

    def outputs(
        self, status: JobStatus, backend: Backend, request: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The outputs of a job from what its backend reports."""
        return dict(_status_outputs(status, backend, request))

    def _inputs(self, props: Mapping[str, Any]) -> dict[str, Any]:
        return _job_inputs(migrate_job(props), self.output_keys)

    def check(self, _olds: Any, news: Any) -> CheckResult:
        from provider import stackconfig

        name = news["name"]
        stack_values = news.get("stack")
        if _unknown(news.get("config")) or _unknown(stack_values):
            # Not known yet (computed from resources still to be created): nothing can be
            # validated now; the check at `pulumi up` sees the values.
            return CheckResult(news, [])
        # In a preview, stack settings may hold values known only once the platform
        # exists (the name of a TensorBoard still to be created). Those the spec passes
        # through verbatim go in as Pulumi's unknown sentinel and come out of the request
        # as unknown, which the preview shows as such; the job is validated without them.
        # Any other unknown setting means the job cannot be validated yet.
        unknown = {key for key, value in stack_values.items() if _unknown(value)}
        if unknown - UNKNOWN_PASSED_THROUGH:
            return CheckResult(news, [])
        # The engine hands a dynamic provider every number as a float; the program (and
        # render, plan, the policy pack) got whole numbers as ints from the same config.
        config = whole_numbers(news.get("config") or {})
        stack = stackconfig.StackSettings(
            **{**stack_values, **dict.fromkeys(unknown, pulumi.runtime.rpc.UNKNOWN)}
        )
        try:
            job = stackconfig.parse_job(name, config, stack)
        except SpecError as exc:
            return CheckResult(news, [_failure(name, issue) for issue in exc.issues])
        failures = [_failure(name, issue) for issue in _preflight(job, self.settings)]
        settings = job.settings()
        user_keys = {k: v for k, v in config.items() if k not in SETTINGS_KEYS}
        derived: JobInputs = {
            "name": name,
            "schema": SCHEMA_VERSION,
            "request": job.request_body(),
            "location": job.location(),
            "stack_name": stack.stack,
            "wait": settings["wait"],
            "adopt": settings["adopt"] or "",
        }
        return CheckResult({**user_keys, **derived}, failures)

    def diff(self, _id: str, olds: Any, news: Any) -> DiffResult:
        olds = migrate_job(olds)
        keys = set(self._inputs(news)) | set(self._inputs(olds))
        changed = sorted(k for k in keys if _differs(k, olds, news))
        replaced = runs_differently(olds, news)
        replaces = [k for k in changed if k not in PROVIDER_SIDE_KEYS] if replaced else []
        return DiffResult(
            changes=bool(changed),
            replaces=replaces,
            stables=["name"],
            delete_before_replace=False,
        )

    def create(self, props: Any) -> CreateResult:
        inputs = self._inputs(props)
        backend = _connect(inputs, self.settings)
        body = labelled_request(inputs["request"], inputs["stack_name"], inputs["name"])
        if inputs.get("adopt"):
            status = backend.get(inputs["adopt"])
            if status is None:
                raise BackendError(
                    f"{job_key(inputs['name'], 'adopt')} names {inputs['adopt']}, "
                    "which does not exist; remove `adopt` to submit a new job"
                )
        else:
            status = _find_submitted(backend, body)
            if status is None:
                status = _submit(backend, body, self.create_retry)
            else:
                _TAKEN_OVER.add(status.name)
        outs = {**inputs, **self.outputs(status, backend, inputs["request"])}
        return CreateResult(status.name, outs)

    def read(self, id_: str, props: Any) -> ReadResult:
        inputs = self._inputs(props)
        backend = _connect(inputs, self.settings)
        status = backend.get(id_)
        if status is None:
            return ReadResult("", {})
        return ReadResult(id_, {**inputs, **self.outputs(status, backend, inputs["request"])})

    def update(self, id_: str, _olds: Any, news: Any) -> UpdateResult:
        inputs = self._inputs(news)
        backend = _connect(inputs, self.settings)
        status = backend.get(id_)
        if status is None:
            raise BackendError(
                f"job {id_} no longer exists; run `pulumi refresh` to drop it from the stack"
            )
        return UpdateResult({**inputs, **self.outputs(status, backend, inputs["request"])})

    def delete(self, id_: str, props: Any) -> None:
        if not id_ or id_ in _TAKEN_OVER:
            return
        backend = _connect(self._inputs(props), self.settings)
        stop(backend, id_)
        backend.delete(id_)


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


def _find_submitted(backend: Backend, body: Mapping[str, Any]) -> JobStatus | None:
    """The job an earlier, interrupted create submitted with the same identity, if any."""
    found = backend.find_by_label(IDENTITY_LABEL, body["labels"][IDENTITY_LABEL])
    return found[0] if found else None


def _submit(
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
            submitted = _find_submitted(backend, body)
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
    submitted = _find_submitted(backend, body)
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


def _differs(key: str, olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    """Whether input ``key`` changed (requests compared as the replace rule compares them)."""
    return run_key_differs(key, olds, news)


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


def _unknown(value: Any) -> bool:
    """Whether ``value`` is unknown (computed) in a preview.

    Pulumi's dynamic provider host hands ``check`` ``pulumi.output.Unknown``
    objects; the wire sentinel string means the same.
    """
    return isinstance(value, pulumi.output.Unknown) or (
        isinstance(value, str) and value == pulumi.runtime.rpc.UNKNOWN
    )


def _failure(name: str, issue: Issue) -> CheckFailure:
    prefix = f"{job_key(name)}."
    prop = issue.key[len(prefix) :].split(".")[0] if issue.key.startswith(prefix) else "config"
    return CheckFailure(prop or "config", str(issue))


def _preflight(job: JobSpec, settings: ProviderSettings) -> list[Issue]:
    """Problems a backend can see before submission (no cloud call)."""
    if job.backend != "local":
        return []
    from provider.backends.local import preflight

    return preflight(
        job.request_body(),
        key_prefix=job_key(job.name),
        base_dir=settings.base_dir,
        accelerators=settings.local_accelerators,
    )


class TrainingJob(pulumi.dynamic.Resource, module="vertex", name="TrainingJob"):
    """A training job declared in the stack config, run by Vertex AI or on this machine."""

    #: The provider of this kind of job (a subclass may name another).
    job_provider_class: type[TrainingJobProvider] = TrainingJobProvider

    resource_name: pulumi.Output[str]
    job_id: pulumi.Output[str]
    state: pulumi.Output[str]
    error: pulumi.Output[str]
    console_url: pulumi.Output[str]
    logs_url: pulumi.Output[str]
    output_directory: pulumi.Output[str]
    model_directory: pulumi.Output[str]
    failure: pulumi.Output[dict[str, Any]]
    wait: pulumi.Output[dict[str, Any]]
    location: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        config: Mapping[str, Any],
        stack: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
        *,
        secret: bool = False,
    ) -> None:
        """``secret``: the config holds a Pulumi secret; keep it encrypted in the state.

        The dynamic provider host sees plain values (it does not accept secrets), and the
        engine marks a checked input secret when the input of the same name was: so the
        config is passed as a secret, and so are placeholders for every input ``check``
        derives from it (the request, and the config keys it copies for diffs).
        """
        props: dict[str, Any] = {
            "name": name,
            "config": dict(config),
            "stack": dict(stack),
            "wait": None,
            "location": None,
            **{key: None for key in self.job_provider_class.output_keys},
        }
        if secret:
            keys = secret_keys(config)
            props.update({key: pulumi.Output.secret(None) for key in keys})
            props["config"] = pulumi.Output.secret(dict(config))
            opts = pulumi.ResourceOptions.merge(
                opts, pulumi.ResourceOptions(additional_secret_outputs=keys)
            )
        super().__init__(self.job_provider_class(), name, props, opts)


def secret_keys(config: Mapping[str, Any]) -> list[str]:
    """The inputs and outputs of a job that carry its config: the ones kept secret."""
    return sorted({"config", "request", *(k for k in config if k not in SETTINGS_KEYS)})
