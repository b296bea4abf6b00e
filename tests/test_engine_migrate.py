"""Moving a job from pulumi-gcp's ``gcp.vertex.AiCustomJob`` to the plugin's TrainingJob
on the real engine, as docs/moving-from-pulumi-gcp.md tells it, with the job left running.

The pulumi-gcp provider plugin cannot be installed here (no registry is reached), so the
stack's state is written with ``pulumi stack import``: the state a `pulumi up` of the
YAML program ``GCP_PROGRAM`` leaves, an AiCustomJob (its inputs and outputs as
pulumi-gcp's schema names them) under the default ``pulumi:providers:gcp``, its job
submitted to the fake Vertex AI service first, as pulumi-gcp would have submitted it.
Then the documented steps: ``pulumi state delete`` of both entries (which loads no
plugin and calls no provider), the job declared as the plugin's TrainingJob and taken
over, by ``pulumi import`` or by ``adopt:``, and a preview that shows nothing to do. The
fake counts the calls: one submission (pulumi-gcp's), no cancel, no delete.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.clients import job_service_client
from tests.engine import Project, Result
from tests.test_engine_plugin import PLUGIN
from tests.test_engine_plugin import missing as plugin_missing
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
PARENT = "projects/test-project/locations/us-central1"
#: The Pulumi project and stack of the program that declared the job with pulumi-gcp.
PROJECT, STACK = "training", "test"
STACK_URN = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:pulumi:Stack::{PROJECT}-{STACK}"
#: The default provider pulumi-gcp 10.5.0 (the release that added AiCustomJob) records.
GCP_PROVIDER_URN = f"urn:pulumi:{STACK}::{PROJECT}::pulumi:providers:gcp::default_10_5_0"
GCP_PROVIDER_ID = "0b7a0ee6-2f44-4d10-9a0b-3c1f0b1c5e21"
GCP_JOB_TYPE = "gcp:vertex/aiCustomJob:AiCustomJob"
GCP_JOB_URN = f"urn:pulumi:{STACK}::{PROJECT}::{GCP_JOB_TYPE}::train"
#: The label pulumi-gcp 8 and later give what they create, unless the provider's
#: ``addPulumiAttributionLabel`` is false (in ``effectiveLabels``, not ``labels``).
ATTRIBUTION = {"goog-pulumi-provisioned": "true"}
#: The job as the user declared it with pulumi-gcp (AiCustomJob's inputs).
GCP_JOB: dict[str, Any] = {
    "displayName": "train",
    "region": "us-central1",
    "labels": {"team": "vision"},
    "jobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "n1-standard-4"},
                "replicaCount": 1,
                "containerSpec": {"imageUri": IMAGE, "args": ["--epochs", "3"]},
            }
        ]
    },
}
#: The same job in the plugin's keys, for the ``adopt:`` path (docs' mapping table).
TRAINING_JOB = {
    "displayName": "train",
    "image": IMAGE,
    "machine": "n1-standard-4",
    "args": ["--epochs", "3"],
    "labels": {"team": "vision"},
}
#: A job that runs through the whole test.
RUNS_ON = {"queued_s": 0.2, "pending_s": 0.2, "run_s": 600.0}


def program(fake: FakeVertex, resources: dict[str, Any]) -> dict[str, Any]:
    """The project's Pulumi.yaml: a YAML program naming the plugin, pointed at ``fake``."""
    return {
        "name": PROJECT,
        "runtime": "yaml",
        "plugins": {"providers": [{"name": "vertex-training", "path": str(PLUGIN)}]},
        "config": {
            "vertex-training:apiEndpoint": fake.address,
            "vertex-training:project": "test-project",
            "vertex-training:region": "us-central1",
        },
        "resources": resources,
    }


#: The program as it was, with pulumi-gcp (never run here: its plugin is not installed).
GCP_PROGRAM = {"train": {"type": "gcp:vertex:AiCustomJob", "properties": GCP_JOB}}


