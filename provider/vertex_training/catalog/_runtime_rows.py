"""The rows of ``vertex_training.catalog.images.LEGACY_RUNTIMES``: AI Platform Training runtime
versions and the Vertex AI TensorFlow image that replaces each, with the reasoning per row
(data only)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType


@dataclass(frozen=True)
class LegacyRuntime:
    """An AI Platform Training runtime version and the prebuilt image that replaces it."""

    runtime_version: str
    #: The TensorFlow version whose Vertex AI image replaces the runtime.
    tensorflow: str
    #: Python versions the runtime offered (``pythonVersion``), and its default.
    pythons: tuple[str, ...]
    default_python: str
    reasoning: str


_SAME_TF = (
    "The runtime was TensorFlow {v} with Python 3.7; Vertex AI's TensorFlow {v} Python 3.7 "
    "image runs the same framework on the same Python."
)


def _same_tf(version: str) -> LegacyRuntime:
    return LegacyRuntime(version, version, ("3.7",), "3.7", _SAME_TF.format(v=version))


#: runtimeVersion -> replacement. Runtime versions before 1.15 have no Vertex AI image.
LEGACY_RUNTIMES: Mapping[str, LegacyRuntime] = MappingProxyType(
    {
        "1.15": LegacyRuntime(
            "1.15",
            "1.15",
            ("2.7", "3.7"),
            "2.7",
            "TensorFlow 1.15 with Python 2.7 (the default) or 3.7; Vertex AI's TensorFlow "
            "1.15 image runs Python 3.7 only, so pythonVersion 2.7 (or none) is refused.",
        ),
        **{v: _same_tf(v) for v in ("2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8", "2.9")},
        "2.10": LegacyRuntime(
            "2.10",
            "2.11",
            ("3.7",),
            "3.7",
            "Vertex AI never published a TensorFlow 2.10 training image; 2.11 (Python 3.7) "
            "is the nearest: one minor release later, same Python, and TensorFlow keeps its "
            "API within 2.x (2.9 would drop what 2.10 added).",
        ),
        "2.11": _same_tf("2.11"),
    }
)
