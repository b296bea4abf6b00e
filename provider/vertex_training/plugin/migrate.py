"""Moving a stack's jobs from the dynamic resources to the plugin's, with no job submitted
again or deleted (``vertex-training migrate STACK``; docs/plugin.md, "Moving a stack to
the plugin").

The jobs stay where they are; only the records that track them change:

1. the stack's state is exported and kept as it was (``<stack>-before-migrate.json``);
2. every dynamic job record (TrainingJob, HyperparameterTuningJob) is marked
   ``retainOnDelete`` and the state imported again: once the program no longer declares
   it, the engine drops the record and leaves its job alone;
3. an import file (``<stack>-import.json``, for ``pulumi import --file``) names each job
   by its resource name under the plugin's type and the same resource name, so that the
   plugin's resources take the jobs over from the server's own record.

The program then declares the jobs as the plugin's resources; ``pulumi import --file``
and ``pulumi up`` finish the move. ``plan`` is the pure part, tested on its own.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vertex_training.errors import VertexTrainingError
from vertex_training.plugin import schema

#: The dynamic resources' types (``pulumi-python:dynamic/<module>:<name>``) -> the plugin's.
DYNAMIC_TYPES = {
    "pulumi-python:dynamic/vertex:TrainingJob": schema.TRAINING_JOB,
    "pulumi-python:dynamic/vertex:HyperparameterTuningJob": schema.TUNING_JOB,
}


class MigrationError(VertexTrainingError):
    """A stack that cannot be moved as it is; the message says why and what to do."""


@dataclass(frozen=True)
class Migration:
    """What moving a stack takes: its state with the dynamic job records retained on
    delete, and the import file of the plugin's resources for the same jobs."""

    deployment: dict[str, Any]
    imports: dict[str, Any]

    @property
    def jobs(self) -> list[dict[str, Any]]:
        resources: list[dict[str, Any]] = self.imports["resources"]
        return resources


def plan(exported: Mapping[str, Any]) -> Migration:
    """The migration of an exported stack (``pulumi stack export``)."""
    edited = json.loads(json.dumps(exported))
    deployment = edited.get("deployment") or {}
    if deployment.get("pending_operations"):
        raise MigrationError(
            "the stack has pending operations (an interrupted `pulumi up`): run "
            "`pulumi refresh --yes --clear-pending-creates` first (docs/operations.md)"
        )
    imports = []
    for resource in deployment.get("resources") or []:
        plugin_type = DYNAMIC_TYPES.get(resource.get("type", ""))
        if plugin_type is None or not resource.get("id"):
            continue
        resource["retainOnDelete"] = True
        name = str(resource["urn"]).rsplit("::", 1)[-1]
        imports.append({"type": plugin_type, "name": name, "id": resource["id"]})
    if not imports:
        raise MigrationError("the stack records no dynamic training or tuning job: nothing to move")
    return Migration(edited, {"resources": imports})


Runner = Callable[[Sequence[str]], str]


def pulumi(args: Sequence[str]) -> str:
    """Run the Pulumi CLI in the working directory; its standard output."""
    done = subprocess.run(["pulumi", *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise MigrationError(f"`pulumi {' '.join(args)}` failed: {done.stderr.strip()}")
    return done.stdout


def migrate(stack: str, out: Path, run: Runner = pulumi) -> Migration:
    """Move ``stack``'s records as the module docstring says; write its files in ``out``."""
    exported = json.loads(run(["stack", "export", "--stack", stack]))
    migration = plan(exported)
    out.mkdir(parents=True, exist_ok=True)
    before = out / f"{stack}-before-migrate.json"
    before.write_text(json.dumps(exported, indent=2))
    retained = out / f"{stack}-retained.json"
    retained.write_text(json.dumps(migration.deployment, indent=2))
    (out / f"{stack}-import.json").write_text(json.dumps(migration.imports, indent=2))
    run(["stack", "import", "--stack", stack, "--file", str(retained)])
    return migration


def next_steps(stack: str, out: Path, migration: Migration) -> str:
    """What the user does next, as the command prints it."""
    names = ", ".join(job["name"] for job in migration.jobs)
    return (
        f"{len(migration.jobs)} job(s) of stack {stack} ({names}) are retained on delete; the "
        f"state before is in {out / f'{stack}-before-migrate.json'}.\n"
        "Next:\n"
        "  1. declare the jobs as the plugin's resources in the program, with the same names "
        "(docs/plugin.md), and remove the dynamic ones;\n"
        f"  2. pulumi import --stack {stack} --file {out / f'{stack}-import.json'} "
        "--protect=false --generate-code=false --yes\n"
        f"  3. pulumi up --stack {stack}: the dynamic records leave the state, their jobs stay"
    )
