"""The package's public API in a program of one's own (docs/library.md): typed arguments
that are the stack config's keys, mistakes named by argument path, values of other
resources (Outputs) not known in a preview, a platform's settings, and what a user's type
checker says of a program."""

from __future__ import annotations

import contextvars
import os
import runpy
import shutil
import subprocess
import sys
import textwrap
import typing
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pydantic import BaseModel

import vertex_training as vt
from tests.clients import configured
from vertex_training.errors import Issue
from vertex_training.resources import arguments
from vertex_training.resources.job_arguments import argument_issue, mark_unknowns
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.stackconfig import _access, _config, platform
from vertex_training.stackconfig.study import _config as study_config

REPO = Path(__file__).resolve().parent.parent

#: Each typed dictionary and the stack config model it mirrors, with the model's keys a
#: program does not give (the platform's ``enabled`` and ``existing``: a program makes
#: a TrainingPlatform or does not).
MIRRORS: list[tuple[type, type[BaseModel], frozenset[str]]] = [
    (arguments.TrainingJobArgs, _config.JobConfig, frozenset()),
    (arguments.PoolArgs, _config.PoolConfig, frozenset()),
    (arguments.AcceleratorArgs, _config.AcceleratorConfig, frozenset()),
    (arguments.DiskArgs, _config.DiskConfig, frozenset()),
    (arguments.ReservationAffinityArgs, _access.ReservationAffinityConfig, frozenset()),
    (arguments.NfsMountArgs, _access.NfsMountConfig, frozenset()),
    (arguments.LustreMountArgs, _access.LustreMountConfig, frozenset()),
    (arguments.DnsPeeringArgs, _access.DnsPeeringConfig, frozenset()),
    (arguments.PscInterfaceArgs, _access.PscInterfaceConfig, frozenset()),
    (arguments.FrameworkArgs, _config.FrameworkConfig, frozenset()),
    (arguments.PythonPackageArgs, _config.PythonPackageConfig, frozenset()),
    (arguments.ReductionServerArgs, _config.ReductionServerConfig, frozenset()),
    (arguments.SchedulingArgs, _config.SchedulingConfig, frozenset()),
    (arguments.WaitArgs, _config.WaitConfig, frozenset()),
    (arguments.RetryArgs, _config.RetryConfig, frozenset()),
    (arguments.PlatformArgs, platform.PlatformConfig, frozenset({"enabled", "existing"})),
    (arguments.BucketArgs, platform.BucketConfig, frozenset()),
    (arguments.RepositoryArgs, platform.RepositoryConfig, frozenset()),
    (arguments.ServiceAccountArgs, platform.ServiceAccountConfig, frozenset()),
    (arguments.TensorboardArgs, platform.TensorboardConfig, frozenset()),
    (arguments.StudyArgs, study_config.StudyConfig, frozenset()),
    (arguments.StudyMetricArgs, study_config.MetricConfig, frozenset()),
    (arguments.StudyParameterArgs, study_config.ParameterConfig, frozenset()),
    (arguments.ConditionalParametersArgs, study_config.ConditionalConfig, frozenset()),
    (arguments.EarlyStoppingArgs, study_config.EarlyStoppingConfig, frozenset()),
    (arguments.DecayCurveStoppingArgs, study_config.DecayCurveConfig, frozenset()),
    (arguments.MedianStoppingArgs, study_config.MedianConfig, frozenset()),
    (arguments.ConvexStoppingArgs, study_config.ConvexConfig, frozenset()),
]
#: Each choice the arguments type as a ``Literal``, and the stack config's own list.
CHOICES: list[tuple[Any, tuple[str, ...]]] = [
    (arguments.GoalName, study_config.GOALS),
    (arguments.ParameterTypeName, study_config.PARAMETER_TYPES),
    (arguments.ScaleName, study_config.SCALES),
    (arguments.AlgorithmName, study_config.ALGORITHMS),
    (arguments.MeasurementSelectionName, study_config.MEASUREMENT_SELECTIONS),
]


def keys_of(typed: Any) -> set[str]:
    """The keys of a typed dictionary."""
    return set(typed.__required_keys__) | set(typed.__optional_keys__)


def program_job(config: dict[str, Any], **stack: Any) -> dict[str, Any]:
    """The one input a program's TrainingJob registers (before check)."""
    settings = {"stack": "dev", "config_from": "program", "backend": "local", **stack}
    return {"job": {"name": "train", "config": config, "stack": settings}}


