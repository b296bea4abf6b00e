"""A Python package job's virtualenv on the local backend: its packages with their
dependencies, and the framework of its executor image, as pip installs them on Vertex AI.

``VirtualenvCache`` builds one virtualenv per content (interpreter, the image's
requirements, the packages' files) under ``root/_venvs/<hash>``, from wheels kept in
``root/_wheels/``, the wheelhouse every job under ``root`` shares. The supervisor
(``_runner.Supervisor``) asks it for a pool's Python and runs each step it needs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterator, Sequence
from fnmatch import fnmatch
from pathlib import Path
from venv import EnvBuilder

#: Interval between two tries of a virtualenv's lock that another job holds.
LOCK_POLL_S = 0.2

#: Files and folders of a package directory that are build output, not package contents.
IGNORED_PACKAGE_FILES = (
    "__pycache__",
    "*.pyc",
    "*.egg-info",
    ".git",
    ".venv",
    "build",
    "dist",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".tox",
)
#: The wheelhouse, beside ``_venvs``: every wheel a job's virtualenv was built from, named
#: as pip names wheels (name, version, tags) and shared by every job under the same root.
WHEELHOUSE_DIR = "_wheels"
#: Environment variable naming a wheelhouse to use instead, shared by every project on the
#: machine (frameworks are large: torch with its CUDA libraries is about 3 GB of wheels).
WHEELHOUSE_ENV = "VERTEX_TRAINING_WHEELHOUSE"
#: How long pip waits for the package index per request while filling the wheelhouse,
#: and how often it retries: little, so that a machine offline fails its job fast.
INDEX_TIMEOUT_S = 15
INDEX_RETRIES = 1
#: How many lines of a failed preparation command's output go into the job's error.
STEP_TAIL_LINES = 20
#: What pip prints for a requirement that nothing it can reach satisfies.
_NO_DISTRIBUTION = re.compile(
    r"No matching distribution found for (\S+)"
    r"|Could not find a version that satisfies the requirement (\S+)"
)
#: What pip prints when the package index cannot be reached.
_UNREACHABLE = (
    "NewConnectionError",
    "Failed to establish a new connection",
    "Temporary failure in name resolution",
    "Network is unreachable",
    "ConnectTimeoutError",
    "ReadTimeoutError",
    "ProxyError",
)
#: What pip prints when building an sdist failed (then it is built again, isolated).
_BUILD_FAILED = ("subprocess-exited-with-error", "metadata-generation-failed", "Failed to build")
_PYTHON_IGNORED = "require a different python version"
#: What setuptools before 70.1 prints for a wheel build without the ``wheel`` package
#: (``bdist_wheel`` is part of setuptools since 70.1).
_NO_BDIST_WHEEL = "invalid command 'bdist_wheel'"
#: The setuptools a package directory or sdist is built with: the first with bdist_wheel.
SETUPTOOLS_WITH_WHEELS = "70.1"
_VENV_READY = ".ready"
_TAR_SUFFIXES = (".tar.gz", ".tgz")


class InstallError(Exception):
    """A job's virtualenv cannot be built: a distribution cannot be had, a build fails."""


class StepFailed(InstallError):
    """A preparation command exited non-zero; ``output`` is what it printed."""

    def __init__(self, argv: list[str], code: int, output: str) -> None:
        self.output = output
        last_lines = "\n".join(output.rstrip("\n").splitlines()[-STEP_TAIL_LINES:])
        super().__init__(
            f"`{shlex.join(argv)}` exited with status {code}; its last lines:\n{last_lines}"
        )


