"""Fixtures shared across test modules."""

from __future__ import annotations

import pytest

# Before any test imports the Pulumi SDK's provider modules: the plugin package gives them
# Google's google.rpc.Status (vertex_training.plugin's docstring says why).
import vertex_training.plugin  # noqa: F401
from vertex_training.testing import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves by hand, for fakes whose jobs advance only when told."""
    return ManualClock()
