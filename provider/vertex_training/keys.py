"""The stack config's key names: one definition for every layer that reads or names them."""

from __future__ import annotations

#: The Pulumi project name: the namespace of this project's config keys.
CONFIG_NAMESPACE = "vertex-training"
JOBS_KEY = f"{CONFIG_NAMESPACE}:jobs"
PLATFORM_KEY = f"{CONFIG_NAMESPACE}:platform"
BACKEND_KEY = f"{CONFIG_NAMESPACE}:backend"
API_ENDPOINT_KEY = f"{CONFIG_NAMESPACE}:apiEndpoint"
#: Google credentials, as pulumi-gcp's gcp:accessToken, gcp:credentials (a path or the
#: JSON) and gcp:impersonateServiceAccount take them (vertex_training.credentials). The
#: first two are secrets.
ACCESS_TOKEN_KEY = f"{CONFIG_NAMESPACE}:accessToken"
CREDENTIALS_KEY = f"{CONFIG_NAMESPACE}:credentials"
IMPERSONATE_SERVICE_ACCOUNT_KEY = f"{CONFIG_NAMESPACE}:impersonateServiceAccount"
LOCAL_ACCELERATORS_KEY = f"{CONFIG_NAMESPACE}:localAccelerators"
#: Rows a project adds to the catalogue of prebuilt training images (docs/images.md).
IMAGES_KEY = f"{CONFIG_NAMESPACE}:images"
#: The team's review rules (vertex_training.review.policies); the loader accepts the key only.
POLICIES_KEY = f"{CONFIG_NAMESPACE}:policies"
#: ``vertex-training:localAccelerators``: what a local job with accelerators runs on.
LOCAL_GPU, LOCAL_CPU = "gpu", "cpu"
LOCAL_ACCELERATOR_MODES = (LOCAL_GPU, LOCAL_CPU)
GCP_PROJECT_KEY = "gcp:project"
GCP_REGION_KEY = "gcp:region"
#: This project's own stack config keys (without the namespace).
STACK_CONFIG_KEYS = (
    "accessToken",
    "apiEndpoint",
    "backend",
    "credentials",
    "images",
    "impersonateServiceAccount",
    "jobs",
    "localAccelerators",
    "platform",
    "policies",
)
#: The namespaces of the keys a stack reads.
NAMESPACES = ("gcp", CONFIG_NAMESPACE)


def job_key(name: str, *path: str) -> str:
    """The full key of a job's setting: ``vertex-training:jobs.<name>[.<path>...]``."""
    return ".".join((JOBS_KEY, name, *path))
