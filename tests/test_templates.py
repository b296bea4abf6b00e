"""`pulumi new` from the YAML, TypeScript and Go templates (templates/), in fresh folders
outside the repository, depending on vertex-training as a user does after a release: the
plugin from the wheel, installed into a virtualenv whose bin/ is on PATH (as `pipx install
vertex-training` puts it there), or for YAML and TypeScript downloaded by the engine from
the release's archive for this machine (the bundled plugin); the TypeScript SDK from its
npm tarball; the Go SDK's module from a copy of sdk/go (the one step that is not as after
a release: the module is not tagged anywhere, so the project's go.mod is pointed at the
copy). Each project's `local` stack runs its job on this machine through `pulumi up`.

The Python template's own test is in tests/test_package.py.
"""

from __future__ import annotations

import filecmp
import json
import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.engine import Project, engine_env, go_env, tools_missing
from tests.release import RELEASE, REPO, copy_go_sdk, run
from vertex_training.plugin.schema import GO_MODULE, PLUGIN_DOWNLOAD_URL

TEMPLATES = REPO / "templates"
LANGUAGES = ("yaml", "typescript", "go")


class TestTheTemplates:
    def test_each_template_has_a_local_and_a_dev_stack(self) -> None:
        for language in (*LANGUAGES, "python"):
            template = TEMPLATES / f"vertex-training-{language}"
            local = yaml.safe_load((template / "Pulumi.local.yaml").read_text())["config"]
            dev = yaml.safe_load((template / "Pulumi.dev.yaml").read_text())["config"]
            assert local.get("vertex-training:backend") == "local", language
            assert dev.get("vertex-training:backend", "vertex") == "vertex", language

    def test_every_template_depends_on_this_release(self) -> None:
        """Each template asks for the release it ships with (and its later patches)."""
        major, minor, _ = RELEASE.split(".")
        program = yaml.safe_load((TEMPLATES / "vertex-training-yaml" / "Pulumi.yaml").read_text())
        for resource in program["resources"].values():
            assert resource["options"]["version"] == RELEASE
            assert resource["options"]["pluginDownloadURL"] == PLUGIN_DOWNLOAD_URL
        package = json.loads(
            (TEMPLATES / "vertex-training-typescript" / "package.json").read_text()
        )
        assert package["dependencies"]["vertex-training"] == f"^{RELEASE}"
        go_mod = (TEMPLATES / "vertex-training-go" / "go.mod").read_text()
        assert f"{GO_MODULE} v{RELEASE}" in go_mod
        requirements = (TEMPLATES / "vertex-training-python" / "requirements.txt").read_text()
        pin = f"vertex-training>={major}.{minor},<{major}.{int(minor) + 1}"
        assert pin in requirements.splitlines()

    def test_every_template_carries_the_same_trainer(self) -> None:
        """The trainer each template ships is the Python template's, copied."""
        source = TEMPLATES / "vertex-training-python" / "trainer"
        names = sorted(
            str(p.relative_to(source))
            for p in source.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        )
        for language in LANGUAGES:
            copy = TEMPLATES / f"vertex-training-{language}" / "trainer"
            _, mismatch, errors = filecmp.cmpfiles(source, copy, names, shallow=False)
            assert mismatch == [] and errors == [], f"{language}: {mismatch or errors}"


