"""Every suggestion passes: for each rule that suggests a value, a broken config is
rendered, the suggested value is applied as a user would, and the same key is no longer
refused. Where no value would be accepted, the message says so and what to do instead."""

from __future__ import annotations

import datetime
import re
from typing import Any

import pytest

from vertex_training.errors import Issue, SpecError
from vertex_training.stackconfig import StackSettings, parse_job

STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
PACKAGE = {"package_uris": ["gs://my-bucket/trainer-0.1.tar.gz"], "module": "trainer.task"}
EARLY_2023 = datetime.date(2023, 1, 2)
EARLY_2026 = datetime.date(2026, 1, 2)
#: The day the TPU and region rows were read: no TensorFlow image is still available.
READ_ON = datetime.date(2026, 11, 23)

#: (id, broken config, the refused key (under jobs.job), where the suggestion sits in the
#: config, the pattern whose group 1 is the suggested value, day judged)
CASES: list[tuple[str, dict[str, Any], str, tuple[str, ...], str, datetime.date]] = [
    ("machine", {"image": IMAGE, "machine": "n1-standrad-4"}, "machine", ("machine",),
     r"Did you mean ([\w-]+)\?", EARLY_2026),
    ("accelerator-type", {"image": IMAGE, "accelerator": {"type": "NVIDIA_TESLA_T5"}},
     "accelerator.type", ("accelerator", "type"), r"Did you mean (\w+)\?", EARLY_2026),
    ("accelerator-count",
     {"image": IMAGE, "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 3}},
     "accelerator.count", ("accelerator", "count"), r"in counts (\d+)", EARLY_2026),
    ("region", {"image": IMAGE, "region": "us-centrall1"}, "region", ("region",),
     r"Did you mean ([\w-]+)\?", EARLY_2026),
    ("topology", {"image": IMAGE, "machine": "ct5lp-hightpu-4t", "tpu_topology": "3x3"},
     "tpu_topology", ("tpu_topology",), r"tpu_topology: (\w+)", EARLY_2026),
    ("disk-type", {"image": IMAGE, "disk": {"type": "pd-sdd"}}, "disk.type",
     ("disk", "type"), r"Did you mean ([\w-]+)\?", EARLY_2026),
    ("framework-retired",
     {"python_package": PACKAGE, "framework": {"name": "pytorch", "version": "2.0"}},
     "framework.version", ("framework", "version"), r'write version: "([\d.]+)"', EARLY_2026),
    ("framework-format",
     {"python_package": PACKAGE, "framework": {"name": "pytorch", "version": "2"}},
     "framework.version", ("framework", "version"), r'like "([\d.]+)"', EARLY_2026),
    ("framework-unknown",
     {"python_package": PACKAGE, "framework": {"name": "tensorflow", "version": "2.10"}},
     "framework.version", ("framework", "version"), r"still runs: ([\d.]+)", EARLY_2026),
    ("framework-python",
     {"python_package": PACKAGE,
      "framework": {"name": "tensorflow", "version": "2.16", "python": "3.9"}},
     "framework.python", ("framework", "python"), r"run Python ([\d.]+)", EARLY_2026),
    ("runtime-unknown", {"python_package": PACKAGE, "runtime_version": "1.14"},
     "runtime_version", ("runtime_version",), r"still runs: ([\d.]+)", EARLY_2023),
    ("runtime-python",
     {"python_package": PACKAGE, "runtime_version": "1.15", "python_version": "2.7"},
     "python_version", ("python_version",), r'python_version: "([\d.]+)"', EARLY_2023),
    ("runtime-no-tpu-image",
     {"python_package": PACKAGE, "runtime_version": "2.11", "machine": "cloud-tpu",
      "accelerator": {"type": "TPU_V3", "count": 8}},
     "runtime_version", ("framework",), r'version: "([\d.]+)"', EARLY_2023),
]  # fmt: skip


def issues_at(config: dict[str, Any], key: str, today: datetime.date) -> list[Issue]:
    """The issues parse_job reports at jobs.job.<key> (none when it accepts the job)."""
    try:
        parse_job("job", config, STACK, today=today)
    except SpecError as exc:
        return [i for i in exc.issues if i.key == f"vertex-training:jobs.job.{key}"]
    return []


def applied(config: dict[str, Any], where: tuple[str, ...], value: Any) -> dict[str, Any]:
    """``config`` with ``value`` written at ``where``, as a user would edit it."""
    result = {k: (dict(v) if isinstance(v, dict) else v) for k, v in config.items()}
    if where == ("framework",):  # the advice replaces runtime_version with framework
        result.pop("runtime_version")
        result["framework"] = {"name": "tensorflow", "version": value}
        return result
    target = result
    for part in where[:-1]:
        target = target.setdefault(part, {})
    target[where[-1]] = int(value) if value.isdigit() and where[-1] == "count" else value
    return result


class TestEverySuggestionPasses:
    """Apply each refusal's suggestion: the same key is accepted."""

    @pytest.mark.parametrize(
        ("config", "key", "where", "pattern", "today"),
        [pytest.param(*case[1:], id=case[0]) for case in CASES],
    )
    def test_suggestion_is_accepted(
        self,
        config: dict[str, Any],
        key: str,
        where: tuple[str, ...],
        pattern: str,
        today: datetime.date,
    ) -> None:
        """The refused key's message suggests a value; written in, the key passes."""
        (issue,) = issues_at(config, key, today)
        match = re.search(pattern, issue.message)
        assert match, issue.message
        fixed = applied(config, where, match.group(1))
        refused_again = [i for k in (key, ".".join(where)) for i in issues_at(fixed, k, today)]
        assert refused_again == []


class TestNothingToSuggest:
    """Where no catalogued value is accepted, the message says so and what to do."""

    @pytest.mark.parametrize(
        ("config", "key"),
        [
            ({"python_package": PACKAGE, "runtime_version": "1.14"}, "runtime_version"),
            ({"python_package": PACKAGE, "runtime_version": "2.11"}, "runtime_version"),
            (
                {"python_package": PACKAGE, "runtime_version": "1.15", "python_version": "2.7"},
                "runtime_version",
            ),
            (
                {"python_package": PACKAGE, "framework": {"name": "tensorflow", "version": "2"}},
                "framework.version",
            ),
            (
                {"python_package": PACKAGE, "framework": {"name": "tensorflow", "version": "2.10"}},
                "framework.version",
            ),
        ],
        ids=["unknown-runtime", "retired-runtime", "retired-before-python", "format", "unknown"],
    )
    def test_says_none_and_what_to_do(self, config: dict[str, Any], key: str) -> None:
        """No TensorFlow image is still available on the day the rows were read: the message
        names no version, says none is available, and points to a newer version or a
        container of one's own."""
        (issue,) = issues_at(config, key, READ_ON)
        assert "no catalogued TensorFlow" in issue.message
        assert "image / executor_image" in issue.message or "container" in issue.message
        assert not re.search(r'version: "\d', issue.message)


class TestConvertPlaceholder:
    """`convert` of a runtime with no Vertex AI image writes a framework placeholder."""

    def test_no_runtime_version(self, tmp_path: Any) -> None:
        """No runtimeVersion: the job is written with the placeholder, exit 0, and says so."""
        from vertex_training.__main__ import convert
        from vertex_training.catalog import images

        config = tmp_path / "config.yaml"
        config.write_text(
            "trainingInput:\n  region: us-central1\n  pythonModule: trainer.task\n"
            "  packageUris: [gs://my-bucket/trainer-0.1.tar.gz]\n",
            encoding="utf-8",
        )
        stack, warnings = convert(str(config), name="old", today=READ_ON)
        job = stack["vertex-training:jobs"]["old"]
        assert job["framework"] == {"name": "tensorflow", "version": images.VERSION_PLACEHOLDER}
        assert any("fill in" in w for w in warnings)

    def test_nearest_version_when_one_runs(self, tmp_path: Any) -> None:
        """Runtime 1.14 on a day a TensorFlow image still runs: the nearest one is written."""
        from vertex_training.__main__ import convert

        config = tmp_path / "config.yaml"
        config.write_text(
            "trainingInput:\n  region: us-central1\n  pythonModule: trainer.task\n"
            "  runtimeVersion: '1.14'\n  packageUris: [gs://my-bucket/trainer-0.1.tar.gz]\n",
            encoding="utf-8",
        )
        stack, warnings = convert(str(config), name="old", today=EARLY_2026)
        version = stack["vertex-training:jobs"]["old"]["framework"]["version"]
        parse_job("old", stack["vertex-training:jobs"]["old"], STACK, today=EARLY_2026)
        assert any(f"framework.version is {version}" in w for w in warnings)
