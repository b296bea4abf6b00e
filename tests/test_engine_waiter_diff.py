"""A JobWaiter's diff on the real engine: a Pulumi YAML program of two jobs that wait for
success, one with a secret in its env, and a JobWaiter of both, against the fake
JobService. After `pulumi up`, changing one job's args makes `pulumi preview --diff` show
under the waiter only that job's changed key, not the other job's whole entry, and the
job whose env holds the secret is still named while the secret is never shown (issue 44).

The plugin runs under the tests' own Python; the YAML language host is the one
`make all-tools` builds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.test_engine_plugin import IMAGE, YamlProgram, missing
from vertex_training.testing.fake_vertex import FakeVertex

# A YAML program: CI runs it under the first Python only.
pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

SECRET = "hunter2-waiter-diff-token"


def job(args: list[str], env: dict[str, Any] | None = None) -> dict[str, Any]:
    keys: dict[str, Any] = {
        "image": IMAGE,
        "machine": "e2-standard-4",
        "args": args,
        "wait": "succeeded",
    }
    if env:
        keys["env"] = env
    return {"type": "vertex-training:TrainingJob", "properties": {"job": keys}}


@pytest.fixture
def program(tmp_path: Path) -> Iterator[YamlProgram]:
    if reason := missing():
        pytest.skip(reason)
    with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as fake:
        yield YamlProgram(tmp_path, fake)


def waiter_part(output: str) -> str:
    """What `pulumi preview --diff` prints under the JobWaiter."""
    start = output.index("vertex-training:index:JobWaiter: (update)")
    return output[start : output.index("Resources:", start)]


def job_part(output: str, name: str) -> list[str]:
    """The lines `pulumi preview --diff` prints for the job ``name`` (stripped; its ID as
    ``ID``)."""
    lines = [line.strip() for line in output.splitlines()]
    urn = next(i for i, line in enumerate(lines) if line.endswith(f"TrainingJob::{name}]"))
    header = re.compile(r"^(\+-|~|\+|-|Resources:)\s*([\w:-]+: \(|$)")
    end = next(i for i in range(urn + 1, len(lines)) if header.match(lines[i]))
    part = lines[urn - 2 : end]
    return [re.sub(r"^\[id=.*\]$", "[id=ID]", line) for line in part]


class TestWaiterDiff:
    def test_a_preview_names_only_the_changed_job_and_shows_no_secret(
        self, program: YamlProgram
    ) -> None:
        """One job's new args show under the waiter as that job's entry alone (replaced,
        so its new entry is unknown); the other job's entry is not printed, and the
        secret in the other's env never is, in the output or the state."""
        program.resources["plain"] = job(["--epochs", "3"])
        program.resources["guarded"] = job(["--epochs", "3"], {"TOKEN": {"fn::secret": SECRET}})
        program.resources["wait-for-jobs"] = {
            "type": "vertex-training:JobWaiter",
            "properties": {"jobs": ["${plain.waiterEntry}", "${guarded.waiterEntry}"]},
        }
        program.write()
        up = program.run("up", "--yes", "--skip-preview").check()
        assert SECRET not in up.output
        assert SECRET not in program.run("stack", "export").check().stdout

        program.resources["plain"] = job(["--epochs", "5"])
        program.write()
        preview = program.run("preview", "--diff").check()
        waiter = waiter_part(preview.output)
        assert '- name        : "plain"' in waiter and "+ [0]: [unknown]" in waiter
        assert "  [1]: {" not in waiter and "guarded" not in waiter
        assert SECRET not in preview.output

    def test_an_update_in_place_shows_the_changed_keys_and_a_reorder_nothing(
        self, program: YamlProgram
    ) -> None:
        """A job's new wait shows under the waiter as that entry's ``until`` alone, the
        job named though its env holds a secret (its entry is its wait plan, which holds
        none); listing the same jobs in another order changes nothing."""
        program.resources["plain"] = job(["--epochs", "3"])
        program.resources["guarded"] = job(["--epochs", "3"], {"TOKEN": {"fn::secret": SECRET}})
        entries = ["${plain.waiterEntry}", "${guarded.waiterEntry}"]
        program.resources["wait-for-jobs"] = {
            "type": "vertex-training:JobWaiter",
            "properties": {"jobs": entries},
        }
        program.write()
        program.run("up", "--yes", "--skip-preview").check()

        program.resources["wait-for-jobs"]["properties"]["jobs"] = entries[::-1]
        program.write()
        same = program.run("preview", "--diff", "--expect-no-changes").check()
        assert SECRET not in same.output

        program.resources["wait-for-jobs"]["properties"]["jobs"] = entries
        program.resources["guarded"]["properties"]["job"]["wait"] = "running"
        program.write()
        preview = program.run("preview", "--diff").check()
        waiter = waiter_part(preview.output)
        changed = [line.strip() for line in waiter.splitlines()[3:] if line.strip()]
        assert changed == [
            "~ jobs: [",
            "~ [1]: {",
            '~ until: "succeeded" => "running"',
            "}",
            "]",
        ], waiter
        assert "[secret]" not in preview.output and SECRET not in preview.output
        program.run("up", "--yes", "--skip-preview").check()

        # A label (which replaces) and the wait (which alone updates) changed together.
        program.resources["plain"]["properties"]["job"]["wait"] = "running"
        program.resources["plain"]["properties"]["job"]["labels"] = {"team": "nlp"}
        program.write()
        preview = program.run("preview", "--diff").check()
        block = job_part(preview.output, "plain")
        assert block == [
            "+-vertex-training:index:TrainingJob: (replace)",
            "[id=ID]",
            "[urn=urn:pulumi:test::training::vertex-training:index:TrainingJob::plain]",
            "~ job: {",
            "+ labels: {",
            '+ team: "nlp"',
            "}",
            '~ wait  : "succeeded" => "running"',
            "}",
        ], preview.output
        said = [line for line in preview.output.splitlines() if "submitted again" in line]
        assert [line.split(", estimated")[0].strip() for line in said] == [
            "would be submitted again, replacing the job, because `job.labels` changed "
            "(Vertex AI cannot update a submitted job; `job.wait` alone would update it in "
            "place), waited for (`wait: running`) only by a JobWaiter that lists its "
            "`waiterEntry`"
        ], preview.output
