"""Unit tests of vertex_training.catalog.prediction_images (Google's prebuilt prediction
images, for a model's serving container)."""

from __future__ import annotations

import datetime

import pytest

from vertex_training.catalog import prediction_images, registry
from vertex_training.catalog.prediction_images import (
    PredictionChoice,
    PredictionRefusal,
    named_prediction_image,
    prediction_image,
)

#: Before the end of support of every row still served (and not within 90 days of one).
EARLY_2025 = datetime.date(2025, 1, 2)
#: The day the table was read: past the end of support of TensorFlow 2.15 and PyTorch 2.4.
READ_ON = datetime.date(2026, 11, 29)
US = "us-central1"


def choose(
    framework: str,
    version: str,
    *,
    gpu: bool = False,
    region: str = US,
    today: datetime.date = EARLY_2025,
) -> PredictionChoice:
    """A lookup that must succeed."""
    choice = prediction_image(framework, version, region=region, gpu=gpu, today=today)
    assert isinstance(choice, PredictionChoice), choice
    return choice


def refuse(
    framework: str, version: str, *, gpu: bool = False, today: datetime.date = EARLY_2025
) -> PredictionRefusal:
    """A lookup that must be refused."""
    choice = prediction_image(framework, version, region=US, gpu=gpu, today=today)
    assert isinstance(choice, PredictionRefusal), choice
    return choice


class TestPredictionImage:
    """prediction_image(): the region's host, CPU or GPU, the page's dates."""

    @pytest.mark.parametrize(
        ("region", "host"),
        [
            ("us-central1", "us-docker.pkg.dev"),
            ("europe-west4", "europe-docker.pkg.dev"),
            ("asia-northeast1", "asia-docker.pkg.dev"),
            ("australia-southeast1", "asia-docker.pkg.dev"),
        ],
    )
    def test_the_uri_is_on_the_registry_host_of_the_region(self, region: str, host: str) -> None:
        """The host serving the region, then vertex-ai/prediction and the latest tag."""
        choice = choose("xgboost", "2.1", region=region)
        assert choice.uri == f"{host}/vertex-ai/prediction/xgboost-cpu.2-1:latest"

    def test_gpu_picks_the_gpu_image_and_cpu_the_cpu_one(self) -> None:
        """The same PyTorch version gets pytorch-gpu with gpu, pytorch-cpu without."""
        assert choose("pytorch", "2.4", gpu=True).uri.endswith("/pytorch-gpu.2-4:latest")
        assert choose("pytorch", "2.4").uri.endswith("/pytorch-cpu.2-4:latest")

    def test_tensorflow_images_are_named_tf2(self) -> None:
        """TensorFlow's prediction images are tf2-<kind>.<MAJOR>-<MINOR>, unlike training's tf-."""
        assert choose("tensorflow", "2.14", gpu=True).uri == (
            "us-docker.pkg.dev/vertex-ai/prediction/tf2-gpu.2-14:latest"
        )

    def test_a_supported_version_has_no_warning(self) -> None:
        """scikit-learn 1.6 in early 2025 is long before its end of support."""
        assert choose("sklearn", "1.6").warnings == []

    def test_past_end_of_support_warns_with_the_newest_supported_version(self) -> None:
        """scikit-learn 1.4 in August 2026: past its support, served until 2027-01-14, and
        1.6 is still supported."""
        (warning,) = choose("sklearn", "1.4", today=datetime.date(2026, 8, 1)).warnings
        assert "reached end of support on 2026-01-14" in warning
        assert "serves it until 2027-01-14" in warning
        assert "the newest supported version is 1.6" in warning

    def test_near_end_of_support_warns(self) -> None:
        """Within 90 days of XGBoost 2.1's end of support, the warning gives the days left."""
        (warning,) = choose("xgboost", "2.1", today=datetime.date(2026, 6, 14)).warnings
        assert "reaches end of support on 2026-07-14 (in 30 days" in warning

    def test_an_old_table_is_warned_about(self) -> None:
        """Seven months after the reading day the choice carries a warning to check the page."""
        choice = choose("sklearn", "1.6", today=datetime.date(2027, 7, 1))
        assert any(prediction_images.CATALOGUE_URL in w and "months" in w for w in choice.warnings)


