"""`vertex-training review`: the plan of a change, read from `pulumi preview --json`.

The documents here have the shape the engine prints (its preview digest: ``config``,
``steps`` with ``op``, ``urn``, ``oldState``/``newState`` and their ``inputs``,
``replaceReasons``, ``detailedDiff``; ``diagnostics``), with each job resource's inputs
as the engine records them after its provider's check: the plugin's properties in the
schema's naming, and the dynamic provider's recorded ``name``/``config``/``stack``. The
engine tests (tests/test_engine_review.py) read real previews of TypeScript, YAML and
Python programs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli import run_cli
from tests.prices import fake_snapshot
from vertex_training.catalog.prices import save_snapshot
from vertex_training.errors import SpecError
from vertex_training.preview.review import review_preview
from vertex_training.review.plan import DELETE, INVALID, REPLACE, SUBMIT, UNCHANGED, to_markdown
from vertex_training.review.policies import parse_policies

IMAGE = "us-docker.pkg.dev/acme-ml-dev/trainers/mnist:1"
STACK = "dev"
PLUGIN = "vertex-training:index:TrainingJob"
TUNING = "vertex-training:index:HyperparameterTuningJob"
DYNAMIC = "pulumi-python:dynamic/vertex:TrainingJob"
#: The engine's sentinel for a value a preview cannot know yet.
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
EXIT_RULE_FAILED, EXIT_INVALID = 1, 2


def urn(type_: str, name: str) -> str:
    return f"urn:pulumi:{STACK}::training::{type_}::{name}"


def plugin_job(**keys: Any) -> dict[str, Any]:
    """A plugin job's checked inputs: its keys under ``job``, the provider's defaults."""
    job = {"image": IMAGE, "machine": "n1-standard-8", **keys}
    return {"backend": "vertex", "job": job, "project": "acme-ml-dev", "region": "us-central1"}


def dynamic_job(name: str, **keys: Any) -> dict[str, Any]:
    """A Python program's job as its dynamic provider's check records it (from code)."""
    return {
        "__provider": "[secret]",
        "name": name,
        "schema": 4,
        "config": {"image": IMAGE, "machine": "n1-standard-8", **keys},
        "stack": {
            "config_from": "program",
            "project": "acme-ml-dev",
            "region": "us-central1",
            "pulumi_project": "training",
            "stack": STACK,
        },
    }


def step(
    op: str,
    type_: str,
    name: str,
    old: dict[str, Any] | None = None,
    new: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    found: dict[str, Any] = {"op": op, "urn": urn(type_, name), **extra}
    for key, inputs in (("oldState", old), ("newState", new)):
        if inputs is not None:
            found[key] = {"urn": urn(type_, name), "type": type_, "inputs": inputs}
    return found


def replaced(*paths: str) -> dict[str, Any]:
    return {path: {"kind": "update-replace", "inputDiff": True} for path in paths}


def preview(*steps: dict[str, Any], **extra: Any) -> dict[str, Any]:
    stack = step("same", "pulumi:pulumi:Stack", f"training-{STACK}", {}, {})
    return {"config": {}, "steps": [stack, *steps], **extra}


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    path = tmp_path / "snapshot.json"
    save_snapshot(fake_snapshot(), path)
    return path


def by_name(document: dict[str, Any], prices: Path | None = None, **options: Any) -> Any:
    plan = review_preview(document, prices_file=prices, **options)
    return plan, {job.name: job for job in plan.jobs}


class TestPluginJobs:
    """A TypeScript, Go or YAML program's jobs, as the plugin's resources."""

    def change(self) -> dict[str, Any]:
        gpu = {"type": "NVIDIA_TESLA_T4", "count": 2}
        return preview(
            step("create", PLUGIN, "new", None, plugin_job()),
            step(
                "replace",
                PLUGIN,
                "train",
                plugin_job(wait="submitted"),
                plugin_job(machine="n1-standard-16", accelerator=gpu, wait="succeeded"),
                replaceReasons=["job"],
                detailedDiff={
                    **replaced("job.machine", "job.accelerator"),
                    "job.wait": {"kind": "update", "inputDiff": True},
                },
            ),
            step("delete", PLUGIN, "old", plugin_job(), None),
            step("same", PLUGIN, "keep", plugin_job(), plugin_job()),
        )

    def test_each_job_has_its_change_pools_and_cost(self, prices: Path) -> None:
        plan, jobs = by_name(self.change(), prices)
        assert {name: job.change for name, job in jobs.items()} == {
            "new": SUBMIT,
            "train": REPLACE,
            "old": DELETE,
            "keep": UNCHANGED,
        }
        assert plan.stack == STACK
        assert jobs["train"].job.worker_pools[0].accelerator.count == 2
        assert jobs["new"].estimate.max_usd is not None
        assert jobs["old"].estimate is None  # a deleted job costs nothing more
        total, unknown = plan.change_cost()
        assert unknown == []
        assert total == pytest.approx(jobs["new"].estimate.max_usd + jobs["train"].estimate.max_usd)

    def test_the_keys_that_force_the_replacement_are_told_from_those_that_update(
        self, prices: Path
    ) -> None:
        plan, jobs = by_name(self.change(), prices)
        keys = {k.key: (k.before, k.after, k.replaces) for k in jobs["train"].keys}
        assert keys == {
            "job.accelerator.count": ("(unset)", "2", True),
            "job.accelerator.type": ("(unset)", "NVIDIA_TESLA_T4", True),
            "job.machine": ("n1-standard-8", "n1-standard-16", True),
            "job.wait": ("submitted", "succeeded", False),
        }
        text = to_markdown(plan)
        assert (
            "- `train` (replace): `job.accelerator.count` (unset) -> 2 (forces replacement); "
            "`job.accelerator.type` (unset) -> NVIDIA_TESLA_T4 (forces replacement); "
            "`job.machine` n1-standard-8 -> n1-standard-16 (forces replacement); "
            "`job.wait` submitted -> succeeded\n"
        ) in text
        assert (
            "  - submitted again because `job.accelerator.count`, `job.accelerator.type`, "
            "`job.machine` changed (Vertex AI cannot update a submitted job: the running one "
            "is cancelled and deleted); `job.wait` alone would only update it\n"
        ) in text

    def test_the_comment_gives_the_snapshot_and_what_the_change_may_cost(
        self, prices: Path
    ) -> None:
        plan, _ = by_name(self.change(), prices)
        text = to_markdown(plan)
        total, _ = plan.change_cost()
        assert text.startswith(
            "### `dev`: what this change does (`pulumi preview` against the stack's state)\n"
        )
        assert "prices read 2026-11-20" in text
        summary = "1 to submit, 1 to replace, 1 to delete; the jobs this change submits cost"
        assert f"{summary} at most ${total:,.2f}." in text
        assert "| `train` | replace | primary: 1 x n1-standard-16 + 2 x NVIDIA_TESLA_T4 |" in text

    def test_a_secret_stays_hidden_and_the_job_still_reads(self, prices: Path) -> None:
        document = preview(
            step("create", PLUGIN, "train", None, plugin_job(env={"TOKEN": "[secret]"}))
        )
        _, jobs = by_name(document, prices)
        assert jobs["train"].job is not None
        assert jobs["train"].estimate.max_usd is not None

    def test_an_argument_from_another_resource_leaves_the_job_priced(self, prices: Path) -> None:
        document = preview(
            step("create", PLUGIN, "evaluate", None, plugin_job(args=["--model-of", UNKNOWN]))
        )
        _, jobs = by_name(document, prices)
        assert jobs["evaluate"].job is not None
        assert jobs["evaluate"].estimate.max_usd is not None

    def test_a_job_whose_platform_is_still_to_be_made_is_unknown_and_said_so(
        self, prices: Path
    ) -> None:
        inputs = {**plugin_job(), "project": UNKNOWN}
        plan, jobs = by_name(preview(step("create", PLUGIN, "train", None, inputs)), prices)
        assert jobs["train"].job is None
        assert jobs["train"].unknown == (
            "unknown until pulumi up: its project is not known before pulumi up "
            "(a resource still to be made)"
        )
        assert plan.change_cost() == (None, ["train"])
        assert "| `train` | submit |  | unknown until pulumi up: its project" in to_markdown(plan)

    def test_a_tuning_job_is_priced_for_its_trials(self, prices: Path) -> None:
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.001, "max": 1.0}},
            "maxTrials": 4,
            "parallelTrials": 2,
        }
        document = preview(step("create", TUNING, "sweep", None, plugin_job(study=study)))
        _, jobs = by_name(document, prices)
        assert jobs["sweep"].estimate.trials == 4

    def test_a_check_failure_makes_the_job_invalid_with_its_property_path(self) -> None:
        message = (
            "error: vertex-training:index:TrainingJob resource 'train': property job.machine "
            "value {<nil>} has a problem: job.machine: e2-standrd-4 is not a machine type "
            "Vertex AI custom training offers (got 'e2-standrd-4')\n"
        )
        document = preview(
            diagnostics=[{"urn": urn(PLUGIN, "train"), "message": message, "severity": "error"}]
        )
        plan, jobs = by_name(document)
        assert jobs["train"].change == INVALID
        assert plan.invalid
        assert (
            "- `train` is invalid: job.machine: e2-standrd-4 is not a machine type Vertex AI "
            "custom training offers (got 'e2-standrd-4')"
        ) in to_markdown(plan)

    def test_a_warning_about_a_job_is_shown_beside_it(self) -> None:
        warning = "warning: job.image: this prebuilt image is past its end of support"
        document = preview(
            step("same", PLUGIN, "keep", plugin_job(), plugin_job()),
            diagnostics=[{"urn": urn(PLUGIN, "keep"), "message": warning, "severity": "warning"}],
        )
        plan, _ = by_name(document)
        assert f"- :warning: `keep`: {warning}" in to_markdown(plan)

    def test_a_no_change_preview_submits_nothing(self, prices: Path) -> None:
        document = preview(step("same", PLUGIN, "keep", plugin_job(), plugin_job()))
        plan, _ = by_name(document, prices)
        assert "0 to submit, 0 to replace, 0 to delete; this change submits no job." in (
            to_markdown(plan)
        )


class TestPythonJobs:
    """A Python program's dynamic jobs, declared in code or from a stack file."""

    def test_a_replacement_names_the_keys_its_provider_gives(self, prices: Path) -> None:
        document = preview(
            step("create", DYNAMIC, "new", None, dynamic_job("new")),
            step(
                "replace",
                DYNAMIC,
                "train",
                dynamic_job("train", labels={"team": "ml"}),
                dynamic_job("train", machine="n1-standard-16", labels={"team": "ai"}),
                replaceReasons=["labels", "machine", "request"],
            ),
        )
        _, jobs = by_name(document, prices)
        assert jobs["new"].change == SUBMIT and jobs["new"].estimate.max_usd is not None
        assert [(k.key, k.replaces) for k in jobs["train"].keys] == [
            ("labels.team", True),
            ("machine", True),
        ]

    def test_the_stack_settings_show_under_settings(self, prices: Path) -> None:
        moved = dynamic_job("train")
        moved["stack"] = {**moved["stack"], "region": "europe-west4"}
        document = preview(
            step(
                "replace", DYNAMIC, "train", dynamic_job("train"), moved, replaceReasons=["request"]
            )
        )
        _, jobs = by_name(document, prices)
        assert [(k.key, k.before, k.after) for k in jobs["train"].keys] == [
            ("settings.region", "us-central1", "europe-west4")
        ]


