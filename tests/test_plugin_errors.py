"""The plugin's servicer ends a call failed by the project's own error with that error's
message alone, however the Pulumi SDK's provider server passed the error on: as it was
raised (up to 3.259), or re-raised as a plain ``Exception`` carrying its stack (3.26x,
``_raise_with_traceback``). Driven here through the servicer's gRPC methods with a
``grpc.aio`` servicer context of the tests' own; tests/test_engine_plugin_errors.py
shows the whole text on the engine, under the pinned SDK and the one the launcher
installs."""

from __future__ import annotations

import asyncio
import traceback
from typing import Any

import grpc
import grpc.aio
import pytest
from google.protobuf import struct_pb2
from google.rpc import status_pb2
from pulumi.errors import InputPropertyError
from pulumi.provider.experimental.property_value import PropertyValue
from pulumi.provider.experimental.provider import CreateRequest, CreateResponse, Provider
from pulumi.runtime.proto import provider_pb2

from vertex_training.errors import JobEndedError
from vertex_training.plugin.__main__ import OPERATIONS, plain_errors, project_error, servicer
from vertex_training.plugin.init_failed import InitFailedError

FAILED = (
    "job failme (projects/p/locations/us-central1/customJobs/1) ended FAILED: replica "
    "workerpool0-0 exited with a non-zero status of 1"
)


class Context:
    """A ``grpc.aio.ServicerContext`` as far as the servicer uses one: ``abort`` ends the
    call with a code and details (raising ``AbortError``, as gRPC's does)."""

    def __init__(self) -> None:
        self.code: grpc.StatusCode | None = None
        self.details = ""
        self.status: Any = None

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        self.code, self.details = code, details
        raise grpc.aio.AbortError()

    async def abort_with_status(self, status: Any) -> None:
        self.status = status
        raise grpc.aio.AbortError()


class Failing(Provider):
    """A provider whose create raises what the test gives it."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def create(self, request: CreateRequest) -> CreateResponse:
        raise self.error


def create(error: Exception) -> Context:
    """Call the servicer's Create of a provider that raises ``error``; its context."""
    served = servicer()(["127.0.0.1:1"], "0.0.0", Failing(error), engine_address=None)
    request = provider_pb2.CreateRequest(
        urn="urn:pulumi:dev::training::vertex-training:index:TrainingJob::failme",
        type="vertex-training:index:TrainingJob",
        properties=struct_pb2.Struct(),
    )
    context = Context()
    with pytest.raises(grpc.aio.AbortError):
        asyncio.run(served.Create(request, context))
    return context


def reraised_with_stack(error: Exception) -> Exception:
    """``error`` as the SDK's server passes it on from 3.26x: a plain ``Exception`` whose
    text ends with the stack, raised while handling ``error``."""
    try:
        try:
            raise error
        except Exception as exc:  # noqa: BLE001 (as the SDK's server catches it)
            stack = "".join(traceback.format_list(traceback.extract_tb(exc.__traceback__)))
            raise Exception(f"{exc}:\n{stack}")  # noqa: B904 (the SDK's own form)
    except Exception as outer:  # noqa: BLE001 (what the SDK's server raised)
        return outer


class TestServicerErrors:
    def test_a_failed_job_ends_the_call_with_its_message_alone(self) -> None:
        """The installed SDK's server, whichever it is: the message, no class, no stack."""
        context = create(JobEndedError(FAILED))
        assert context.code == grpc.StatusCode.UNKNOWN
        assert context.details == FAILED

    def test_the_error_is_found_when_re_raised_with_the_stack(self) -> None:
        """As 3.26x's server raises it: the project's error, under the plain one."""

        async def call(self: Any, request: Any, context: Any) -> Any:
            raise reraised_with_stack(JobEndedError(FAILED))

        context = Context()
        with pytest.raises(grpc.aio.AbortError):
            asyncio.run(plain_errors(call)(None, None, context))
        assert (context.code, context.details) == (grpc.StatusCode.UNKNOWN, FAILED)

    def test_a_bug_keeps_its_exception(self) -> None:
        """An error that is not the project's (a bug) is raised on, with its stack."""
        bug = KeyError("resourceName")
        context = Context()

        async def call(self: Any, request: Any, context: Any) -> Any:
            raise reraised_with_stack(bug)

        with pytest.raises(Exception, match="resourceName") as raised:
            asyncio.run(plain_errors(call)(None, None, context))
        assert raised.value.__context__ is bug and context.code is None

    def test_a_call_the_server_ended_is_left_as_it_ended(self) -> None:
        """An ``InputPropertyError`` the server answered on its property path stays so."""

        async def call(self: Any, request: Any, context: Any) -> Any:
            try:
                raise InputPropertyError("project", "must be known")
            except InputPropertyError:
                await context.abort_with_status("status")

        context = Context()
        with pytest.raises(grpc.aio.AbortError):
            asyncio.run(plain_errors(call)(None, None, context))
        assert context.status == "status" and context.code is None

    def test_a_failure_that_kept_its_resource_says_so_to_the_engine(self) -> None:
        """An ``InitFailedError``: the call ends with the ``ErrorResourceInitFailed``
        detail, the resource's ID and properties in it, and the message as its reason."""
        properties = {"states": PropertyValue({"train": PropertyValue("FAILED")})}
        inputs = {"jobs": PropertyValue([])}
        context = create(InitFailedError(FAILED, "jobs", properties, inputs))
        assert context.code is None and context.status.code == grpc.StatusCode.UNKNOWN
        assert context.status.details == FAILED
        [(key, value)] = context.status.trailing_metadata
        assert key == "grpc-status-details-bin"
        carried = status_pb2.Status.FromString(value)
        detail = provider_pb2.ErrorResourceInitFailed()
        assert carried.details[0].Unpack(detail)
        assert (detail.id, list(detail.reasons)) == ("jobs", [FAILED])
        assert PropertyValue.unmarshal_map(detail.properties) == properties
        assert PropertyValue.unmarshal_map(detail.inputs) == inputs

    def test_every_operation_and_the_component_are_wrapped(self) -> None:
        """Each call that runs the provider's code, the component's Construct among them."""
        served = servicer()
        for name in OPERATIONS:
            assert getattr(served, name).__wrapped__ is not None, name
        assert "Construct" in OPERATIONS


class TestProjectError:
    def test_the_chain_is_followed_through_cause_and_context(self) -> None:
        """``raise ... from`` and a raise while handling both lead back to it."""
        error = JobEndedError(FAILED)
        try:
            raise RuntimeError("outer") from error
        except RuntimeError as outer:
            assert project_error(outer) is error
        assert project_error(reraised_with_stack(error)) is error

    def test_none_when_the_chain_holds_none(self) -> None:
        """A chain of other errors (even a looping one) gives None."""
        first, second = ValueError("a"), ValueError("b")
        first.__context__, second.__context__ = second, first
        assert project_error(first) is None
