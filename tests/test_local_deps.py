"""A Python package job's environment on the local backend, as Vertex AI installs it: the
package with its dependencies (from a shared wheelhouse, filled from the package index),
the executor image's framework and cloudml-hypertune, and nothing of the provider's own.

The jobs here install a second local distribution (made into a wheel by the test and put
in the wheelhouse), ``six`` (a tiny pure-Python distribution from the index) and, in one
test, scikit-learn 1.6 for the sklearn-cpu.1-6 image. Offline is simulated with an
unreachable index (PIP_INDEX_URL).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.packages import write_package
from vertex_training.api import states
from vertex_training.backends.base import JobStatus
from vertex_training.backends.local import LocalBackend, preflight
from vertex_training.backends.local._images import (
    HYPERTUNE,
    IMAGE_FAMILIES,
    image_framework,
    image_requirements,
)
from vertex_training.backends.local._venvs import (
    SETUPTOOLS_WITH_WHEELS,
    WHEELHOUSE_DIR,
    WHEELHOUSE_ENV,
    InstallError,
    StepFailed,
    VirtualenvCache,
)
from vertex_training.catalog.images import TRAINING_IMAGES
from vertex_training.stackconfig import StackSettings, parse_job

pytestmark = pytest.mark.timeout(240)

LOCAL = StackSettings(stack="local", backend="local")
PREBUILT = "us-docker.pkg.dev/vertex-ai/training/"
#: An index nothing answers on: pip fails at once, as on a machine with no network.
OFFLINE_INDEX = "http://127.0.0.1:9/"
#: Upper bound for a job (its virtualenv built, scikit-learn fetched) to end.
JOB_END_S = 120.0
#: Upper bound for a job whose dependency cannot be had to fail.
FAIL_FAST_S = 30.0
#: How the test builds a wheel of a local project: offline, with this interpreter's setuptools.
PIP_WHEEL = (sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation")
#: pip's framework distribution for each ``vertex_training.catalog.images`` framework name.
DISTRIBUTIONS = {
    "tensorflow": {"tensorflow", "tensorflow-cpu"},
    "pytorch": {"torch"},
    "sklearn": {"scikit-learn"},
    "xgboost": {"xgboost"},
}

USER_MODULE = """
    import importlib.util
    import hypertune
    import six
    from vtgreeting.words import WORDS
    # Nothing of the provider's environment: the job has its own.
    assert importlib.util.find_spec("pulumi") is None
    assert importlib.util.find_spec("pydantic") is None
    print(WORDS, "six", six.__version__, "hypertune", hypertune.__name__)
