"""Test doubles for the provider: a fake Vertex AI JobService served over real gRPC.

The names are loaded on first use, so that ``python -m vertex_training.testing.fake_vertex``
does not import the module twice (once through this package, once as ``__main__``).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from vertex_training.testing.fake_vertex import Call, FakeVertex, ManualClock

__all__ = ["Call", "FakeVertex", "ManualClock"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("vertex_training.testing.fake_vertex"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