class TestRules:
    def test_the_stacks_own_rules_are_read_from_the_previews_config(self, prices: Path) -> None:
        rules = {"required_labels": {"labels": ["team"]}}
        document = preview(step("create", PLUGIN, "new", None, plugin_job()))
        document["config"] = {"vertex-training:policies": json.dumps(rules)}
        plan, _ = by_name(document, prices)
        [failed] = plan.mandatory_failures
        assert (failed.rule, failed.job) == ("required_labels", "new")

    def test_a_primitive_role_in_the_program_fails_its_rule(self) -> None:
        grant = step(
            "create",
            "gcp:projects/iAMMember:IAMMember",
            "owner",
            None,
            {"member": "user:ana@example.com", "role": "roles/owner", "project": "acme-ml-dev"},
        )
        document = preview(grant)
        document["config"] = {"vertex-training:policies": json.dumps({"no_primitive_roles": {}})}
        plan, _ = by_name(document)
        [failed] = plan.mandatory_failures
        assert "roles/owner" in failed.message


class TestCommand:
    def write(self, tmp_path: Path, document: dict[str, Any]) -> Path:
        path = tmp_path / "preview.json"
        path.write_text(json.dumps(document))
        return path

    def test_a_mandatory_rule_from_a_pack_config_exits_1(
        self, tmp_path: Path, prices: Path
    ) -> None:
        path = self.write(tmp_path, preview(step("create", PLUGIN, "new", None, plugin_job())))
        config = tmp_path / "rules.json"
        config.write_text(json.dumps({"require_timeout": {"enforcementLevel": "mandatory"}}))
        result = run_cli(
            "review", str(path), "--prices", str(prices), "--policy-pack-config", str(config)
        )
        assert result.returncode == EXIT_RULE_FAILED, result.stderr
        assert "- :x: require_timeout (mandatory) `new`:" in result.stdout

    def test_a_mistake_in_the_pack_config_exits_2_naming_it(self, tmp_path: Path) -> None:
        path = self.write(tmp_path, preview())
        config = tmp_path / "rules.json"
        config.write_text(json.dumps({"max_cost_per_job": {"enforcementLevel": "sometimes"}}))
        result = run_cli("review", str(path), "--policy-pack-config", str(config))
        assert result.returncode == EXIT_INVALID
        assert f"{config}.max_cost_per_job.enforcementLevel: " in result.stderr

    def test_what_is_no_preview_is_refused_with_the_fix(self, tmp_path: Path) -> None:
        path = tmp_path / "preview.json"
        path.write_text("Previewing update (dev):\n")
        result = run_cli("review", str(path))
        assert result.returncode == EXIT_INVALID
        assert "give the output of `pulumi preview --json --stack <stack>`" in result.stderr

    def test_json_for_scripts_and_stdin(self, tmp_path: Path, prices: Path) -> None:
        document = preview(step("create", PLUGIN, "new", None, plugin_job()))
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "vertex_training",
                "review",
                "-",
                "--format",
                "json",
                "--prices",
                str(prices),
            ],
            input=json.dumps(document),
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        parsed = json.loads(result.stdout)
        assert [(j["name"], j["change"]) for j in parsed["jobs"]] == [("new", "submit")]
        assert parsed["change_max_usd"] == pytest.approx(parsed["jobs"][0]["estimate"]["max_usd"])

    def test_the_snapshot_the_programs_config_names_is_used(
        self, tmp_path: Path, prices: Path
    ) -> None:
        document = preview(step("create", PLUGIN, "new", None, plugin_job()))
        document["config"] = {"vertex-training:prices": str(prices)}
        plan, jobs = by_name(document)
        assert plan.prices is not None and jobs["new"].estimate.max_usd is not None


