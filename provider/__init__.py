"""vertex-training: Google Cloud training jobs as Pulumi resources.

The public API, imported on first use so that ``import provider`` (which every module of
the package runs first) loads neither Pulumi nor a Google client library.
"""

from __future__ import annotations

from provider import _moved
from provider._exports import lazy_exports

_moved.install()

#: Public name -> the module that defines it.
_EXPORTS = {
    "HyperparameterTuningJob": "provider.resources.tuning_job",
    "Issue": "provider.errors",
    "JobSpec": "provider.stackconfig",
    "JobWaiter": "provider.resources.waiter",
    "LocalBackend": "provider.backends.local",
    "SpecError": "provider.errors",
    "StackSettings": "provider.stackconfig",
    "TrainingJob": "provider.resources.training_job",
    "TrainingPlatform": "provider.program.platform",
    "VertexBackend": "provider.backends.vertex",
    "load_stack_file": "provider.stackconfig",
    "parse_job": "provider.stackconfig",
    "parse_stack": "provider.stackconfig",
}

__all__ = [
    "HyperparameterTuningJob",
    "Issue",
    "JobSpec",
    "JobWaiter",
    "LocalBackend",
    "SpecError",
    "StackSettings",
    "TrainingJob",
    "TrainingPlatform",
    "VertexBackend",
    "load_stack_file",
    "parse_job",
    "parse_stack",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
