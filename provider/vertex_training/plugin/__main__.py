"""Serve the plugin: ``python -m vertex_training.plugin ENGINE_ADDRESS``, as the engine runs it.

The experimental provider server of the Pulumi SDK answers an error a provider raises
with gRPC's "Unexpected <class ...>" wording; the project's own errors
(``VertexTrainingError``, each already saying what happened and what to do) end their
call with the message alone instead, as the dynamic providers' do
(``vertex_training.resources.rpc_errors``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import sys
from collections.abc import Awaitable, Callable
from typing import Any

#: The servicer's calls that run a provider operation. (Construct is left out: the
#: servicer turns every error of a component into one of its own wording first.)
OPERATIONS = (
    "CheckConfig",
    "Configure",
    "Check",
    "Diff",
    "Create",
    "Read",
    "Update",
    "Delete",
)

#: The plugin's gRPC server options, its own rather than the Pulumi SDK's private ones:
#: requests up to 400 MiB (a program's Check and Create carry every key of a job, and a
#: YAML or TypeScript program may send hundreds at once), and a request may wait 30
#: minutes for the event loop before gRPC gives up on it (with many calls at once the
#: loop can be busy longer than gRPC's default, 30 seconds, which would fail them).
SERVER_OPTIONS = (
    ("grpc.max_receive_message_length", 400 * 1024 * 1024),
    ("grpc.server_max_unrequested_time_in_server", 30 * 60),
)


def _plain_errors(call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    import grpc

    from vertex_training.errors import VertexTrainingError

    @functools.wraps(call)
    async def wrapper(self: Any, request: Any, context: Any) -> Any:
        try:
            return await call(self, request, context)
        except VertexTrainingError as exc:
            await context.abort(grpc.StatusCode.UNKNOWN, str(exc))

    return wrapper


def main(argv: list[str]) -> int:
    import grpc.aio
    from pulumi.provider.experimental.server import ProviderServicer
    from pulumi.runtime.proto import provider_pb2_grpc

    from vertex_training._version import __version__
    from vertex_training.plugin.provider import VertexTrainingProvider
    from vertex_training.resources.engine_watch import watch_engine

    parser = argparse.ArgumentParser(description="the vertex-training provider plugin")
    parser.add_argument("engine", help="the Pulumi engine's address")
    known, _ = parser.parse_known_args(argv)
    # A killed engine ends no plugin: this one stops itself when its engine has gone.
    watch_engine(known.engine)
    servicer_class = type(
        "Servicer",
        (ProviderServicer,),
        {name: _plain_errors(getattr(ProviderServicer, name)) for name in OPERATIONS},
    )

    async def serve() -> None:
        server = grpc.aio.server(options=SERVER_OPTIONS)
        servicer = servicer_class(
            argv, __version__, VertexTrainingProvider(__version__), engine_address=known.engine
        )
        provider_pb2_grpc.add_ResourceProviderServicer_to_server(servicer, server)
        port = server.add_insecure_port(address="127.0.0.1:0")
        await server.start()
        sys.stdout.write(f"{port}\n")
        sys.stdout.flush()
        await server.wait_for_termination()

    with contextlib.suppress(KeyboardInterrupt):  # the engine ends the plugin so
        asyncio.run(serve())
    return 0


def script() -> int:
    """The ``pulumi-resource-vertex-training`` command the wheel installs: on PATH, the
    engine finds the plugin there for a program of any language (docs/library.md)."""
    return main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
