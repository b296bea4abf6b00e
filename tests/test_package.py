"""The package from the outside: its wheel, installed into a fresh virtualenv outside the
repository, used as a platform team uses it (docs/library.md).

The wheel and sdist are built from provider/ with `python -m build`; the virtualenv gets
the wheel and its dependencies (at the releases requirements.txt pins, as constraints, so
that pip's cache serves them). A program of the team's own, in a folder of its own, adds
two jobs (one run here, one on Vertex AI, reached at the fake service) and goes through
`pulumi preview`, `pulumi up` and `pulumi destroy` on the real engine; the installed
command line renders a stack file outside the repository.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest
import yaml

from tests.engine import REPO, Project, engine_env, tools_missing
from tests.release import INSTALL_TIMEOUT_S, RELEASE, SDIST, WHEEL, run
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing())),
]

IMAGE = "us-docker.pkg.dev/acme-ml/train/trainer:1"

#: A platform team's program: its own resources, plus two training jobs. The second job's
#: args carry an Output of the first (unknown in a preview).
PROGRAM = '''
    """acme-ml: the team's project, with training jobs added."""
    import pulumi
    import vertex_training as vt

    here = vt.TrainingJob(
        "try-here",
        vt.TrainingJobArgs(
            python_package={"package_path": "trainer", "module": "trainer.task"},
            args=["--epochs", "2"],
            wait="succeeded",
        ),
        backend="local",
    )
    cloud = vt.TrainingJob(
        "train",
        vt.TrainingJobArgs(
            image="us-docker.pkg.dev/acme-ml/train/trainer:1",
            machine="{machine}",
            args=["--after", here.id],
            wait="succeeded",
        ),
        project="acme-ml",
        region="us-central1",
        service_account="trainer@acme-ml.iam.gserviceaccount.com",
        output_root="gs://acme-ml-training",
    )
    waiter = vt.wait_for_jobs("wait-for-jobs", [here, cloud])
    pulumi.export("states", waiter.states)
    pulumi.export("train", cloud.id)
