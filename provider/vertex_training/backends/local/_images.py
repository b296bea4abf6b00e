"""Vertex AI's prebuilt training images, emulated: the framework each carries, as pip installs it.

On Vertex AI a ``pythonPackageSpec`` runs on its ``executorImageUri``, a prebuilt training
image that carries one framework at the version its name says, and cloudml-hypertune;
pip installs the job's packages, with their dependencies, on top. The local backend
gives a job's virtualenv the same: ``image_requirements`` turns the executor image into
pip requirements (``tf-cpu.2-17`` -> ``tensorflow-cpu==2.17.*``), which
``_venvs.VirtualenvCache`` installs with the job's packages.

Source: Google Cloud docs, "Prebuilt containers for serverless training"
(``vertex_training.catalog.images.CATALOGUE_URL``), read on 2026-11-23: the image names,
``<host>/vertex-ai/training/<family>.<MAJOR>-<MINOR>[.pyXYZ]`` (older ones under
``gcr.io/cloud-aiplatform/training/``), the framework of each family, and that the
training images include cloudml-hypertune for hyperparameter tuning.

What is not emulated: the image's Python (a job runs on this interpreter; a framework
version with no wheel for it fails the job, naming both), CUDA and TPU runtimes (a GPU or
TPU image gets the framework's ordinary PyPI wheel), and the image's other packages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from vertex_training.catalog.images import prebuilt_image_name

__all__ = [
    "HYPERTUNE",
    "IMAGE_FAMILIES",
    "UNMAPPED_IMAGE",
    "ImageFramework",
    "image_framework",
    "image_requirements",
]

#: Every prebuilt training image carries it; a job with no executor image gets it too.
HYPERTUNE = "cloudml-hypertune"

#: Image family (the name before ``.<MAJOR>-<MINOR>``) -> the PyPI distribution of its
#: framework. GPU and TPU images map to the framework's ordinary wheel: no accelerator is
#: emulated (the job runs on the CPU unless this machine has the GPUs).
IMAGE_FAMILIES: Mapping[str, str] = MappingProxyType(
    {
        "tf-cpu": "tensorflow-cpu",
        "tf-gpu": "tensorflow",
        "tf-tpu": "tensorflow",
        "pytorch-cpu": "torch",
        "pytorch-gpu": "torch",
        # The PyTorch CPU images since 1.6 are the XLA builds; torch_xla is not added.
        "pytorch-xla": "torch",
        "pytorch-tpu": "torch",
        "sklearn-cpu": "scikit-learn",
        "sklearn-gpu": "scikit-learn",
        # The 0.23 image still carries the old prefix.
        "scikit-learn-cpu": "scikit-learn",
        "xgboost-cpu": "xgboost",
        "xgboost-gpu": "xgboost",
    }
)

#: A prebuilt image's name: ``<family>.<MAJOR>-<MINOR>[.pyXYZ|.cpXYZ]``.
_IMAGE_NAME = re.compile(
    r"^(?P<family>[a-z][a-z-]*)\.(?P<major>\d+)-(?P<minor>\d+)(?:\.(?:py|cp)\d+)?$"
)


@dataclass(frozen=True)
class ImageFramework:
    """The framework a prebuilt training image carries."""

    #: The image family, e.g. ``tf-cpu``.
    family: str
    #: Its PyPI distribution, e.g. ``tensorflow-cpu``.
    distribution: str
    #: MAJOR.MINOR; the image carries the latest patch of it, and so does the requirement.
    version: str

    @property
    def requirement(self) -> str:
        """``tensorflow-cpu==2.17.*``."""
        return f"{self.distribution}=={self.version}.*"


def image_framework(uri: str) -> ImageFramework | None:
    """The framework of a prebuilt training image URI; None for any other image."""
    name = prebuilt_image_name(uri)
    match = _IMAGE_NAME.match(name) if name else None
    if match is None or match["family"] not in IMAGE_FAMILIES:
        return None
    version = f"{int(match['major'])}.{int(match['minor'])}"
    return ImageFramework(match["family"], IMAGE_FAMILIES[match["family"]], version)


def image_requirements(uri: str | None) -> list[str] | None:
    """The pip requirements a job's environment gets for its executor image.

    A prebuilt training image: its framework and cloudml-hypertune. No executor image:
    cloudml-hypertune alone. Any other image: None (nothing is emulated for it).
    """
    if not uri:
        return [HYPERTUNE]
    framework = image_framework(uri)
    return None if framework is None else [framework.requirement, HYPERTUNE]


#: Why an executor image that maps to no framework is refused at preview, and what to write.
UNMAPPED_IMAGE = (
    "the local backend installs the framework of a Vertex AI prebuilt training image "
    f"(families {', '.join(sorted(IMAGE_FAMILIES))}, named like us-docker.pkg.dev/"
    "vertex-ai/training/<family>.<MAJOR>-<MINOR>:latest), and this image is none of them, "
    "so the job would "
    "run without its framework: give a prebuilt training image or framework: instead, or "
    "leave executor_image out to install the package's own dependencies only"
)
