"""The job operations' typed records, for either host: what a job's resource records of
its inputs (``JobRecord``), and what its backend reports of the job it tracks
(``JobObserved``).

``TrainingJobProvider``'s typed operations (``diff_job``, ``create_job``, ``read_job``,
``update_job``, ``delete_job``) take and give these. Each host converts once, at its own
edge: the dynamic providers from and to the state's dicts (``JobRecord.of_state``,
``JobObserved.outputs``), the plugin from and to its properties in the schema's naming.
Neither host derives a job's inputs or outputs anywhere else.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast

from vertex_training.api.failures import JobFailure
from vertex_training.backends.base import ModelVersion, TrialOutput
from vertex_training.errors import BackendError, SpecError
from vertex_training.keys import job_key
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.state import (
    CONFIG_KEY,
    OUTPUT_KEYS,
    SCHEMA_KEY,
    SCHEMA_VERSION,
    TUNING_OUTPUT_KEYS,
    JobView,
    migrate_job,
    migrate_recorded,
    same_job,
)

if TYPE_CHECKING:
    from vertex_training.backends.base import Backend, JobStatus
    from vertex_training.resources.attempts import Attempt
    from vertex_training.resources.job_arguments import ReadJob
    from vertex_training.stackconfig import JobSpec

#: Inputs the engine hands back that are not the job's (the serialized provider).
ENGINE_KEYS = ("__provider",)
#: What the operations read of a job (``JobView``'s keys).
VIEW_KEYS = tuple(JobView.__annotations__)
#: Outputs of schema 2 that schema 3 derives instead: dropped from a state read back.
DERIVED_OUTPUT_KEYS = ("resource_name", "job_id", "console_url", "logs_url", "model_directory")


@dataclass(frozen=True)
class JobRecord:
    """A job's recorded inputs: its name, its keys as a stack config has them
    (``config``), the stack settings it was given (``stack``; each a mapping, or a
    preview's unknown) and the state's schema. A state of schema 2 recorded what runs (a
    ``JobView``, its ``request`` among it) beside the keys: ``written`` keeps such a
    record as it was read, and ``view`` reads it from there (``recorded_view``)."""

    name: str
    config: Any
    stack: Any
    schema: int = SCHEMA_VERSION
    #: A record of schema 2 as read (``migrate_job``); None for today's.
    written: Mapping[str, Any] | None = None

    @classmethod
    def of_state(cls, props: Mapping[str, Any]) -> JobRecord:
        """The record in a job resource's state (inputs and outputs of any schema, engine
        keys among them)."""
        migrated = migrate_job(props)
        dropped = {*ENGINE_KEYS, *TUNING_OUTPUT_KEYS, *DERIVED_OUTPUT_KEYS}
        inputs = migrate_recorded({k: v for k, v in migrated.items() if k not in dropped})
        name, stack = str(inputs.get("name") or ""), inputs.get("stack")
        if inputs.get(SCHEMA_KEY) != SCHEMA_VERSION or "request" in inputs:
            return cls(name, None, stack, int(inputs.get(SCHEMA_KEY) or 0), inputs)
        return cls(name, inputs.get(CONFIG_KEY), stack)

    def recorded(self) -> dict[str, Any]:
        """The record as a job resource's state holds it (its inputs)."""
        if self.written is not None:
            return dict(self.written)
        return {
            "name": self.name,
            SCHEMA_KEY: self.schema,
            "stack": self.stack,
            CONFIG_KEY: self.config,
        }

    def same_job(self, other: JobRecord) -> bool:
        """Whether ``other`` records the same config and stack settings (today's schema)."""
        return same_job(self.recorded(), other.recorded())

    @cached_property
    def _read(self) -> ReadJob:
        """The job the record makes, parsed once however many of an operation's steps
        read it (the view, the plugin's request, estimate and waiter entry)."""
        from vertex_training.resources.job_arguments import read_job

        return read_job(self.name, self.config, self.stack)

    def spec(self) -> JobSpec | None:
        """The job the record makes (today's schema; parsed once); None where a value a
        preview does not know keeps it from being read. SpecError for a job that cannot
        be read (its check refused it)."""
        if self._read.issues:
            raise SpecError(self._read.issues)
        return self._read.job

    def view(self) -> JobView:
        """What the operations need of the job (``state.JobView``: its request, location,
        owner, wait, adopt, retry, run_after), as ``recorded_view`` reads it from the
        record. A record that no longer reads as a job is refused, saying how to bring
        it back."""
        try:
            parsed = self._read if self.written is None else None
            viewed = recorded_view(self.recorded(), parsed)
        except SpecError as exc:
            raise BackendError(
                f"{job_key(self.name)} as the state records it no longer reads as a job "
                f"({exc}); run `pulumi up` with the job as the stack config has it now"
            ) from exc
        return cast("JobView", {key: viewed[key] for key in VIEW_KEYS if key in viewed})

    def sets(self, key: str) -> bool:
        """Whether the job sets the key ``key`` of its config (or, recorded by schema 2,
        of its view) without parsing it."""
        keys = self.written if self.written is not None else self.config
        return isinstance(keys, Mapping) and bool(keys.get(key))


