"""Vertex AI training that pulumi-gcp declares -> what the review judges.

pulumi-gcp 10.5.0 (2026-11-18) declares training with three resources. Their inputs are
the Vertex AI REST shapes (www.pulumi.com/registry/packages/gcp/api-docs/vertex/
aicustomjob/, .../aitrainingpipeline/, .../aipersistentresource/), camelCase as the
engine shows them:

- ``gcp:vertex/aiCustomJob:AiCustomJob``: ``displayName``, ``labels``, ``region``,
  ``project``, ``jobSpec`` (a CustomJobSpec: ``workerPoolSpecs``, ``scheduling``,
  ``persistentResourceId``, ...).
- ``gcp:vertex/aiTrainingPipeline:AiTrainingPipeline``: ``displayName``, ``labels``,
  ``region``, ``project``, ``trainingTaskDefinition`` and ``trainingTaskInputs``, a JSON
  text (the custom task's CustomJobSpec, or the tuning task's study, counts and
  ``trialJobSpec``).
- ``gcp:vertex/aiPersistentResource:AiPersistentResource``: ``name``, ``location``,
  ``project``, ``resourcePools`` (each a ``machineSpec``, ``replicaCount``, ``diskSpec``
  and an optional ``autoscalingSpec``).

A job is read as the body Vertex AI would get, then through the reverse of this
project's request builder (``vertex_training.api.job_config.config_of_request``) into the
keys this project's jobs take, and parsed as they are, so it is priced, policed and
counted against quotas as this project's jobs are. What cannot be read so (a field no
key writes, a task this project does not run, a value only ``pulumi up`` knows) is kept
with the reason, never dropped: the review lists it as not reviewed.

A persistent resource is no job: it holds its machines, and Google bills them, from its
creation until its deletion, whether a job runs or not; jobs that run on it are not
billed on their own (cloud.google.com/vertex-ai/docs/training/persistent-resource-overview,
"Billing details", read 2026-11-29). With autoscaling Google bills the machines
provisioned: at least ``minReplicaCount``, at most ``maxReplicaCount``; the review prices
the most.

The pulumi-gcp provider cannot be installed on the machines this project is tested on;
the tests give preview steps shaped as the registry's schema and examples give them.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from vertex_training.api.bodies import JOB_SPEC_KEY
from vertex_training.api.job_config import UnmappedField, config_of_request
from vertex_training.api.pipelines import DEFINITION_KEY, INPUTS_KEY, task_body
from vertex_training.backend_kinds import VERTEX
from vertex_training.resources.job_arguments import read_job
from vertex_training.resources.state import is_unknown

if TYPE_CHECKING:
    from vertex_training.stackconfig import JobSpec, WorkerPool

CUSTOM_JOB: Final = "gcp:vertex/aiCustomJob:AiCustomJob"
TRAINING_PIPELINE: Final = "gcp:vertex/aiTrainingPipeline:AiTrainingPipeline"
PERSISTENT_RESOURCE: Final = "gcp:vertex/aiPersistentResource:AiPersistentResource"
#: Each type as a program names it, for a reviewer.
SHOWN: Final[Mapping[str, str]] = {
    CUSTOM_JOB: "gcp.vertex.AiCustomJob",
    TRAINING_PIPELINE: "gcp.vertex.AiTrainingPipeline",
    PERSISTENT_RESOURCE: "gcp.vertex.AiPersistentResource",
}
JOB_TYPES: Final = (CUSTOM_JOB, TRAINING_PIPELINE)
TYPES: Final = (*JOB_TYPES, PERSISTENT_RESOURCE)
#: The package that declares them.
PROVIDER: Final = "pulumi-gcp"
#: The fields of a CustomJob (or tuning job) body a pulumi-gcp job's inputs give.
_JOB_FIELDS: Final = ("displayName", "labels", "encryptionSpec")
#: The stack a foreign job is parsed in: this project's settings it does not have.
_STACK: Final = "(pulumi-gcp)"


@dataclass
class ForeignJob:
    """A Vertex AI job pulumi-gcp declares, read as this project's job."""

    type: str
    job: JobSpec | None = None
    #: Why it cannot be reviewed ("" when it can).
    not_reviewed: str = ""

    @property
    def declared_by(self) -> str:
        return f"{PROVIDER} `{SHOWN[self.type]}`"


@dataclass
class PersistentResource:
    """A pool of reserved machines pulumi-gcp declares, billed while it exists."""

    region: str | None
    #: Each pool at the most machines it may hold.
    pools: list[WorkerPool] = field(default_factory=list)
    #: Pools that scale: ``(pool id, least, most)``.
    scaling: list[tuple[str, int, int]] = field(default_factory=list)
    not_reviewed: str = ""

    @property
    def declared_by(self) -> str:
        return f"{PROVIDER} `{SHOWN[PERSISTENT_RESOURCE]}`"


