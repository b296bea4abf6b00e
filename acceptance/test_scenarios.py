"""The acceptance scenarios: what a team does with its jobs, run on the real engine against
Google's services or the fakes (acceptance/target.py), each printing what it checked.

Each scenario runs the cheapest jobs there are (one e2-standard-4, CPU only, a Python
command that ends in seconds) and ends by listing the project: nothing it made is left.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from acceptance.conftest import AcceptanceProject, Report
from acceptance.target import FOREVER, MACHINE, Target
from tests.engine import REPO, TOOLS_BIN, Project
from vertex_training.api import states
from vertex_training.api.labels import IDENTITY_LABEL

#: How long a scenario waits for a job to reach a state.
STATE_TIMEOUT_S = 600
POLL_S = 2.0
#: The log line the failing job's command prints before it exits 3.
FAILING_LINE = "acceptance: failing on purpose"
#: A trial's command: report the metric `score` as cloudml-hypertune does (a JSON line in
#: CLOUD_ML_HP_METRIC_FILE, by default /tmp/hypertune/output.metrics), from `--x=VALUE`.
TRIAL_CODE = (
    "import json, os, sys, time\n"
    "x = float(next(a for a in sys.argv if a.startswith('--x=')).split('=', 1)[1])\n"
    "path = os.environ.get('CLOUD_ML_HP_METRIC_FILE', '/tmp/hypertune/output.metrics')\n"
    "os.makedirs(os.path.dirname(path), exist_ok=True)\n"
    "line = {'timestamp': time.time(), 'trial': os.environ.get('CLOUD_ML_TRIAL_ID', ''),\n"
    "        'score': str(1 - (x - 0.3) ** 2), 'global_step': '1', 'checkpoint_path': ''}\n"
    "open(path, 'a').write(json.dumps(line) + '\\n')\n"
    "print('acceptance: trial with x =', x)\n"
)

pytestmark = pytest.mark.engine


def wait_for(where: Target, scenario: str, wanted: tuple[str, ...]) -> list[Any]:
    """The scenario's jobs once one of them is in a ``wanted`` state."""
    deadline = time.monotonic() + STATE_TIMEOUT_S
    while time.monotonic() < deadline:
        jobs = where.jobs_of(scenario)
        if any(job.state in wanted for job in jobs):
            return jobs
        time.sleep(POLL_S)
    raise AssertionError(f"no job of {scenario} reached {wanted} in {STATE_TIMEOUT_S}s")


def made_outside(where: Target, scenario: str, display_name: str) -> str:
    """A job created with the JobService as a person would outside Pulumi: no label of
    this project's but the run's; its resource name."""
    body = {
        "displayName": display_name,
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "machineSpec": {"machineType": MACHINE},
                    "replicaCount": "1",
                    "containerSpec": {
                        "imageUri": where.image,
                        "command": ["python", "-c", "print('acceptance: made outside')"],
                    },
                }
            ],
            "scheduling": {"timeout": "600s"},
        },
        "labels": where.labels(scenario),
    }
    return where.backend().submit(body).name


