"""The plugin's TrainingPlatform component: the Python program's, constructed for a
program in any language.

The component's children (APIs, bucket, repository, account, IAM: pulumi-gcp resources)
are registered by the plugin with the engine, as a Python program registers them; its
outputs go back as the component's state, each with the URNs it depends on. A job takes
``jobSettings`` as its ``platform`` and so waits for every child a job needs (the
platform's ``dependencies``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi
from pulumi.errors import InputPropertiesError
from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.provider.experimental.provider import ConstructRequest, ConstructResponse

from vertex_training.plugin import schema, shapes
from vertex_training.plugin.values import plain_map, property_value
from vertex_training.program.platform import TrainingPlatform
from vertex_training.resources.arguments import PlatformArgs
from vertex_training.resources.job_arguments import UNKNOWN_TEXT


class PluginPlatform(TrainingPlatform):
    """A TrainingPlatform registered under the schema's type."""

    type_token = schema.TRAINING_PLATFORM


async def output_value(value: Any, depends_on: set[str] | None = None) -> PropertyValue:
    """A component output (a plain value or an ``Output``) as a property value: its
    value once known (else unknown), its secrecy, the URNs it depends on."""
    urns = set(depends_on or ())
    if not isinstance(value, pulumi.Output):
        return property_value(value).with_dependencies(urns)
    urns |= {await _urn(resource) for resource in await value.resources()}
    secret = bool(await value.is_secret())
    if not await value.is_known():
        return PropertyValue(Computed(), is_secret=secret, dependencies=urns)
    return property_value(await value.future(), secret=secret).with_dependencies(urns)


async def _urn(resource: pulumi.Resource) -> str:
    urn = await resource.urn.future()
    assert urn is not None, "a registered resource has a URN"
    return urn


async def construct_platform(request: ConstructRequest) -> ConstructResponse:
    """Make the platform of the request's inputs; its URN and outputs."""
    inputs = plain_map(request.inputs)
    project, region = inputs.get("project"), inputs.get("region")
    unknown = [
        name
        for name in ("project", "region")
        if not isinstance(inputs.get(name), str) or inputs[name] == UNKNOWN_TEXT
    ]
    if unknown:
        # The server answers these on their property paths, as the engine shows a refusal.
        raise InputPropertiesError(
            f"a TrainingPlatform's {' and '.join(unknown)} must be known when it is made",
            [
                {
                    "property_path": name,
                    "reason": "give it as text (a stack config value), not as another "
                    "resource's output: the platform's bucket, repository and account are "
                    "named from it",
                }
                for name in unknown
            ],
        )
    assert isinstance(project, str) and isinstance(region, str)
    settings = inputs.get("settings") or {}
    platform = PluginPlatform(
        request.name,
        project=project,
        region=region,
        settings=shapes.to_config(settings, PlatformArgs),
        vertex_api_role=bool(inputs.get("vertexApiRole")),
        opts=request.options,
    )
    dependencies = {await _urn(resource) for resource in platform.dependencies}
    job_settings = {
        shapes.camel(key): value
        for key, value in platform.job_settings().items()
        if shapes.camel(key) in schema.PLATFORM_SETTING_NAMES
    }
    settings_value = await _mapping(job_settings, dependencies)
    outputs = {
        "jobSettings": settings_value,
        "bucket": await output_value(platform.bucket.name),
        "repositoryUrl": await output_value(platform.repository_url),
        "serviceAccount": await output_value(platform.service_account.email),
    }
    platform.register_outputs({})
    urn = await platform.urn.future()
    assert urn is not None
    return ConstructResponse(
        urn, outputs, {key: value.all_dependencies() for key, value in outputs.items()}
    )


async def _mapping(values: Mapping[str, Any], depends_on: set[str]) -> PropertyValue:
    """An object of component outputs, which depends on ``depends_on`` as a whole."""
    items = {key: await output_value(value) for key, value in values.items()}
    return PropertyValue(items, dependencies=depends_on)
