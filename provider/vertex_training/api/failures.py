"""Why a job failed: its error (a ``google.rpc.Status``, code and message) -> a class and
its fix.

Vertex AI gives a job that ends FAILED an ``error`` (custom_job.proto: "Only populated
when job's state is JOB_STATE_FAILED or JOB_STATE_CANCELLED"), a google.rpc.Status whose
code the reference does not fix per cause: the message says what happened. ``classify``
reads both, message first, code as the tie-breaker, and is pure (no client, no clock) so
that it is tested against the message shapes recorded below.

The classes, each with the recorded shape it is matched on:

- ``capacity``: the region had no machine for the job (a stockout). "Resources are
  insufficient in region: us-central1" (github.com/openreview/openreview-expertise
  issue 401: Vertex AI "already tried all available zones" of the region); Compute
  Engine's ZONE_RESOURCE_POOL_EXHAUSTED and "does not have enough resources available
  to fulfill the request" (https://cloud.google.com/compute/docs/troubleshooting/
  troubleshooting-resource-availability). A FLEX_START job whose ``max_wait_duration``
  ran out before its machines were found is capacity too
  (https://cloud.google.com/vertex-ai/docs/training/schedule-jobs-dws).
- ``quota``: "The following quota metrics exceed quota limits:
  aiplatform.googleapis.com/custom_model_training_cpus" (RESOURCE_EXHAUSTED,
  github.com/GoogleCloudPlatform/vertex-ai-samples issue 3479); the metrics named are
  kept (``Failure.quotas``).
- ``preemption``: a Spot VM was reclaimed ("Spot VMs ... can be preempted",
  https://cloud.google.com/vertex-ai/docs/training/use-spot-vms). No message text is
  recorded publicly; matched on "preempt".
- ``image``: the container image could not be pulled ("Unable to pull", "Failed to pull
  image", "pull access denied", "manifest unknown": container runtimes' words; Vertex AI
  pulls with its service agent, https://cloud.google.com/vertex-ai/docs/general/
  custom-service-account).
- ``permission``: the job cannot act as its service account or reach a resource
  (PERMISSION_DENIED; "iam.serviceAccounts.actAs", "does not have permission",
  https://cloud.google.com/vertex-ai/docs/general/custom-service-account).
- ``model_upload``: a training pipeline's job succeeded but its model could not be
  registered: the trainer wrote nothing to AIP_MODEL_DIR, or the serving image cannot be
  used (training_pipeline.proto: the pipeline "uploads" the model only after the job).
  Google publishes no message for it; matched on "model upload" and "AIP_MODEL_DIR", the
  words of the local backend and of the fake (``vertex_training.testing.fake_pipelines``).
- ``user_code``: a replica's program exited non-zero: "The replica workerpool1-1 exited
  with a non-zero status of 1. Termination reason: Error." (code 3, INVALID_ARGUMENT;
  github.com/GoogleCloudPlatform/vertex-ai-samples pull 1504), and AI Platform's
  "The replica master 0 exited with a non-zero status of 1" (tensorflow/models issue
  4294). The replica named is kept (``Failure.replica``): its log is the one to show.
- ``infrastructure``: Vertex AI's own failure: INTERNAL (13), UNAVAILABLE (14),
  "Internal error" (google/rpc/code.proto: "some invariants expected by the underlying
  system have been broken"), a replica killed by a signal it did not send itself.
- ``unknown``: anything else; the message is shown as it came.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

#: The classes, in the order ``classify`` tries them.
CAPACITY = "capacity"
QUOTA = "quota"
PREEMPTION = "preemption"
IMAGE = "image"
MODEL_UPLOAD = "model_upload"
PERMISSION = "permission"
USER_CODE = "user_code"
INFRASTRUCTURE = "infrastructure"
UNKNOWN = "unknown"
CLASSES = (
    CAPACITY,
    QUOTA,
    PREEMPTION,
    MODEL_UPLOAD,
    IMAGE,
    PERMISSION,
    USER_CODE,
    INFRASTRUCTURE,
    UNKNOWN,
)
#: The classes a job's ``retry.when`` may name: failures that are not the job's own, so
#: that submitting the same job again (elsewhere, or under another strategy) may succeed.
#: Quota is per region: another region may have it. Never user_code, image or permission
#: (the same job fails the same way again), nor unknown.
RETRYABLE = (CAPACITY, QUOTA, PREEMPTION, INFRASTRUCTURE)

#: The replica whose log a failed upload shows: the primary, which runs the trainer that
#: writes the model (custom_job.proto: worker pool 0).
PRIMARY_REPLICA = "workerpool0-0"

#: google/rpc/code.proto codes the classifier reads.
CODE_INVALID_ARGUMENT = 3
CODE_PERMISSION_DENIED = 7
CODE_RESOURCE_EXHAUSTED = 8
CODE_INTERNAL = 13
CODE_UNAVAILABLE = 14

#: What to do about each class.
FIXES: Mapping[str, str] = {
    CAPACITY: (
        "the region had no machines of this shape for now: run `pulumi up` again later "
        "(bump `rerun`), pick another region or machine, or use scheduling.strategy: "
        "FLEX_START, which waits for capacity"
    ),
    QUOTA: (
        "the project's custom-training quota in this region is too small for the job: "
        "request more at https://console.cloud.google.com/iam-admin/quotas (service "
        "aiplatform.googleapis.com) or make the job smaller"
    ),
    PREEMPTION: (
        "the Spot VMs were reclaimed: run it again (bump `rerun`), or use "
        "scheduling.strategy: STANDARD for a job that must not be interrupted"
    ),
    IMAGE: (
        "Vertex AI could not pull the container image: check that it exists and that the "
        "Vertex AI service agent may read its repository"
    ),
    MODEL_UPLOAD: (
        "the job ran, but its model was not registered: save the trained model under the "
        "directory AIP_MODEL_DIR names (a tuning job: every trial), and check that "
        "model.serving names an image Vertex AI can pull; the job's outputs are kept in its "
        "output directory"
    ),
    PERMISSION: (
        "the job cannot act as its service account or reach a resource: grant the caller "
        "roles/iam.serviceAccountUser on the job's service account, and that account the "
        "roles the job needs"
    ),
    USER_CODE: (
        "the training program failed: read the replica's last log lines, fix the code or "
        "its arguments, and bump `rerun`"
    ),
    INFRASTRUCTURE: (
        "Vertex AI failed, not the job: run it again (bump `rerun`); if it persists, "
        "report it to Google Cloud support with the job's resource name"
    ),
    UNKNOWN: "read the job's logs; the error did not say which part failed",
}

_CAPACITY = re.compile(
    r"resources are insufficient|ZONE_RESOURCE_POOL_EXHAUSTED|stockout|"
    r"not have enough resources available|max(?:imum)?[ _]wait[ _]duration",
    re.IGNORECASE,
)
_QUOTA = re.compile(r"quota (?:metrics )?exceed|exceeds? quota|quota limit", re.IGNORECASE)
_QUOTA_METRIC = re.compile(r"(?:aiplatform\.googleapis\.com/)?(custom_model_training_[a-z0-9_]+)")
_PREEMPTION = re.compile(r"preempt", re.IGNORECASE)
_IMAGE = re.compile(
    r"unable to pull|failed to pull|pull access denied|manifest unknown|"
    r"image .*(?:not found|does not exist)|ErrImagePull|ImagePullBackOff",
    re.IGNORECASE,
)
_MODEL_UPLOAD = re.compile(r"model upload|upload(?:ing)? the model|AIP_MODEL_DIR", re.IGNORECASE)
_PERMISSION = re.compile(
    r"actAs|does not have permission|permission denied|not authorized|"
    r"PERMISSION_DENIED|serviceAccountUser",
    re.IGNORECASE,
)
#: "The replica workerpool0-0 exited with a non-zero status of 1", Vertex AI's and the
#: local backend's; "The replica master 0 exited ..." in AI Platform's words.
_USER_CODE = re.compile(
    r"replica (?P<replica>workerpool\d+-\d+|\w+ \d+) exited with a non-zero status", re.IGNORECASE
)
_KILLED = re.compile(r"replica (?P<replica>workerpool\d+-\d+) was killed by signal", re.IGNORECASE)
_INFRASTRUCTURE = re.compile(r"internal error|backend error|unavailable", re.IGNORECASE)
_QUOTA_NAMED = re.compile(_QUOTA.pattern + r"|custom_model_training_\w+", re.IGNORECASE)

#: Rules on the message (and a code that decides alone), in order: a stockout message can
#: carry RESOURCE_EXHAUSTED like a quota error, so capacity is tried first.
_RULES: tuple[tuple[str, re.Pattern[str], int | None], ...] = (
    (CAPACITY, _CAPACITY, None),
    (QUOTA, _QUOTA_NAMED, None),
    (PREEMPTION, _PREEMPTION, None),
    (MODEL_UPLOAD, _MODEL_UPLOAD, None),
    (IMAGE, _IMAGE, None),
    (PERMISSION, _PERMISSION, CODE_PERMISSION_DENIED),
)


@dataclass(frozen=True)
class JobFailure:
    """A failed job's error, classified, as its `failure` gives it (docs/operations.md lists
    the classes and their fixes)."""

    class_: str = field(
        metadata={
            "description": "What failed it: `capacity`, `quota`, `preemption`, `model_upload`, "
            "`image`, `permission`, `user_code`, `infrastructure` or `unknown`."
        }
    )
    code: int = field(
        metadata={"description": "The error's google.rpc code (0 when none was given)."}
    )
    message: str = field(metadata={"description": "The first line of the error message."})
    fix: str = field(metadata={"description": "What to do about it."})
    replica: str = field(
        metadata={
            "description": "The replica whose exit failed the job (`workerpool0-0`), or empty."
        }
    )


@dataclass(frozen=True)
class Failure:
    """A failed job's error, classified."""

    #: One of CLASSES.
    kind: str
    #: The google.rpc.Status code (0 when none was given).
    code: int
    #: The error message as the service gave it.
    message: str
    #: What to do (FIXES[kind]).
    fix: str
    #: The replica whose exit failed the job ("workerpool0-0"), or "".
    replica: str = ""
    #: The quota metrics a quota error named.
    quotas: tuple[str, ...] = ()

    @property
    def summary(self) -> str:
        """The message's first line: the local backend appends the log to it."""
        return self.message.split("\n", 1)[0]

    def output(self) -> JobFailure:
        """The failure as a job's ``failure`` output."""
        return JobFailure(self.kind, self.code, self.summary, self.fix, self.replica)

    def to_output(self) -> dict[str, object]:
        """The failure as a resource output, in the state's naming (plain data)."""
        output = self.output()
        return {f.name.removesuffix("_"): getattr(output, f.name) for f in fields(output)}


