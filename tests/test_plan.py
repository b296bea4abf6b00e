"""`vertex-training plan`: a stack file's change against a git base, for a reviewer."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli import run_cli
from vertex_training.review.cost import Estimate
from vertex_training.review.plan import (
    DELETE,
    INVALID,
    REPLACE,
    SUBMIT,
    UNCHANGED,
    UPDATE,
    JobPlan,
    Plan,
    plan_stack,
    to_markdown,
)

REPO = Path(__file__).resolve().parent.parent
IMAGE = "us-docker.pkg.dev/acme-ml-dev/trainers/mnist:1"
EXIT_INVALID_CONFIG = 2


def job(**keys: Any) -> dict[str, Any]:
    return {"image": IMAGE, "machine": "n1-standard-8", **keys}


BASE_JOBS = {
    "keep": job(scheduling={"timeout": "2h"}),
    "gpu": job(accelerator={"type": "NVIDIA_TESLA_T4", "count": 1}, scheduling={"timeout": "2h"}),
    "gone": job(),
    "waits": job(wait="submitted"),
}
HEAD_JOBS = {
    "keep": job(scheduling={"timeout": "2h"}),
    "gpu": job(accelerator={"type": "NVIDIA_TESLA_T4", "count": 2}, scheduling={"timeout": "3d"}),
    "new": job(workers={"replicas": 2}, scheduling={"timeout": "1h"}),
    "waits": job(wait="succeeded"),
    "broken": job(machine="n1-standard-7"),
}


def stack(jobs: dict[str, Any], policies: dict[str, Any] | None = None) -> str:
    config: dict[str, Any] = {
        "gcp:project": "acme-ml-dev",
        "gcp:region": "us-central1",
        "vertex-training:jobs": jobs,
    }
    if policies is not None:
        config["vertex-training:policies"] = policies
    return yaml.safe_dump({"config": config}, sort_keys=False)


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A project with two commits: the base's jobs, then the change's."""
    (tmp_path / "Pulumi.yaml").write_text("name: plan-test\nruntime: python\n")
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    git(tmp_path, "init", "-q", "-b", "main")
    (stacks / "Pulumi.dev.yaml").write_text(stack(BASE_JOBS))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    (stacks / "Pulumi.dev.yaml").write_text(stack(HEAD_JOBS))
    git(tmp_path, "commit", "-q", "-am", "change")
    return tmp_path


