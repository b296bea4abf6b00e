"""scripts/install-pulumi.sh: an installed Pulumi CLI recent enough is used without Go;
an older one, or none, means a build, which needs Go.

The "installed" CLIs here are small scripts answering `pulumi version`; the PATH the
script sees holds only the commands it needs, so that no Go is found.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "scripts" / "install-pulumi.sh"
COMMANDS = ("sed", "grep", "sort", "head", "tr", "paste", "readlink", "dirname", "mkdir", "rm")
COMMANDS += ("ln", "install", "cat")
MIN_CLI = re.search(r"^MIN_CLI=(\S+)$", SCRIPT.read_text(), re.M)[1]  # type: ignore[index]


def fake_cli(directory: Path, version: str, *, language_host: bool = True) -> Path:
    """A directory holding a `pulumi` that says it is ``version`` (and its language host)."""
    directory.mkdir(parents=True)
    cli = directory / "pulumi"
    cli.write_text(f"#!/bin/sh\necho v{version}\n")
    cli.chmod(0o755)
    if language_host:
        host = directory / "pulumi-language-python"
        host.write_text("#!/bin/sh\nexit 0\n")
        host.chmod(0o755)
    return cli


def install(tmp_path: Path, *path: Path, what: str = "") -> subprocess.CompletedProcess[str]:
    """Run the script (with ``what``: "all" or nothing) with ``path`` (plus the basic
    commands, and no Go) as PATH."""
    system = tmp_path / "system"
    if not system.exists():
        system.mkdir()
        for name in COMMANDS:
            found = shutil.which(name)
            assert found, f"{name} is needed to run the install script"
            (system / name).symlink_to(found)
    env = {
        "PATH": os.pathsep.join(str(p) for p in (*path, system)),
        "VERTEX_TOOLS_DIR": str(tmp_path / "tools"),
        "HOME": str(tmp_path),
    }
    return subprocess.run(
        [shutil.which("bash") or "/bin/bash", str(SCRIPT), *([what] if what else [])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_minimum_is_older_than_the_release_the_project_builds() -> None:
    """MIN_CLI is a version at or below the pinned `pulumi` (else no CLI would do)."""
    pinned = re.search(r"^pulumi==(\S+)$", (REPO / "requirements.txt").read_text(), re.M)
    assert pinned is not None
    as_tuple = [tuple(int(n) for n in v.split(".")) for v in (MIN_CLI, pinned[1])]
    assert as_tuple[0] <= as_tuple[1]


@pytest.mark.parametrize("version", [MIN_CLI, "3.259.0", "3.300.1"])
def test_an_installed_cli_recent_enough_is_used_without_go(tmp_path: Path, version: str) -> None:
    cli = fake_cli(tmp_path / "installed", version)
    result = install(tmp_path, cli.parent)
    assert result.returncode == 0, result.stderr
    assert f"using the installed Pulumi CLI {version}" in result.stderr
    linked = tmp_path / "tools" / "bin" / "pulumi"
    assert linked.is_symlink() and linked.resolve() == cli.resolve()
    # The installed release's own language host and host scripts serve it: none of ours.
    assert sorted(p.name for p in linked.parent.iterdir()) == ["pulumi"]
    # `make up` needs nothing else: the other languages' hosts are not even looked for.
    assert "pulumi-language-yaml" not in result.stderr
    assert "pulumi-language-nodejs" not in result.stderr


def test_all_looks_for_the_other_languages_hosts(tmp_path: Path) -> None:
    """`make test` and `make sdks` ask for every host: an installed CLI without the YAML,
    Node.js and Go ones, and no Go to build them, is still used, with a warning for each
    that says which programs will not run."""
    cli = fake_cli(tmp_path / "installed", "3.259.0")
    result = install(tmp_path, cli.parent, what="all")
    assert result.returncode == 0, result.stderr
    assert "using the installed Pulumi CLI 3.259.0" in result.stderr
    assert "Pulumi YAML programs will not run" in result.stderr
    for host in ("pulumi-language-nodejs", "pulumi-language-go"):
        assert f"no {host} is installed beside the Pulumi CLI" in result.stderr


def test_an_unknown_argument_is_refused(tmp_path: Path) -> None:
    result = install(tmp_path, what="everything")
    assert result.returncode == 2
    assert "usage: install-pulumi.sh [all]" in result.stderr


def test_an_older_cli_means_a_build_and_without_go_says_what_to_install(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path / "installed", "3.100.0")
    result = install(tmp_path, cli.parent)
    assert result.returncode == 1
    assert f"3.100.0 ({cli}) is older than {MIN_CLI}" in result.stderr
    assert "needs Go" in result.stderr and "pulumi.com/docs/install" in result.stderr


def test_a_cli_without_its_language_host_is_not_used(tmp_path: Path) -> None:
    cli = fake_cli(tmp_path / "installed", "3.259.0", language_host=False)
    result = install(tmp_path, cli.parent)
    assert result.returncode == 1
    assert "has no pulumi-language-python" in result.stderr and "needs Go" in result.stderr


def test_no_cli_and_no_go(tmp_path: Path) -> None:
    result = install(tmp_path)
    assert result.returncode == 1
    assert f"no Pulumi CLI {MIN_CLI} or later is installed" in result.stderr