class TestTypedArguments:
    """The typed dictionaries are the stack config's keys, no more and no fewer."""

    @pytest.mark.parametrize(("typed", "model", "left_out"), MIRRORS)
    def test_the_keys_are_the_models(
        self, typed: type, model: type[BaseModel], left_out: frozenset[str]
    ) -> None:
        """Every key of the model is an argument, and every argument a key of the model."""
        assert keys_of(typed) == set(model.model_fields) - left_out

    @pytest.mark.parametrize(("typed", "model", "left_out"), MIRRORS)
    def test_required_keys_are_the_models(
        self, typed: type, model: type[BaseModel], left_out: frozenset[str]
    ) -> None:
        """An argument is required exactly where the model requires the key."""
        required = {name for name, field in model.model_fields.items() if field.is_required()}
        assert set(typed.__required_keys__) == required  # type: ignore[attr-defined]

    @pytest.mark.parametrize(("literal", "choices"), CHOICES)
    def test_the_choices_are_the_models(self, literal: Any, choices: tuple[str, ...]) -> None:
        """A study's choices, typed for a program, are those its check accepts."""
        assert typing.get_args(literal) == choices

    def test_the_check_can_fail(self) -> None:
        """A dictionary with a key the model lacks is seen (the comparison above can fail)."""

        class Extra(arguments.DiskArgs, total=False):
            typo: str

        assert keys_of(Extra) != set(_config.DiskConfig.model_fields)


class TestArgumentPaths:
    """A program's job names its mistakes by argument, not by stack config key."""

    def test_a_stack_config_key_becomes_an_argument_path(self) -> None:
        """``vertex-training:jobs.train.workers.machine`` reads ``job.workers.machine``."""
        issue = Issue("vertex-training:jobs.train.workers.machine", "n1-x", "unknown machine")
        assert argument_issue("train", issue) == Issue("job.workers.machine", "n1-x", issue.message)
        assert argument_issue("train", Issue("vertex-training:jobs.train", 1, "m")).key == "job"

    def test_other_keys_are_left_alone(self) -> None:
        """Another job's key, or a stack-wide key, is not this job's argument."""
        other = Issue("vertex-training:jobs.trainer.machine", "x", "m")
        assert argument_issue("train", other) == other
        assert argument_issue("train", Issue("gcp:region", "x", "m")).key == "gcp:region"

    def test_check_names_the_argument_the_value_and_the_fix(self) -> None:
        """The provider's check of a program's job: ``job.machine``, the value, a fix."""
        provider = configured(TrainingJobProvider())
        result = provider.check(
            {}, program_job({"image": "python:3.12", "machine": "n1-standrd-4"})
        )
        [failure] = result.failures
        assert failure.reason.startswith("job.machine: ")
        assert "'n1-standrd-4'" in failure.reason
        assert "n1-standard-4" in failure.reason  # what to write instead

    def test_a_stack_config_job_keeps_its_keys(self) -> None:
        """A stack config job's mistakes still name ``vertex-training:jobs.<name>...``."""
        provider = configured(TrainingJobProvider())
        props = program_job({"image": "python:3.12", "machine": "n1-standrd-4"})
        del props["job"]["stack"]["config_from"]
        [failure] = provider.check({}, props).failures
        assert failure.reason.startswith("vertex-training:jobs.train.machine: ")


class TestUnknownValues:
    """Values of the program's other resources that a preview does not know yet."""

    def test_unknowns_are_marked_at_any_depth(self) -> None:
        """Every unknown becomes the marker, and is reported found."""
        unknown = pulumi.output.Unknown()
        marked, found = mark_unknowns({"args": ["--data", unknown], "env": {"A": unknown}})
        assert found
        assert marked == {
            "args": ["--data", pulumi.runtime.rpc.UNKNOWN],
            "env": {"A": pulumi.runtime.rpc.UNKNOWN},
        }
        assert mark_unknowns({"args": ["a"]}) == ({"args": ["a"]}, False)

    def test_the_known_rest_is_still_checked(self) -> None:
        """A job with an unknown output directory and a wrong machine: the machine is
        reported at preview, the unknown value is not."""
        provider = configured(TrainingJobProvider())
        config = {
            "image": "python:3.12",
            "machine": "n1-standrd-4",
            "base_output_directory": pulumi.output.Unknown(),
        }
        failures = provider.check({}, program_job(config, backend="vertex")).failures
        assert [failure.reason.split(":")[0] for failure in failures] == ["job.machine"]

    def test_a_job_right_but_for_unknowns_passes(self) -> None:
        """Nothing is reported about a value that is not known yet."""
        provider = configured(TrainingJobProvider())
        config = {"image": "python:3.12", "args": ["--data", pulumi.output.Unknown()]}
        assert provider.check({}, program_job(config)).failures == []


