"""Unit tests of vertex_training.catalog.images (the prebuilt image catalogue) and a job's framework
keys."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest

from vertex_training.catalog import images
from vertex_training.catalog.images import ImageChoice, ImageRefusal, pick_image
from vertex_training.catalog.runtimes import pick_runtime_image
from vertex_training.errors import Issue, SpecError
from vertex_training.stackconfig import JobSpec, StackSettings, parse_job

PREFIX = "vertex-training:jobs.mnist"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
PACKAGE = {"package_uris": ["gs://my-bucket/trainer-0.1.tar.gz"], "module": "trainer.task"}
#: Dates before the end of support of the rows they are used with (and not within 90 days).
EARLY_2023 = datetime.date(2023, 1, 2)
EARLY_2025 = datetime.date(2025, 1, 2)
US = "us-central1"


def choose(
    framework: str,
    version: str,
    python: str | None = None,
    *,
    kind: str = images.CPU,
    region: str = US,
    today: datetime.date = EARLY_2025,
) -> ImageChoice:
    """A pick that must succeed."""
    choice = pick_image(framework, version, python, kind=kind, region=region, today=today)
    assert isinstance(choice, ImageChoice), choice
    return choice


def refuse(
    framework: str,
    version: str,
    python: str | None = None,
    *,
    kind: str = images.CPU,
    today: datetime.date = EARLY_2025,
) -> ImageRefusal:
    """A pick that must be refused."""
    choice = pick_image(framework, version, python, kind=kind, region=US, today=today)
    assert isinstance(choice, ImageRefusal), choice
    return choice


def issues_of(raw: dict[str, Any], today: datetime.date = EARLY_2025) -> list[Issue]:
    """The issues parse_job reports for ``raw``."""
    with pytest.raises(SpecError) as caught:
        parse_job("mnist", raw, STACK, today=today)
    return caught.value.issues


def job(raw: dict[str, Any], today: datetime.date = EARLY_2025) -> JobSpec:
    """A job that must be valid."""
    return parse_job("mnist", raw, STACK, today=today)


class TestCatalogue:
    """The table itself: its source, date and consistency."""

    def test_source_and_date(self) -> None:
        """The module names its source and date, and says which rows are verified or estimated."""
        doc = images.__doc__ or ""
        assert images.CATALOGUE_SOURCE == (
            "Google Cloud docs: Prebuilt containers for serverless training"
        )
        assert images.CATALOGUE_DATE == "2026-11-23"
        assert images.CATALOGUE_DATE in doc
        assert "Prebuilt containers for serverless training" in doc
        assert "Verified" in doc and "Estimated" in doc

    def test_every_row_has_its_source(self) -> None:
        """Every row names the page it was read from and the day, no later than the catalogue."""
        compiled = datetime.date.fromisoformat(images.CATALOGUE_DATE)
        for image in images.TRAINING_IMAGES:
            assert image.source is not None, image.name
            assert image.source.url.startswith("https://docs.cloud.google.com/"), image.name
            assert image.source.read_on <= compiled, image.name
        assert {i.source for i in images.TRAINING_IMAGES} == set(images.SOURCES.values())

    def test_every_row_verified(self) -> None:
        """Every catalogued row is marked verified (estimates are never stored)."""
        assert all(image.verified for image in images.TRAINING_IMAGES)

    def test_frameworks(self) -> None:
        """The four frameworks of the issue are catalogued, each with CPU and GPU images."""
        assert set(images.FRAMEWORK_NAMES) == {"tensorflow", "pytorch", "sklearn", "xgboost"}
        for framework in images.FRAMEWORK_NAMES:
            rows = [i for i in images.TRAINING_IMAGES if i.framework == framework]
            assert any(images.CPU in i.kinds for i in rows), framework
            assert any(images.GPU in i.kinds for i in rows), framework

    def test_dates_in_order(self) -> None:
        """End of availability never comes before end of support."""
        for image in images.TRAINING_IMAGES:
            assert image.end_of_availability >= image.end_of_support, image.name

    def test_names_follow_the_pattern(self) -> None:
        """Names are <framework>-<kind>.<MAJOR>-<MINOR>[.pyXYZ|.cpXYZ] with the row's version."""
        pattern = re.compile(r"[a-z-]+\.(?P<version>\d+-\d+)(\.(py|cp)(?P<python>\d+))?")
        for image in images.TRAINING_IMAGES:
            match = pattern.fullmatch(image.name)
            assert match, image.name
            assert match["version"] == image.version.replace(".", "-"), image.name
            if match["python"]:
                assert match["python"] == image.python.replace(".", ""), image.name

    def test_unique_rows(self) -> None:
        """No two rows share a framework, version, Python and kind."""
        seen: set[tuple[str, str, str, str]] = set()
        for image in images.TRAINING_IMAGES:
            for kind in image.kinds:
                key = (image.framework, image.version, image.python, kind)
                assert key not in seen, key
                seen.add(key)

    def test_legacy_runtimes_have_images(self) -> None:
        """Every legacy runtime maps to a catalogued TensorFlow image for each of its Pythons
        that Vertex AI serves, with its reasoning written down."""
        for runtime in images.LEGACY_RUNTIMES.values():
            assert runtime.reasoning
            tf = [
                i
                for i in images.TRAINING_IMAGES
                if i.framework == "tensorflow" and i.version == runtime.tensorflow
            ]
            assert any(i.python == "3.7" for i in tf), runtime.runtime_version


