"""GCP labels: the rules every label keeps, and the label keys this project sets itself.

Rules (Google Cloud, "Labels" requirements, the same for Vertex AI jobs, buckets,
repositories and TensorBoards): at most 64 labels; a key has 1 to 63 characters, a value
0 to 63; both are lowercase letters (international ones too), digits, ``_`` and ``-``, and
a key starts with a lowercase letter. Keys starting with ``goog`` are Google's.
"""

from __future__ import annotations

import re

MAX_LABELS = 64
MAX_LABEL_CHARS = 63
RESERVED_LABEL_PREFIX = "goog"

#: Label that ties a job to its Pulumi project, stack, resource and request (the job
#: resource's identity label). The provider's label keys use underscores, not hyphens:
#: ListCustomJobs looks them up in a filter (``labels.KEY="VALUE"``), where a key of
#: letters, digits and underscores is a plain field name.
IDENTITY_LABEL = "vertex_training_key"
#: The Pulumi project of the program that submitted the job: jobs submitted by releases
#: up to 0.3.0 do not carry it (``vertex_training.resources.submission``).
PROJECT_LABEL = "pulumi_project"
STACK_LABEL = "pulumi_stack"
RESOURCE_LABEL = "pulumi_resource"
#: The label that carries a job's ``rerun`` value: changing it submits the job again.
RERUN_LABEL = "vertex_training_rerun"
#: The labels every submission carries besides the user's (``resources.submission``).
SUBMISSION_LABEL_KEYS = (IDENTITY_LABEL, PROJECT_LABEL, STACK_LABEL, RESOURCE_LABEL)
#: Labels other infrastructure tools put on what they create: pulumi-gcp 8 and later
#: (unless its ``addPulumiAttributionLabel`` is false) and the Terraform Google provider
#: (``add_terraform_attribution_label``). An import of a job they submitted reads past
#: them: they say which tool made the job, not how it runs.
ATTRIBUTION_LABEL_KEYS = ("goog-pulumi-provisioned", "goog-terraform-provisioned")
#: Label keys the provider sets on jobs; users may not set them.
PROVIDER_LABEL_KEYS = (*SUBMISSION_LABEL_KEYS, RERUN_LABEL)
#: How many labels a job's config may give: the rest of MAX_LABELS are the submission's.
MAX_USER_LABELS = MAX_LABELS - len(SUBMISSION_LABEL_KEYS)

_FOLDED = re.compile(r"[^a-z0-9_-]")


def _label_text_ok(text: str) -> bool:
    return all((c.isalpha() and c.islower()) or c.isdigit() or c in "_-" for c in text)


def label_key_ok(key: object) -> bool:
    """Whether ``key`` is a valid label key."""
    return (
        isinstance(key, str)
        and 1 <= len(key) <= MAX_LABEL_CHARS
        and key[:1].isalpha()
        and key[:1].islower()
        and _label_text_ok(key)
    )


def label_value_ok(value: object) -> bool:
    """Whether ``value`` is a valid label value."""
    return isinstance(value, str) and len(value) <= MAX_LABEL_CHARS and _label_text_ok(value)


def label_value(text: str) -> str:
    """``text`` folded into a valid label value: lowercase ASCII letters, digits, ``_`` and
    ``-`` (every other character becomes ``-``), at most MAX_LABEL_CHARS."""
    return _FOLDED.sub("-", text.lower())[:MAX_LABEL_CHARS]