# pulumi-gcp 10.5.0's Vertex AI resources, as its registry pages give their inputs
# (www.pulumi.com/registry/packages/gcp/api-docs/vertex/aicustomjob/, aitrainingpipeline/,
# aipersistentresource/). The pulumi-gcp provider itself cannot be installed here: these
# steps are shaped as the engine records a bridged provider's inputs (``__defaults``
# included), not taken from a real preview.
GCP_JOB = "gcp:vertex/aiCustomJob:AiCustomJob"
GCP_PIPELINE = "gcp:vertex/aiTrainingPipeline:AiTrainingPipeline"
GCP_POOL = "gcp:vertex/aiPersistentResource:AiPersistentResource"


def gcp_job(hours: int = 24, **spec: Any) -> dict[str, Any]:
    """An AiCustomJob's inputs: one A100 worker for ``hours``."""
    pool = {
        "replicaCount": "1",
        "machineSpec": {
            "machineType": "a2-highgpu-1g",
            "acceleratorType": "NVIDIA_TESLA_A100",
            "acceleratorCount": 1,
        },
        "containerSpec": {"imageUri": IMAGE, "args": ["--epochs", "10"]},
    }
    job_spec = {"workerPoolSpecs": [pool], "scheduling": {"timeout": f"{hours * 3600}s"}, **spec}
    return {
        "__defaults": [],
        "displayName": "bert-finetune",
        "region": "us-central1",
        "project": "acme-ml-dev",
        "labels": {"team": "nlp"},
        "jobSpec": job_spec,
    }