class TestRegistryHost:
    """Region -> registry host."""

    @pytest.mark.parametrize(
        ("region", "host"),
        [
            ("us-central1", "us-docker.pkg.dev"),
            ("us-east4", "us-docker.pkg.dev"),
            ("northamerica-northeast1", "us-docker.pkg.dev"),
            ("southamerica-east1", "us-docker.pkg.dev"),
            ("europe-west4", "europe-docker.pkg.dev"),
            ("me-west1", "europe-docker.pkg.dev"),
            ("africa-south1", "europe-docker.pkg.dev"),
            ("asia-northeast1", "asia-docker.pkg.dev"),
            ("australia-southeast1", "asia-docker.pkg.dev"),
        ],
    )
    def test_host(self, region: str, host: str) -> None:
        """Each region family uses its multi-region host."""
        assert images.registry_host(region) == host

    def test_uri_uses_host(self) -> None:
        """The image URI is <host>/vertex-ai/training/<name>:latest."""
        choice = choose("tensorflow", "2.17", region="asia-east1")
        assert choice.uri == "asia-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest"


class TestPickImage:
    """One case per framework and accelerator kind, then the refusals."""

    @pytest.mark.parametrize(
        ("framework", "version", "kind", "name"),
        [
            ("tensorflow", "2.17", images.CPU, "tf-cpu.2-17.py310"),
            ("tensorflow", "2.17", images.GPU, "tf-gpu.2-17.py310"),
            ("tensorflow", "2.15", images.TPU, "tf-tpu.2-15.cp310"),
            ("pytorch", "2.4", images.CPU, "pytorch-xla.2-4.py310"),
            ("pytorch", "2.4", images.GPU, "pytorch-gpu.2-4.py310"),
            ("pytorch", "1.13", images.CPU, "pytorch-gpu.1-13.py310"),
            ("sklearn", "1.6", images.CPU, "sklearn-cpu.1-6"),
            ("sklearn", "1.6", images.GPU, "sklearn-gpu.1-6"),
            ("xgboost", "2.1", images.CPU, "xgboost-cpu.2-1"),
            ("xgboost", "2.1", images.GPU, "xgboost-gpu.2-1"),
        ],
    )
    def test_image(self, framework: str, version: str, kind: str, name: str) -> None:
        """Each framework's image for CPU, GPU (and TPU where one exists)."""
        today = datetime.date(2024, 1, 2)
        choice = choose(framework, version, kind=kind, today=today)
        assert choice.image.name == name
        assert choice.uri == f"us-docker.pkg.dev/vertex-ai/training/{name}:latest"

    def test_newest_python_by_default(self) -> None:
        """Without python, the newest Python image of the version is picked."""
        assert choose("tensorflow", "2.11", today=EARLY_2023).image.name == "tf-cpu.2-11.py310"

    def test_python_picks_the_image(self) -> None:
        """python: "3.7" picks the Python 3.7 image of the same version."""
        choice = choose("tensorflow", "2.11", "3.7", today=EARLY_2023)
        assert choice.image.name == "tf-cpu.2-11"

    def test_python_not_offered(self) -> None:
        """A Python the version has no image for is refused with the ones it has."""
        refusal = refuse("tensorflow", "2.11", "3.9", today=EARLY_2023)
        assert refusal.field == "python"
        assert "Python 3.10 or 3.7" in refusal.message

    def test_no_tpu_image(self) -> None:
        """scikit-learn has no TPU image: refused, naming what exists."""
        refusal = refuse("sklearn", "1.6", kind=images.TPU)
        assert "has no TPU prebuilt training image" in refusal.message

    def test_unknown_version(self) -> None:
        """A version Vertex AI never published (TensorFlow 2.10) is refused with the versions
        Vertex AI still runs (only those: an older one would be refused next)."""
        refusal = refuse("tensorflow", "2.10")
        assert refusal.field == "version"
        assert refusal.message.startswith(
            "TensorFlow 2.10 has no Vertex AI prebuilt training image; versions Vertex AI still "
            "runs: 2.17, 2.16, 2.15, 2.14, 2.13, 2.12"
        )
        assert "2.11" not in refusal.message

    @pytest.mark.parametrize(
        ("framework", "version", "kind", "name"),
        [
            ("tensorflow", "2.19", images.CPU, "tf-cpu.2-19.py310"),
            ("pytorch", "2.6", images.GPU, "pytorch-gpu.2-6.py310"),
            ("sklearn", "1.7", images.CPU, "sklearn-cpu.1-7"),
            ("xgboost", "3.0", images.GPU, "xgboost-gpu.3-0"),
        ],
    )
    def test_newer_version_estimated(
        self, framework: str, version: str, kind: str, name: str
    ) -> None:
        """A version newer than the catalogue gets the pattern's name and a warning."""
        choice = choose(framework, version, kind=kind, today=datetime.date(2026, 11, 21))
        assert choice.image.name == name
        assert not choice.image.verified
        assert "newer than this package's catalogue" in choice.warnings[0]

    def test_newer_version_other_python(self) -> None:
        """The pattern carries the Python for TensorFlow (py311)."""
        assert choose("tensorflow", "2.19", "3.11").image.name == "tf-cpu.2-19.py311"

    def test_newer_version_unknown_python(self) -> None:
        """scikit-learn names carry no Python: another Python than the newest row's is refused."""
        assert refuse("sklearn", "1.7", "3.11").field == "version"

    def test_newer_version_tpu(self) -> None:
        """TPU names follow no pattern: an uncatalogued TPU version is refused."""
        assert refuse("tensorflow", "2.19", kind=images.TPU).field == "version"

    @pytest.mark.parametrize("version", ["2", "2.17.1", "latest", "2.x"])
    def test_version_format(self, version: str) -> None:
        """Versions are MAJOR.MINOR."""
        assert "MAJOR.MINOR" in refuse("tensorflow", version).message

    def test_python_format(self) -> None:
        """Python versions look like 3.10."""
        assert refuse("tensorflow", "2.17", "py310").field == "python"

    def test_unknown_framework(self) -> None:
        """Only the catalogued frameworks."""
        assert refuse("jax", "0.4").field == "name"