def submit_as_pulumi_gcp(fake: FakeVertex, labels: dict[str, str]) -> str:
    """Submit ``GCP_JOB`` with ``labels`` (the user's, and pulumi-gcp's attribution label
    where it adds one) to ``fake``, as pulumi-gcp's create does; the job's resource name."""
    spec = GCP_JOB["jobSpec"]["workerPoolSpecs"][0]
    with job_service_client(fake.address) as client:
        job = client.create_custom_job(
            parent=PARENT,
            custom_job={
                "display_name": GCP_JOB["displayName"],
                "labels": labels,
                "job_spec": {
                    "worker_pool_specs": [
                        {
                            "machine_spec": {"machine_type": spec["machineSpec"]["machineType"]},
                            "replica_count": spec["replicaCount"],
                            "container_spec": {
                                "image_uri": IMAGE,
                                "args": spec["containerSpec"]["args"],
                            },
                        }
                    ]
                },
            },
        )
    return str(job.name)


def gcp_state(
    project: Project, job_name: str, labels: dict[str, str], *, protect: bool
) -> dict[str, Any]:
    """The stack's deployment after pulumi-gcp's `pulumi up` of ``GCP_PROGRAM``: the stack,
    the default gcp provider, the AiCustomJob of ``job_name`` (its ID and ``name`` output
    the job's resource name, ``effectiveLabels`` the job's ``labels``)."""
    exported: dict[str, Any] = json.loads(project.run("stack", "export").check().stdout)
    provider_inputs = {"project": "test-project", "region": "us-central1", "version": "10.5.0"}
    if "goog-pulumi-provisioned" not in labels:
        provider_inputs["addPulumiAttributionLabel"] = "false"
    inputs = {"__defaults": [], **GCP_JOB, "project": "test-project"}
    outputs = {
        **GCP_JOB,
        "project": "test-project",
        "id": job_name,
        "name": job_name,
        "state": "JOB_STATE_RUNNING",
        "effectiveLabels": labels,
        "pulumiLabels": labels,
    }
    exported["deployment"]["resources"] = [
        {"urn": STACK_URN, "custom": False, "type": "pulumi:pulumi:Stack"},
        {
            "urn": GCP_PROVIDER_URN,
            "custom": True,
            "id": GCP_PROVIDER_ID,
            "type": "pulumi:providers:gcp",
            "inputs": provider_inputs,
            "outputs": provider_inputs,
        },
        {
            "urn": GCP_JOB_URN,
            "custom": True,
            "id": job_name,
            "type": GCP_JOB_TYPE,
            "inputs": inputs,
            "outputs": outputs,
            "parent": STACK_URN,
            "provider": f"{GCP_PROVIDER_URN}::{GCP_PROVIDER_ID}",
            "protect": protect,
        },
    ]
    return exported


def stack_of_pulumi_gcp(
    tmp: Path, fake: FakeVertex, labels: dict[str, str], *, protect: bool = False
) -> tuple[Project, str]:
    """A stack whose state records pulumi-gcp's AiCustomJob of a job just submitted to
    ``fake`` with ``labels``, written with `pulumi stack import`; the job's name."""
    job_name = submit_as_pulumi_gcp(fake, labels)
    project = Project.of_yaml(tmp, program(fake, GCP_PROGRAM))
    state = tmp / "gcp-state.json"
    state.write_text(json.dumps(gcp_state(project, job_name, labels, protect=protect)))
    project.run("stack", "import", "--file", str(state)).check()
    types = {r["type"] for r in project.state_resources()}
    assert {GCP_JOB_TYPE, "pulumi:providers:gcp"} <= types
    return project, job_name


def drop_gcp_entries(project: Project, *, force: bool = False) -> None:
    """The doc's step 2: the AiCustomJob's entry, then the gcp provider's, out of the
    state; no plugin loaded, no provider called."""
    project.run("state", "delete", GCP_JOB_URN, "--yes", *(["--force"] if force else [])).check()
    project.run("state", "delete", GCP_PROVIDER_URN, "--yes").check()
    assert [r["type"] for r in project.state_resources()] == ["pulumi:pulumi:Stack"]


def steps(preview: Result) -> dict[str, str]:
    """Each resource's step in a `pulumi preview --json`, by its type and name."""
    return {
        "::".join(step["urn"].split("::")[-2:]): step["op"]
        for step in json.loads(preview.stdout)["steps"]
    }


