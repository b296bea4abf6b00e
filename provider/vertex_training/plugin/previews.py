"""What a preview shows of a job of the plugin: the request its create would submit and
its cost estimate (known before it is submitted; a preview's alone, as both are derived
from the inputs the state keeps), every other output unknown; and the line that shows
both under the job in `pulumi preview`.

The estimate's prices come from the snapshot ``vertex-training:prices`` names
(``PriceSnapshot``), read once, by the first job that needs it: a no-change preview
reads none.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pulumi.provider.experimental.property_value import PropertyValue

from vertex_training.backend_kinds import kind_of
from vertex_training.errors import SpecError
from vertex_training.plugin import shapes
from vertex_training.plugin.values import plain_map, property_value
from vertex_training.resources.job_arguments import UNKNOWN_TEXT, read_job
from vertex_training.resources.state import whole_numbers

if TYPE_CHECKING:
    from vertex_training.catalog.prices import Snapshot
    from vertex_training.stackconfig import JobSpec

#: A job resource's outputs known before its job is submitted: the request body its
#: create submits and its cost estimate. A preview's outputs only: the state does not
#: keep them (``job_shapes.job_properties``).
PREVIEWED_OUTPUTS = ("request", "estimate")
#: A job resource's outputs that name its job, which an update never changes: a preview
#: of an update keeps them as recorded (the update reads every other output again).
NAMING_OUTPUTS = ("jobId", "consoleUrl", "logsUrl", "outputDirectory", "modelDirectory")
#: A value the engine shows as unknown (computed) in a preview. The SDK's
#: ``PropertyValue.computed()`` cannot be sent (pulumi 3.259 marshals no ``Computed``):
#: a computed value travels as the unknown sentinel text, at any depth, which the engine
#: reads back as computed in a preview, as it sends an unknown input to the plugin.
UNKNOWN = PropertyValue(UNKNOWN_TEXT)


class PriceSnapshot:
    """The price snapshot jobs' estimates are read from: the file ``vertex-training:prices``
    names (relative to the program's directory), else ``prices/snapshot.json`` there, as
    ``vertex-training prices refresh`` writes it. Read once, by the first estimate that
    needs it (of any thread), and kept for the plugin's life."""

    def __init__(self, base_dir: Path, given: str = "") -> None:
        from vertex_training.catalog.prices import SNAPSHOT_PATH

        self.given = given
        #: The snapshot's path as the program's author writes it.
        self.named = given or SNAPSHOT_PATH.as_posix()
        self.path = base_dir / self.named
        self._lock = threading.Lock()
        self._read: tuple[Snapshot | None, str] | None = None

    def read(self) -> tuple[Snapshot | None, str]:
        """The snapshot, or None and why there is none, with how to make one."""
        with self._lock:
            if self._read is None:
                self._read = self._load()
            return self._read

    def _load(self) -> tuple[Snapshot | None, str]:
        from vertex_training.review.cost import load_prices

        if self.path.exists():
            snapshot, note = load_prices(self.path)
            return snapshot, "" if snapshot is not None else str(note)
        # The fixes first: the CLI shows an output's first 150 characters.
        reads = "reads Google's Cloud Billing Catalog, with Google credentials"
        if self.given:
            return None, (
                f"no price snapshot ({self.given}, vertex-training:prices): `vertex-training "
                f"prices refresh --out {self.given}` writes one; or set vertex-training:prices "
                f"to a snapshot's path, relative to the program's directory (the refresh {reads})"
            )
        return None, (
            f"no price snapshot ({self.named}): `vertex-training "
            "prices refresh` writes one; or name one: `pulumi config set vertex-training:prices "
            f"<path>` (the refresh, run in the program's directory, {reads})"
        )

    def estimate(self, spec: JobSpec) -> dict[str, Any]:
        """What a job may cost (``review.cost.estimate``), in the schema's
        ``CostEstimate`` naming: an amount left out when it is unknown, and ``unknown``
        saying why. A local job needs no prices, and reads none."""
        from vertex_training.review import cost

        snapshot, why = self.read() if kind_of(spec.backend).billed else (None, "")
        estimate = cost.estimate(spec, snapshot)
        # Without a snapshot the estimate advises the repository's `make prices`; a
        # program's author is told where the plugin looked, and how to make or name one.
        unknown = tuple(
            why if reason == cost.NO_SNAPSHOT else reason for reason in estimate.unknown
        )
        estimate = dataclasses.replace(estimate, unknown=unknown)
        given: dict[str, Any] = shapes.properties(cost.CostEstimate.of(estimate, snapshot))
        return given


def request_and_estimate(
    spec: JobSpec | None, secret: bool, prices: PriceSnapshot
) -> dict[str, PropertyValue]:
    """A job's ``request``, the Vertex AI request body its create submits (the body
    `vertex-training render` prints; secret when the job's inputs hold a secret), and
    its ``estimate`` (``PriceSnapshot.estimate``), both unknown while the job cannot be read (a
    value a preview does not know where the job's parse refuses one). The request is
    unknown as a whole while a value in it is: a program of any language reads an
    object holding an unknown as unknown, and a placeholder could be taken for what is
    submitted. The estimate is known once the job is read: each key it prices
    (machines, accelerators, disks, replicas, scheduling, region, retry, trials) is
    one the parse refuses unknown. ``spec``: the job (``spec_of``)."""
    if spec is None:
        return dict.fromkeys(PREVIEWED_OUTPUTS, UNKNOWN)
    body = spec.request_body()
    request = UNKNOWN if UNKNOWN_TEXT in repr(body) else property_value(body, secret=secret)
    return {"request": request, "estimate": property_value(prices.estimate(spec))}


def spec_of(name: str, config: Any, settings: Mapping[str, Any]) -> JobSpec | None:
    """The job a resource's keys and settings make, as its provider reads it; None when
    a value a preview does not know keeps it from being read (it is read once known, at
    `pulumi up`). A job that cannot be read for another reason was refused by check."""
    read = read_job(name, config, settings)
    if read.issues:
        raise SpecError(read.issues)
    return read.job


def unseen(inputs: Mapping[str, PropertyValue]) -> dict[str, PropertyValue]:
    """A JobWaiter's properties in a preview: its inputs, and what a wait sees unknown
    (a preview waits for nothing)."""
    from vertex_training.resources.waiter import SEEN_OUTPUTS

    return {**inputs, **dict.fromkeys(SEEN_OUTPUTS, UNKNOWN)}


@dataclasses.dataclass(frozen=True)
class Replacement:
    """Why a job is replaced, by property path: the keys whose change submits it again,
    and those that changed beside them but alone would update it in place."""

    forcing: tuple[str, ...]
    updating: tuple[str, ...] = ()

    def text(self) -> str:
        """What a reviewer is told: the job is submitted again, and because of which keys."""
        keys = ", ".join(f"`{key}`" for key in self.forcing)
        why = "Vertex AI cannot update a submitted job"
        if self.updating:
            alone = ", ".join(f"`{key}`" for key in self.updating)
            why += f"; {alone} alone would update it in place"
        return f"would be submitted again, replacing the job, because {keys} changed ({why})"


def preview_text(
    properties: Mapping[str, PropertyValue],
    secret: bool,
    replacement: Replacement | None = None,
    type_: str = "",
) -> str:
    """The line under a job of resource type ``type_`` in `pulumi preview` of its create
    (or replacement: why, ``replacement``): when it is submitted and who waits for it,
    what it may cost and the request it would submit (``[secret]`` when its inputs hold a
    secret; said to be unknown while a value of another resource is)."""
    plain = plain_map({key: properties[key] for key in PREVIEWED_OUTPUTS if key in properties})
    estimate, request = plain.get("estimate"), plain.get("request")
    submitted = replacement.text() if replacement else "would be submitted"
    job = plain_map(properties).get("job")
    if after := after_text(job):
        submitted += f", {after}"
    if waited := wait_text(type_, job):
        submitted += f", {waited}"
    if not isinstance(estimate, Mapping):
        return f"{submitted}; what it submits and costs is known once its keys are"
    text = f"{submitted}, estimated {estimate.get('summary')}"
    if estimate.get("pricesRead"):
        text += f" (prices read {estimate['pricesRead']})"
    if secret:
        return f"{text}; request: [secret] (its inputs hold a secret)"
    if not isinstance(request, Mapping):
        return f"{text}; request: known once the values of other resources it takes are"
    return f"{text}; request: {json.dumps(whole_numbers(request), sort_keys=True)}"


def after_text(job: Any) -> str:
    """When a job with ``runAfter`` is submitted, as its preview says: once the jobs it
    runs after have succeeded, each named by its resource name where a preview knows it
    (a job submitted in the same update is known once it is); "" for a job with none."""
    run_after = job.get("runAfter") if isinstance(job, Mapping) else None
    if not run_after:
        return ""
    if not isinstance(run_after, list):
        return "once the jobs it runs after have succeeded (known once they are submitted)"
    known = [f"`{name}`" for name in run_after if name != UNKNOWN_TEXT]
    if later := len(run_after) - len(known):
        known.append(f"{'one' if later == 1 else later} submitted earlier in this update")
    jobs = f"the {len(run_after)} jobs it runs after have" if len(run_after) > 1 else ""
    jobs = jobs or "the job it runs after has"
    return f"once {jobs} succeeded ({', '.join(known)})"


def waits_in_create(type_: str, job: Any) -> str:
    """The state a job's own create waits for it to reach ("" for none): a tuning job's
    (resource type ``type_``) ``wait`` beyond its submission, so that the `pulumi up`
    that waits for it fills its own ``bestTrial`` and ``trials`` (a resource's outputs
    are set by its own operations only). A custom job is waited for by a JobWaiter
    listing it, all of them together, so that a stack's many jobs do not each hold one of
    the engine's parallel operations while they run; a tuning job runs its trials in
    parallel itself, and a stack holds few. ``job``: the job's keys (either naming)."""
    from vertex_training.plugin import schema
    from vertex_training.resources.unwaited import wait_until
    from vertex_training.stackconfig import NOT_WAITED

    if type_ != schema.TUNING_JOB or not isinstance(job, Mapping):
        return ""
    until = wait_until(job)
    return "" if until == NOT_WAITED else until


def wait_text(type_: str, job: Any) -> str:
    """Who waits for a job whose ``wait`` asks for more than its submission, as its
    preview says: its own create (a tuning job: ``waits_in_create``), else only a
    JobWaiter listing its ``waiterEntry`` (its create returns once it is submitted); ""
    for a job that asks for none."""
    from vertex_training.resources.unwaited import wait_until
    from vertex_training.stackconfig import NOT_WAITED

    if until := waits_in_create(type_, job):
        return f"waited for by its own create (`wait: {until}`), which fills its `bestTrial`"
    until = wait_until(job) if isinstance(job, Mapping) else NOT_WAITED
    if until == NOT_WAITED:
        return ""
    return f"waited for (`wait: {until}`) only by a JobWaiter that lists its `waiterEntry`"


def show(urn: str, text: str) -> None:
    """Keep ``text`` under the resource ``urn`` in the engine's display (best effort)."""
    from vertex_training.resources.progress import EngineLog

    log = EngineLog.from_process(urn)
    try:
        log.lasting(text)
    finally:
        log.close()
