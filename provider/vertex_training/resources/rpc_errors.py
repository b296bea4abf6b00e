"""A provider's own errors as the engine shows them: the message alone.

The provider host (``pulumi.dynamic``) runs each provider method inside a gRPC call. An
exception that escapes the method reaches gRPC's server, which answers UNKNOWN with the
details "Exception calling application: <message>" and logs the traceback: what the user
read before every failure. ``plain_errors`` aborts the call instead, with the message
alone, for the project's own errors (``VertexTrainingError``: each already says what
happened and what to do). Any other exception, a bug, keeps gRPC's wording and traceback.

The call's context is not handed to the provider; it is found on the stack, as the local
of the host's servicer method that holds a ``grpc.ServicerContext``. Outside a gRPC call
(tests that call a provider directly) there is none, and the error is raised as it is.
The provider plugin calls the job providers' typed operations (``check_job``,
``create_job``, ...: ``training_job.TrainingJobProvider``), which are not wrapped, and
the waiter's ``diff``, ``create_at`` and ``update_at``. Whatever stack those run on (the
event loop's, or a worker thread's with none), the plugin's context is a
``grpc.aio.ServicerContext``, which is no ``grpc.ServicerContext``: the error is raised
as it is, and reaches the plugin's own ``plain_errors``
(``vertex_training.plugin.__main__``), which ends the call (tests/test_plugin_errors.py
drives that servicer).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

import grpc

from vertex_training.errors import VertexTrainingError

_F = TypeVar("_F", bound=Callable[..., Any])


def _call_context() -> grpc.ServicerContext | None:
    """The ServicerContext of the gRPC call this thread is serving, if any."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        for value in frame.f_locals.values():
            if isinstance(value, grpc.ServicerContext):
                return value
        frame = frame.f_back
    return None


def plain_errors(method: _F) -> _F:
    """``method``, whose ``VertexTrainingError`` ends its gRPC call with the message alone."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except VertexTrainingError as exc:
            context = _call_context()
            if context is None:
                raise
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))

    return wrapper  # type: ignore[return-value]