"""


def dependent_package(root: Path, name: str, dependencies: list[str], module: str) -> Path:
    """A setuptools project ``name`` declaring ``dependencies``, whose ``main`` is ``module``."""
    write_package(root, name, {"main": module})
    pyproject = root / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            'version = "0.1.0"\n', f'version = "0.1.0"\ndependencies = {dependencies!r}\n'
        )
    )
    return root


def job(package: Path, module: str, image: str | None = None) -> dict[str, object]:
    """A one-replica CustomJob body running ``module`` of ``package``."""
    spec: dict[str, object] = {"packageUris": [str(package)], "pythonModule": module}
    if image is not None:
        spec["executorImageUri"] = image
    pool = {"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1"}
    return {
        "displayName": module,
        "jobSpec": {"workerPoolSpecs": [pool | {"pythonPackageSpec": spec}]},
    }


def run(backend: LocalBackend, body: dict[str, object], limit_s: float = JOB_END_S) -> JobStatus:
    """Submit the job and wait for its end."""
    name = backend.submit(body).name
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        status = backend.get(name)
        assert status is not None
        if status.state in states.TERMINAL_STATES:
            return status
        time.sleep(0.2)
    raise AssertionError(f"{name} did not end within {limit_s} s")


def supervisor_log(backend: LocalBackend, status: JobStatus) -> str:
    return (backend.root / status.job_id / "logs" / "supervisor.log").read_text()


def replica_log(backend: LocalBackend, status: JobStatus) -> str:
    return (backend.root / status.job_id / "logs" / "workerpool0-0.log").read_text()


def fetched(log: str) -> bool:
    """Whether the supervisor filled the wheelhouse from the package index (`pip wheel`
    with an index timeout; the job's own packages are built with --no-index)."""
    return any(" wheel " in line and "--timeout" in line for line in log.splitlines())


@pytest.fixture(scope="module", autouse=True)
def own_wheelhouse() -> Iterator[None]:
    """These tests watch the wheelhouse beside each root: a machine-wide one named by
    WHEELHOUSE_ENV (as the framework tests use) is set aside while they run."""
    saved = os.environ.pop(WHEELHOUSE_ENV, None)
    yield
    if saved is not None:
        os.environ[WHEELHOUSE_ENV] = saved


#: What pip wheel prints when the setuptools it builds with predates bdist_wheel (70.1) and
#: no ``wheel`` package is installed: setuptools' own "invalid command" error.
NO_BDIST_WHEEL_OUTPUT = """\
Processing ./trainer
  Preparing metadata (setup.py) ... done
Building wheels for collected packages: trainer
  Building wheel for trainer (setup.py) ... error
  error: subprocess-exited-with-error
  usage: setup.py [global_opts] cmd1 [cmd1_opts] [cmd2 [cmd2_opts] ...]
     or: setup.py --help [cmd1 cmd2 ...]
  error: invalid command 'bdist_wheel'
  ERROR: Failed building wheel for trainer
"""


def test_a_setuptools_without_bdist_wheel_is_named_with_its_fix(tmp_path: Path) -> None:
    """A package built by a setuptools older than 70.1 fails the job saying so and how to
    fix it, not with pip's last lines alone."""
    package = write_package(tmp_path / "trainer", "trainer", {"task": "print(1)"})

    def pip(argv: list[str], _cwd: Path | None) -> str:
        raise StepFailed(argv, 1, NO_BDIST_WHEEL_OUTPUT)

    cache = VirtualenvCache(tmp_path / "_venvs", pip, lambda: None)
    with pytest.raises(InstallError) as raised:
        cache.python_for([package])
    message = str(raised.value)
    assert f"setuptools older than {SETUPTOOLS_WITH_WHEELS}" in message
    assert f"-m pip install 'setuptools>={SETUPTOOLS_WITH_WHEELS}'" in message
    assert not isinstance(raised.value, StepFailed)
    assert not list((tmp_path / "_venvs").glob("*/bin"))  # no half-built virtualenv kept


def test_a_machine_wide_wheelhouse_replaces_the_root_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WHEELHOUSE_ENV names the wheelhouse every root shares; unset, it is beside the root."""
    root = tmp_path / "local-jobs" / "_venvs"
    assert VirtualenvCache(root, print, print).wheelhouse == root.parent / WHEELHOUSE_DIR
    monkeypatch.setenv(WHEELHOUSE_ENV, str(tmp_path / "shared"))
    assert VirtualenvCache(root, print, print).wheelhouse == tmp_path / "shared"


@pytest.fixture(scope="module")
def greeting_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A second local distribution, made into a wheel here: no index has it."""
    project = write_package(
        tmp_path_factory.mktemp("vtgreeting"), "vtgreeting", {"words": "WORDS = 'hello'\n"}
    )
    out = tmp_path_factory.mktemp("greeting-wheel")
    subprocess.run(
        [*PIP_WHEEL, "--no-deps", "--no-index", "--wheel-dir", str(out), str(project)],
        check=True,
    )
    [wheel] = out.glob("*.whl")
    return wheel


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory, greeting_wheel: Path) -> LocalBackend:
    """A root whose wheelhouse starts with the local distribution's wheel alone."""
    backend = LocalBackend(tmp_path_factory.mktemp("local-jobs"))
    (backend.root / WHEELHOUSE_DIR).mkdir()
    shutil.copy(greeting_wheel, backend.root / WHEELHOUSE_DIR)
    return backend


@pytest.fixture(scope="module")
def first_job(
    backend: LocalBackend, tmp_path_factory: pytest.TempPathFactory
) -> tuple[JobStatus, float]:
    """The first job under the root: its dependencies are fetched. Its status, and seconds."""
    package = dependent_package(
        tmp_path_factory.mktemp("user"), "vtuser", ["vtgreeting", "six"], USER_MODULE
    )
    started = time.monotonic()
    status = run(backend, job(package, "vtuser.main"))
    return status, time.monotonic() - started