def run_plan(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    return run_cli("plan", "stacks/Pulumi.dev.yaml", *args, cwd=repo, env=env)


class TestPlan:
    """plan_stack: each job's change, in the user's keys."""

    def test_every_kind_of_change(self, repo: Path) -> None:
        """Added, replaced, updated, deleted, unchanged and invalid jobs are told apart."""
        plan = plan_stack(repo / "stacks" / "Pulumi.dev.yaml", "HEAD~1")
        changes = {j.name: j.change for j in plan.jobs}
        assert changes == {
            "broken": INVALID,
            "gone": DELETE,
            "gpu": REPLACE,
            "keep": UNCHANGED,
            "new": SUBMIT,
            "waits": UPDATE,
        }
        assert plan.invalid

    def test_a_replacement_names_its_keys_as_written(self, repo: Path) -> None:
        """`accelerator.count 1 -> 2`, `scheduling.timeout 2h -> 3d`."""
        plan = plan_stack(repo / "stacks" / "Pulumi.dev.yaml", "HEAD~1")
        [gpu] = [j for j in plan.jobs if j.name == "gpu"]
        assert [(k.key, k.before, k.after) for k in gpu.keys] == [
            ("accelerator.count", "1", "2"),
            ("scheduling.timeout", "2h", "3d"),
        ]
        [waits] = [j for j in plan.jobs if j.name == "waits"]
        assert [(k.key, k.before, k.after) for k in waits.keys] == [
            ("wait", "submitted", "succeeded")
        ]

    def test_the_keys_that_force_a_replacement_are_told_from_those_that_update(
        self, tmp_path: Path
    ) -> None:
        """A label (which Vertex AI cannot update on a submitted job) and `wait` change
        together: the job is replaced, the label is what forces it, and the review says
        so, with `wait` named as a key that alone would only update the job."""
        stacks = tmp_path / "stacks"
        stacks.mkdir()
        (tmp_path / "Pulumi.yaml").write_text("name: plan-test\nruntime: python\n")
        git(tmp_path, "init", "-q", "-b", "main")
        (stacks / "Pulumi.dev.yaml").write_text(stack({"train": job(labels={"team": "a"})}))
        git(tmp_path, "add", ".")
        git(tmp_path, "commit", "-q", "-m", "base")
        changed = job(labels={"team": "b"}, wait="succeeded")
        (stacks / "Pulumi.dev.yaml").write_text(stack({"train": changed}))
        git(tmp_path, "commit", "-q", "-am", "change")
        plan = plan_stack(stacks / "Pulumi.dev.yaml", "HEAD~1")
        [train] = plan.jobs
        assert train.change == REPLACE
        assert [(k.key, k.replaces) for k in train.keys] == [
            ("labels.team", True),
            ("wait", False),
        ]
        assert (
            "  - the job runs again for a label change: only `labels.team` forces it, and "
            "Vertex AI cannot relabel a submitted job, so the running one is cancelled and "
            "deleted and the same training is submitted again, at its full cost; `wait` alone "
            "would only update it\n"
        ) in to_markdown(plan)

    def test_an_invalid_job_carries_its_messages(self, repo: Path) -> None:
        """The mistake is reported with its key and fix; the other jobs are still planned."""
        plan = plan_stack(repo / "stacks" / "Pulumi.dev.yaml", "HEAD~1")
        [broken] = [j for j in plan.jobs if j.name == "broken"]
        assert broken.issues
        assert broken.issues[0].key == "vertex-training:jobs.broken.machine"

    def test_a_stack_file_new_at_the_base_submits_everything(self, repo: Path) -> None:
        """Against a base without the file, every valid job is submitted."""
        (repo / "stacks" / "Pulumi.prod.yaml").write_text(stack({"only": job()}))
        git(repo, "add", ".")
        git(repo, "commit", "-q", "-m", "prod")
        plan = plan_stack(repo / "stacks" / "Pulumi.prod.yaml", "HEAD~1")
        assert [(j.name, j.change) for j in plan.jobs] == [("only", SUBMIT)]

    def test_the_change_cost_sums_the_submitted_jobs(self, repo: Path) -> None:
        """Only submitted and replaced jobs count towards the change's cost."""
        plan = plan_stack(repo / "stacks" / "Pulumi.dev.yaml", "HEAD~1")
        total, unknown = plan.change_cost()
        submitted = [j for j in plan.jobs if j.change in (SUBMIT, REPLACE)]
        if unknown:
            assert total is None
        else:
            assert total == pytest.approx(sum(j.estimate.max_usd for j in submitted))


class TestCommand:
    """`vertex-training plan`: Markdown or JSON, and its exit status."""

    def test_markdown_and_exit_status(self, repo: Path) -> None:
        """An invalid job makes the command exit 2; the summary still shows every job."""
        result = run_plan(repo, "--base", "HEAD~1")
        assert result.returncode == EXIT_INVALID_CONFIG, result.stderr
        out = result.stdout
        assert "1 to submit, 1 to replace, 1 to delete" in out
        assert "| `gpu` | replace | primary: 1 x n1-standard-8 + 2 x NVIDIA_TESLA_T4 |" in out
        assert "`accelerator.count` 1 -> 2" in out and "`scheduling.timeout` 2h -> 3d" in out
        assert "`broken` is invalid: vertex-training:jobs.broken.machine" in out

    def test_json(self, repo: Path) -> None:
        """--format json gives the same plan for scripts."""
        result = run_plan(repo, "--base", "HEAD~1", "--format", "json")
        document = json.loads(result.stdout)
        jobs = {j["name"]: j for j in document["jobs"]}
        assert jobs["new"]["change"] == "submit"
        assert jobs["new"]["pools"] == ["primary: 1 x n1-standard-8", "workers: 2 x n1-standard-8"]
        assert jobs["gpu"]["keys"][0] == {
            "key": "accelerator.count",
            "before": "1",
            "after": "2",
            "replaces": True,
        }
        assert jobs["broken"]["issues"][0]["key"] == "vertex-training:jobs.broken.machine"

    def test_a_valid_change_exits_0(self, repo: Path) -> None:
        """Without the invalid job, the plan succeeds."""
        valid = {k: v for k, v in HEAD_JOBS.items() if k != "broken"}
        (repo / "stacks" / "Pulumi.dev.yaml").write_text(stack(valid))
        result = run_plan(repo, "--base", "HEAD~1")
        assert result.returncode == 0, result.stdout + result.stderr

    def test_preview_warnings_are_shown(self, repo: Path) -> None:
        """What the preview would warn about a job (here an image past its end of support,
        still run) is in the Markdown and the JSON, and does not fail the plan."""
        jobs = {k: v for k, v in HEAD_JOBS.items() if k != "broken"}
        jobs["new"] = {
            **jobs["new"],
            "image": "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
        }
        (repo / "stacks" / "Pulumi.dev.yaml").write_text(stack(jobs))
        result = run_plan(repo, "--base", "HEAD~1", "--today", "2025-12-01")
        assert result.returncode == 0, result.stdout + result.stderr
        assert (
            ":warning: `new`: vertex-training:jobs.new.image: TensorFlow 2.17 (Python 3.10) "
            "prebuilt training images reached end of support on 2025-07-11"
        ) in result.stdout
        result = run_plan(repo, "--base", "HEAD~1", "--today", "2025-12-01", "--format", "json")
        (warning,) = {j["name"]: j for j in json.loads(result.stdout)["jobs"]}["new"]["warnings"]
        assert warning.startswith("vertex-training:jobs.new.image: TensorFlow 2.17")

    def test_an_unknown_base_is_reported(self, repo: Path) -> None:
        """A base git does not know is a clear error, not a traceback."""
        result = run_plan(repo, "--base", "no-such-ref")
        assert result.returncode == EXIT_INVALID_CONFIG
        assert "no-such-ref" in result.stderr and "Traceback" not in result.stderr

    def test_a_mandatory_rule_broken_exits_1_and_is_shown_first(self, repo: Path) -> None:
        """Failed rules are listed one by one; kept ones in a line; exit status 1."""
        valid = {k: v for k, v in HEAD_JOBS.items() if k != "broken"}
        policies = {
            "allowed_regions": {"regions": ["us-central1"]},
            "required_labels": {"labels": ["team"]},
        }
        (repo / "stacks" / "Pulumi.dev.yaml").write_text(stack(valid, policies))
        result = run_plan(repo, "--base", "HEAD~1")
        assert result.returncode == 1, result.stdout + result.stderr
        assert ":x: required_labels (mandatory) `gpu`:" in result.stdout
        assert ":white_check_mark: every job keeps allowed_regions" in result.stdout


class TestChangeCost:
    """Plan.change_cost with estimates made up here, so the sum is checked exactly."""

    @staticmethod
    def job(name: str, change: str, max_usd: float | None) -> JobPlan:
        estimate = Estimate(1.0, 2.0, False, 1, max_usd, "STANDARD", (), ())
        return JobPlan(name, change, estimate=estimate)

    def test_submitted_and_replaced_jobs_are_summed(self) -> None:
        """An unchanged, updated or deleted job costs the change nothing."""
        jobs = [
            self.job("a", SUBMIT, 10.0),
            self.job("b", REPLACE, 2.5),
            self.job("c", UNCHANGED, 100.0),
            self.job("d", UPDATE, 100.0),
            self.job("e", DELETE, 100.0),
        ]
        assert Plan("dev", "main", jobs, [], []).change_cost() == (12.5, [])

    def test_one_unknown_cost_makes_the_change_unknown(self) -> None:
        """The jobs whose cost is unknown are named."""
        jobs = [self.job("a", SUBMIT, 10.0), self.job("b", REPLACE, None)]
        assert Plan("dev", "main", jobs, [], []).change_cost() == (None, ["b"])