def package_key(packages: list[Path], requirements: Sequence[str] = ()) -> str:
    """A hash of this interpreter, the requirements the executor image adds, and the
    packages' contents: the name of their virtualenv."""
    digest = hashlib.sha256(f"{sys.executable}\0{sys.version}".encode())
    for requirement in requirements:
        digest.update(f"\0requirement\0{requirement}".encode())
    for package in packages:
        digest.update(f"\0{package.name}\0".encode())
        if not package.is_dir():
            digest.update(package.read_bytes())
            continue
        for folder, dirs, files in os.walk(package):
            dirs[:] = sorted(d for d in dirs if not _ignored(d))
            for name in sorted(f for f in files if not _ignored(f)):
                path = Path(folder, name)
                digest.update(f"\0{path.relative_to(package)}\0".encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _ignored(name: str) -> bool:
    return any(fnmatch(name, pattern) for pattern in IGNORED_PACKAGE_FILES)


class VirtualenvCache:
    """Virtualenvs holding a job's packages and their dependencies, built once per content.

    As on Vertex AI, where pip installs a job's packages with their dependencies on top of
    an executor image that carries the framework and cloudml-hypertune, each virtualenv
    holds the image's requirements (``_images.image_requirements``) and the job's
    packages with their dependencies, and nothing of the provider's environment: it is
    made from this interpreter without system site packages, and filled by the provider's
    own pip (``pip --python <venv python>``, so the virtualenv needs no pip of its own).

    Package directories and sdists are built into wheels offline, with this interpreter's
    setuptools (pinned in requirements.txt; ``--no-build-isolation``). Everything else
    comes from the wheelhouse (``root/../_wheels``, or the folder WHEELHOUSE_ENV names):
    pip installs offline from it first (``--no-index --find-links``), and only when that
    fails fills it from the package index (``pip wheel``, INDEX_TIMEOUT_S and
    INDEX_RETRIES) and installs offline again.
    A requirement that neither has fails the job, naming it and this Python.
    """

    def __init__(
        self,
        root: Path,
        run: Callable[[list[str], Path | None], str],
        check_cancel: Callable[[], None],
        wheelhouse: Path | None = None,
    ) -> None:
        """``run(argv, cwd)`` runs a step and returns its output, or raises StepFailed."""
        self.root = root
        shared = os.environ.get(WHEELHOUSE_ENV)
        self.wheelhouse = wheelhouse or (Path(shared) if shared else root.parent / WHEELHOUSE_DIR)
        self._run = run
        self._check_cancel = check_cancel

    def python_for(self, packages: list[Path], requirements: Sequence[str] = ()) -> Path:
        """The Python of the virtualenv holding ``packages`` and ``requirements`` (pip
        requirement strings), with their dependencies; built if not cached yet."""
        self.root.mkdir(parents=True, exist_ok=True)
        key = package_key(packages, requirements)
        venv = self.root / key
        with self._locked(self.root / f"{key}.lock"):
            if not (venv / _VENV_READY).exists():
                shutil.rmtree(venv, ignore_errors=True)
                try:
                    self._build(venv, packages, requirements)
                except BaseException:
                    shutil.rmtree(venv, ignore_errors=True)
                    raise
                (venv / _VENV_READY).touch()
        return venv / "bin" / "python"

    @contextlib.contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        """Hold ``path``'s lock, looking for a cancel while another job holds it."""
        with path.open("a") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    self._check_cancel()
                    time.sleep(LOCK_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _build(self, venv: Path, packages: list[Path], requirements: Sequence[str]) -> None:
        print(f"creating virtualenv {venv}", flush=True)
        EnvBuilder(system_site_packages=False, with_pip=False, symlinks=True).create(venv)
        wheels = self._wheels_of(packages, venv / "build")
        wanted = [*map(str, wheels), *requirements]
        if wanted:
            self._install(venv / "bin" / "python", wanted, {wheel.name for wheel in wheels})
        shutil.rmtree(venv / "build", ignore_errors=True)

    def _wheels_of(self, packages: list[Path], scratch: Path) -> list[Path]:
        """The packages as wheels: wheels as given; directories and sdists built offline."""
        wheels = [p for p in packages if p.name.endswith(".whl")]
        sources = [
            _source_tree(p, scratch / str(i)) for i, p in enumerate(packages) if p not in wheels
        ]
        if sources:
            built = scratch / "wheels"
            build = [
                *_PIP,
                "wheel",
                "--no-deps",
                "--no-index",
                "--no-build-isolation",
                "--wheel-dir",
                str(built),
                *map(str, sources),
            ]
            try:
                self._run(build, None)
            except StepFailed as exc:
                if _NO_BDIST_WHEEL not in exc.output:
                    raise
                raise InstallError(
                    f"the job's package cannot be built into a wheel: {sys.executable} has a "
                    f"setuptools older than {SETUPTOOLS_WITH_WHEELS}, which has no bdist_wheel; "
                    f"install a newer one (`{sys.executable} -m pip install "
                    f"'setuptools>={SETUPTOOLS_WITH_WHEELS}'`), or give the job a built wheel "
                    "(docs/troubleshooting.md)"
                ) from None
            wheels += sorted(built.glob("*.whl"))
        return wheels

    def _install(self, python: Path, wanted: list[str], own: set[str]) -> None:
        """Install ``wanted`` from the wheelhouse, filling it from the index if need be."""
        self.wheelhouse.mkdir(parents=True, exist_ok=True)
        install = [
            *_PIP,
            "--python",
            str(python),
            "install",
            "--no-index",
            "--find-links",
            str(self.wheelhouse),
            "--no-compile",
            *wanted,
        ]
        try:
            self._run(install, None)
            return
        except StepFailed:
            print(
                f"the wheelhouse {self.wheelhouse} lacks some of it: fetching from the "
                "package index",
                flush=True,
            )
        self._fill(wanted, own)
        self._run(install, None)

    def _fill(self, wanted: list[str], own: set[str]) -> None:
        """``pip wheel`` ``wanted`` and its dependencies into the wheelhouse (but not the
        job's own wheels, whose names do not change with their contents)."""
        staging = Path(tempfile.mkdtemp(prefix=".fill-", dir=self.wheelhouse))
        fetch = [
            *_PIP,
            "wheel",
            "--find-links",
            str(self.wheelhouse),
            "--wheel-dir",
            str(staging),
            "--timeout",
            str(INDEX_TIMEOUT_S),
            "--retries",
            str(INDEX_RETRIES),
        ]
        try:
            try:
                # An sdist on the index (cloudml-hypertune is one) builds with this
                # interpreter's setuptools; one that needs another backend, isolated.
                self._run([*fetch, "--no-build-isolation", *wanted], None)
            except StepFailed as exc:
                if _missing_distribution(exc.output) or not any(
                    words in exc.output for words in _BUILD_FAILED
                ):
                    raise
                self._run([*fetch, *wanted], None)
        except StepFailed as exc:
            missing = _missing_distribution(exc.output)
            if missing is None:
                raise
            raise InstallError(self._missing_message(missing, exc.output)) from None
        else:
            for wheel in staging.glob("*.whl"):
                if wheel.name not in own:
                    os.replace(wheel, self.wheelhouse / wheel.name)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _missing_message(self, requirement: str, output: str) -> str:
        python = f"Python {sys.version_info.major}.{sys.version_info.minor}"
        reason = (
            "the package index could not be reached"
            if any(words in output for words in _UNREACHABLE)
            else f"the package index has no distribution of it for {python}"
        )
        ignored = [line.strip() for line in output.splitlines() if _PYTHON_IGNORED in line]
        return (
            f"no distribution found for {requirement} ({python}, "
            f"{sysconfig.get_platform()}): it is not in the wheelhouse {self.wheelhouse}, "
            f"and {reason}{f' ({ignored[0]})' if ignored else ''}. Connect this machine to "
            f"the package index, put a wheel of it in {self.wheelhouse}, or require a "
            f"version that has one for {python}"
        )


#: The provider's own pip, which installs into a job's virtualenv with ``--python``.
_PIP = (sys.executable, "-m", "pip", "--disable-pip-version-check")


def _missing_distribution(output: str) -> str | None:
    """The requirement pip found no distribution for, from its output; None if none."""
    matches = list(_NO_DISTRIBUTION.finditer(output))
    return next((m[1] or m[2] for m in reversed(matches)), None)


def _source_tree(package: Path, destination: Path) -> Path:
    """A scratch copy of a package directory, or the unpacked tree of an sdist."""
    if package.is_dir():
        shutil.copytree(package, destination, ignore=shutil.ignore_patterns(*IGNORED_PACKAGE_FILES))
        return destination
    destination.mkdir(parents=True)
    if package.name.endswith(_TAR_SUFFIXES):
        with tarfile.open(package) as archive:
            archive.extractall(destination, filter="data")
    elif package.name.endswith(".zip"):
        with zipfile.ZipFile(package) as archive:
            archive.extractall(destination)
    else:
        raise InstallError(f"{package} is neither a package directory, a wheel nor an sdist")
    entries = list(destination.iterdir())
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else destination
