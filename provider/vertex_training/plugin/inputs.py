"""A job resource's inputs, in the schema's naming, as the dynamic providers' ``job`` input.

The plugin's check, diff and operations hand every job to the dynamic providers through
``job_input``; a review of any program's preview (``vertex_training.preview``) and the
policy pack read a plugin job's inputs through the same function, so the three read one
job the same way. Light: no provider server, no Google client.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertex_training.errors import BackendError
from vertex_training.plugin import schema, shapes
from vertex_training.resources.arguments import ImageRowArgs, TrainingJobArgs
from vertex_training.resources.job_arguments import PROGRAM, UNKNOWN_TEXT
from vertex_training.resources.state import whole_numbers
from vertex_training.resources.submission import PROJECT_SETTING
from vertex_training.urns import Urn

#: The job's settings among a job resource's inputs: property -> stack setting.
SETTINGS = {name: shapes.snake(name) for name in schema.JOB_SETTINGS}


def resource_urn(urn: str) -> Urn:
    """The URN the engine gave a call, read (``BackendError`` for one that is none)."""
    parsed = Urn.parse(urn)
    if parsed is None:
        raise BackendError(f"{urn!r} is no Pulumi resource URN")
    return parsed


def owner_of(urn: str) -> dict[str, str]:
    """Whom the resource of a URN belongs to, as stack settings
    (``vertex_training.resources.submission.Owner``): its stack and Pulumi project. The
    engine tells a provider's custom resources no organization."""
    parsed = resource_urn(urn)
    return {"stack": parsed.stack, PROJECT_SETTING: parsed.project}


def job_input(name: str, owner: Mapping[str, str], inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A job resource's checked inputs (plain, in the schema's naming) as the dynamic
    providers' ``job`` input: its name, its keys and its stack settings (its ``owner``'s,
    ``owner_of``, then the platform's, then the arguments', as
    ``TrainingJob(platform=..., project=...)`` takes them)."""
    stack_settings: dict[str, Any] = {**owner, "config_from": PROGRAM}
    platform = inputs.get("platform")
    if isinstance(platform, Mapping):
        stack_settings.update({SETTINGS[k]: v for k, v in platform.items() if k in SETTINGS and v})
    for prop, key in SETTINGS.items():
        if inputs.get(prop):
            stack_settings[key] = inputs[prop]
    if inputs.get("images"):
        rows = inputs["images"]
        stack_settings["images"] = (
            rows if rows == UNKNOWN_TEXT else [shapes.to_config(row, ImageRowArgs) for row in rows]
        )
    job = inputs.get("job")
    config = (
        job if job == UNKNOWN_TEXT else whole_numbers(shapes.to_config(job or {}, TrainingJobArgs))
    )
    return {"name": name, "config": config, "stack": stack_settings}
