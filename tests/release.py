"""What one release is made of, as the tests read it: its version (provider/pyproject.toml's,
the one source of it), where its SDKs are, and its packages built as a user gets them:
the wheel and sdist (``dist``), and a fresh virtualenv outside the repository with the
wheel installed (``venv``: its bin/ holds the plugin, pulumi-resource-vertex-training).
tests/conftest.py makes both session fixtures. With ``VERTEX_TRAINING_DIST`` set to a
folder of built packages (the release workflow's), the tests take those instead of
building them: what is published is what was tested."""

from __future__ import annotations

import contextlib
import fcntl
import http.server
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine import REPO, go_env

#: The release's version.
RELEASE: str = tomllib.loads((REPO / "provider" / "pyproject.toml").read_text())["project"][
    "version"
]
#: The Pulumi release requirements.txt pins: the CLI's, and the SDKs' of every language.
PULUMI: str = next(
    line.removeprefix("pulumi==").strip()
    for line in (REPO / "requirements.txt").read_text().splitlines()
    if line.startswith("pulumi==")
)
#: The checked-in SDKs (`make sdks`), one folder per language.
SDK = REPO / "sdk"
#: The release's packages, built before the tests (``VERTEX_TRAINING_DIST``), or None.
BUILT = Path(os.environ["VERTEX_TRAINING_DIST"]) if os.environ.get("VERTEX_TRAINING_DIST") else None
WHEEL = "vertex_training-*.whl"
SDIST = "vertex_training-*.tar.gz"
NPM_TARBALL = "vertex-training-*.tgz"
#: Building and installing take a while; pip's own limit is per request.
INSTALL_TIMEOUT_S = 900


def run(
    *args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_TIMEOUT_S,
        check=False,
    )
    assert result.returncode == 0, f"{args}:\n{result.stdout}\n{result.stderr}"
    return result


def once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The folder ``name`` that ``build`` fills once per test run: under pytest-xdist, the
    first worker to ask builds it while the others wait on a lock, and all of them share
    it (the packages and archives below take a minute or more to make). A build that
    fails leaves nothing behind: the next worker to ask tries again, and fails alike."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, above each worker's own
    folder = base / name
    done = folder / ".built"
    with (base / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException:
                shutil.rmtree(folder, ignore_errors=True)
                raise
            done.touch()
    return folder


def build_dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist `python -m build` makes of provider/ (or BUILT's)."""
    if BUILT is not None:
        return BUILT

    def build(out: Path) -> None:
        source = tmp_path_factory.mktemp("source") / "provider"
        # From a copy: a build writes build/ and *.egg-info beside the sources.
        shutil.copytree(
            REPO / "provider", source, ignore=shutil.ignore_patterns("__pycache__", ".venv")
        )
        run(sys.executable, "-m", "build", "--no-isolation", "--outdir", out, source)

    return once(tmp_path_factory, "dist", build)


def install_venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv outside the repository with the wheel installed."""

    def build(user: Path) -> None:
        folder = user / "v"
        run(sys.executable, "-m", "venv", folder)
        pins = [
            line
            for line in (REPO / "requirements.txt").read_text().splitlines()
            if re.match(r"^[A-Za-z0-9_.-]+==", line)
        ]
        constraints = folder / "constraints.txt"
        constraints.write_text("\n".join(pins) + "\n")
        [wheel] = dist.glob(WHEEL)
        run(folder / "bin" / "python", "-m", "pip", "install", "--quiet", "-c", constraints, wheel)

    return once(tmp_path_factory, "user", build) / "v"


def pack_nodejs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdk/nodejs built and packed as the release packs it (scripts/pack-sdks.sh): the
    npm tarball a user's `npm install vertex-training` fetches (or BUILT's)."""
    if BUILT is not None:
        [built] = BUILT.glob(NPM_TARBALL)
        return built
    if not shutil.which("npm"):
        pytest.skip("npm is not installed")
    out = once(
        tmp_path_factory,
        "nodejs-sdk",
        lambda out: run("bash", REPO / "scripts" / "pack-sdks.sh", out, "nodejs", cwd=REPO),
    )
    [tarball] = out.glob(NPM_TARBALL)
    return tarball


def plugin_archives(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder of the plugin's archives, as the release attaches them to its GitHub
    release (scripts/pack-sdks.sh plugin), or BUILT's."""
    if BUILT is not None:
        return BUILT
    return once(
        tmp_path_factory,
        "plugin-archives",
        lambda out: run("bash", REPO / "scripts" / "pack-sdks.sh", out, "plugin", cwd=REPO),
    )


def copy_go_sdk(folder: Path) -> Path:
    """A copy of sdk/go at ``folder``, as `go get` fetches the module, whose go.mod asks
    for the releases the Pulumi CLI was built with (tools/pulumi-cli/go.mod) of every
    module both require (the same Pulumi SDK; a newer gRPC, protobuf and golang.org/x
    modules than sdk/go's minimums, as Go's version selection gives a program that also
    requires those releases). Built with the tools' flags (``go_env``), the packages they
    share are then the ones `make tools` compiled, found in Go's cache: compiling them
    again took three CPU-minutes of CI (docs/testing.md)."""
    shutil.copytree(SDK / "go", folder)
    wanted = dict(
        re.findall(r"^\t(\S+) (v\S+)", (REPO / "tools" / "pulumi-cli" / "go.mod").read_text(), re.M)
    )
    mine = re.findall(r"^\t(\S+) v\S+", (folder / "go.mod").read_text(), re.M)
    newer = [f"-require={module}@{wanted[module]}" for module in mine if module in wanted]
    env = {**os.environ, **go_env()}
    if newer:
        run("go", "mod", "edit", *newer, cwd=folder, env=env)
        run("go", "mod", "tidy", cwd=folder, env=env)
    return folder


def compile_go_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of sdk/go, compiled once per run: what it imports (the Pulumi Go SDK, gRPC,
    protobuf: minutes of compiling) then sits in Go's build cache (.tools/go/cache), and
    the Go programs of the tests, which build at the same time under pytest-xdist, find
    it there rather than each compiling it again."""
    if not shutil.which("go"):
        pytest.skip("go is not installed")

    def build(folder: Path) -> None:
        copy_go_sdk(folder / "go")
        run("go", "build", "./...", cwd=folder / "go", env={**os.environ, **go_env()})

    return once(tmp_path_factory, "go-sdk", build) / "go"


@contextlib.contextmanager
def serving(folder: Path) -> Iterator[str]:
    """An HTTP server on loopback serving ``folder``, as a release's download page: its
    URL while the context lasts."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