def classify(code: int, message: str) -> Failure:
    """The class of a job's error: its google.rpc.Status ``code`` and ``message``. Only
    the message's first line is read: what follows is the replica's own output (Vertex
    AI appends a traceback to a non-zero exit, the local backend its log), which may say
    anything."""
    kind, replica, quotas = _kind(code, message.split("\n", 1)[0])
    return Failure(
        kind=kind, code=code, message=message, fix=FIXES[kind], replica=replica, quotas=quotas
    )


def _kind(code: int, message: str) -> tuple[str, str, tuple[str, ...]]:
    """(class, replica, quota metrics) of an error; the first rule that matches wins."""
    for kind, pattern, rule_code in _RULES:
        if pattern.search(message) or code == rule_code:
            quotas = tuple(dict.fromkeys(_QUOTA_METRIC.findall(message))) if kind == QUOTA else ()
            # What the trainer printed says why it saved no model: its primary's log.
            return kind, PRIMARY_REPLICA if kind == MODEL_UPLOAD else "", quotas
    for kind, pattern in ((USER_CODE, _USER_CODE), (INFRASTRUCTURE, _KILLED)):
        found = pattern.search(message)
        if found:
            return kind, _replica(found.group("replica")), ()
    if code in (CODE_INTERNAL, CODE_UNAVAILABLE) or _INFRASTRUCTURE.search(message):
        return INFRASTRUCTURE, "", ()
    # RESOURCE_EXHAUSTED naming no quota: the resources, not the project's share, ran out.
    return (CAPACITY if code == CODE_RESOURCE_EXHAUSTED else UNKNOWN), "", ()


def _replica(text: str) -> str:
    """A replica as its log names it: "workerpool0-0" as is; AI Platform's "master 0" as
    "master-replica-0" (its logs' task_name)."""
    if text.startswith("workerpool"):
        return text
    role, _, index = text.partition(" ")
    return f"{role}-replica-{index}"
