"""The platform as a resource graph: the real __main__.py under Pulumi's unit-test mocks.

The pulumi-gcp provider plugin cannot be had here, so the program runs against
``pulumi.runtime.set_mocks`` with the ``dev`` and ``prod`` stack files (and variants),
and the tests assert on every resource it registers: type, name, inputs and options.

Pulumi's ``MockResourceArgs`` carries neither ``dependsOn`` nor ``protect``, so
``RecordingMonitor`` (a ``MockMonitor``) records each ``RegisterResourceRequest`` as the
engine would receive it (inputs deserialized as a dynamic provider's check sees them,
unknowns kept): its dependencies (URNs, from depends_on and from inputs),
protect, delete_before_replace, additional secret outputs and parent. Mocks return a
resource's inputs as its outputs, plus what the real provider computes (a service
account's email, a TensorBoard's name); the dynamic TrainingJob and JobWaiter providers
are not called, so jobs are validated by calling ``TrainingJobProvider.check`` on their
recorded inputs, as the engine would at preview.
"""

from __future__ import annotations

import contextvars
import json
import runpy
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.output import Unknown
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from vertex_training import packaging
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.state import SCHEMA_VERSION
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.stackconfig import load_stack
from vertex_training.stackconfig.platform import resolve_platform

REPO = Path(__file__).resolve().parent.parent
PROJECT = "vertex-training"
OPENID_INVOKE = "gcp:organizations/getClientOpenIdUserInfo:getClientOpenIdUserInfo"
RUNNER_EMAIL = "alice@acme.example"
TENSORBOARD_ID = "8111"

SERVICE = "gcp:projects/service:Service"
BUCKET = "gcp:storage/bucket:Bucket"
BUCKET_OBJECT = "gcp:storage/bucketObject:BucketObject"
REPOSITORY = "gcp:artifactregistry/repository:Repository"
ACCOUNT = "gcp:serviceaccount/account:Account"
TENSORBOARD = "gcp:vertex/aiTensorboard:AiTensorboard"
BUCKET_IAM = "gcp:storage/bucketIAMMember:BucketIAMMember"
REPOSITORY_IAM = "gcp:artifactregistry/repositoryIamMember:RepositoryIamMember"
PROJECT_IAM = "gcp:projects/iAMMember:IAMMember"
ACCOUNT_IAM = "gcp:serviceaccount/iAMMember:IAMMember"
IAM_TYPES = (BUCKET_IAM, REPOSITORY_IAM, PROJECT_IAM, ACCOUNT_IAM)
JOB = "pulumi-python:dynamic/vertex:TrainingJob"
WAITER = "pulumi-python:dynamic/vertex:JobWaiter"
COMPONENT = "vertex-training:platform:TrainingPlatform"


# --------------------------------------------------------------------------- the harness


@dataclass
class Registration:
    """One RegisterResource call, as the engine would receive it."""

    type: str
    name: str
    urn: str
    inputs: dict[str, Any]
    parent: str
    dependencies: list[str]
    protect: bool
    delete_before_replace: bool
    secret_outputs: list[str]


@dataclass
class Graph:
    """Every resource one run of the program registered."""

    registrations: list[Registration] = field(default_factory=list)
    invokes: list[str] = field(default_factory=list)
    #: The stack outputs the program exported, by name (an unknown one as ``Unknown()``).
    outputs: dict[str, Any] = field(default_factory=dict)

    def of(self, type_: str) -> list[Registration]:
        return [r for r in self.registrations if r.type == type_]

    def one(self, type_: str) -> Registration:
        (found,) = self.of(type_)
        return found

    def named(self, name: str) -> Registration:
        (found,) = [r for r in self.registrations if r.name == name]
        return found

    def children_of(self, parent: Registration) -> list[Registration]:
        return [r for r in self.registrations if r.parent == parent.urn]


class Mocks(pulumi_mocks.Mocks):
    """Inputs as outputs, plus the outputs the real provider computes."""

    def __init__(self, graph: Graph, preview: bool = False) -> None:
        self.graph = graph
        self.preview = preview

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == ACCOUNT:
            email = f"{args.inputs['accountId']}@{args.inputs['project']}.iam.gserviceaccount.com"
            outputs.update(
                email=email,
                member=f"serviceAccount:{email}",
                name=f"projects/{args.inputs['project']}/serviceAccounts/{email}",
            )
        elif args.typ == TENSORBOARD and self.preview:
            pass  # server-assigned: a preview before creation does not know it
        elif args.typ == TENSORBOARD:
            outputs["name"] = (
                f"projects/123456/locations/{args.inputs['region']}/tensorboards/{TENSORBOARD_ID}"
            )
        elif args.typ == REPOSITORY:
            outputs["name"] = args.inputs["repositoryId"]
        elif args.typ == JOB:
            outputs.update(state="QUEUED", error="")  # as a job just submitted
        elif args.typ == WAITER:
            outputs.update(states={}, attempts={}, trials={})  # as when no job waits
        return f"{args.name}-id", outputs

    def call(self, args: pulumi_mocks.MockCallArgs) -> dict[str, Any]:
        self.graph.invokes.append(args.token)
        if args.token == OPENID_INVOKE:
            return {"email": RUNNER_EMAIL, "id": "openid"}
        return {}


