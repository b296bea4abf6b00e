"""The checked-in SDKs (sdk/): what `make sdks` writes from the schema, of this release,
each with the license."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import tomllib
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.engine import TOOLS_BIN
from tests.release import PULUMI, RELEASE, REPO, SDK, run
from vertex_training.plugin.schema import GO_MODULE, PLUGIN_DOWNLOAD_URL, SCHEMA_FILE

LANGUAGES = ("nodejs", "go", "python", "java", "dotnet")
#: Which generator writes which SDK (scripts/gen-sdks.sh), and what the script adds.
GENERATORS = {"nodejs": "sdkgen", "go": "sdkgen", "python": "sdkgen"}
ADDED = {"go": {"go.mod", "go.sum"}, "java": {"pom.xml"}}
JAVA_PACKAGE = "io/github/vertex_training/vertextraining"


def files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*") if path.is_file()}


def generate(language: str, out: Path) -> Path:
    """What the generators write for ``language`` now, in ``out``."""
    generator = TOOLS_BIN / GENERATORS.get(language, f"sdkgen-{language}")
    if not generator.exists():
        pytest.skip(f"{generator.name} is not built: run `make all-tools`")
    target = [out, language] if language in GENERATORS else [out / language]
    subprocess.run([generator, SCHEMA_FILE, *target], check=True, capture_output=True)
    return out / language


class TestStale:
    @pytest.mark.parametrize("language", LANGUAGES)
    def test_each_sdk_is_what_the_generators_write_from_the_schema(
        self, language: str, tmp_path: Path
    ) -> None:
        """sdk/ is stale when the schema changed and `make sdks` was not run; nothing in
        it is edited by hand (the generated files, and what gen-sdks.sh adds)."""
        fresh, kept = generate(language, tmp_path), SDK / language
        made = files(fresh)
        added = {"LICENSE"} | ADDED.get(language, set())
        assert files(kept) - {".gitignore"} - added == made - {".gitignore"}, (
            f"sdk/{language} has other files than the generator writes: run `make sdks`"
        )
        _, mismatch, errors = filecmp.cmpfiles(fresh, kept, sorted(made), shallow=False)
        assert mismatch == [] and errors == [], (
            f"sdk/{language} is stale against the schema ({mismatch or errors}): run `make sdks`"
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
            SDK / "dotnet" / "pulumi-plugin.json",
        ):
            assert json.loads(plugin_json.read_text()) == plugin, plugin_json
        java_version = SDK / "java" / "src" / "main" / "resources" / "io" / "github"
        java_version = java_version / "vertex_training" / "vertex-training" / "version.txt"
        assert java_version.read_text().strip() == RELEASE
        pom = ElementTree.parse(SDK / "java" / "pom.xml").getroot()
        assert pom.findtext("version") == RELEASE
        [csproj] = (SDK / "dotnet").glob("*.csproj")
        assert ElementTree.parse(csproj).getroot().findtext("PropertyGroup/Version") == RELEASE

    def test_the_go_module_is_the_schemas_and_requires_the_pinned_sdk(self) -> None:
        go_mod = (SDK / "go" / "go.mod").read_text()
        assert go_mod.splitlines()[0] == f"module {GO_MODULE}"
        assert f"github.com/pulumi/pulumi/sdk/v3 v{PULUMI}" in go_mod

    def test_each_sdk_holds_the_license(self) -> None:
        license_text = (REPO / "LICENSE").read_text()
        for language in LANGUAGES:
            assert (SDK / language / "LICENSE").read_text() == license_text, language


@pytest.mark.polyglot
class TestJava:
    def test_the_java_sdk_compiles_and_its_classes_load(self, tmp_path: Path) -> None:
        """`mvn package` builds the Java SDK against Pulumi's Java SDK from Maven Central,
        and a program on it builds a job's arguments and reads the SDK's version."""
        if not shutil.which("mvn") or not shutil.which("java"):
            pytest.skip("Maven and a JDK are not installed")
        sdk = tmp_path / "java"
        shutil.copytree(SDK / "java", sdk)
        run("mvn", "-q", "-B", "package", "-DskipTests", cwd=sdk)
        [jar] = (sdk / "target").glob("vertex-training-*.jar")
        run("mvn", "-q", "-B", "dependency:build-classpath", "-Dmdep.outputFile=cp.txt", cwd=sdk)
        classpath = (sdk / "cp.txt").read_text().strip()
        smoke = tmp_path / "Smoke.java"
        package = JAVA_PACKAGE.replace("/", ".")
        smoke.write_text(
            f"import {package}.TrainingJobArgs;\n"
            f"import {package}.inputs.JobArgs;\n"
            "public class Smoke {\n"
            "    public static void main(String[] argv) {\n"
            '        var job = JobArgs.builder().image("trainer:1").machine("e2-standard-4");\n'
            "        var args = TrainingJobArgs.builder().job(job.build()).build();\n"
            "        System.out.println(job.build().machine().isPresent() && args != null);\n"
            f"        System.out.println({package}.Utilities.getVersion());\n"
            "    }\n"
            "}\n"
        )
        done = run("java", "-cp", f"{jar}:{classpath}", smoke, cwd=tmp_path)
        assert done.stdout.split() == ["true", RELEASE]


class TestReleaseNotes:
    """scripts/release-notes.sh: the GitHub release's notes are the changelog's section."""

    NOTES = REPO / "scripts" / "release-notes.sh"

    def test_a_released_version_gets_its_section(self) -> None:
        notes = run("bash", self.NOTES, "0.2.0").stdout
        assert notes.strip() and "## " not in notes.replace("### ", "")
        changelog = (REPO / "provider" / "CHANGELOG.md").read_text()
        assert notes.strip() in changelog

    def test_a_version_without_a_section_is_refused(self) -> None:
        done = subprocess.run(
            ["bash", self.NOTES, "9.9.9"], capture_output=True, text=True, check=False
        )
        assert done.returncode == 1
        assert 'no section "## [9.9.9]"' in done.stderr
