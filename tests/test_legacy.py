"""Unit tests of vertex_training.stackconfig.legacy: AI Platform trainingInput -> native
job keys."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from vertex_training.catalog import images, machines
from vertex_training.errors import Issue, SpecError
from vertex_training.stackconfig import JobSpec, StackSettings, legacy, parse_job
from vertex_training.stackconfig.legacy import (
    LEGACY_MACHINES,
    SCALE_TIERS,
    Translation,
    translate_job,
)

BASE = "vertex-training:jobs.old"
TI = f"{BASE}.training_input"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
PACKAGE_URI = "gs://my-bucket/trainer-0.1.tar.gz"
#: A day on which the runtime 2.11 image was supported (and not within 90 days of its end).
TF_2_11_SUPPORTED = datetime.date(2023, 6, 1)
#: The least a runtime-version job needs besides its machines.
PROGRAM = {"packageUris": [PACKAGE_URI], "pythonModule": "trainer.task", "runtimeVersion": "2.11"}
IMAGE = "us-docker.pkg.dev/my-project/trainers/census:1"


def translate(training_input: dict[str, Any], **job: Any) -> Translation:
    """The translation of a stack job carrying ``training_input``."""
    return translate_job(BASE, {"training_input": training_input, **job})


def native(training_input: dict[str, Any], **job: Any) -> dict[str, Any]:
    """Native keys of a translation that must have no issues."""
    translation = translate(training_input, **job)
    assert translation.issues == (), translation.issues
    return translation.native


def refusals(training_input: dict[str, Any], **job: Any) -> list[Issue]:
    """The issues of a translation that must be refused."""
    translation = translate(training_input, **job)
    assert translation.issues, translation.native
    return list(translation.issues)


def warnings(training_input: dict[str, Any], **job: Any) -> list[Issue]:
    """The warnings of a translation."""
    return list(translate(training_input, **job).warnings)


def custom(master: str, **more: Any) -> dict[str, Any]:
    """A CUSTOM tier runtime-version job with ``master`` and ``more`` keys."""
    return {"scaleTier": "CUSTOM", "masterType": master, **PROGRAM, **more}


def parsed(training_input: dict[str, Any], **job: Any) -> JobSpec:
    """A translated job parsed by parse_job (the spec hook) on a day TF 2.11 was supported."""
    return parse_job(
        "old", {"training_input": training_input, **job}, STACK, today=TF_2_11_SUPPORTED
    )


def parse_issues(training_input: dict[str, Any], **job: Any) -> list[Issue]:
    """The issues parse_job reports for a translated job."""
    with pytest.raises(SpecError) as caught:
        parsed(training_input, **job)
    return caught.value.issues


class TestLegacyMachines:
    """Each legacy machine name, through the table."""

    @pytest.mark.parametrize(
        ("name", "machine", "accelerator"),
        [
            ("standard", "n1-standard-4", None),
            ("large_model", "n1-highmem-8", None),
            ("complex_model_s", "n1-standard-8", None),
            ("complex_model_m", "n1-highcpu-16", None),
            ("complex_model_l", "n1-highcpu-32", None),
            ("standard_gpu", "n1-standard-4", {"type": "NVIDIA_TESLA_T4", "count": 1}),
            ("complex_model_m_gpu", "n1-highcpu-16", {"type": "NVIDIA_TESLA_T4", "count": 4}),
            ("complex_model_l_gpu", "n1-highcpu-32", {"type": "NVIDIA_TESLA_T4", "count": 4}),
            ("standard_p100", "n1-standard-4", {"type": "NVIDIA_TESLA_P100", "count": 1}),
            ("complex_model_m_p100", "n1-highcpu-16", {"type": "NVIDIA_TESLA_P100", "count": 4}),
            ("standard_v100", "n1-standard-4", {"type": "NVIDIA_TESLA_V100", "count": 1}),
            ("large_model_v100", "n1-highmem-8", {"type": "NVIDIA_TESLA_V100", "count": 1}),
            ("complex_model_m_v100", "n1-highcpu-16", {"type": "NVIDIA_TESLA_V100", "count": 4}),
            ("complex_model_l_v100", "n1-highcpu-32", {"type": "NVIDIA_TESLA_V100", "count": 8}),
            ("cloud_tpu", "cloud-tpu", {"type": "TPU_V2", "count": 8}),
        ],
    )
    def test_machine(self, name: str, machine: str, accelerator: dict[str, Any] | None) -> None:
        """masterType <legacy name> becomes this Vertex AI machine and accelerator."""
        keys = native(custom(name))
        assert keys["machine"] == machine
        assert keys.get("accelerator") == accelerator

    @pytest.mark.parametrize("name", sorted(LEGACY_MACHINES))
    def test_valid_on_vertex(self, name: str) -> None:
        """Each row is a machine and accelerator count Vertex AI custom training accepts."""
        row = LEGACY_MACHINES[name]
        machine = machines.MACHINE_TYPES[row.machine]
        assert row.reasoning and row.legacy
        if row.accelerator is not None:
            gpu, count = row.accelerator
            gpu = legacy.RETIRED_GPU_REPLACEMENTS.get(gpu, gpu)
            allowed = machine.accelerators[gpu]
            assert count in allowed or (name == "complex_model_l_gpu" and max(allowed) == 4)

    @pytest.mark.parametrize("name", ["standard_gpu", "complex_model_m_gpu", "complex_model_l_gpu"])
    def test_k80_warned(self, name: str) -> None:
        """The K80 machines get T4s with a warning on masterType."""
        (warning,) = warnings(custom(name))
        assert warning.key == f"{TI}.masterType"
        assert "NVIDIA_TESLA_K80 GPUs are retired on Vertex AI" in warning.message

    def test_eight_k80_become_four_t4(self) -> None:
        """complex_model_l_gpu's eight K80s become four T4s, and the warning says so."""
        (warning,) = warnings(custom("complex_model_l_gpu"))
        assert "so 8 K80s become 4" in warning.message

    def test_compute_engine_name_passes_through(self) -> None:
        """A Compute Engine machine type is kept as written."""
        assert native(custom("n1-highmem-8"))["machine"] == "n1-highmem-8"

    def test_unknown_name(self) -> None:
        """A misspelled legacy name is refused with a suggestion."""
        (issue,) = refusals(custom("standart"))
        assert issue.key == f"{TI}.masterType"
        assert "Did you mean standard?" in issue.message

    def test_compute_engine_name_validated_natively(self) -> None:
        """n1-highcpu-8 passes translation; native validation refuses it on masterType."""
        (issue,) = parse_issues(custom("n1-highcpu-8"))
        assert issue.key == f"{TI}.masterType"
        assert "not a machine type Vertex AI custom training offers" in issue.message


class TestScaleTiers:
    """Each scale tier, through the table."""

    def test_basic(self) -> None:
        """BASIC: one standard machine."""
        keys = native({"scaleTier": "BASIC", **PROGRAM})
        assert keys["machine"] == "n1-standard-4"
        assert "accelerator" not in keys and "workers" not in keys

    def test_default_is_basic(self) -> None:
        """No scaleTier means BASIC, as gcloud defaulted."""
        assert native(dict(PROGRAM))["machine"] == "n1-standard-4"

    def test_basic_gpu(self) -> None:
        """BASIC_GPU: a standard machine with one T4 (for its K80), warned on scaleTier."""
        translation = translate({"scaleTier": "BASIC_GPU", **PROGRAM})
        assert translation.native["accelerator"] == {"type": "NVIDIA_TESLA_T4", "count": 1}
        assert [w.key for w in translation.warnings] == [f"{TI}.scaleTier"]

    def test_basic_tpu(self) -> None:
        """BASIC_TPU: one cloud-tpu machine with 8 TPU v2 cores."""
        keys = native({"scaleTier": "BASIC_TPU", **PROGRAM})
        assert keys["machine"] == "cloud-tpu"
        assert keys["accelerator"] == {"type": "TPU_V2", "count": 8}

    def test_standard_1(self) -> None:
        """STANDARD_1: master, 4 workers, 3 parameter servers; estimated machines warned."""
        translation = translate({"scaleTier": "STANDARD_1", **PROGRAM})
        keys = translation.native
        assert keys["machine"] == "n1-standard-8"
        assert keys["workers"] == {"replicas": 4, "machine": "n1-standard-8"}
        assert keys["parameter_servers"] == {"replicas": 3, "machine": "n1-standard-4"}
        assert "never published the machines of STANDARD_1" in translation.warnings[0].message

    def test_premium_1(self) -> None:
        """PREMIUM_1: master, 19 workers, 11 parameter servers; estimated machines warned."""
        translation = translate({"scaleTier": "PREMIUM_1", **PROGRAM})
        keys = translation.native
        assert keys["machine"] == "n1-highcpu-32"
        assert keys["workers"] == {"replicas": 19, "machine": "n1-highcpu-32"}
        assert keys["parameter_servers"] == {"replicas": 11, "machine": "n1-highmem-8"}
        assert translation.warnings[0].key == f"{TI}.scaleTier"

    def test_custom(self) -> None:
        """CUSTOM: the machines come from the *Type keys."""
        keys = native(custom("n1-highcpu-16", workerType="n1-highcpu-8", workerCount=2))
        assert keys["workers"] == {"replicas": 2, "machine": "n1-highcpu-8"}

    def test_custom_requires_master_type(self) -> None:
        """CUSTOM without masterType is refused."""
        (issue,) = refusals({"scaleTier": "CUSTOM", **PROGRAM})
        assert issue.key == f"{TI}.masterType"
        assert "scaleTier CUSTOM requires masterType" in issue.message

    def test_types_only_with_custom(self) -> None:
        """masterType with a predefined tier is refused."""
        (issue,) = refusals({"scaleTier": "BASIC", "masterType": "standard", **PROGRAM})
        assert issue.key == f"{TI}.masterType"
        assert "applies only with scaleTier: CUSTOM" in issue.message

    def test_unknown_tier(self) -> None:
        """A misspelled tier is refused with a suggestion."""
        (issue,) = refusals({"scaleTier": "STANDARD1", **PROGRAM})
        assert "Did you mean STANDARD_1?" in issue.message

    def test_tier_table(self) -> None:
        """Every tier row has its published description and reasoning, and legacy machines."""
        for tier in SCALE_TIERS.values():
            assert tier.published and tier.reasoning
            for machine in (tier.master, tier.worker, tier.parameter_server):
                assert machine is None or machine in LEGACY_MACHINES


class TestReplicaCounts:
    """workerCount / parameterServerCount / evaluatorCount with their types."""

    def test_count_requires_type(self) -> None:
        """workerCount without workerType is refused on workerType."""
        (issue,) = refusals(custom("standard", workerCount=2))
        assert issue.key == f"{TI}.workerType"
        assert "workerCount 2 requires workerType" in issue.message

    def test_type_without_count_warned(self) -> None:
        """workerType without a count runs no workers: warned, not dropped silently."""
        translation = translate(custom("standard", workerType="standard"))
        assert "workers" not in translation.native
        assert translation.warnings[0].key == f"{TI}.workerType"

    def test_counts_as_text(self) -> None:
        """int64 counts written as JSON strings ("9") are accepted."""
        keys = native(
            custom("standard", parameterServerType="large_model", parameterServerCount="3")
        )
        assert keys["parameter_servers"]["replicas"] == 3

    def test_negative_count(self) -> None:
        """A negative count is refused."""
        (issue,) = refusals(custom("standard", workerType="standard", workerCount=-1))
        assert issue.key == f"{TI}.workerCount"

    def test_evaluators(self) -> None:
        """evaluatorType and evaluatorCount become evaluators."""
        keys = native(custom("standard", evaluatorType="complex_model_m", evaluatorCount=1))
        assert keys["evaluators"] == {"replicas": 1, "machine": "n1-highcpu-16"}


class TestReplicaConfig:
    """masterConfig / workerConfig / ...: accelerators, disks, containers, TPU versions."""

    def test_accelerator_config(self) -> None:
        """acceleratorConfig {count, type} becomes the pool's accelerator."""
        config = {"acceleratorConfig": {"count": 2, "type": "NVIDIA_TESLA_V100"}}
        keys = native(custom("n1-standard-8", masterConfig=config))
        assert keys["accelerator"] == {"type": "NVIDIA_TESLA_V100", "count": 2}

    def test_accelerator_count_as_text(self) -> None:
        """The count may be a JSON string."""
        config = {"acceleratorConfig": {"count": "4", "type": "NVIDIA_TESLA_T4"}}
        assert native(custom("n1-highcpu-16", masterConfig=config))["accelerator"]["count"] == 4

    def test_k80_accelerator_config(self) -> None:
        """acceleratorConfig type NVIDIA_TESLA_K80 becomes T4, warned on acceleratorConfig."""
        config = {"acceleratorConfig": {"count": 2, "type": "NVIDIA_TESLA_K80"}}
        translation = translate(custom("n1-standard-8", masterConfig=config))
        assert translation.native["accelerator"] == {"type": "NVIDIA_TESLA_T4", "count": 2}
        assert translation.warnings[0].key == f"{TI}.masterConfig.acceleratorConfig"

    def test_accelerator_on_legacy_machine(self) -> None:
        """acceleratorConfig with a legacy GPU machine name is refused."""
        config = {"acceleratorConfig": {"count": 1, "type": "NVIDIA_TESLA_T4"}}
        (issue,) = refusals(custom("standard_gpu", masterConfig=config))
        assert issue.key == f"{TI}.masterConfig.acceleratorConfig"

    def test_accelerator_needs_type(self) -> None:
        """A count without a type is refused."""
        (issue,) = refusals(
            custom("n1-standard-8", masterConfig={"acceleratorConfig": {"count": 1}})
        )
        assert issue.key == f"{TI}.masterConfig.acceleratorConfig.type"

    def test_worker_without_gpu_does_not_inherit(self) -> None:
        """A CPU worker of a GPU master gets accelerator: null, not the master's GPUs."""
        keys = native(custom("standard_p100", workerType="standard", workerCount=1))
        assert keys["workers"]["accelerator"] is None

    def test_disk_config(self) -> None:
        """diskConfig becomes disk; a worker without one keeps the legacy default size."""
        config = {"diskConfig": {"bootDiskType": "pd-standard", "bootDiskSizeGb": 500}}
        keys = native(custom("standard", masterConfig=config, workerType="standard", workerCount=1))
        assert keys["disk"] == {"type": "pd-standard", "size_gb": 500}
        assert keys["workers"]["disk"] == {"size_gb": 100}

    def test_disk_rekeyed(self) -> None:
        """A disk Vertex AI refuses is reported on bootDiskSizeGb."""
        config = {"diskConfig": {"bootDiskSizeGb": 50}}
        (issue,) = parse_issues(custom("standard", masterConfig=config))
        assert issue.key == f"{TI}.masterConfig.diskConfig.bootDiskSizeGb"

    def test_worker_image(self) -> None:
        """workerConfig.imageUri gives the workers their own container."""
        keys = native(
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "masterConfig": {"imageUri": IMAGE},
                "workerType": "standard",
                "workerCount": 2,
                "workerConfig": {"imageUri": f"{IMAGE}-worker"},
            }
        )
        assert keys["workers"]["image"] == f"{IMAGE}-worker"

    def test_worker_command_keeps_master_image(self) -> None:
        """A worker containerCommand without its own image runs the master's image."""
        keys = native(
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "masterConfig": {"imageUri": IMAGE},
                "workerType": "standard",
                "workerCount": 1,
                "workerConfig": {"containerCommand": ["python", "worker.py"]},
            }
        )
        assert keys["workers"]["image"] == IMAGE
        assert keys["workers"]["command"] == ["python", "worker.py"]

    def test_unknown_replica_key(self) -> None:
        """A misspelled ReplicaConfig key is refused with a suggestion."""
        (issue,) = refusals(custom("standard", masterConfig={"imageUrl": IMAGE}))
        assert issue.key == f"{TI}.masterConfig.imageUrl"
        assert "Did you mean imageUri?" in issue.message


