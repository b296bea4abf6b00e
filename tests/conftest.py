"""Fixtures shared across test modules."""

from __future__ import annotations

import asyncio
import os
import resource
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# Before any test imports the Pulumi SDK's provider modules: the plugin package gives them
# Google's google.rpc.Status (vertex_training.plugin's docstring says why).
import vertex_training.plugin  # noqa: F401
from tests.release import (
    build_dist,
    compile_go_sdk,
    install_venv,
    pack_nodejs,
    plugin_archives,
    serving,
)
from vertex_training.backends import reachability
from vertex_training.credentials import VARIABLES as CREDENTIAL_VARIABLES
from vertex_training.testing import ManualClock

# Google's auth library looks for a Compute Engine metadata server (a link-local address)
# when it finds no credentials; the tests' traffic stays on loopback, and the processes
# they start inherit this.
os.environ.setdefault("NO_GCE_CHECK", "true")

#: The session fixtures that build a package or an archive (tests/release.py), a minute or
#: more each, which every test that takes one waits for.
BUILDS = frozenset({"dist", "venv", "nodejs_sdk", "plugin_download", "plugin_archive", "go_sdk"})


# The tests' thread has a current event loop from the start, so that asking for it never
# makes one implicitly (deprecated since Python 3.12, refused by 3.14).
asyncio.set_event_loop(asyncio.new_event_loop())


@pytest.fixture(autouse=True)
def _a_current_event_loop() -> Iterator[None]:
    """Leave the thread with a current event loop after each test: ``asyncio.run`` (the
    plugin's tests) closes its loop and leaves the thread with none, and the Pulumi SDK's
    mocks (the program of a later test on the same worker) run on the thread's loop."""
    yield
    try:
        loop = asyncio.get_event_loop_policy().get_event_loop()
    except RuntimeError:
        loop = None
    if loop is None or loop.is_closed():
        asyncio.set_event_loop(asyncio.new_event_loop())


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests start first, so that no pytest-xdist worker (`make test` runs
    them) is left with a long one when the others are done: a first taker of each build,
    so that the builds start at once, then the other tests that wait for a build, then
    the programs of other languages, then the other engine tests, then the rest, each
    group in the order of its files. `make test` has pytest-xdist hand the tests out in
    this order, one at a time as each worker frees up (``--maxschedchunk 1``)."""
    started: set[str] = set()
    first: set[str] = set()
    for item in items:
        builds = BUILDS & set(getattr(item, "fixturenames", ()))
        if builds - started:
            first.add(item.nodeid)
            started |= builds

    def group(item: pytest.Item) -> int:
        if item.nodeid in first:
            return 0
        if BUILDS & set(getattr(item, "fixturenames", ())):
            return 1
        if item.get_closest_marker("polyglot"):
            return 2
        if item.get_closest_marker("engine"):
            return 3
        return 4

    items.sort(key=group)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """With VERTEX_TEST_TIMELINE set to a file, each test appends a line to it: its
    worker, start and end (seconds since the epoch), the CPU seconds of its worker and of
    the processes it started and waited for (the CLI and what the CLI waited for), and its
    id. `scripts/test_timeline.py` reads the file: where a run's time and CPU went."""
    path = os.environ.get("VERTEX_TEST_TIMELINE")
    if not path:
        yield
        return
    before = time.time(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    yield
    after = time.time(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(path, "a") as timeline:
        timeline.write(
            f"{worker}\t{before[0]:.2f}\t{after[0]:.2f}\t{after[1] - before[1]:.2f}\t"
            f"{after[2] - before[2]:.2f}\t{item.nodeid}\n"
        )


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


@pytest.fixture(autouse=True)
def no_credential_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads this machine's Google credential variables (GOOGLE_CREDENTIALS, ...:
    ``vertex_training.credentials.VARIABLES``), which would send the fakes' calls a token
    of its own, or to Google for one; a test that wants one sets it."""
    for name in CREDENTIAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def not_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads whether the machine that runs it is a CI runner (``CI``, which the
    quota section reads to speak to a pull request): the suite reads the same in CI and
    on a laptop. A test that wants a runner sets it, as GitHub's runner does."""
    monkeypatch.delenv("CI", raising=False)


@pytest.fixture(autouse=True)
def endpoints_unknown() -> Iterator[None]:
    """Each test starts with no endpoint known reached or unreachable. The memory is the
    process's, and a worker runs many tests: a fake's ephemeral port that an earlier test
    left unreachable (its server stopped under a retrying call) may be a later fake's."""
    reachability.forget()
    yield
    reachability.forget()


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves by hand, for fakes whose jobs advance only when told."""
    return ManualClock()


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel and sdist `python -m build` makes of provider/ (tests/release.py)."""
    return build_dist(tmp_path_factory)


@pytest.fixture(scope="session")
def venv(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtualenv outside the repository with the wheel installed."""
    return install_venv(dist, tmp_path_factory)


@pytest.fixture(scope="session")
def nodejs_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The TypeScript SDK's npm tarball, built from sdk/nodejs."""
    return pack_nodejs(tmp_path_factory)


@pytest.fixture(scope="session")
def go_sdk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """sdk/go compiled once per run, for the Go programs' builds to find in Go's cache."""
    return compile_go_sdk(tmp_path_factory)


@pytest.fixture(scope="session")
def plugin_download(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a loopback server holding the plugin's archives, as a release's GitHub
    release holds them."""
    with serving(plugin_archives(tmp_path_factory)) as url:
        yield url