class TestRefusals:
    """What prediction_image() refuses, and the versions its words name."""

    def test_a_version_without_an_image_names_the_nearest_and_the_rest(self) -> None:
        """PyTorch 1.9 on GPU: the nearest is 2.2, and every GPU version still served is named."""
        refusal = refuse("pytorch", "1.9", gpu=True, today=READ_ON)
        assert refusal.field == "version" and refusal.gpu
        assert refusal.versions == ("2.4", "2.3", "2.2")
        assert "PyTorch 1.9 has no prebuilt prediction image" in refusal.message
        assert "the nearest version with a GPU prediction image" in refusal.message
        assert "is 2.2 (pytorch-gpu.2-2" in refusal.message
        assert "write one of 2.4, 2.3, 2.2" in refusal.message

    def test_a_version_newer_than_the_table_is_refused_not_guessed(self) -> None:
        """PyTorch 2.5 has no row: refused, moved back to 2.4, no URI made up."""
        refusal = refuse("pytorch", "2.5")
        assert "is 2.4 (pytorch-cpu.2-4" in refusal.message

    def test_a_retired_version_is_refused_with_its_end_of_availability(self) -> None:
        """scikit-learn 1.3 stopped being served on 2025-11-28: refused, moved to 1.4."""
        refusal = refuse("sklearn", "1.3", today=READ_ON)
        assert refusal.retired
        assert "reached end of availability on 2025-11-28" in refusal.message
        assert "is 1.4 (sklearn-cpu.1-4" in refusal.message
        assert refusal.versions == ("1.6", "1.5", "1.4")

    def test_a_framework_with_no_gpu_image_names_its_cpu_versions(self) -> None:
        """scikit-learn on GPU: the hardware is at fault, the same version on CPU is named."""
        refusal = refuse("sklearn", "1.6", gpu=True, today=READ_ON)
        assert refusal.field == "gpu" and not refusal.gpu
        assert "no GPU prediction image of scikit-learn, only CPU ones" in refusal.message
        assert "is 1.6 (sklearn-cpu.1-6" in refusal.message
        assert refusal.versions == ("1.6", "1.5", "1.4")

    def test_an_unknown_framework_names_the_known_ones(self) -> None:
        """jax is not a prediction framework: the field is the name, the four are listed."""
        refusal = refuse("jax", "0.4")
        assert refusal.field == "name" and refusal.versions == ()
        assert "write one of tensorflow, pytorch, sklearn, xgboost" in refusal.message

    def test_a_version_not_written_major_minor_is_refused_with_an_example(self) -> None:
        """'2' is not MAJOR.MINOR; the example is the newest version served."""
        refusal = refuse("xgboost", "2")
        assert refusal.field == "version" and 'like "2.1"' in refusal.message

    def test_after_every_end_of_availability_nothing_is_named(self) -> None:
        """In 2028 no catalogued TensorFlow image is served: the refusal points at the page."""
        refusal = refuse("tensorflow", "2.15", today=datetime.date(2028, 1, 1))
        assert refusal.retired and refusal.versions == ()
        assert prediction_images.CATALOGUE_URL in refusal.message


class TestNamedPredictionImage:
    """named_prediction_image(): a serving container named by URI gets the table's dates."""

    def test_a_catalogued_uri_is_kept_as_written(self) -> None:
        """A europe URI of a served image is returned unchanged, with its row."""
        uri = "europe-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.2-15:latest"
        choice = named_prediction_image(uri, today=EARLY_2025)
        assert isinstance(choice, PredictionChoice)
        assert choice.uri == uri and choice.image.version == "2.15"

    def test_a_retired_catalogued_uri_is_refused(self) -> None:
        """pytorch-gpu.2-2 after 2027-01-14 is refused, naming no version (none is served)."""
        uri = "us-docker.pkg.dev/vertex-ai/prediction/pytorch-gpu.2-2:latest"
        refusal = named_prediction_image(uri, today=datetime.date(2027, 2, 1))
        assert isinstance(refusal, PredictionRefusal) and refusal.retired

    @pytest.mark.parametrize(
        "uri",
        [
            "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest",
            "us-docker.pkg.dev/my-project/serving/model:1",
            "us-docker.pkg.dev/vertex-ai/prediction/tf2-cpu.9-9:latest",
        ],
    )
    def test_other_images_are_not_its_to_judge(self, uri: str) -> None:
        """A training image, a user's own container, an uncatalogued name: None."""
        assert named_prediction_image(uri, today=EARLY_2025) is None