def _plain(props: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs but the engine's and the bridge's own (``__defaults``)."""
    return {key: value for key, value in props.items() if not key.startswith("__")}


def shown_inputs(props: Mapping[str, Any]) -> dict[str, Any]:
    """The inputs as a reviewer compares them: the bridge's own left out, a training
    pipeline's task inputs read from their JSON text."""
    shown = _plain(props)
    inputs = shown.get(INPUTS_KEY)
    if isinstance(inputs, str):
        with contextlib.suppress(ValueError):  # shown as written
            shown[INPUTS_KEY] = json.loads(inputs)
    return shown


def _unknown_at(value: Any, path: str = "") -> str | None:
    """The path of the first value a preview cannot know yet, None when all are known."""
    if is_unknown(value):
        return path or "(the inputs)"
    if isinstance(value, Mapping):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = _unknown_at(item, f"{path}[{key}]" if isinstance(key, int) else f"{path}.{key}")
        if found is not None:
            return found.lstrip(".")
    return None


def job_of(type_: str, name: str, props: Mapping[str, Any]) -> ForeignJob:
    """The job a pulumi-gcp ``AiCustomJob`` or ``AiTrainingPipeline`` named ``name``
    declares, from its inputs ``props``."""
    found = ForeignJob(type_)
    props = _plain(props)
    unknown = _unknown_at(props)
    if unknown is not None:
        found.not_reviewed = f"its {unknown} is not known before pulumi up"
        return found
    try:
        config = config_of_request(_job_body(type_, props), name=name)
    except UnmappedField as exc:
        found.not_reviewed = f"its inputs hold what the review cannot read: {exc}"
        return found
    except ValueError as exc:
        found.not_reviewed = f"its inputs cannot be read: {exc}"
        return found
    settings = {
        "stack": _STACK,
        "project": props.get("project"),
        "region": props.get("region"),
        "backend": VERTEX.name,
    }
    read = read_job(name, config, settings)
    if read.job is None:
        why = "; ".join(str(issue) for issue in read.issues) or read.unknown
        found.not_reviewed = f"read as this project's keys it is refused: {why}"
    found.job = read.job
    return found


def _job_body(type_: str, props: Mapping[str, Any]) -> dict[str, Any]:
    """The CustomJob or HyperparameterTuningJob body the resource submits."""
    body = {key: props[key] for key in _JOB_FIELDS if props.get(key)}
    if type_ == CUSTOM_JOB:
        spec = props.get(JOB_SPEC_KEY)
        if not isinstance(spec, Mapping):
            raise ValueError(f"{JOB_SPEC_KEY} is no object (got {spec!r})")
        return {**body, JOB_SPEC_KEY: dict(spec)}
    inputs = props.get(INPUTS_KEY)
    if isinstance(inputs, str):
        try:
            inputs = json.loads(inputs)
        except ValueError as exc:
            raise ValueError(f"{INPUTS_KEY} is no JSON ({exc})") from None
    if not isinstance(inputs, Mapping):
        raise ValueError(f"{INPUTS_KEY} is no JSON object (got {inputs!r})")
    definition = str(props.get(DEFINITION_KEY) or "")
    return task_body({**body, DEFINITION_KEY: definition, INPUTS_KEY: dict(inputs)})


def persistent_resource_of(props: Mapping[str, Any]) -> PersistentResource:
    """The machines a pulumi-gcp ``AiPersistentResource`` holds."""
    props = _plain(props)
    location = props.get("location")
    found = PersistentResource(None if location is None else str(location))
    unknown = _unknown_at({k: props.get(k) for k in ("location", "resourcePools")})
    if unknown is not None:
        found.not_reviewed = f"its {unknown} is not known before pulumi up"
        return found
    pools = props.get("resourcePools")
    if not isinstance(pools, list) or not pools:
        found.not_reviewed = f"its resourcePools hold no pool (got {pools!r})"
        return found
    for index, pool in enumerate(pools):
        try:
            found.pools.append(_pool(index, pool, found))
        except (TypeError, ValueError) as exc:
            found.not_reviewed = f"resourcePools[{index}] cannot be read: {exc}"
            found.pools = []
            return found
    return found


def _pool(index: int, pool: Any, found: PersistentResource) -> WorkerPool:
    """One resource pool, at the most replicas it may run, as a worker pool to price."""
    from vertex_training.stackconfig import Accelerator, Disk, WorkerPool

    if not isinstance(pool, Mapping):
        raise ValueError(f"is no object (got {pool!r})")
    machine = pool.get("machineSpec") or {}
    disk = pool.get("diskSpec") or {}
    replicas = int(pool.get("replicaCount") or 1)
    pool_id = str(pool.get("id") or f"pool {index}")
    scaling = pool.get("autoscalingSpec")
    if isinstance(scaling, Mapping) and scaling.get("maxReplicaCount"):
        least = int(scaling.get("minReplicaCount") or replicas)
        replicas = max(replicas, int(scaling["maxReplicaCount"]))
        found.scaling.append((pool_id, least, replicas))
    count = int(machine.get("acceleratorCount") or 0)
    accelerator = None
    if machine.get("acceleratorType") and count > 0:
        accelerator = Accelerator(type=str(machine["acceleratorType"]), count=count)
    sized = {"type": disk.get("bootDiskType"), "size_gb": disk.get("bootDiskSizeGb")}
    # Priced, never submitted: built unchecked, so a pool's ID names it in the breakdown.
    return WorkerPool.model_construct(
        role=pool_id,
        replicas=replicas,
        machine=str(machine.get("machineType") or ""),
        accelerator=accelerator,
        tpu_topology=machine.get("tpuTopology"),
        reservation=None,
        disk=Disk(**{k: v for k, v in sized.items() if v}),
    )