def gcp_pool(**scaling: Any) -> dict[str, Any]:
    """An AiPersistentResource's inputs: two n1-standard-8 with a T4 each."""
    pool: dict[str, Any] = {
        "id": "gpu-pool",
        "replicaCount": "2",
        "machineSpec": {
            "machineType": "n1-standard-8",
            "acceleratorType": "NVIDIA_TESLA_T4",
            "acceleratorCount": 1,
        },
        "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
    }
    if scaling:
        pool["autoscalingSpec"] = scaling
    return {
        "__defaults": [],
        "name": "shared-pool",
        "location": "us-central1",
        "project": "acme-ml-dev",
        "resourcePools": [pool],
    }


class TestOtherProviders:
    """Vertex AI training that pulumi-gcp declares is priced, policed and counted."""

    def test_a_custom_job_of_pulumi_gcp_is_priced_as_this_projects_would_be(
        self, prices: Path
    ) -> None:
        """An AiCustomJob reads as the same job of this project: same pools, same cost."""
        ours = plugin_job(
            machine="a2-highgpu-1g",
            accelerator={"type": "NVIDIA_TESLA_A100", "count": 1},
            args=["--epochs", "10"],
            scheduling={"timeout": "24h"},
        )
        plan, jobs = by_name(
            preview(
                step("create", GCP_JOB, "bert", None, gcp_job()),
                step("create", PLUGIN, "ours", None, ours),
            ),
            prices,
        )
        bert, mine = jobs["bert"], jobs["ours"]
        assert bert.change == SUBMIT and bert.declared_by == "pulumi-gcp `gcp.vertex.AiCustomJob`"
        assert bert.estimate.hourly_usd == pytest.approx(mine.estimate.hourly_usd)
        assert bert.estimate.max_usd == pytest.approx(mine.estimate.hourly_usd * 24)
        assert plan.change_cost() == (pytest.approx(2 * bert.estimate.max_usd), [])
        text = to_markdown(plan)
        assert (
            "| `bert` (pulumi-gcp `gcp.vertex.AiCustomJob`) | submit | "
            "primary: 1 x a2-highgpu-1g + 1 x NVIDIA_TESLA_A100 |" in text
        )
        assert "this change submits no job" not in text

    def test_a_change_whose_only_step_is_another_providers_job_submits_it(
        self, prices: Path
    ) -> None:
        """Alone in a change, an AiCustomJob is the job it submits, held to the rules."""
        document = preview(step("create", GCP_JOB, "bert", None, gcp_job()))
        rules = {"max_cost_per_change": {"usd": 10}, "required_labels": {"labels": ["cost-center"]}}
        plan, _ = by_name(document, prices, policies=parse_policies(rules))
        text = to_markdown(plan)
        assert (
            "1 to submit, 0 to replace, 0 to delete; the jobs this change submits cost at most $"
            in text
        )
        failed = {r.rule: r.message for r in plan.rules if not r.passed}
        assert "bert" in failed["max_cost_per_change"]
        assert "lacks the required label cost-center: add bert.labels" in failed["required_labels"]

    def test_a_persistent_resource_is_priced_while_it_exists_and_counted_for_a_month(
        self, prices: Path
    ) -> None:
        """No timeout bounds a persistent resource: its rate, and a month in the total."""
        document = preview(
            step("create", GCP_JOB, "bert", None, gcp_job()),
            step("create", GCP_POOL, "pool", None, gcp_pool()),
        )
        rules = {"max_cost_per_change": {"usd": 100}}
        plan, jobs = by_name(document, prices, policies=parse_policies(rules))
        pool = jobs["pool"]
        assert pool.kind == "persistent resource" and pool.pools == [
            "gpu-pool: 2 x n1-standard-8 + 1 x NVIDIA_TESLA_T4"
        ]
        assert pool.estimate.until_deleted
        assert pool.estimate.max_usd == pytest.approx(pool.estimate.hourly_usd * 730)
        total, _ = plan.change_cost()
        assert total == pytest.approx(jobs["bert"].estimate.max_usd + pool.estimate.max_usd)
        text = to_markdown(plan)
        assert "persistent resources: 1 to create" in text
        assert "for as long as it exists, whether a job runs or not (no timeout bounds it)" in text
        [cost_rule] = [r for r in plan.rules if r.rule == "max_cost_per_change"]
        assert not cost_rule.passed and "pool" in cost_rule.message

    def test_autoscaling_is_priced_at_the_most_machines(self, prices: Path) -> None:
        """A scaling pool is priced at its most replicas, and the table says its range."""
        fixed = by_name(preview(step("create", GCP_POOL, "p", None, gcp_pool())), prices)[1]["p"]
        scaling = gcp_pool(minReplicaCount="1", maxReplicaCount="4")
        scaled = by_name(preview(step("create", GCP_POOL, "p", None, scaling)), prices)[1]["p"]
        assert scaled.estimate.hourly_usd == pytest.approx(fixed.estimate.hourly_usd * 2)
        assert "gpu-pool: scales 1 to 4" in scaled.pools

    def test_a_job_on_a_persistent_resource_is_not_charged_twice(self, prices: Path) -> None:
        """Google bills the persistent resource, not the jobs that run on it."""
        on_pool = plugin_job(persistent_resource_id="shared-pool")
        theirs = gcp_job(persistentResourceId="shared-pool")
        plan, jobs = by_name(
            preview(
                step("create", PLUGIN, "ours", None, on_pool),
                step("create", GCP_JOB, "theirs", None, theirs),
            ),
            prices,
        )
        for name in ("ours", "theirs"):
            assert jobs[name].estimate.max_usd == 0.0
            assert jobs[name].estimate.on_persistent_resource == "shared-pool"
        assert (
            "runs on the persistent resource `shared-pool`: billed as that resource"
            in to_markdown(plan)
        )

    def test_a_training_pipeline_reads_its_task_inputs_from_their_json(self, prices: Path) -> None:
        """AiTrainingPipeline's trainingTaskInputs (a JSON text) are the job it runs."""
        spec = gcp_job()["jobSpec"]
        pipeline = {
            "displayName": "bert-pipeline",
            "region": "us-central1",
            "project": "acme-ml-dev",
            "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/custom_task_1.0.0.yaml",
            "trainingTaskInputs": json.dumps(spec),
        }
        _, jobs = by_name(preview(step("create", GCP_PIPELINE, "pipe", None, pipeline)), prices)
        custom = by_name(preview(step("create", GCP_JOB, "bert", None, gcp_job())), prices)[1][
            "bert"
        ]
        assert jobs["pipe"].declared_by == "pulumi-gcp `gcp.vertex.AiTrainingPipeline`"
        assert jobs["pipe"].estimate.max_usd == pytest.approx(custom.estimate.max_usd)

    def test_what_the_review_cannot_read_is_listed_with_the_reason(self, prices: Path) -> None:
        """A job the review cannot read is not reviewed, never dropped; its cost unknown."""
        odd = gcp_job(futureField={"x": 1})
        automl = {
            "displayName": "tables",
            "region": "us-central1",
            "trainingTaskDefinition": "gs://google-cloud-aiplatform/schema/trainingjob/definition/automl_tables_1.0.0.yaml",
            "trainingTaskInputs": "{}",
        }
        unknown = {**gcp_job(), "project": UNKNOWN}
        plan, jobs = by_name(
            preview(
                step("create", GCP_JOB, "odd", None, odd),
                step("create", GCP_PIPELINE, "automl", None, automl),
                step("create", GCP_JOB, "later", None, unknown),
            ),
            prices,
        )
        assert "jobSpec.futureField" in jobs["odd"].not_reviewed
        assert "neither the custom task nor the tuning task" in jobs["automl"].not_reviewed
        assert jobs["later"].not_reviewed == "its project is not known before pulumi up"
        assert plan.change_cost() == (None, ["automl", "later", "odd"])
        text = to_markdown(plan)
        assert (
            "| `odd` (pulumi-gcp `gcp.vertex.AiCustomJob`) | submit |  | "
            "not reviewed: its inputs hold" in text
        )

    def test_a_step_with_no_urn_is_named_not_a_traceback(self, prices: Path) -> None:
        """A malformed step is refused naming the step and what to give instead."""
        broken = {"op": "create", "newState": {"type": GCP_JOB, "inputs": gcp_job()}}
        with pytest.raises(SpecError) as raised:
            review_preview(preview(broken), prices_file=prices)
        [issue] = raised.value.issues
        assert issue.key == "review PREVIEW steps[1].newState.urn"
        assert "names no Pulumi resource URN (got None)" in issue.message


