"""The ``vertex-training:platform`` stack config key -> the platform a stack's jobs run on.

Pure: pydantic models and derivations, no Pulumi, no Google clients (``python -m vertex_training
render`` uses it too). ``vertex_training.program.platform`` turns a resolved ``Platform`` into
pulumi-gcp
resources; ``vertex_training.stackconfig`` applies ``Platform.job_defaults()`` to every vertex job.

Everything a job needs from the platform is derived from config alone, so it is known at
``pulumi preview``, before anything exists:

- bucket ``<project>-vertex-training-<stack>`` (or ``bucket.name``), jobs' output root
  ``gs://<bucket>``;
- service account ``<account_id>@<project>.iam.gserviceaccount.com``;
- repository URL ``<region>-docker.pkg.dev/<project>/<repository id>``.

Only the TensorBoard's resource name is chosen by the server; ``TENSORBOARD_PENDING``
stands for it until ``pulumi up`` creates it.

The platform is created when ``enabled`` is true, which is the default for a stack on
the ``vertex`` backend with a ``gcp:project``. It is off by default on the ``local``
backend, on a stack with no project yet (its vertex jobs report the missing project), and
on a stack that points ``vertex-training:apiEndpoint`` at another JobService (a fake
service in tests has no project to provision). ``enabled: false`` with ``existing:
{...}`` names resources that are managed elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from vertex_training.backend_kinds import kind_of
from vertex_training.catalog import machines
from vertex_training.errors import Issue
from vertex_training.keys import GCP_PROJECT_KEY, GCP_REGION_KEY, PLATFORM_KEY
from vertex_training.stackconfig._arguments import NO_ARGUMENT
from vertex_training.stackconfig._constants import _TENSORBOARD_RE
from vertex_training.stackconfig._issues import issues_from

__all__ = [
    "BUCKET_ROLES",
    "DEFAULT_ACCOUNT_ID",
    "DEFAULT_REPOSITORY_ID",
    "DEPLOYER_ROLE",
    "NO_PROJECT_MESSAGE",
    "PLATFORM_KEY",
    "PRIMITIVE_ROLES",
    "PROJECT_ROLES",
    "REPOSITORY_ROLES",
    "SERVICES",
    "TENSORBOARD_PENDING",
    "VERTEX_API_ROLE",
    "Platform",
    "PlatformConfig",
    "resolve_platform",
]


#: APIs the platform and its jobs call; enabled by ``pulumi up``, never disabled by
#: ``pulumi destroy`` (other workloads of the project may use them). Service Usage
#: itself (serviceusage.googleapis.com) must already be on: it is, in every new project.
SERVICES: tuple[str, ...] = (
    "aiplatform.googleapis.com",  # the training jobs, TensorBoard
    "artifactregistry.googleapis.com",  # the Docker repository
    "cloudresourcemanager.googleapis.com",  # project-level IAM members
    "iam.googleapis.com",  # the jobs' service account
    "logging.googleapis.com",  # job logs
    "monitoring.googleapis.com",  # job metrics
    "storage.googleapis.com",  # the staging bucket
)

#: The jobs' service account: what it is granted, and where. Nothing else is granted.
#: Object read/write/delete on the platform bucket only (bucket-level IAM).
BUCKET_ROLES: tuple[str, ...] = ("roles/storage.objectAdmin",)
#: Pulling images from the platform repository only (repository-level IAM).
REPOSITORY_ROLES: tuple[str, ...] = ("roles/artifactregistry.reader",)
#: Project-level, because logs and metrics have no narrower resource to grant on.
PROJECT_ROLES: tuple[str, ...] = ("roles/logging.logWriter", "roles/monitoring.metricWriter")
#: Project-level, only when a job running as the platform account writes to a TensorBoard
#: or to Vertex AI Experiments: the job itself then calls the Vertex AI API (TensorBoard
#: time series, metadata), which no narrower predefined role covers and which has no
#: resource-level IAM for TensorBoards (see ``needs_vertex_api_role``).
VERTEX_API_ROLE = "roles/aiplatform.user"
#: The deploying identity may act as the jobs' account (on that account only): submitting
#: a job that runs as an account needs iam.serviceAccounts.actAs on it.
DEPLOYER_ROLE = "roles/iam.serviceAccountUser"
#: Never granted by this project.
PRIMITIVE_ROLES: tuple[str, ...] = ("roles/owner", "roles/editor", "roles/viewer")

DEFAULT_ACCOUNT_ID = "vertex-training"
DEFAULT_REPOSITORY_ID = "training"
#: Staging objects (``gs://<bucket>/staging/``) are deleted this long after creation.
DEFAULT_STAGING_EXPIRY_DAYS = 14
#: Overwritten or deleted objects (noncurrent versions) are kept this long, then deleted.
DEFAULT_NONCURRENT_EXPIRY_DAYS = 30
#: Prefix of the bucket that the staging lifecycle rule expires. Job outputs
#: (``<job>/``) and trainer packages (``packages/``, managed by Pulumi) never expire.
STAGING_PREFIX = "staging/"
#: A vertex stack without ``gcp:project`` (the same text for the platform and every job,
#: so that it is reported once).
NO_PROJECT_MESSAGE = (
    "jobs on the vertex backend need a Google Cloud project: run "
    "`pulumi config set gcp:project <project-id>` (or set "
    "vertex-training:backend: local to run on this machine)"
)
#: A vertex job with no region, from the stack or its own ``region``.
NO_REGION_MESSAGE = (
    "no region: set gcp:region for the stack or region for this job, e.g. us-central1"
)
#: Stands for the TensorBoard's resource name until ``pulumi up`` creates it (render).
TENSORBOARD_PENDING = "[the platform's TensorBoard: its name is known once pulumi up creates it]"

_BUCKET_RE = re.compile(r"[a-z0-9][a-z0-9_-]{1,61}[a-z0-9]")
_ACCOUNT_ID_RE = re.compile(r"[a-z][a-z0-9-]{4,28}[a-z0-9]")
_REPOSITORY_ID_RE = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
_EMAIL_RE = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_MEMBER_RE = re.compile(r"(user|serviceAccount|group|domain|principal|principalSet):\S+")
_PUBLIC_MEMBERS = ("allUsers", "allAuthenticatedUsers")
_REPOSITORY_URL_RE = re.compile(r"(?P<location>[a-z0-9-]+)-docker\.pkg\.dev/[^/\s]+/[a-z0-9-]+")


# ----------------------------------------------------------------- the YAML shape (input)


class _ConfigModel(BaseModel):
    """Unknown keys are errors: a typo must not pass silently."""

    model_config = ConfigDict(extra="forbid")


class BucketConfig(_ConfigModel):
    """``platform.bucket``: the staging bucket's name and lifecycle."""

    name: str | None = Field(
        None,
        description=(
            "the bucket's name, default `<project>-vertex-training-<stack>` (3 to 63 "
            "lowercase letters, digits, `-`, `_`)"
        ),
    )
    force_destroy: bool = Field(
        False, description="let `pulumi destroy` delete the bucket with its objects; default false"
    )
    staging_expiry_days: int = Field(
        DEFAULT_STAGING_EXPIRY_DAYS,
        ge=1,
        description=(
            "objects under `gs://<bucket>/staging/` are deleted after this many days; default 14"
        ),
    )
    noncurrent_expiry_days: int = Field(
        DEFAULT_NONCURRENT_EXPIRY_DAYS,
        ge=1,
        description=(
            "overwritten or deleted object versions are deleted after this many days; default 30"
        ),
    )