class TestJobs:
    def test_container_job_lifecycle(
        self, where: Target, scenario: str, project: Project, report: Report
    ) -> None:
        """Preview, up waiting for success, a no-change preview, a replace, and destroy of
        a job still running: cancelled, then deleted."""
        hello = {**where.container("print('acceptance: hello')"), "wait": "succeeded"}
        project.write_stack(where.stack_config(scenario, {"hello": hello}))
        project.run("preview").check()
        assert where.jobs_of(scenario) == []
        report("preview submitted nothing")

        project.up().check()
        [first] = where.jobs_of(scenario)
        assert first.state == states.SUCCEEDED
        assert project.outputs()["jobs"]["hello"]["state"] == states.SUCCEEDED
        assert IDENTITY_LABEL in first.labels
        report(f"up waited for {first.name} to succeed; the stack output says SUCCEEDED")

        project.run("preview", "--expect-no-changes").check()
        report("a second preview shows no change")

        where.script("hello", run_s=FOREVER)
        running = {
            **where.container("import time; print('acceptance: hello again'); time.sleep(540)"),
            "wait": "running",
        }
        project.write_stack(where.stack_config(scenario, {"hello": running}))
        replaced = project.up().check()
        assert "replaced" in replaced.output, replaced.output
        [second] = where.jobs_of(scenario)
        assert second.name != first.name and second.state == states.RUNNING
        report(f"a changed command replaced the job: {second.name} runs, {first.name} is gone")

        project.run("destroy", "--yes", "--skip-preview").check()
        assert where.jobs_of(scenario) == []
        assert where.backend().get(second.name) is None
        report("destroy cancelled the running job, then deleted it")

    def test_failing_job_shows_its_last_log_lines(
        self, where: Target, scenario: str, project: Project, report: Report
    ) -> None:
        """A job that fails fails `pulumi up` with its class, fix and last log lines."""
        code = f"import sys; print({FAILING_LINE!r}); sys.exit(3)"
        where.script("fails", fails=True)
        failing = {**where.container(code), "wait": "succeeded"}
        project.write_stack(where.stack_config(scenario, {"fails": failing}))
        failed = project.up()
        assert failed.returncode != 0
        for line in ("class", "fix"):
            assert re.search(rf"^\s+{line}: \S", failed.output, re.MULTILINE), failed.output
        assert "lines of workerpool0-0's log:" in failed.output, failed.output
        after = failed.output.split("lines of workerpool0-0's log:", 1)[1].splitlines()
        assert after[1].strip(), failed.output
        if where.google:  # the fake's lines are its own; the job's own line is Google's
            assert FAILING_LINE in failed.output, failed.output
        report("up failed with the job's class and fix, and its replica's last log lines")
        assert project.outputs()["jobs"]["fails"]["state"] == states.FAILED
        report("the stack output keeps the job FAILED with its error")
        project.run("destroy", "--yes", "--skip-preview").check()

    def test_tuning_job_of_two_trials(
        self, where: Target, scenario: str, project: Project, report: Report
    ) -> None:
        """A tuning job of two trials runs to its end; its trials and best trial are outputs."""
        study = {
            "metrics": [{"id": "score", "goal": "MAXIMIZE"}],
            "parameters": {"x": {"type": "double", "min": 0.0, "max": 1.0}},
            "max_trials": 2,
            "parallel_trials": 2,
        }
        sweep = {**where.container(TRIAL_CODE), "study": study, "wait": "succeeded"}
        project.write_stack(where.stack_config(scenario, {"sweep": sweep}))
        project.up().check()
        outputs = project.outputs()["jobs"]["sweep"]
        assert outputs["state"] == states.SUCCEEDED
        assert len(outputs["trials"]) == 2
        assert outputs["best_trial"] and "score" in outputs["best_trial"]["metrics"]
        report(f"2 trials ran; best trial {outputs['best_trial']['id']} by its reported score")
        project.run("destroy", "--yes", "--skip-preview").check()

    def test_engine_killed_mid_wait_then_recovered(
        self, where: Target, scenario: str, project: Project, report: Report
    ) -> None:
        """Killed while it waits, the engine is recovered as docs/operations.md says: one
        job, waited for again, and a clean `pulumi up` after the refresh."""
        where.script("long", run_s=15.0)
        long = {**where.container("import time; time.sleep(60)"), "wait": "succeeded"}
        project.write_stack(where.stack_config(scenario, {"long": long}))
        project.init()
        engine = project.start("up", "--yes", "--skip-preview")
        [job] = wait_for(where, scenario, (states.RUNNING,))
        time.sleep(3)
        project.kill_engine(engine)
        report(f"the engine was killed while {job.name} ran")

        project.run("cancel", "--yes").check()
        again = project.up().check()
        assert "pending CREATE" in again.output, again.output
        assert "`pulumi refresh --yes --clear-pending-creates`" in again.output
        assert [j.name for j in where.jobs_of(scenario)] == [job.name]
        assert project.outputs()["jobs"]["long"]["state"] == states.SUCCEEDED
        report("pulumi cancel, then up: the same job waited for to its success, none submitted")
        project.run("refresh", "--yes", "--clear-pending-creates").check()
        clean = project.up().check()
        assert "pending" not in clean.output.lower(), clean.output
        report("refresh --clear-pending-creates, then a clean up")
        project.run("destroy", "--yes", "--skip-preview").check()

    def test_import_of_a_job_made_outside(
        self, where: Target, scenario: str, tmp_path: Path, report: Report
    ) -> None:
        """`pulumi import` through the plugin, from a YAML program: the program it writes
        previews with no change, and destroy deletes the job."""
        if not (TOOLS_BIN / "pulumi-language-yaml").exists():
            pytest.skip("the YAML language host is not built: run `make tools`")
        outside = made_outside(where, scenario, "made-outside")
        config = {"vertex-training:project": where.project, "vertex-training:region": where.region}
        if where.endpoint:
            config["vertex-training:apiEndpoint"] = where.endpoint
        program: dict[str, Any] = {
            "name": "acceptance-import",
            "runtime": "yaml",
            "plugins": {"providers": [{"name": "vertex-training", "path": str(REPO / "provider")}]},
            "config": config,
            "resources": {},
        }
        yaml_project = AcceptanceProject.of_yaml(tmp_path, program)
        code = yaml_project.root / "imported.yaml"
        imported = yaml_project.run(
            "import",
            "vertex-training:index:TrainingJob",
            "made-outside",
            outside,
            "--yes",
            "--protect=false",
            "--out",
            str(code),
        ).check()
        assert "1 imported" in imported.output, imported.output
        written = yaml.safe_load(code.read_text())["resources"]
        assert written["made-outside"]["properties"]["job"]["labels"] == where.labels(scenario)
        report(f"pulumi import read {outside} into the program's keys")
        program["resources"] = written
        yaml_project.write_program(program)
        yaml_project.run("preview", "--expect-no-changes").check()
        report("the imported program previews with no change")
        yaml_project.run("destroy", "--yes", "--skip-preview").check()
        assert where.backend().get(outside) is None
        report("destroy deleted the imported job")

    def test_python_package_job_on_the_platform(
        self, where: Target, scenario: str, project: Project, report: Report
    ) -> None:
        """The platform on a fresh project (APIs, bucket, repository, service account) and
        a Python-package job whose package `pulumi up` builds and uploads."""
        if not where.google:
            pytest.skip(
                "needs the pulumi-gcp plugin and Google's Storage, IAM, Service Usage and "
                "Artifact Registry, which have no fake here: runs against Google only"
            )
        package = {
            "python_package": {
                "package_path": "trainer",
                "module": "trainer.task",
                "framework": {"name": "sklearn", "version": "1.7"},
            },
            "args": ["--epochs", "1"],
            "wait": "succeeded",
        }
        project.env["PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION"] = "false"
        project.write_stack(where.stack_config(scenario, {"package": package}, platform=True))
        project.up().check()
        kinds = {r["type"] for r in project.state_resources()}
        for kind in (
            "gcp:projects/service:Service",
            "gcp:storage/bucket:Bucket",
            "gcp:artifactregistry/repository:Repository",
            "gcp:serviceaccount/account:Account",
            "gcp:storage/bucketObject:BucketObject",
        ):
            assert kind in kinds, sorted(kinds)
        report("the platform's APIs, bucket, repository and account exist; the package is uploaded")
        assert project.outputs()["jobs"]["package"]["state"] == states.SUCCEEDED
        report("the package job ran as the platform's account and succeeded")
        project.run("destroy", "--yes", "--skip-preview").check()
        assert [r["type"] for r in project.state_resources()] == []
        report("destroy removed the platform and the job")