class TestEndOfSupport:
    """Refused only past the end of availability; warned past, or within 90 days of, the end of
    support (injected today)."""

    END = datetime.date(2025, 7, 11)  # TensorFlow 2.17's end of patch and support
    GONE = datetime.date(2026, 7, 11)  # TensorFlow 2.17's end of availability
    DAY = datetime.timedelta(days=1)

    def test_past_end_of_support_warned(self) -> None:
        """The day after the end of support: accepted, warned with the date and the newest
        supported version."""
        choice = choose("tensorflow", "2.16", today=datetime.date(2025, 6, 29))
        (warning,) = choice.warnings
        assert "reached end of support on 2025-06-28" in warning
        assert "Vertex AI runs them until 2026-06-28 (in 364 days)" in warning
        assert "the newest supported TensorFlow version is 2.17" in warning
        assert "supported until 2025-07-11" in warning

    def test_past_end_of_support_none_supported(self) -> None:
        """Past every end of support, the warning says none is supported and where to look."""
        choice = choose("tensorflow", "2.17", today=self.END + self.DAY)
        assert (
            "no catalogued TensorFlow CPU image is still supported on 2025-07-12"
            in (choice.warnings[0])
        )

    def test_available_on_the_last_day(self) -> None:
        """On the end of availability date itself: accepted, warned."""
        choice = choose("tensorflow", "2.17", today=self.GONE)
        assert "Vertex AI runs them until 2026-07-11 (in 0 days)" in choice.warnings[0]

    def test_refused_past_end_of_availability(self) -> None:
        """The day after the end of availability: refused, naming the date."""
        refusal = refuse("tensorflow", "2.17", today=self.GONE + self.DAY)
        assert refusal.field == "version"
        assert "reached end of availability on 2026-07-11" in refusal.message
        assert "Vertex AI no longer runs them (end of support was 2025-07-11)" in refusal.message
        assert refusal.retired

    def test_nearest_available_named(self) -> None:
        """The refusal names the nearest newer version Vertex AI still runs, and what to write."""
        refusal = refuse("tensorflow", "2.11", today=datetime.date(2025, 7, 1))
        assert "move to TensorFlow 2.13, the nearest version Vertex AI still runs" in (
            refusal.message
        )
        assert "tf-cpu.2-13.py310 until 2025-07-05" in refusal.message
        assert 'write version: "2.13"' in refusal.message

    def test_nearest_is_older_when_nothing_newer_runs(self) -> None:
        """With no newer version available, the newest older one still running is named."""
        image = images.nearest_available("pytorch", "2.4", images.CPU, datetime.date(2026, 8, 1))
        assert image is not None and image.name == "pytorch-xla.2-2.py310"

    def test_none_available(self) -> None:
        """When nothing in the catalogue still runs, the refusal says what to do."""
        refusal = refuse("tensorflow", "2.17", today=datetime.date(2026, 11, 23))
        assert "no catalogued TensorFlow CPU image is still available on 2026-11-23" in (
            refusal.message
        )
        assert "the newest catalogued, 2.17, ended on 2026-07-11" in refusal.message
        assert "this package's catalogue was compiled 2026-11-23" in refusal.message
        assert images.CATALOGUE_URL in refusal.message

    def test_other_refusals_are_not_retired(self) -> None:
        """Only end-of-availability refusals count as retired images."""
        assert not refuse("tensorflow", "2.10").retired
        assert not refuse("tensorflow", "2.17", "3.9").retired

    def test_warned_on_the_day(self) -> None:
        """On the end of support date itself: accepted, with a warning."""
        choice = choose("tensorflow", "2.17", today=self.END)
        assert "in 0 days" in choice.warnings[0]

    def test_warned_at_90_days(self) -> None:
        """90 days before: warned."""
        choice = choose("tensorflow", "2.17", today=self.END - datetime.timedelta(days=90))
        assert "reach end of support on 2025-07-11 (in 90 days" in choice.warnings[0]

    def test_quiet_at_91_days(self) -> None:
        """91 days before: no warning."""
        choice = choose("tensorflow", "2.17", today=self.END - datetime.timedelta(days=91))
        assert choice.warnings == ()

    def test_dates_per_row(self) -> None:
        """PyTorch 2.2's CPU image outlives its GPU image (Oct 2026 vs Jan 2026 availability)."""
        today = datetime.date(2026, 6, 1)
        cpu = choose("pytorch", "2.2", today=today)
        assert "runs them until 2026-10-23" in cpu.warnings[0]
        assert refuse("pytorch", "2.2", kind=images.GPU, today=today).field == "version"


