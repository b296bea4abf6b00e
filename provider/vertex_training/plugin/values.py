"""Property values as the plugin protocol carries them <-> plain data.

The engine gives a provider ``PropertyValue``s (the SDK's experimental provider API):
numbers as floats, unknowns as ``Computed``, secrets and dependencies marked. The job
operations take plain data, with an unknown as the dynamic providers' sentinel text.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pulumi.provider.experimental.property_value import Computed, PropertyValue, ResourceReference

from vertex_training.resources.job_arguments import UNKNOWN_TEXT


def plain(value: PropertyValue) -> Any:
    """A property value as plain data: an unknown one as the dynamic providers' sentinel,
    every number a float (as the engine gives them)."""
    inner = value.value
    if isinstance(inner, Computed):
        return UNKNOWN_TEXT
    if isinstance(inner, ResourceReference):
        return inner.urn
    if isinstance(inner, Mapping):
        return {key: plain(item) for key, item in inner.items()}
    if isinstance(inner, tuple):
        return [plain(item) for item in inner]
    return inner


def plain_map(values: Mapping[str, PropertyValue]) -> dict[str, Any]:
    return {key: plain(value) for key, value in values.items()}


def property_value(value: Any, *, secret: bool = False) -> PropertyValue:
    """Plain data as a property value (an int as a float: the engine has no integers)."""
    if isinstance(value, Mapping):
        inner: Any = {str(key): property_value(item) for key, item in value.items()}
    elif isinstance(value, list | tuple):
        inner = [property_value(item) for item in value]
    elif isinstance(value, int) and not isinstance(value, bool):
        inner = float(value)
    else:
        inner = value
    return PropertyValue(inner, is_secret=secret)


def is_secret(values: Mapping[str, PropertyValue]) -> bool:
    return any(value.contains_secret() for value in values.values())
