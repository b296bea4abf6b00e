"""The bundled plugin's entry point: what PyInstaller freezes into the executable
``pulumi-resource-vertex-training`` of a release's plugin archive (scripts/build-plugin.sh).

The engine runs it with its own address (``pulumi-resource-vertex-training ADDRESS``): it
serves the plugin, as ``python -m vertex_training.plugin ADDRESS`` does.

The bundle is also what the plugin's code finds as ``sys.executable``. The local backend
starts each job's supervisor as ``sys.executable -m vertex_training.backends.local
JOB_DIR``: here that runs the module of the bundle. A supervisor of a Python package job
builds the job's virtualenv from ``sys.executable`` and installs into it with that
Python's pip, which a bundle cannot be (it has no pip, and a virtualenv needs a real
interpreter): the supervisor gets the Python of this machine instead, PYTHON or
``python3`` on PATH, as the job's code needs one anyway. Container jobs and jobs on
Vertex AI need none.
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import shutil
import subprocess
import sys

#: The module the local backend starts for each job (vertex_training.backends.local).
SUPERVISOR = "vertex_training.backends.local"
#: How long asking a Python for its base interpreter may take.
PYTHON_QUERY_TIMEOUT_S = 60
#: The library path PyInstaller's bootloader sets for the bundle (Linux), and where it
#: keeps the value it was started with.
LIBRARY_PATH = "LD_LIBRARY_PATH"
LIBRARY_PATH_ORIG = "LD_LIBRARY_PATH_ORIG"


def restore_library_path() -> None:
    """Give the processes the bundle starts (a job's Python, a container engine) the
    library path the bundle was started with, not one that finds the bundle's own copies
    of libssl or libstdc++ first. The bundle itself keeps the path it started with."""
    bundle = getattr(sys, "_MEIPASS", None)
    first = os.environ.get(LIBRARY_PATH, "").split(os.pathsep)[0]
    if bundle is None or not first or os.path.realpath(first) != os.path.realpath(bundle):
        return  # not set by the bootloader (macOS, Windows)
    original = os.environ.pop(LIBRARY_PATH_ORIG, None)
    if original is not None:
        os.environ[LIBRARY_PATH] = original
    else:
        del os.environ[LIBRARY_PATH]


def forget_the_bundles_folder() -> None:
    """Take the bundle's own folder off PYTHONPATH. The plugin puts the folder it imports
    vertex_training from there for each job's supervisor (the local backend's
    ``_supervisor_environment``): here that is the bundle's _internal/, which the bundle
    itself does not read PYTHONPATH for, and from which a Python the supervisor starts
    (pip, the job's code) would import the bundle's standard library and packages before
    its own."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle is None or "PYTHONPATH" not in os.environ:
        return
    entries = [
        entry
        for entry in os.environ["PYTHONPATH"].split(os.pathsep)
        if entry and os.path.realpath(entry) != os.path.realpath(bundle)
    ]
    if entries:
        os.environ["PYTHONPATH"] = os.pathsep.join(entries)
    else:
        del os.environ["PYTHONPATH"]


def use_this_machines_python() -> None:
    """Make PYTHON, or ``python3`` on PATH, the interpreter a job's supervisor builds
    virtualenvs from (``sys._base_executable``, which ``venv`` reads) and runs pip with
    (``sys.executable``). Without one, a Python package job fails at its first pip step,
    saying so (``run_module``)."""
    python = os.environ.get("PYTHON") or shutil.which("python3")
    if not python:
        return
    query = "import sys; print(getattr(sys, '_base_executable', '') or sys.executable)"
    try:
        answer = subprocess.run(
            [python, "-c", query],
            capture_output=True,
            text=True,
            timeout=PYTHON_QUERY_TIMEOUT_S,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return
    sys.executable = python
    sys._base_executable = answer.stdout.strip() or python  # type: ignore[attr-defined]


def run_module(module: str, args: list[str]) -> int:
    """``python -m MODULE ARGS`` with the bundle's modules."""
    try:
        found = importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its package is missing
        found = False
    if not found:
        print(
            f"vertex-training plugin: the bundled plugin has no module {module}: a Python "
            "package job on the local backend needs a Python 3 with pip on this machine "
            "(python3 on PATH, or PYTHON)",
            file=sys.stderr,
        )
        return 1
    if module == SUPERVISOR:
        use_this_machines_python()
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


def main(argv: list[str]) -> int:
    restore_library_path()
    forget_the_bundles_folder()
    if argv[:1] == ["-m"] and len(argv) > 1:
        return run_module(argv[1], argv[2:])
    from vertex_training.plugin.__main__ import main as serve

    return serve(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
