"""vertex_training.packaging: trainer directories -> content-hashed sdists -> package URIs."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest

from vertex_training import packaging
from vertex_training.errors import SpecError
from vertex_training.stackconfig import load_stack_file

REPO = Path(__file__).resolve().parent.parent
JOB_KEY = "vertex-training:jobs.train.python_package.package_path"


def package_job(path: str = "trainer", **extra: Any) -> dict[str, Any]:
    return {"python_package": {"package_path": path, "module": "trainer.task", **extra}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project holding a copy of the example trainer."""
    root = tmp_path / "project"
    shutil.copytree(
        REPO / "trainer", root / "trainer", ignore=shutil.ignore_patterns("__pycache__")
    )
    return root


def plan(
    project: Path,
    jobs: dict[str, Any],
    *,
    backend: str = "vertex",
    bucket: str | None = "b",
    build: bool = True,
) -> packaging.PackagePlan:
    return packaging.plan_packages(
        jobs, backend=backend, bucket=bucket, project_dir=project, build=build
    )


class SpyRun:
    """Counts the builds (``python -m build``) while running them for real."""

    def __init__(self) -> None:
        self.builds = 0
        self.real = subprocess.run

    def __call__(self, args: list[str], **kwargs: Any) -> Any:
        if args[1:3] == ["-m", "build"]:
            self.builds += 1
        return self.real(args, **kwargs)


class TestSourceDigest:
    """source_digest: what counts as the package's code."""

    def test_stable(self, project: Path) -> None:
        """The same tree gives the same digest, here and in a copy elsewhere."""
        first = packaging.source_digest(project / "trainer")
        copy = project / "copy"
        shutil.copytree(project / "trainer", copy)
        assert packaging.source_digest(project / "trainer") == first
        assert packaging.source_digest(copy) == first

    def test_any_source_change_changes_it(self, project: Path) -> None:
        """Content, a new file, a rename and the executable bit all count."""
        tree = project / "trainer"
        seen = {packaging.source_digest(tree)}
        task = tree / "trainer" / "task.py"
        task.write_text(task.read_text() + "\n")
        seen.add(packaging.source_digest(tree))
        (tree / "trainer" / "extra.py").write_text("X = 1\n")
        seen.add(packaging.source_digest(tree))
        (tree / "trainer" / "extra.py").rename(tree / "trainer" / "other.py")
        seen.add(packaging.source_digest(tree))
        (tree / "trainer" / "other.py").chmod(0o755)
        seen.add(packaging.source_digest(tree))
        assert len(seen) == 5

    def test_build_leftovers_do_not_count(self, project: Path) -> None:
        """__pycache__, *.egg-info, build/ and dist/ are not code."""
        tree = project / "trainer"
        before = packaging.source_digest(tree)
        for junk in (
            "trainer/__pycache__/task.cpython-311.pyc",
            "x.egg-info/PKG-INFO",
            "build/lib/a.py",
            "dist/x.tar.gz",
        ):
            (tree / junk).parent.mkdir(parents=True, exist_ok=True)
            (tree / junk).write_text("junk")
        assert packaging.source_digest(tree) == before