class TestCatalogs:
    def test_price_quota_and_image_refresh(
        self, where: Target, scenario: str, tmp_path: Path, report: Report
    ) -> None:
        """A price refresh, a quota read and an image refresh, each written to a scratch
        folder and checked for its shape (never for its figures)."""
        from vertex_training.catalog import cloud_quotas, prices, quotas, registry

        scratch = tmp_path / "scratch"
        cli = [sys.executable, "-m", "vertex_training"]
        refresh = [*cli, "prices", "refresh", "--region", where.region, "--project", where.project]
        refresh += ["--out", str(scratch / "snapshot.json")]
        if where.catalog_endpoint:
            refresh += ["--endpoint", where.catalog_endpoint]
            refresh += ["--compute-endpoint", str(where.compute_endpoint)]
        subprocess.run(refresh, check=True, capture_output=True, text=True, timeout=900)
        snapshot = prices.load_if_present(scratch / "snapshot.json")
        assert snapshot is not None and snapshot.skus and where.region in snapshot.regions
        shape = snapshot.shape_of(MACHINE)
        assert shape is not None and shape.guest_cpus > 0 and shape.memory_gib > 0
        rate = where.rate(snapshot)
        assert rate is not None and rate > 0
        where.prices = scratch / "snapshot.json"
        report(
            f"prices: {len(snapshot.skus):,} SKUs; {MACHINE} has {shape.guest_cpus} vCPUs and "
            f"{shape.memory_gib:g} GiB and a rate in {where.region}"
        )

        metric = quotas.cpu_quota("e2").metric
        limits = cloud_quotas.read_limits(
            where.project, [metric], [where.region], endpoint=where.quotas_endpoint
        )
        limit = limits.get(metric, where.region)
        assert limit is not None and (limit.value is None or limit.value >= 0)
        report(f"quotas: {metric} in {where.region} read ({len(limits.metrics)} metrics listed)")

        images = [*cli, "images", "refresh", "--location", "us"]
        images += ["--out", str(scratch / "images.json")]
        if where.registry_endpoint:
            images += ["--endpoint", where.registry_endpoint]
        subprocess.run(images, check=True, capture_output=True, text=True, timeout=900)
        held = registry.load_snapshot(scratch / "images.json")
        names = held.names()
        assert names and all(name == name.strip().lower() for name in names)
        assert any(name.endswith("-cpu") or "-cpu." in name for name in names), names
        report(f"images: {len(names)} prebuilt training image names in {held.repositories}")


