"""What every backend offers the dynamic providers.

A backend takes a job as the Vertex AI REST request body (a ``CustomJob`` or a
``HyperparameterTuningJob`` in JSON form, camelCase field names, exactly what
``vertex-training render`` prints) and answers with ``JobStatus`` records. The
providers never see a Google client or a process.

Every kind of job goes through the same calls: ``submit`` tells them apart by the body (a
tuning job has a ``studySpec``, a training pipeline a ``trainingTaskDefinition``), the
others by the resource name (``.../customJobs/ID``, ``.../hyperparameterTuningJobs/ID``,
``.../trainingPipelines/ID``), and ``find_by_label`` looks among all. A tuning job's
status carries its trials; a pipeline's, its backing job and the model version it
registered.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from vertex_training.api.scheduling import PoolShape
from vertex_training.backend_kinds import LOCAL, VERTEX

#: Trial states, named as in google.cloud.aiplatform.v1.Trial.State.
TRIAL_ACTIVE = "ACTIVE"
TRIAL_SUCCEEDED = "SUCCEEDED"
#: "The service will set a Trial to INFEASIBLE when it's done but missing the
#: final_measurement" (study.proto): a trial that failed, or was stopped.
TRIAL_INFEASIBLE = "INFEASIBLE"
MAXIMIZE, MINIMIZE = "MAXIMIZE", "MINIMIZE"


#: The metadata of an output that an SDK types as maybe absent.
_MAYBE = {"required": False}


@dataclass(frozen=True)
class TrialOutput:
    """A trial of a tuning job, as its `trials` and `bestTrial` (and a JobWaiter's
    `trials`) give it."""

    id: str = field(metadata={"description": "The trial's ID within its job: `1`, `2`, ..."})
    state: str = field(
        metadata={"description": "`SUCCEEDED`, `INFEASIBLE`, `ACTIVE`, `STOPPING` or `REQUESTED`."}
    )
    parameters: Mapping[str, Any] = field(
        metadata={
            "description": "The values the trial ran with, by parameter ID (numbers, or text "
            "for a categorical parameter)."
        }
    )
    final_metric: float | None = field(
        metadata={
            **_MAYBE,
            "description": "The final value of the study's first metric, the one that ranks "
            "the trials; unset when the trial reported none.",
        }
    )
    metrics: Mapping[str, float] = field(
        metadata={"description": "The final value of each metric the trial reported, by metric ID."}
    )
    start_time: str = field(
        metadata={**_MAYBE, "description": "When the trial started and ended (RFC 3339)."}
    )
    end_time: str = field(
        metadata={**_MAYBE, "description": "When the trial started and ended (RFC 3339)."}
    )
    infeasible_reason: str = field(
        metadata={
            **_MAYBE,
            "description": "Why an `INFEASIBLE` trial has no final value (its job failed, was "
            "stopped, ...).",
        }
    )


# A JobWaiter's ``trials`` of one job, as ``JobStatus.trial_outputs`` makes them.
@dataclass(frozen=True)
class WaitedTrialsOutput:
    """What a JobWaiter saw of one tuning job's trials, in its `trials` by job name."""

    trials: tuple[Mapping[str, Any], ...] = field(
        metadata={
            "shape": tuple[TrialOutput, ...],
            "description": "Every trial the job has run so far.",
        }
    )
    best_trial: Mapping[str, Any] | None = field(
        default=None,
        metadata={
            **_MAYBE,
            "shape": TrialOutput,
            "description": "The succeeded trial with the best final metric for the study's "
            "goal; unset while none has one.",
        },
    )


@dataclass(frozen=True)
class Trial:
    """One trial of a hyperparameter tuning job (study.proto ``Trial``)."""

    #: The trial's ID within its job: "1", "2", ...
    id: str
    #: One of the TRIAL_* states.
    state: str
    #: Parameter values by parameter ID (int for integer parameters, str for categorical).
    parameters: dict[str, int | float | str] = field(default_factory=dict)
    #: The final measurement's metric values by metric ID; {} when there is none.
    metrics: dict[str, float] = field(default_factory=dict)
    start_time: str = ""
    end_time: str = ""
    #: Why an INFEASIBLE trial has no final measurement (its job failed, was stopped, ...).
    infeasible_reason: str = ""

    def output(self, metric_id: str) -> TrialOutput:
        """The trial as an output: ``final_metric`` is ``metric_id``'s value."""
        return TrialOutput(
            self.id,
            self.state,
            dict(self.parameters),
            self.metrics.get(metric_id),
            dict(self.metrics),
            self.start_time,
            self.end_time,
            self.infeasible_reason,
        )

    def to_output(self, metric_id: str) -> dict[str, Any]:
        """The trial as a resource output, in the state's naming (plain data)."""
        return asdict(self.output(metric_id))