class RecordingMonitor(pulumi_mocks.MockMonitor):
    """A MockMonitor that records each registration's options too."""

    def __init__(self, mocks: Mocks, graph: Graph) -> None:
        super().__init__(mocks)
        self.graph = graph

    def RegisterResource(self, request: Any) -> Any:
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.graph.registrations.append(
                Registration(
                    type=request.type,
                    name=request.name,
                    urn=response.urn,
                    inputs=rpc.deserialize_properties(request.object, keep_unknowns=True),
                    parent=request.parent,
                    dependencies=list(request.dependencies),
                    protect=request.protect,
                    delete_before_replace=request.deleteBeforeReplace,
                    secret_outputs=list(request.additionalSecretOutputs),
                )
            )
        return response


def stack_config(stack_file: Path) -> tuple[dict[str, str], list[str]]:
    """The config the engine would hand the program: strings and JSON, project defaults."""
    document = yaml.safe_load(stack_file.read_text(encoding="utf-8")) or {}
    declared = yaml.safe_load((REPO / "Pulumi.yaml").read_text(encoding="utf-8"))["config"]
    values = {key: spec["default"] for key, spec in declared.items() if "default" in spec}
    values.update(document.get("config") or {})
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in values.items()}, []


def run_program(
    stack_file: Path, project_dir: Path, monkeypatch: pytest.MonkeyPatch, *, preview: bool = False
) -> Graph:
    """Run the real __main__.py for a stack file under mocks; return what it registered."""
    config, secret_keys = stack_config(stack_file)
    stack = stack_file.name.split(".")[1]
    graph = Graph()
    monkeypatch.chdir(project_dir)

    def run() -> None:
        mocks = Mocks(graph, preview)
        pulumi.runtime.set_all_config(config, secret_keys)
        pulumi_mocks.set_mocks(
            mocks,
            project=PROJECT,
            stack=stack,
            preview=preview,
            monitor=RecordingMonitor(mocks, graph),
        )
        _sync_await(
            run_pulumi_func(lambda: runpy.run_path(str(REPO / "__main__.py"), run_name="__main__"))
        )
        exported = pulumi.runtime.settings.get_root_resource().outputs
        for key, value in exported.items():
            output = pulumi.Output.from_input(value)
            known = _sync_await(output.is_known())
            graph.outputs[key] = _sync_await(output.future()) if known else Unknown()

    contextvars.Context().run(run)  # each program gets fresh Pulumi settings and config
    return graph


def make_project(root: Path, package_cache: Path | None = None) -> Path:
    """A copy of the project's stacks and example trainer (the program builds trainer/).

    ``package_cache``: sdists built already (the example trainer's), so that only a test
    that changes the trainer pays for a build.
    """
    project = root / "project"
    project.mkdir()
    shutil.copy(REPO / "Pulumi.yaml", project / "Pulumi.yaml")
    shutil.copytree(REPO / "stacks", project / "stacks")
    shutil.copytree(
        REPO / "trainer", project / "trainer", ignore=shutil.ignore_patterns("__pycache__")
    )
    if package_cache is not None:
        shutil.copytree(package_cache, project / packaging.PACKAGE_CACHE)
    return project


def write_stack(project: Path, stack: str, config: dict[str, Any]) -> Path:
    path = project / "stacks" / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False), encoding="utf-8")
    return path


def checked(job: Registration) -> dict[str, Any]:
    """The job's inputs after the provider's check (as at preview), with the request and
    location its operations derive from them; no failures allowed."""
    result = TrainingJobProvider().check({}, job.inputs)
    assert not result.failures, [f.reason for f in result.failures]
    return recorded_view(result.inputs)


def grants(graph: Graph) -> set[tuple[str, str, str, str]]:
    """(kind, scope, role, member) of every IAM member in the graph."""
    found = set()
    for r in graph.registrations:
        if r.type == BUCKET_IAM:
            found.add(("bucket", r.inputs["bucket"], r.inputs["role"], r.inputs["member"]))
        elif r.type == REPOSITORY_IAM:
            found.add(("repository", r.inputs["repository"], r.inputs["role"], r.inputs["member"]))
        elif r.type == PROJECT_IAM:
            found.add(("project", r.inputs["project"], r.inputs["role"], r.inputs["member"]))
        elif r.type == ACCOUNT_IAM:
            scope = r.inputs["serviceAccountId"]
            found.add(("service_account", scope, r.inputs["role"], r.inputs["member"]))
    return found