class RepositoryConfig(_ConfigModel):
    """``platform.repository``: the Artifact Registry Docker repository."""

    id: str = Field(
        DEFAULT_REPOSITORY_ID,
        description=(
            "the Docker repository's ID, in `<region>-docker.pkg.dev/<project>/<id>`; "
            "default `training`"
        ),
    )


class ServiceAccountConfig(_ConfigModel):
    """``platform.service_account``: the jobs' service account."""

    account_id: str = Field(
        DEFAULT_ACCOUNT_ID,
        description="the jobs' account ID (6 to 30 characters); default `vertex-training`",
    )


class TensorboardConfig(_ConfigModel):
    """``platform.tensorboard``: a Vertex AI TensorBoard for the jobs."""

    enabled: bool = Field(
        False,
        description="create a Vertex AI TensorBoard for `tensorboard: true` jobs; default false",
    )


class ExistingConfig(_ConfigModel):
    """``existing:``: resources managed elsewhere, used when ``enabled`` is false."""

    bucket: str | None = Field(None, description="the bucket's name")
    service_account: str | None = Field(None, description="the account's email")
    repository_url: str | None = Field(
        None, description="the Docker repository, `<region>-docker.pkg.dev/<project>/<repo>`"
    )
    tensorboard: str | None = Field(None, description="the TensorBoard's resource name")


