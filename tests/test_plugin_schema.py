"""The plugin's schema and docs/config-shape.md's key tables: written from the job's
models (their keys and descriptions) and typed keys, and the naming between the schema's
properties and the stack config's keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.release import RELEASE
from vertex_training.errors import Issue
from vertex_training.plugin import job_keys, resource_docs, resource_texts, schema, shapes
from vertex_training.plugin.job_shapes import property_failure
from vertex_training.resources.arguments import ImageRowArgs, TrainingJobArgs
from vertex_training.stackconfig import _config

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"


def written() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(schema.SCHEMA_FILE.read_text())
    return loaded


def walk_properties(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """Every property spec of the schema (of types, resources and the provider)."""
    found = []
    if isinstance(node, dict):
        for key in ("properties", "inputProperties"):
            for name, spec in (node.get(key) or {}).items():
                found.append((f"{path}.{name}", spec))
        for key, value in node.items():
            if key not in ("properties", "inputProperties"):
                found += walk_properties(value, f"{path}.{key}")
    return found


class TestSchemaFile:
    def test_the_written_schema_is_what_the_keys_and_docs_give(self) -> None:
        """schema.json is stale when the typed keys, the models or docs/plugin.md changed:
        run `make schema`."""
        assert schema.SCHEMA_FILE.read_text() == schema.render(RELEASE), (
            "provider/vertex_training/plugin/schema.json is stale: run `make schema`"
        )

    def test_the_three_resource_types_and_the_waiter(self) -> None:
        """The package is vertex-training; jobs, the waiter and the platform component."""
        loaded = written()
        assert loaded["name"] == "vertex-training"
        assert set(loaded["resources"]) == {
            "vertex-training:index:TrainingJob",
            "vertex-training:index:HyperparameterTuningJob",
            "vertex-training:index:JobWaiter",
            "vertex-training:index:TrainingPlatform",
        }
        assert loaded["resources"]["vertex-training:index:TrainingPlatform"]["isComponent"]

    def test_every_property_is_described(self) -> None:
        """Each property of every type and resource has a description."""
        missing = [path for path, spec in walk_properties(written()) if not spec.get("description")]
        assert missing == []

    def test_the_written_schema_is_of_this_release(self) -> None:
        """schema.json carries provider/pyproject.toml's version, which the SDKs take."""
        assert written()["version"] == RELEASE

    def test_the_served_schema_carries_the_version(self) -> None:
        """The plugin stamps its version into the schema it serves."""
        assert json.loads(schema.served("1.2.3"))["version"] == "1.2.3"