class TestCatalogueAge:
    """A catalogue compiled more than six months before today is warned about."""

    COMPILED = datetime.date.fromisoformat(images.CATALOGUE_DATE)

    def test_fresh(self) -> None:
        """Six months to the day after the compile date: no warning."""
        assert images.catalogue_age_warning(datetime.date(2027, 5, 23)) is None
        assert images.catalogue_age_warning(self.COMPILED) is None

    def test_stale(self) -> None:
        """The day after: a warning naming the compile date and where to refresh it."""
        warning = images.catalogue_age_warning(datetime.date(2027, 5, 24))
        assert warning is not None
        assert "compiled on 2026-11-23, more than 6 months before 2027-05-24" in warning
        assert images.CATALOGUE_URL in warning

    def test_month_end(self) -> None:
        """Six months after August 31 is the last day of February."""
        assert images._add_months(datetime.date(2026, 8, 31), 6) == datetime.date(2027, 2, 28)


class TestLegacyRuntimes:
    """runtimeVersion (+ pythonVersion) -> the prebuilt image, case by case."""

    @pytest.mark.parametrize(
        ("runtime", "cpu", "gpu"),
        [
            ("1.15", "tf-cpu.1-15", "tf-gpu.1-15"),
            ("2.1", "tf-cpu.2-1", "tf-gpu.2-1"),
            ("2.2", "tf-cpu.2-2", "tf-gpu.2-2"),
            ("2.3", "tf-cpu.2-3", "tf-gpu.2-3"),
            ("2.4", "tf-cpu.2-4", "tf-gpu.2-4"),
            ("2.5", "tf-cpu.2-5", "tf-gpu.2-5"),
            ("2.6", "tf-cpu.2-6", "tf-gpu.2-6"),
            ("2.7", "tf-cpu.2-7", "tf-gpu.2-7"),
            ("2.8", "tf-cpu.2-8", "tf-gpu.2-8"),
            ("2.9", "tf-cpu.2-9", "tf-gpu.2-9"),
            ("2.10", "tf-cpu.2-11", "tf-gpu.2-11"),
            ("2.11", "tf-cpu.2-11", "tf-gpu.2-11"),
        ],
    )
    def test_runtime(self, runtime: str, cpu: str, gpu: str) -> None:
        """Each runtime version runs on the TensorFlow Python 3.7 image of its version."""
        for kind, name in ((images.CPU, cpu), (images.GPU, gpu)):
            choice = pick_runtime_image(runtime, "3.7", kind=kind, region=US, today=EARLY_2023)
            assert isinstance(choice, ImageChoice), choice
            assert choice.image.name == name
            assert choice.image.python == "3.7"

    def test_default_python_2x(self) -> None:
        """Runtime 2.x without pythonVersion ran Python 3.7."""
        choice = pick_runtime_image("2.8", None, kind=images.CPU, region=US, today=EARLY_2023)
        assert isinstance(choice, ImageChoice) and choice.image.name == "tf-cpu.2-8"

    def test_2_10_says_why(self) -> None:
        """Runtime 2.10 (no Vertex image) says why it gets 2.11."""
        choice = pick_runtime_image("2.10", None, kind=images.CPU, region=US, today=EARLY_2023)
        assert isinstance(choice, ImageChoice)
        assert any("never published a TensorFlow 2.10" in w for w in choice.warnings)

    def test_sklearn_note(self) -> None:
        """Every runtime choice reminds that scikit-learn and XGBoost have their own images."""
        choice = pick_runtime_image("2.11", None, kind=images.CPU, region=US, today=EARLY_2023)
        assert isinstance(choice, ImageChoice)
        assert "scikit-learn and XGBoost" in choice.warnings[0]

    def test_1_15_default_python_2(self) -> None:
        """Runtime 1.15 without pythonVersion ran Python 2.7, which Vertex AI has no image for."""
        refusal = pick_runtime_image("1.15", None, kind=images.CPU, region=US, today=EARLY_2023)
        assert isinstance(refusal, ImageRefusal)
        assert refusal.field == "python_version"
        assert "Python 2.7 (its default when pythonVersion is not set)" in refusal.message

    def test_python_not_offered(self) -> None:
        """pythonVersion 3.5 was never offered by runtime 2.11."""
        refusal = pick_runtime_image("2.11", "3.5", kind=images.CPU, region=US, today=EARLY_2023)
        assert isinstance(refusal, ImageRefusal) and refusal.field == "python_version"

    def test_no_tpu_image(self) -> None:
        """Runtime 2.11 on a TPU: Vertex AI has no TensorFlow 2.11 TPU image."""
        refusal = pick_runtime_image("2.11", None, kind=images.TPU, region=US, today=EARLY_2023)
        assert isinstance(refusal, ImageRefusal) and refusal.field == "runtime_version"
        assert (
            "no TPU prebuilt training image" in refusal.message and "2.15, 2.12" in refusal.message
        )

    def test_unknown_runtime(self) -> None:
        """Runtime 1.14 has no Vertex AI image: refused with the runtimes that do."""
        refusal = pick_runtime_image("1.14", None, kind=images.CPU, region=US, today=EARLY_2023)
        assert isinstance(refusal, ImageRefusal) and refusal.field == "runtime_version"
        assert "1.15, 2.1" in refusal.message

    def test_end_of_support_warned(self) -> None:
        """Runtime 2.11's image past its end of support but still run: warned, not refused."""
        today = datetime.date(2024, 1, 2)
        choice = pick_runtime_image("2.11", None, kind=images.CPU, region=US, today=today)
        assert isinstance(choice, ImageChoice)
        assert "reached end of support on 2023-11-15" in choice.warnings[-1]
        assert "Vertex AI runs them until 2024-11-15" in choice.warnings[-1]

    def test_end_of_availability(self) -> None:
        """Runtime 2.11's image is gone in 2026: refused by runtime_version, advising framework."""
        today = datetime.date(2026, 11, 23)
        refusal = pick_runtime_image("2.11", None, kind=images.CPU, region=US, today=today)
        assert isinstance(refusal, ImageRefusal) and refusal.field == "runtime_version"
        assert "reached end of availability on 2024-11-15" in refusal.message
        assert "replace runtime_version with framework: {name: tensorflow" in refusal.message

    def test_nearest_available_as_framework(self) -> None:
        """The advice names the nearest TensorFlow version still run, as a framework: key."""
        today = datetime.date(2025, 7, 1)
        refusal = pick_runtime_image("2.11", None, kind=images.GPU, region=US, today=today)
        assert isinstance(refusal, ImageRefusal)
        assert 'framework: {name: tensorflow, version: "2.13"}' in refusal.message


