"""Upgrading a stack from the last release of each earlier state schema: schema 1 (before
the schema was named), schema 2 (a job recorded what its check derived: the request,
location and settings), schema 3 (a job recorded its config's keys one by one), and
0.1.0, the last release before the package was installed as ``vertex_training`` (its
state names the ``provider.resources`` modules).

A stack brought up by that release (its code taken from git, as a user would have had it)
is previewed and updated by this one: nothing is replaced, no job is submitted again,
every job keeps its record and outputs, and a job removed from the config is deleted
through the provider the old state names (``provider.resources.training_job``, or schema
1's ``provider.training_job``: modules the project's ``provider.py`` answers).
"""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine import REPO, VENV, Project, tools_missing, vertex_stack
from vertex_training.resources.state import SCHEMA_VERSION
from vertex_training.testing.fake_vertex import FakeVertex

#: The last release that wrote schema 1 (a connection in every job's state, the provider
#: classes in provider.training_job / provider.waiter).
SCHEMA_1_RELEASE = "0361723"
#: The last release that wrote schema 2.
SCHEMA_2_RELEASE = "365f823"
#: The last release that wrote schema 3.
SCHEMA_3_RELEASE = "e0c255e"
#: The last release before the package was installed as vertex_training (0.1.0, schema 4):
#: its state names the providers' modules ``provider.resources.*``.
PACKAGE_0_1_RELEASE = "3523990"
#: The module each release pickled the job provider from.
PROVIDER_MODULES = {
    SCHEMA_1_RELEASE: b"provider.training_job",
    SCHEMA_2_RELEASE: b"provider.resources.training_job",
    SCHEMA_3_RELEASE: b"provider.resources.training_job",
    PACKAGE_0_1_RELEASE: b"provider.resources.training_job",
}
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing())),
]


def release_tree(ref: str, into: Path) -> Path:
    """The repository's files at ``ref`` (``git archive``), as a checkout of it has them."""
    found = subprocess.run(
        ["git", "cat-file", "-e", f"{ref}^{{commit}}"], cwd=REPO, capture_output=True, check=False
    )
    if found.returncode != 0:
        pytest.fail(f"release {ref} is not in this clone's history (a shallow clone?): fetch it")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=REPO, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def use_release(project: Project, tree: Path) -> None:
    """Point the project at the code of ``tree``: its program and its packages. A release
    before the package was installed had it in the project (``provider/``); today's
    program imports the installed ``vertex_training``, and the project keeps
    ``provider.py``, which answers the old module names its state holds."""
    shutil.copy(tree / "__main__.py", project.root / "__main__.py")
    # The release's Pulumi.yaml (the config keys it declares), in this test's virtualenv.
    project_file = yaml.safe_load((tree / "Pulumi.yaml").read_text())
    runtime = project_file["runtime"]
    if isinstance(runtime, str):
        runtime = project_file["runtime"] = {"name": runtime}
    runtime.setdefault("options", {})["virtualenv"] = str(VENV)
    (project.root / "Pulumi.yaml").write_text(yaml.safe_dump(project_file, sort_keys=False))
    package = "provider.py" if (tree / "provider.py").exists() else "provider"
    for name in ("provider", "provider.py"):
        (project.root / name).unlink(missing_ok=True)
    for name in (package, "trainer", "examples"):
        link = project.root / name
        link.unlink(missing_ok=True)
        link.symlink_to(tree / name)


def job(name: str) -> dict[str, Any]:
    return {"image": IMAGE, "display_name": name, "wait": "succeeded"}


def steps(preview: str) -> dict[str, str]:
    """`pulumi preview --json` -> each job resource's step that it lists (update, replace,
    ...; unchanged resources may be left out)."""
    return {
        step["urn"].rsplit("::", 1)[-1]: step["op"]
        for step in json.loads(preview).get("steps") or []
        if "dynamic/vertex:" in step["urn"]
    }


