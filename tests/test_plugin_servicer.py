"""The plugin's servicer gives a call on a recorded resource (diff, update, delete) its
recorded outputs completed by its recorded inputs (``old_inputs``, which the Pulumi
SDK's requests leave out): a job's state keeps its ``job`` once, as an input
(``job_shapes.RECORDED_INPUTS``). Driven through the servicer's gRPC methods, with the
request protos the engine sends."""

from __future__ import annotations

import asyncio
from typing import Any

from google.protobuf import struct_pb2
from pulumi.provider.experimental.provider import (
    DeleteRequest,
    DiffRequest,
    DiffResponse,
    Provider,
    UpdateRequest,
    UpdateResponse,
)
from pulumi.runtime.proto import provider_pb2

from tests.test_plugin_errors import Context
from vertex_training.plugin.__main__ import RECORDED, servicer
from vertex_training.plugin.values import plain_map

URN = "urn:pulumi:dev::training::vertex-training:index:TrainingJob::train"
TYPE = "vertex-training:index:TrainingJob"
JOB = {"image": "us-docker.pkg.dev/p/r/trainer:1", "machine": "e2-standard-4"}


class Recording(Provider):
    """A provider that keeps the recorded properties each call was given."""

    def __init__(self) -> None:
        self.given: dict[str, dict[str, Any]] = {}

    async def diff(self, request: DiffRequest) -> DiffResponse:
        self.given["Diff"] = plain_map(request.old_state)
        return DiffResponse(changes=False)

    async def update(self, request: UpdateRequest) -> UpdateResponse:
        self.given["Update"] = plain_map(request.olds)
        return UpdateResponse(request.news)

    async def delete(self, request: DeleteRequest) -> None:
        self.given["Delete"] = plain_map(request.properties)


def struct(values: dict[str, Any]) -> struct_pb2.Struct:
    made = struct_pb2.Struct()
    made.update(values)
    return made


def called(outputs: dict[str, Any], inputs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each recorded call of the servicer, given ``outputs`` and ``old_inputs``."""
    provider = Recording()
    served = servicer()(["127.0.0.1:1"], "0.0.0", provider, engine_address=None)
    common = {"id": "projects/p/locations/us-central1/customJobs/1", "urn": URN, "type": TYPE}
    old = struct(outputs)
    asyncio.run(
        served.Diff(
            provider_pb2.DiffRequest(
                **common, olds=old, news=struct(inputs), old_inputs=struct(inputs)
            ),
            Context(),
        )
    )
    asyncio.run(
        served.Update(
            provider_pb2.UpdateRequest(
                **common, olds=old, news=struct(inputs), old_inputs=struct(inputs), timeout=60
            ),
            Context(),
        )
    )
    asyncio.run(
        served.Delete(
            provider_pb2.DeleteRequest(**common, properties=old, old_inputs=struct(inputs)),
            Context(),
        )
    )
    return provider.given


class TestRecordedInputs:
    def test_a_job_recorded_once_as_an_input_is_given_with_the_outputs(self) -> None:
        """The state keeps the job's keys as an input only: each call reads them."""
        inputs = {"job": JOB, "project": "p", "region": "us-central1"}
        outputs = {"jobId": "1", "state": "RUNNING", "project": "p", "region": "us-central1"}
        given = called(outputs, inputs)
        assert set(given) == set(RECORDED)
        for call, properties in given.items():
            assert properties["job"] == JOB, call
            assert properties["jobId"] == "1" and properties["state"] == "RUNNING", call

    def test_an_output_recorded_under_an_inputs_name_is_kept(self) -> None:
        """A state an earlier release wrote, which kept the job among the outputs too,
        reads as it was recorded."""
        recorded = {**JOB, "machine": "e2-standard-8"}
        given = called({"job": recorded, "jobId": "1"}, {"job": JOB})
        assert all(properties["job"] == recorded for properties in given.values())