def best_trial(trials: Sequence[Trial], metric_id: str, goal: str) -> Trial | None:
    """The SUCCEEDED trial with the best ``metric_id`` for ``goal`` (the lowest ID on a
    tie), or None when no trial has a final value for it."""
    measured = [t for t in trials if t.state == TRIAL_SUCCEEDED and metric_id in t.metrics]
    if not measured:
        return None
    sign = -1.0 if goal == MINIMIZE else 1.0
    return max(measured, key=lambda t: (sign * t.metrics[metric_id], -_id_order(t.id)))


def _id_order(trial_id: str) -> int:
    return int(trial_id) if trial_id.isdigit() else 0


def job_id_of(resource_name: str) -> str:
    """A job's ID: its resource name's last segment ("" for no name)."""
    return resource_name.rsplit("/", 1)[-1] if resource_name else ""


#: The first segment of every local job's resource name (``local/customJobs/ID``).
LOCAL_NAME_ROOT = LOCAL.name_root


def location_of(resource_name: str) -> dict[str, str | None]:
    """Where the job of ``resource_name`` runs (``backend``, ``project``, ``region``),
    read from the name alone: ``projects/P/locations/R/...`` on Vertex AI,
    ``local/...`` on this machine. ValueError for a name of neither form."""
    parts = resource_name.split("/")
    if parts[0] == LOCAL.name_root:
        return {"backend": LOCAL.name, "project": None, "region": None}
    if len(parts) >= 4 and parts[0] == VERTEX.name_root and parts[2] == "locations":
        return {"backend": VERTEX.name, "project": parts[1], "region": parts[3]}
    raise ValueError(f"{resource_name!r} names no Vertex AI or local job")


@dataclass(frozen=True)
class ModelVersion:
    """The model version a job with `model` registered, as its `model` output gives it
    ([models](models.md)). The job's ID is then its training pipeline's."""

    # No property is always set (a pipeline names its backing job before its model).
    resource_name: str = field(
        metadata={
            **_MAYBE,
            "description": "The model's resource name, `projects/P/locations/R/models/M` "
            "(`local/models/M` on the local backend).",
        }
    )
    model_id: str = field(
        metadata={
            **_MAYBE,
            "description": "The model's ID, the last segment of its resource name.",
        }
    )
    version_id: str = field(
        metadata={
            **_MAYBE,
            "description": "The version this job registered: `1` for a new model, then `2`, "
            "`3`, ...",
        }
    )
    version_name: str = field(
        metadata={
            **_MAYBE,
            "description": "The version's resource name, `<resourceName>@<versionId>`, which "
            "other resources take.",
        }
    )
    aliases: tuple[str, ...] = field(
        metadata={
            **_MAYBE,
            "description": "The version's aliases now (`default` is on the newest version).",
        }
    )
    artifact_uri: str = field(
        metadata={**_MAYBE, "description": "Where the version's artifacts are."}
    )
    display_name: str = field(metadata={**_MAYBE, "description": "The model's display name."})
    image_uri: str = field(
        metadata={**_MAYBE, "description": "The serving image it was registered with."}
    )
    backing_job: str = field(
        default="",
        metadata={
            **_MAYBE,
            "unset": "",
            "description": "The custom job or tuning job the training pipeline ran; unset on "
            "the local backend, where the pipeline runs its job in its own record.",
        },
    )

    def to_output(self) -> dict[str, Any]:
        """The version as a resource output, in the state's naming (plain data): its
        ``backing_job`` only when it has one."""
        output = {**asdict(self), "aliases": list(self.aliases)}
        if not self.backing_job:
            del output["backing_job"]
        return output


@dataclass(frozen=True)
class RegisteredModel:
    """A model version a training pipeline registered (model.proto ``Model``)."""

    #: The model's resource name without a version: ``projects/P/locations/R/models/M``
    #: on Vertex AI, ``local/models/M`` on this machine.
    name: str
    #: The version the pipeline registered: "1" for a new model, then "2", "3", ...
    version_id: str
    #: The version's aliases now ("default" is on the model's newest version).
    aliases: tuple[str, ...] = ()
    #: Where its artifacts are (``gs://...`` on Vertex AI; a folder on this machine).
    artifact_uri: str = ""
    display_name: str = ""
    #: The serving image it was registered with.
    image_uri: str = ""

    @property
    def model_id(self) -> str:
        """The model's ID: its resource name's last segment."""
        return job_id_of(self.name)

    @property
    def version_name(self) -> str:
        """The version's resource name: ``<name>@<version_id>``."""
        return f"{self.name}@{self.version_id}"

    def output(self, backing_job: str = "") -> ModelVersion:
        """The version as a ``model`` output, with the pipeline's ``backing_job``."""
        return ModelVersion(
            self.name,
            self.model_id,
            self.version_id,
            self.version_name,
            self.aliases,
            self.artifact_uri,
            self.display_name,
            self.image_uri,
            backing_job,
        )

    def to_output(self) -> dict[str, Any]:
        """The version as a resource output, in the state's naming (plain data)."""
        return self.output().to_output()