class TestFrameworkKeys:
    """framework / runtime_version on a job: the image filled in by parse_job."""

    def test_container_job(self) -> None:
        """A job with framework and no python_package gets image."""
        spec = job({"framework": {"name": "tensorflow", "version": "2.17"}})
        assert spec.primary.image == "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest"

    def test_python_package_job(self) -> None:
        """With python_package, framework fills executor_image."""
        spec = job({"python_package": PACKAGE, "framework": {"name": "sklearn", "version": "1.6"}})
        package = spec.primary.python_package
        assert package is not None
        assert (
            package.executor_image == "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest"
        )

    def test_framework_inside_python_package(self) -> None:
        """python_package.framework works the same (docs/config-shape.md)."""
        raw = {"python_package": {**PACKAGE, "framework": {"name": "xgboost", "version": "2.1"}}}
        package = job(raw).primary.python_package
        assert package is not None and package.executor_image is not None
        assert package.executor_image.endswith("/xgboost-cpu.2-1:latest")

    def test_gpu_from_accelerator(self) -> None:
        """An NVIDIA accelerator picks the GPU image."""
        raw = {
            "framework": {"name": "pytorch", "version": "2.4"},
            "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
        }
        assert job(raw).primary.image is not None
        assert "pytorch-gpu.2-4.py310" in str(job(raw).primary.image)

    def test_gpu_from_machine(self) -> None:
        """An accelerator-optimized machine (g2, built-in L4) picks the GPU image."""
        raw = {"framework": {"name": "tensorflow", "version": "2.17"}, "machine": "g2-standard-8"}
        assert "tf-gpu.2-17" in str(job(raw).primary.image)

    def test_gpu_from_workers(self) -> None:
        """GPU workers that run the same program make it the GPU image for all pools."""
        raw = {
            "python_package": PACKAGE,
            "framework": {"name": "tensorflow", "version": "2.17"},
            "workers": {"replicas": 2, "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1}},
        }
        spec = job(raw)
        for pool in spec.worker_pools:
            assert pool is not None and pool.python_package is not None
            assert "tf-gpu.2-17" in str(pool.python_package.executor_image)

    def test_tpu_machine(self) -> None:
        """A TPU machine picks the TPU image."""
        raw = {
            "framework": {"name": "tensorflow", "version": "2.15"},
            "machine": "cloud-tpu",
            "accelerator": {"type": "TPU_V3", "count": 8},
        }
        assert "tf-tpu.2-15.cp310" in str(job(raw, today=datetime.date(2024, 1, 2)).primary.image)

    def test_region_host(self) -> None:
        """A europe-west4 job pulls from europe-docker.pkg.dev."""
        raw = {"framework": {"name": "tensorflow", "version": "2.17"}, "region": "europe-west4"}
        assert str(job(raw).primary.image).startswith("europe-docker.pkg.dev/vertex-ai/training/")

    def test_pool_own_framework(self) -> None:
        """A pool's own python_package.framework is resolved for that pool's accelerators."""
        raw = {
            "image": "us-docker.pkg.dev/my-project/trainers/mnist:1",
            "evaluators": {
                "python_package": {**PACKAGE, "framework": {"name": "sklearn", "version": "1.6"}},
                "accelerator": None,
            },
        }
        evaluator = job(raw).worker_pools[3]
        assert evaluator is not None and evaluator.python_package is not None
        assert str(evaluator.python_package.executor_image).endswith("/sklearn-cpu.1-6:latest")

    def test_runtime_version(self) -> None:
        """runtime_version + python_version pick the TensorFlow image, with the sklearn note."""
        raw = {"python_package": PACKAGE, "runtime_version": "2.11", "python_version": "3.7"}
        spec = job(raw, today=EARLY_2023)
        assert spec.primary.python_package is not None
        assert str(spec.primary.python_package.executor_image).endswith("/tf-cpu.2-11:latest")
        assert spec.warnings[0].startswith(f"{PREFIX}.runtime_version: runtime version 2.11")

    def test_end_of_availability_refused(self) -> None:
        """Past end of availability: an issue on framework.version naming the version to use."""
        raw = {"framework": {"name": "tensorflow", "version": "2.15"}}
        issues = issues_of(raw, today=datetime.date(2025, 11, 15))
        assert [i.key for i in issues] == [f"{PREFIX}.framework.version"]
        assert "reached end of availability on 2025-11-14" in issues[0].message
        assert 'write version: "2.16"' in issues[0].message

    def test_end_of_support_warned(self) -> None:
        """Past end of support, before end of availability: a warning on framework.version."""
        spec = job({"framework": {"name": "tensorflow", "version": "2.15"}})
        (warning,) = spec.warnings
        assert warning.startswith(f"{PREFIX}.framework.version: TensorFlow 2.15")
        assert "reached end of support on 2024-11-14" in warning
        assert "the newest supported TensorFlow version is 2.17" in warning

    def test_stale_catalogue_warned(self) -> None:
        """A job using a catalogue over six months old gets one warning on its framework key."""
        raw = {"framework": {"name": "tensorflow", "version": "2.19"}}
        spec = job(raw, today=datetime.date(2027, 6, 1))
        stale = [w for w in spec.warnings if "was compiled on 2026-11-23" in w]
        assert len(stale) == 1 and stale[0].startswith(f"{PREFIX}.framework.version: ")

    def test_stale_catalogue_once_per_job(self) -> None:
        """Several catalogue keys in one job: still one warning, on the first."""
        raw = {
            "python_package": {**PACKAGE, "framework": {"name": "tensorflow", "version": "2.19"}},
            "evaluators": {
                "python_package": {**PACKAGE, "framework": {"name": "sklearn", "version": "1.7"}}
            },
        }
        spec = job(raw, today=datetime.date(2027, 6, 1))
        stale = [w for w in spec.warnings if "was compiled on" in w]
        assert len(stale) == 1 and stale[0].startswith(f"{PREFIX}.python_package.framework.")

    def test_no_catalogue_no_age_warning(self) -> None:
        """A job that names its image does not use the catalogue: no age warning."""
        spec = job({"image": "us-docker.pkg.dev/my-project/t/m:1"}, today=datetime.date(2030, 1, 1))
        assert spec.warnings == []

    def test_near_end_of_support_warned(self) -> None:
        """Within 90 days: a warning naming framework.version."""
        raw = {"framework": {"name": "tensorflow", "version": "2.17"}}
        spec = job(raw, today=datetime.date(2025, 6, 1))
        assert spec.warnings == [
            f"{PREFIX}.framework.version: TensorFlow 2.17 (Python 3.10) prebuilt training images "
            "reach end of support on 2025-07-11 (in 40 days; Vertex AI stops running them on "
            "2026-07-11): plan the move to a newer version (got '2.17')"
        ]

    def test_warnings_never_resubmit(self) -> None:
        """A job warned about runs as the same job unwarned: warnings never replace it."""
        raw = {"framework": {"name": "tensorflow", "version": "2.17"}}
        warned = job(raw, today=datetime.date(2025, 6, 1))
        quiet = job(raw, today=datetime.date(2024, 1, 1))
        assert warned.warnings and not quiet.warnings
        assert warned.run_inputs() == quiet.run_inputs()
        assert "warnings" not in warned.settings()

    @pytest.mark.parametrize(
        ("raw", "key", "fragment"),
        [
            (
                {"image": "x:1", "framework": {"name": "tensorflow", "version": "2.17"}},
                ".framework",
                "job names one already",
            ),
            (
                {
                    "python_package": PACKAGE,
                    "framework": {"name": "tensorflow", "version": "2.17"},
                    "runtime_version": "2.11",
                },
                ".runtime_version",
                "each pick the image",
            ),
            (
                {"framework": {"name": "tensorflow", "version": "2.17"}, "python_version": "3.7"},
                ".python_version",
                "goes with runtime_version",
            ),
            ({"framework": {"name": "tensorflow", "version": 2.1}}, ".framework.version", '"2.1"'),
            ({"framework": {"name": "tf", "version": "2.17"}}, ".framework.name", "tensorflow"),
            ({"framework": {"name": "tensorflow", "version": "2.10"}}, ".framework.version", "no"),
            (
                {"framework": {"name": "tensorflow", "version": "2.17", "python": "3.9"}},
                ".framework.python",
                "run Python 3.10",
            ),
            (
                {"python_package": PACKAGE, "runtime_version": "1.14"},
                ".runtime_version",
                "framework: {name: tensorflow",
            ),
        ],
    )
    def test_refusals(self, raw: dict[str, Any], key: str, fragment: str) -> None:
        """Each mistake is one issue on its key."""
        issues = issues_of(raw)
        assert f"{PREFIX}{key}" in [i.key for i in issues], issues
        assert any(fragment in i.message for i in issues if i.key == f"{PREFIX}{key}"), issues


class TestNamedImages:
    """A catalogued prebuilt image named by URI (image, executor_image) keeps the same dates."""

    TF_215 = "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310:latest"
    #: After TensorFlow 2.15's end of availability, before 2.16's.
    LATE_2025 = datetime.date(2025, 12, 1)

    def test_catalogued_uri_forms(self) -> None:
        """Any registry host, a tag, a digest, the old gcr.io path; other images: None."""
        row = images.catalogued_image(self.TF_215)
        assert row is not None and row.name == "tf-cpu.2-15.py310"
        for uri in (
            "europe-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310",
            "asia-docker.pkg.dev/vertex-ai/training/tf-cpu.2-15.py310@sha256:" + "ab" * 32,
        ):
            assert images.catalogued_image(uri) == row
        assert images.catalogued_image("gcr.io/cloud-aiplatform/training/tf-cpu.2-1:latest")
        for other in (
            "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-19.py310:latest",
            "us-central1-docker.pkg.dev/my-project/training/tf-cpu.2-15.py310:latest",
            "trainer:0.1",
        ):
            assert images.catalogued_image(other) is None, other

    def test_executor_image_past_availability_refused(self) -> None:
        """Refused on its key, naming the URI of the nearest version still run, as a
        RetiredImage."""
        raw = {"python_package": {**PACKAGE, "executor_image": self.TF_215}}
        (issue,) = issues_of(raw, today=self.LATE_2025)
        assert issue.key == f"{PREFIX}.python_package.executor_image"
        assert type(issue).__name__ == "RetiredImage"
        assert "reached end of availability on 2025-11-14" in issue.message
        assert (
            "write us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-16.py310:latest" in issue.message
        )
        assert self.TF_215 in str(issue)

    def test_pool_image_with_nothing_left_refused(self) -> None:
        """A worker pool's image, when no catalogued version of it still runs: refused on
        the pool's key, pointing at Google's page and at a container of the user's own."""
        raw = {
            "image": "us-docker.pkg.dev/my-project/t/m:1",
            "workers": {
                "replicas": 1,
                "image": "europe-docker.pkg.dev/vertex-ai/training/tf-gpu.2-17.py310:latest",
                "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 1},
            },
        }
        (issue,) = issues_of(raw, today=datetime.date(2026, 11, 23))
        assert issue.key == f"{PREFIX}.workers.image"
        assert "no catalogued TensorFlow GPU image is still available" in issue.message
        assert images.CATALOGUE_URL in issue.message
        assert "a container of your own" in issue.message

    def test_past_support_warned_not_refused(self) -> None:
        """Past end of support, still available: the job passes with a warning on its key."""
        raw = {
            "python_package": {
                **PACKAGE,
                "executor_image": "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-17.py310:latest",
            }
        }
        spec = job(raw, today=self.LATE_2025)
        (warning,) = spec.warnings
        assert warning.startswith(f"{PREFIX}.python_package.executor_image: TensorFlow 2.17")
        assert "reached end of support on 2025-07-11" in warning
        assert "Vertex AI runs them until 2026-07-11" in warning

    def test_custom_and_uncatalogued_images_pass(self) -> None:
        """Images the catalogue does not hold are not judged: no issue, no warning."""
        for image in (
            "us-docker.pkg.dev/my-project/t/m:1",
            "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-19.py310:latest",
        ):
            spec = job({"image": image}, today=datetime.date(2030, 1, 1))
            assert spec.warnings == [], image