class PlatformConfig(_ConfigModel):
    """The platform's settings: the keys of ``vertex-training:platform`` that shape what
    ``TrainingPlatform`` creates (docs/platform.md). All optional: by default a bucket,
    a repository and an account named after the stack."""

    enabled: Annotated[bool | None, NO_ARGUMENT] = Field(
        None,
        description=(
            "create the platform; default true on the `vertex` backend once `gcp:project` "
            "is set, false on `local` and when `vertex-training:apiEndpoint` is set (a fake"
            " service)"
        ),
    )
    protect: bool = Field(
        False,
        description=(
            "protect every platform resource (`pulumi destroy` refuses to delete them); "
            "default false. Packages and jobs are never protected: they are replaced when "
            "code or spec change"
        ),
    )
    deployer: str | list[str] | None = Field(
        None,
        description=(
            "IAM member, or list of members, that may act as the jobs' account (`user:...`,"
            " `serviceAccount:...`, `group:...`); default: whoever runs `pulumi up`"
        ),
    )
    bucket: BucketConfig = Field(
        BucketConfig(),
        description=(
            "the staging bucket: `{name, force_destroy, staging_expiry_days, "
            "noncurrent_expiry_days}`"
        ),
    )
    repository: RepositoryConfig = Field(
        RepositoryConfig(), description="the Artifact Registry Docker repository: `{id}`"
    )
    service_account: ServiceAccountConfig = Field(
        ServiceAccountConfig(), description="the jobs' service account: `{account_id}`"
    )
    tensorboard: TensorboardConfig = Field(
        TensorboardConfig(), description="a Vertex AI TensorBoard for the jobs: `{enabled}`"
    )
    existing: Annotated[ExistingConfig | None, NO_ARGUMENT] = Field(
        None,
        description="with `enabled: false` only: resources managed elsewhere that jobs default to",
    )


# ------------------------------------------------------------------ the resolved platform


class Platform(BaseModel):
    """The platform of one stack, fully derived from its config.

    ``create`` says whether ``pulumi up`` provisions it (``vertex_training.program.platform``);
    when it
    is false, the other fields name what exists already (each may be None).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    create: bool
    stack: str
    project: str | None = None
    region: str | None = None
    bucket: str | None = None
    force_destroy: bool = False
    staging_expiry_days: int = DEFAULT_STAGING_EXPIRY_DAYS
    noncurrent_expiry_days: int = DEFAULT_NONCURRENT_EXPIRY_DAYS
    repository_id: str | None = None
    repository_url: str | None = None
    account_id: str | None = None
    service_account: str | None = None
    #: Whether ``pulumi up`` creates a TensorBoard (its name is then TENSORBOARD_PENDING).
    create_tensorboard: bool = False
    tensorboard: str | None = None
    protect: bool = False
    #: IAM members that may act as the jobs' account; empty: whoever runs ``pulumi up``.
    deployers: tuple[str, ...] = ()

    @property
    def output_root(self) -> str | None:
        """``gs://<bucket>``: every job writes under ``<output_root>/<job>``."""
        return f"gs://{self.bucket}" if self.bucket else None

    def job_defaults(self) -> dict[str, str | None]:
        """The spec.StackSettings fields a job defaults from."""
        return {
            "service_account": self.service_account,
            "output_root": self.output_root,
            "image_repository": self.repository_url,
            "tensorboard": TENSORBOARD_PENDING if self.create_tensorboard else self.tensorboard,
        }


