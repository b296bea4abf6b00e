"""What every fake shares: a server on a loopback port, used as a context manager, and the
command line that serves one until it is stopped.

``GrpcLoopbackServer`` serves the gRPC handlers a fake gives (``_handlers``) with the real
Google client on the other side; ``LoopbackServer`` is the part an HTTP fake shares too.

Credentials. A gRPC fake listens with local server credentials
(``grpc.local_server_credentials``, LOCAL_TCP): a client's local channel carries its
call credentials there, as TLS carries them to Google (gRPC sends call credentials over a
secure channel only), and a plain-text channel still connects (local credentials add no
handshake of their own on loopback TCP). Every call's bearer token (its
``authorization: Bearer <token>`` metadata, "" for none) is recorded in ``bearers``;
``require_token`` makes the fake refuse a call without that token as Google's front end
refuses one without valid credentials, before any service sees it: UNAUTHENTICATED
("The request does not have valid authentication credentials for the operation",
google/rpc/code.proto; HTTP 401, "Request not authenticated due to missing, invalid, or
expired OAuth token", https://cloud.google.com/apis/design/errors), with the message
Google's APIs give (``UNAUTHENTICATED_MESSAGE``).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from concurrent import futures
from types import FrameType, TracebackType
from typing import Any, NamedTuple, Self

import grpc

LOOPBACK_HOST = "127.0.0.1"
#: What Google's APIs answer a call whose credentials are missing or not valid.
UNAUTHENTICATED_MESSAGE = (
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project."
)
_BEARER = "bearer "


class Bearer(NamedTuple):
    """One call a gRPC fake received: its method name and its bearer token ("" for none)."""

    method: str
    token: str


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
    threads, serving what ``_handlers`` gives; calls in flight are cancelled on stop.
    ``token``: the bearer token every call must carry (``require_token``)."""

    def __init__(self, port: int = 0, workers: int = 4, *, token: str | None = None) -> None:
        self._port = port
        self._workers = workers
        self._server: grpc.Server | None = None
        self.address = ""
        self._token = token
        self._bearers: list[Bearer] = []
        self._bearers_lock = threading.Lock()

    def require_token(self, token: str | None) -> None:
        """Refuse every call from now on whose bearer token is not ``token``
        (UNAUTHENTICATED, as Google does); None accepts any call, with or without one."""
        self._token = token

    @property
    def bearers(self) -> list[Bearer]:
        """Each call's method and bearer token, oldest first, refused ones included."""
        with self._bearers_lock:
            return list(self._bearers)

    def _authenticate(self, method: str, metadata: Sequence[Any]) -> bool:
        """Record the call's bearer token; whether the fake serves the call."""
        header = next((str(v) for k, v in metadata if k == "authorization"), "")
        token = header[len(_BEARER) :] if header.lower().startswith(_BEARER) else ""
        with self._bearers_lock:
            self._bearers.append(Bearer(method.rsplit("/", 1)[-1], token))
        return self._token is None or token == self._token

    def _handlers(self) -> Sequence[grpc.GenericRpcHandler]:
        """The services this fake serves."""
        raise NotImplementedError

    def start(self) -> Self:
        if self._server is None:
            server = grpc.server(
                futures.ThreadPoolExecutor(max_workers=self._workers),
                interceptors=[_Authentication(self._authenticate)],
            )
            server.add_generic_rpc_handlers(tuple(self._handlers()))
            local = grpc.local_server_credentials(grpc.LocalConnectionType.LOCAL_TCP)
            port = server.add_secure_port(f"{LOOPBACK_HOST}:{self._port}", local)
            server.start()
            self._server = server
            self.address = f"{LOOPBACK_HOST}:{port}"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop(grace=None).wait()
            self._server = None


class _Authentication(grpc.ServerInterceptor):
    """Hands each call's method and metadata to ``authenticate``; answers UNAUTHENTICATED
    for a call it refuses, before the call reaches a handler."""

    def __init__(self, authenticate: Callable[[str, Sequence[Any]], bool]) -> None:
        self._authenticate = authenticate

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler[Any, Any] | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        method: str = handler_call_details.method
        metadata = handler_call_details.invocation_metadata
        if self._authenticate(method, tuple(metadata or ())):
            return continuation(handler_call_details)
        return grpc.unary_unary_rpc_method_handler(_unauthenticated)


def _unauthenticated(request: bytes, context: grpc.ServicerContext) -> bytes:
    context.abort(grpc.StatusCode.UNAUTHENTICATED, UNAUTHENTICATED_MESSAGE)


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
