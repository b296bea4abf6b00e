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
from vertex_training.preview.review import review_preview
from vertex_training.review.plan import DELETE, INVALID, REPLACE, SUBMIT, UNCHANGED, to_markdown

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
