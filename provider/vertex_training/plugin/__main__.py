"""Serve the plugin: ``python -m vertex_training.plugin ENGINE_ADDRESS``, as the engine runs it.

The experimental provider server of the Pulumi SDK answers an error a provider raises
with gRPC's "Unexpected <class ...>" wording; the project's own errors
(``VertexTrainingError``, each already saying what happened and what to do) end their
call with the message alone instead, as the dynamic providers' do
(``vertex_training.resources.rpc_errors``).

The server's own handling of an error differs from one SDK release to the next: up to
3.259 a provider's exception reaches the servicer's caller as it was raised, from 3.26x
every call re-raises it as a plain ``Exception`` whose text ends with its stack (raised
inside the ``except``, so the provider's exception is its ``__context__``). The
package allows both (``pulumi>=3.259,<4``), and a plugin installed by its launcher gets
the newest: ``project_error`` finds the project's error in the chain, whichever release
raised it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vertex_training.errors import VertexTrainingError

#: The servicer's calls that run a provider operation (Construct: the TrainingPlatform
#: component, whose refusals of its inputs are ``InputPropertyError``s, which the server
#: itself answers on their property path).
OPERATIONS = (
    "CheckConfig",
    "Configure",
    "Check",
    "Diff",
    "Create",
    "Read",
    "Update",
    "Delete",
    "Construct",
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


def project_error(exc: BaseException) -> VertexTrainingError | None:
    """The project's own error that ``exc`` is, or was raised from or while handling
    (``__cause__``, ``__context__``); None when there is none (a bug keeps its stack)."""
    from vertex_training.errors import VertexTrainingError

    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, VertexTrainingError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def plain_errors(call: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    """``call``, a servicer method, whose failure by the project's own error ends the
    call with that error's message alone (``project_error``), and with the resource it
    made or changed when the error is an ``InitFailedError`` (``plugin.init_failed``). A
    call the server has already ended (``abort_with_status``: an ``InputPropertyError``'s
    property path) is left as the server ended it."""
    import grpc
    import grpc.aio

    from vertex_training.plugin.init_failed import InitFailedError, init_failed_status

    @functools.wraps(call)
    async def wrapper(self: Any, request: Any, context: Any) -> Any:
        try:
            return await call(self, request, context)
        except grpc.aio.AbortError:
            raise
        except Exception as exc:
            error = project_error(exc)
            if error is None:
                raise
            if isinstance(error, InitFailedError):  # the engine keeps what it did
                await context.abort_with_status(init_failed_status(error))
            await context.abort(grpc.StatusCode.UNKNOWN, str(error))

    return wrapper


#: The calls that give a resource's recorded outputs (the field naming them) with its
#: recorded inputs beside them (``old_inputs``, which the SDK's requests leave out).
RECORDED = {"Diff": "olds", "Update": "olds", "Delete": "properties"}


def with_old_inputs(
    call: Callable[..., Awaitable[Any]], field: str
) -> Callable[..., Awaitable[Any]]:
    """``call``, a servicer method, whose request's recorded outputs (``field``) are
    completed by the resource's recorded inputs where they leave an input out: a job's
    state keeps its ``job`` once, as an input (``job_shapes.RECORDED_INPUTS``), and the
    provider reads a recorded job as the SDKs give it to a program, inputs and outputs
    in one. An output recorded under an input's name is kept as it is (a state an
    earlier release wrote, which kept both)."""

    @functools.wraps(call)
    async def wrapper(self: Any, request: Any, context: Any) -> Any:
        recorded = getattr(request, field).fields
        for key, value in request.old_inputs.fields.items():
            if key not in recorded:
                recorded[key].CopyFrom(value)
        return await call(self, request, context)

    return wrapper


def servicer() -> type:
    """The Pulumi SDK's provider servicer, its operations ending in the project's words
    (``plain_errors``), those on a recorded resource reading its inputs with its outputs
    (``with_old_inputs``)."""
    from pulumi.provider.experimental.server import ProviderServicer

    methods = {}
    for name in OPERATIONS:
        call = getattr(ProviderServicer, name)
        if name in RECORDED:
            call = with_old_inputs(call, RECORDED[name])
        methods[name] = plain_errors(call)
    return type("Servicer", (ProviderServicer,), methods)


def main(argv: list[str]) -> int:
    import grpc.aio
    from pulumi.runtime.proto import provider_pb2_grpc

    from vertex_training._version import __version__
    from vertex_training.plugin.provider import VertexTrainingProvider
    from vertex_training.resources.engine_watch import watch_engine

    parser = argparse.ArgumentParser(description="the vertex-training provider plugin")
    parser.add_argument("engine", help="the Pulumi engine's address")
    known, _ = parser.parse_known_args(argv)
    # A killed engine ends no plugin: this one stops itself when its engine has gone.
    watch_engine(known.engine)
    servicer_class = servicer()

    async def serve() -> None:
        server = grpc.aio.server(options=SERVER_OPTIONS)
        served = servicer_class(
            argv, __version__, VertexTrainingProvider(__version__), engine_address=known.engine
        )
        provider_pb2_grpc.add_ResourceProviderServicer_to_server(served, server)
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