class TestPlatformArguments:
    """A TrainingPlatform made from arguments."""

    def test_a_mistake_names_the_argument(self) -> None:
        """A bucket name Google refuses stops the program, named ``settings.bucket.name``."""
        from vertex_training.program.platform import platform_of

        with pytest.raises(pulumi.RunError) as raised:
            platform_of({"bucket": {"name": "Bad_Name"}}, project="acme", region="us-central1")
        assert "settings.bucket.name" in str(raised.value)
        with pytest.raises(pulumi.RunError) as raised:
            platform_of({}, project=None, region="us-central1")
        assert "project" in str(raised.value).split(":")[1]

    def test_a_platform_of_arguments_names_what_jobs_default_from(self) -> None:
        """The account, bucket and repository derive from the project and the stack."""
        from vertex_training.program.platform import platform_of

        made = platform_of({}, project="acme-ml", region="us-central1")
        assert made.create and made.project == "acme-ml" and made.region == "us-central1"
        assert made.service_account and made.service_account.endswith(
            "@acme-ml.iam.gserviceaccount.com"
        )
        assert made.output_root == f"gs://{made.bucket}"


TYPED_RIGHT = """
    import vertex_training as vt

    job = vt.TrainingJob(
        "train",
        vt.TrainingJobArgs(image="python:3.12", machine="n1-standard-4", wait="succeeded"),
        project="acme",
        region="us-central1",
    )
    vt.wait_for_jobs("wait", [job])
"""
TYPED_WRONG = """
    import vertex_training as vt

    vt.TrainingJobArgs(imagee="python:3.12")
    vt.TrainingJob("b", {"image": "x"}, backend="gpu-box")
"""


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> str:
    """What mypy --strict says of the two programs, checked in one run."""
    folder = tmp_path_factory.mktemp("typed")
    for name, text in (("right.py", TYPED_RIGHT), ("wrong.py", TYPED_WRONG)):
        (folder / name).write_text(textwrap.dedent(text))
    # The package's source, read as a user's mypy reads an installed package: its
    # types, not its own errors (the repository's virtualenv has it editable, through
    # an import hook that type checkers do not follow).
    (folder / "mypy.ini").write_text(
        "[mypy]\nstrict = True\n[mypy-vertex_training.*]\nignore_errors = True\n"
    )
    env = {**os.environ, "MYPYPATH": str(REPO / "provider")}
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--cache-dir",
            str(REPO / ".mypy_cache" / "user"),
            "right.py",
            "wrong.py",
        ],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return result.stdout + result.stderr


class TestTypeChecking:
    """A user's type checker reads the package's types (py.typed, typed arguments)."""

    def test_a_right_program_checks_and_a_wrong_key_and_value_are_errors(
        self, reported: str
    ) -> None:
        """The example program has no type errors under mypy --strict; a key no job has,
        and a backend that is no backend, are reported. One test, so that one mypy run
        (about 40 s of CPU) serves both: pytest-xdist's workers would each make the
        module's fixture."""
        assert "right.py" not in reported, reported
        assert "wrong.py" in reported, reported  # mypy did read the programs
        assert '"imagee"' in reported, reported
        assert '"backend"' in reported, reported


def test_the_public_names_resolve() -> None:
    """Every name of ``vertex_training.__all__`` loads."""
    for name in vt.__all__:
        assert getattr(vt, name) is not None


class TestWaitingForAProgramsJobs:
    """The waiter reads a program's job from its own entry, not from the stack config."""

    def test_an_entry_with_its_config_needs_no_stack_config(self) -> None:
        """The wait policy and location come from the entry's config and settings."""
        from vertex_training.resources.waiter import wait_entries

        waited = {
            "train": {
                "resource_name": "projects/acme/locations/europe-west4/customJobs/1",
                "until": "succeeded",
                "config": {"image": "python:3.12", "wait": {"until": "succeeded", "timeout": "2h"}},
                "stack": {"stack": "dev", "config_from": "program", "project": "acme"}
                | {"region": "europe-west4"},
            }
        }
        [entry] = wait_entries(waited, {}, {}, REPO).values()
        assert entry["wait"]["until"] == "succeeded"
        assert entry["wait"]["timeout_s"] == 2 * 3600
        assert entry["location"]["region"] == "europe-west4"

    def test_wait_until_reads_the_jobs_wait_key(self) -> None:
        """``wait: succeeded``, ``wait: {until: running}``; no wait, or a wrong one, is none."""
        from vertex_training.program.waiting import wait_until

        assert wait_until({"wait": "succeeded"}) == "succeeded"
        assert wait_until({"wait": {"until": "running"}}) == "running"
        assert wait_until({}) == "submitted"
        assert wait_until({"wait": "finished"}) == "submitted"


