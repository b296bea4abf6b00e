"""gcloud ``--config`` files and flags (for ``vertex-training convert``): the Job
document's keys, the flags that filled a ``trainingInput`` block, and reading both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from vertex_training.errors import Issue
from vertex_training.stackconfig.legacy._tables import TRAINING_INPUT_KEYS
from vertex_training.stackconfig.legacy._translation import _did_you_mean, _one_of

#: Top-level keys of a gcloud ``--config`` file (a Job resource) that convert reads.
JOB_DOCUMENT_KEYS: Final = ("jobId", "labels", "trainingInput")
#: Output-only Job fields (as in ``gcloud ai-platform jobs describe``): ignored, with a warning.
OUTPUT_ONLY_JOB_KEYS: Final = (
    "createTime",
    "startTime",
    "endTime",
    "state",
    "errorMessage",
    "trainingOutput",
    "etag",
    "jobPosition",
)
#: gcloud ``ai-platform jobs submit training`` flags that fill (and override) trainingInput
#: keys, as gcloud applies them over the --config file.
GCLOUD_FLAG_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "region": ("region",),
        "job_dir": ("jobDir",),
        "runtime_version": ("runtimeVersion",),
        "python_version": ("pythonVersion",),
        "module_name": ("pythonModule",),
        "packages": ("packageUris",),
        "master_image_uri": ("masterConfig", "imageUri"),
        "scale_tier": ("scaleTier",),
        "master_machine_type": ("masterType",),
        "args": ("args",),
    }
)


@dataclass(frozen=True)
class LegacyDocument:
    """What a gcloud config file holds: the trainingInput block, job ID and labels."""

    training_input: dict[str, Any]
    job_id: Any = None
    labels: Any = None
    issues: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()


def read_legacy_document(
    document: Any, *, source: str, flags: Mapping[str, Any] | None = None
) -> LegacyDocument:
    """The legacy job in a gcloud ``--config`` file: ``{trainingInput: ...}`` or a bare block.

    ``flags`` are gcloud flag values by ``GCLOUD_FLAG_KEYS`` name (None: not given); like
    gcloud, they override the file.
    """
    issues: list[Issue] = []
    warnings: list[Issue] = []
    if not isinstance(document, Mapping):
        issue = Issue(
            source, document, "must be a gcloud config file: a mapping with trainingInput"
        )
        return LegacyDocument({}, issues=(issue,))
    if "trainingInput" in document:
        training_input = document["trainingInput"]
        for name, value in document.items():
            if name in OUTPUT_ONLY_JOB_KEYS:
                warnings.append(
                    Issue(str(name), value, "an output-only field of a described job: not used")
                )
            elif name not in JOB_DOCUMENT_KEYS:
                hint = _did_you_mean(str(name), JOB_DOCUMENT_KEYS)
                message = f"not a key of a training job config.{hint} The keys here are " + _one_of(
                    JOB_DOCUMENT_KEYS
                )
                issues.append(Issue(str(name), value, message))
        job_id, labels = document.get("jobId"), document.get("labels")
    elif any(name in TRAINING_INPUT_KEYS for name in document):
        training_input, job_id, labels = document, None, None
    else:
        issue = Issue(
            source,
            sorted(map(str, document)),
            "has no trainingInput: write the file gcloud ai-platform jobs submit training "
            "--config reads (trainingInput: {scaleTier: ..., ...}) or a bare trainingInput block",
        )
        return LegacyDocument({}, issues=(issue,))
    if not isinstance(training_input, Mapping):
        issue = Issue("trainingInput", training_input, "must be a mapping of key: value lines")
        return LegacyDocument({}, issues=(*issues, issue))
    merged = _with_flags(training_input, flags or {})
    return LegacyDocument(merged, job_id, labels, tuple(issues), tuple(warnings))


def _with_flags(training_input: Mapping[str, Any], flags: Mapping[str, Any]) -> dict[str, Any]:
    """``training_input`` with the gcloud flags that were given written over it."""
    merged: dict[str, Any] = {
        name: (dict(value) if isinstance(value, Mapping) else value)
        for name, value in training_input.items()
    }
    for flag, path in GCLOUD_FLAG_KEYS.items():
        value = flags.get(flag)
        if value is None:
            continue
        target = merged
        for part in path[:-1]:
            existing = target.get(part)
            target[part] = dict(existing) if isinstance(existing, Mapping) else {}
            target = target[part]
        target[path[-1]] = value
    return merged
