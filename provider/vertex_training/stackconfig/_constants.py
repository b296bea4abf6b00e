"""The stack config's keys, the values some of them take, and the API's limits and formats."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal

from vertex_training.backend_kinds import BACKENDS, DEFAULT_BACKEND, LOCAL
from vertex_training.backend_kinds import BackendName as Backend
from vertex_training.keys import (
    API_ENDPOINT_KEY,
    BACKEND_KEY,
    CONFIG_NAMESPACE,
    GCP_PROJECT_KEY,
    GCP_REGION_KEY,
    JOBS_KEY,
    PLATFORM_KEY,
    POLICIES_KEY,
    STACK_CONFIG_KEYS,
)

__all__ = [
    "API_ENDPOINT_KEY",
    "BACKENDS",
    "BACKEND_KEY",
    "CONFIG_NAMESPACE",
    "DEFAULT_BACKEND",
    "GCP_PROJECT_KEY",
    "GCP_REGION_KEY",
    "JOBS_KEY",
    "PLATFORM_KEY",
    "POLICIES_KEY",
    "STACK_CONFIG_KEYS",
    "Backend",
]

#: The job key that makes a job a hyperparameter tuning job (vertex_training.stackconfig.study).
STUDY_KEY = "study"
#: A study's choices: a metric's ``goal``, a parameter's ``type`` and ``scale``, the
#: study's ``algorithm`` and ``measurement_selection`` (``vertex_training.stackconfig.study``).
Goal = Literal["MAXIMIZE", "MINIMIZE"]
ParameterType = Literal["double", "integer", "categorical", "discrete"]
Scale = Literal["linear", "log", "reverse_log"]
Algorithm = Literal["default", "grid", "random"]
MeasurementSelection = Literal["best", "last"]

WaitUntil = Literal["submitted", "running", "succeeded"]
Strategy = Literal["STANDARD", "SPOT", "FLEX_START"]
#: What a job's ``wait`` may ask for: the first (its default) is no wait at all; the
#: others are waited for (by a JobWaiter: ``vertex_training.resources.waiter``).
NOT_WAITED: WaitUntil = "submitted"
WAITED: tuple[WaitUntil, ...] = ("running", "succeeded")
WAIT_UNTIL: tuple[WaitUntil, ...] = (NOT_WAITED, *WAITED)
STRATEGIES: tuple[Strategy, ...] = ("STANDARD", "SPOT", "FLEX_START")
FLEX_START = "FLEX_START"

SECONDS_PER_MINUTE = 60
SECONDS_PER_HOUR = 3600
SECONDS_PER_DAY = 86_400
DEFAULT_WAIT_TIMEOUT_S = 24 * SECONDS_PER_HOUR

#: ``retry.attempts``: submissions of a job in all, its first included. The most a job may
#: ask for: each attempt may be billed in full (the cost estimate counts them all).
MAX_RETRY_ATTEMPTS = 5
DEFAULT_RETRY_ATTEMPTS = 2

#: What render prints for a Pulumi secret (``{secure: ...}``) in an env value.
SECRET_PLACEHOLDER = "[secret]"
MAX_DISPLAY_NAME_CHARS = 128
MAX_ENV_VARS = 100
MAX_PACKAGE_URIS = 100
MAX_JOB_NAME_CHARS = 63
#: Region (and project) recorded for local-backend jobs whose stack names none.
LOCAL_DEFAULT_REGION = "us-central1"
LOCAL_DEFAULT_PROJECT = LOCAL.default_project
GCS_PREFIX = "gs://"

#: Worker pool roles by position in ``workerPoolSpecs``.
Role = Literal["primary", "workers", "parameter_servers", "reduction_server", "evaluators"]
POOL_POSITIONS: Mapping[str, int] = {
    "primary": 0,
    "workers": 1,
    "parameter_servers": 2,
    "reduction_server": 2,
    "evaluators": 3,
}

_JOB_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_DURATION_RE = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?")
_ENV_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PYTHON_MODULE_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_TOPOLOGY_RE = re.compile(r"\d+x\d+(x\d+)?")
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_NETWORK_RE = re.compile(r"projects/[^/\s]+/global/networks/[^/\s]+")
_TENSORBOARD_RE = re.compile(r"projects/[^/\s]+/locations/[^/\s]+/tensorboards/[^/\s]+")
_KMS_KEY_RE = re.compile(
    r"projects/[^/\s]+/locations/(?P<location>[^/\s]+)/keyRings/[^/\s]+/cryptoKeys/[^/\s]+"
)
_CONTEXT_RE = re.compile(
    r"projects/[^/\s]+/locations/[^/\s]+/metadataStores/[^/\s]+/contexts/[^/\s]+"
)
#: Job resource names: ``projects/P/locations/L/<collection>/ID``.
_JOB_RESOURCE_RE = re.compile(
    r"projects/(?P<project>[^/\s]+)/locations/(?P<location>[^/\s]+)/(?P<collection>\w+)/(?P<id>\d+)"
)
#: The resource collection of each kind of job, as in its resource name.
CUSTOM_JOBS = "customJobs"
TUNING_JOBS = "hyperparameterTuningJobs"
#: Compute Engine resource names (RFC 1035 labels): reservations, network attachments.
_RESOURCE_NAME_RE = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
#: A reservation's full name (reservation_affinity.proto's resource pattern).
#: The API reference (CustomJobSpec, ReservationAffinity.values) also takes a reservation
#: block or sub-block of one.
_RESERVATION_RE = re.compile(
    r"projects/(?P<project>[^/\s]+)/zones/(?P<zone>[a-z0-9-]+)/reservations/[^/\s]+"
    r"(/reservationBlocks/[^/\s]+(/reservationSubBlocks/[^/\s]+)?)?"
)
#: A network attachment's full name (service_networking.proto's resource pattern).
_NETWORK_ATTACHMENT_RE = re.compile(
    r"projects/[^/\s]+/regions/(?P<region>[a-z0-9-]+)/networkAttachments/[^/\s]+"
)
#: A Model's resource name, with an optional version ID or alias (custom_job.proto, models).
_MODEL_RE = re.compile(r"projects/[^/\s]+/locations/[^/\s]+/models/[^/@\s]+(@[A-Za-z0-9_-]+)?")
#: PersistentResource IDs (persistent_resource_service.proto).
_PERSISTENT_RESOURCE_ID_RE = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
