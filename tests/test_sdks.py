"""The checked-in SDKs (sdk/): what `make sdks` writes from the schema, of this release,
each with the license."""

from __future__ import annotations

import filecmp
import json
import subprocess
import tomllib
from pathlib import Path

import pytest

from tests.engine import TOOLS_BIN
from tests.release import RELEASE, REPO, SDK
from vertex_training.plugin.schema import GO_MODULE, PLUGIN_DOWNLOAD_URL, SCHEMA_FILE

LANGUAGES = ("nodejs", "go", "python")


def files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


class TestStale:
    def test_each_sdk_is_what_the_generators_write_from_the_schema(self, tmp_path: Path) -> None:
        """sdk/ is stale when the schema changed and `make sdks` was not run; nothing in
        it is edited by hand (the generated files, and the LICENSE copies)."""
        sdkgen = TOOLS_BIN / "sdkgen"
        if not sdkgen.exists():
            pytest.skip("sdkgen is not built: run `make tools`")
        subprocess.run([sdkgen, SCHEMA_FILE, tmp_path, *LANGUAGES], check=True, capture_output=True)
        for language in LANGUAGES:
            fresh, kept = tmp_path / language, SDK / language
            made = files(fresh)
            # What gen-sdks.sh adds: the license, and the Go module's go.mod and go.sum.
            added = {"LICENSE"} | ({"go.mod", "go.sum"} if language == "go" else set())
            assert files(kept) - {".gitignore"} - added == made - {".gitignore"}, (
                f"sdk/{language} has other files than the generator writes: run `make sdks`"
            )
            _, mismatch, errors = filecmp.cmpfiles(fresh, kept, sorted(made), shallow=False)
            assert mismatch == [] and errors == [], (
                f"sdk/{language} is stale against the schema ({mismatch or errors}): "
                "run `make sdks`"
            )


class TestOneRelease:
    def test_every_sdk_carries_the_release_version(self) -> None:
        """The schema's version (provider/pyproject.toml's) is each SDK's."""
        package = json.loads((SDK / "nodejs" / "package.json").read_text())
        assert package["version"] == RELEASE
        plugin = {
            "resource": True,
            "name": "vertex-training",
            "version": RELEASE,
            "server": PLUGIN_DOWNLOAD_URL,
        }
        assert package["pulumi"] == plugin
        python = tomllib.loads((SDK / "python" / "pyproject.toml").read_text())["project"]
        assert python["version"] == RELEASE
        assert f"vertex-training=={RELEASE}" in python["dependencies"]
        for plugin_json in (
            SDK / "go" / "vertextraining" / "pulumi-plugin.json",
            SDK / "python" / "pulumi_vertex_training" / "pulumi-plugin.json",
        ):
            assert json.loads(plugin_json.read_text()) == plugin, plugin_json

    def test_the_go_module_is_the_schemas_and_requires_the_pinned_sdk(self) -> None:
        go_mod = (SDK / "go" / "go.mod").read_text()
        pulumi = next(
            line.split("==")[1].strip()
            for line in (REPO / "requirements.txt").read_text().splitlines()
            if line.startswith("pulumi==")
        )
        assert go_mod.splitlines()[0] == f"module {GO_MODULE}"
        assert f"github.com/pulumi/pulumi/sdk/v3 v{pulumi}" in go_mod

    def test_each_sdk_holds_the_license(self) -> None:
        license_text = (REPO / "LICENSE").read_text()
        for language in LANGUAGES:
            assert (SDK / language / "LICENSE").read_text() == license_text, language
