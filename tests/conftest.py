"""Fixtures shared across test modules."""

from __future__ import annotations

import pytest

from vertex_training.testing import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    """A clock the test moves by hand, for fakes whose jobs advance only when told."""
    return ManualClock()
