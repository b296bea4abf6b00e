"""What a job's outputs derive from the job it runs as, for either host: its ID, pages,
output and model directories (``job_outputs``).

A job with ``retry`` runs as its last attempt (the waiter may have submitted it after
the job's resource recorded one), any other job as its resource name. A Python program's
``jobs`` stack output (``vertex_training.program.exports.job_view``) and the plugin's
job outputs both derive them here, from what the resource recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from vertex_training.backends import job_places
from vertex_training.backends.base import job_id_of
from vertex_training.resources.state import model_directory_of
from vertex_training.resources.tuning_job import best_model_directory

#: A job's outputs that name the job it runs as: for a job with ``retry``, its last
#: attempt's.
ATTEMPT_KEYS = ("resource_name", "job_id", "console_url", "logs_url")
#: What a job's console and logs pages are.
_PAGES = "The job's page in the Google Cloud console and its logs (a local job's files)."


@dataclass(frozen=True)
class JobPages:
    """The outputs a job's derive from the job it runs as (``job_outputs``'s, but its
    output directory, which ``records.JobObserved`` describes), each described for the
    plugin's schema (``plugin.shapes``)."""

    job_id: str = field(
        metadata={
            "description": "The job's ID: the last segment of its resource name (the "
            "resource's ID)."
        }
    )
    console_url: str = field(metadata={"description": _PAGES})
    logs_url: str = field(metadata={"description": _PAGES})
    model_directory: str = field(
        metadata={"description": "Where the job is told to save its model (`AIP_MODEL_DIR`)."}
    )

    @classmethod
    def of(cls, outputs: Mapping[str, str]) -> JobPages:
        """The pages among a job's derived outputs (``job_outputs``')."""
        return cls(**{f.name: outputs[f.name] for f in fields(cls)})


def last_attempts(attempts: Sequence[Mapping[str, Any]], key: str) -> str:
    """``key`` of the last of ``attempts``; "" when there are none (or it lacks it)."""
    return str(attempts[-1].get(key) or "") if attempts else ""


def job_outputs(
    attempts: Sequence[Mapping[str, Any]],
    resource_name: str,
    local_root: str,
    named_output: str = "",
    best_trial: Mapping[str, Any] | None = None,
    *,
    tuning: bool = False,
) -> dict[str, str]:
    """The outputs named by the job a resource runs as (``ATTEMPT_KEYS``, its last
    ``attempts``' or else its ``resource_name``'s), and its output directory (what its
    request names, ``named_output``, or where a local job writes under ``local_root``)
    and model directory (a tuning job's: its best trial's, once it has one)."""
    resource_name = last_attempts(attempts, "resource_name") or resource_name
    places = job_places(resource_name, local_root, named_output)
    output_directory = places["output_directory"]
    derived = {**places, "resource_name": resource_name, "job_id": job_id_of(resource_name)}
    model_directory = (
        best_model_directory(output_directory, best_trial)
        if tuning
        else model_directory_of(output_directory)
    )
    return {
        **{key: last_attempts(attempts, key) or derived.get(key) or "" for key in ATTEMPT_KEYS},
        "output_directory": output_directory,
        "model_directory": model_directory,
    }