class TestBuild:
    """build_sdist: the standard front end, once per digest, reproducible bytes."""

    def test_sdist_contents(self, project: Path) -> None:
        """The sdist holds the package's modules and metadata, no build leftovers."""
        result = plan(project, {"train": package_job()})
        (package,) = result.packages.values()
        sdist = package.sdist(project)
        assert sdist.name == f"trainer-{package.digest}.tar.gz"
        with tarfile.open(sdist) as archive:
            names = archive.getnames()
            root = names[0].split("/")[0]
            assert root == "vertex_training_example-0.1.0"
            for member in (
                "PKG-INFO",
                "pyproject.toml",
                "trainer/__init__.py",
                "trainer/task.py",
                "trainer/model.py",
            ):
                assert f"{root}/{member}" in names
            assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
            assert {m.mtime for m in archive.getmembers()} == {packaging.NORMALISED_MTIME}
        assert not list((project / "trainer").glob("*.egg-info")), "the build wrote into the source"

    def test_built_once_per_digest(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An unchanged tree is not rebuilt; a changed file builds a new sdist."""
        spy = SpyRun()
        monkeypatch.setattr(packaging.subprocess, "run", spy)
        first = plan(project, {"train": package_job()}).configs["train"]
        again = plan(project, {"train": package_job()}).configs["train"]
        assert spy.builds == 1 and again == first
        task = project / "trainer" / "trainer" / "task.py"
        task.write_text(task.read_text() + "\n# changed\n")
        changed = plan(project, {"train": package_job()}).configs["train"]
        assert spy.builds == 2
        assert changed["python_package"]["package_uris"] != first["python_package"]["package_uris"]

    def test_reproducible_bytes(self, project: Path) -> None:
        """A rebuild from scratch gives byte-identical sdists (uploads never change alone)."""
        (package,) = plan(project, {"train": package_job()}).packages.values()
        sdist = package.sdist(project)
        first = hashlib.sha256(sdist.read_bytes()).hexdigest()
        sdist.unlink()
        packaging.build_sdist(package, project)
        assert hashlib.sha256(sdist.read_bytes()).hexdigest() == first

    def test_build_failure_is_an_issue(self, project: Path) -> None:
        """A package the front end cannot build is an issue with the build's output."""
        (project / "trainer" / "pyproject.toml").write_text("[project\nname = \n")
        result = plan(project, {"train": package_job()})
        (issue,) = result.issues
        assert issue.key == JOB_KEY and "python -m build" in issue.message
        assert result.configs["train"] == package_job()  # left as written


class TestPlan:
    """plan_packages: URIs by backend, pools, and the mistakes it reports."""

    def test_vertex_uri_in_the_bucket(self, project: Path) -> None:
        """gs://<bucket>/packages/<name>-<digest>.tar.gz, first in package_uris."""
        result = plan(
            project,
            {"train": package_job(package_uris=["gs://deps/dep.whl"])},
            bucket="my-bucket",
            build=False,
        )
        (package,) = result.packages.values()
        assert result.configs["train"]["python_package"] == {
            "module": "trainer.task",
            "package_uris": [
                f"gs://my-bucket/packages/trainer-{package.digest}.tar.gz",
                "gs://deps/dep.whl",
            ],
        }
        assert result.uploads == {"trainer": package}
        assert result.job_uploads == {"train": ["trainer"]}

    def test_local_uri_is_the_cached_sdist(self, project: Path) -> None:
        """On the local backend the URI is the sdist's path in the project; no upload."""
        result = plan(project, {"train": package_job()}, backend="local", bucket=None)
        (uri,) = result.configs["train"]["python_package"]["package_uris"]
        assert uri.startswith(".state/packages/trainer-") and (project / uri).is_file()
        assert result.uploads == {} and result.job_uploads == {}

    def test_pools_share_one_build(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """Workers and other jobs naming the same directory use the same package."""
        spy = SpyRun()
        monkeypatch.setattr(packaging.subprocess, "run", spy)
        job = {**package_job(), "workers": {"replicas": 2, **package_job()}}
        result = plan(project, {"a": job, "b": package_job()})
        uri = result.configs["b"]["python_package"]["package_uris"]
        assert result.configs["a"]["python_package"]["package_uris"] == uri
        assert result.configs["a"]["workers"]["python_package"]["package_uris"] == uri
        assert result.configs["a"]["workers"]["replicas"] == 2
        assert spy.builds == 1

    def test_missing_directory(self, project: Path) -> None:
        """A package_path naming no directory is an issue naming the key and the path."""
        result = plan(project, {"train": package_job("trainr")}, build=False)
        (issue,) = result.issues
        assert (issue.key, issue.value) == (JOB_KEY, "trainr")
        assert "no directory" in issue.message

    def test_directory_that_is_not_a_package(self, project: Path) -> None:
        """A directory without pyproject.toml or setup.py is refused with the fix."""
        (project / "notes").mkdir()
        (issue,) = plan(project, {"train": package_job("notes")}).issues
        assert "pyproject.toml" in issue.message

    def test_vertex_job_needs_a_bucket(self, project: Path) -> None:
        """With no platform bucket, a vertex job's package has nowhere to go."""
        (issue,) = plan(project, {"train": package_job()}, bucket=None, build=False).issues
        assert issue.key == JOB_KEY and "existing.bucket" in issue.message

    def test_workers_key(self, project: Path) -> None:
        """An issue in a pool names the pool's key."""
        job = {"image": "x", "workers": package_job("missing")}
        (issue,) = plan(project, {"train": job}).issues
        assert issue.key == "vertex-training:jobs.train.workers.python_package.package_path"


class TestRender:
    """load_stack_file (render, plan): URIs without a build, the same defaults as pulumi up."""

    def write(self, project: Path, config: dict[str, Any]) -> Path:
        (project / "Pulumi.yaml").write_text("name: vertex-training\n")
        (project / "stacks").mkdir(exist_ok=True)
        path = project / "stacks" / "Pulumi.dev.yaml"
        path.write_text(json.dumps({"config": config}))  # JSON is YAML
        return path

    def test_uri_without_building(self, project: Path) -> None:
        """The rendered URI is the one pulumi up would upload; nothing is built."""
        config = {
            "gcp:project": "acme",
            "gcp:region": "us-central1",
            "vertex-training:platform": {"deployer": "user:a@acme.example"},
            "vertex-training:jobs": {
                "train": package_job(
                    executor_image="us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-7:latest"
                )
            },
        }
        jobs = load_stack_file(self.write(project, config)).check().resolved
        digest = packaging.source_digest(project / "trainer")
        assert jobs["train"].primary.python_package.package_uris == [
            f"gs://acme-vertex-training-dev/packages/trainer-{digest}.tar.gz"
        ]
        assert not (project / packaging.PACKAGE_CACHE).exists()

    def test_missing_directory_reported_once(self, project: Path) -> None:
        """The render error for a missing directory is the packaging issue, once."""
        config = {
            "vertex-training:backend": "local",
            "vertex-training:jobs": {"train": package_job("nowhere")},
        }
        with pytest.raises(SpecError) as caught:
            load_stack_file(self.write(project, config)).check()
        assert [i.key for i in caught.value.issues] == [JOB_KEY]

    def test_project_dir_of(self, project: Path) -> None:
        """The project is the nearest folder above the stack file with a Pulumi.yaml."""
        path = self.write(project, {})
        assert packaging.project_dir_of(path) == project.resolve()


def test_cli_render_dev_and_prod() -> None:
    """`vertex-training render` works on the repository's dev and prod stacks."""
    for stack in ("dev", "prod"):
        result = subprocess.run(
            [sys.executable, "-m", "vertex_training", "render", f"stacks/Pulumi.{stack}.yaml"],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        rendered = json.loads(result.stdout)
        for entry in rendered.values():
            spec = entry["customJob"]["jobSpec"]
            assert spec["baseOutputDirectory"]["outputUriPrefix"].startswith(
                f"gs://acme-ml-{stack}-vertex-training-{stack}/"
            )
