"""Where Google serves its prebuilt training images, and which URIs name one.

The registry host of each region (``registry_host``: the three hosts Google's page of
prebuilt containers lists for every image, ``vertex_training.catalog.images.CATALOGUE_URL``),
and the paths prebuilt training and prediction images live under, by which a URI a job
names is read as a prebuilt image (``prebuilt_image_name``) or as a prediction image given
by mistake (``is_prediction_image``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from vertex_training.api import image_refs

#: Where every prebuilt training image lives, under each registry host.
IMAGE_PATH: Final = "vertex-ai/training"
#: Where every prebuilt prediction image lives (a model's serving image).
PREDICTION_PATH: Final = "vertex-ai/prediction"
#: Only ``:latest`` is served for prebuilt training images.
IMAGE_TAG: Final = "latest"
REGISTRY_HOSTS: Mapping[str, str] = MappingProxyType(
    {
        "us": "us-docker.pkg.dev",
        "europe": "europe-docker.pkg.dev",
        "asia": "asia-docker.pkg.dev",
    }
)
#: Region name prefix -> registry host key; a region matching none uses the us host.
REGION_PREFIX_HOSTS: tuple[tuple[str, str], ...] = (
    ("us-", "us"),
    ("northamerica-", "us"),
    ("southamerica-", "us"),
    ("europe-", "europe"),
    ("me-", "europe"),
    ("africa-", "europe"),
    ("asia-", "asia"),
    ("australia-", "asia"),
)
DEFAULT_REGISTRY: Final = "us"


def registry_location(region: str) -> str:
    """``us``, ``europe`` or ``asia``: the registry location serving ``region``."""
    for prefix, location in REGION_PREFIX_HOSTS:
        if region.startswith(prefix):
            return location
    return DEFAULT_REGISTRY


def registry_host(region: str) -> str:
    """``us-docker.pkg.dev``, ``europe-docker.pkg.dev`` or ``asia-docker.pkg.dev`` for a region."""
    for prefix, host in REGION_PREFIX_HOSTS:
        if region.startswith(prefix):
            return REGISTRY_HOSTS[host]
    return REGISTRY_HOSTS[DEFAULT_REGISTRY]


#: Registry host -> where Google publishes prebuilt training images under it (the
#: Artifact Registry hosts, and the older gcr.io path).
PREBUILT_TRAINING_PATHS: Mapping[str, str] = MappingProxyType(
    {
        **{host: IMAGE_PATH for host in REGISTRY_HOSTS.values()},
        "gcr.io": "cloud-aiplatform/training",
    }
)
#: Registry host -> where the prebuilt *prediction* images live: a common mistake for an
#: executor image.
PREBUILT_PREDICTION_PATHS: Mapping[str, str] = MappingProxyType(
    {
        **{host: PREDICTION_PATH for host in REGISTRY_HOSTS.values()},
        "gcr.io": "cloud-aiplatform/prediction",
    }
)


def _prebuilt_name(uri: str, paths: Mapping[str, str]) -> str | None:
    """The last path component of ``uri`` when the rest of it is one of ``paths``."""
    reference = image_refs.parse(uri.strip())
    if not isinstance(reference, image_refs.ImageReference) or reference.host is None:
        return None
    directory, _, name = reference.path.rpartition("/")
    return name if paths.get(reference.host) == directory else None


def prebuilt_image_name(uri: str) -> str | None:
    """The name under ``<host>/vertex-ai/training/`` of a prebuilt training image URI
    (``tf-cpu.2-17.py310``), without its tag or digest; None for any other image."""
    return _prebuilt_name(uri, PREBUILT_TRAINING_PATHS)


def is_prediction_image(uri: str) -> bool:
    """Whether ``uri`` is one of Vertex AI's prebuilt prediction images."""
    return _prebuilt_name(uri, PREBUILT_PREDICTION_PATHS) is not None
