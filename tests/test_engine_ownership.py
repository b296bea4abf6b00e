"""Two Pulumi projects in one Google Cloud project, on the real engine: each a program of
its own (a YAML program through the plugin, or a Python program of the package's dynamic
resources) with a stack ``test`` and a job resource ``train`` asking for the same job, as
two teams get who start from the same template. Each project gets a job of its own, and
one project's destroy leaves the other's job running.

Then an upgrade: a stack of 0.3.0 (whose jobs carry no project label) with a create that
an engine kill left pending, rerun under this release: the job it submitted is found by
the label 0.3.0 gave it and adopted, no job is submitted twice, and the job that was
recorded shows no diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.engine import REPO, Project, tools_missing, vertex_stack
from tests.test_engine_plugin import YamlProgram
from tests.test_engine_plugin import missing as plugin_missing
from tests.test_engine_upgrade import release_tree, steps, use_release
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing())),
]

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
#: The last commit of release 0.3.0, whose jobs carry no ``pulumi_project`` label.
RELEASE_0_3 = "dc73b59"
#: A job that runs long enough for the other project's destroy to happen while it runs.
LONG = {"queued_s": 0.2, "pending_s": 0.2, "run_s": 600.0}


class TeamYaml(YamlProgram):
    """A YAML program of the Pulumi project ``name`` with one job ``train``."""

    def __init__(self, tmp: Path, fake: FakeVertex, name: str) -> None:
        self.name = name
        tmp.mkdir()
        super().__init__(tmp, fake)
        self.resources = {
            "train": {
                "type": "vertex-training:TrainingJob",
                "properties": {"job": {"image": IMAGE, "machine": "e2-standard-4"}},
            }
        }
        self.outputs = {"jobId": "${train.id}"}
        self.write()

    def program(self) -> dict[str, Any]:
        return {**super().program(), "name": self.name}


#: A team's Python program: one job of the package's dynamic resources, written in code.
TEAM_PROGRAM = """
import pulumi

import vertex_training as vt

train = vt.TrainingJob(
    "train",
    vt.TrainingJobArgs(image="us-docker.pkg.dev/test-project/train/trainer:1"),
    project="test-project",
    region="us-central1",
)
pulumi.export("jobId", train.id)
"""


def team_python(tmp: Path, fake: FakeVertex, name: str) -> Project:
    tmp.mkdir()
    project = Project.of_program(tmp, TEAM_PROGRAM, {}, project_name=name)
    project.write_stack({"vertex-training:apiEndpoint": fake.address})
    return project


def job_of(project: Project | YamlProgram) -> str:
    """The resource name of the one job the project's state records."""
    runner = project.project if isinstance(project, YamlProgram) else project
    return str(runner.outputs()["jobId"])


def two_teams_each_keep_their_own_job(
    fake: FakeVertex, a: Project | YamlProgram, b: Project | YamlProgram
) -> None:
    """team-a's up submits a job; team-b's submits another; team-b's destroy deletes only
    its own, and team-a's job runs on, still in team-a's state after a refresh."""
    a.run("up", "--yes", "--skip-preview").check()
    [a_job] = fake.jobs
    b.run("up", "--yes", "--skip-preview").check()
    assert len(fake.jobs) == 2, list(fake.jobs)
    b_job = job_of(b)
    assert {a_job, b_job} == set(fake.jobs)
    assert job_of(a) == a_job
    assert fake.jobs[a_job].labels["pulumi_project"] == "team-a"
    assert fake.jobs[b_job].labels["pulumi_project"] == "team-b"

    b.run("destroy", "--yes", "--skip-preview").check()
    assert list(fake.jobs) == [a_job]
    assert fake.jobs[a_job].state.name in ("JOB_STATE_PENDING", "JOB_STATE_RUNNING")
    cancelled = {call.request.name for call in fake.calls if call.method == "CancelCustomJob"}
    assert a_job not in cancelled
    a.run("refresh", "--yes", "--skip-preview").check()
    assert job_of(a) == a_job


