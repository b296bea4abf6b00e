"""URNs read and written in one place (vertex_training.urns)."""

from __future__ import annotations

from vertex_training.urns import Urn, urn_of


def test_a_urn_reads_as_its_stack_project_own_type_and_name() -> None:
    urn = "urn:pulumi:dev::training::my:index:Pipeline$vertex-training:index:TrainingJob::train"
    assert Urn.parse(urn) == Urn("dev", "training", "vertex-training:index:TrainingJob", "train")


def test_what_is_no_urn_reads_as_none() -> None:
    assert Urn.parse("") is None
    assert Urn.parse("projects/p/locations/r/customJobs/1") is None
    assert Urn.parse("urn:pulumi:dev::training::type") is None


def test_a_written_urn_reads_back() -> None:
    urn = urn_of("dev", "training", "pulumi-python:dynamic/vertex:TrainingJob", "train")
    assert urn == "urn:pulumi:dev::training::pulumi-python:dynamic/vertex:TrainingJob::train"
    assert Urn.parse(urn) == Urn(
        "dev", "training", "pulumi-python:dynamic/vertex:TrainingJob", "train"
    )