class TestDependencies:
    """A package's dependencies install as pip installs them on Vertex AI, cached by wheel."""

    def test_dependencies_come_from_the_wheelhouse_and_the_index(
        self, backend: LocalBackend, first_job: tuple[JobStatus, float]
    ) -> None:
        """A local dependency comes from the wheelhouse, six from the index, into it."""
        status, _ = first_job
        assert status.state == states.SUCCEEDED, status.error
        assert "hello six" in replica_log(backend, status)
        assert fetched(supervisor_log(backend, status))
        wheels = {path.name.split("-")[0] for path in (backend.root / WHEELHOUSE_DIR).glob("*.whl")}
        assert {"six", "vtgreeting", HYPERTUNE.replace("-", "_")} <= wheels
        assert "vtuser" not in wheels  # a job's own wheel keeps its name when its code changes

    def test_a_second_job_reuses_the_wheelhouse_offline(
        self,
        backend: LocalBackend,
        first_job: tuple[JobStatus, float],
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Another package with the same dependencies installs offline: no `pip wheel` step."""
        monkeypatch.setenv("PIP_INDEX_URL", OFFLINE_INDEX)
        package = dependent_package(
            tmp_path / "other", "vtother", ["vtgreeting", "six"], USER_MODULE
        )
        started = time.monotonic()
        status = run(backend, job(package, "vtother.main"))
        seconds = time.monotonic() - started
        assert status.state == states.SUCCEEDED, status.error
        log = supervisor_log(backend, status)
        assert "creating virtualenv" in log
        assert not fetched(log)
        again = run(backend, job(package, "vtother.main"))
        assert again.state == states.SUCCEEDED, again.error
        assert "creating virtualenv" not in supervisor_log(backend, again)
        print(f"first job {first_job[1]:.1f} s, cached wheels {seconds:.1f} s")

    def test_a_missing_dependency_fails_fast_naming_it(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Offline, with an empty wheelhouse, a dependency nobody has fails the job at once."""
        monkeypatch.setenv("PIP_INDEX_URL", OFFLINE_INDEX)
        backend = LocalBackend(tmp_path / "jobs")
        package = dependent_package(
            tmp_path / "needy", "vtneedy", ["vt-no-such-dist>=1"], "print('never')\n"
        )
        # A custom executor image adds nothing (not even cloudml-hypertune), so the
        # declared dependency is the one thing missing.
        body = job(package, "vtneedy.main", image="example.com/team/trainer:1")
        started = time.monotonic()
        status = run(backend, body, limit_s=FAIL_FAST_S)
        assert time.monotonic() - started < FAIL_FAST_S
        assert status.state == states.FAILED
        assert "vt-no-such-dist" in status.error
        assert f"Python {sys.version_info.major}.{sys.version_info.minor}" in status.error
        assert "could not be reached" in status.error

    def test_offline_a_package_with_nothing_missing_runs(
        self,
        backend: LocalBackend,
        first_job: tuple[JobStatus, float],
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Offline, a package with no dependencies runs on the cached cloudml-hypertune."""
        monkeypatch.setenv("PIP_INDEX_URL", OFFLINE_INDEX)
        fresh = LocalBackend(tmp_path / "jobs")
        (fresh.root / WHEELHOUSE_DIR).mkdir(parents=True)
        for wheel in (backend.root / WHEELHOUSE_DIR).glob("cloudml_hypertune-*.whl"):
            shutil.copy(wheel, fresh.root / WHEELHOUSE_DIR)
        package = write_package(tmp_path / "plain", "vtplain", {"main": "import hypertune\n"})
        status = run(fresh, job(package, "vtplain.main"))
        assert status.state == states.SUCCEEDED, status.error


class TestPrebuiltImages:
    """An executor image's framework, at the version it carries on Vertex AI."""

    @pytest.mark.parametrize(
        ("image", "requirement"),
        [
            ("tf-cpu.2-17.py310", "tensorflow-cpu==2.17.*"),
            ("tf-gpu.2-17.py310", "tensorflow==2.17.*"),
            ("pytorch-gpu.2-4.py310", "torch==2.4.*"),
            ("pytorch-xla.2-4.py310", "torch==2.4.*"),
            ("sklearn-cpu.1-6", "scikit-learn==1.6.*"),
            ("scikit-learn-cpu.0-23", "scikit-learn==0.23.*"),
            ("xgboost-cpu.2-1", "xgboost==2.1.*"),
            ("xgboost-gpu.1-6", "xgboost==1.6.*"),
        ],
    )
    def test_an_image_maps_to_its_framework(self, image: str, requirement: str) -> None:
        """The image's framework version, and cloudml-hypertune, as the image carries them."""
        assert image_requirements(f"{PREBUILT}{image}:latest") == [requirement, HYPERTUNE]

    def test_every_catalogued_image_maps_to_its_version(self) -> None:
        """Every image of vertex_training.catalog.images, on every registry host, maps to
        its version."""
        for image in TRAINING_IMAGES:
            for region in ("us-central1", "europe-west4", "asia-east1"):
                framework = image_framework(image.uri(region))
                assert framework is not None, image.name
                assert framework.version == image.version, image.name
                assert framework.distribution in DISTRIBUTIONS[image.framework], image.name
        assert set(IMAGE_FAMILIES.values()) == set().union(*DISTRIBUTIONS.values())

    def test_legacy_and_pinned_uris_map(self) -> None:
        """gcr.io/cloud-aiplatform images and digests are read the same way."""
        legacy = image_framework("gcr.io/cloud-aiplatform/training/tf-cpu.2-3:latest")
        assert legacy is not None and legacy.requirement == "tensorflow-cpu==2.3.*"
        pinned = image_framework(f"{PREBUILT}xgboost-cpu.2-1@sha256:{'a' * 64}")
        assert pinned is not None and pinned.requirement == "xgboost==2.1.*"

    def test_no_image_gets_hypertune_and_another_image_nothing(self) -> None:
        """No executor image: cloudml-hypertune; a custom or unknown image: not emulated."""
        assert image_requirements(None) == [HYPERTUNE]
        assert image_requirements("us-docker.pkg.dev/my-project/repo/trainer:1") is None
        assert image_requirements(f"{PREBUILT}mystery-cpu.1-0:latest") is None
        assert (
            image_requirements("us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-17:latest") is None
        )

    def test_a_custom_executor_image_is_reported_at_preview(self, tmp_path: Path) -> None:
        """An image with no framework mapping is an issue at its executor_image key."""
        package = write_package(tmp_path / "p", "vtp", {"main": ""})
        config = {
            "python_package": {
                "package_uris": [str(package)],
                "module": "vtp.main",
                "executor_image": "us-docker.pkg.dev/my-project/repo/trainer:1",
            },
            "workers": {"replicas": 2},
        }
        body = parse_job("train", config, LOCAL).request_body()
        [issue] = preflight(body, "vertex-training:jobs.train", base_dir=tmp_path)
        assert issue.key == "vertex-training:jobs.train.python_package.executor_image"
        assert issue.value == "us-docker.pkg.dev/my-project/repo/trainer:1"
        assert "prebuilt training image" in issue.message

    def test_a_framework_image_passes_the_preview(self, tmp_path: Path) -> None:
        """framework: picks a prebuilt image (here one newer than the catalogue), which maps."""
        package = write_package(tmp_path / "p", "vtp", {"main": ""})
        config = {
            "python_package": {
                "package_uris": [str(package)],
                "module": "vtp.main",
                "framework": {"name": "xgboost", "version": "2.2"},
            },
        }
        body = parse_job("train", config, LOCAL).request_body()
        image = body["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["executorImageUri"]
        assert image_requirements(image) == ["xgboost==2.2.*", HYPERTUNE]
        assert preflight(body, "vertex-training:jobs.train", base_dir=tmp_path) == []

    def test_the_image_framework_is_installed(self, backend: LocalBackend, tmp_path: Path) -> None:
        """A job on sklearn-cpu.1-6 imports scikit-learn 1.6, from the index (about 65 MB)."""
        module = textwrap.dedent(
            """
            import sklearn
            print("sklearn", sklearn.__version__)
            """
        )
        package = write_package(tmp_path / "sk", "vtsk", {"main": module})
        status = run(backend, job(package, "vtsk.main", image=f"{PREBUILT}sklearn-cpu.1-6:latest"))
        assert status.state == states.SUCCEEDED, status.error
        assert "sklearn 1.6." in replica_log(backend, status)