class TestTwoProjects:
    """Two projects, one stack name, one resource name, one request."""

    @pytest.mark.polyglot
    def test_two_yaml_programs_through_the_plugin(self, tmp_path: Path) -> None:
        """The plugin's jobs: one each, and one project's destroy touches nothing of the
        other's."""
        if reason := plugin_missing():
            pytest.skip(reason)
        with FakeVertex(**LONG) as fake:
            a = TeamYaml(tmp_path / "a", fake, "team-a")
            b = TeamYaml(tmp_path / "b", fake, "team-b")
            two_teams_each_keep_their_own_job(fake, a, b)

    def test_two_python_programs_of_dynamic_resources(self, tmp_path: Path) -> None:
        """The dynamic resources' jobs: the same."""
        with FakeVertex(**LONG) as fake:
            a = team_python(tmp_path / "a", fake, "team-a")
            b = team_python(tmp_path / "b", fake, "team-b")
            two_teams_each_keep_their_own_job(fake, a, b)


def job(name: str) -> dict[str, Any]:
    return {"image": IMAGE, "display_name": name}


def interrupt_create(project: Project, name: str) -> None:
    """Make the stack's state what an engine killed after job ``name`` was submitted and
    before its create was recorded leaves: no resource ``name``, a pending create of it."""
    exported = json.loads(project.run("stack", "export").check().stdout)
    deployment = exported["deployment"]
    resources = deployment["resources"]
    [doomed] = [r for r in resources if r["urn"].endswith(f"::{name}")]
    kept = []
    for resource in resources:
        if resource is doomed:
            continue
        resource["dependencies"] = [
            d for d in resource.get("dependencies", []) if d != doomed["urn"]
        ]
        for key, urns in (resource.get("propertyDependencies") or {}).items():
            resource["propertyDependencies"][key] = [u for u in urns if u != doomed["urn"]]
        kept.append(resource)
    deployment["resources"] = kept
    pending = {k: v for k, v in doomed.items() if k not in ("id", "outputs")}
    deployment["pending_operations"] = [{"resource": pending, "type": "creating"}]
    path = project.root / "interrupted.json"
    path.write_text(json.dumps(exported))
    project.run("stack", "import", "--file", str(path)).check()


class TestUpgradeFrom030:
    """A stack of 0.3.0, with a create its engine left pending, taken over by this one."""

    def test_a_pending_create_finds_its_job_once_and_the_rest_shows_no_diff(
        self, tmp_path: Path
    ) -> None:
        """0.3.0 submitted ``late`` and was killed before recording it: this release's
        preview shows ``keep`` unchanged and ``late`` to create; its up adopts ``late``'s
        job by the label 0.3.0 gave it (no second submission), and the next preview shows
        nothing to do."""
        old = release_tree(RELEASE_0_3, tmp_path / "old")
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=0.5) as fake:
            project = Project.create(tmp_path)
            use_release(project, old)
            # The program and the provider host import 0.3.0's package, not the one this
            # virtualenv installs.
            project.env["PYTHONPATH"] = str(old / "provider")
            project.write_stack(vertex_stack(fake, keep=job("keep"), late=job("late")))
            project.up().check()
            before = project.jobs_in_state()
            assert all("pulumi_project" not in j.labels for j in fake.jobs.values())
            interrupt_create(project, "late")
            assert set(project.jobs_in_state()) == {"keep"}

            del project.env["PYTHONPATH"]
            use_release(project, REPO)
            preview = project.run("preview", "--json").check().stdout
            assert steps(preview).get("keep", "same") == "same", steps(preview)
            assert steps(preview)["late"] == "create", steps(preview)

            result = project.up().check()
            assert "by the label a release up to 0.3.0 gave it" in result.output, result.output
            assert "--clear-pending-creates" in result.output, result.output
            after = project.jobs_in_state()
            assert {n: j["id"] for n, j in after.items()} == {n: j["id"] for n, j in before.items()}
            creates = [c for c in fake.calls if c.method == "CreateCustomJob"]
            assert len(creates) == 2
            assert len(fake.jobs) == 2

            again = project.run("preview", "--json").check().stdout
            assert set(steps(again).values()) <= {"same"}, steps(again)