@pytest.mark.engine
@pytest.mark.polyglot
class TestPulumiNew:
    """Each template's `local` stack, from `pulumi new` to a succeeded job."""

    def new(self, tmp_path: Path, venv: Path, language: str) -> Project:
        if reason := tools_missing():
            pytest.skip(reason)
        root = tmp_path / "acme-ml"
        root.mkdir()
        project = Project(root=root, stack="local", env=engine_env(tmp_path, venv))
        template = TEMPLATES / f"vertex-training-{language}"
        new = ["pulumi", "new", template, "--generate-only", "--yes", "--name", "acme-ml"]
        run(*new, "--description", "Acme's training jobs", cwd=root, env=project.env)
        assert yaml.safe_load((root / "Pulumi.yaml").read_text())["name"] == "acme-ml"
        return project

    def local_job_succeeds(self, project: Project) -> None:
        up = project.up().check()
        assert "example: SUCCEEDED" in up.output
        assert "registered local/models/example version 1 (default, candidate)" in up.output
        outputs = project.outputs()
        assert outputs["state"] == "SUCCEEDED"
        assert outputs["modelVersion"] == "local/models/example@1"
        # (relative to the project where the stack names a folder of its own)
        model = project.root / outputs["outputDirectory"] / "model"
        assert model.is_dir() and any(model.iterdir()), "the trainer wrote no model"
        state = project.state_resources()
        [job] = [r for r in state if r["type"] == "vertex-training:index:TrainingJob"]
        assert job["inputs"]["job"]["pythonPackage"]["packageUris"] == ["trainer"]
        project.run("destroy", "--yes").check()

    def downloads_its_plugin(self, project: Project, server: str) -> None:
        """The engine downloads this machine's plugin archive from the release (here a
        loopback server standing in for it): the bundled plugin, which installs nothing;
        nothing on PATH is used. The local job's virtualenv is made with the python3 on
        PATH (the user's virtualenv's here)."""
        project.env.pop("PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION")
        override = f"^{re.escape(PLUGIN_DOWNLOAD_URL)}$={server}"
        project.env.update(
            PULUMI_IGNORE_AMBIENT_PLUGINS="true",
            PULUMI_PLUGIN_DOWNLOAD_URL_OVERRIDES=override,
        )

    def ran_the_downloaded_plugin(self, project: Project) -> None:
        home = Path(project.env["PULUMI_HOME"])
        [plugin] = (home / "plugins").glob(f"resource-vertex-training-v{RELEASE}")
        assert (plugin / "_internal").is_dir(), "the downloaded plugin is not the bundle"
        assert not (plugin / ".venv").exists(), "the downloaded plugin installed a virtualenv"

    def test_the_yaml_template_with_the_plugin_its_resources_name(
        self, tmp_path: Path, venv: Path, plugin_download: str
    ) -> None:
        """A YAML program has no SDK: its resources' options name the plugin's release
        and where it is kept."""
        project = self.new(tmp_path, venv, "yaml")
        self.downloads_its_plugin(project, plugin_download)
        self.local_job_succeeds(project)
        self.ran_the_downloaded_plugin(project)

    def test_the_typescript_template_with_the_plugin_its_sdk_names(
        self, tmp_path: Path, venv: Path, nodejs_sdk: Path, plugin_download: str
    ) -> None:
        """Nothing installed but the npm package, which names the plugin's release."""
        project = self.new(tmp_path, venv, "typescript")
        quiet = ["--no-audit", "--no-fund", "--loglevel=error"]
        run("npm", "install", *quiet, nodejs_sdk, cwd=project.root)
        self.downloads_its_plugin(project, plugin_download)
        self.local_job_succeeds(project)
        self.ran_the_downloaded_plugin(project)

    @pytest.mark.usefixtures("go_sdk")
    def test_the_go_template_with_the_plugin_on_path(self, tmp_path: Path, venv: Path) -> None:
        """The plugin the wheel installs, on PATH (as `pipx install vertex-training`)."""
        if not shutil.which("go"):
            pytest.skip("go is not installed")
        project = self.new(tmp_path, venv, "go")
        copy = copy_go_sdk(tmp_path / "sdk-go")
        env = {**project.env, **go_env()}
        project.env = env
        run("go", "mod", "edit", f"-replace={GO_MODULE}={copy}", cwd=project.root, env=env)
        run("go", "mod", "tidy", cwd=project.root, env=env)
        # The program's first build (the Pulumi Go SDK and what it needs) happens here, not
        # within `pulumi up`'s time limit: beside `make test`'s other workers it can take
        # minutes. The language host's build then finds it in Go's cache.
        run("go", "build", "./...", cwd=project.root, env=env)
        self.local_job_succeeds(project)