class TestAProgramsPlatformAndJobs:
    """A program of one's own under Pulumi's mocks (as tests/test_platform.py runs the
    repository's): a TrainingPlatform made from arguments, jobs on it."""

    PROGRAM = """
import vertex_training as vt

platform = vt.TrainingPlatform("ml", project="acme-ml", region="us-central1")
for name in ("a", "b"):
    vt.TrainingJob(
        name,
        vt.TrainingJobArgs(
            python_package={
                "package_path": "trainer",
                "module": "trainer.task",
                "framework": {"name": "sklearn", "version": "1.7"},
            },
            machine="n1-standard-4",
        ),
        platform=platform,
    )
vt.TrainingJob("c", {"image": "trainer:1"}, platform=platform, region="europe-west4")
"""

    @pytest.fixture
    def graph(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
        from pulumi.runtime import mocks as pulumi_mocks
        from pulumi.runtime.stack import run_pulumi_func
        from pulumi.runtime.sync_await import _sync_await

        from tests.test_platform import Graph, Mocks, RecordingMonitor

        shutil.copytree(REPO / "trainer", tmp_path / "trainer")
        program = tmp_path / "__main__.py"
        program.write_text(self.PROGRAM)
        monkeypatch.chdir(tmp_path)
        graph = Graph()

        def run() -> None:
            mocks = Mocks(graph)
            pulumi.runtime.set_all_config({}, [])
            pulumi_mocks.set_mocks(
                mocks, project="acme-ml", stack="dev", monitor=RecordingMonitor(mocks, graph)
            )
            _sync_await(run_pulumi_func(lambda: runpy.run_path(str(program))))

        contextvars.Context().run(run)
        return graph

    def test_jobs_take_the_platforms_places(self, graph: Any) -> None:
        """Each job's settings name the platform's project, region, account, bucket and
        repository; an argument (``region``) wins over the platform's."""
        from tests.test_platform import JOB

        settings = {r.name: r.inputs["job"]["stack"] for r in graph.of(JOB)}
        assert settings["a"]["project"] == "acme-ml"
        assert settings["a"]["region"] == "us-central1"
        assert settings["a"]["service_account"].endswith("@acme-ml.iam.gserviceaccount.com")
        assert settings["a"]["output_root"].startswith("gs://")
        assert settings["a"]["image_repository"].startswith("us-central1-docker.pkg.dev/acme-ml/")
        assert settings["a"]["config_from"] == "program"
        assert settings["c"]["region"] == "europe-west4"

    def test_a_package_directory_is_uploaded_once_for_every_job(self, graph: Any) -> None:
        """Two jobs of one package directory: one upload, named by its digest, which both
        jobs name in package_uris and wait for, with the platform's grants."""
        from tests.test_platform import BUCKET_OBJECT, IAM_TYPES, JOB

        [upload] = graph.of(BUCKET_OBJECT)
        jobs = {r.name: r for r in graph.of(JOB)}
        uri = f"gs://{upload.inputs['bucket']}/{upload.inputs['name']}"
        for name in ("a", "b"):
            package = jobs[name].inputs["job"]["config"]["python_package"]
            assert package["package_uris"] == [uri]
            assert "package_path" not in package
            assert upload.urn in jobs[name].dependencies
        grants = {r.urn for r in graph.registrations if r.type in IAM_TYPES}
        assert grants <= set(jobs["c"].dependencies)

    def test_the_jobs_check_as_registered(self, graph: Any) -> None:
        """The provider's check of what each job registered finds no mistake."""
        from tests.test_platform import JOB

        for registration in graph.of(JOB):
            result = configured(TrainingJobProvider()).check({}, registration.inputs)
            assert [f.reason for f in result.failures] == [], registration.name


class TestPackagesOfAProgramsJob:
    """A program's job with a package directory and no platform to upload it to."""

    def test_a_vertex_job_without_a_platform_says_what_to_give(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The directory is built, then refused, naming the argument and the two ways out."""
        from vertex_training.resources.job_arguments import with_packages

        shutil.copytree(REPO / "trainer", tmp_path / "trainer")
        monkeypatch.chdir(tmp_path)
        config = {"python_package": {"package_path": "trainer", "module": "trainer.task"}}
        with pytest.raises(pulumi.RunError) as raised:
            with_packages("train", config, "vertex", None)
        message = str(raised.value)
        assert "job.python_package.package_path" in message
        assert "platform=TrainingPlatform(...)" in message and "package_uris" in message

    def test_a_local_job_runs_the_built_sdist(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """On the local backend the sdist, named by its digest, is the package URI."""
        from vertex_training.resources.job_arguments import with_packages

        shutil.copytree(REPO / "trainer", tmp_path / "trainer")
        monkeypatch.chdir(tmp_path)
        config = {"python_package": {"package_path": "trainer", "module": "trainer.task"}}
        resolved, uploads = with_packages("train", config, "local", None)
        [uri] = resolved["python_package"]["package_uris"]
        assert uri.startswith(".state/packages/trainer-") and uri.endswith(".tar.gz")
        assert (tmp_path / uri).is_file()
        assert uploads == []
