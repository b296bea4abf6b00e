"""The keys that pass straight into a CustomJobSpec (``api.bodies.PASS_THROUGH_FIELDS``):
one row each, which the request, ``pulumi import`` and the completeness test all read."""

from __future__ import annotations

from typing import Any

import pytest
from google.cloud import aiplatform_v1

from tests.test_api_fields import CONTAINER_JOB, PACKAGE_JOB, PACKAGE_STACK, STACK, writable_fields
from vertex_training.api.bodies import PASS_THROUGH_FIELDS
from vertex_training.api.job_config import config_of_request
from vertex_training.stackconfig import parse_job
from vertex_training.stackconfig._config import JobConfig
from vertex_training.stackconfig._job import JobSpec

ROWS = sorted(PASS_THROUGH_FIELDS.items())


def rich_job(key: str) -> tuple[dict[str, Any], Any]:
    """The completeness test's rich job that sets ``key``, and the stack it runs in."""
    for config, stack in ((CONTAINER_JOB, STACK), (PACKAGE_JOB, PACKAGE_STACK)):
        if key in config:
            return config, stack
    raise AssertionError(f"no rich job of tests/test_api_fields.py sets {key}: add it to one")


class TestPassThroughFields:
    """Each row is a key, a field of the job's spec and a writable CustomJobSpec field."""

    @pytest.mark.parametrize(("key", "field"), ROWS)
    def test_the_row_names_a_key_a_spec_field_and_an_api_field(self, key: str, field: str) -> None:
        """The key is a job key and a JobSpec field; the field is CustomJobSpec's, writable."""
        assert key in JobConfig.model_fields
        assert key in JobSpec.model_fields
        descriptor = aiplatform_v1.CustomJobSpec.pb().DESCRIPTOR
        assert field in descriptor.fields_by_camelcase_name
        proto_name = descriptor.fields_by_camelcase_name[field].name
        assert proto_name in writable_fields(aiplatform_v1.CustomJobSpec)

    @pytest.mark.parametrize(("key", "field"), ROWS)
    def test_the_key_goes_into_its_field_and_comes_back(self, key: str, field: str) -> None:
        """A rich job of the completeness test sets the key; the request carries it in the
        field as written, and importing the request gives the key back."""
        config, stack = rich_job(key)
        body = parse_job("job", config, stack).request_body()
        assert body["jobSpec"][field] == config[key]
        assert config_of_request(body, name="job")[key] == config[key]

    def test_an_unset_key_is_left_out(self) -> None:
        """A job that sets none of the keys sends none of the fields (a flag is sent true)."""
        body = parse_job("job", {"image": CONTAINER_JOB["image"]}, STACK).request_body()
        sent = set(body["jobSpec"]) & set(PASS_THROUGH_FIELDS.values())
        assert sent <= {"serviceAccount"}  # the stack's default account, where it has one
