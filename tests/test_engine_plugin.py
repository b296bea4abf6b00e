"""The provider plugin on the real engine: a Pulumi YAML program outside the repository
names provider/ as its plugin and runs a training job and a tuning job against the fake
JobService through preview, up, a no-change preview, a replacement, `pulumi import` of a
job made outside, and destroy, checking what the fake holds after each step.

The plugin runs under the tests' own Python (``VERTEX_TRAINING_PYTHON``); the YAML
language host is the one `make all-tools` builds. CI runs these once (``polyglot``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clients import job_made_outside
from tests.engine import TOOLS_BIN, Project, Result, engine_env, tools_missing
from vertex_training._version import __version__
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

REPO = Path(__file__).resolve().parent.parent
PLUGIN = REPO / "provider"
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
PARENT = "projects/test-project/locations/us-central1"
STUDY = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"learning-rate": {"type": "double", "min": 0.001, "max": 1.0, "scale": "log"}},
    "maxTrials": 2,
    "parallelTrials": 2,
}


def missing() -> str | None:
    if reason := tools_missing():
        return reason
    if not (TOOLS_BIN / "pulumi-language-yaml").exists():
        return "the YAML language host is not built: run `make all-tools`"
    return None


class YamlProgram:
    """A Pulumi YAML program that names provider/ as its plugin, in a project of its own
    (``Project.of_yaml``), pointed at the fake; its resources and outputs as the test sets
    them (``write``)."""

    def __init__(self, tmp: Path, fake: FakeVertex) -> None:
        self.fake = fake
        self.resources: dict[str, Any] = {}
        self.outputs: dict[str, Any] = {}
        self.project = Project.of_yaml(tmp, self.program())
        self.root = self.project.root

    def program(self) -> dict[str, Any]:
        return {
            "name": "training",
            "runtime": "yaml",
            "plugins": {"providers": [{"name": "vertex-training", "path": str(PLUGIN)}]},
            "config": {
                "vertex-training:apiEndpoint": self.fake.address,
                "vertex-training:project": "test-project",
                "vertex-training:region": "us-central1",
            },
            "resources": self.resources,
            "outputs": self.outputs,
        }

    def write(self) -> None:
        self.project.write_program(self.program())

    def run(self, *args: str) -> Result:
        return self.project.run(*args)

    def state(self) -> list[dict[str, Any]]:
        return self.project.state_resources()


def job(machine: str = "e2-standard-4") -> dict[str, Any]:
    return {
        "type": "vertex-training:TrainingJob",
        "properties": {
            "job": {
                "image": IMAGE,
                "machine": machine,
                "args": ["--epochs", "3"],
                "wait": "succeeded",
            }
        },
    }


def sweep() -> dict[str, Any]:
    return {
        "type": "vertex-training:HyperparameterTuningJob",
        "properties": {"job": {"image": IMAGE, "wait": "succeeded", "study": STUDY}},
    }


def waiter(*names: str) -> dict[str, Any]:
    return {
        "type": "vertex-training:JobWaiter",
        "properties": {"jobs": [f"${{{name}.waiterEntry}}" for name in names]},
    }


def states(jobs: dict[str, Any]) -> dict[str, str]:
    return {name: job.state.name for name, job in jobs.items()}


@pytest.fixture
def program(tmp_path: Path) -> Iterator[YamlProgram]:
    if reason := missing():
        pytest.skip(reason)
    with FakeVertex(queued_s=0.5, pending_s=0.5, run_s=1.0, trial_s=0.3) as fake:
        yield YamlProgram(tmp_path, fake)


class TestYamlProgram:
    @pytest.mark.every_python
    def test_jobs_from_a_yaml_program_through_preview_up_replace_import_and_destroy(
        self, program: YamlProgram
    ) -> None:
        """The whole life of two jobs, and of one made outside, as the fake sees it."""
        fake = program.fake
        program.resources = {
            "train": job(),
            "sweep": sweep(),
            "wait-for-jobs": waiter("train", "sweep"),
        }
        program.outputs = {
            "state": '${wait-for-jobs.states["train"]}',
            "sweepState": '${wait-for-jobs.states["sweep"]}',
            "jobId": "${train.jobId}",
            # A typed path (the schema's WaitedTrials and Trial): the YAML host checks it.
            "bestTrial": '${wait-for-jobs.trials["sweep"].bestTrial}',
            # The tuning job's own, filled by the up that waited for it (its create).
            "sweepBestTrial": "${sweep.bestTrial}",
            "sweepTrials": "${sweep.trials}",
        }
        program.write()

        preview = program.run("preview").check()
        # The tuning job is waited for by its own create, which fills its bestTrial.
        assert (
            "+ 4 to create" in preview.output and "waited for by its own create" in preview.output
        )
        assert fake.jobs == {} and fake.tuning_jobs == {}, "a preview submitted a job"

        up = program.run("up", "--yes", "--skip-preview").check()
        assert "train: SUCCEEDED" in up.output and "sweep: SUCCEEDED" in up.output
        [first] = fake.jobs.values()
        assert first.job_spec.worker_pool_specs[0].machine_spec.machine_type == "e2-standard-4"
        assert states(fake.jobs) == {first.name: "JOB_STATE_SUCCEEDED"}
        assert list(states(fake.tuning_jobs).values()) == ["JOB_STATE_SUCCEEDED"]
        outputs = json.loads(program.run("stack", "output", "--json").check().stdout)
        best = outputs.pop("bestTrial")
        assert outputs.pop("sweepBestTrial") == best and best in outputs.pop("sweepTrials")
        assert outputs == {
            "state": "SUCCEEDED",
            "sweepState": "SUCCEEDED",
            "jobId": first.name.rsplit("/", 1)[-1],
        }
        assert best["state"] == "SUCCEEDED" and set(best["parameters"]) == {"learning-rate"}
        assert best["finalMetric"] == best["metrics"]["accuracy"]
        state = program.state()
        assert "__provider" not in json.dumps(state)
        [plugin] = [r for r in state if r["type"] == "pulumi:providers:vertex-training"]
        assert plugin["inputs"]["version"] == __version__
        jobs = [r for r in state if r["type"].startswith("vertex-training:index:")]
        assert {r["provider"].split("::")[2] for r in jobs} == {"pulumi:providers:vertex-training"}

        unchanged = program.run("preview", "--expect-no-changes").check()
        assert "4 unchanged" in unchanged.output
        assert len(fake.jobs) == 1 and len(fake.tuning_jobs) == 1

        program.resources["train"] = job(machine="e2-standard-8")
        program.write()
        replaced = program.run("up", "--yes", "--skip-preview").check()
        assert "+-1 replaced" in replaced.output
        [second] = fake.jobs.values()
        assert second.name != first.name, "the replaced job is still there"
        assert second.job_spec.worker_pool_specs[0].machine_spec.machine_type == "e2-standard-8"

        # A job made outside Pulumi, imported.
        outside = job_made_outside(
            fake.address,
            display_name="made-by-hand",
            image=IMAGE,
            args=["--lr", "0.1"],
            labels={"team": "vision"},
        )
        code = program.root / "imported.yaml"
        imported = program.run(
            "import",
            "vertex-training:index:TrainingJob",
            "by-hand",
            outside,
            "--yes",
            "--protect=false",
            "--out",
            str(code),
        ).check()
        assert "1 imported" in imported.output
        written = yaml.safe_load(code.read_text())["resources"]
        assert written["by-hand"]["properties"]["job"] == {
            "image": IMAGE,
            "machine": "e2-standard-4",
            "args": ["--lr", "0.1"],
            "displayName": "made-by-hand",
            "labels": {"team": "vision"},
        }
        program.resources.update(written)
        program.write()
        program.run("preview", "--expect-no-changes").check()
        assert outside in fake.jobs

        destroyed = program.run("destroy", "--yes", "--skip-preview").check()
        assert "deleted" in destroyed.output
        assert fake.jobs == {} and fake.tuning_jobs == {}
        assert [r["type"] for r in program.state()] == []


@pytest.mark.parametrize("given", ["provider", "provider/pulumi-resource-vertex-training"])
def test_the_schema_names_the_three_resource_types(tmp_path: Path, given: str) -> None:
    """`pulumi package get-schema` on the plugin's folder, or its executable, prints the
    package's schema."""
    if reason := missing():
        pytest.skip(reason)
    import subprocess

    env = {**engine_env(tmp_path, Path(sys.prefix)), "VERTEX_TRAINING_PYTHON": sys.executable}
    proc = subprocess.run(
        ["pulumi", "package", "get-schema", str(REPO / given)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    resources = json.loads(proc.stdout)["resources"]
    assert {
        "vertex-training:index:TrainingJob",
        "vertex-training:index:HyperparameterTuningJob",
        "vertex-training:index:TrainingPlatform",
    } <= set(resources)


#: The reference project's program after its move to the plugin: the same job, as the
#: plugin's resource of the same name, declared through the SDK's generic resource (the
#: plugin's own Python SDK is not generated yet).
PLUGIN_PROGRAM = """
import pulumi

pulumi.CustomResource(
    "vertex-training:index:TrainingJob",
    "train",
    {
        "job": {"image": "%s", "displayName": "train", "wait": "succeeded"},
        "project": "test-project",
        "region": "us-central1",
    },
)
"""


class TestMigration:
    def test_a_dynamic_stack_moves_to_the_plugin_with_no_job_submitted_or_deleted(
        self, tmp_path: Path
    ) -> None:
        """migrate, import, up: the job stays, the plugin's resource tracks it."""
        if reason := missing():
            pytest.skip(reason)
        import subprocess

        image = "us-docker.pkg.dev/test-project/repo/trainer:1"
        with FakeVertex(queued_s=0.5, pending_s=0.5, run_s=1.0) as fake:
            project = Project.create(tmp_path)
            job_keys = {"display_name": "train", "image": image, "wait": "succeeded"}
            project.write_stack(
                {
                    "gcp:project": "test-project",
                    "gcp:region": "us-central1",
                    "vertex-training:apiEndpoint": fake.address,
                    "vertex-training:jobs": {"train": job_keys},
                }
            )
            project.up().check()
            [job] = fake.jobs.values()
            submitted = len(fake.calls)

            cli = Path(sys.prefix) / "bin" / "vertex-training"
            moved = subprocess.run(
                [str(cli), "migrate", project.stack, "--out", "migration"],
                cwd=project.root,
                env=project.env,
                capture_output=True,
                text=True,
                check=True,
            )
            assert "1 job(s) of stack test (train) are retained on delete" in moved.stdout
            imports = json.loads((project.root / "migration" / "test-import.json").read_text())
            assert imports == {
                "resources": [
                    {"type": "vertex-training:index:TrainingJob", "name": "train", "id": job.name}
                ]
            }

            settings = yaml.safe_load((project.root / "Pulumi.yaml").read_text())
            settings["plugins"] = {"providers": [{"name": "vertex-training", "path": str(PLUGIN)}]}
            (project.root / "Pulumi.yaml").write_text(yaml.safe_dump(settings, sort_keys=False))
            (project.root / "__main__.py").write_text(PLUGIN_PROGRAM % image)
            project.env["VERTEX_TRAINING_PYTHON"] = sys.executable
            project.run(
                "import",
                "--file",
                "migration/test-import.json",
                "--protect=false",
                "--generate-code=false",
                "--yes",
            ).check()
            moved_up = project.up().check()
            assert "created" not in moved_up.output.split("Resources:")[-1], moved_up.output

            methods = {call.method for call in fake.calls[submitted:]}
            assert not methods & {"CreateCustomJob", "CancelCustomJob", "DeleteCustomJob"}
            assert list(fake.jobs) == [job.name]
            types = {r["type"] for r in project.state_resources()}
            assert "vertex-training:index:TrainingJob" in types
            assert not any(t.startswith("pulumi-python:dynamic/vertex:") for t in types)
            project.run("preview", "--expect-no-changes").check()

            project.run("destroy", "--yes").check()
            assert fake.jobs == {}