def all_strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in all_strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in all_strings(v)]
    return []


@pytest.fixture(scope="module")
def package_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example trainer's sdist, built once for the module."""
    project = make_project(tmp_path_factory.mktemp("cache"))
    job = {"python_package": {"package_path": "trainer", "module": "trainer.task"}}
    plan = packaging.plan_packages(
        {"job": job}, backend="local", bucket=None, project_dir=project, build=True
    )
    assert not plan.issues, plan.issues
    return project / packaging.PACKAGE_CACHE


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory, package_cache: Path) -> Graph:
    with pytest.MonkeyPatch.context() as monkeypatch:
        project = make_project(tmp_path_factory.mktemp("dev"), package_cache)
        return run_program(project / "stacks" / "Pulumi.dev.yaml", project, monkeypatch)


@pytest.fixture(scope="module")
def prod(tmp_path_factory: pytest.TempPathFactory, package_cache: Path) -> Graph:
    with pytest.MonkeyPatch.context() as monkeypatch:
        project = make_project(tmp_path_factory.mktemp("prod"), package_cache)
        return run_program(project / "stacks" / "Pulumi.prod.yaml", project, monkeypatch)


@pytest.fixture
def project(tmp_path: Path, package_cache: Path) -> Path:
    return make_project(tmp_path, package_cache)


