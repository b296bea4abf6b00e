"""The real Pulumi engine driving the project: local stacks and the fake Vertex service.

Each test runs the CLI that `make tools` built on a copy of the project (tests/engine.py).
These are the slowest tests; each `pulumi` command takes a few seconds.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.engine import Project, local_stack, tools_missing, vertex_stack
from tests.packages import write_package
from vertex_training.backends.local import LocalBackend
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

TRAINER_JOB = {
    "python_package": {"package_uris": ["trainer"], "module": "trainer.task"},
    "args": ["--epochs", "3"],
    "wait": "succeeded",
}

SLOW_MODULES = {
    "main": """
        import time
        for _ in range(600):
            time.sleep(0.5)
    """,
}


def container_job(display_name: str, wait: str = "succeeded") -> dict[str, Any]:
    return {
        "display_name": display_name,
        "image": "us-docker.pkg.dev/test-project/repo/trainer:1",
        "wait": wait,
    }


#: A team's own program: one job on Vertex AI, its waiter, and a resource that is to
#: exist only once the job has succeeded (as a model upload or an endpoint would).
GATED_PROGRAM = """
import pulumi
from pulumi.dynamic import CreateResult, Resource, ResourceProvider

import vertex_training as vt


class _Noted(ResourceProvider):
    def create(self, props):
        return CreateResult("noted", dict(props))


class Deployed(Resource):
    def __init__(self, name, opts=None):
        super().__init__(_Noted(), name, {}, opts)


train = vt.TrainingJob(
    "train",
    vt.TrainingJobArgs(
        image="us-docker.pkg.dev/test-project/repo/trainer:1",
        display_name=pulumi.Config().require("display_name"),
        wait="succeeded",
    ),
    project="test-project",
    region="us-central1",
)
waiter = vt.wait_for_jobs("wait-for-jobs", [train])
Deployed("deploy", pulumi.ResourceOptions(depends_on=[waiter]))
pulumi.export("states", waiter.states)
"""


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


class TestLocalStack:
    """The `local` backend through `pulumi up`, preview, refresh and destroy."""

    @pytest.mark.every_python
    def test_up_runs_the_trainer_to_success_and_then_previews_no_change(
        self, project: Project
    ) -> None:
        """`pulumi up` waits for the job, which succeeds and writes its model; a preview of
        the unchanged stack then has nothing to do (one stack brought up for both)."""
        project.write_stack(local_stack(example=TRAINER_JOB))
        project.up().check()
        job = project.outputs()["jobs"]["example"]
        assert job["state"] == "SUCCEEDED"
        model_dir = Path(job["model_directory"])
        assert any(model_dir.iterdir()), f"no model written under {model_dir}"
        result = project.run("preview", "--expect-no-changes", "--diff")
        assert result.returncode == 0, result.output

    def test_spec_change_replaces_the_job(self, project: Project) -> None:
        """Changing what runs previews as a replace naming the key, then submits a new job."""
        project.write_stack(local_stack(example=TRAINER_JOB))
        project.up().check()
        first = project.jobs_in_state()["example"]["id"]

        project.write_stack(local_stack(example={**TRAINER_JOB, "args": ["--epochs", "4"]}))
        preview = project.run("preview", "--diff").check()
        assert "+-" in preview.output and "args" in preview.output, preview.output
        project.up().check()
        second = project.jobs_in_state()["example"]["id"]
        assert second != first
        backend = LocalBackend(project.root / ".local-jobs", base_dir=project.root)
        assert backend.get(first) is None, "the replaced job's record was not deleted"

    def test_wait_policy_change_is_an_update_not_a_replace(self, project: Project) -> None:
        """Changing only `wait` keeps the job that was submitted."""
        project.write_stack(local_stack(example=TRAINER_JOB))
        project.up().check()
        first = project.jobs_in_state()["example"]["id"]
        project.write_stack(local_stack(example={**TRAINER_JOB, "wait": "submitted"}))
        preview = project.run("preview", "--diff").check()
        assert "+-" not in preview.output, preview.output
        project.up().check()
        assert project.jobs_in_state()["example"]["id"] == first

    def test_refresh_drops_a_job_deleted_outside_pulumi(self, project: Project) -> None:
        """`pulumi refresh` removes a job whose record is gone."""
        project.write_stack(local_stack(example=TRAINER_JOB))
        project.up().check()
        job_id = project.jobs_in_state()["example"]["id"]
        LocalBackend(project.root / ".local-jobs", base_dir=project.root).delete(job_id)
        project.run("refresh", "--yes").check()
        assert "example" not in project.jobs_in_state()

    def test_destroy_cancels_a_running_job_then_deletes_it(self, project: Project) -> None:
        """`pulumi destroy` stops a running job's processes and removes its record."""
        write_package(project.root / "slowjob", "slowjob", SLOW_MODULES)
        slow = {
            "python_package": {"package_uris": ["slowjob"], "module": "slowjob.main"},
            "wait": "running",
        }
        project.write_stack(local_stack(slow=slow))
        project.up().check()
        job_id = project.jobs_in_state()["slow"]["id"]
        backend = LocalBackend(project.root / ".local-jobs", base_dir=project.root)
        assert backend.get(job_id).state == "RUNNING"
        pids = backend.pids(job_id)
        assert pids, "the running job has no processes"

        project.run("destroy", "--yes").check()
        assert backend.get(job_id) is None
        assert not [pid for pid in pids if _alive(pid)], "processes of the destroyed job run on"

    def test_a_config_mistake_fails_preview_naming_the_key(self, project: Project) -> None:
        """A typo in a job key is refused at preview with the key and a suggestion."""
        project.write_stack(local_stack(example={**TRAINER_JOB, "machin": "n1-standard-4"}))
        result = project.run("preview")
        assert result.returncode != 0
        assert "vertex-training:jobs.example.machin" in result.output, result.output
        assert "machine" in result.output