class TestOneSource:
    def test_the_job_type_has_every_job_key_in_camel_case(self) -> None:
        """The schema's Job properties are TrainingJobArgs's keys, renamed."""
        job = written()["types"]["vertex-training:index:Job"]["properties"]
        assert set(job) == {shapes.camel(key) for key in shapes.fields(TrainingJobArgs)}

    def test_every_typed_dictionary_has_its_model(self) -> None:
        """Each typed dictionary the schema reaches is a model's, key for key."""
        types: dict[str, dict[str, Any]] = {}
        for typed in job_keys.MODELS:
            shapes.schema_type(typed, types, job_keys.describe)
        reached = {token for token, spec in types.items() if spec.get("properties")}
        assert reached == {shapes.type_token(typed) for typed in job_keys.MODELS}
        for typed, model in job_keys.MODELS.items():
            assert set(shapes.fields(typed)) <= set(model.model_fields), typed

    def test_every_key_of_the_models_is_described(self) -> None:
        """Every key of a job's, a study's and the platform's models has a description."""
        for model, _ in job_keys.TABLES.values():
            assert all(text for _, text in job_keys.rows(model))

    def test_a_key_without_a_description_fails_the_schema(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A job key its model does not describe stops `make schema`, naming it."""
        field = _config.JobConfig.model_fields["kms_key"]
        monkeypatch.setattr(field, "description", None)
        with pytest.raises(KeyError, match=r"JobConfig\.kms_key has no description"):
            schema.build("0.0.0")

    def test_descriptions_come_from_the_models(self) -> None:
        """A key's description is its model field's, a pool's keys the primary pool's."""
        types = written()["types"]
        timeout = types["vertex-training:index:Scheduling"]["properties"]["timeout"]
        assert timeout["description"] == job_keys.sentence(
            _config.SchedulingConfig.model_fields["timeout"].description or ""
        )
        machine = types["vertex-training:index:Pool"]["properties"]["machine"]
        assert machine["description"].startswith("Machine type")

    def test_no_description_promises_what_the_plugin_refuses(self) -> None:
        """packagePath says that the plugin refuses it (it builds no packages)."""
        types = written()["types"]
        path = types["vertex-training:index:PythonPackage"]["properties"]["packagePath"]
        assert "refuses it at preview" in path["description"]


class TestKeyTables:
    """docs/config-shape.md's key tables are written from the models."""

    def test_the_tables_are_what_the_models_give(self) -> None:
        """The tables are stale when a model's keys or descriptions changed: run
        `make schema`."""
        text = (DOCS / "config-shape.md").read_text()
        assert job_keys.render_tables(text) == text, (
            "docs/config-shape.md's key tables are stale: run `make schema`"
        )

    def test_a_row_per_key_nested_keys_by_path(self) -> None:
        """A nested key's row is its path; a list's items and a map's values say so."""
        keys = {key for key, _ in job_keys.rows(_config.JobConfig)}
        assert {"scheduling.timeout", "nfs_mounts[].server", "model.serving.port"} <= keys
        assert set(_config.JobConfig.model_fields) <= keys
        assert not any(key.startswith("workers.") for key in keys)

    def test_a_table_without_its_markers_is_named(self) -> None:
        """A page that lost a table's markers is refused, naming the table."""
        with pytest.raises(KeyError, match="job keys"):
            job_keys.render_tables("no tables here")

    def test_a_pipe_in_a_description_is_escaped(self) -> None:
        """A description's `|` does not end the Markdown cell."""
        table = job_keys.table(_config.JobConfig, "key")
        [row] = [line for line in table.splitlines() if line.startswith("| `disk` |")]
        assert "pd-ssd \\| pd-standard" in row


class TestResourcesReference:
    """docs/plugin.md's reference of the resources is written from the schema."""

    def test_the_reference_is_what_the_schema_gives(self) -> None:
        """The page is stale when a resource's, a type's or a setting's description
        changed in the code: run `make schema`."""
        text = (DOCS / "plugin.md").read_text()
        assert resource_docs.render_page(text, written()) == text, (
            "docs/plugin.md's resources are stale: run `make schema`"
        )

    def test_every_resource_and_plugin_type_has_its_section(self) -> None:
        """Each resource, each output type and the provider's settings get a section,
        each property a row (a tuning job's beside a TrainingJob's only)."""
        page = resource_docs.render(written())
        for heading, _, _ in resource_docs.SECTIONS:
            assert f"\n### {heading}\n" in page
        for name in written()["resources"][schema.JOB_WAITER]["properties"]:
            assert f"`{name}`" in page
        tuning = page.split("### HyperparameterTuningJob", 1)[1].split("###", 1)[0]
        assert "`trials`" in tuning and "`job`" not in tuning

    def test_neighbours_of_one_meaning_share_a_row(self) -> None:
        """`createTime`, `startTime` and `endTime` say one thing: one row."""
        page = resource_docs.render(written())
        assert "| `createTime`, `startTime`, `endTime` |" in page

    def test_a_page_without_the_markers_is_refused(self) -> None:
        with pytest.raises(KeyError, match="generated by make schema: resources"):
            resource_docs.render_page("no reference here", written())

    def test_no_description_is_read_from_the_docs(self) -> None:
        """The schema is built with no docs page to read: its resources' texts are the
        code's (``resource_texts``)."""
        assert (
            schema.build("0.0.0")["resources"][schema.JOB_WAITER]["description"]
            == (resource_texts.INTROS["JobWaiter"])
        )


class TestNaming:
    def test_properties_become_keys_and_back(self) -> None:
        """Typed keys are renamed at any depth, a study's too; a map's keys are kept."""
        given = {
            "pythonPackage": {"packageUris": ["gs://b/t.tar.gz"], "module": "t.task"},
            "env": {"LOG_LEVEL": "info", "someVar": "x"},
            "workers": {
                "replicas": 2,
                "nfsMounts": [{"mountPoint": "data", "server": "1.2.3.4", "path": "/s"}],
            },
            "wait": {"until": "succeeded", "startTimeout": "1h"},
            "study": {"maxTrials": 2, "parameters": {"learningRate": {"type": "double"}}},
            "reservationAffinity": "ANY_RESERVATION",
        }
        config = shapes.to_config(given, TrainingJobArgs)
        assert config == {
            "python_package": {"package_uris": ["gs://b/t.tar.gz"], "module": "t.task"},
            "env": {"LOG_LEVEL": "info", "someVar": "x"},
            "workers": {
                "replicas": 2,
                "nfs_mounts": [{"mount_point": "data", "server": "1.2.3.4", "path": "/s"}],
            },
            "wait": {"until": "succeeded", "start_timeout": "1h"},
            "study": {"max_trials": 2, "parameters": {"learningRate": {"type": "double"}}},
            "reservation_affinity": "ANY_RESERVATION",
        }
        assert shapes.to_arguments(config, TrainingJobArgs) == given

    def test_an_unknown_property_is_kept_for_the_check_to_refuse(self) -> None:
        """A misspelt property reaches the job's check as written."""
        assert shapes.to_config({"machineType": "n1"}, TrainingJobArgs) == {"machineType": "n1"}

    def test_a_refusal_is_named_by_its_property_path(self) -> None:
        """A check failure names the schema's path: job.workers.pythonPackage.module."""
        issue = Issue("job.workers.python_package.module", None, "no module given")
        failure = property_failure(issue)
        assert failure.property == "job.workers.pythonPackage.module"
        assert failure.reason == "job.workers.pythonPackage.module: no module given (got None)"
        row = property_failure(Issue("images[0].end_of_support", "x", "not a date"))
        assert row.property == "images[0].endOfSupport"
        assert row.reason == "images[0].endOfSupport: not a date (got 'x')"

    def test_image_rows_are_renamed(self) -> None:
        """An image row's fields are the stack config's, in camelCase."""
        assert shapes.to_config({"readOn": "2026-11-26"}, ImageRowArgs) == {"read_on": "2026-11-26"}