@dataclass(frozen=True)
class AttemptOutput:
    """One attempt of a job with `retry`, as its `attempts` (and a JobWaiter's `attempts`)
    give it."""

    attempt: int = field(metadata={"description": "Its number: 1 for the job's first submission."})
    region: str = field(metadata={"description": "Where it runs."})
    strategy: str = field(
        metadata={"description": "Its scheduling strategy: `STANDARD`, `SPOT` or `FLEX_START`."}
    )
    state: str = field(
        metadata={"description": "Its state as last read (empty before it is submitted)."}
    )
    class_: str = field(
        metadata={"description": "Why it failed (a `JobFailure`'s `class`), or empty."}
    )
    resource_name: str = field(metadata={"description": "Its resource name at its backend."})
    job_id: str = field(metadata={"description": "Its job ID."})
    console_url: str = field(metadata={"description": "Its page in the Google Cloud console."})
    logs_url: str = field(metadata={"description": "Its logs."})


#: When the job was created, started running and ended.
_TIMES = "When the job was created, started running, ended (RFC 3339)."


@dataclass(frozen=True)
class JobObserved:
    """What a job's backend reports of the job its resource tracks (``state.JobOutputs``):
    the resource's ID (``resource_name``) and outputs, each in the state's naming and
    described for the plugin's schema (``plugin.shapes``: the shape of one that is a
    mapping here is its ``shape``). ``trials`` is a tuning job's (None for a custom job);
    ``best_trial`` is None before a trial succeeded. ``attempts`` lists every attempt of a
    job with ``retry``, oldest first, and is empty for any other."""

    resource_name: str
    state: str = field(
        default="",
        metadata={
            "description": "The job's state as last read: `JOB_STATE_QUEUED`, ..., "
            "`JOB_STATE_SUCCEEDED`, `JOB_STATE_FAILED`, `JOB_STATE_CANCELLED` (a JobWaiter's "
            "`states` is newer)."
        },
    )
    error: str = field(
        default="", metadata={"description": "The job's error message, when it failed."}
    )
    create_time: str = field(default="", metadata={"description": _TIMES})
    start_time: str = field(default="", metadata={"description": _TIMES})
    end_time: str = field(default="", metadata={"description": _TIMES})
    web_access_uris: Mapping[str, str] = field(
        default_factory=dict,
        metadata={
            "description": "Interactive shell addresses, by replica, with `enableWebAccess`."
        },
    )
    output_directory: str = field(
        default="", metadata={"description": "The job's base output directory."}
    )
    #: A FAILED job's error, classified (``api.failures.Failure.to_output``); {} else.
    failure: Mapping[str, Any] = field(
        default_factory=dict,
        metadata={
            "shape": JobFailure,
            "description": "A failed job's error, classified (a `JobFailure`: `class`, "
            "`code`, `message`, `fix`, `replica`); unset for any other job.",
        },
    )
    attempts: tuple[Mapping[str, Any], ...] = field(
        default=(),
        metadata={
            "shape": tuple[AttemptOutput, ...],
            "description": "Every attempt of a job with `retry`, oldest first (each an "
            "`Attempt`); empty for any other job.",
        },
    )
    #: A training pipeline's: the model version it registered and its backing job.
    model: Mapping[str, Any] = field(
        default_factory=dict,
        metadata={
            "shape": ModelVersion,
            "description": "What a job with `model` registered once its training pipeline "
            "succeeded (a `ModelVersion`); unset for any other job and before.",
        },
    )
    trials: tuple[Mapping[str, Any], ...] | None = field(
        default=None,
        metadata={
            "shape": tuple[TrialOutput, ...],
            "description": "Every trial: ID, state, parameters, final metric, metrics, times.",
        },
    )
    best_trial: Mapping[str, Any] | None = field(
        default=None,
        metadata={
            "shape": TrialOutput,
            "description": "The succeeded trial with the best final metric for the study's goal.",
        },
    )

    @classmethod
    def of_status(
        cls,
        status: JobStatus,
        backend: Backend,
        view: JobView,
        attempts: list[Attempt],
        *,
        tuning: bool,
    ) -> JobObserved:
        """The job as ``backend`` reports it (``status``), for a job of ``view``
        (``JobRecord.view``), with its ``attempts`` as found or submitted; a ``tuning``
        job's trials too."""
        from vertex_training.api.bodies import named_output_directory
        from vertex_training.resources.attempts import attempt_outputs, failure_output

        base = backend.output_directory(status.name) or named_output_directory(view["request"])
        trials: dict[str, Any] = status.trial_outputs() if tuning else {}
        return cls(
            status.name,
            state=status.state,
            error=status.error,
            create_time=status.create_time,
            start_time=status.start_time,
            end_time=status.end_time,
            web_access_uris=dict(status.web_access_uris),
            output_directory=base,
            failure=failure_output(status),
            attempts=tuple(attempt_outputs(attempts, view)),
            trials=tuple(trials["trials"]) if tuning else None,
            best_trial=trials.get("best_trial"),
            model=status.model_output(),
        )

    @classmethod
    def of_outputs(cls, resource_name: str, outputs: Mapping[str, Any]) -> JobObserved:
        """What a job resource recorded of its job (its ``outputs``, in the state's
        naming, ``state.JobOutputs``: a missing one reads as empty)."""
        known = {f.name for f in dataclasses.fields(cls)} - {"resource_name"}
        values = {key: outputs[key] for key in known if outputs.get(key) is not None}
        for key in ("attempts", "trials"):
            if key in values:
                values[key] = tuple(values[key] or ())
        return cls(resource_name, **values)

    @property
    def tuning(self) -> bool:
        """Whether the job is a tuning job (it has trials, maybe none yet)."""
        return self.trials is not None

    def outputs(self, kept: tuple[str, ...]) -> dict[str, Any]:
        """The resource's outputs in the state's naming (``state.JobOutputs``): those that
        are empty left out, but ``kept`` (every key of every job is carried and logged by
        the engine at each step)."""
        keys = TUNING_OUTPUT_KEYS if self.tuning else OUTPUT_KEYS
        values = {key: _plain(getattr(self, key)) for key in keys}
        return {key: value for key, value in values.items() if value or key in kept}


def _plain(value: Any) -> Any:
    """An output as the state records it (a list for a tuple, a dict for a mapping)."""
    if isinstance(value, tuple):
        return [dict(item) if isinstance(item, Mapping) else item for item in value]
    if isinstance(value, Mapping):
        return dict(value)
    return value