class TestWhatAChangeDoesToCost:
    """A replaced job's cost before and after; a deleted one's; a label-only replace."""

    def change(self) -> dict[str, Any]:
        t4 = {"type": "NVIDIA_TESLA_T4", "count": 2}
        a100 = {"type": "NVIDIA_TESLA_A100", "count": 8}
        return preview(
            step(
                "replace",
                PLUGIN,
                "train",
                plugin_job(machine="n1-standard-8", accelerator=t4, scheduling={"timeout": "24h"}),
                plugin_job(
                    machine="a2-highgpu-8g", accelerator=a100, scheduling={"timeout": "24h"}
                ),
                replaceReasons=["job"],
                detailedDiff=replaced("job.machine", "job.accelerator"),
            ),
            step("delete", PLUGIN, "old", plugin_job(), None),
            step(
                "replace",
                PLUGIN,
                "eval",
                plugin_job(labels={"owner": "ana"}),
                plugin_job(labels={"owner": "bo"}),
                replaceReasons=["job"],
                detailedDiff=replaced("job.labels.owner"),
            ),
        )

    def test_a_replaced_job_shows_its_rate_before_and_after(self, prices: Path) -> None:
        """Old and new hourly rate and most, and the factor, side by side."""
        plan, jobs = by_name(self.change(), prices)
        train = jobs["train"]
        was, now = train.before.hourly_usd, train.estimate.hourly_usd
        assert now > was
        text = to_markdown(plan)
        assert f"was ${was:,.2f}/h, at most ${train.before.max_usd:,.2f}; now ${now:,.2f}/h" in text
        assert f"(x{now / was:.3g} the rate)" in text

    def test_a_deleted_job_says_it_is_cancelled_and_what_it_stops_costing(
        self, prices: Path
    ) -> None:
        """A deleted job: cancelled if it runs, then deleted, and the rate it stops."""
        plan, jobs = by_name(self.change(), prices)
        rate = jobs["old"].before.hourly_usd
        assert (
            f"cancelled if it still runs, then deleted: stops up to ${rate:,.2f}/h"
            in to_markdown(plan)
        )

    def test_the_summary_gives_the_changes_total_before_and_after(self, prices: Path) -> None:
        """Before: what the replaced and deleted jobs cost; after: what starts."""
        plan, jobs = by_name(self.change(), prices)
        (was, _), (now, _) = plan.rates()
        assert was == pytest.approx(
            sum(jobs[n].before.hourly_usd for n in ("train", "old", "eval"))
        )
        assert now == pytest.approx(sum(jobs[n].estimate.hourly_usd for n in ("train", "eval")))
        assert f"Before: ${was:,.2f}/h" in to_markdown(plan)

    def test_a_label_only_replace_says_the_job_runs_again_for_a_label_change(
        self, prices: Path
    ) -> None:
        """Only a label forces it: the table and the details say so in those words."""
        plan, jobs = by_name(self.change(), prices)
        assert jobs["eval"].label_only and not jobs["train"].label_only
        text = to_markdown(plan)
        assert "| `eval` | replace (labels only) |" in text
        assert "the job runs again for a label change: only `job.labels.owner` forces it" in text
