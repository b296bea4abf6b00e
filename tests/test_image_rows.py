"""``vertex-training:images``: rows a project adds to the catalogue of prebuilt images,
read by every entry point (the loader, the provider's check through the stack settings)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.clients import configured
from vertex_training.catalog import images
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.stackconfig import StackSettings, load_stack, parse_job

#: Past every package row's end of availability (the newest ended 2026-07-24).
TODAY = datetime.date(2026, 11, 26)
#: An invented row: a version the package's catalogue lacks (it stops at PyTorch 2.4).
ROW: dict[str, Any] = {
    "framework": "pytorch",
    "version": "2.5",
    "python": "3.10",
    "kinds": ["gpu"],
    "name": "pytorch-gpu.2-5.py310",
    "end_of_support": "2027-03-01",
    "end_of_availability": "2027-09-01",
    "source": images.CATALOGUE_URL,
    "read_on": "2026-11-26",
}
JOB = {
    "python_package": {
        "package_uris": ["gs://acme/trainer-0.1.tar.gz"],
        "module": "trainer.task",
        "framework": {"name": "pytorch", "version": "2.5"},
    },
    "machine": "n1-standard-8",
    "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
}


def stack_keys(rows: Any, **jobs: Any) -> dict[str, Any]:
    return {
        "gcp:project": "acme",
        "gcp:region": "us-central1",
        "vertex-training:platform": {"enabled": False},
        "vertex-training:images": rows,
        "vertex-training:jobs": jobs or {"train": JOB},
    }


def executor(job: Any) -> str:
    return str(
        job.request_body()["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["executorImageUri"]
    )


class TestProjectRows:
    """A stack's own rows are read before the package's."""

    def test_a_version_the_package_lacks_is_the_rows_image(self) -> None:
        """PyTorch 2.5 gets the row's image, with no warning that it is estimated."""
        stack = load_stack(stack_keys([ROW]), "dev", project_dir=Path.cwd(), today=TODAY).check()
        job = stack.jobs["train"].job
        assert job is not None
        assert executor(job) == "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-5.py310:latest"
        assert not [w for w in job.warnings if "newer than" in w]

    def test_without_the_row_the_image_is_estimated_and_the_warning_says_how(self) -> None:
        """The same job with no rows is warned about, naming the key to add the row to."""
        stack = load_stack(stack_keys(None), "dev", project_dir=Path.cwd(), today=TODAY).check()
        job = stack.jobs["train"].job
        assert job is not None
        [warning] = [w for w in job.warnings if "newer than" in w]
        assert "vertex-training:images" in warning

    def test_a_row_replaces_the_packages_row_of_the_same_name(self) -> None:
        """A row with later dates for a package image makes it usable again; without it
        the package's dates refuse it."""
        row = {**ROW, "version": "2.4", "name": "pytorch-gpu.2-4.py310"}
        job = {
            **JOB,
            "python_package": {
                **JOB["python_package"],
                "framework": {"name": "pytorch", "version": "2.4"},
            },
        }
        refused = load_stack(
            stack_keys(None, train=job), "dev", project_dir=Path.cwd(), today=TODAY
        ).all_issues()
        assert refused and "vertex-training:images" in refused[0].message
        assert (
            load_stack(
                stack_keys([row], train=job), "dev", project_dir=Path.cwd(), today=TODAY
            ).all_issues()
            == []
        )

    def test_rows_hold_only_while_their_stack_is_read(self) -> None:
        """After the stack is read, the package's catalogue is as it was."""
        load_stack(stack_keys([ROW]), "dev", project_dir=Path.cwd(), today=TODAY).check()
        assert all(image.name != ROW["name"] for image in images.catalogue())


class TestRowMistakes:
    """Each mistake in a row is named by its key, with the fix."""

    @pytest.mark.parametrize(
        ("change", "key", "says"),
        [
            ({"name": "us-docker.pkg.dev/vertex-ai/training/x:latest"}, "name", "without host"),
            ({"version": 2.5}, "version", ""),
            ({"end_of_support": "soon"}, "end_of_support", "YYYY-MM-DD"),
            ({"source": "the docs"}, "source", "https://"),
            ({"framework": "jax"}, "framework", "pytorch"),
            ({"end_of_availability": "2027-01-01"}, "end_of_availability", "end_of_support"),
        ],
    )
    def test_a_wrong_value(self, change: dict[str, Any], key: str, says: str) -> None:
        """The issue names ``vertex-training:images[0].<key>`` and what to write."""
        issues = load_stack(
            stack_keys([{**ROW, **change}]), "dev", project_dir=Path.cwd(), today=TODAY
        ).all_issues()
        [issue] = [i for i in issues if i.key.startswith("vertex-training:images")]
        assert issue.key == f"vertex-training:images[0].{key}"
        assert says in issue.message

    def test_a_row_missing_its_source_is_refused(self) -> None:
        """Every row says where and when it was read."""
        row = {k: v for k, v in ROW.items() if k not in ("source", "read_on")}
        keys = {
            i.key
            for i in load_stack(
                stack_keys([row]), "dev", project_dir=Path.cwd(), today=TODAY
            ).all_issues()
        }
        assert {"vertex-training:images[0].source", "vertex-training:images[0].read_on"} <= keys

    def test_not_a_list(self) -> None:
        """The key holds a list of rows."""
        [issue] = load_stack(
            stack_keys({"pytorch": "2.5"}), "dev", project_dir=Path.cwd(), today=TODAY
        ).all_issues()
        assert issue.key == "vertex-training:images" and "list" in issue.message


class TestTheProvidersCheck:
    """The provider's check reads the rows from the stack settings the job was given."""

    def test_a_program_jobs_rows_are_checked_and_named_by_argument(self) -> None:
        """A program's job gives rows as ``images=``; a wrong one is ``images[0].name``."""
        provider = configured(TrainingJobProvider())
        stack = {
            "stack": "dev",
            "config_from": "program",
            "project": "acme",
            "region": "us-central1",
        }
        good = {"job": {"name": "train", "config": JOB, "stack": {**stack, "images": [ROW]}}}
        assert provider.check({}, good).failures == []
        bad_row = {**ROW, "name": "Bad Name"}
        bad = {"job": {"name": "train", "config": JOB, "stack": {**stack, "images": [bad_row]}}}
        [failure] = provider.check({}, bad).failures
        assert failure.reason.startswith("images[0].name: ")

    def test_parse_job_reads_rows_in_the_settings(self) -> None:
        """The same job parses with the row, and is estimated without it."""
        settings = StackSettings(stack="dev", project="acme", region="us-central1", images=[ROW])
        assert executor(parse_job("train", JOB, settings, today=TODAY)).endswith(
            "pytorch-gpu.2-5.py310:latest"
        )