class TestOrphans:
    def test_orphans_of_a_removed_stack(
        self, where: Target, scenario: str, project: Project, report: Report
    ) -> None:
        """`vertex-training jobs orphans` finds the job of a stack removed with `pulumi
        stack rm --force`, not a live stack's nor a job made outside, and deletes it."""
        quick = {**where.container("print('acceptance: quick')"), "wait": "submitted"}
        project.write_stack(where.stack_config(scenario, {"kept": quick}))
        project.up().check()
        removed = dataclasses.replace(project, stack="removed")
        removed.run("stack", "init").check()
        removed.write_stack(where.stack_config(scenario, {"orphaned": quick}))
        removed.up().check()
        removed.run("stack", "rm", "--force", "--yes").check()
        outside = made_outside(where, scenario, "by-hand")
        by_name = {job.display_name: job.name for job in where.jobs_of(scenario)}
        report("a stack removed with `pulumi stack rm --force` left its job behind")

        listed = orphans_command(where, project, "--stack", project.stack)
        assert by_name["orphaned"] in listed and by_name["kept"] not in listed, listed
        assert outside not in listed, listed
        report("orphans lists the removed stack's job, not the live stack's nor the unlabelled")

        deleted = orphans_command(where, project, "--stack", project.stack, "--delete", "--yes")
        assert f"{by_name['orphaned']}: deleted" in deleted, deleted
        left = {job.name for job in where.jobs_of(scenario)}
        assert left == {by_name["kept"], outside}, left
        report("orphans --delete --yes deleted that job alone")

        project.run("destroy", "--yes", "--skip-preview").check()
        where.remove([outside])


def orphans_command(where: Target, project: Project, *args: str) -> str:
    """`vertex-training jobs orphans` run in ``project`` for the run's jobs; its output."""
    done = subprocess.run(
        where.orphans_command(*args),
        cwd=project.root,
        env=project.env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr
