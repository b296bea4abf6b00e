"""Unit tests of vertex_training.stackconfig (parsing, validation, request bodies) and
vertex_training.catalog.machines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.stacks import parse_stack
from vertex_training.__main__ import render
from vertex_training.api.bodies import runs_differently
from vertex_training.api.labels import MAX_USER_LABELS, PROVIDER_LABEL_KEYS
from vertex_training.catalog import machines
from vertex_training.errors import Issue, SpecError
from vertex_training.stackconfig import (
    SECRET_PLACEHOLDER,
    SecretValue,
    StackSettings,
    WaitPolicy,
    load_stack_file,
    parse_duration,
    parse_job,
    parse_stack_settings,
)

REPO = Path(__file__).resolve().parent.parent
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-7:latest"
PACKAGE = "gs://my-bucket/trainer-0.1.tar.gz"
PREFIX = "vertex-training:jobs.mnist"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
LOCAL_STACK = StackSettings(stack="local", backend="local")
NO_PROJECT_STACK = StackSettings(stack="dev", region="us-central1")
BAD_REGION_STACK = StackSettings(stack="dev", project="my-project", region="us-centrall1")
TENSORBOARD = "projects/my-project/locations/us-central1/tensorboards/123"
PACKAGE_SPEC = {"executor_image": EXECUTOR, "package_uris": [PACKAGE], "module": "trainer.task"}


def issues_of(
    raw: dict[str, Any], stack: StackSettings = STACK, name: str = "mnist"
) -> list[Issue]:
    """The issues parse_job reports for ``raw`` (fails the test if it accepts it)."""
    with pytest.raises(SpecError) as caught:
        parse_job(name, raw, stack)
    return caught.value.issues


def body_of(raw: dict[str, Any], stack: StackSettings = STACK) -> dict[str, Any]:
    """The request body of a job that must be valid."""
    return parse_job("mnist", raw, stack).request_body()


def with_image(**keys: Any) -> dict[str, Any]:
    """A container job with ``keys`` added."""
    return {"image": IMAGE, **keys}


# One row per rule: (job config, stack, issue key after the job prefix, message fragment).
BAD_JOBS = [
    pytest.param(with_image(imgae="x"), STACK, ".imgae", "did you mean 'image'", id="typo-top"),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_TESLA_T4", "cont": 1}),
        STACK,
        ".accelerator.cont",
        "did you mean 'count'",
        id="typo-nested",
    ),
    pytest.param(
        with_image(workers={"replica": 2}),
        STACK,
        ".workers.replica",
        "did you mean 'replicas'",
        id="typo-pool",
    ),
    pytest.param(
        with_image(machine_type="n1-standard-4"),
        STACK,
        ".machine_type",
        "did you mean 'machine'",
        id="typo-machine-type",
    ),
    pytest.param(
        with_image(scheduling={"timout": "2h"}),
        STACK,
        ".scheduling.timout",
        "did you mean 'timeout'",
        id="typo-scheduling",
    ),
    pytest.param(
        with_image(frobnicate=1),
        STACK,
        ".frobnicate",
        "the keys allowed here are",
        id="unknown-key-no-suggestion",
    ),
    pytest.param(
        with_image(machine="n1-standrd-4"),
        STACK,
        ".machine",
        "Did you mean n1-standard-4?",
        id="machine-unknown",
    ),
    pytest.param(
        with_image(machine="n1-standard-1"),
        STACK,
        ".machine",
        "not a machine type Vertex AI custom training offers",
        id="machine-not-for-training",
    ),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_TESLA_T5"}),
        STACK,
        ".accelerator.type",
        "Did you mean NVIDIA_TESLA_T4?",
        id="accelerator-unknown",
    ),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_TESLA_K80"}),
        STACK,
        ".accelerator.type",
        "end of support",
        id="accelerator-retired",
    ),
    pytest.param(
        with_image(machine="e2-standard-4", accelerator={"type": "NVIDIA_TESLA_T4"}),
        STACK,
        ".accelerator.type",
        "e2-standard-4 takes no accelerators",
        id="accelerator-on-cpu-family",
    ),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_L4"}),
        STACK,
        ".accelerator.type",
        "machines that take NVIDIA_L4 include g2-standard-4",
        id="accelerator-wrong-family",
    ),
    pytest.param(
        with_image(machine="a2-highgpu-1g", accelerator={"type": "NVIDIA_H100_80GB"}),
        STACK,
        ".accelerator.type",
        "a2-highgpu-1g takes NVIDIA_TESLA_A100",
        id="accelerator-wrong-a2",
    ),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_TESLA_T4", "count": 3}),
        STACK,
        ".accelerator.count",
        "n1-standard-4 takes NVIDIA_TESLA_T4 in counts 1, 2 or 4; write one of those",
        id="count-n1-t4",
    ),
    pytest.param(
        with_image(machine="n1-standard-16", accelerator={"type": "NVIDIA_TESLA_V100"}),
        STACK,
        ".accelerator.count",
        "in counts 2, 4 or 8",
        id="count-n1-vcpu-limit",
    ),
    pytest.param(
        with_image(machine="a2-highgpu-2g", accelerator={"type": "NVIDIA_TESLA_A100"}),
        STACK,
        ".accelerator.count",
        "a2-highgpu-2g takes NVIDIA_TESLA_A100 in counts 2",
        id="count-a2",
    ),
    pytest.param(
        with_image(machine="g2-standard-24", accelerator={"type": "NVIDIA_L4", "count": 1}),
        STACK,
        ".accelerator.count",
        "in counts 2",
        id="count-g2",
    ),
    pytest.param(
        with_image(accelerator="NVIDIA_TESLA_T4"),
        STACK,
        ".accelerator",
        "{type: NVIDIA_TESLA_T4, count: 1}",
        id="accelerator-as-text",
    ),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_TESLA_T4", "count": -1}),
        STACK,
        ".accelerator.count",
        "must be at least 1",
        id="count-negative",
    ),
    pytest.param(
        with_image(region="us-central9"),
        STACK,
        ".region",
        "Did you mean us-central1?",
        id="region-not-training",
    ),
    pytest.param(
        with_image(),
        BAD_REGION_STACK,
        "gcp:region",
        "does not run in us-centrall1",
        id="region-stack",
    ),
    pytest.param(
        with_image(),
        NO_PROJECT_STACK,
        "gcp:project",
        "pulumi config set gcp:project",
        id="project-required",
    ),
    pytest.param(
        with_image(machine="ct5lp-hightpu-4t", workers={"replicas": 1}),
        STACK,
        ".workers",
        "TPU jobs run on one pool with one replica",
        id="tpu-more-pools",
    ),
    pytest.param(
        with_image(machine="ct5lp-hightpu-4t", replicas=2),
        STACK,
        ".replicas",
        "exactly one replica",
        id="tpu-more-replicas",
    ),
    pytest.param(
        with_image(replicas=3),
        STACK,
        ".replicas",
        "add workers: {replicas: 2}",
        id="primary-replicas",
    ),
    pytest.param(
        with_image(machine="cloud-tpu"),
        STACK,
        ".accelerator",
        "cloud-tpu needs an accelerator",
        id="tpu-v3-needs-accelerator",
    ),
    pytest.param(
        with_image(tpu_topology="2x2"),
        STACK,
        ".tpu_topology",
        "applies to TPU machines",
        id="topology-on-gpu-machine",
    ),
    pytest.param(
        with_image(machine="ct5lp-hightpu-4t", tpu_topology="3x3"),
        STACK,
        ".tpu_topology",
        "write one of those (tpu_topology: 2x2 for one VM)",
        id="topology-wrong",
    ),
    pytest.param(
        with_image(python_package=PACKAGE_SPEC),
        STACK,
        ".python_package",
        "not both",
        id="image-and-package",
    ),
    pytest.param({"args": ["x"]}, STACK, ".image", "nothing to run", id="no-program"),
    pytest.param(
        {"python_package": PACKAGE_SPEC, "command": ["python"]},
        STACK,
        ".command",
        "container images only",
        id="command-with-package",
    ),
    pytest.param(
        {"python_package": {**PACKAGE_SPEC, "executor_image": None}},
        STACK,
        ".python_package.executor_image",
        "or executor_image to name one",
        id="executor-required-vertex",
    ),
    pytest.param(
        {"python_package": {**PACKAGE_SPEC, "executor_image": IMAGE}},
        STACK,
        ".python_package.executor_image",
        "prebuilt training image",
        id="executor-not-prebuilt",
    ),
    pytest.param(
        {
            "python_package": {
                **PACKAGE_SPEC,
                "executor_image": "us-docker.pkg.dev/vertex-ai/prediction/sklearn-cpu.1-6:latest",
            }
        },
        STACK,
        ".python_package.executor_image",
        "that is a prediction image",
        id="executor-prediction-image",
    ),
    pytest.param(
        {"python_package": {**PACKAGE_SPEC, "package_uris": ["dist/trainer.tar.gz"]}},
        STACK,
        ".python_package.package_uris[0]",
        "gs://bucket",
        id="package-uri-local-on-vertex",
    ),
    pytest.param(
        {"python_package": {**PACKAGE_SPEC, "package_uris": []}},
        STACK,
        ".python_package.package_uris",
        "1 to 100 package URIs",
        id="package-uris-empty",
    ),
    pytest.param(
        {"python_package": {**PACKAGE_SPEC, "package_uris": [PACKAGE] * 101}},
        STACK,
        ".python_package.package_uris",
        "1 to 100 package URIs",
        id="package-uris-too-many",
    ),
    pytest.param(
        {"python_package": {**PACKAGE_SPEC, "module": "trainer/task.py"}},
        STACK,
        ".python_package.module",
        "trainer.task",
        id="python-module",
    ),
    pytest.param(
        {"python_package": {"executor_image": EXECUTOR, "package_uris": [PACKAGE]}},
        STACK,
        ".python_package.module",
        "'module' is required",
        id="package-module-missing",
    ),
    pytest.param(
        with_image(display_name="x" * 129),
        STACK,
        ".display_name",
        "1 to 128 characters",
        id="display-name-long",
    ),
    pytest.param(
        with_image(display_name=""),
        STACK,
        ".display_name",
        "1 to 128 characters",
        id="display-name-empty",
    ),
    pytest.param(
        with_image(labels={"Team": "vision"}),
        STACK,
        ".labels.Team",
        "starting with a lowercase letter",
        id="label-key-case",
    ),
    pytest.param(
        with_image(labels={"team": "Vision"}),
        STACK,
        ".labels.team",
        "label values have 0 to 63",
        id="label-value",
    ),
    pytest.param(
        with_image(labels={"k" * 64: "v"}),
        STACK,
        ".labels." + "k" * 64,
        "1 to 63 lowercase letters",
        id="label-key-long",
    ),
    pytest.param(
        with_image(labels={"goog-team": "x"}),
        STACK,
        ".labels.goog-team",
        "reserved by Google",
        id="label-goog",
    ),
    pytest.param(
        with_image(labels={PROVIDER_LABEL_KEYS[0]: "x"}),
        STACK,
        f".labels.{PROVIDER_LABEL_KEYS[0]}",
        "set by the vertex-training provider",
        id="label-provider-reserved",
    ),
    pytest.param(
        # Vertex AI takes 64 labels, of which the provider sets four.
        with_image(labels={f"k{i}": "v" for i in range(MAX_USER_LABELS + 1)}),
        STACK,
        ".labels",
        "at most 60 labels",
        id="labels-too-many",
    ),
    pytest.param(
        with_image(scheduling={"max_wait_duration": "1h"}),
        STACK,
        ".scheduling.max_wait_duration",
        "only with strategy: FLEX_START",
        id="max-wait-without-flex",
    ),
    pytest.param(
        with_image(scheduling={"strategy": "ON_DEMAND"}),
        STACK,
        ".scheduling.strategy",
        "deprecated; write STANDARD",
        id="strategy-deprecated",
    ),
    pytest.param(
        with_image(scheduling={"strategy": "spot"}),
        STACK,
        ".scheduling.strategy",
        "Did you mean SPOT?",
        id="strategy-case",
    ),
    pytest.param(
        with_image(scheduling={"timeout": "2 hours"}),
        STACK,
        ".scheduling.timeout",
        "90s, 30m, 2h, 1d",
        id="duration-format",
    ),
    pytest.param(
        with_image(scheduling={"timeout": 0}),
        STACK,
        ".scheduling.timeout",
        "longer than zero",
        id="duration-zero",
    ),
    pytest.param(
        with_image(scheduling={"max_wait_duration": -5, "strategy": "FLEX_START"}),
        STACK,
        ".scheduling.max_wait_duration",
        "must not be negative",
        id="duration-negative",
    ),
    pytest.param(
        with_image(tensorboard=TENSORBOARD),
        STACK,
        ".tensorboard",
        "set service_account",
        id="tensorboard-needs-service-account",
    ),
    pytest.param(
        with_image(disk={"size_gb": 50}),
        STACK,
        ".disk.size_gb",
        "100 to 64000 GB",
        id="disk-small",
    ),
    pytest.param(
        with_image(disk={"size_gb": 64001}),
        STACK,
        ".disk.size_gb",
        "100 to 64000 GB",
        id="disk-large",
    ),
    pytest.param(
        with_image(disk={"type": "pd-balanced"}),
        STACK,
        ".disk.type",
        "pd-ssd, pd-standard or hyperdisk-balanced",
        id="disk-type",
    ),
    pytest.param(
        with_image(machine="a4-highgpu-8g", disk={"type": "pd-ssd"}),
        STACK,
        ".disk.type",
        "boots from hyperdisk-balanced only",
        id="disk-type-for-machine",
    ),
    pytest.param(
        with_image(env={f"V{i}": "x" for i in range(101)}),
        STACK,
        ".env",
        "at most 100 environment variables",
        id="env-too-many",
    ),
    pytest.param(
        with_image(env={"1BAD": "x"}),
        STACK,
        ".env.1BAD",
        "letters, digits and _",
        id="env-name",
    ),
    pytest.param(
        with_image(base_output_directory="/tmp/out"),
        STACK,
        ".base_output_directory",
        "gs://bucket/path",
        id="output-dir-local-on-vertex",
    ),
    pytest.param(
        with_image(accelerator={"type": "NVIDIA_TESLA_T4"}, reduction_server={"replicas": 2}),
        STACK,
        ".reduction_server",
        "give workers an NVIDIA accelerator",
        id="reduction-server-needs-gpu-workers",
    ),
    pytest.param(
        with_image(
            accelerator={"type": "NVIDIA_TESLA_T4"},
            workers={"replicas": 2},
            parameter_servers={"replicas": 1},
            reduction_server={"replicas": 1},
        ),
        STACK,
        ".reduction_server",
        "both use worker pool 2",
        id="reduction-and-ps",
    ),
    pytest.param(
        with_image(
            accelerator={"type": "NVIDIA_TESLA_T4"},
            evaluators={"machine": "e2-standard-8"},
        ),
        STACK,
        ".evaluators.accelerator.type",
        "inherited from the primary pool",
        id="inherited-accelerator-on-cpu",
    ),
    pytest.param(
        with_image(workers={"replicas": 0}),
        STACK,
        ".workers.replicas",
        "at least 1",
        id="workers-replicas-zero",
    ),
    pytest.param(
        with_image(wait="finished"),
        STACK,
        ".wait",
        "submitted, running or succeeded",
        id="wait-short",
    ),
    pytest.param(
        with_image(wait={"until": "done"}),
        STACK,
        ".wait.until",
        "submitted, running or succeeded",
        id="wait-until",
    ),
    pytest.param(
        with_image(wait={"until": "running", "timeout": "soon"}),
        STACK,
        ".wait.timeout",
        "not a duration",
        id="wait-timeout",
    ),
    pytest.param(
        with_image(adopt="123"),
        STACK,
        ".adopt",
        "custom job resource name",
        id="adopt-format",
    ),
    pytest.param(
        with_image(adopt="projects/my-project/locations/europe-west4/customJobs/1"),
        STACK,
        ".adopt",
        "not this job's region us-central1",
        id="adopt-region",
    ),
    pytest.param(
        with_image(adopt="projects/other/locations/us-central1/customJobs/1"),
        STACK,
        ".adopt",
        "project other",
        id="adopt-project",
    ),
    pytest.param(
        with_image(kms_key="projects/p/locations/europe-west4/keyRings/r/cryptoKeys/k"),
        STACK,
        ".kms_key",
        "must be in the job's region",
        id="kms-region",
    ),
    pytest.param(
        with_image(network="my-vpc"),
        STACK,
        ".network",
        "projects/12345/global/networks",
        id="network-format",
    ),
    pytest.param(
        with_image(reserved_ip_ranges=["r"]),
        STACK,
        ".reserved_ip_ranges",
        "set network",
        id="ip-ranges-need-network",
    ),
    pytest.param(
        with_image(service_account="trainer"),
        STACK,
        ".service_account",
        "a service account email",
        id="service-account-format",
    ),
    pytest.param(
        with_image(persistent_resource_id="My_Cluster"),
        STACK,
        ".persistent_resource_id",
        "persistent resource ID",
        id="persistent-resource-id",
    ),
    pytest.param(
        {"image": {"secure": "v1:abc"}},
        STACK,
        ".image",
        "only supported as env values",
        id="secret-outside-env",
    ),
    pytest.param(with_image(args="--epochs 3"), STACK, ".args", "must be a list", id="args-type"),
    pytest.param(
        with_image(enable_web_access="maybe"),
        STACK,
        ".enable_web_access",
        "must be true or false",
        id="bool-type",
    ),
    pytest.param(
        with_image(backend="vertx"),
        STACK,
        ".backend",
        "Did you mean vertex?",
        id="backend",
    ),
]


class TestParseJobRejects:
    """parse_job: every rule gives an Issue with the full key and a message with the fix."""

    @pytest.mark.parametrize(("raw", "stack", "key", "fragment"), BAD_JOBS)
    def test_bad_config(
        self, raw: dict[str, Any], stack: StackSettings, key: str, fragment: str
    ) -> None:
        """A config Vertex AI would refuse is reported at its key with what to write."""
        full_key = key if ":" in key else PREFIX + key
        issues = issues_of(raw, stack)
        matching = [i for i in issues if i.key == full_key]
        assert matching, f"no issue at {full_key}; got {[str(i) for i in issues]}"
        assert any(fragment in i.message for i in matching), [str(i) for i in matching]

    def test_table_covers_enough_rules(self) -> None:
        """The table holds at least 30 distinct bad configs."""
        assert len({p.id for p in BAD_JOBS}) == len(BAD_JOBS) >= 30

    def test_every_problem_is_reported(self) -> None:
        """Several key-level mistakes in one job are all reported, not just the first."""
        issues = issues_of(
            with_image(
                imgae="x",
                machine="n1-standrd-4",
                disk={"size_gb": 5},
                labels={"Team": "x", "ok": "BAD"},
                scheduling={"timeout": "soon"},
            )
        )
        keys = {i.key for i in issues}
        assert {
            f"{PREFIX}.imgae",
            f"{PREFIX}.machine",
            f"{PREFIX}.disk.size_gb",
            f"{PREFIX}.labels.Team",
            f"{PREFIX}.labels.ok",
            f"{PREFIX}.scheduling.timeout",
        } <= keys

    def test_every_cross_field_problem_is_reported(self) -> None:
        """Several rules between keys are all reported in one pass."""
        issues = issues_of(
            with_image(
                accelerator={"type": "NVIDIA_TESLA_T4", "count": 3},
                tensorboard=TENSORBOARD,
                scheduling={"max_wait_duration": "1h"},
                base_output_directory="/tmp/out",
            )
        )
        assert {i.key for i in issues} >= {
            f"{PREFIX}.accelerator.count",
            f"{PREFIX}.tensorboard",
            f"{PREFIX}.scheduling.max_wait_duration",
            f"{PREFIX}.base_output_directory",
        }

    def test_issue_value_is_what_was_written(self) -> None:
        """An issue carries the value as the user wrote it (1h, not 3600)."""
        (issue,) = issues_of(with_image(scheduling={"max_wait_duration": "1h"}))
        assert issue.value == "1h"

    def test_messages_carry_no_pydantic_text(self) -> None:
        """Pydantic's own wording and links never reach the user."""
        issues = issues_of(
            with_image(replicas="two", args="x", enable_web_access="maybe", extra_key=1)
        )
        for issue in issues:
            assert "pydantic" not in issue.message.lower()
            assert "Input should" not in issue.message

    def test_job_name_is_checked(self) -> None:
        """A job name that cannot name a resource is reported at the job's key."""
        issues = issues_of(with_image(), name="my job")
        assert issues[0].key == "vertex-training:jobs.my job"

    def test_job_must_be_a_mapping(self) -> None:
        """A job that is not a mapping is reported instead of crashing."""
        with pytest.raises(SpecError) as caught:
            parse_job("mnist", "image", STACK)
        assert caught.value.issues[0].key == PREFIX

    def test_issue_text_names_key_value_and_fix(self) -> None:
        """str(Issue) is key, message and the bad value: what preview and render print."""
        (issue,) = issues_of(with_image(accelerator={"type": "NVIDIA_TESLA_T4", "count": 3}))
        assert str(issue) == (
            f"{PREFIX}.accelerator.count: n1-standard-4 takes NVIDIA_TESLA_T4 in counts "
            "1, 2 or 4; write one of those (got 3)"
        )


class TestLocalBackend:
    """parse_job on the local backend: cloud-only rules are relaxed."""

    def test_local_paths_and_no_executor_allowed(self) -> None:
        """Local package paths, a local output dir and no executor image are fine locally."""
        job = parse_job(
            "mnist",
            {
                "python_package": {"package_uris": ["dist/trainer.tar.gz"], "module": "t.task"},
                "base_output_directory": "/tmp/out",
            },
            LOCAL_STACK,
        )
        assert job.backend == "local"
        assert job.primary.python_package is not None
        assert job.primary.python_package.executor_image is None
        assert (
            "executorImageUri"
            not in job.request_body()["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
        )

    def test_no_project_or_region_needed(self) -> None:
        """A local job needs neither gcp:project nor gcp:region."""
        job = parse_job("mnist", with_image(), LOCAL_STACK)
        assert job.project is None
        assert job.parent == f"projects/local/locations/{job.region}"

    def test_machine_rules_still_apply(self) -> None:
        """Machine and accelerator rules hold on every backend (the same spec runs on both)."""
        issues = issues_of(
            with_image(accelerator={"type": "NVIDIA_TESLA_T4", "count": 3}), LOCAL_STACK
        )
        assert issues[0].key == f"{PREFIX}.accelerator.count"

    def test_job_can_choose_its_backend(self) -> None:
        """A job's own backend overrides the stack's."""
        job = parse_job("mnist", with_image(backend="local"), NO_PROJECT_STACK)
        assert job.backend == "local"


class TestDefaults:
    """parse_job fills in every documented default."""

    def test_short_form_defaults(self) -> None:
        """Machine, disk, display name, region, backend and wait policy default as documented."""
        job = parse_job("mnist", with_image(), STACK)
        assert job.display_name == "mnist"
        assert job.region == "us-central1"
        assert job.project == "my-project"
        assert job.backend == "vertex"
        assert job.primary.machine == "n1-standard-4"
        assert (job.primary.disk.type, job.primary.disk.size_gb) == ("pd-ssd", 100)
        assert job.wait == WaitPolicy(until="submitted", timeout_s=24 * 3600)
        assert job.adopt is None

    def test_accelerator_optimized_machine_brings_its_gpus(self) -> None:
        """a2/a3/g2 machines get their built-in accelerator when none is named."""
        job = parse_job("mnist", with_image(machine="a2-ultragpu-4g"), STACK)
        assert job.primary.accelerator is not None
        assert (job.primary.accelerator.type, job.primary.accelerator.count) == (
            "NVIDIA_A100_80GB",
            4,
        )

    def test_hyperdisk_default_for_a4(self) -> None:
        """Machines that boot only from Hyperdisk default to hyperdisk-balanced."""
        job = parse_job("mnist", with_image(machine="a4-highgpu-8g"), STACK)
        assert job.primary.disk.type == "hyperdisk-balanced"

    def test_wait_short_and_long_forms(self) -> None:
        """wait: succeeded and wait: {until, timeout} both parse into a WaitPolicy."""
        short = parse_job("mnist", with_image(wait="succeeded"), STACK)
        long = parse_job("mnist", with_image(wait={"until": "running", "timeout": "3h"}), STACK)
        assert short.wait == WaitPolicy(until="succeeded")
        assert long.wait == WaitPolicy(until="running", timeout_s=3 * 3600)

    def test_job_region_overrides_stack(self) -> None:
        """A job's own region wins over gcp:region."""
        assert parse_job("mnist", with_image(region="europe-west4"), STACK).region == (
            "europe-west4"
        )

    def test_yaml_scalars_become_text(self) -> None:
        """Numbers and booleans in args, env and labels are passed as the text written."""
        job = parse_job(
            "mnist",
            with_image(args=["--epochs", 3], env={"DEBUG": True, "N": 2}, labels={"v": 1}),
            STACK,
        )
        assert job.primary.args == ["--epochs", "3"]
        assert job.primary.env == {"DEBUG": "true", "N": "2"}
        assert job.labels == {"v": "1"}


class TestInheritance:
    """Worker pools inherit from the primary pool unless they set a key."""

    def test_pool_inherits_program_machine_and_accelerator(self) -> None:
        """workers: {replicas: 2} runs the primary's image, args, env, machine and GPUs."""
        job = parse_job(
            "mnist",
            with_image(
                args=["--lr", "0.1"],
                env={"A": "1"},
                machine="n1-standard-8",
                accelerator={"type": "NVIDIA_TESLA_T4", "count": 2},
                workers={"replicas": 2},
            ),
            STACK,
        )
        workers = job.worker_pools[1]
        assert workers is not None
        assert workers.model_dump(exclude={"role", "replicas"}) == job.primary.model_dump(
            exclude={"role", "replicas"}
        )
        assert (workers.role, workers.replicas) == ("workers", 2)

    def test_pool_keys_override(self) -> None:
        """A pool's own keys replace the primary's (env is replaced, not merged)."""
        job = parse_job(
            "mnist",
            with_image(env={"A": "1"}, evaluators={"image": "eval:1", "env": {"B": "2"}}),
            STACK,
        )
        evaluators = job.worker_pools[3]
        assert evaluators is not None
        assert (evaluators.image, evaluators.env) == ("eval:1", {"B": "2"})

    def test_accelerator_null_means_none(self) -> None:
        """accelerator: null in a pool turns off the inherited accelerator."""
        job = parse_job(
            "mnist",
            with_image(
                accelerator={"type": "NVIDIA_TESLA_T4"},
                evaluators={"machine": "e2-standard-8", "accelerator": None},
            ),
            STACK,
        )
        evaluators = job.worker_pools[3]
        assert evaluators is not None and evaluators.accelerator is None

    def test_accelerator_count_zero_means_none(self) -> None:
        """{count: 0} is null's meaning, in the form every SDK's types can write."""
        job = parse_job(
            "mnist",
            with_image(
                accelerator={"type": "NVIDIA_TESLA_T4"},
                evaluators={"machine": "e2-standard-8", "accelerator": {"count": 0}},
            ),
            STACK,
        )
        evaluators = job.worker_pools[3]
        assert evaluators is not None and evaluators.accelerator is None
        pools = job.request_body()["jobSpec"]["workerPoolSpecs"]
        assert pools[3]["machineSpec"] == {"machineType": "e2-standard-8"}

    def test_a_typed_accelerator_with_a_count_of_0_is_refused_on_its_count(self) -> None:
        """{type: T4, count: 0} is refused naming accelerator.count, never read as none."""
        with pytest.raises(SpecError) as refused:
            parse_job(
                "mnist", with_image(accelerator={"type": "NVIDIA_TESLA_T4", "count": 0}), STACK
            )
        [issue] = refused.value.issues
        assert issue.key == "vertex-training:jobs.mnist.accelerator.count"
        assert "write a count of at least 1" in issue.message
        assert "accelerator: {count: 0} (null in a stack file)" in issue.message

    def test_an_inherited_accelerator_the_machine_refuses_names_the_way_out(self) -> None:
        """The refusal tells how to write none: {count: 0}, which compiles in every SDK."""
        with pytest.raises(SpecError) as refused:
            parse_job(
                "mnist",
                with_image(
                    accelerator={"type": "NVIDIA_TESLA_T4"}, workers={"machine": "e2-standard-8"}
                ),
                STACK,
            )
        [issue] = refused.value.issues
        assert issue.key.endswith("workers.accelerator.type")
        assert "write accelerator: {count: 0} here for none" in issue.message

    def test_an_accelerator_without_its_type_is_refused(self) -> None:
        """A count with no type names the machine's accelerators and the form for none."""
        with pytest.raises(SpecError) as refused:
            parse_job("mnist", with_image(accelerator={"count": 2}), STACK)
        [issue] = refused.value.issues
        assert issue.key.endswith("accelerator.type")
        assert "NVIDIA_TESLA_T4" in issue.message
        assert "write accelerator: {count: 0} for none" in issue.message

    def test_program_inherits_as_a_unit(self) -> None:
        """A pool with its own python_package does not also inherit the primary's image."""
        job = parse_job("mnist", with_image(workers={"python_package": PACKAGE_SPEC}), STACK)
        workers = job.worker_pools[1]
        assert workers is not None
        assert workers.image is None and workers.python_package is not None

    def test_own_accelerator_optimized_machine_uses_its_gpus(self) -> None:
        """A pool that sets its own a2 machine takes that machine's GPUs, not the primary's."""
        job = parse_job(
            "mnist",
            with_image(machine="a2-highgpu-1g", workers={"machine": "a2-highgpu-2g"}),
            STACK,
        )
        workers = job.worker_pools[1]
        assert workers is not None and workers.accelerator is not None
        assert workers.accelerator.count == 2


def _container_pool(
    machine: str = "n1-standard-4", replicas: int = 1, **extra: Any
) -> dict[str, Any]:
    """The REST WorkerPoolSpec of a container pool with default disk."""
    return {
        "containerSpec": {"imageUri": IMAGE, **extra.pop("container", {})},
        "diskSpec": {"bootDiskSizeGb": 100, "bootDiskType": "pd-ssd"},
        "machineSpec": {"machineType": machine, **extra.pop("machine_spec", {})},
        "replicaCount": str(replicas),
        **extra,
    }


GOOD_JOBS: dict[str, dict[str, Any]] = {
    "short-form": with_image(
        command=["python", "-m", "trainer.task"],
        args=["--epochs", "3"],
        env={"LOG_LEVEL": "info", "A_FIRST": "x"},
        accelerator={"type": "NVIDIA_TESLA_T4", "count": 1},
        labels={"team": "vision"},
    ),
    "multi-pool": with_image(
        machine="n1-standard-8",
        accelerator={"type": "NVIDIA_TESLA_V100", "count": 2},
        workers={"replicas": 3},
        reduction_server={"replicas": 2},
        evaluators={"machine": "n1-standard-4", "accelerator": None},
    ),
    "gap": with_image(workers={"replicas": 2}, evaluators={"replicas": 1}),
    "python-package": {
        "python_package": PACKAGE_SPEC,
        "args": ["--alpha", "0.5"],
        "env": {"MODE": "fast"},
        "disk": {"type": "pd-standard", "size_gb": 200},
    },
    "tpu-v5e": with_image(machine="ct5lp-hightpu-4t"),
    "tpu-v3": with_image(machine="cloud-tpu", accelerator={"type": "TPU_V3", "count": 8}),
    "spot": with_image(scheduling={"strategy": "SPOT", "timeout": "2h"}),
    "flex-start": with_image(
        machine="a3-highgpu-8g",
        scheduling={
            "strategy": "FLEX_START",
            "max_wait_duration": "30m",
            "timeout": "1d",
            "restart_job_on_worker_restart": True,
            "disable_retries": True,
        },
    ),
    "job-settings": with_image(
        display_name="MNIST run #1",
        service_account="trainer@my-project.iam.gserviceaccount.com",
        network="projects/123/global/networks/vpc",
        reserved_ip_ranges=["training-range"],
        base_output_directory="gs://bucket/mnist",
        tensorboard=TENSORBOARD,
        enable_web_access=True,
        enable_dashboard_access=True,
        labels={"team": "vision", "env": "dev"},
        kms_key="projects/p/locations/us-central1/keyRings/r/cryptoKeys/k",
        persistent_resource_id="my-cluster",
        experiment="projects/p/locations/us-central1/metadataStores/default/contexts/exp",
        experiment_run="projects/p/locations/us-central1/metadataStores/default/contexts/exp-r",
        wait="succeeded",
        adopt="projects/123456/locations/us-central1/customJobs/789",
    ),
}

EXPECTED_BODIES: dict[str, dict[str, Any]] = {
    "short-form": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                _container_pool(
                    container={
                        "command": ["python", "-m", "trainer.task"],
                        "args": ["--epochs", "3"],
                        "env": [
                            {"name": "A_FIRST", "value": "x"},
                            {"name": "LOG_LEVEL", "value": "info"},
                        ],
                    },
                    machine_spec={"acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1},
                )
            ]
        },
        "labels": {"team": "vision"},
    },
    "multi-pool": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                _container_pool(
                    "n1-standard-8",
                    machine_spec={"acceleratorType": "NVIDIA_TESLA_V100", "acceleratorCount": 2},
                ),
                _container_pool(
                    "n1-standard-8",
                    3,
                    machine_spec={"acceleratorType": "NVIDIA_TESLA_V100", "acceleratorCount": 2},
                ),
                {
                    "containerSpec": {"imageUri": machines.REDUCTION_SERVER_IMAGE},
                    "diskSpec": {"bootDiskSizeGb": 100, "bootDiskType": "pd-ssd"},
                    "machineSpec": {"machineType": "n1-highcpu-16"},
                    "replicaCount": "2",
                },
                _container_pool("n1-standard-4"),
            ]
        },
    },
    "gap": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                _container_pool(),
                _container_pool(replicas=2),
                {},
                _container_pool(),
            ]
        },
    },
    "python-package": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                {
                    "pythonPackageSpec": {
                        "executorImageUri": EXECUTOR,
                        "packageUris": [PACKAGE],
                        "pythonModule": "trainer.task",
                        "args": ["--alpha", "0.5"],
                        "env": [{"name": "MODE", "value": "fast"}],
                    },
                    "diskSpec": {"bootDiskSizeGb": 200, "bootDiskType": "pd-standard"},
                    "machineSpec": {"machineType": "n1-standard-4"},
                    "replicaCount": "1",
                }
            ]
        },
    },
    "tpu-v5e": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                _container_pool("ct5lp-hightpu-4t", machine_spec={"tpuTopology": "2x2"})
            ]
        },
    },
    "tpu-v3": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                _container_pool(
                    "cloud-tpu", machine_spec={"acceleratorType": "TPU_V3", "acceleratorCount": 8}
                )
            ]
        },
    },
    "spot": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [_container_pool()],
            "scheduling": {"strategy": "SPOT", "timeout": "7200s"},
        },
    },
    "flex-start": {
        "displayName": "mnist",
        "jobSpec": {
            "workerPoolSpecs": [
                _container_pool(
                    "a3-highgpu-8g",
                    machine_spec={"acceleratorType": "NVIDIA_H100_80GB", "acceleratorCount": 8},
                )
            ],
            "scheduling": {
                "strategy": "FLEX_START",
                "maxWaitDuration": "1800s",
                "timeout": "86400s",
                "restartJobOnWorkerRestart": True,
                "disableRetries": True,
            },
        },
    },
    "job-settings": {
        "displayName": "MNIST run #1",
        "jobSpec": {
            "workerPoolSpecs": [_container_pool()],
            "serviceAccount": "trainer@my-project.iam.gserviceaccount.com",
            "network": "projects/123/global/networks/vpc",
            "reservedIpRanges": ["training-range"],
            "baseOutputDirectory": {"outputUriPrefix": "gs://bucket/mnist"},
            "tensorboard": TENSORBOARD,
            "enableWebAccess": True,
            "enableDashboardAccess": True,
            "persistentResourceId": "my-cluster",
            "experiment": "projects/p/locations/us-central1/metadataStores/default/contexts/exp",
            "experimentRun": (
                "projects/p/locations/us-central1/metadataStores/default/contexts/exp-r"
            ),
        },
        "labels": {"env": "dev", "team": "vision"},
        "encryptionSpec": {
            "kmsKeyName": "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
        },
    },
}


