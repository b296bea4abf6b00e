"""The acceptance suite's fixtures: the target, the sweeper first and last, each
scenario's report and its check that nothing it made is left (acceptance/target.py)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from acceptance.target import RUN_LABEL, Target, target
from tests.engine import Project, Result, tools_missing

#: How long one `pulumi` command of a scenario may take (a job's own timeout is 10 minutes).
COMMAND_TIMEOUT_S = 1800
#: A line of a scenario's report: what it checked.
Report = Callable[[str], None]


def _say(config: pytest.Config, line: str) -> None:
    """Write ``line`` to the terminal now, past pytest's capture of the scenario's output."""
    capture = config.pluginmanager.get_plugin("capturemanager")
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        if reporter is not None:
            reporter.write_line(line)
        else:
            print(line, flush=True)


def sweep(where: Target, config: pytest.Config, when: str) -> None:
    """The sweeper: `vertex-training jobs orphans` restricted to this run's label, deleting
    what it finds (jobs of stacks a crashed run never destroyed)."""
    args = where.orphans_command("--delete", "--yes")
    done = subprocess.run(args, capture_output=True, text=True, timeout=1200, check=False)
    _say(config, f"sweeper {when}: {done.stdout.strip().splitlines()[0] if done.stdout else ''}")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="session")
def where(request: pytest.FixtureRequest) -> Iterator[Target]:
    """The run's target, swept before the first scenario and after the last."""
    if reason := tools_missing():
        pytest.skip(reason)
    with target() as chosen:
        _say(request.config, f"acceptance run {chosen.run} against {chosen.where}")
        sweep(chosen, request.config, "first")
        yield chosen
        sweep(chosen, request.config, "last")
        _say(request.config, f"cost of the run: {chosen.estimate()}")


@pytest.fixture
def report(request: pytest.FixtureRequest) -> Report:
    """Print one line of what the scenario checked, under its name."""

    def say(line: str) -> None:
        _say(request.config, f"    checked: {line}")

    return say


@pytest.fixture
def scenario(request: pytest.FixtureRequest, where: Target, report: Report) -> Iterator[str]:
    """The scenario's name (its jobs' ``acceptance_scenario`` label). Afterwards the
    project is listed by the scenario's labels: whatever is left is cancelled, deleted,
    and fails the scenario."""
    name = request.node.name.removeprefix("test_").replace("_", "-")[:63]
    yield name
    left = where.clean_up(name)
    assert not left, f"the scenario left jobs behind (now deleted): {left}"
    report(f"nothing left: no job in {where.project} carries {RUN_LABEL}={where.run}, {name}")


class AcceptanceProject(Project):
    """A project whose commands may take as long as Google does: provisioning machines,
    then a job of up to ``target.JOB_TIMEOUT``."""

    def run(self, *args: str, timeout: float = COMMAND_TIMEOUT_S) -> Result:
        return super().run(*args, timeout=timeout)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """A copy of the reference project (its Python program reads the stack config), with
    its own file backend."""
    return AcceptanceProject.create(tmp_path, stack="acceptance")
