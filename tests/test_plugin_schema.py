"""The plugin's schema: one source with the job's typed keys and the docs, and the
naming between the schema's properties and the stack config's keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.release import RELEASE
from vertex_training.errors import Issue
from vertex_training.plugin import schema, shapes
from vertex_training.plugin.job_shapes import property_failure
from vertex_training.resources.arguments import ImageRowArgs, TrainingJobArgs

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
        """schema.json is stale when the typed keys or the docs changed: run `make schema`."""
        assert schema.SCHEMA_FILE.read_text() == schema.render(DOCS, RELEASE), (
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
        """Each property of every type and resource has a description from the docs."""
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

    def test_every_job_key_has_a_row_in_the_docs_and_every_row_a_key(self) -> None:
        """docs/config-shape.md's job keys table and TrainingJobArgs name the same keys."""
        rows = schema.Descriptions(DOCS).job_keys
        documented = {key.split(".")[0] for key in rows}
        assert documented == set(shapes.fields(TrainingJobArgs))

    def test_a_key_without_a_row_fails_the_schema(self, tmp_path: Path) -> None:
        """A job key the docs do not describe stops `make schema`, naming it."""
        text = (DOCS / "config-shape.md").read_text()
        (tmp_path / "config-shape.md").write_text(
            "\n".join(line for line in text.splitlines() if not line.startswith("| `kms_key`"))
        )
        (tmp_path / "plugin.md").write_text((DOCS / "plugin.md").read_text())
        with pytest.raises(KeyError, match="kms_key"):
            schema.build(tmp_path, "0.0.0")

    def test_descriptions_come_from_the_rows(self) -> None:
        """A nested key's description is its row (scheduling.timeout), a pool's the job's."""
        types = written()["types"]
        timeout = types["vertex-training:index:Scheduling"]["properties"]["timeout"]
        assert timeout["description"].startswith("A duration: `90s`")
        machine = types["vertex-training:index:Pool"]["properties"]["machine"]
        assert machine["description"].startswith("Machine type")


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