class TestTpu:
    """The legacy TPU layouts become one cloud-tpu pool."""

    def test_master_and_tpu_worker(self) -> None:
        """masterType + a cloud_tpu worker: one cloud-tpu pool; the master VM is warned about."""
        translation = translate(
            {
                "scaleTier": "CUSTOM",
                "masterType": "n1-highcpu-16",
                "workerType": "cloud_tpu",
                "workerCount": 1,
                "workerConfig": {
                    "acceleratorConfig": {"type": "TPU_V3", "count": 8},
                    "tpuTfVersion": "2.11",
                },
                **PROGRAM,
            }
        )
        assert translation.issues == ()
        keys = translation.native
        assert keys["machine"] == "cloud-tpu"
        assert keys["accelerator"] == {"type": "TPU_V3", "count": 8}
        assert "workers" not in keys
        assert [w.key for w in translation.warnings] == [
            f"{TI}.masterType",
            f"{TI}.workerConfig.tpuTfVersion",
        ]

    def test_two_tpu_workers(self) -> None:
        """More than one cloud_tpu worker is refused."""
        (issue,) = refusals(custom("standard", workerType="cloud_tpu", workerCount=2))
        assert issue.key == f"{TI}.workerCount"

    def test_tpu_with_parameter_servers(self) -> None:
        """A TPU job with parameter servers is refused: one pool."""
        (issue,) = refusals(
            custom("cloud_tpu", parameterServerType="standard", parameterServerCount=1)
        )
        assert issue.key == f"{TI}.parameterServerType"


class TestProgram:
    """What runs: a Python package on a runtime version, or a custom container."""

    def test_python_package(self) -> None:
        """packageUris + pythonModule + runtimeVersion + pythonVersion."""
        keys = native({**PROGRAM, "pythonVersion": "3.7"})
        assert keys["python_package"] == {"package_uris": [PACKAGE_URI], "module": "trainer.task"}
        assert (keys["runtime_version"], keys["python_version"]) == ("2.11", "3.7")

    def test_no_runtime_version_placeholder(self) -> None:
        """A Python package with no runtimeVersion (AI Platform ran 1.0, which has no Vertex
        AI image) is written with a TensorFlow framework whose version is a placeholder,
        and a warning on runtimeVersion that says so."""
        translation = legacy.translate_training_input(
            {"packageUris": [PACKAGE_URI], "pythonModule": "trainer.task"},
            legacy_base=TI,
            native_base="vertex-training:jobs.old",
        )
        assert not translation.issues
        assert translation.native["framework"] == {
            "name": "tensorflow",
            "version": images.VERSION_PLACEHOLDER,
        }
        (warning,) = translation.warnings
        assert warning.key == f"{TI}.runtimeVersion" and "fill in" in warning.message

    def test_module_requires_packages(self) -> None:
        """pythonModule without packageUris is refused."""
        (issue,) = refusals({"pythonModule": "trainer.task", "runtimeVersion": "2.11"})
        assert issue.key == f"{TI}.packageUris"

    def test_nothing_to_run(self) -> None:
        """Neither a package nor a container: refused, naming the gcloud flags."""
        (issue,) = refusals({"scaleTier": "BASIC"})
        assert "nothing to run" in issue.message and "--module-name" in issue.message

    def test_container(self) -> None:
        """masterConfig.imageUri, containerCommand and containerArgs."""
        master = {
            "imageUri": IMAGE,
            "containerCommand": ["python", "-m", "t"],
            "containerArgs": [1],
        }
        keys = native({"masterConfig": master})
        assert (keys["image"], keys["command"], keys["args"]) == (
            IMAGE,
            ["python", "-m", "t"],
            ["1"],
        )

    def test_container_with_runtime_version(self) -> None:
        """A custom container with runtimeVersion is refused."""
        (issue,) = refusals({"masterConfig": {"imageUri": IMAGE}, "runtimeVersion": "2.11"})
        assert issue.key == f"{TI}.runtimeVersion"

    def test_container_with_packages(self) -> None:
        """A custom container with packageUris is refused."""
        issues = refusals({"masterConfig": {"imageUri": IMAGE}, "packageUris": [PACKAGE_URI]})
        assert issues[0].key == f"{TI}.packageUris"

    def test_container_args_and_args(self) -> None:
        """containerArgs and args together are refused (the legacy rule)."""
        master = {"imageUri": IMAGE, "containerArgs": ["--a"]}
        (issue,) = refusals({"masterConfig": master, "args": ["--b"]})
        assert issue.key == f"{TI}.masterConfig.containerArgs"

    def test_args_as_text(self) -> None:
        """YAML numbers and booleans in args become text."""
        assert native({**PROGRAM, "args": ["--epochs", 3, "--flag", True]})["args"] == [
            "--epochs",
            "3",
            "--flag",
            "true",
        ]

    def test_runtime_version_number(self) -> None:
        """runtimeVersion: 2.1 as a YAML number is read as gcloud read it, with a warning."""
        translation = translate({**PROGRAM, "runtimeVersion": 2.1})
        assert translation.native["runtime_version"] == "2.1"
        assert '"2.10"' in translation.warnings[0].message

    def test_runtime_version_rekeyed(self) -> None:
        """An image refusal names training_input.runtimeVersion (1.14's placeholder too)."""
        (issue,) = parse_issues({**PROGRAM, "runtimeVersion": "1.14"})
        assert issue.key == f"{TI}.runtimeVersion"
        assert "placeholder" in issue.message

    def test_runtime_past_end_of_support_warned(self) -> None:
        """Runtime 2.11's image past end of support, still run by Vertex AI: a warning."""
        spec = parse_job(
            "old", {"training_input": custom("standard")}, STACK, today=datetime.date(2024, 6, 1)
        )
        (warning,) = [w for w in spec.warnings if "end of support" in w]
        assert warning.startswith(f"{TI}.runtimeVersion: TensorFlow 2.11 (Python 3.7)")
        assert "Vertex AI runs them until 2024-11-15" in warning

    def test_runtime_past_end_of_availability_refused(self) -> None:
        """Past the end of availability: refused on runtimeVersion, naming what to write."""
        with pytest.raises(SpecError) as caught:
            parse_job(
                "old",
                {"training_input": custom("standard")},
                STACK,
                today=datetime.date(2025, 7, 1),
            )
        (issue,) = caught.value.issues
        assert issue.key == f"{TI}.runtimeVersion"
        assert "reached end of availability on 2024-11-15" in issue.message
        assert 'framework: {name: tensorflow, version: "2.13"}' in issue.message


