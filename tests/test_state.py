"""The job resources' state schema: what schema 4 records, how states of schemas 1, 2 and
3 read, and the provider settings that replaced the per-job ``connection``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pulumi.dynamic import ConfigureRequest
from pulumi.dynamic.config import Config

from vertex_training.api.bodies import canonical_request
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.state import (
    FLAT_SCHEMA_VERSION,
    SCHEMA_KEY,
    SCHEMA_VERSION,
    VIEW_SCHEMA_VERSION,
    ProviderSettings,
    migrate_job,
    migrate_recorded,
    migrate_waiter,
)
from vertex_training.resources.submission import Owner, identity_label
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.resources.waiter import JobWaiterProvider

IMAGE = "us-docker.pkg.dev/acme/train/trainer:1"
STACK = {"stack": "dev", "project": "acme", "region": "us-central1", "backend": "vertex"}
#: A connection as schema 1 kept it in every job's state (this machine's paths).
OLD_CONNECTION = {
    "api_endpoint": "",
    "local_root": "/home/someone/project/.local-jobs",
    "base_dir": "/home/someone/project",
    "local_accelerators": "gpu",
}


def checked(config: dict[str, Any]) -> dict[str, Any]:
    news = {"job": {"name": "train", "config": config, "stack": STACK}}
    result = TrainingJobProvider().check({}, news)
    assert not result.failures, [f.reason for f in result.failures]
    return dict(result.inputs)


def schema_3(inputs: dict[str, Any]) -> dict[str, Any]:
    """Today's checked inputs as schema 3 recorded them: the config's keys one by one."""
    flat = {k: v for k, v in inputs.items() if k != "config"}
    return {**inputs["config"], **flat, SCHEMA_KEY: FLAT_SCHEMA_VERSION}


def schema_2(inputs: dict[str, Any]) -> dict[str, Any]:
    """Today's checked inputs as schema 2 recorded them: what ``check`` derived (request,
    location, the settings' derived form) beside the config keys, no stack settings."""
    view = {k: v for k, v in recorded_view(inputs).items() if k != "stack"}
    return {**view, SCHEMA_KEY: VIEW_SCHEMA_VERSION}


def schema_1(inputs: dict[str, Any]) -> dict[str, Any]:
    """Today's checked inputs as a release before schema 2 wrote them."""
    old = {k: v for k, v in schema_2(inputs).items() if k != SCHEMA_KEY}
    return {**old, "connection": OLD_CONNECTION}


class TestMigrateJob:
    """migrate_job: a job's state of schema 1 -> schema 2's shape; 2, 3 and 4 as they are.
    migrate_recorded: schema 3's recorded inputs -> schema 4's."""

    def test_schema_4_records_the_job_as_written(self) -> None:
        """Today's checked inputs: the config as written, name, stack settings and schema."""
        config = {"image": IMAGE, "wait": "succeeded"}
        today = checked(config)
        assert today == {
            "name": "train",
            "stack": STACK,
            SCHEMA_KEY: SCHEMA_VERSION,
            "config": config,
        }

    def test_schema_3_reads_as_schema_4(self) -> None:
        """The config keys schema 3 recorded one by one are today's config; other schemas
        are left to the readers that know them."""
        today = checked({"image": IMAGE, "wait": "succeeded", "args": ["--x"]})
        assert migrate_recorded(schema_3(today)) == today
        assert migrate_recorded(today) == today
        assert migrate_recorded(schema_2(today)) == schema_2(today)

    def test_schema_1_loses_its_connection_and_gains_the_version(self) -> None:
        """The per-job connection is dropped; the version is recorded; nothing else moves."""
        today = checked({"image": IMAGE})
        migrated = migrate_job(schema_1(today))
        assert "connection" not in migrated
        assert migrated[SCHEMA_KEY] == VIEW_SCHEMA_VERSION
        assert migrated == schema_2(today)

    def test_schemas_2_to_4_are_left_as_they_are(self) -> None:
        """Migrating a state of schema 2, 3 or 4 gives it back unchanged."""
        today = checked({"image": IMAGE, "wait": "succeeded"})
        assert migrate_job(today) == today
        assert migrate_job(schema_3(today)) == schema_3(today)
        assert migrate_job(schema_2(today)) == schema_2(today)
        assert migrate_job(migrate_job(schema_1(today))) == schema_2(today)

    def test_outputs_are_kept(self) -> None:
        """Outputs recorded by schema 1 (state, resource name) survive the migration."""
        outputs = {"resource_name": "projects/p/locations/l/customJobs/1", "state": "RUNNING"}
        migrated = migrate_job({**schema_1(checked({"image": IMAGE})), **outputs})
        assert {k: migrated[k] for k in outputs} == outputs