class TestUpgrade:
    """A stack of an earlier release, taken over by this one."""

    @pytest.mark.parametrize("release", list(PROVIDER_MODULES))
    def test_nothing_is_replaced_or_lost(self, tmp_path: Path, release: str) -> None:
        """Preview shows no change; the first up keeps the job still configured and deletes
        the one removed (through the provider the old state names); no job is submitted
        again."""
        old = release_tree(release, tmp_path / "old")
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=0.2) as fake:
            project = Project.create(tmp_path)
            use_release(project, old)
            project.write_stack(vertex_stack(fake, keep=job("keep"), gone=job("gone")))
            project.up().check()
            before = project.jobs_in_state()
            module = PROVIDER_MODULES[release]
            assert all(module in provider_of(r) for r in job_resources(project))

            use_release(project, REPO)
            preview = project.run("preview", "--json").check().stdout
            assert set(json.loads(preview)["changeSummary"]) == {"same"}, preview
            assert set(steps(preview).values()) <= {"same"}, steps(preview)

            project.write_stack(vertex_stack(fake, keep=job("keep")))
            project.up().check()
            after = project.jobs_in_state()
            assert set(after) == {"keep"}
            assert after["keep"]["id"] == before["keep"]["id"]
            assert project.outputs()["jobs"]["keep"]["state"] == "SUCCEEDED"
            assert list(fake.jobs) == [before["keep"]["id"]]
            creates = [method for method, _ in fake.calls if method == "CreateCustomJob"]
            assert len(creates) == 2
            [kept] = job_resources(project)
            # The inputs are today's: the job as written, nothing derived or per machine.
            assert kept["inputs"]["schema"] == SCHEMA_VERSION
            assert kept["inputs"]["config"] == job("keep")
            assert set(kept["inputs"]) == {"__provider", "name", "schema", "stack", "config"}

    def test_refresh_and_destroy_through_the_old_providers(self, tmp_path: Path) -> None:
        """A stack 0.1.0 deployed, taken over with no update: `pulumi refresh` reads its
        jobs through the providers its state names (``provider.resources.*``), keeping
        each job; `pulumi destroy` deletes every job through them."""
        old = release_tree(PACKAGE_0_1_RELEASE, tmp_path / "old")
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=0.2) as fake:
            project = Project.create(tmp_path)
            use_release(project, old)
            project.write_stack(vertex_stack(fake, a=job("a"), b=job("b")))
            project.up().check()
            before = project.jobs_in_state()

            use_release(project, REPO)
            project.run("refresh", "--yes", "--skip-preview").check()
            refreshed = project.jobs_in_state()
            # Read through the old provider: the jobs' states are now the fake's.
            assert {n: j["state"] for n, j in refreshed.items()} == {
                "a": "SUCCEEDED",
                "b": "SUCCEEDED",
            }
            assert all(b"provider.resources" in provider_of(r) for r in job_resources(project))
            assert {n: j["id"] for n, j in refreshed.items()} == {
                n: j["id"] for n, j in before.items()
            }
            project.run("destroy", "--yes", "--skip-preview").check()
            assert project.state_resources() == []
            assert fake.jobs == {}


def job_resources(project: Project) -> list[dict[str, Any]]:
    """The TrainingJob resources of the state, secrets shown (the provider is one)."""
    exported = project.run("stack", "export", "--show-secrets").check().stdout
    return [
        r
        for r in json.loads(exported)["deployment"].get("resources") or []
        if r["type"] == "pulumi-python:dynamic/vertex:TrainingJob"
    ]


def provider_of(resource: dict[str, Any]) -> bytes:
    """The pickled provider the engine keeps with a dynamic resource (a secret input:
    exported as ``{<sig>: ..., "plaintext": <JSON text>}``)."""
    value = resource["inputs"]["__provider"]
    if isinstance(value, dict):
        value = json.loads(value["plaintext"])
    return base64.b64decode(value)
