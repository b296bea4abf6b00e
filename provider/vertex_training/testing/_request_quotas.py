"""Vertex AI's request quotas, enforced when a test asks for them
(``FakeVertex(request_quotas={"submit": 60, "crud": 600}, request_window_s=60.0)``): calls
counted per quota, project and region in windows of ``request_window_s``, and the
RESOURCE_EXHAUSTED a call over quota gets. With none given (the default) nothing is
counted and no call is refused.

The quotas. https://cloud.google.com/vertex-ai/docs/quotas ("Request quotas", per
project and region, per minute): "Resource management (CRUD) requests", 600, and "Job or
long-running operation (LRO) submission requests", 60 (``DOCUMENTED_QUOTAS``; a test's
limits are its own). The page lists no methods: here the Create methods are submissions
(``SUBMIT``) and every other method, GetOperation included, is resource management
(``CRUD``), our reading, as in ``provider/vertex_training/backends/pacing.py``.

What Google does not document, and the fake chooses: windows are fixed, starting at
multiples of ``request_window_s`` on the fake's clock; only admitted calls count, a
refused call neither does anything nor uses quota.

The refusal. gRPC RESOURCE_EXHAUSTED (google/rpc/code.proto: "Some resource has been
exhausted, perhaps a per-user quota"), worded as Google's API front end words a rate
quota: "Quota exceeded for quota metric 'Read requests' and limit 'Read requests per
minute' of service 'datacatalog.googleapis.com' for consumer
'project_number:1111111111111'." (status RESOURCE_EXHAUSTED, as quoted in
GoogleCloudPlatform/datacatalog-connectors-rdbms,
google-datacatalog-vertica-connector/README.md, "Troubleshooting"). The limit names are
those of Vertex AI's quota rows ("Resource management (CRUD) requests per minute per
region", "Job or LRO submission requests per minute per region",
https://cloud.google.com/vertex-ai/docs/tabular-data/tabular-workflows/quotas); the
metric names are the quotas page's rows; the project number is invented (the fake knows
project IDs only).

It depends on ``_faults``.
"""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Mapping
from typing import NamedTuple

import grpc

from vertex_training.testing._faults import RpcError, VertexMessage

SUBMIT = "submit"
CRUD = "crud"
#: The methods that count as job submissions; every other one is resource management.
SUBMIT_METHODS = frozenset(
    {"CreateCustomJob", "CreateHyperparameterTuningJob", "CreateTrainingPipeline"}
)
#: Vertex AI's default limits per minute, per project and region (the quotas page).
DOCUMENTED_QUOTAS: Mapping[str, int] = {SUBMIT: 60, CRUD: 600}
#: The quotas are per minute.
DEFAULT_WINDOW_S = 60.0
#: Each quota's metric and limit as the refusal names them.
_NAMES = {
    SUBMIT: (
        "Job or LRO submission requests",
        "Job or LRO submission requests per minute per region",
    ),
    CRUD: (
        "Resource management (CRUD) requests",
        "Resource management (CRUD) requests per minute per region",
    ),
}
QUOTA_MESSAGE = (
    "Quota exceeded for quota metric '{metric}' and limit '{limit}' of service "
    "'aiplatform.googleapis.com' for consumer 'project_number:{number}'."
)
_LOCATION = re.compile(r"^projects/([^/]+)/locations/([^/]+)")


class QuotaWindow(NamedTuple):
    """One window of one quota: which quota, project and region, when it started (the
    fake's clock), and how many calls it admitted and refused."""

    kind: str
    project: str
    region: str
    start: float
    admitted: int
    refused: int


def quota_of(method: str) -> str:
    """The request quota a call of ``method`` counts against."""
    return SUBMIT if method in SUBMIT_METHODS else CRUD


class RequestQuotas:
    """The calls counted per quota window, and the refusals. Not thread-safe: the fake
    calls it with its lock held."""

    def __init__(self, limits: Mapping[str, int] | None, window_s: float) -> None:
        unknown = sorted(set(limits or {}) - set(_NAMES))
        if unknown:
            raise ValueError(f"unknown request quotas {unknown}; the quotas are {sorted(_NAMES)}")
        if not window_s > 0:
            raise ValueError(f"request_window_s must be positive, got {window_s}")
        self.limits = dict(limits or {})
        self.window_s = window_s
        #: (kind, project, region, window index) -> [admitted, refused].
        self._counts: dict[tuple[str, str, str, int], list[int]] = {}

    def refusal(self, method: str, request: VertexMessage, now: float) -> RpcError | None:
        """Count the call of ``method`` arriving at ``now``: None if its quota admits
        it, else the error it gets."""
        kind = quota_of(method)
        limit = self.limits.get(kind)
        if limit is None:
            return None
        project, region = _location(request)
        counts = self._counts.setdefault(
            (kind, project, region, math.floor(now / self.window_s)), [0, 0]
        )
        if counts[0] < limit:
            counts[0] += 1
            return None
        counts[1] += 1
        metric, limit_name = _NAMES[kind]
        message = QUOTA_MESSAGE.format(metric=metric, limit=limit_name, number=_number(project))
        return RpcError(grpc.StatusCode.RESOURCE_EXHAUSTED, message)

    def windows(self) -> list[QuotaWindow]:
        """Every window in which a call was counted, oldest first."""
        return sorted(
            QuotaWindow(kind, project, region, index * self.window_s, admitted, refused)
            for (kind, project, region, index), (admitted, refused) in self._counts.items()
        )


def _location(request: VertexMessage) -> tuple[str, str]:
    """The project and region a request names (its parent, or its name); ("", "") for a
    malformed one, which the method itself then refuses."""
    for field in ("parent", "name"):
        match = _LOCATION.match(getattr(request, field, "") or "")
        if match:
            return match.group(1), match.group(2)
    return "", ""


def _number(project: str) -> int:
    """An invented, stable project number for ``project`` (12 digits)."""
    return 100_000_000_000 + zlib.crc32(project.encode())