def dev_config(**platform: Any) -> dict[str, Any]:
    """The dev stack's config with its platform settings replaced by ``platform``."""
    config = yaml.safe_load((REPO / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    config["vertex-training:platform"] = platform
    return config


DEV_ACCOUNT = "vertex-training@acme-ml-dev.iam.gserviceaccount.com"
DEV_BUCKET = "acme-ml-dev-vertex-training-dev"
PROD_ACCOUNT = "vertex-training@acme-ml-prod.iam.gserviceaccount.com"
PROD_BUCKET = "acme-ml-prod-vertex-training-prod"


# ------------------------------------------------------------------------------ the tests


class TestServices:
    """Project services: what the jobs need, never disabled on destroy."""

    def test_every_needed_api_is_enabled_and_kept(self, dev: Graph) -> None:
        """Vertex AI, Artifact Registry, Storage, IAM, Logging, Monitoring, CRM; no disable."""
        services = {r.inputs["service"]: r.inputs for r in dev.of(SERVICE)}
        assert set(services) == {
            "aiplatform.googleapis.com",
            "artifactregistry.googleapis.com",
            "cloudresourcemanager.googleapis.com",
            "iam.googleapis.com",
            "logging.googleapis.com",
            "monitoring.googleapis.com",
            "storage.googleapis.com",
        }
        for inputs in services.values():
            assert inputs["project"] == "acme-ml-dev"
            assert inputs["disableOnDestroy"] is False


class TestBucket:
    """The staging bucket: region, access, versioning, lifecycle, force_destroy."""

    def test_bucket_is_in_the_stack_region(self, dev: Graph, prod: Graph) -> None:
        """Bucket location equals gcp:region, for dev and prod."""
        assert dev.one(BUCKET).inputs["location"].lower() == "us-central1"
        assert prod.one(BUCKET).inputs["location"].lower() == "europe-west4"

    def test_uniform_access_and_public_access_prevention(self, dev: Graph, prod: Graph) -> None:
        """Uniform bucket-level access on, public access prevention enforced, versioning on."""
        for graph in (dev, prod):
            inputs = graph.one(BUCKET).inputs
            assert inputs["uniformBucketLevelAccess"] is True
            assert inputs["publicAccessPrevention"] == "enforced"
            assert inputs["versioning"] == {"enabled": True}

    def test_name_is_derived_from_project_and_stack(self, dev: Graph, prod: Graph) -> None:
        """<project>-vertex-training-<stack>."""
        assert dev.one(BUCKET).inputs["name"] == DEV_BUCKET
        assert prod.one(BUCKET).inputs["name"] == PROD_BUCKET

    def test_lifecycle_expires_staging_and_old_versions_only(self, dev: Graph) -> None:
        """staging/ objects expire after staging_expiry_days; noncurrent versions later."""
        rules = dev.one(BUCKET).inputs["lifecycleRules"]
        assert {
            "action": {"type": "Delete"},
            "condition": {"age": 7, "matchesPrefixes": ["staging/"]},
        } in rules
        assert {
            "action": {"type": "Delete"},
            "condition": {"daysSinceNoncurrentTime": 30, "withState": "ARCHIVED"},
        } in rules
        assert len(rules) == 2  # live job outputs and packages never expire

    def test_force_destroy_only_where_configured(self, dev: Graph, prod: Graph) -> None:
        """dev sets force_destroy: true; prod (and the default) does not."""
        assert dev.one(BUCKET).inputs["forceDestroy"] is True
        assert prod.one(BUCKET).inputs["forceDestroy"] is False

    def test_force_destroy_defaults_to_false(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A stack that says nothing about force_destroy gets a bucket that is never."""
        graph = run_program(
            write_stack(project, "dev", dev_config(deployer="user:a@acme.example")),
            project,
            monkeypatch,
        )
        assert graph.one(BUCKET).inputs["forceDestroy"] is False


class TestRepository:
    """The Artifact Registry repository."""

    def test_docker_repository_in_the_stack_region(self, dev: Graph, prod: Graph) -> None:
        """DOCKER format, in gcp:region, id `training`."""
        for graph, region in ((dev, "us-central1"), (prod, "europe-west4")):
            inputs = graph.one(REPOSITORY).inputs
            assert inputs["format"] == "DOCKER"
            assert inputs["location"] == region
            assert inputs["repositoryId"] == "training"


class TestLeastPrivilege:
    """The service account's grants, and the deployer's."""

    def test_grants_are_exactly_the_least_privilege_set(self, dev: Graph) -> None:
        """Bucket-scoped objectAdmin, repository-scoped reader, log/metric writer, and
        aiplatform.user because dev's example job writes to the TensorBoard; deployers
        may act as the account; nothing else."""
        account = f"serviceAccount:{DEV_ACCOUNT}"
        account_name = f"projects/acme-ml-dev/serviceAccounts/{DEV_ACCOUNT}"
        assert grants(dev) == {
            ("bucket", DEV_BUCKET, "roles/storage.objectAdmin", account),
            ("repository", "training", "roles/artifactregistry.reader", account),
            ("project", "acme-ml-dev", "roles/logging.logWriter", account),
            ("project", "acme-ml-dev", "roles/monitoring.metricWriter", account),
            ("project", "acme-ml-dev", "roles/aiplatform.user", account),
            (
                "service_account",
                account_name,
                "roles/iam.serviceAccountUser",
                "group:ml-engineers@acme.example",
            ),
            (
                "service_account",
                account_name,
                "roles/iam.serviceAccountUser",
                "serviceAccount:ci-deployer@acme-ml-dev.iam.gserviceaccount.com",
            ),
        }

    def test_no_vertex_api_role_when_no_job_needs_it(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a job writing to a TensorBoard or an experiment, no aiplatform.user."""
        config = dev_config(deployer="user:a@acme.example")
        del config["vertex-training:jobs"]["example"]["tensorboard"]
        graph = run_program(write_stack(project, "dev", config), project, monkeypatch)
        roles = {role for _kind, _scope, role, _member in grants(graph)}
        assert roles == {
            "roles/storage.objectAdmin",
            "roles/artifactregistry.reader",
            "roles/logging.logWriter",
            "roles/monitoring.metricWriter",
            "roles/iam.serviceAccountUser",
        }

    def test_no_primitive_role_anywhere(self, dev: Graph, prod: Graph) -> None:
        """No owner, editor or viewer role appears in any input of any resource."""
        for graph in (dev, prod):
            strings = [s for r in graph.registrations for s in all_strings(r.inputs)]
            assert not set(strings) & {"roles/owner", "roles/editor", "roles/viewer"}

    def test_bucket_and_repository_grants_are_not_project_wide(self, dev: Graph) -> None:
        """Storage and Artifact Registry roles are granted on the resources, not the project."""
        project_roles = {r.inputs["role"] for r in dev.of(PROJECT_IAM)}
        assert not {
            role
            for role in project_roles
            if role.startswith(("roles/storage", "roles/artifactregistry"))
        }

    def test_deployer_defaults_to_whoever_runs_pulumi(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With no deployer configured, the credentials' identity (OpenID) may act as it."""
        graph = run_program(write_stack(project, "dev", dev_config()), project, monkeypatch)
        assert OPENID_INVOKE in graph.invokes
        (deployer,) = graph.of(ACCOUNT_IAM)
        assert deployer.inputs["member"] == f"user:{RUNNER_EMAIL}"
        assert deployer.inputs["role"] == "roles/iam.serviceAccountUser"


class TestJobsOnThePlatform:
    """Every job depends on the platform, runs as its account, writes into its bucket."""

    def test_every_job_depends_on_services_and_iam(self, dev: Graph, prod: Graph) -> None:
        """A TrainingJob's registration depends on every service and every IAM member."""
        for graph in (dev, prod):
            needed = {r.urn for r in graph.registrations if r.type in (SERVICE, *IAM_TYPES)}
            jobs = graph.of(JOB)
            assert len(jobs) == 2
            for job in jobs:
                assert needed <= set(job.dependencies), sorted(needed - set(job.dependencies))

    def test_each_job_writes_into_the_bucket_as_the_account(self, dev: Graph, prod: Graph) -> None:
        """Output directory gs://<bucket>/<job>; service account the platform's."""
        for graph, bucket, account in (
            (dev, DEV_BUCKET, DEV_ACCOUNT),
            (prod, PROD_BUCKET, PROD_ACCOUNT),
        ):
            for job in graph.of(JOB):
                spec = checked(job)["request"]["jobSpec"]
                assert spec["baseOutputDirectory"]["outputUriPrefix"] == f"gs://{bucket}/{job.name}"
                assert spec["serviceAccount"] == account

    def test_images_resolve_against_the_repository(self, dev: Graph, prod: Graph) -> None:
        """`image: trainer:0.1` is the stack repository's image, in the stack's region."""
        smoke = checked(dev.named("container-smoke"))["request"]["jobSpec"]["workerPoolSpecs"]
        assert smoke[0]["containerSpec"]["imageUri"] == (
            "us-central1-docker.pkg.dev/acme-ml-dev/training/trainer:0.1"
        )
        pools = checked(prod.named("distributed"))["request"]["jobSpec"]["workerPoolSpecs"]
        assert {p["containerSpec"]["imageUri"] for p in pools} == {
            "europe-west4-docker.pkg.dev/acme-ml-prod/training/trainer-gpu:1.0"
        }

    def test_tensorboard_jobs_use_the_platform_tensorboard(self, dev: Graph) -> None:
        """tensorboard: true is the TensorBoard the platform created."""
        board = dev.one(TENSORBOARD)
        assert board.inputs["region"] == "us-central1"
        spec = checked(dev.named("example"))["request"]["jobSpec"]
        assert spec["tensorboard"].endswith(f"/tensorboards/{TENSORBOARD_ID}")
        assert "tensorboard" not in checked(dev.named("container-smoke"))["request"]["jobSpec"]

    def test_prebuilt_images_match_the_region(self, dev: Graph, prod: Graph) -> None:
        """dev runs on us-docker.pkg.dev prebuilt images, prod on europe-docker.pkg.dev."""
        for graph, host in ((dev, "us-docker.pkg.dev/"), (prod, "europe-docker.pkg.dev/")):
            for job in graph.of(JOB):
                for pool in checked(job)["request"]["jobSpec"]["workerPoolSpecs"]:
                    if "pythonPackageSpec" in pool:
                        assert pool["pythonPackageSpec"]["executorImageUri"].startswith(host)

    def test_prod_jobs_have_gpus(self, prod: Graph) -> None:
        """prod's jobs run on T4 and L4 GPUs."""
        accelerators = {
            pool["machineSpec"].get("acceleratorType")
            for job in prod.of(JOB)
            for pool in checked(job)["request"]["jobSpec"]["workerPoolSpecs"]
        }
        assert accelerators == {"NVIDIA_TESLA_T4", "NVIDIA_L4"}

    def test_the_jobs_output_after_an_update(self, dev: Graph) -> None:
        """`pulumi up` exports each job's view: its pages, directories and state."""
        jobs = dev.outputs["jobs"]
        assert set(jobs) == {job.name for job in dev.of(JOB)}
        example = jobs["example"]
        assert example["resource_name"] == "example-id"  # the mocks' ID
        assert example["state"] == "QUEUED"
        assert example["output_directory"] == f"gs://{DEV_BUCKET}/example"
        assert example["model_directory"] == f"gs://{DEV_BUCKET}/example/model"

    def test_the_jobs_output_is_unknown_in_a_preview(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A preview leaves `jobs` unknown (no preview shows it), even where every job's
        outputs are known (as the mocks give them), and the other outputs as they are."""
        graph = run_program(
            project / "stacks" / "Pulumi.dev.yaml", project, monkeypatch, preview=True
        )
        assert isinstance(graph.outputs["jobs"], Unknown)
        assert graph.outputs["bucket"] == DEV_BUCKET


class TestPackages:
    """The trainer package: uploaded to the bucket under a content-hashed name."""

    def test_package_is_uploaded_and_used(self, dev: Graph) -> None:
        """One BucketObject in the bucket's packages/; the job's URI names it; depends on it."""
        upload = dev.one(BUCKET_OBJECT)
        name = upload.inputs["name"]
        assert name.startswith("packages/trainer-") and name.endswith(".tar.gz")
        assert upload.inputs["bucket"] == DEV_BUCKET
        assert upload.delete_before_replace
        job = dev.named("example")
        pool = checked(job)["request"]["jobSpec"]["workerPoolSpecs"][0]
        assert pool["pythonPackageSpec"]["packageUris"] == [f"gs://{DEV_BUCKET}/{name}"]
        assert upload.urn in job.dependencies

    def test_uri_changes_with_the_code_and_only_then(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Same trainer -> same URI; a changed trainer file -> a new URI and object."""
        stack_file = project / "stacks" / "Pulumi.dev.yaml"

        def package_uri() -> tuple[str, str]:
            graph = run_program(stack_file, project, monkeypatch)
            pool = checked(graph.named("example"))["request"]["jobSpec"]["workerPoolSpecs"][0]
            return pool["pythonPackageSpec"]["packageUris"][0], graph.one(BUCKET_OBJECT).inputs[
                "name"
            ]

        first = package_uri()
        assert package_uri() == first
        (project / "trainer" / "trainer" / "__pycache__").mkdir(exist_ok=True)
        (project / "trainer" / "trainer" / "__pycache__" / "x.pyc").write_bytes(b"junk")
        assert package_uri() == first  # build leftovers are not code
        task = project / "trainer" / "trainer" / "task.py"
        task.write_text(task.read_text() + "\n# tuned\n")
        changed = package_uri()
        assert changed[0] != first[0] and changed[1] != first[1]
        assert changed[0] == f"gs://{DEV_BUCKET}/{changed[1]}"


class TestProtection:
    """prod protects every platform resource; packages and jobs are never protected."""

    def test_prod_platform_resources_are_protected(self, prod: Graph) -> None:
        """Every child of the platform component has protect set."""
        children = prod.children_of(prod.one(COMPONENT))
        assert len(children) >= 15
        assert all(child.protect for child in children), [c.name for c in children if not c.protect]

    def test_replaceable_resources_are_not_protected(self, prod: Graph) -> None:
        """Packages and jobs are replaced when code or spec change: never protected."""
        for r in [*prod.of(BUCKET_OBJECT), *prod.of(JOB)]:
            assert not r.protect, r.name

    def test_dev_is_not_protected(self, dev: Graph) -> None:
        """dev leaves protect off."""
        assert not any(r.protect for r in dev.registrations)


class TestOtherStacks:
    """No platform on the local backend; existing resources when the platform is off."""

    def test_local_stack_creates_no_cloud_resource(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The local stack registers no Google Cloud resource; its package is a local sdist."""
        graph = run_program(project / "stacks" / "Pulumi.local.yaml", project, monkeypatch)
        types = {r.type for r in graph.registrations}
        assert JOB in types
        assert not [t for t in types if t.startswith("gcp:") or t == COMPONENT]
        pool = checked(graph.named("example"))["request"]["jobSpec"]["workerPoolSpecs"][0]
        (uri,) = pool["pythonPackageSpec"]["packageUris"]
        assert uri.startswith(".state/packages/trainer-") and (project / uri).is_file()

    def test_existing_resources_instead_of_a_platform(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """enabled: false + existing: jobs default to those; only the package is uploaded."""
        existing = {
            "bucket": "shared-ml-bucket",
            "service_account": "trainer@shared.iam.gserviceaccount.com",
            "repository_url": "us-central1-docker.pkg.dev/shared/images",
            "tensorboard": "projects/shared/locations/us-central1/tensorboards/42",
        }
        config = dev_config(enabled=False, existing=existing)
        graph = run_program(write_stack(project, "dev", config), project, monkeypatch)
        assert {r.type for r in graph.registrations} == {
            JOB,
            BUCKET_OBJECT,
            WAITER,
        }
        assert graph.one(BUCKET_OBJECT).inputs["bucket"] == "shared-ml-bucket"
        spec = checked(graph.named("example"))["request"]["jobSpec"]
        assert spec["serviceAccount"] == existing["service_account"]
        assert spec["tensorboard"] == existing["tensorboard"]
        assert spec["baseOutputDirectory"]["outputUriPrefix"] == "gs://shared-ml-bucket/example"
        smoke = checked(graph.named("container-smoke"))["request"]["jobSpec"]
        assert smoke["workerPoolSpecs"][0]["containerSpec"]["imageUri"] == (
            "us-central1-docker.pkg.dev/shared/images/trainer:0.1"
        )

    def test_a_missing_package_directory_stops_the_preview(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """package_path naming no directory is refused, naming the key, before anything."""
        config = dev_config(deployer="user:a@acme.example")
        config["vertex-training:jobs"]["example"]["python_package"]["package_path"] = "trainr"
        with pytest.raises(pulumi.RunError) as caught:
            run_program(write_stack(project, "dev", config), project, monkeypatch)
        assert "vertex-training:jobs.example.python_package.package_path" in str(caught.value)
        assert "trainr" in str(caught.value)


class TestSecretJobs:
    """A secret in vertex-training:jobs keeps each job's config secret."""

    def test_job_inputs_are_secret(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """The config (every key of the job as written) is secret: in the job's input, as
        the checked input ``config`` and as an additional secret output."""
        stack_file = project / "stacks" / "Pulumi.local.yaml"
        config, _ = stack_config(stack_file)
        jobs = json.loads(config["vertex-training:jobs"])
        jobs["example"]["env"] = {"TOKEN": "plain-after-decryption"}
        config["vertex-training:jobs"] = json.dumps(jobs)
        monkeypatch.setattr(
            "tests.test_platform.stack_config",
            lambda _file: (config, ["vertex-training:jobs"]),
        )
        graph = run_program(stack_file, project, monkeypatch)
        job = graph.named("example")
        # The job's one input carries the secret config (the SDK makes the whole value
        # secret); a secret placeholder marks the checked input of the same name,
        # ``config``, secret. The stack settings get no secret input of their name.
        assert rpc.is_rpc_secret(job.inputs["job"])
        assert rpc.is_rpc_secret(job.inputs["config"])
        assert not {"name", "stack"} & set(job.inputs)
        assert set(job.secret_outputs) == {"config"}


class TestTrainingJobCheckWithUnknowns:
    """A preview before the TensorBoard exists: its name is unknown in the job's check."""

    def stack(self, tensorboard: Any) -> dict[str, Any]:
        return {
            "stack": "dev",
            "project": "p",
            "region": "us-central1",
            "backend": "vertex",
            "service_account": "sa@p.iam.gserviceaccount.com",
            "output_root": "gs://b",
            "image_repository": None,
            "tensorboard": tensorboard,
            "api_endpoint": None,
        }

    @pytest.mark.parametrize("unknown", [Unknown(), rpc.UNKNOWN], ids=["object", "sentinel"])
    def test_unknown_tensorboard_passes_through(self, unknown: Any) -> None:
        """check validates the job and leaves the TensorBoard unknown in the request."""
        config = {"image": "us-docker.pkg.dev/p/r/i:1", "tensorboard": True}
        news = {"job": {"name": "job", "config": config, "stack": self.stack(unknown)}}
        result = TrainingJobProvider().check({}, news)
        assert result.failures == []
        # The sentinel string is how the host serializes an unknown back to the engine.
        assert result.inputs["stack"]["tensorboard"] == rpc.UNKNOWN
        assert recorded_view(result.inputs)["request"]["jobSpec"]["tensorboard"] == rpc.UNKNOWN

    def test_other_unknown_settings_defer_the_check(self) -> None:
        """An unknown setting the spec would transform is not guessed at: no check yet."""
        stack = {**self.stack(None), "output_root": Unknown()}
        news = {"job": {"name": "job", "config": {"image": "x"}, "stack": stack}}
        result = TrainingJobProvider().check({}, news)
        assert result.failures == []
        assert result.inputs == {**news["job"], "schema": SCHEMA_VERSION}

    def test_first_preview_of_the_dev_stack(
        self, project: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Program under a preview: the job's TensorBoard input is unknown, check passes."""
        graph = run_program(
            project / "stacks" / "Pulumi.dev.yaml", project, monkeypatch, preview=True
        )
        job = graph.named("example")
        assert isinstance(job.inputs["job"]["stack"]["tensorboard"], Unknown)
        spec = checked(job)["request"]["jobSpec"]
        assert spec["tensorboard"] == rpc.UNKNOWN
        assert spec["serviceAccount"] == DEV_ACCOUNT  # everything else is known

    def test_unknown_config_is_not_validated_yet(self) -> None:
        """A wholly unknown config is passed on unchecked, not crashed on."""
        news = {"job": {"name": "job", "config": Unknown(), "stack": {"stack": "dev"}}}
        result = TrainingJobProvider().check({}, news)
        assert result.failures == []
        assert result.inputs == {**news["job"], "schema": SCHEMA_VERSION}


class TestPlatformSpec:
    """vertex_training.stackconfig.platform: the config key's rules, with full keys and fixes."""

    def resolve(self, raw: Any, **kw: Any) -> tuple[Any, list[Any]]:
        args = {
            "stack": "dev",
            "project": "acme-ml-dev",
            "region": "us-central1",
            "backend": "vertex",
        } | kw
        return resolve_platform(raw, **args)

    def test_defaults(self) -> None:
        """Enabled on vertex with a project; every name derived from config."""
        platform, issues = self.resolve({})
        assert issues == [] and platform.create
        assert platform.job_defaults() == {
            "service_account": DEV_ACCOUNT,
            "output_root": f"gs://{DEV_BUCKET}",
            "image_repository": "us-central1-docker.pkg.dev/acme-ml-dev/training",
            "tensorboard": None,
        }

    def test_off_on_local_without_project_and_against_a_fake_service(self) -> None:
        """No platform on the local backend, without gcp:project, or with apiEndpoint."""
        for kw in ({"backend": "local"}, {"project": None}, {"api_endpoint": "127.0.0.1:1"}):
            platform, issues = self.resolve({}, **kw)
            assert (
                issues == []
                and not platform.create
                and platform.job_defaults()
                == {
                    "service_account": None,
                    "output_root": None,
                    "image_repository": None,
                    "tensorboard": None,
                }
            )

    def test_unknown_key_with_suggestion(self) -> None:
        """A typo names its full key and the key meant."""
        _, issues = self.resolve({"bucket": {"force_destory": True}})
        (issue,) = issues
        assert issue.key == "vertex-training:platform.bucket.force_destory"
        assert "did you mean 'force_destroy'?" in issue.message

    def test_a_deployer_of_neither_form_is_one_issue(self) -> None:
        """deployer takes a member or a list of them: a number is one issue at its key."""
        _, issues = self.resolve({"deployer": 5})
        (issue,) = issues
        assert issue.key == "vertex-training:platform.deployer"
        assert issue.value == 5
        assert issue.message == "must be an IAM member or a list of them"

    def test_unknown_key_without_a_close_match_lists_the_keys(self) -> None:
        """Worded as a job's unknown keys are: the keys allowed there."""
        _, issues = self.resolve({"bucket": {"colour": "blue"}})
        (issue,) = issues
        assert issue.key == "vertex-training:platform.bucket.colour"
        assert issue.message.startswith("unknown key 'colour'; the keys allowed here are ")

    def test_bad_values_name_their_keys(self) -> None:
        """Types, bounds, IDs and members: each issue has its key, value and fix."""
        _, issues = self.resolve({"protect": "maybe", "bucket": {"staging_expiry_days": 0}})
        assert {i.key for i in issues} == {
            "vertex-training:platform.protect",
            "vertex-training:platform.bucket.staging_expiry_days",
        }
        _, issues = self.resolve(
            {
                "service_account": {"account_id": "SA"},
                "repository": {"id": "Bad_Repo"},
                "deployer": ["alice@acme.example", "allUsers"],
                "bucket": {"name": "my.google.bucket"},
            }
        )
        by_key = {i.key: i for i in issues}
        assert set(by_key) == {
            "vertex-training:platform.service_account.account_id",
            "vertex-training:platform.repository.id",
            "vertex-training:platform.deployer[0]",
            "vertex-training:platform.deployer[1]",
            "vertex-training:platform.bucket.name",
        }
        assert "user:alice@example.com" in by_key["vertex-training:platform.deployer[0]"].message

    def test_default_bucket_name_too_long(self) -> None:
        """A project and stack too long for a bucket name ask for bucket.name."""
        _, issues = self.resolve(
            {}, project="a-very-long-project-id-1234567", stack="staging-europe-west"
        )
        (issue,) = issues
        assert issue.key == "vertex-training:platform.bucket.name"
        assert "set vertex-training:platform.bucket.name" in issue.message

    def test_existing_only_when_disabled(self) -> None:
        """existing with the platform enabled is refused; a TensorBoard needs the platform."""
        _, issues = self.resolve({"existing": {"bucket": "b-1"}})
        assert [i.key for i in issues] == ["vertex-training:platform.existing"]
        _, issues = self.resolve({"enabled": False, "tensorboard": {"enabled": True}})
        assert [i.key for i in issues] == ["vertex-training:platform.tensorboard.enabled"]

    def test_vertex_api_role_only_for_jobs_that_need_it(self, tmp_path: Path) -> None:
        """TensorBoard or experiment jobs running as the platform account, on vertex."""
        image = {"image": "us-docker.pkg.dev/acme/train/img:1"}
        experiment = "projects/p/locations/us-central1/metadataStores/d/contexts/e"
        jobs = {
            "a": {**image, "tensorboard": True},
            "b": {**image, "experiment": experiment},
            "c": {**image, "tensorboard": True, "service_account": "own@p.iam.gserviceaccount.com"},
            "d": {**image, "tensorboard": True, "backend": "local"},
            "e": image,
        }
        keys = {
            "gcp:project": "acme",
            "gcp:region": "us-central1",
            "vertex-training:platform": {"tensorboard": {"enabled": True}},
            "vertex-training:jobs": jobs,
        }
        stack = load_stack(keys, "dev", project_dir=tmp_path)
        assert stack.all_issues() == []
        assert stack.jobs_calling_vertex_api() == ["a", "b"]
