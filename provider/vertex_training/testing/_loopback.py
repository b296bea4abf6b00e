"""What every fake shares: a server on a loopback port, used as a context manager, and the
command line that serves one until it is stopped.

``GrpcLoopbackServer`` serves the gRPC handlers a fake gives (``_handlers``) with the real
Google client on the other side; ``LoopbackServer`` is the part an HTTP fake shares too.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from concurrent import futures
from types import FrameType, TracebackType
from typing import Self

import grpc

LOOPBACK_HOST = "127.0.0.1"


class LoopbackServer:
    """A fake serving on ``127.0.0.1``; ``address`` is ``127.0.0.1:PORT`` once started."""

    address: str = ""

    def start(self) -> Self:
        """Start serving (again a no-op when serving)."""
        raise NotImplementedError

    def stop(self) -> None:
        """Stop serving at once."""
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


class GrpcLoopbackServer(LoopbackServer):
    """A gRPC server on a loopback port (``port`` 0: any free one) with ``workers``
    threads, serving what ``_handlers`` gives; calls in flight are cancelled on stop."""

    def __init__(self, port: int = 0, workers: int = 4) -> None:
        self._port = port
        self._workers = workers
        self._server: grpc.Server | None = None
        self.address = ""

    def _handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        """The services this fake serves."""
        raise NotImplementedError

    def start(self) -> Self:
        if self._server is None:
            server = grpc.server(futures.ThreadPoolExecutor(max_workers=self._workers))
            server.add_generic_rpc_handlers(tuple(self._handlers()))
            port = server.add_insecure_port(f"{LOOPBACK_HOST}:{self._port}")
            server.start()
            self._server = server
            self.address = f"{LOOPBACK_HOST}:{port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None).wait()
            self._server = None


def serve_until_stopped(fake: LoopbackServer) -> int:
    """Serve ``fake``, print its address on a line of its own, and wait for SIGTERM or
    SIGINT (the fakes' command lines)."""
    stopped = threading.Event()

    def stop(signum: int, frame: FrameType | None) -> None:
        stopped.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with fake:
        print(fake.address, flush=True)
        stopped.wait()
    return 0
