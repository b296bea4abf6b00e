"""How the fake answers with errors: ``RpcError``, which any handler raises to answer
with a gRPC status, and the faults a test injects (``FakeVertex.fail_next`` and
``FakeVertex.stall_next``), kept here until the calls they are meant for arrive; and
``VertexMessage``, the type the handlers' requests and jobs have.

It depends on no other part of the fake; every part that answers errors depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeAlias

import grpc

#: A raw protobuf message of a Vertex API type (``CustomJob.pb()``, a request of
#: JobService), as the handlers take and return them. proto-plus builds those classes at
#: run time, so their fields have no static type to check: ``Any`` for that reason only.
#: What only needs the protobuf API (serializing, the gRPC plumbing) takes ``Message``.
VertexMessage: TypeAlias = Any

#: Codes after which a call may have been carried out, so that ``fail_next`` may inject
#: them with ``take_effect``. From google/rpc/code.proto: DEADLINE_EXCEEDED "may be
#: returned even if the operation has completed successfully"; INTERNAL ("some
#: invariants expected by the underlying system have been broken") and UNKNOWN ("errors
#: raised by APIs that do not return enough error information may be converted to this
#: error") say nothing of whether the operation happened, so a client cannot assume
#: either; of UNAVAILABLE it warns that "it is not always safe to retry non-idempotent
#: operations".
MAY_TAKE_EFFECT_CODES = (
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.UNAVAILABLE,
)
#: Codes that refuse a call (code.proto: the argument is invalid, the entity is not
#: found, the caller lacks permission, a quota is exhausted): the call was not carried
#: out, so ``take_effect`` is refused for them.
REFUSAL_CODES = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)
#: Codes ``fail_next`` can inject.
INJECTABLE_CODES = (*REFUSAL_CODES, *MAY_TAKE_EFFECT_CODES)


class RpcError(Exception):
    """An RPC error to return: a gRPC status code and the message the client sees."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class Fault:
    """An injected error: the next ``remaining`` calls of its method answer it, after
    being carried out when ``take_effect`` is true."""

    code: grpc.StatusCode
    message: str
    remaining: int
    take_effect: bool


class Faults:
    """The faults and stalls a test has injected, by method name, oldest first.

    Not thread-safe: the fake calls it with its lock held.
    """

    def __init__(self) -> None:
        self._faults: dict[str, list[Fault]] = {}
        self._stalls: dict[str, float] = {}

    def fail_next(
        self,
        method: str,
        code: grpc.StatusCode,
        *,
        times: int,
        message: str | None,
        take_effect: bool,
    ) -> None:
        """Make the next ``times`` calls of ``method`` fail with ``code``, carried out
        first when ``take_effect`` (only for ``MAY_TAKE_EFFECT_CODES``)."""
        if code not in INJECTABLE_CODES:
            raise ValueError(f"code must be one of {[c.name for c in INJECTABLE_CODES]}")
        if take_effect and code not in MAY_TAKE_EFFECT_CODES:
            raise ValueError(
                f"{code.name} refuses the call, which is then not carried out; take_effect "
                f"is for {[c.name for c in MAY_TAKE_EFFECT_CODES]}"
            )
        fault = Fault(
            code=code,
            message=message or f"Injected {code.name} for {method}.",
            remaining=times,
            take_effect=take_effect,
        )
        self._faults.setdefault(method, []).append(fault)

    def stall_next(self, method: str, seconds: float) -> None:
        """Make the next call of ``method`` answer ``seconds`` late."""
        self._stalls[method] = seconds

    def take(self, method: str) -> tuple[Fault | None, float]:
        """What the call of ``method`` now arriving gets: the fault it answers, if any,
        and how many seconds its answer is stalled."""
        return self._take_fault(method), self._stalls.pop(method, 0.0)

    def _take_fault(self, method: str) -> Fault | None:
        pending = self._faults.get(method)
        if not pending:
            return None
        fault = pending[0]
        fault.remaining -= 1
        if fault.remaining <= 0:
            pending.pop(0)
        return fault
