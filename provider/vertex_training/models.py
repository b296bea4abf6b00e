"""A stack's registered models: ``vertex-training models``.

A job with ``model:`` runs as a training pipeline that registers its trained model, version
1 and then a version per retrain (``vertex_training.api.pipelines``). This command reads a
stack's state (``pulumi stack export``, or a state file), finds the model each job
registered (its ``model`` output, or what the stack's waiter last saw), and lists every
version of each model as the registry holds it now: the local registry for a local stack,
Vertex AI's Model Registry otherwise. The version each job's resource now tracks is marked.
A destroy or replace never deletes a model, so a model whose jobs are gone is still listed
while the state names it; once no state does, look it up in the registry itself.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertex_training.backends.base import Backend, RegisteredModel, location_of
from vertex_training.errors import BackendError
from vertex_training.urns import Urn

#: Exit statuses: a usage or state mistake, a registry that could not be read.
EXIT_USAGE, EXIT_NOT_DONE = 2, 3


@dataclass(frozen=True)
class StackModel:
    """A model a stack's job registered, and the version its resource tracks."""

    job: str
    name: str
    version_id: str


def stack_models(deployment: Mapping[str, Any]) -> list[StackModel]:
    """The models the jobs of a deployment registered, by job: a job resource's ``model``
    output, or (for a job whose resource recorded none yet) what a waiter saw."""
    found: dict[str, StackModel] = {}
    waited: dict[str, Any] = {}
    for resource in deployment.get("resources") or []:
        outputs = resource.get("outputs") or {}
        urn = Urn.parse(str(resource.get("urn", "")))
        if urn is None:
            continue
        if isinstance(outputs.get("models"), Mapping):  # a waiter's
            waited.update(outputs["models"])
        model = outputs.get("model")
        if isinstance(model, Mapping) and _name(model):
            found[urn.name] = StackModel(urn.name, _name(model), _version(model))
    for job, model in waited.items():
        if isinstance(model, Mapping) and _name(model) and job not in found:
            found[job] = StackModel(job, _name(model), _version(model))
    return [found[job] for job in sorted(found)]


def _name(model: Mapping[str, Any]) -> str:
    return str(model.get("resource_name") or model.get("resourceName") or "")


def _version(model: Mapping[str, Any]) -> str:
    return str(model.get("version_id") or model.get("versionId") or "")


def versions_of(
    models: list[StackModel], connect: Any
) -> Iterator[tuple[str, list[StackModel], list[RegisteredModel]]]:
    """Each model of ``models`` once, with the jobs that registered it and its versions
    (``connect(location)`` gives the backend of a model's location)."""
    by_name: dict[str, list[StackModel]] = {}
    for model in models:
        by_name.setdefault(model.name, []).append(model)
    for name, jobs in by_name.items():
        backend: Backend = connect(location_of(name))
        yield name, jobs, backend.model_versions(name)


def to_text(listed: list[tuple[str, list[StackModel], list[RegisteredModel]]]) -> str:
    """The listing as lines: a model, then a line per version."""
    if not listed:
        return "no job of this stack has registered a model (a job registers one with model:)\n"
    lines = []
    for name, jobs, versions in listed:
        lines.append(f"{name} (registered by {', '.join(j.job for j in jobs)})")
        tracked = {j.version_id: j.job for j in jobs}
        if not versions:
            lines.append("  no version found: the model was deleted outside Pulumi")
        for version in versions:
            aliases = f" ({', '.join(version.aliases)})" if version.aliases else ""
            held = f"  <- {tracked[version.version_id]}" if version.version_id in tracked else ""
            lines.append(f"  version {version.version_id}{aliases}: {version.artifact_uri}{held}")
    return "\n".join(lines) + "\n"


def to_json(listed: list[tuple[str, list[StackModel], list[RegisteredModel]]]) -> list[Any]:
    """The listing as JSON data: each model with its jobs and versions."""
    return [
        {
            "resource_name": name,
            "jobs": {job.job: job.version_id for job in jobs},
            "versions": [version.to_output() for version in versions],
        }
        for name, jobs, versions in listed
    ]


def add_parser(subparsers: Any) -> None:
    """``models``."""
    parser = subparsers.add_parser(
        "models",
        help="list the models a stack's jobs registered, and their versions",
        description=(
            "List each model the jobs of a stack registered (model:) with every version "
            "the registry holds now (the local registry for a local stack, Vertex AI's "
            "Model Registry otherwise), marking the version each job tracks."
        ),
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--stack", help="the stack, read with `pulumi stack export` here")
    where.add_argument(
        "--state", metavar="FILE", help="`pulumi stack export` output or a stack file"
    )
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--endpoint",
        metavar="HOST:PORT",
        help="the Vertex AI endpoint (default: the region's; loopback: a fake, in plaintext)",
    )
    parser.set_defaults(handler=_cmd_models)


def _cmd_models(args: argparse.Namespace) -> int:
    from vertex_training import orphans
    from vertex_training.backends import connect
    from vertex_training.packaging import enclosing_project
    from vertex_training.resources.state import LOCAL_ROOT

    try:
        deployment = (
            orphans.export_stack(args.stack, Path.cwd())
            if args.stack
            else orphans.read_state_file(Path(args.state))
        )
    except orphans.StateError as exc:
        print(f"vertex-training models: {exc}", file=sys.stderr)
        return EXIT_USAGE
    project_dir = enclosing_project(Path.cwd())
    connection = {
        "local_root": str(project_dir / LOCAL_ROOT),
        "base_dir": str(project_dir),
        "api_endpoint": args.endpoint,
    }
    try:
        listed = list(
            versions_of(stack_models(deployment), lambda place: connect(place, connection))
        )
    except BackendError as exc:
        print(f"vertex-training models: reading the registry failed: {exc}", file=sys.stderr)
        return EXIT_NOT_DONE
    if args.format == "json":
        json.dump(to_json(listed), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(to_text(listed))
    return 0