class TestUpgradeDiff:
    """An upgrade from schema 1, 2 or 3 shows no change, so it replaces nothing."""

    def test_earlier_schemas_are_no_change(self) -> None:
        """diff(schema-1, -2 or -3 state, today's check of the same config) has no changes,
        with the outputs each recorded beside its inputs."""
        today = checked({"image": IMAGE, "wait": "succeeded"})
        outputs = {
            "resource_name": "projects/acme/locations/us-central1/customJobs/1",
            "job_id": "1",
            "console_url": "https://console/1",
            "state": "RUNNING",
        }
        flat_outputs = {"state": "RUNNING", "error": "", "failure": {}, "attempts": []}
        for old in (
            schema_1(today),
            schema_2(today),
            {**schema_2(today), **outputs},
            {**schema_3(today), **flat_outputs},
        ):
            diff = TrainingJobProvider().diff("id", old, today)
            assert not diff.changes and diff.replaces == []

    def test_an_unchanged_schema_3_job_is_not_parsed(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A schema-3 job checked and diffed with the config it was recorded with gives
        today's inputs and no change without a parse (a no-change preview after the
        upgrade parses no job, as before it)."""
        today = checked({"image": IMAGE, "args": ["--x"]})

        def parse_job(*_args: Any) -> None:
            raise AssertionError("parsed")

        monkeypatch.setattr("vertex_training.stackconfig.parse_job", parse_job)
        news = {"job": {"name": "train", "config": today["config"], "stack": STACK}}
        result = TrainingJobProvider().check(schema_3(today), news)
        assert (result.inputs, result.failures) == (today, [])
        old = {**schema_3(today), "state": "RUNNING", "error": ""}
        assert not TrainingJobProvider().diff("id", old, result.inputs).changes

    def test_a_real_change_still_replaces(self) -> None:
        """A schema-1, -2 or -3 state whose request differs is still replaced, naming the
        key: schema 1 and 2 recorded the request the job was submitted with; schema 3,
        the config it was derived from."""
        new = checked({"image": "us-docker.pkg.dev/acme/train/trainer:2"})
        old = checked({"image": IMAGE})
        for older in (schema_1(old), schema_2(old), schema_3(old)):
            diff = TrainingJobProvider().diff("id", older, new)
            assert "request" in diff.replaces and "image" in diff.replaces

    def test_a_stack_setting_that_changes_the_request_replaces(self) -> None:
        """Schema 3 and 4 derive the request from the config and the stack settings: a
        new region is a new request and location."""
        old = checked({"image": IMAGE})
        stack = {**STACK, "region": "europe-west4"}
        new = TrainingJobProvider().check(
            {}, {"job": {"name": "train", "config": {"image": IMAGE}, "stack": stack}}
        )
        assert not new.failures
        diff = TrainingJobProvider().diff("id", old, new.inputs)
        assert diff.replaces == ["location"]

    def test_a_config_that_no_longer_reads_is_replaced(self) -> None:
        """A recorded config this release cannot read as a job (say, a key a later release
        dropped) counts as changed everywhere: the job is replaced, not kept unknown."""
        today = checked({"image": IMAGE})
        old = {**today, "config": {**today["config"], "no_such_key": 1}}
        diff = TrainingJobProvider().diff("id", old, today)
        assert diff.changes and "request" in diff.replaces
        diff = TrainingJobProvider().diff("id", {**schema_3(today), "no_such_key": 1}, today)
        assert diff.changes and "request" in diff.replaces

    def test_waiter_entries_of_earlier_releases_are_no_change(self) -> None:
        """The waiter's entries of earlier releases (a whole WaitEntry each, with a
        connection in schema 1) read as today's: the resource name and ``until``; an entry
        of a job waited for ``submitted`` is dropped (today's program gives it none)."""
        entry = {
            "resource_name": "projects/p/locations/l/customJobs/1",
            "wait": {"until": "succeeded", "timeout_s": 60},
            "location": {"backend": "vertex", "project": "p", "region": "l"},
        }
        quick = {**entry, "resource_name": "projects/p/locations/l/customJobs/2"}
        quick["wait"] = {"until": "submitted", "timeout_s": 60}
        today = {"train": {"resource_name": entry["resource_name"], "until": "succeeded"}}
        for olds in (
            {"jobs": {"train": {**entry, "connection": OLD_CONNECTION}, "quick": quick}},
            {"jobs": {"train": entry, "quick": quick}},
        ):
            assert migrate_waiter(olds) == {"jobs": today}
            assert not JobWaiterProvider().diff("jobs", olds, {"jobs": today}).changes
        assert migrate_waiter({"jobs": today}) == {"jobs": today}


class TestIdentityLabel:
    """The identity label every job carries is the one earlier releases gave it."""

    def test_a_request_hashes_as_the_engine_hands_it(self) -> None:
        """``create`` gets the request through the engine (every number a float); the
        waiter builds it from the stack config (whole numbers as ints): both hash as the
        label was always computed, from the engine's form."""
        with_ints = {
            "displayName": "train",
            "jobSpec": {"workerPoolSpecs": [{"diskSpec": {"bootDiskSizeGb": 100}}]},
        }
        with_floats = {
            "displayName": "train",
            "jobSpec": {"workerPoolSpecs": [{"diskSpec": {"bootDiskSizeGb": 100.0}}]},
        }
        earlier = hashlib.sha256(
            json.dumps(
                ["test", "train", canonical_request(with_floats)],
                sort_keys=True,
                separators=(",", ":"),
            ).encode()
        ).hexdigest()[:40]
        assert identity_label(Owner("test"), "train", with_ints) == earlier
        assert identity_label(Owner("test"), "train", with_floats) == earlier


class TestProviderSettings:
    """What configure reads: the stack config and the project directory."""

    def test_read_from_the_stack_config(self, tmp_path: Path, monkeypatch: Any) -> None:
        """apiEndpoint and localAccelerators come from the config; paths from the project."""
        monkeypatch.chdir(tmp_path)
        config = Config(
            {
                "vertex-training:apiEndpoint": "127.0.0.1:9",
                "vertex-training:localAccelerators": "cpu",
                "gcp:project": "acme",
            },
            "vertex-training",
        )
        provider = TrainingJobProvider()
        provider.configure(ConfigureRequest(config))
        assert provider.settings == ProviderSettings("127.0.0.1:9", str(tmp_path), "cpu")
        assert provider.settings.connection()["local_root"] == str(tmp_path / ".local-jobs")

    def test_no_path_of_this_machine_in_a_jobs_state(self) -> None:
        """A job's checked inputs hold neither a connection nor the project's path."""
        inputs = checked({"image": IMAGE})
        assert "connection" not in inputs
        assert str(Path.cwd()) not in repr(inputs)
