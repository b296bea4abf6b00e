"""`vertex-training migrate`'s plan: which records are retained and what is imported."""

from __future__ import annotations

from typing import Any

import pytest

from vertex_training.plugin.migrate import MigrationError, plan

STACK = "urn:pulumi:dev::vertex-training::"


def exported(*resources: dict[str, Any], pending: bool = False) -> dict[str, Any]:
    deployment: dict[str, Any] = {"resources": list(resources)}
    if pending:
        deployment["pending_operations"] = [{"type": "creating"}]
    return {"version": 3, "deployment": deployment}


def dynamic(kind: str, name: str, id_: str) -> dict[str, Any]:
    type_ = f"pulumi-python:dynamic/vertex:{kind}"
    return {"urn": f"{STACK}{type_}::{name}", "type": type_, "id": id_}


class TestPlan:
    def test_each_job_is_retained_and_imported_under_the_plugins_type(self) -> None:
        """Training and tuning jobs, by name and ID; the waiter and others untouched."""
        train = dynamic("TrainingJob", "train", "projects/p/locations/r/customJobs/1")
        sweep = dynamic(
            "HyperparameterTuningJob", "sweep", "projects/p/locations/r/hyperparameterTuningJobs/2"
        )
        waiter = dynamic("JobWaiter", "wait-for-jobs", "jobs")
        migration = plan(exported(train, sweep, waiter))
        assert migration.jobs == [
            {"type": "vertex-training:index:TrainingJob", "name": "train", "id": train["id"]},
            {
                "type": "vertex-training:index:HyperparameterTuningJob",
                "name": "sweep",
                "id": sweep["id"],
            },
        ]
        kept = migration.deployment["deployment"]["resources"]
        assert [r.get("retainOnDelete", False) for r in kept] == [True, True, False]
        assert "retainOnDelete" not in train, "the exported state itself is left as it was"

    def test_a_stack_with_pending_operations_is_refused(self) -> None:
        """An interrupted up is cleared first, as operations.md says."""
        with pytest.raises(MigrationError, match="--clear-pending-creates"):
            plan(exported(dynamic("TrainingJob", "t", "x"), pending=True))

    def test_a_stack_without_dynamic_jobs_is_refused(self) -> None:
        """Nothing to move is said, not done."""
        with pytest.raises(MigrationError, match="nothing to move"):
            plan(exported(dynamic("JobWaiter", "w", "jobs")))
