"""Trainer packaging: what ``gcloud ai custom-jobs create --python-package`` does with
``--local-package-path``, as part of the program.

A job's ``python_package.package_path`` names a local Python package directory (relative
to the project). The program:

1. hashes the directory's source files (``source_digest``: paths, contents and the
   executable bit; build leftovers such as ``__pycache__``, ``*.egg-info``, ``build/``,
   ``dist/`` are ignored);
2. builds an sdist of it with the standard build front end
   (``python -m build --sdist --no-isolation``, offline, from a clean copy of exactly the
   hashed files) into ``.state/packages/<name>-<digest>.tar.gz``, once per digest: an
   unchanged tree is never rebuilt. The archive is then normalised (sorted members, fixed
   times and owners, gzip without a timestamp), so that the same sources give the same
   bytes on any machine and an upload of it never changes by itself;
3. puts the package's URI first in the pool's ``package_uris`` and drops ``package_path``
   (``rewrite_job``): on the ``vertex`` backend ``gs://<bucket>/packages/<name>-<digest>
   .tar.gz`` (``vertex_training.program.platform.upload_packages`` uploads the sdist there as a
   pulumi-gcp BucketObject of that name), on the ``local`` backend the sdist's path.

The URI carries the digest, so changing a trainer file changes the job's request and
replaces the job, and an unchanged tree leaves it alone. ``plan_packages(build=False)``
computes every URI without building (``vertex-training render``).

Pure: no Pulumi, no Google clients.
"""

from __future__ import annotations

import copy
import fnmatch
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertex_training.backend_kinds import kind_of
from vertex_training.errors import Issue
from vertex_training.keys import JOBS_KEY, PLATFORM_KEY

__all__ = [
    "OBJECT_PREFIX",
    "PACKAGE_CACHE",
    "PackagePlan",
    "TrainerPackage",
    "build_sdist",
    "plan_packages",
    "project_dir_of",
    "rewrite_job",
    "source_digest",
]

#: Where built sdists are cached, relative to the project (git-ignored with .state/).
PACKAGE_CACHE = Path(".state") / "packages"
#: Where packages are uploaded in the platform bucket (never expired by its lifecycle).
OBJECT_PREFIX = "packages/"
#: Hex digits of the source digest kept in names (64 bits).
DIGEST_CHARS = 16
#: Files and folders that are not sources: never hashed, never packaged.
IGNORED = (
    "__pycache__",
    "*.pyc",
    "*.pyo",
    "*.egg-info",
    ".eggs",
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".DS_Store",
    "build",
    "dist",
)
#: The marker files of a package directory the build front end can build.
PROJECT_FILES = ("pyproject.toml", "setup.py")
#: Pools that may carry a python_package, besides the job itself (the primary pool).
POOL_KEYS = ("workers", "parameter_servers", "evaluators")
#: Time, owner and modes every member of a normalised sdist gets. 1980-01-02: zip (and so
#: wheel) building refuses file times before 1980.
NORMALISED_MTIME = 315_619_200
FILE_MODE, EXECUTABLE_MODE = 0o644, 0o755
#: A build of a small package takes seconds; this bounds a hung one.
BUILD_TIMEOUT_S = 600
#: Lines of the build's output kept in the issue when it fails.
BUILD_LOG_LINES = 15


#: Why a vertex job's package directory cannot be uploaded when the stack has no bucket.
NO_BUCKET = (
    "a vertex job's package is uploaded to the platform bucket, and this stack has none: "
    f"enable {PLATFORM_KEY}, or name a bucket in {PLATFORM_KEY}.existing.bucket, or list "
    "gs:// package_uris"
)


@dataclass(frozen=True)
class TrainerPackage:
    """One package directory, its digest, and where its sdist is (or would be)."""

    path: str
    directory: Path
    digest: str

    @property
    def stem(self) -> str:
        """``<directory name>-<digest>``: the name of the sdist in the cache and bucket."""
        name = re.sub(r"[^A-Za-z0-9._-]", "-", self.directory.name) or "package"
        return f"{name}-{self.digest}"

    @property
    def object_name(self) -> str:
        """``packages/<name>-<digest>.tar.gz``: its object in the platform bucket."""
        return f"{OBJECT_PREFIX}{self.stem}.tar.gz"

    def sdist(self, project_dir: Path) -> Path:
        """The cached sdist (built by ``build_sdist``)."""
        return project_dir / PACKAGE_CACHE / f"{self.stem}.tar.gz"

    def local_uri(self) -> str:
        """The sdist's path relative to the project: the local backend's package URI."""
        return (PACKAGE_CACHE / f"{self.stem}.tar.gz").as_posix()


