"""How big is the plugin's release archive, and how long does the plugin take to start
from it: the bundled plugin (scripts/build-plugin.sh: PyInstaller, its own interpreter)
beside the launcher the archives held up to 0.3.0 (provider/pulumi-resource-vertex-training,
which makes a virtualenv and installs the release into it on its first run)?

Both archives are unpacked as `pulumi plugin install` unpacks them, into fresh folders,
then started as the engine starts a plugin (the executable, the engine's address as
argument; a loopback listener stands in for the engine), each start timed from exec to
the port line on stdout:

- first start: the first after the install. The launcher's makes its .venv with this
  Python and pip-installs the release; with no package index (PIP_NO_INDEX, the index URL
  a closed port), from a wheelhouse made beforehand (PIP_FIND_LINKS: the release's wheel,
  built from provider/, and its dependencies at requirements.txt's pins), so its figure
  leaves out every download a user's first start makes.
- per-command start: the median of RUNS starts after that (each pulumi command starts
  the plugin again), the two plugins taking turns.

It prints the archives' sizes, the installed folders' sizes, the first start and the
per-command start (median, min, max) of each; and the bundle's build time when it built
the archive. With --bundle-only it measures an archive of this machine on its own (the
release workflow does so on each runner: a bundle that does not start fails the run).

    python scripts/bench_plugin_start.py [--runs 10] [--archive ARCHIVE] [--bundle-only]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PLUGIN = "pulumi-resource-vertex-training"
RUNS = 10
#: The longest a start may take before the plugin counts as not starting: a launcher's
#: first start installs the release and its dependencies.
START_TIMEOUT_S = 600.0
#: How long a plugin has to end once told to.
STOP_TIMEOUT_S = 10.0
SCHEMA = REPO / "provider" / "vertex_training" / "plugin" / "schema.json"
VERSION: str = json.loads(SCHEMA.read_text())["version"]
LABEL_WIDTH = 34
COLUMN_WIDTH = 22


@dataclass
class Plugin:
    """One plugin archive, unpacked; its starts as they were timed."""

    name: str
    archive: Path
    folder: Path
    env: dict[str, str]
    first_s: float = 0.0
    starts_s: list[float] = field(default_factory=list)

    @property
    def executable(self) -> Path:
        return self.folder / (f"{PLUGIN}.exe" if os.name == "nt" else PLUGIN)


@contextlib.contextmanager
def engine_stand_in() -> Iterator[str]:
    """A loopback listener that accepts and drops connections, as an engine's address
    (the plugin checks that its engine still listens): its host:port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                connection, _ = server.accept()
                connection.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{server.getsockname()[1]}"
    finally:
        stop.set()
        thread.join()
        server.close()


