"""TrainingPlatform: a Google Cloud project made ready for training, from pulumi-gcp.

One per stack, built from a resolved ``vertex_training.stackconfig.platform.Platform``:

- the project services in ``stack_platform.SERVICES``, never disabled on destroy;
- a staging bucket in the jobs' region: uniform bucket-level access, public access
  prevention enforced, versioning, objects under ``staging/`` deleted after
  ``staging_expiry_days`` and noncurrent versions after ``noncurrent_expiry_days``;
  ``force_destroy`` only when the stack config says so;
- an Artifact Registry Docker repository in the same region;
- the jobs' service account, granted exactly: object admin on that bucket (bucket-level),
  reader on that repository (repository-level), log and metric writer on the project,
  and ``roles/aiplatform.user`` on the project only when a job needs it
  (``Stack.jobs_calling_vertex_api``);
- ``roles/iam.serviceAccountUser`` on that account (and nothing else) for the deploying
  identity: the configured ``deployer`` members, else whoever runs ``pulumi up`` (the
  provider credentials' identity, looked up through the OpenID userinfo endpoint);
- optionally a Vertex AI TensorBoard.

No primitive role is granted anywhere. ``protect: true`` protects every resource here.
Trainer packages are uploaded by ``upload_packages``, outside the component: they change
with the code and are replaced, so they are never protected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pulumi
import pulumi_gcp as gcp

from vertex_training.api.labels import label_value
from vertex_training.backend_kinds import VERTEX
from vertex_training.errors import rekeyed
from vertex_training.keys import GCP_PROJECT_KEY, GCP_REGION_KEY, PLATFORM_KEY
from vertex_training.packaging import TrainerPackage
from vertex_training.resources.arguments import PlatformArgs
from vertex_training.stackconfig import platform as stack_platform
from vertex_training.stackconfig.platform import Platform

#: Labels on the bucket, repository and TensorBoard.
MANAGED_BY_LABEL = {"managed-by": "vertex-training"}
SERVICE_ACCOUNT_SUFFIX = ".iam.gserviceaccount.com"


class TrainingPlatform(pulumi.ComponentResource):
    """The APIs, bucket, repository, service account and IAM a stack's jobs run on."""

    #: The project services, by API name.
    services: dict[str, gcp.projects.Service]
    bucket: gcp.storage.Bucket
    repository: gcp.artifactregistry.Repository
    service_account: gcp.serviceaccount.Account
    #: Every IAM member the platform grants (the account's roles and the deployers').
    iam_members: list[pulumi.CustomResource]
    tensorboard: gcp.vertex.AiTensorboard | None
    #: The component's type: a Python program's; the provider plugin constructs it as
    #: its schema's ``vertex-training:index:TrainingPlatform`` (``vertex_training.plugin``).
    type_token = "vertex-training:platform:TrainingPlatform"

    def __init__(
        self,
        name: str,
        platform: Platform | None = None,
        *,
        project: str | None = None,
        region: str | None = None,
        settings: PlatformArgs | None = None,
        vertex_api_role: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """The platform of ``project`` in ``region``, shaped by ``settings`` (the keys of
        ``vertex-training:platform``: bucket, repository, service account, TensorBoard,
        deployers, protect; names default from the stack's). A mistake in them stops the
        program at ``pulumi preview``, named by argument (``settings.bucket.name``).
        ``platform``: instead, a platform the stack config resolved.
        ``vertex_api_role``: grant ``roles/aiplatform.user`` (a job needs it: one that
        writes to a TensorBoard or to Vertex AI Experiments)."""
        if platform is None:
            platform = platform_of(settings or {}, project=project, region=region)
        super().__init__(self.type_token, name, None, opts)
        if not platform.create:
            raise ValueError("TrainingPlatform is built for a platform with create=True")
        self.platform = platform
        #: The packages ``upload`` uploaded, by package directory.
        self._uploaded: dict[str, gcp.storage.BucketObject] = {}
        project, region = platform.project, platform.region
        assert project and region and platform.bucket and platform.account_id
        labels = {**MANAGED_BY_LABEL, "pulumi-stack": label_value(platform.stack)}
        protect = platform.protect

        def child(*depends_on: pulumi.Resource, **extra: Any) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(
                parent=self, protect=protect, depends_on=list(depends_on), **extra
            )

        self.services = {
            api: gcp.projects.Service(
                f"{name}-{api.split('.')[0]}",
                project=project,
                service=api,
                disable_on_destroy=False,
                disable_dependent_services=False,
                opts=child(),
            )
            for api in stack_platform.SERVICES
        }
        apis = list(self.services.values())

        self.bucket = gcp.storage.Bucket(
            f"{name}-bucket",
            name=platform.bucket,
            project=project,
            location=region.upper(),
            uniform_bucket_level_access=True,
            public_access_prevention="enforced",
            versioning=gcp.storage.BucketVersioningArgs(enabled=True),
            lifecycle_rules=[
                _delete_rule(
                    age=platform.staging_expiry_days,
                    matches_prefixes=[stack_platform.STAGING_PREFIX],
                ),
                _delete_rule(
                    days_since_noncurrent_time=platform.noncurrent_expiry_days,
                    with_state="ARCHIVED",
                ),
            ],
            force_destroy=platform.force_destroy,
            labels=labels,
            opts=child(*apis),
        )
        self.repository = gcp.artifactregistry.Repository(
            f"{name}-repository",
            project=project,
            location=region,
            repository_id=platform.repository_id,
            format="DOCKER",
            description=f"Training containers of the {platform.stack} stack (vertex-training)",
            labels=labels,
            opts=child(*apis),
        )
        self.service_account = gcp.serviceaccount.Account(
            f"{name}-jobs",
            project=project,
            account_id=platform.account_id,
            display_name=f"Vertex AI training jobs ({platform.stack})",
            description="Runs the stack's Vertex AI training jobs (vertex-training).",
            opts=child(*apis),
        )
        jobs_member = self.service_account.email.apply(lambda email: f"serviceAccount:{email}")

        self.iam_members = []
        for role in stack_platform.BUCKET_ROLES:
            self.iam_members.append(
                gcp.storage.BucketIAMMember(
                    f"{name}-jobs-{_role_name(role)}",
                    bucket=self.bucket.name,
                    role=role,
                    member=jobs_member,
                    opts=child(*apis),
                )
            )
        for role in stack_platform.REPOSITORY_ROLES:
            self.iam_members.append(
                gcp.artifactregistry.RepositoryIamMember(
                    f"{name}-jobs-{_role_name(role)}",
                    project=project,
                    location=self.repository.location,
                    repository=self.repository.name,
                    role=role,
                    member=jobs_member,
                    opts=child(*apis),
                )
            )
        project_roles = [*stack_platform.PROJECT_ROLES]
        if vertex_api_role:
            project_roles.append(stack_platform.VERTEX_API_ROLE)
        for role in project_roles:
            self.iam_members.append(
                gcp.projects.IAMMember(
                    f"{name}-jobs-{_role_name(role)}",
                    project=project,
                    role=role,
                    member=jobs_member,
                    opts=child(*apis),
                )
            )
        for index, member in enumerate(_deployers(platform)):
            self.iam_members.append(
                gcp.serviceaccount.IAMMember(
                    f"{name}-deployer-{index}" if index else f"{name}-deployer",
                    service_account_id=self.service_account.name,
                    role=stack_platform.DEPLOYER_ROLE,
                    member=member,
                    opts=child(*apis),
                )
            )

        self.tensorboard = None
        if platform.create_tensorboard:
            self.tensorboard = gcp.vertex.AiTensorboard(
                f"{name}-tensorboard",
                project=project,
                region=region,
                display_name=f"vertex-training-{platform.stack}",
                description=f"TensorBoard of the {platform.stack} stack's training jobs",
                labels=labels,
                opts=child(self.services["aiplatform.googleapis.com"]),
            )

        self.register_outputs(
            {
                "bucket": self.bucket.name,
                "repository_url": self.repository_url,
                "service_account": self.service_account.email,
                "tensorboard": self.tensorboard_name,
            }
        )

    @property
    def dependencies(self) -> list[pulumi.Resource]:
        """What a job must wait for: the APIs enabled and every grant in place."""
        return [*self.services.values(), *self.iam_members]

    def job_settings(self) -> dict[str, Any]:
        """What a job run on this platform defaults from (``TrainingJob(platform=...)``):
        its project and region, the account, bucket and repository, the TensorBoard."""
        settings: dict[str, Any] = {
            key: value
            for key, value in {
                "project": self.platform.project,
                "region": self.platform.region,
                **self.platform.job_defaults(),
            }.items()
            if value is not None
        }
        if self.tensorboard is not None:
            settings["tensorboard"] = self.tensorboard_name
        return settings

    @property
    def bucket_name(self) -> str | None:
        """The staging bucket's name (known from config alone)."""
        return self.platform.bucket

    def upload(self, packages: Mapping[str, TrainerPackage]) -> list[pulumi.Resource]:
        """Upload each package's sdist into the bucket (``upload_packages``), each package
        directory once however many jobs run it; the uploads a job waits for."""
        new = {path: package for path, package in packages.items() if path not in self._uploaded}
        self._uploaded.update(upload_packages(new, self.platform, self, Path.cwd()))
        return [self._uploaded[path] for path in packages]

    @property
    def repository_url(self) -> str:
        """``<region>-docker.pkg.dev/<project>/<repo>``, known from config alone."""
        assert self.platform.repository_url
        return self.platform.repository_url

    @property
    def tensorboard_name(self) -> pulumi.Output[str] | None:
        """The TensorBoard's resource name (chosen by the server: unknown until created)."""
        return self.tensorboard.name if self.tensorboard is not None else None


#: The stack config keys a platform is read from -> the arguments that say the same.
PLATFORM_ARGUMENTS = {
    PLATFORM_KEY: "settings",
    GCP_PROJECT_KEY: "project",
    GCP_REGION_KEY: "region",
}


def platform_of(
    settings: Mapping[str, Any], *, project: str | None, region: str | None
) -> Platform:
    """The platform a program asks for with arguments; ``pulumi.RunError`` naming each
    mistake by argument (``settings.bucket.name``, ``project``)."""
    found, issues = stack_platform.resolve_platform(
        {**settings, "enabled": True},
        stack=pulumi.get_stack(),
        project=project,
        region=region,
        backend=VERTEX.name,
    )
    if issues or found is None:
        lines = [str(rekeyed(issue, PLATFORM_ARGUMENTS)) for issue in issues]
        raise pulumi.RunError("TrainingPlatform: " + "\n".join(lines or ["cannot be built"]))
    return found


#: Stack settings that say how this machine reaches the service, not what a job is.
MACHINE_SETTINGS = ("api_endpoint",)


def job_stack_settings(
    settings: Mapping[str, Any], platform: TrainingPlatform | None
) -> dict[str, Any]:
    """The stack settings a TrainingJob gets, with the platform TensorBoard's real name;
    unset ones left out (the engine drops nulls, and every job records this dict), and
    so is the API endpoint: how this machine reaches the service, which the providers
    read from the stack config (``ProviderSettings``), is no part of a job."""
    merged = {
        key: value
        for key, value in settings.items()
        if value is not None and key not in MACHINE_SETTINGS
    }
    if platform is not None and platform.tensorboard is not None:
        merged["tensorboard"] = platform.tensorboard_name
    return merged


def upload_packages(
    packages: Mapping[str, TrainerPackage],
    platform: Platform | None,
    component: TrainingPlatform | None,
    project_dir: Any,
) -> dict[str, gcp.storage.BucketObject]:
    """Upload each package's sdist as ``packages/<name>-<digest>.tar.gz``, by package_path.

    Into the component's bucket (after its APIs and grants), or the existing bucket the
    platform names. The object name carries the source digest: new code is a new object
    (and the old one is deleted once no job refers to it). A replacement of the same name
    deletes first, so that deleting the old object can never remove the new one.
    """
    if not packages:
        return {}
    if component is not None:
        bucket: pulumi.Input[str] = component.bucket.name
        opts = pulumi.ResourceOptions(depends_on=component.dependencies)
    else:
        assert platform is not None and platform.bucket  # packaging.plan_packages checks
        bucket, opts = platform.bucket, None
    objects = {}
    for path, package in sorted(packages.items()):
        objects[path] = gcp.storage.BucketObject(
            f"package-{package.stem}",
            bucket=bucket,
            name=package.object_name,
            source=pulumi.FileAsset(str(package.sdist(project_dir))),
            content_type="application/gzip",
            opts=pulumi.ResourceOptions.merge(
                pulumi.ResourceOptions(delete_before_replace=True), opts
            ),
        )
    return objects


def job_dependencies(
    component: TrainingPlatform | None,
    package_objects: Mapping[str, gcp.storage.BucketObject],
    package_paths: Sequence[str],
) -> pulumi.ResourceOptions:
    """A job waits for the platform's APIs and grants, and for its uploaded packages."""
    return pulumi.ResourceOptions(
        depends_on=[
            *(component.dependencies if component is not None else []),
            *(package_objects[path] for path in package_paths),
        ]
    )


def platform_outputs(
    platform: Platform | None, component: TrainingPlatform | None
) -> dict[str, Any]:
    """The stack outputs: where jobs write, which account they run as, the repository."""
    if component is not None:
        return {
            "bucket": component.bucket.name,
            "repository_url": component.repository_url,
            "service_account": component.service_account.email,
            "tensorboard": component.tensorboard_name,
        }
    if platform is None:
        return {}
    return {
        key: value
        for key, value in {
            "bucket": platform.bucket,
            "repository_url": platform.repository_url,
            "service_account": platform.service_account,
            "tensorboard": platform.tensorboard,
        }.items()
        if value
    }


def _delete_rule(**condition: Any) -> gcp.storage.BucketLifecycleRuleArgs:
    return gcp.storage.BucketLifecycleRuleArgs(
        action=gcp.storage.BucketLifecycleRuleActionArgs(type="Delete"),
        condition=gcp.storage.BucketLifecycleRuleConditionArgs(**condition),
    )


def _deployers(platform: Platform) -> Sequence[pulumi.Input[str]]:
    """The configured deployers, else the identity of the credentials running pulumi."""
    if platform.deployers:
        return platform.deployers
    email = gcp.organizations.get_client_open_id_user_info_output().email
    return [email.apply(_member_of)]


def _member_of(email: str) -> str:
    kind = "serviceAccount" if email.endswith(SERVICE_ACCOUNT_SUFFIX) else "user"
    return f"{kind}:{email}"


def _role_name(role: str) -> str:
    """``roles/storage.objectAdmin`` -> ``storage-objectadmin`` (for resource names)."""
    return role.removeprefix("roles/").replace(".", "-").lower()
