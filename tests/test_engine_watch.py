"""The signs a provider reads that its engine has gone (``resources.engine_watch``)."""

from __future__ import annotations

import os
import socket
import threading

from vertex_training.resources.engine_watch import EngineWatch, refuses, watch_engine


def listening() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    return server


class TestEngineWatch:
    """EngineWatch.gone: the parent, then the address."""

    def test_an_engine_that_listens_is_there(self) -> None:
        """A listening address and the same parent: not gone, however often asked."""
        with listening() as server:
            host, port = server.getsockname()
            watch = EngineWatch(f"{host}:{port}", os.getppid(), misses=2)
            assert [watch.gone() for _ in range(4)] == ["", "", "", ""]

    def test_an_address_that_refuses_misses_times_is_gone(self) -> None:
        """A closed port counts after ``misses`` refusals in a row, not before."""
        with listening() as server:
            host, port = server.getsockname()
        watch = EngineWatch(f"{host}:{port}", os.getppid(), misses=3)
        assert refuses(f"{host}:{port}")
        assert [bool(watch.gone()) for _ in range(3)] == [False, False, True]
        assert f"{host}:{port}" in watch.gone()

    def test_a_changed_parent_is_gone_at_once(self) -> None:
        """A process reparented (its engine ended) says so on the first look."""
        watch = EngineWatch(None, os.getppid() + 1)
        assert "has ended" in watch.gone()

    def test_no_parent_to_compare_and_no_address_is_never_gone(self) -> None:
        """Started by init (pid 1), with no address: nothing to go by, so never stopped."""
        assert EngineWatch(None, 1).gone() == ""


class TestWatchEngine:
    """watch_engine: only with an engine address, and it stops the process."""

    def test_without_an_address_nothing_is_watched(self) -> None:
        """Tests and commands (no engine address on their command line) are never stopped."""
        assert watch_engine(None) is None

    def test_an_engine_gone_stops_the_process(self) -> None:
        """The watcher calls ``stop`` with its exit status once the address refuses."""
        with listening() as server:
            host, port = server.getsockname()
        stopped = threading.Event()
        codes: list[int] = []

        def stop(code: int) -> None:
            codes.append(code)
            stopped.set()

        thread = watch_engine(f"{host}:{port}", check_s=0.01, stop=stop)
        assert thread is not None
        assert stopped.wait(10)
        assert codes == [70]