@dataclass
class PackagePlan:
    """The stack's jobs with their package directories resolved."""

    #: Every job's config, with package_path replaced by the package's URI.
    configs: dict[str, Any] = field(default_factory=dict)
    #: The packages, by the package_path written in the config.
    packages: dict[str, TrainerPackage] = field(default_factory=dict)
    #: The uploaded packages each job uses (package_path values), by job name.
    job_uploads: dict[str, list[str]] = field(default_factory=dict)
    #: The packages a vertex job uses: these are uploaded to the bucket.
    uploads: dict[str, TrainerPackage] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)


def plan_packages(
    jobs: Mapping[str, Any],
    *,
    backend: str,
    bucket: str | None,
    project_dir: Path,
    build: bool,
    no_bucket: str = NO_BUCKET,
) -> PackagePlan:
    """Resolve every ``package_path`` of the stack's jobs; build the sdists if ``build``.

    ``backend`` is the stack's default backend, ``bucket`` the platform bucket (None when
    the stack has none: ``no_bucket`` says what to do then). Mistakes (a missing
    directory, a failed build, a vertex job with no bucket to upload to) are Issues keyed by
    ``vertex-training:jobs.<job>[.<pool>].python_package.package_path``; the job's config
    is then left as written.
    """
    plan = PackagePlan()
    for name, config in jobs.items():
        plan.configs[name] = config
        if not isinstance(config, Mapping):
            continue
        job_backend = config.get("backend") or backend
        uris: dict[str, str] = {}
        uploaded: list[str] = []
        for pool, path in _package_paths(config):
            key = f"{JOBS_KEY}.{name}{pool}.python_package.package_path"
            package = plan.packages.get(path)
            if package is None:
                found = _package(path, key, project_dir, build)
                if isinstance(found, Issue):
                    plan.issues.append(found)
                    continue
                package = found
                plan.packages[path] = package
            if kind_of(job_backend).cloud:
                if bucket is None:
                    plan.issues.append(Issue(key, path, no_bucket))
                    continue
                uris[path] = f"gs://{bucket}/{package.object_name}"
                plan.uploads[path] = package
                uploaded.append(path)
            else:
                uris[path] = package.local_uri()
        if uploaded:
            plan.job_uploads[name] = sorted(set(uploaded))
        if uris:
            plan.configs[name] = rewrite_job(config, uris)
    return plan


def project_dir_of(stack_file: Path) -> Path:
    """The Pulumi project a stack file belongs to: the nearest folder with a Pulumi.yaml."""
    return enclosing_project(stack_file.resolve().parent)


def enclosing_project(folder: Path) -> Path:
    """The nearest folder with a Pulumi.yaml, ``folder`` or one above it; the working
    directory when there is none."""
    for candidate in (folder.resolve(), *folder.resolve().parents):
        if (candidate / "Pulumi.yaml").is_file():
            return candidate
    return Path.cwd()


def rewrite_job(config: Mapping[str, Any], uris: Mapping[str, str]) -> dict[str, Any]:
    """The job's config with each resolvable ``package_path`` put first in package_uris."""
    job = copy.deepcopy(dict(config))
    for holder in [job, *(job.get(pool) for pool in POOL_KEYS)]:
        package = holder.get("python_package") if isinstance(holder, dict) else None
        if not isinstance(package, dict) or package.get("package_path") not in uris:
            continue
        path = package.pop("package_path")
        extra = package.get("package_uris") or []
        package["package_uris"] = [uris[path], *(extra if isinstance(extra, list) else [extra])]
    return job