class TestVertexStack:
    """A `vertex` stack against the fake JobService on loopback."""

    def test_up_refresh_destroy(self, project: Project) -> None:
        """Jobs are submitted and waited for, refreshed, then cancelled and deleted."""
        with FakeVertex(run_s=1.0) as fake:
            project.write_stack(vertex_stack(fake, train=container_job("train")))
            project.up().check()
            job = project.outputs()["jobs"]["train"]
            assert job["state"] == "SUCCEEDED"
            assert job["resource_name"].startswith(
                "projects/test-project/locations/us-central1/customJobs/"
            )

            project.run("refresh", "--yes").check()
            assert project.jobs_in_state()["train"]["state"] == "SUCCEEDED"

            project.run("destroy", "--yes").check()
            assert fake.jobs == {}

    def test_a_failed_job_fails_the_update_with_its_error(self, project: Project) -> None:
        """A job that ends FAILED fails `pulumi up` with the job's error, once, and stays
        in state; the stack outputs record its state and error; the next `pulumi up`
        waits for it again (and fails again: it is still FAILED)."""
        with FakeVertex(run_s=0.5) as fake:
            fake.script("doomed", outcome="FAILED", error_message="replica workerpool0-0 exited 1")
            project.write_stack(vertex_stack(fake, doomed=container_job("doomed")))
            result = project.up()
            assert result.returncode != 0
            assert "replica workerpool0-0 exited 1" in result.output, result.output
            assert "Exception calling application" not in result.output, result.output
            assert "1 errored" in result.output, result.output
            assert "doomed" in project.jobs_in_state()
            job = project.outputs()["jobs"]["doomed"]
            assert job["state"] == "FAILED"
            assert "replica workerpool0-0 exited 1" in job["error"]

            before = len(fake.calls)
            again = project.up()
            assert again.returncode != 0
            assert "replica workerpool0-0 exited 1" in again.output, again.output
            assert [c.method for c in fake.calls[before:]].count("GetCustomJob") >= 1

    def test_what_depends_on_the_waiter_waits_for_its_jobs_to_succeed(self, tmp_path: Path) -> None:
        """In a team's own program, a resource that depends on the waiter is not created
        when the job fails the wait (the update fails naming the job, and the program's
        stack outputs are recorded); once a job succeeds, it is."""
        project = Project.of_program(tmp_path, GATED_PROGRAM, {})
        with FakeVertex(run_s=0.5) as fake:
            fake.script("doomed", outcome="FAILED", error_message="replica workerpool0-0 exited 1")
            config = {"vertex-training:apiEndpoint": fake.address}
            project.write_stack({**config, "bench-baseline:display_name": "doomed"})
            result = project.up()
            assert result.returncode != 0
            assert "job train" in result.output and "exited 1" in result.output, result.output
            assert "1 errored" in result.output, result.output
            names = {r["urn"].rsplit("::", 1)[-1] for r in project.state_resources()}
            assert {"train", "wait-for-jobs"} <= names and "deploy" not in names, names
            assert project.outputs()["states"] == {"train": "FAILED"}

            project.write_stack({**config, "bench-baseline:display_name": "fixed"})
            project.up().check()
            names = {r["urn"].rsplit("::", 1)[-1] for r in project.state_resources()}
            assert "deploy" in names
            assert project.outputs()["states"] == {"train": "SUCCEEDED"}

    def test_a_reserved_job_runs_through_a_stockout(self, project: Project) -> None:
        """A job on a specific reservation, reaching its data over a PSC interface and an
        NFS mount, goes up through the region's stockout with those fields in its request;
        the preview of a flex-start change with a 10-day timeout is refused naming the key."""
        reserved = {
            **container_job("reserved"),
            "machine": "a3-highgpu-8g",
            "reservation_affinity": {
                "type": "SPECIFIC_RESERVATION",
                "values": ["projects/test-project/zones/us-central1-a/reservations/h100"],
            },
            "psc_interface_config": {"network_attachment": "training-attachment"},
            "nfs_mounts": [{"server": "10.76.0.10", "path": "/vol1", "mount_point": "data"}],
        }
        with FakeVertex(run_s=1.0) as fake:
            fake.stockout("us-central1")
            project.write_stack(vertex_stack(fake, reserved=reserved))
            project.up().check()
            assert project.outputs()["jobs"]["reserved"]["state"] == "SUCCEEDED"
            (job,) = fake.jobs.values()
            pool = job.job_spec.worker_pool_specs[0]
            affinity = pool.machine_spec.reservation_affinity
            assert affinity.reservation_affinity_type.name == "SPECIFIC_RESERVATION"
            assert list(affinity.values) == reserved["reservation_affinity"]["values"]
            assert pool.nfs_mounts[0].mount_point == "data"
            assert job.job_spec.psc_interface_config.network_attachment == "training-attachment"

            flex = {**reserved, "scheduling": {"strategy": "FLEX_START", "timeout": "10d"}}
            del flex["reservation_affinity"]
            project.write_stack(vertex_stack(fake, reserved=flex))
            result = project.run("preview")
            assert result.returncode != 0
            assert "vertex-training:jobs.reserved.scheduling.timeout" in result.output, (
                result.output
            )
            assert "7d or less" in result.output

    def test_destroy_of_a_running_job_cancels_then_deletes(self, project: Project) -> None:
        """Destroying a running job calls CancelCustomJob, then DeleteCustomJob."""
        with FakeVertex(run_s=600) as fake:
            project.write_stack(vertex_stack(fake, long=container_job("long", wait="running")))
            project.up().check()
            project.run("destroy", "--yes").check()
            methods = [method for method, _ in fake.calls]
            assert methods.index("CancelCustomJob") < methods.index("DeleteCustomJob")
            assert fake.jobs == {}

    def test_rerun_submits_again_and_a_forced_replace_loses_nothing(self, project: Project) -> None:
        """Bumping `rerun` submits a new job; `--replace` of an unchanged job keeps it."""
        with FakeVertex() as fake:
            project.write_stack(vertex_stack(fake, train=container_job("train")))
            project.up().check()
            first = project.jobs_in_state()["train"]["id"]

            urn = (
                "urn:pulumi:test::vertex-training::pulumi-python:dynamic/vertex:TrainingJob::train"
            )
            project.run("up", "--yes", "--skip-preview", "--replace", urn).check()
            assert project.jobs_in_state()["train"]["id"] == first
            assert first in fake.jobs

            project.write_stack(vertex_stack(fake, train={**container_job("train"), "rerun": 2}))
            project.up().check()
            second = project.jobs_in_state()["train"]["id"]
            assert second != first
            assert list(fake.jobs) == [second]

    def test_legacy_settings_without_equivalent_are_warned_at_preview(
        self, project: Project
    ) -> None:
        """A legacy trainingInput setting Vertex has no equivalent for is named at preview."""
        with FakeVertex() as fake:
            legacy = {
                "training_input": {
                    "scaleTier": "BASIC",
                    "masterConfig": {"imageUri": "us-docker.pkg.dev/test-project/repo/t:1"},
                    "scheduling": {"priority": 5},
                }
            }
            project.write_stack(vertex_stack(fake, old=legacy))
            result = project.run("preview").check()
            assert "vertex-training:jobs.old.training_input.scheduling.priority" in result.output

    def test_engine_killed_after_submission_leaves_one_job(self, project: Project) -> None:
        """A rerun after the engine was killed mid-create adopts the job it had submitted."""
        with FakeVertex(run_s=3.0) as fake:
            # The job exists at once, but the reply that names it comes late: the engine
            # is killed before it can record the job in the stack's state.
            fake.stall_next("CreateCustomJob", 30.0)
            project.write_stack(vertex_stack(fake, once=container_job("once")))
            project.init()
            proc = project.start("up", "--yes", "--skip-preview")
            deadline = time.monotonic() + 120
            while not fake.jobs and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.jobs, "the job was never submitted"
            project.kill_engine(proc)

            # A killed engine leaves the file backend's lock behind; releasing it is the
            # user's first step after such a crash.
            project.run("cancel", "--yes").check()
            assert "once" not in project.jobs_in_state()
            project.up().check()
            creates = [call for call in fake.calls if call.method == "CreateCustomJob"]
            assert len(creates) == 1 and len(fake.jobs) == 1
            assert project.outputs()["jobs"]["once"]["state"] == "SUCCEEDED"

    def test_engine_killed_mid_wait_is_repaired_by_the_documented_commands(
        self, project: Project
    ) -> None:
        """Killed while the waiter waits: `pulumi cancel` and `pulumi up` wait for the job
        again (the engine warns of the waiter's pending CREATE, and the waiter names the
        command that clears it); `pulumi refresh --yes --clear-pending-creates`, as
        docs/operations.md says, clears it, and the next `pulumi up` is clean."""
        with FakeVertex(run_s=6.0) as fake:
            project.write_stack(vertex_stack(fake, long=container_job("long")))
            project.init()
            proc = project.start("up", "--yes", "--skip-preview")
            deadline = time.monotonic() + 120
            while not fake.jobs and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fake.jobs, "the job was never submitted"
            time.sleep(2)  # the waiter is waiting now
            project.kill_engine(proc)

            project.run("cancel", "--yes").check()
            again = project.up().check()
            assert "pending CREATE" in again.output, again.output
            warned = [line for line in again.output.splitlines() if "stopped while it" in line]
            assert warned and "warning" in warned[0], again.output
            assert "`pulumi refresh --yes --clear-pending-creates`" in again.output
            assert not list((project.root / ".state" / "waits").glob("*")), "a mark stays"
            assert project.outputs()["jobs"]["long"]["state"] == "SUCCEEDED"
            project.run("refresh", "--yes", "--clear-pending-creates").check()
            clean = project.up().check()
            assert "pending" not in clean.output.lower(), clean.output
            assert "stopped while it" not in clean.output, clean.output
            assert len(fake.jobs) == 1


def _alive(pid: int) -> bool:
    """Whether a process runs (a zombie waiting to be reaped by its parent does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