class TestJobDir:
    """jobDir: the output directory, and still --job-dir for the application."""

    def test_output_and_argument(self) -> None:
        """base_output_directory, and --job-dir <dir> appended to args."""
        keys = native({**PROGRAM, "jobDir": "gs://my-bucket/out", "args": ["--epochs", "3"]})
        assert keys["base_output_directory"] == "gs://my-bucket/out"
        assert keys["args"] == ["--epochs", "3", "--job-dir", "gs://my-bucket/out"]

    def test_not_twice(self) -> None:
        """args that pass --job-dir already are left alone."""
        keys = native({**PROGRAM, "jobDir": "gs://b/out", "args": ["--job-dir=gs://b/out"]})
        assert keys["args"] == ["--job-dir=gs://b/out"]

    def test_pools_with_own_args(self) -> None:
        """A pool with its own containerArgs gets --job-dir too."""
        keys = native(
            {
                "scaleTier": "CUSTOM",
                "masterType": "standard",
                "masterConfig": {"imageUri": IMAGE},
                "workerType": "standard",
                "workerCount": 1,
                "workerConfig": {"containerArgs": ["--role", "worker"]},
                "jobDir": "gs://b/out",
            }
        )
        assert keys["workers"]["args"] == ["--role", "worker", "--job-dir", "gs://b/out"]

    def test_in_request(self) -> None:
        """The request carries baseOutputDirectory and the --job-dir argument."""
        body = parsed({**PROGRAM, "jobDir": "gs://b/out"}).request_body()
        assert body["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://b/out"}
        package = body["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
        assert package["args"] == ["--job-dir", "gs://b/out"]


class TestScheduling:
    """scheduling: maxRunningTime, maxWaitTime, priority."""

    def test_max_running_time(self) -> None:
        """maxRunningTime becomes the timeout."""
        assert native({**PROGRAM, "scheduling": {"maxRunningTime": "7200s"}})["scheduling"] == {
            "timeout": "7200s"
        }

    def test_fractional_seconds(self) -> None:
        """A fractional Duration rounds up to whole seconds."""
        keys = native({**PROGRAM, "scheduling": {"maxRunningTime": "1.5s"}})
        assert keys["scheduling"] == {"timeout": "2s"}

    def test_bad_duration(self) -> None:
        """A duration not in "<seconds>s" form is refused."""
        (issue,) = refusals({**PROGRAM, "scheduling": {"maxRunningTime": "2h"}})
        assert issue.key == f"{TI}.scheduling.maxRunningTime"

    def test_max_wait_time_warned(self) -> None:
        """maxWaitTime has no equivalent for standard scheduling: warned by name."""
        (warning,) = warnings({**PROGRAM, "scheduling": {"maxWaitTime": "3600s"}})
        assert warning.key == f"{TI}.scheduling.maxWaitTime"
        assert "FLEX_START" in warning.message

    def test_priority_warned(self) -> None:
        """priority has no equivalent: warned by name."""
        (warning,) = warnings({**PROGRAM, "scheduling": {"priority": 5}})
        assert warning.key == f"{TI}.scheduling.priority"

    def test_zero_timeout_rekeyed(self) -> None:
        """A zero maxRunningTime is refused natively, on maxRunningTime."""
        (issue,) = parse_issues({**PROGRAM, "scheduling": {"maxRunningTime": "0s"}})
        assert issue.key == f"{TI}.scheduling.maxRunningTime"


class TestJobSettings:
    """Region, identity, network, encryption, web access, TF_CONFIG naming."""

    def test_settings(self) -> None:
        """Each setting lands on its native key."""
        keys = native(
            {
                **PROGRAM,
                "region": "europe-west4",
                "serviceAccount": "trainer@my-project.iam.gserviceaccount.com",
                "network": "projects/12345/global/networks/vpc",
                "encryptionConfig": {
                    "kmsKeyName": "projects/p/locations/europe-west4/keyRings/r/cryptoKeys/k"
                },
                "enableWebAccess": True,
                "useChiefInTfConfig": True,
            }
        )
        assert keys["region"] == "europe-west4"
        assert keys["service_account"] == "trainer@my-project.iam.gserviceaccount.com"
        assert keys["network"] == "projects/12345/global/networks/vpc"
        assert keys["kms_key"].endswith("/cryptoKeys/k")
        assert keys["enable_web_access"] is True

    def test_chief_false_warned(self) -> None:
        """useChiefInTfConfig: false is warned about (Vertex AI always says chief)."""
        (warning,) = warnings({**PROGRAM, "useChiefInTfConfig": False})
        assert warning.key == f"{TI}.useChiefInTfConfig" and "'chief'" in warning.message

    def test_unknown_key(self) -> None:
        """A misspelled trainingInput key is refused with a suggestion."""
        (issue,) = refusals({**PROGRAM, "jobdir": "gs://b/out"})
        assert issue.key == f"{TI}.jobdir" and "Did you mean jobDir?" in issue.message

    def test_region_rekeyed(self) -> None:
        """A region Vertex AI does not train in is reported on training_input.region."""
        (issue,) = parse_issues({**PROGRAM, "region": "us-central9"})
        assert issue.key == f"{TI}.region"

    def test_kms_key_rekeyed(self) -> None:
        """A key in another region is reported on encryptionConfig.kmsKeyName."""
        key = "projects/p/locations/europe-west4/keyRings/r/cryptoKeys/k"
        (issue,) = parse_issues({**PROGRAM, "encryptionConfig": {"kmsKeyName": key}})
        assert issue.key == f"{TI}.encryptionConfig.kmsKeyName"


#: The hyperparameters block of a legacy tuning job (every key set).
HYPERPARAMETERS: dict[str, Any] = {
    "goal": "MAXIMIZE",
    "hyperparameterMetricTag": "accuracy",
    "maxTrials": 30,
    "maxParallelTrials": 3,
    "maxFailedTrials": 2,
    "enableTrialEarlyStopping": True,
    "algorithm": "RANDOM_SEARCH",
    "params": [
        {
            "parameterName": "learning_rate",
            "type": "DOUBLE",
            "minValue": 0.0001,
            "maxValue": 0.1,
            "scaleType": "UNIT_LOG_SCALE",
        },
        {
            "parameterName": "hidden1",
            "type": "INTEGER",
            "minValue": 40,
            "maxValue": 400,
            "scaleType": "UNIT_LINEAR_SCALE",
        },
        {"parameterName": "layers", "type": "DISCRETE", "discreteValues": [1, 2, 4]},
        {"parameterName": "cell", "type": "CATEGORICAL", "categoricalValues": ["lstm", "gru"]},
    ],
}


class TestHyperparameters:
    """hyperparameters -> the native study: block."""

    def study(self, **changes: Any) -> dict[str, Any]:
        return native({**PROGRAM, "hyperparameters": {**HYPERPARAMETERS, **changes}})["study"]

    def test_full(self) -> None:
        """Every legacy key lands on its study key."""
        assert self.study() == {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {
                "learning_rate": {"type": "double", "min": 0.0001, "max": 0.1, "scale": "log"},
                "hidden1": {"type": "integer", "min": 40, "max": 400, "scale": "linear"},
                "layers": {"type": "discrete", "values": [1, 2, 4]},
                "cell": {"type": "categorical", "values": ["lstm", "gru"]},
            },
            "algorithm": "random",
            "early_stopping": {"decay_curve": {"use_elapsed_duration": False}},
            "max_trials": 30,
            "parallel_trials": 3,
            "max_failed_trials": 2,
        }

    def test_defaults(self) -> None:
        """Legacy defaults: MAXIMIZE, training/hptuning/metric, 1 trial, 1 at a time."""
        hyperparameters = {"params": HYPERPARAMETERS["params"][:1]}
        study = native({**PROGRAM, "hyperparameters": hyperparameters})["study"]
        assert study["metrics"] == [{"id": "training/hptuning/metric", "goal": "MAXIMIZE"}]
        assert (study["max_trials"], study["parallel_trials"]) == (1, 1)
        assert "algorithm" not in study and "early_stopping" not in study

    @pytest.mark.parametrize(
        ("algorithm", "expected"),
        [("ALGORITHM_UNSPECIFIED", None), ("GRID_SEARCH", "grid"), ("RANDOM_SEARCH", "random")],
    )
    def test_algorithm(self, algorithm: str, expected: str | None) -> None:
        """Each legacy algorithm (unspecified: Vertex AI's default search)."""
        assert self.study(algorithm=algorithm).get("algorithm") == expected

    @pytest.mark.parametrize(
        ("scale", "expected"),
        [
            ("UNIT_LINEAR_SCALE", "linear"),
            ("UNIT_LOG_SCALE", "log"),
            ("UNIT_REVERSE_LOG_SCALE", "reverse_log"),
            ("NONE", None),
        ],
    )
    def test_scale(self, scale: str, expected: str | None) -> None:
        """Each scaleType."""
        param = {
            "parameterName": "x",
            "type": "DOUBLE",
            "minValue": 1,
            "maxValue": 2,
            "scaleType": scale,
        }
        assert self.study(params=[param])["parameters"]["x"].get("scale") == expected

    def test_minimize(self) -> None:
        """goal MINIMIZE."""
        assert self.study(goal="MINIMIZE")["metrics"][0]["goal"] == "MINIMIZE"

    def test_categorical_scale_warned(self) -> None:
        """A scaleType on a CATEGORICAL parameter is warned about (no scale on Vertex AI)."""
        param = {
            "parameterName": "c",
            "type": "CATEGORICAL",
            "categoricalValues": ["a"],
            "scaleType": "UNIT_LINEAR_SCALE",
        }
        (warning,) = warnings({**PROGRAM, "hyperparameters": {"params": [param]}})
        assert warning.key == f"{TI}.hyperparameters.params[0].scaleType"

    def test_resume_refused(self) -> None:
        """resumePreviousJobId is refused by name."""
        issues = refusals(
            {**PROGRAM, "hyperparameters": {**HYPERPARAMETERS, "resumePreviousJobId": "j1"}}
        )
        assert [i.key for i in issues] == [f"{TI}.hyperparameters.resumePreviousJobId"]

    @pytest.mark.parametrize(
        ("param", "key"),
        [
            ({"type": "DOUBLE", "minValue": 0, "maxValue": 1}, "parameterName"),
            ({"parameterName": "x", "type": "FLOAT"}, "type"),
            ({"parameterName": "x", "type": "DOUBLE", "maxValue": 1}, "minValue"),
            ({"parameterName": "x", "type": "DISCRETE"}, "discreteValues"),
            (
                {"parameterName": "x", "type": "CATEGORICAL", "categoricalValues": []},
                "categoricalValues",
            ),
        ],
    )
    def test_parameter_refusals(self, param: dict[str, Any], key: str) -> None:
        """A parameter missing what its type needs is refused on that key."""
        issues = refusals({**PROGRAM, "hyperparameters": {"params": [param]}})
        assert f"{TI}.hyperparameters.params[0].{key}" in [i.key for i in issues]

    def test_duplicate_parameter(self) -> None:
        """Parameter names are unique."""
        param = HYPERPARAMETERS["params"][0]
        issues = refusals({**PROGRAM, "hyperparameters": {"params": [param, param]}})
        assert issues[0].key == f"{TI}.hyperparameters.params[1].parameterName"

    def test_no_parameters(self) -> None:
        """params is required."""
        (issue,) = refusals({**PROGRAM, "hyperparameters": {"goal": "MAXIMIZE"}})
        assert issue.key == f"{TI}.hyperparameters.params"

    def test_tuning_job(self) -> None:
        """parse_job makes a translated hyperparameters job a tuning job."""
        study = pytest.importorskip("vertex_training.stackconfig.study")
        spec = parsed({**PROGRAM, "hyperparameters": HYPERPARAMETERS})
        assert isinstance(spec, study.TuningJobSpec)
        body = spec.request_body()
        assert body["studySpec"]["metrics"] == [{"metricId": "accuracy", "goal": "MAXIMIZE"}]
        assert body["maxTrialCount"] == 30


class TestJobId:
    """job_id: legacy job ID rules, and the display name."""

    def test_display_name(self) -> None:
        """A valid job_id is the display name."""
        assert native(dict(PROGRAM), job_id="census_20190101_1")["display_name"] == (
            "census_20190101_1"
        )

    @pytest.mark.parametrize(
        "job_id",
        ["1census", "census-1", "census job", "_census", "c" * 129, ""],
    )
    def test_rules(self, job_id: str) -> None:
        """Letters, digits and underscores, starting with a letter, at most 128 characters."""
        (issue,) = refusals(dict(PROGRAM), job_id=job_id)
        assert issue.key == f"{BASE}.job_id"

    def test_128_allowed(self) -> None:
        """Exactly 128 characters is fine."""
        assert native(dict(PROGRAM), job_id="c" * 128)["display_name"] == "c" * 128

    def test_with_display_name(self) -> None:
        """job_id and display_name together are refused."""
        (issue,) = refusals(dict(PROGRAM), job_id="census", display_name="census")
        assert issue.key == f"{BASE}.display_name"

    def test_without_training_input(self) -> None:
        """job_id on a native job is refused (use display_name)."""
        translation = translate_job(BASE, {"image": IMAGE, "job_id": "census"})
        assert [i.key for i in translation.issues] == [f"{BASE}.job_id"]


class TestStackJob:
    """A stack job with training_input: which native keys may sit beside it."""

    @pytest.mark.parametrize("key", ["image", "machine", "workers", "scheduling", "framework"])
    def test_run_keys_conflict(self, key: str) -> None:
        """Keys that say what runs conflict with training_input."""
        (issue,) = refusals(dict(PROGRAM), **{key: "x"})
        assert issue.key == f"{BASE}.{key}"
        assert "cannot be combined with training_input" in issue.message

    def test_region_beside(self) -> None:
        """region may be given beside training_input when training_input has none."""
        assert native(dict(PROGRAM), region="europe-west4")["region"] == "europe-west4"

    def test_region_twice(self) -> None:
        """region in both places is refused."""
        (issue,) = refusals({**PROGRAM, "region": "us-central1"}, region="europe-west4")
        assert issue.key == f"{BASE}.region"

    def test_other_keys_kept(self) -> None:
        """labels, env and wait are kept."""
        keys = native(dict(PROGRAM), labels={"team": "ml"}, env={"A": "1"}, wait="succeeded")
        assert (keys["labels"], keys["env"], keys["wait"]) == (
            {"team": "ml"},
            {"A": "1"},
            "succeeded",
        )

    def test_not_a_mapping(self) -> None:
        """training_input must be a mapping."""
        translation = translate_job(BASE, {"training_input": "config.yaml"})
        assert [i.key for i in translation.issues] == [TI]

    def test_native_job_unchanged(self) -> None:
        """A job without training_input passes through untouched."""
        raw = {"image": IMAGE, "args": ["x"]}
        translation = translate_job(BASE, raw)
        assert translation.native == raw and translation.issues == ()

    def test_typo_suggests_training_input(self) -> None:
        """trainingInput (the file's spelling) at job level suggests training_input."""
        with pytest.raises(SpecError) as caught:
            parse_job("old", {"trainingInput": dict(PROGRAM)}, STACK)
        assert "did you mean 'training_input'" in caught.value.issues[0].message


class TestRekey:
    """Native issues on translated keys come back on the legacy keys."""

    def test_accelerator_region(self) -> None:
        """A V100 in a region whose row lacks V100s is warned about on masterType (the
        locations page was not re-read: not refused on the catalogue's word alone)."""
        spec = parse_job(
            "old",
            {"training_input": {**custom("standard_v100"), "region": "europe-west1"}},
            STACK,
            today=datetime.date(2024, 6, 1),
        )
        (warning,) = [w for w in spec.warnings if "NVIDIA_TESLA_V100" in w]
        assert warning.startswith(f"{TI}.masterType: this project's table")

    def test_accelerator_count(self) -> None:
        """A count the machine cannot take is reported on acceleratorConfig.count."""
        config = {"acceleratorConfig": {"count": 3, "type": "NVIDIA_TESLA_T4"}}
        (issue,) = parse_issues(custom("n1-standard-8", masterConfig=config))
        assert issue.key == f"{TI}.masterConfig.acceleratorConfig.count"

    def test_worker_machine(self) -> None:
        """A worker machine Vertex AI lacks is reported on workerType."""
        (issue,) = parse_issues(custom("standard", workerType="n1-highcpu-2", workerCount=1))
        assert issue.key == f"{TI}.workerType"

    def test_package_uri(self) -> None:
        """A local package path is reported on packageUris[0]."""
        (issue,) = parse_issues({**PROGRAM, "packageUris": ["dist/trainer.tar.gz"]})
        assert issue.key == f"{TI}.packageUris[0]"

    def test_other_keys_untouched(self) -> None:
        """Issues on keys the translation did not produce keep their native keys."""
        translation = translate(dict(PROGRAM))
        issue = Issue(f"{BASE}.labels.Team", "x", "m")
        assert translation.rekey(issue) == issue
        assert translation.rekey(Issue(f"{BASE}2.machine", "x", "m")).key == f"{BASE}2.machine"


class TestParseJobHook:
    """parse_job on a job with training_input: the spec and its warnings."""

    def test_request(self) -> None:
        """A translated job renders the Vertex AI request of its native equivalent."""
        body = parsed(
            {**custom("complex_model_m_p100"), "region": "us-central1"}, job_id="census_1"
        ).request_body()
        assert body["displayName"] == "census_1"
        (pool,) = body["jobSpec"]["workerPoolSpecs"]
        assert pool["machineSpec"] == {
            "machineType": "n1-highcpu-16",
            "acceleratorType": "NVIDIA_TESLA_P100",
            "acceleratorCount": 4,
        }
        assert pool["pythonPackageSpec"]["executorImageUri"] == (
            "us-docker.pkg.dev/vertex-ai/training/tf-gpu.2-11:latest"
        )

    def test_warnings_named(self) -> None:
        """Warnings name legacy keys (translation) and the runtime version (image)."""
        spec = parsed({**custom("standard_gpu"), "scheduling": {"priority": 1}})
        keys = [warning.split(": ", 1)[0] for warning in spec.warnings]
        assert keys == [f"{TI}.masterType", f"{TI}.scheduling.priority", f"{TI}.runtimeVersion"]

    def test_translation_refusal_first(self) -> None:
        """A refused translation stops before native validation."""
        issues = parse_issues({"scaleTier": "CUSTOM", **PROGRAM}, labels={"Team": "x"})
        assert [i.key for i in issues] == [f"{TI}.masterType"]
