"""The README's TypeScript start, run as a reader runs it: its commands, taken from the
README's blocks, in a shell, from a checkout's folder to a job that succeeds on the
`local` stack. Two steps stand in for what the test run has already built: `make plugin`
and `scripts/pack-sdks.sh` (the checkout's dist/ holds the session's plugin archive and
npm tarball), and `git clone` (the checkout is this repository's templates, SDKs and
provider/, linked). Everything else, `pulumi new` included, is the README's own text, in
a home folder of its own (`pulumi login --local` logs in to that folder by its path)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.engine import TOOLS_BIN, tools_missing
from tests.release import REPO, plugin_archives

#: The steps of the install block that the test run has done already (or that fetch).
BUILT_BY_THE_TEST_RUN = ("git clone", "make plugin", "bash scripts/pack-sdks.sh")


def block_after(heading: str) -> str:
    """The first ```sh block after ``heading`` in the README."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    rest = text[text.index(heading) :]
    [block] = re.findall(r"```sh\n(.*?)```", rest, re.S)[:1]
    return block


def commands(block: str) -> list[str]:
    """The block's commands, continuation lines joined, comments dropped."""
    joined = block.replace("\\\n", " ")
    return [
        re.sub(r"\s+#.*$", "", line).strip()
        for line in joined.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


class TestCommands:
    def test_the_blocks_read_as_commands(self) -> None:
        """The install block builds then installs the plugin; the start makes and runs a stack."""
        install = commands(block_after("## Install from a checkout"))
        assert any(line.startswith("pulumi plugin install resource") for line in install)
        start = commands(block_after("### TypeScript"))
        assert start[0] == "mkdir acme-ml && cd acme-ml"
        assert any(line.startswith("pulumi up --stack local") for line in start)


@pytest.mark.engine
@pytest.mark.polyglot
def test_the_typescript_start_runs(
    tmp_path: Path, venv: Path, nodejs_sdk: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The README's commands, from `cd vertex-training` to "example: SUCCEEDED". The
    reader's `python3` is a virtualenv's with setuptools 70.1 or later, as the README asks
    (the wheel's: its plugin on PATH is passed over)."""
    if reason := tools_missing():
        pytest.skip(reason)
    if not shutil.which("npm"):
        pytest.skip("npm is not installed")
    checkout = tmp_path / "src" / "vertex-training"
    (checkout / "dist").mkdir(parents=True)
    for name in ("templates", "sdk", "provider"):
        (checkout / name).symlink_to(REPO / name)
    for archive in plugin_archives(tmp_path_factory).glob("*linux-amd64.tar.gz"):
        shutil.copy(archive, checkout / "dist")
    shutil.copy(nodejs_sdk, checkout / "dist")

    install = [
        line
        for line in commands(block_after("## Install from a checkout"))
        if not line.startswith(BUILT_BY_THE_TEST_RUN)
    ]
    home = tmp_path / "home"
    home.mkdir()
    # `pulumi login --local` is file://~, which the CLI reads from the system's user
    # database rather than HOME: the test logs in to its own home by path instead.
    state = commands(block_after("First choose where Pulumi keeps state"))
    assert "pulumi login --local" in state
    state = [line.replace("pulumi login --local", f"pulumi login file://{home}") for line in state]
    script = ["set -euo pipefail", *install, *state, *commands(block_after("### TypeScript"))]
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith("PULUMI_") and name != "PYTHON"
    }
    env.update(
        HOME=str(home),
        PATH=f"{TOOLS_BIN}:{venv / 'bin'}:{env.get('PATH', '')}",
        PULUMI_HOME=str(home / ".pulumi-home"),
        PULUMI_SKIP_UPDATE_CHECK="true",
        # A plugin on PATH (a developer's virtualenv) would win over the archive installed.
        PULUMI_IGNORE_AMBIENT_PLUGINS="true",
        PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="true",
        NO_COLOR="1",
    )
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=checkout.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said
    assert "example: SUCCEEDED" in said, said
    assert (home / ".pulumi" / "stacks").is_dir(), "the state is not where `login --local` puts it"