class TestTable:
    """The table as read from the page."""

    def test_the_frameworks_are_the_training_sides_names(self) -> None:
        """The four names of images.FRAMEWORK_NAMES, scikit-learn written sklearn."""
        assert prediction_images.prediction_framework_names() == (
            "tensorflow",
            "pytorch",
            "sklearn",
            "xgboost",
        )

    def test_every_named_row_follows_googles_naming_pattern(self) -> None:
        """<prefix>-<kind>.<MAJOR>-<MINOR>, the version matching the row's."""
        prefixes = {"tensorflow": "tf2", "pytorch": "pytorch", "sklearn": "sklearn"}
        for row in prediction_images.PREDICTION_IMAGES:
            if row.name is None:
                continue
            prefix = prefixes.get(row.framework, row.framework)
            assert row.name == f"{prefix}-{row.kind}.{row.version.replace('.', '-')}", row
            assert row.end_of_support <= row.end_of_availability, row

    def test_a_row_the_page_lists_no_image_for_has_no_uri(self) -> None:
        """TensorFlow 2.13's image cell is empty on the page: the row keeps its dates only."""
        row = next(
            r
            for r in prediction_images.PREDICTION_IMAGES
            if (r.framework, r.version, r.kind) == ("tensorflow", "2.13", "cpu")
        )
        assert row.name is None and row.end_of_availability == datetime.date(2025, 11, 28)
        with pytest.raises(ValueError, match="lists no image"):
            row.uri(US)


def snapshot_of(*names: str, read: bool = True) -> registry.RegistrySnapshot:
    """A snapshot of Google's registry holding these prediction images in `us` (and, with
    ``read`` false, one made before prediction repositories were read)."""
    at = datetime.datetime(2026, 11, 28, tzinfo=datetime.UTC)
    repositories = [*registry.REPOSITORIES.values()]
    if read:
        repositories += registry.PREDICTION_REPOSITORIES.values()
    images = tuple(
        registry.RegistryImage(
            name=name,
            location="us",
            digest="sha256:" + "0" * 64,
            tags=("latest",),
            uploaded=at,
            repository=registry.PREDICTION,
        )
        for name in names
    )
    return registry.RegistrySnapshot(at, "a test", tuple(repositories), images)


class TestTheRegistryDecides:
    """With a snapshot of Google's registry, it decides which prediction images exist."""

    def test_a_held_version_is_chosen(self) -> None:
        """A version the table has and the registry holds: the table's image and dates."""
        with registry.using(snapshot_of("sklearn-cpu.1-5", "sklearn-cpu.1-6")):
            choice = choose("sklearn", "1.6")
        assert choice.uri == "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-6:latest"

    def test_a_version_the_registry_lacks_is_refused_naming_those_it_holds(self) -> None:
        """Not held where the region pulls from: refused, naming the versions held."""
        with registry.using(snapshot_of("sklearn-cpu.1-5", "sklearn-cpu.1-4")):
            refusal = refuse("sklearn", "1.6")
        assert refusal.versions == ("1.5", "1.4")
        assert "write one of 1.5, 1.4" in refusal.message

    def test_a_version_only_the_registry_holds_is_accepted_undated(self) -> None:
        """Published after the table was read: accepted, warned that its dates are unknown."""
        with registry.using(snapshot_of("sklearn-cpu.1-8")):
            choice = choose("sklearn", "1.8")
        assert choice.uri == "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-8:latest"
        assert "its support dates are not known here" in choice.warnings[0]

    def test_a_snapshot_that_read_no_prediction_images_leaves_the_table_alone(self) -> None:
        """A snapshot made before prediction images were read says nothing of them."""
        with registry.using(snapshot_of(read=False)):
            assert choose("sklearn", "1.6").uri.endswith("sklearn-cpu.1-6:latest")
            assert isinstance(refuse("sklearn", "1.8"), PredictionRefusal)