@dataclass(frozen=True)
class JobStatus:
    """What a backend knows of one job."""

    #: Vertex resource name (projects/P/locations/L/customJobs/ID or
    #: .../hyperparameterTuningJobs/ID) or the local job's name.
    name: str
    #: One of vertex_training.api.states (QUEUED ... PARTIALLY_SUCCEEDED).
    state: str
    display_name: str = ""
    #: The job's error message when it failed or was cancelled, else "".
    error: str = ""
    #: The error's google.rpc.Status code (0 when there is no error, or none was given).
    error_code: int = 0
    #: RFC 3339 timestamps, "" when not reached yet.
    create_time: str = ""
    start_time: str = ""
    end_time: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    #: Interactive shell URIs by worker pool replica ("workerpool0-0": "https://...").
    web_access_uris: dict[str, str] = field(default_factory=dict)
    #: A tuning job's trials, by ID; [] for a custom job (and in label lookups).
    trials: list[Trial] = field(default_factory=list)
    #: The metric that ranks a tuning job's trials (its study's first) and its goal.
    metric_id: str = ""
    goal: str = ""
    #: A tuning job's maxTrialCount; 0 for a custom job.
    max_trials: int = 0
    #: The job's worker pools as they use quota (a tuning job's: one trial's), and its
    #: scheduling strategy ("" for the default, STANDARD).
    pools: tuple[PoolShape, ...] = ()
    strategy: str = ""
    #: A training pipeline's backing job (its custom job's, or its tuning job's, resource
    #: name) once it has one; "" for a job.
    backing_job: str = ""
    #: What a training pipeline registered, once it has; None before, and for a job.
    model: RegisteredModel | None = None

    @property
    def job_id(self) -> str:
        """The last segment of the resource name."""
        return job_id_of(self.name)

    @property
    def best_trial(self) -> Trial | None:
        """The tuning job's best trial so far, or None."""
        return best_trial(self.trials, self.metric_id, self.goal)

    def model_output(self) -> dict[str, Any]:
        """A training pipeline's ``model`` output: the version it registered
        (``RegisteredModel.to_output``) and its backing job; {} for a job."""
        if self.model is not None:
            return self.model.output(self.backing_job).to_output()
        return {"backing_job": self.backing_job} if self.backing_job else {}

    def trial_outputs(self) -> dict[str, Any]:
        """``trials`` and ``best_trial`` as resource outputs (plain data, of the
        ``WaitedTrialsOutput`` shape)."""
        best = self.best_trial
        return {
            "trials": [t.to_output(self.metric_id) for t in self.trials],
            "best_trial": best.to_output(self.metric_id) if best is not None else None,
        }


class Backend(Protocol):
    """Submit, look up, cancel and delete custom jobs, hyperparameter tuning jobs and
    training pipelines; find the models pipelines register (never delete them)."""

    def submit(self, body: dict[str, Any]) -> JobStatus:
        """Submit a CustomJob, (with a ``studySpec``) a HyperparameterTuningJob, or (with a
        ``trainingTaskDefinition``, ``vertex_training.api.pipelines``) a TrainingPipeline
        request body; return the job as the server created it. A pipeline's status has
        the job states' names (``pipelines.PIPELINE_STATES``)."""

    def find_model(self, model_id: str, owner_labels: Mapping[str, str]) -> str | None:
        """The resource name of the model a pipeline registers its next version of: the
        model ``model_id`` when given, else the newest model carrying every one of
        ``owner_labels``; None when there is none yet."""

    def model_versions(self, model: str) -> list[RegisteredModel]:
        """Every version of the model ``model`` (its resource name), oldest first; [] when
        it does not exist."""

    def get(self, name: str) -> JobStatus | None:
        """Return the job (a tuning job with its trials), or None when it does not exist
        (deleted outside Pulumi)."""

    def find_by_label(self, key: str, value: str) -> list[JobStatus]:
        """Return the jobs of either kind whose label ``key`` equals ``value``, newest first."""

    def cancel(self, name: str) -> None:
        """Ask a job to stop; a job already ended or not found is not an error."""

    def delete(self, name: str) -> None:
        """Delete a job's record and wait for the deletion; not found is not an error."""

    def output_directory(self, name: str) -> str:
        """The job's base output directory as the backend knows it ("" when it does not)."""

    def console_url(self, name: str) -> str:
        """A URL (or local path) where a person sees the job."""

    def logs_url(self, name: str) -> str:
        """A URL (or local path) of the job's logs."""

    def log_tail(self, name: str, replica: str, lines: int, end_time: str = "") -> list[str]:
        """The last ``lines`` lines of a replica's log ("workerpool0-0"), oldest first, up
        to the job's ``end_time`` (RFC 3339, "" when unknown).
        Raises ``BackendError`` when the log cannot be read; the caller reports that and
        goes on."""