def the_job_ran_on(fake: FakeVertex, job_name: str, project: Project) -> None:
    """The doc's last checks: the one job still runs, submitted once, never cancelled or
    deleted; the plugin's TrainingJob records it; the next preview shows no change."""
    project.run("preview", "--expect-no-changes").check()
    [job] = [r for r in project.state_resources() if r["type"].startswith("vertex-training:")]
    assert (job["type"], job["id"]) == ("vertex-training:index:TrainingJob", job_name)
    methods = [call.method for call in fake.calls]
    assert methods.count("CreateCustomJob") == 1, methods
    assert not {"CancelCustomJob", "DeleteCustomJob"} & set(methods), methods
    assert list(fake.jobs) == [job_name]
    assert fake.jobs[job_name].state.name == "JOB_STATE_RUNNING"


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    if reason := plugin_missing():
        pytest.skip(reason)
    with FakeVertex(**RUNS_ON) as fake:
        yield fake


class TestFromPulumiGcp:
    """A job of pulumi-gcp's AiCustomJob, moved to the plugin's TrainingJob."""

    def test_a_job_with_pulumi_gcps_label_is_imported(
        self, tmp_path: Path, fake: FakeVertex
    ) -> None:
        """pulumi-gcp's attribution label is read past: `pulumi import` writes the job's
        own keys (a protected entry needs `--force` to leave the state), and nothing is
        submitted again."""
        project, job_name = stack_of_pulumi_gcp(
            tmp_path, fake, {"team": "vision", **ATTRIBUTION}, protect=True
        )
        refused = project.run("state", "delete", GCP_JOB_URN, "--yes")
        assert refused.returncode != 0 and "--force" in refused.output, refused.output
        drop_gcp_entries(project, force=True)

        project.write_program(program(fake, {}))
        code = project.root / "train.yaml"
        project.run(
            "import",
            "vertex-training:index:TrainingJob",
            "train",
            job_name,
            "--protect=false",
            "--out",
            str(code),
            "--yes",
        ).check()
        written = yaml.safe_load(code.read_text())["resources"]
        assert written["train"]["properties"]["job"]["labels"] == {"team": "vision"}, written
        project.write_program(program(fake, written))
        the_job_ran_on(fake, job_name, project)

    def test_adopt_takes_the_job_over_where_an_import_is_not_wanted(
        self, tmp_path: Path, fake: FakeVertex
    ) -> None:
        """`adopt:` on a declared job takes the running one over: a create that submits
        nothing, then no change."""
        project, job_name = stack_of_pulumi_gcp(tmp_path, fake, {"team": "vision", **ATTRIBUTION})
        drop_gcp_entries(project)
        adopted = {**TRAINING_JOB, "adopt": job_name}
        train = {"type": "vertex-training:TrainingJob", "properties": {"job": adopted}}
        project.write_program(program(fake, {"train": train}))
        preview = steps(project.run("preview", "--json").check())
        assert preview == {
            f"pulumi:pulumi:Stack::{PROJECT}-{STACK}": "same",
            "vertex-training:index:TrainingJob::train": "create",
        }, preview
        project.run("up", "--yes", "--skip-preview").check()
        the_job_ran_on(fake, job_name, project)

    def test_a_job_without_the_label_is_imported(self, tmp_path: Path, fake: FakeVertex) -> None:
        """With `addPulumiAttributionLabel: false`, `pulumi import` writes the job's keys
        and the program that declares them shows no change."""
        project, job_name = stack_of_pulumi_gcp(tmp_path, fake, {"team": "vision"})
        drop_gcp_entries(project)

        project.write_program(program(fake, {}))
        code = project.root / "train.yaml"
        project.run(
            "import",
            "vertex-training:index:TrainingJob",
            "train",
            job_name,
            "--protect=false",
            "--out",
            str(code),
            "--yes",
        ).check()
        written = yaml.safe_load(code.read_text())["resources"]
        # A display name that is the resource's name is the default, and left out.
        keys = {key: value for key, value in TRAINING_JOB.items() if key != "displayName"}
        assert written["train"]["properties"]["job"] == keys, written
        project.write_program(program(fake, written))
        the_job_ran_on(fake, job_name, project)
