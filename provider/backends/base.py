"""What every backend offers the dynamic providers.

A backend takes a job as the Vertex AI REST request body (a ``CustomJob`` in JSON form,
camelCase field names, exactly what ``python -m provider render`` prints) and answers
with ``JobStatus`` records. The providers never see a Google client or a process.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class JobStatus:
    """What a backend knows of one job."""

    #: Vertex resource name (projects/P/locations/L/customJobs/ID) or the local job's name.
    name: str
    #: One of provider.states (QUEUED ... PARTIALLY_SUCCEEDED).
    state: str
    display_name: str = ""
    #: The job's error message when it failed or was cancelled, else "".
    error: str = ""
    #: RFC 3339 timestamps, "" when not reached yet.
    create_time: str = ""
    start_time: str = ""
    end_time: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    #: Interactive shell URIs by worker pool replica ("workerpool0-0": "https://...").
    web_access_uris: dict[str, str] = field(default_factory=dict)

    @property
    def job_id(self) -> str:
        """The last segment of the resource name."""
        return self.name.rsplit("/", 1)[-1]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class Backend(Protocol):
    """Submit, look up, cancel and delete custom jobs."""

    def submit(self, body: dict[str, Any]) -> JobStatus:
        """Submit a CustomJob request body; return the job as the server created it."""

    def get(self, name: str) -> JobStatus | None:
        """Return the job, or None when it does not exist (deleted outside Pulumi)."""

    def find_by_label(self, key: str, value: str) -> list[JobStatus]:
        """Return the jobs whose label ``key`` equals ``value``, newest first."""

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