def start(plugin: Plugin, engine: str) -> float:
    """Start the plugin as the engine does; the seconds until it printed its port."""
    began = time.perf_counter()
    process = subprocess.Popen(
        [str(plugin.executable), engine],
        cwd=plugin.folder,
        env=plugin.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline() if process.stdout else ""
        took = time.perf_counter() - began
        if not re.fullmatch(r"\d+\n", line):
            process.kill()
            _, err = process.communicate(timeout=STOP_TIMEOUT_S)
            raise SystemExit(f"{plugin.name} printed no port ({line!r}):\n{err}")
        return took
    finally:
        process.terminate()
        try:
            process.communicate(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def unpack(archive: Path, folder: Path) -> Path:
    """The archive unpacked into ``folder``, as `pulumi plugin install --file` does."""
    folder.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="tar")
    return folder


def build_bundle(out: Path) -> tuple[Path, float]:
    """scripts/build-plugin.sh's archive of this machine, and how long it took."""
    began = time.perf_counter()
    made = subprocess.run(
        ["bash", str(REPO / "scripts" / "build-plugin.sh"), str(out), sys.executable],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - began
    if made.returncode != 0:
        raise SystemExit(f"build-plugin.sh failed:\n{made.stdout}{made.stderr}")
    return Path(made.stdout.strip().splitlines()[-1]), took


def launcher_archive(out: Path) -> Path:
    """The archive of the launcher, as scripts/pack-sdks.sh made it before the bundle:
    the launcher, VERSION and LICENSE."""
    folder = out / "launcher-source"
    folder.mkdir()
    shutil.copy2(REPO / "provider" / PLUGIN, folder / PLUGIN)
    shutil.copy2(REPO / "LICENSE", folder / "LICENSE")
    (folder / "VERSION").write_text(f"{VERSION}\n")
    archive = out / f"{PLUGIN}-v{VERSION}-launcher.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name in (PLUGIN, "VERSION", "LICENSE"):
            tar.add(folder / name, name)
    return archive


def wheelhouse(out: Path) -> Path:
    """The release's wheel (built from provider/) and its dependencies at
    requirements.txt's pins: what the launcher's first start installs from."""
    folder = out / "wheelhouse"
    source = out / "provider"
    shutil.copytree(
        REPO / "provider", source, ignore=shutil.ignore_patterns("__pycache__", ".venv*", "build")
    )
    python = [sys.executable, "-m"]
    run([*python, "build", "--no-isolation", "--wheel", "--outdir", str(folder), str(source)])
    pins = [
        line
        for line in (REPO / "requirements.txt").read_text().splitlines()
        if re.match(r"^[A-Za-z0-9_.-]+==", line)
    ]
    constraints = out / "constraints.txt"
    constraints.write_text("\n".join(pins) + "\n")
    [wheel] = folder.glob("vertex_training-*.whl")
    run([*python, "pip", "wheel", "--quiet", "-c", str(constraints), "-w", str(folder), str(wheel)])
    return folder


def run(args: list[str]) -> None:
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stdout}{done.stderr}")


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def offline_env(**extra: str) -> dict[str, str]:
    """This environment with no package index and no Python named for the plugin."""
    env = {k: v for k, v in os.environ.items() if k != "VERTEX_TRAINING_PYTHON"}
    return {
        **env,
        "PIP_NO_INDEX": "1",
        "PIP_INDEX_URL": f"http://127.0.0.1:{closed_port()}/simple",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        **extra,
    }


def size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.lstat().st_size for p in path.rglob("*") if not p.is_dir())


def megabytes(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.1f} kB"


def row(label: str, *cells: str) -> None:
    print(f"{label:<{LABEL_WIDTH}}" + "".join(f"{cell:>{COLUMN_WIDTH}}" for cell in cells))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=RUNS, help="per-command starts of each")
    parser.add_argument("--archive", type=Path, help="the bundle's archive (else built here)")
    parser.add_argument("--bundle-only", action="store_true", help="measure the bundle alone")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="bench-plugin-") as scratch:
        work = Path(scratch)
        built_s = None
        archive = args.archive
        if archive is None:
            archive, built_s = build_bundle(work / "out")
        bundle = Plugin("bundle", archive, unpack(archive, work / "bundle"), offline_env())
        plugins = [bundle]
        if not args.bundle_only:
            houses = wheelhouse(work)
            launcher_tgz = launcher_archive(work)
            env = offline_env(PYTHON=sys.executable, PIP_FIND_LINKS=str(houses))
            plugins.append(
                Plugin("launcher", launcher_tgz, unpack(launcher_tgz, work / "launcher"), env)
            )

        with engine_stand_in() as engine:
            for plugin in plugins:
                plugin.first_s = start(plugin, engine)
            for _ in range(args.runs):
                for plugin in plugins:
                    plugin.starts_s.append(start(plugin, engine))

        print(f"vertex-training {VERSION} plugin, {sys.platform}, {os.cpu_count()} CPUs")
        row("", *(p.name for p in plugins))
        row("archive size", *(megabytes(size(p.archive)) for p in plugins))
        row("installed size (after 1st start)", *(megabytes(size(p.folder)) for p in plugins))
        row("first start", *(f"{p.first_s:.2f} s" for p in plugins))
        row(
            f"per-command start (median of {args.runs})",
            *(f"{statistics.median(p.starts_s):.2f} s" for p in plugins),
        )
        row("  min / max", *(f"{min(p.starts_s):.2f} / {max(p.starts_s):.2f} s" for p in plugins))
        if built_s is not None:
            print(f"bundle built in {built_s:.0f} s (scripts/build-plugin.sh)")
        if not args.bundle_only:
            print("launcher's first start: a virtualenv and pip install from a local wheelhouse")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