@pytest.fixture(scope="module")
def parse_custom_job() -> Any:
    """ParseDict into aiplatform_v1.CustomJob, then back to a dict (the real protos)."""
    pytest.importorskip("google.cloud.aiplatform_v1")
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format

    def parse(body: dict[str, Any]) -> dict[str, Any]:
        message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
        json_format.ParseDict(body, message)
        return json_format.MessageToDict(message)

    return parse


class TestRequestBody:
    """JobSpec.request_body: the exact Vertex AI REST CustomJob body."""

    @pytest.mark.parametrize("case", sorted(GOOD_JOBS))
    def test_expected_body(self, case: str) -> None:
        """Each good config renders to exactly the expected REST body."""
        assert body_of(GOOD_JOBS[case]) == EXPECTED_BODIES[case]

    @pytest.mark.parametrize("case", sorted(GOOD_JOBS))
    def test_protobuf_accepts_and_round_trips(self, case: str, parse_custom_job: Any) -> None:
        """ParseDict accepts the body and MessageToDict gives it back unchanged."""
        body = body_of(GOOD_JOBS[case])
        assert parse_custom_job(body) == body

    def test_deterministic(self) -> None:
        """The same config gives byte-identical JSON, whatever the key order in YAML."""
        raw = GOOD_JOBS["short-form"]
        reordered = dict(reversed(list(raw.items())))
        reordered["env"] = dict(reversed(list(raw["env"].items())))
        assert json.dumps(body_of(raw)) == json.dumps(body_of(reordered))

    def test_secret_env_value_is_a_placeholder(self) -> None:
        """A {secure: ...} env value renders as the placeholder, never the ciphertext."""
        body = body_of(with_image(env={"TOKEN": {"secure": "v1:ciphertext"}}))
        env = body["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["env"]
        assert env == [{"name": "TOKEN", "value": SECRET_PLACEHOLDER}]
        assert "ciphertext" not in json.dumps(body)


class TestSpecData:
    """JobSpec.settings / run_inputs: what only the provider uses, and what replaces a job."""

    def test_settings_are_provider_side_only(self) -> None:
        """settings() holds the wait policy and adopt; the run inputs hold neither."""
        job = parse_job("mnist", GOOD_JOBS["job-settings"], STACK)
        assert job.settings() == {
            "wait": {"until": "succeeded", "timeout_s": 86400},
            "adopt": "projects/123456/locations/us-central1/customJobs/789",
        }
        assert set(job.run_inputs()) == {"request", "location"}

    def test_wait_change_does_not_replace(self) -> None:
        """Changing only wait changes settings(), never what the replace rule compares."""
        a = parse_job("mnist", with_image(wait="submitted"), STACK)
        b = parse_job("mnist", with_image(wait={"until": "succeeded", "timeout": "2h"}), STACK)
        assert not runs_differently(a.run_inputs(), b.run_inputs())
        assert a.settings() != b.settings()

    def test_region_change_replaces(self) -> None:
        """Moving a job to another region replaces it, as the provider's diff does."""
        a = parse_job("mnist", with_image(), STACK)
        b = parse_job("mnist", with_image(region="europe-west4"), STACK)
        assert runs_differently(a.run_inputs(), b.run_inputs())


class TestParseStack:
    """parse_stack: stack-level keys and issues across all jobs."""

    def test_reads_stack_settings(self) -> None:
        """gcp:* and vertex-training:* keys become StackSettings; jobs are parsed."""
        settings, jobs = parse_stack(
            {
                "gcp:project": "p",
                "gcp:region": "europe-west4",
                "vertex-training:backend": "vertex",
                "vertex-training:apiEndpoint": "127.0.0.1:50051",
                "vertex-training:jobs": {"a": with_image(), "b": with_image()},
                "gcp:zone": "europe-west4-a",
            },
            "dev",
        )
        assert settings == StackSettings(
            stack="dev", project="p", region="europe-west4", api_endpoint="127.0.0.1:50051"
        )
        assert sorted(jobs) == ["a", "b"]
        assert jobs["a"].region == "europe-west4"

    def test_collects_issues_of_all_jobs_and_keys(self) -> None:
        """Unknown project keys and every job's issues come back in one SpecError."""
        with pytest.raises(SpecError) as caught:
            parse_stack(
                {
                    "gcp:region": "us-central1",
                    "vertex-training:job": {},
                    "vertex-training:jobs": {
                        "a": with_image(accelerator={"type": "NVIDIA_TESLA_T4", "count": 3}),
                        "b": with_image(imgae="x"),
                        "c": with_image(),
                    },
                },
                "dev",
            )
        issues = caught.value.issues
        keys = [i.key for i in issues]
        assert "vertex-training:job" in keys
        assert "Did you mean jobs?" in issues[keys.index("vertex-training:job")].message
        assert "vertex-training:jobs.a.accelerator.count" in keys
        assert "vertex-training:jobs.b.imgae" in keys
        assert keys.count("gcp:project") == 1  # reported once, not once per job

    def test_invalid_backend(self) -> None:
        """A misspelt backend is reported with a suggestion."""
        with pytest.raises(SpecError) as caught:
            parse_stack({"vertex-training:backend": "lcoal"}, "dev")
        (issue,) = caught.value.issues
        assert (issue.key, issue.value) == ("vertex-training:backend", "lcoal")
        assert "Did you mean local?" in issue.message

    def test_jobs_must_be_a_mapping(self) -> None:
        """vertex-training:jobs that is not a mapping is an issue."""
        with pytest.raises(SpecError) as caught:
            parse_stack({"vertex-training:jobs": ["a"]}, "dev")
        assert caught.value.issues[0].key == "vertex-training:jobs"

    def test_stack_settings_alone(self) -> None:
        """parse_stack_settings validates the stack-wide keys without any jobs."""
        settings = parse_stack_settings(
            {"gcp:project": "p", "vertex-training:backend": "local"}, "local"
        )
        assert settings == StackSettings(stack="local", project="p", backend="local")
        with pytest.raises(SpecError) as caught:
            parse_stack_settings({"vertex-training:bakend": "local"}, "dev")
        assert "Did you mean backend?" in caught.value.issues[0].message

    def test_no_jobs_is_valid(self) -> None:
        """A stack without jobs parses to no jobs."""
        assert parse_stack({}, "dev")[1] == {}


class TestLoadStackFile:
    """load_stack_file: Pulumi.<stack>.yaml on disk."""

    def test_stack_name_and_secret(self, tmp_path: Path) -> None:
        """The stack name comes from the file name; secrets stay opaque."""
        path = tmp_path / "Pulumi.local.yaml"
        path.write_text(
            "encryptionsalt: v1:abc\n"
            "config:\n"
            "  vertex-training:backend: local\n"
            "  vertex-training:jobs:\n"
            "    mnist:\n"
            f"      image: {IMAGE}\n"
            "      env:\n"
            "        TOKEN:\n"
            "          secure: v1:ciphertext\n",
            encoding="utf-8",
        )
        stack = load_stack_file(path).check()
        settings, jobs = stack.settings, stack.resolved
        assert settings.stack == "local" and settings.backend == "local"
        assert jobs["mnist"].primary.env["TOKEN"] == SecretValue(secure="v1:ciphertext")

    def test_bad_file_name(self, tmp_path: Path) -> None:
        """A file not named Pulumi.<stack>.yaml is refused with the naming rule."""
        path = tmp_path / "dev.yaml"
        path.write_text("config: {}\n", encoding="utf-8")
        with pytest.raises(SpecError, match=r"Pulumi\.<stack>\.yaml"):
            load_stack_file(path)

    def test_bad_yaml(self, tmp_path: Path) -> None:
        """Broken YAML is reported with its line, not a traceback."""
        path = tmp_path / "Pulumi.dev.yaml"
        path.write_text("config:\n  a: [1, 2\n", encoding="utf-8")
        with pytest.raises(SpecError, match="not valid YAML at line"):
            load_stack_file(path)


class TestParseDuration:
    """parse_duration: the duration forms the config accepts."""

    @pytest.mark.parametrize(
        ("text", "seconds"),
        [
            ("90s", 90),
            ("30m", 1800),
            ("2h", 7200),
            ("1d", 86400),
            ("3600s", 3600),
            ("1h30m", 5400),
            (3600, 3600),
            ("120", 120),
            (60.0, 60),
            ("0s", 0),
        ],
    )
    def test_accepted(self, text: object, seconds: int) -> None:
        """Numbers of seconds and unit forms give whole seconds."""
        assert parse_duration(text) == seconds

    @pytest.mark.parametrize("text", ["", "2 hours", "1.5h", "h", True, -1, "1w", None])
    def test_refused(self, text: object) -> None:
        """Anything else is a ValueError that says what to write."""
        with pytest.raises(ValueError, match="write"):
            parse_duration(text)


class TestCatalog:
    """vertex_training.catalog.machines: the data the rules come from."""

    def test_sources_and_date(self) -> None:
        """The module names its sources and the date it was read."""
        assert machines.__doc__ is not None
        assert machines.CATALOGUE_DATE == "2026-11-21"
        assert machines.CATALOGUE_DATE in machines.__doc__
        for source in (
            "Configure compute resources for custom training",
            "Machine types",
            "accelerator_type.proto",
            "Accelerator availability by region",
        ):
            assert source in machines.__doc__

    @pytest.mark.parametrize(
        ("machine", "accelerator", "counts"),
        [
            ("n1-standard-4", "NVIDIA_TESLA_T4", (1, 2, 4)),
            ("n1-standard-4", "NVIDIA_TESLA_V100", (1, 2, 4, 8)),
            ("n1-standard-96", "NVIDIA_TESLA_V100", (8,)),
            ("a2-highgpu-1g", "NVIDIA_TESLA_A100", (1,)),
            ("a2-megagpu-16g", "NVIDIA_TESLA_A100", (16,)),
            ("a2-ultragpu-8g", "NVIDIA_A100_80GB", (8,)),
            ("a3-highgpu-8g", "NVIDIA_H100_80GB", (8,)),
            ("a3-megagpu-8g", "NVIDIA_H100_MEGA_80GB", (8,)),
            ("a4-highgpu-8g", "NVIDIA_B200", (8,)),
            ("g2-standard-12", "NVIDIA_L4", (1,)),
            ("g2-standard-48", "NVIDIA_L4", (4,)),
            ("ct5lp-hightpu-8t", "TPU_V5_LITEPOD", (8,)),
            ("cloud-tpu", "TPU_V2", (8,)),
        ],
    )
    def test_accelerator_counts(
        self, machine: str, accelerator: str, counts: tuple[int, ...]
    ) -> None:
        """Allowed accelerator counts per machine match the published tables."""
        assert machines.MACHINE_TYPES[machine].accelerators[accelerator] == counts

    def test_cpu_families_take_no_accelerators(self) -> None:
        """e2, n2, n2d, c2, c2d and m1 machines are CPU only."""
        for family in ("e2", "n2", "n2d", "c2", "c2d", "m1"):
            assert machines.FAMILY_ACCELERATORS[family] == ()

    def test_every_accelerator_has_a_machine(self) -> None:
        """Each catalogued accelerator is taken by at least one machine type."""
        for accelerator in machines.ACCELERATOR_TYPES:
            assert machines.machines_taking(accelerator), accelerator

    def test_region_table_uses_known_names(self) -> None:
        """The availability table names only training regions and known accelerators."""
        for region, offered in machines.TRAINING_ACCELERATORS_BY_REGION.items():
            assert region in machines.TRAINING_REGIONS
            assert offered <= set(machines.ACCELERATOR_TYPES)

    def test_accelerator_names_match_the_api(self) -> None:
        """Catalogue accelerator names are members of aiplatform_v1.AcceleratorType."""
        types = pytest.importorskip("google.cloud.aiplatform_v1.types.accelerator_type")
        members = set(types.AcceleratorType.__members__)
        assert set(machines.ACCELERATOR_TYPES) <= members
        assert set(machines.UNAVAILABLE_ACCELERATORS) <= members


def _reversed_mappings(value: Any) -> Any:
    """``value`` with the keys of every mapping in it in reverse order."""
    if isinstance(value, dict):
        return {k: _reversed_mappings(v) for k, v in reversed(value.items())}
    if isinstance(value, list):
        return [_reversed_mappings(v) for v in value]
    return value


class TestMappingOrder:
    """The engine hands the provider the stack config with its mappings in no fixed order;
    the requests, and so the identity labels and diffs, must not depend on it."""

    @pytest.mark.parametrize("stack_file", sorted(REPO.glob("stacks/Pulumi.*.yaml")), ids=str)
    def test_every_stack_renders_the_same_in_any_mapping_order(
        self, stack_file: Path, tmp_path: Path
    ) -> None:
        """Each stack of stacks/, with every mapping's keys reversed, renders the same."""
        (tmp_path / "Pulumi.yaml").symlink_to(REPO / "Pulumi.yaml")
        (tmp_path / "trainer").symlink_to(REPO / "trainer")
        (tmp_path / "stacks").mkdir()
        reordered = tmp_path / "stacks" / stack_file.name
        document = yaml.safe_load(stack_file.read_text(encoding="utf-8"))
        reordered.write_text(yaml.safe_dump(_reversed_mappings(document), sort_keys=False))
        assert reordered.read_text() != yaml.safe_dump(document, sort_keys=False)
        rendered = render(str(stack_file))
        assert rendered, f"{stack_file} defines no job"
        assert render(str(reordered)) == rendered


class TestRetry:
    """``retry:``: retryable classes, bounded attempts, regions that offer the job."""

    def test_attempts_take_own_region_and_strategy_first(self) -> None:
        """Attempt k runs in the k-th region and strategy of the job's own plus the lists."""
        job = parse_job(
            "mnist",
            with_image(
                retry={
                    "when": ["capacity", "preemption"],
                    "attempts": 3,
                    "regions": ["us-east1", "europe-west4"],
                    "strategies": ["SPOT"],
                }
            ),
            STACK,
        )
        assert job.settings()["retry"] == {
            "when": ["capacity", "preemption"],
            "attempts": [
                {"region": "us-central1", "strategy": "STANDARD"},
                {"region": "us-east1", "strategy": "SPOT"},
                {"region": "europe-west4", "strategy": "SPOT"},
            ],
        }

    def test_no_retry_leaves_settings_as_before(self) -> None:
        """A job without retry keeps the settings of earlier releases (no retry key)."""
        assert "retry" not in parse_job("mnist", with_image(), STACK).settings()

    def test_user_code_is_never_retried(self) -> None:
        """user_code in when is refused, naming the retryable classes."""
        (issue,) = issues_of(with_image(retry={"when": ["user_code"]}))
        assert issue.key == f"{PREFIX}.retry.when[0]"
        assert "not retried" in issue.message and "capacity" in issue.message

    def test_unknown_class_suggests(self) -> None:
        """A misspelt class gets a did-you-mean."""
        (issue,) = issues_of(with_image(retry={"when": ["capacty"]}))
        assert "Did you mean capacity" in issue.message

    def test_attempts_are_bounded(self) -> None:
        """More attempts than MAX_RETRY_ATTEMPTS is refused with the bound."""
        (issue,) = issues_of(with_image(retry={"when": ["capacity"], "attempts": 9}))
        assert issue.key == f"{PREFIX}.retry.attempts"
        assert "2 to 5" in issue.message

    def test_region_must_run_training(self) -> None:
        """A retry region that is no training region is refused."""
        (issue,) = issues_of(with_image(retry={"when": ["capacity"], "regions": ["mars-1"]}))
        assert issue.key == f"{PREFIX}.retry.regions[0]"
        assert "remove it from retry.regions" in issue.message

    def test_region_without_the_accelerator_warns_while_rows_unconfirmed(self) -> None:
        """A region the catalogue lists without the accelerator warns (rows not re-read)."""
        job = parse_job(
            "mnist",
            with_image(
                machine="a3-highgpu-8g",
                accelerator={"type": "NVIDIA_H100_80GB", "count": 8},
                retry={"when": ["capacity"], "regions": ["us-west2"]},
            ),
            STACK,
        )
        assert any("retry.regions[0]" in w and "us-west2" in w for w in job.warnings)


class TestRetryRegionalKeys:
    """Keys bound to the job's region keep its attempts there."""

    def test_a_kms_key_keeps_attempts_in_the_jobs_region(self) -> None:
        """kms_key with a retry region elsewhere is refused, naming both."""
        key = "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
        (issue,) = issues_of(
            with_image(kms_key=key, retry={"when": ["capacity"], "regions": ["us-east1"]})
        )
        assert issue.key == f"{PREFIX}.retry.regions"
        assert "kms_key" in issue.message and "us-east1" in issue.message

    def test_retrying_in_the_same_region_keeps_the_key(self) -> None:
        """kms_key with attempts in the job's own region is fine."""
        key = "projects/p/locations/us-central1/keyRings/r/cryptoKeys/k"
        job = parse_job("mnist", with_image(kms_key=key, retry={"when": ["capacity"]}), STACK)
        assert job.retry is not None