'''


class TestDistribution:
    """What `python -m build` makes of provider/."""

    @pytest.mark.every_python
    def test_the_wheel_holds_the_package_and_nothing_called_provider(self, dist: Path) -> None:
        """Only vertex_training/ and its metadata; typed; with the console script."""
        [wheel] = dist.glob(WHEEL)
        names = zipfile.ZipFile(wheel).namelist()
        tops = {name.split("/")[0] for name in names}
        assert tops == {"vertex_training", f"vertex_training-{RELEASE}.dist-info"}
        assert "vertex_training/py.typed" in names
        assert "vertex_training/resources/training_job.py" in names
        assert "vertex_training/plugin/schema.json" in names, "the plugin serves its schema"
        entry_points = zipfile.ZipFile(wheel).read(
            f"vertex_training-{RELEASE}.dist-info/entry_points.txt"
        )
        assert b"vertex-training = vertex_training.__main__:main" in entry_points

    def test_the_sdist_has_its_readme_and_changelog(self, dist: Path) -> None:
        """The sdist carries what its metadata names, and the changelog."""
        [sdist] = dist.glob(SDIST)
        with tarfile.open(sdist) as archive:
            names = {Path(name).name for name in archive.getnames()}
        assert {"pyproject.toml", "README.md", "CHANGELOG.md", "py.typed"} <= names

    def test_the_license_ships_in_the_wheel_and_the_sdist(self, dist: Path) -> None:
        """Apache-2.0: its text in both, its expression in the metadata."""
        [wheel] = dist.glob(WHEEL)
        with zipfile.ZipFile(wheel) as archive:
            text = archive.read(f"vertex_training-{RELEASE}.dist-info/licenses/LICENSE")
            metadata = archive.read(f"vertex_training-{RELEASE}.dist-info/METADATA")
        assert b"Apache License" in text and b"Version 2.0, January 2004" in text
        assert b"License-Expression: Apache-2.0" in metadata
        [sdist] = dist.glob(SDIST)
        with tarfile.open(sdist) as archive:
            [member] = [m for m in archive.getmembers() if m.name.endswith(f"{RELEASE}/LICENSE")]
            extracted = archive.extractfile(member)
            assert extracted is not None and b"Apache License" in extracted.read()

    def test_the_sdist_is_a_plugin_folder(self, dist: Path) -> None:
        """Unpacked, the sdist holds the plugin's executable, as provider/ does."""
        [sdist] = dist.glob(SDIST)
        with tarfile.open(sdist) as archive:
            [launcher] = [
                m
                for m in archive.getmembers()
                if m.name.endswith("/pulumi-resource-vertex-training")
            ]
            names = {Path(m.name).name for m in archive.getmembers()}
        assert launcher.mode & 0o111, "the plugin's launcher is executable"
        assert "pulumi-resource-" in names, "the launcher as the engine looks for it in a folder"


class TestCommandLine:
    """The installed `vertex-training` command, outside the repository."""

    def test_help_lists_every_command(self, venv: Path) -> None:
        """`vertex-training --help` names each command, and each has its own help."""
        commands = ("render", "convert", "plan", "prices", "migrate")
        shown = run(venv / "bin" / "vertex-training", "--help").stdout
        assert all(command in shown for command in commands), shown
        for command in commands:
            usage = run(venv / "bin" / "vertex-training", command, "-h").stdout
            assert usage.startswith(f"usage: vertex-training {command}"), usage

    def test_render_of_a_stack_file_outside_the_repository(
        self, venv: Path, tmp_path: Path
    ) -> None:
        """A team's stack file renders to the request Vertex AI would get."""
        (tmp_path / "Pulumi.yaml").write_text("name: acme-ml\nruntime: python\n")
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(
            yaml.safe_dump(
                {
                    "config": {
                        "gcp:project": "acme-ml",
                        "gcp:region": "us-central1",
                        "vertex-training:jobs": {
                            "train": {"image": IMAGE, "machine": "n1-standard-4"}
                        },
                    }
                }
            )
        )
        result = run(venv / "bin" / "vertex-training", "render", stack.name, cwd=tmp_path)
        rendered = json.loads(result.stdout)["train"]
        assert rendered["parent"] == "projects/acme-ml/locations/us-central1"
        [pool] = rendered["customJob"]["jobSpec"]["workerPoolSpecs"]
        assert pool["machineSpec"]["machineType"] == "n1-standard-4"
        assert pool["containerSpec"]["imageUri"] == IMAGE


class TestProgramOfOnesOwn:
    """A team's own program, in a folder of its own, with the installed package."""

    def project(self, tmp_path: Path, venv: Path, fake: FakeVertex) -> Project:
        root = tmp_path / "acme-ml"
        root.mkdir()
        (root / "Pulumi.yaml").write_text(
            yaml.safe_dump(
                {
                    "name": "acme-ml",
                    "runtime": {"name": "python", "options": {"virtualenv": str(venv)}},
                }
            )
        )
        shutil.copytree(REPO / "trainer", root / "trainer")
        config = {"vertex-training:apiEndpoint": fake.address}
        (root / "Pulumi.dev.yaml").write_text(yaml.safe_dump({"config": config}))
        return Project(root=root, stack="dev", env=engine_env(tmp_path, venv))

    def program(self, project: Project, machine: str) -> None:
        text = textwrap.dedent(PROGRAM).replace("{machine}", machine)
        (project.root / "__main__.py").write_text(text)

    @pytest.mark.every_python
    def test_preview_up_and_destroy(self, venv: Path, tmp_path: Path) -> None:
        """Preview shows both jobs; up runs them (one here, one on the fake service) and
        waits for both; destroy deletes both and leaves the stack empty."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=0.2) as fake:
            project = self.project(tmp_path, venv, fake)
            self.program(project, "n1-standard-4")
            preview = project.run("preview", "--json").check().stdout
            created = {
                step["urn"].rsplit("::", 1)[-1]
                for step in json.loads(preview)["steps"]
                if step["op"] == "create"
            }
            assert created == {"acme-ml-dev", "try-here", "train", "wait-for-jobs"}, preview
            project.up().check()
            assert project.outputs()["states"] == {"try-here": "SUCCEEDED", "train": "SUCCEEDED"}
            [submitted] = fake.jobs.values()
            args = list(submitted.job_spec.worker_pool_specs[0].container_spec.args)
            assert args == ["--after", project.jobs_in_state()["try-here"]["id"]]
            again = project.run("preview", "--json").check().stdout
            assert set(json.loads(again)["changeSummary"]) == {"same"}, again
            project.run("destroy", "--yes", "--skip-preview").check()
            assert project.state_resources() == []
            assert fake.jobs == {}

    def test_a_mistake_is_named_by_argument_at_preview(self, venv: Path, tmp_path: Path) -> None:
        """A wrong machine stops the preview, naming ``job.machine``, the value and the fix."""
        with FakeVertex() as fake:
            project = self.project(tmp_path, venv, fake)
            self.program(project, "n1-standrd-4")
            result = project.run("preview")
            assert result.returncode != 0
            assert "job.machine: " in result.output, result.output
            assert "'n1-standrd-4'" in result.output
            assert "n1-standard-4" in result.output.split("job.machine: ")[1]

    def test_the_users_type_checker_reads_the_installed_package(
        self, venv: Path, tmp_path: Path
    ) -> None:
        """mypy --strict, pointed at the virtualenv, checks the program against the
        package's types (py.typed)."""
        program = tmp_path / "program.py"
        program.write_text(textwrap.dedent(PROGRAM).replace("{machine}", "n1-standard-4"))
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--strict",
                "--python-executable",
                str(venv / "bin" / "python"),
                str(program),
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr


class TestTemplate:
    """`pulumi new` from the repository's template gives a project of its own."""

    TEMPLATE = REPO / "templates" / "vertex-training-python"

    def test_pulumi_new_gives_a_project_whose_local_stack_runs(
        self, dist: Path, venv: Path, tmp_path: Path
    ) -> None:
        """The new project depends on the package (no copy of it), installs it from the
        wheel through its requirements.txt, and its `local` stack's `pulumi up` runs the
        example job here; its `dev` stack renders once it names a project."""
        root = tmp_path / "acme-ml"
        root.mkdir()
        env = engine_env(tmp_path, root / "venv")
        new = ["pulumi", "new", str(self.TEMPLATE), "--generate-only", "--yes"]
        new += ["--name", "acme-ml", "--description", "Acme's training jobs"]
        made = subprocess.run(
            new,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=INSTALL_TIMEOUT_S,
            check=False,
        )
        assert made.returncode == 0, made.stdout + made.stderr
        assert yaml.safe_load((root / "Pulumi.yaml").read_text())["name"] == "acme-ml"
        assert not list(root.rglob("vertex_training")), "the template copies the package"
        assert "vertex-training" in (root / "requirements.txt").read_text()

        run(sys.executable, "-m", "venv", root / "venv")
        pip = [root / "venv" / "bin" / "python", "-m", "pip", "install", "--quiet"]
        run(
            *pip,
            "-c",
            venv / "constraints.txt",
            "--find-links",
            dist,
            "-r",
            "requirements.txt",
            cwd=root,
        )

        project = Project(root=root, stack="local", env=env)
        project.up().check()
        assert set(project.jobs_in_state()) == {"example"}
        assert project.outputs()["jobs"]["example"]["state"] == "SUCCEEDED"

        dev = yaml.safe_load((root / "Pulumi.dev.yaml").read_text())
        dev["config"]["gcp:project"] = "acme-ml-dev"
        (root / "Pulumi.dev.yaml").write_text(yaml.safe_dump(dev))
        rendered = run(
            root / "venv" / "bin" / "vertex-training", "render", "Pulumi.dev.yaml", cwd=root
        )
        body = json.loads(rendered.stdout)["example"]["customJob"]
        assert body["jobSpec"]["serviceAccount"].endswith("@acme-ml-dev.iam.gserviceaccount.com")


class TestInstallFromGit:
    """`pip install "git+URL#subdirectory=provider"`, as from the repository's host."""

    def test_the_repository_installs_from_its_subdirectory(self, tmp_path: Path) -> None:
        """The committed tree at HEAD installs by a git URL (its dependencies left out:
        the wheel's are installed above) and its command runs."""
        folder = tmp_path / "v"
        run(sys.executable, "-m", "venv", folder)
        head = run("git", "rev-parse", "HEAD", cwd=REPO).stdout.strip()
        url = f"git+file://{REPO}@{head}#subdirectory=provider"
        run(folder / "bin" / "python", "-m", "pip", "install", "--quiet", "--no-deps", url)
        shown = run(folder / "bin" / "vertex-training", "--help").stdout
        assert shown.startswith("usage: vertex-training"), shown