# ------------------------------------------------------------------------ the public API


def resolve_platform(
    raw: Any,
    *,
    stack: str,
    project: str | None,
    region: str | None,
    backend: str,
    api_endpoint: str | None = None,
) -> tuple[Platform | None, list[Issue]]:
    """Validate ``vertex-training:platform`` and derive the platform from it.

    ``raw`` is the key's value (None or ``{}`` when unset); the other arguments are the
    stack's ``gcp:project``, ``gcp:region``, ``vertex-training:backend`` and
    ``vertex-training:apiEndpoint``. Returns the platform (None when the config cannot be
    read) and every issue found, each naming its full stack config key.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        return None, [
            Issue(PLATFORM_KEY, raw, "must be a mapping of settings, e.g. {enabled: true}")
        ]
    try:
        config = PlatformConfig.model_validate(dict(raw))
    except ValidationError as exc:
        return None, issues_from(
            exc,
            PLATFORM_KEY,
            PlatformConfig,
            unions={"deployer": "must be an IAM member or a list of them"},
        )
    enabled = config.enabled
    if enabled is None:
        enabled = kind_of(backend).cloud and bool(project) and not api_endpoint
    if enabled:
        return _created(config, stack=stack, project=project, region=region)
    return _existing(config, stack=stack)


# ------------------------------------------------------------------------------ internals


def _key(*path: str) -> str:
    return ".".join((PLATFORM_KEY, *path))


def _created(
    config: PlatformConfig, *, stack: str, project: str | None, region: str | None
) -> tuple[Platform | None, list[Issue]]:
    issues: list[Issue] = []
    if config.existing is not None:
        issues.append(
            Issue(
                _key("existing"),
                config.existing.model_dump(exclude_none=True),
                "existing names resources managed elsewhere and applies only with "
                f"enabled: false; remove existing, or set {_key('enabled')}: false",
            )
        )
    if not project:
        issues.append(Issue(GCP_PROJECT_KEY, None, NO_PROJECT_MESSAGE))
    if not region:
        issues.append(
            Issue(
                GCP_REGION_KEY,
                None,
                "the platform's bucket and repository live in the jobs' region: run "
                "`pulumi config set gcp:region us-central1` (or another training region)",
            )
        )
    elif region not in machines.TRAINING_REGIONS:
        issues.append(
            Issue(
                GCP_REGION_KEY,
                region,
                f"Vertex AI custom training does not run in {region}, so neither should its "
                "bucket and repository: write a training region such as us-central1 or "
                "europe-west4",
            )
        )
    bucket = config.bucket.name or _default_bucket(project or "", stack)
    issues.extend(_bucket_issues(bucket, _key("bucket", "name"), written=config.bucket.name))
    account_id = config.service_account.account_id
    if not _ACCOUNT_ID_RE.fullmatch(account_id):
        issues.append(
            Issue(
                _key("service_account", "account_id"),
                account_id,
                "service account IDs have 6 to 30 lowercase letters, digits or -, start with "
                "a letter and do not end with -; write e.g. vertex-training",
            )
        )
    repository_id = config.repository.id
    if not _REPOSITORY_ID_RE.fullmatch(repository_id):
        issues.append(
            Issue(
                _key("repository", "id"),
                repository_id,
                "repository IDs have 1 to 63 lowercase letters, digits or -, start with a "
                "letter and do not end with -; write e.g. training",
            )
        )
    deployers, deployer_issues = _deployers(config.deployer)
    issues.extend(deployer_issues)
    if issues:
        return None, issues
    assert project and region  # checked above
    return (
        Platform(
            create=True,
            stack=stack,
            project=project,
            region=region,
            bucket=bucket,
            force_destroy=config.bucket.force_destroy,
            staging_expiry_days=config.bucket.staging_expiry_days,
            noncurrent_expiry_days=config.bucket.noncurrent_expiry_days,
            repository_id=repository_id,
            repository_url=f"{region}-docker.pkg.dev/{project}/{repository_id}",
            account_id=account_id,
            service_account=f"{account_id}@{project}.iam.gserviceaccount.com",
            create_tensorboard=config.tensorboard.enabled,
            protect=config.protect,
            deployers=deployers,
        ),
        [],
    )


def _existing(config: PlatformConfig, *, stack: str) -> tuple[Platform | None, list[Issue]]:
    existing = config.existing or ExistingConfig()
    issues: list[Issue] = []
    if existing.bucket is not None:
        issues.extend(_bucket_issues(existing.bucket, _key("existing", "bucket"), existing.bucket))
    if existing.service_account is not None and not _EMAIL_RE.fullmatch(existing.service_account):
        issues.append(
            Issue(
                _key("existing", "service_account"),
                existing.service_account,
                "must be a service account email, like trainer@my-project.iam.gserviceaccount.com",
            )
        )
    if existing.repository_url is not None and not _REPOSITORY_URL_RE.fullmatch(
        existing.repository_url.rstrip("/")
    ):
        issues.append(
            Issue(
                _key("existing", "repository_url"),
                existing.repository_url,
                "must be an Artifact Registry Docker repository URL, like "
                "us-central1-docker.pkg.dev/my-project/training",
            )
        )
    if existing.tensorboard is not None and not _TENSORBOARD_RE.fullmatch(existing.tensorboard):
        issues.append(
            Issue(
                _key("existing", "tensorboard"),
                existing.tensorboard,
                "must be a Vertex AI TensorBoard resource name, like "
                "projects/my-project/locations/us-central1/tensorboards/123",
            )
        )
    if config.tensorboard.enabled:
        issues.append(
            Issue(
                _key("tensorboard", "enabled"),
                True,
                "a TensorBoard is created only with the platform; set "
                f"{_key('enabled')}: true, or name one in {_key('existing', 'tensorboard')}",
            )
        )
    if issues:
        return None, issues
    return (
        Platform(
            create=False,
            stack=stack,
            bucket=existing.bucket,
            repository_url=existing.repository_url.rstrip("/") if existing.repository_url else None,
            service_account=existing.service_account,
            tensorboard=existing.tensorboard,
        ),
        [],
    )


def _default_bucket(project: str, stack: str) -> str:
    """``<project>-vertex-training-<stack>``, folded into bucket-name characters."""
    folded = re.sub(r"[^a-z0-9_-]", "-", f"{project}-vertex-training-{stack}".lower())
    return folded.strip("-_")


def _bucket_issues(name: str, key: str, written: str | None) -> list[Issue]:
    """Cloud Storage bucket naming rules (dotted, domain-named buckets are not supported)."""
    problem = None
    if not _BUCKET_RE.fullmatch(name):
        problem = (
            "bucket names have 3 to 63 lowercase letters, digits, - or _, and start and end "
            "with a letter or digit"
        )
    elif name.startswith("goog") or "google" in name:
        problem = "bucket names may not start with 'goog' or contain 'google'"
    if problem is None:
        return []
    if written is None:
        return [
            Issue(
                key,
                name,
                f"the default bucket name <project>-vertex-training-<stack> does not work "
                f"here ({problem}); set {key} to a name of your own",
            )
        ]
    return [Issue(key, name, f"{problem}; choose another name")]


def _deployers(value: str | list[str] | None) -> tuple[tuple[str, ...], list[Issue]]:
    members = [value] if isinstance(value, str) else list(value or [])
    issues = []
    for index, member in enumerate(members):
        key = _key("deployer") if isinstance(value, str) else f"{_key('deployer')}[{index}]"
        if member in _PUBLIC_MEMBERS:
            issues.append(
                Issue(
                    key,
                    member,
                    "acting as the jobs' service account is never granted to the public; "
                    "name the identity that runs pulumi up, e.g. user:alice@example.com",
                )
            )
        elif not _MEMBER_RE.fullmatch(member):
            issues.append(
                Issue(
                    key,
                    member,
                    "must be an IAM member: user:alice@example.com, "
                    "serviceAccount:ci@my-project.iam.gserviceaccount.com or "
                    "group:ml-platform@example.com",
                )
            )
    return tuple(members), issues