def source_digest(directory: Path) -> str:
    """A hash of the package's sources: relative paths, contents and executable bits."""
    digest = hashlib.sha256()
    for path in _source_files(directory):
        relative = path.relative_to(directory).as_posix()
        executable = "x" if os.access(path, os.X_OK) else "-"
        digest.update(f"{relative}\0{executable}\0{path.stat().st_size}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:DIGEST_CHARS]


def build_sdist(package: TrainerPackage, project_dir: Path) -> Path:
    """The package's sdist, built with ``python -m build`` unless already cached.

    Raises ``BuildError`` with the build's output when the front end fails.
    """
    target = package.sdist(project_dir)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        source = Path(scratch) / "src"
        out = Path(scratch) / "out"
        shutil.copytree(package.directory, source, ignore=shutil.ignore_patterns(*IGNORED))
        # The hashed files are exactly the copied ones; a file added since would be in the
        # copy but not the digest, so hash the copy again to be sure.
        if source_digest(source) != package.digest:
            raise BuildError(f"{package.directory} changed while it was being packaged; retry")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "build",
                "--sdist",
                "--no-isolation",
                "--outdir",
                str(out),
                str(source),
            ],
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
            env={**os.environ, "PIP_NO_INDEX": "1", "SOURCE_DATE_EPOCH": str(NORMALISED_MTIME)},
        )
        built = sorted(out.glob("*.tar.gz")) if out.exists() else []
        if result.returncode != 0 or len(built) != 1:
            log = (result.stdout + result.stderr).strip().splitlines()[-BUILD_LOG_LINES:]
            raise BuildError("\n".join(log) or f"no sdist was built (exit {result.returncode})")
        staged = Path(scratch) / target.name
        _normalise(built[0], staged)
        os.replace(staged, target)
    return target


class BuildError(Exception):
    """The build front end did not produce an sdist; the message is its output."""


# ------------------------------------------------------------------------------ internals


def _package_paths(config: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """(pool key suffix, package_path) of the job and each of its pools."""
    for pool, holder in [("", config), *((f".{p}", config.get(p)) for p in POOL_KEYS)]:
        package = holder.get("python_package") if isinstance(holder, Mapping) else None
        path = package.get("package_path") if isinstance(package, Mapping) else None
        if isinstance(path, str) and path.strip():
            yield pool, path


def _package(path: str, key: str, project_dir: Path, build: bool) -> TrainerPackage | Issue:
    """The package at ``path`` (its sdist built when ``build``), or the Issue that stops it."""
    directory = (project_dir / path).resolve()
    if not directory.is_dir():
        return Issue(
            key,
            path,
            f"there is no directory {directory}; package_path is a Python package "
            "directory (with a pyproject.toml or setup.py), relative to the project",
        )
    if not any((directory / marker).is_file() for marker in PROJECT_FILES):
        return Issue(
            key,
            path,
            f"{directory} has neither pyproject.toml nor setup.py, so it cannot be built; "
            "add a pyproject.toml (see trainer/pyproject.toml)",
        )
    package = TrainerPackage(path=path, directory=directory, digest=source_digest(directory))
    if build:
        try:
            build_sdist(package, project_dir)
        except (BuildError, OSError, subprocess.TimeoutExpired) as exc:
            return Issue(
                key,
                path,
                "`python -m build --sdist --no-isolation` failed; fix the package so that it "
                f"builds:\n{exc}",
            )
    return package


def _ignored(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in IGNORED)


def _source_files(directory: Path) -> list[Path]:
    files: list[Path] = []
    for folder, dirs, names in os.walk(directory, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not _ignored(d))
        files.extend(Path(folder, n) for n in sorted(names) if not _ignored(n))
    return files


def _normalise(sdist: Path, target: Path) -> None:
    """Rewrite an sdist so that equal contents give equal bytes (times, owners, order)."""
    with tarfile.open(sdist, "r:gz") as archive:
        members = sorted(archive.getmembers(), key=lambda m: m.name)
        contents: dict[str, bytes] = {}
        for member in members:
            file = archive.extractfile(member) if member.isfile() else None
            if file is not None:
                contents[member.name] = file.read()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as archive:
        for member in members:
            member.mtime = NORMALISED_MTIME
            member.uid = member.gid = 0
            member.uname = member.gname = ""
            member.pax_headers = {}
            executable = member.isdir() or member.mode & 0o111
            member.mode = EXECUTABLE_MODE if executable else FILE_MODE
            data = contents.get(member.name)
            archive.addfile(member, io.BytesIO(data) if data is not None else None)
    with (
        target.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed,
    ):
        compressed.write(buffer.getvalue())
