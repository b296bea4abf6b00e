"""Unit tests of vertex_training.api.job_config: a job's REST body -> its stack config keys,
the reverse of JobSpec.request_body(), for ``pulumi import``."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format

from vertex_training.api.bodies import canonical_request, is_tuning_body
from vertex_training.api.job_config import (
    API_DISK_SIZE_GB,
    API_DISK_TYPE,
    OUTPUT_ONLY_FIELDS,
    REDUCTION_SERVER_IMAGE,
    UnmappedField,
    config_of_request,
)
from vertex_training.api.labels import RERUN_LABEL
from vertex_training.catalog import machines
from vertex_training.resources.submission import Owner, labelled_request
from vertex_training.stackconfig import StackSettings, parse_job

NAME = "train"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist:1"
EVAL_IMAGE = "us-docker.pkg.dev/my-project/trainers/mnist-eval:1"
EXECUTOR = "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-7:latest"
PACKAGES = ["gs://my-bucket/trainer-0.1.tar.gz", "gs://my-bucket/utils-2.0-py3-none-any.whl"]
ACCOUNT = "trainer@my-project.iam.gserviceaccount.com"
NETWORK = "projects/123456/global/networks/training-vpc"
KMS = "projects/my-project/locations/us-central1/keyRings/r/cryptoKeys/k"
RESERVATION = "projects/my-project/zones/us-central1-a/reservations/a100-pool"
T4 = {"type": "NVIDIA_TESLA_T4", "count": 1}
SMALL_STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {
        "batch-size": {"type": "discrete", "values": [16, 32, 64]},
        "learning-rate": {"type": "double", "min": 0.001, "max": 0.1, "scale": "log"},
    },
    "max_trials": 2,
    "parallel_trials": 2,
}

#: Jobs written as config_of_request writes them back (given the job name NAME): each
#: key in the form a user would write, and only where it says something.
JOBS: dict[str, dict[str, Any]] = {
    "container": {
        "image": IMAGE,
        "command": ["python", "-m", "trainer.task"],
        "args": ["--epochs", "3", ""],
        "env": {"EMPTY": "", "LOG_LEVEL": "info"},
        "machine": "n1-standard-8",
    },
    "python-package": {
        "python_package": {
            "executor_image": EXECUTOR,
            "package_uris": PACKAGES,
            "module": "t.task",
        },
        "args": ["--epochs", "3"],
        "env": {"MODE": "full"},
        "machine": "n1-standard-4",
    },
    "accelerator-and-disk": {
        "image": IMAGE,
        "machine": "n1-standard-8",
        "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 2},
        "disk": {"type": "pd-standard", "size_gb": 250},
    },
    "built-in-gpus": {
        "image": IMAGE,
        "machine": "a2-highgpu-1g",
        "accelerator": {"type": "NVIDIA_TESLA_A100", "count": 1},
    },
    "hyperdisk-machine": {
        "image": IMAGE,
        "machine": "a4-highgpu-8g",
        "accelerator": {"type": "NVIDIA_B200", "count": 8},
        "disk": {"type": "hyperdisk-balanced", "size_gb": 500},
    },
    "tpu": {"image": IMAGE, "machine": "ct5lp-hightpu-4t", "tpu_topology": "2x2"},
    "pools": {
        "image": IMAGE,
        "args": ["--dist"],
        "env": {"MODE": "train"},
        "machine": "n1-standard-8",
        "accelerator": T4,
        "disk": {"size_gb": 200},
        "workers": {"replicas": 3},
        "parameter_servers": {"replicas": 2, "machine": "n1-highmem-8", "accelerator": None},
        "evaluators": {"replicas": 1, "image": EVAL_IMAGE, "args": [], "env": {"MODE": "eval"}},
    },
    "pools-own-settings": {
        "image": IMAGE,
        "command": ["python", "-m", "trainer.task"],
        "machine": "n1-standard-8",
        "accelerator": T4,
        "disk": {"type": "pd-standard"},
        "workers": {
            "replicas": 2,
            "python_package": {"executor_image": EXECUTOR, "package_uris": PACKAGES, "module": "w"},
            "machine": "n1-standard-16",
            "accelerator": {"type": "NVIDIA_TESLA_V100", "count": 2},
            "disk": {"type": "pd-ssd", "size_gb": 100},
        },
    },
    "evaluators-only": {"image": IMAGE, "machine": "n1-standard-4", "evaluators": {"replicas": 2}},
    "reduction-server": {
        "image": IMAGE,
        "machine": "n1-standard-16",
        "accelerator": {"type": "NVIDIA_TESLA_V100", "count": 2},
        "workers": {"replicas": 4},
        "reduction_server": {"replicas": 2, "machine": "n1-highcpu-16", "disk": {"size_gb": 150}},
    },
    "scheduling": {
        "image": IMAGE,
        "machine": "n1-standard-4",
        "scheduling": {
            "timeout": "1h30m",
            "restart_job_on_worker_restart": True,
            "disable_retries": True,
            "strategy": "SPOT",
        },
    },
    "flex-start": {
        "image": IMAGE,
        "machine": "g2-standard-8",
        "accelerator": {"type": "NVIDIA_L4", "count": 1},
        "scheduling": {"timeout": "1d", "strategy": "FLEX_START", "max_wait_duration": "2h"},
    },
    "job-settings": {
        "image": IMAGE,
        "machine": "n1-standard-4",
        "display_name": "Nightly MNIST (imported)",
        "scheduling": {"timeout": "7d"},
        "service_account": ACCOUNT,
        "network": NETWORK,
        "reserved_ip_ranges": ["training-range"],
        "protected_artifact_location_id": "europe-west4",
        "models": ["projects/my-project/locations/us-central1/models/42@golden"],
        "base_output_directory": "gs://my-bucket/train",
        "tensorboard": "projects/my-project/locations/us-central1/tensorboards/7",
        "enable_web_access": True,
        "enable_dashboard_access": True,
        "labels": {"cost-center": "ml", "team": "vision"},
        "kms_key": KMS,
        "experiment": "projects/my-project/locations/us-central1/metadataStores/default/contexts/e",
        "rerun": 3,
    },
    "access": {
        "image": IMAGE,
        "machine": "a2-highgpu-1g",
        "accelerator": {"type": "NVIDIA_TESLA_A100", "count": 1},
        "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": [RESERVATION]},
        "gpu_partition_size": "3g.20gb",
        "nfs_mounts": [{"server": "10.76.0.10", "path": "/share", "mount_point": "data"}],
        "lustre_mounts": [
            {
                "instance_ip": "10.90.1.4",
                "volume_handle": "my-project/us-central1-a/lustre-1",
                "filesystem": "lfs",
                "mount_point": "scratch",
            }
        ],
        "workers": {"replicas": 2},
        "evaluators": {
            "replicas": 1,
            "machine": "n1-standard-8",
            "accelerator": None,
            "nfs_mounts": [],
            "lustre_mounts": [],
        },
        "network": NETWORK,
    },
    "any-reservation": {
        "image": IMAGE,
        "machine": "n1-standard-8",
        "reservation_affinity": "ANY_RESERVATION",
        "workers": {"replicas": 2, "reservation_affinity": None},
    },
    "private-service-connect": {
        "python_package": {"executor_image": EXECUTOR, "package_uris": PACKAGES, "module": "t"},
        "machine": "n1-standard-8",
        "psc_interface_config": {
            "network_attachment": "my-attachment",
            "dns_peering_configs": [
                {"domain": "corp.example.", "target_project": "net-host", "target_network": "vpc"}
            ],
        },
        "persistent_resource_id": "my-cluster",
        "experiment": "projects/my-project/locations/us-central1/metadataStores/default/contexts/e",
        "experiment_run": "projects/my-project/locations/us-central1/metadataStores/default/"
        "contexts/e-run",
    },
    "tuning": {
        "image": IMAGE,
        "args": ["--epochs", "5"],
        "machine": "n1-standard-4",
        "display_name": "mnist sweep",
        "labels": {"team": "vision"},
        "kms_key": KMS,
        "study": SMALL_STUDY,
    },
    "tuning-everything": {
        "python_package": {"executor_image": EXECUTOR, "package_uris": PACKAGES, "module": "t"},
        "machine": "n1-standard-8",
        "accelerator": T4,
        "workers": {"replicas": 2},
        "scheduling": {"timeout": "12h"},
        "service_account": ACCOUNT,
        "base_output_directory": "gs://my-bucket/sweep",
        "study": {
            "metrics": [
                {"id": "accuracy", "goal": "MAXIMIZE"},
                {"id": "latency", "goal": "MINIMIZE"},
            ],
            "parameters": {
                "dropout": {"type": "double", "min": 0, "max": 1},
                "epochs": {
                    "type": "integer",
                    "min": 0,
                    "max": 10,
                    "scale": "linear",
                    "conditional": [
                        {
                            "when": [2, 3],
                            "parameters": {"warmup": {"type": "integer", "min": 0, "max": 3}},
                        }
                    ],
                },
                "optimizer": {
                    "type": "categorical",
                    "values": ["sgd", "adam", "rmsprop"],
                    "conditional": [
                        {
                            "when": ["adam"],
                            "parameters": {
                                "beta1": {"type": "double", "min": 0.8, "max": 0.99},
                                "beta2": {"type": "double", "min": 0.9, "max": 0.9999},
                            },
                        },
                        {
                            "when": ["adam"],
                            "parameters": {
                                "amsgrad": {"type": "categorical", "values": ["1", "0"]}
                            },
                        },
                        {
                            "when": ["rmsprop"],
                            "parameters": {"beta1": {"type": "double", "min": 0.5, "max": 0.9}},
                        },
                    ],
                },
                "width": {
                    "type": "discrete",
                    "values": [0.5, 1, 2],
                    "scale": "log",
                    "conditional": [
                        {
                            "when": [2],
                            "parameters": {"depth": {"type": "discrete", "values": [1, 2]}},
                        }
                    ],
                },
            },
            "algorithm": "random",
            "measurement_selection": "best",
            "early_stopping": {
                "convex": {
                    "max_step_count": 100,
                    "min_step_count": 10,
                    "min_measurement_count": 5,
                    "learning_rate_parameter_name": "dropout",
                    "use_elapsed_duration": True,
                    "update_all_stopped_trials": False,
                }
            },
            "max_trials": 12,
            "parallel_trials": 3,
            "max_failed_trials": 2,
        },
    },
    "tuning-median": {
        "image": IMAGE,
        "machine": "n1-standard-4",
        "study": {
            **SMALL_STUDY,
            "algorithm": "grid",
            "parameters": {"layers": {"type": "integer", "min": 1, "max": 4}},
            "measurement_selection": "last",
            "early_stopping": {"median": {"use_elapsed_duration": True}},
        },
    },
    "tuning-decay-curve": {
        "image": IMAGE,
        "machine": "n1-standard-4",
        "study": {
            **{key: value for key, value in SMALL_STUDY.items() if key != "parallel_trials"},
            "early_stopping": {"decay_curve": {}},
        },
    },
}

#: Jobs that lean on defaults and inheritance: they read back in the longer form above,
#: and give back the same request.
SHORT_JOBS: dict[str, dict[str, Any]] = {
    "defaults": {"image": IMAGE},
    "pool-on-its-own-gpu-machine": {
        "image": IMAGE,
        "machine": "n1-standard-8",
        "accelerator": T4,
        "workers": {"replicas": 2, "machine": "a2-highgpu-2g"},
        "evaluators": {"replicas": 1, "machine": "n1-standard-16"},
    },
    "pool-null-accelerator-on-gpu-machine": {
        "image": IMAGE,
        "machine": "g2-standard-8",
        "workers": {"replicas": 2, "accelerator": None},
    },
    "partition-not-inherited": {
        "image": IMAGE,
        "machine": "a2-highgpu-1g",
        "gpu_partition_size": "1g.5gb",
        "workers": {"replicas": 2, "accelerator": {"type": "NVIDIA_TESLA_A100", "count": 1}},
        "evaluators": {"replicas": 1, "gpu_partition_size": "2g.10gb"},
    },
    "reservation-not-inherited": {
        "image": IMAGE,
        "machine": "n1-standard-8",
        "reservation_affinity": {"type": "ANY_RESERVATION"},
        "workers": {"replicas": 2, "machine": "n1-standard-16"},
        "evaluators": {"replicas": 1, "reservation_affinity": "NO_RESERVATION"},
    },
    "package-pools": {
        "python_package": {"executor_image": EXECUTOR, "package_uris": PACKAGES, "module": "t"},
        "workers": {"replicas": 2, "env": {"ROLE": "worker"}},
        "evaluators": {"replicas": 1, "image": EVAL_IMAGE, "command": ["python", "eval.py"]},
        "scheduling": {"timeout": 7200, "strategy": "STANDARD"},
        "tensorboard": False,
    },
}
ALL_JOBS = {**JOBS, **SHORT_JOBS}


def request_of(config: dict[str, Any], name: str = NAME) -> dict[str, Any]:
    """The REST body ``config`` renders to, after a JSON round trip."""
    body = parse_job(name, config, STACK).request_body()
    result: dict[str, Any] = json.loads(json.dumps(body))
    return result


def as_server_returns(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` through the real aiplatform_v1 message and back, as the server's JSON."""
    kind = (
        aiplatform_v1.HyperparameterTuningJob if is_tuning_body(body) else aiplatform_v1.CustomJob
    )
    message = kind.pb(kind())
    json_format.ParseDict(body, message)
    result: dict[str, Any] = json_format.MessageToDict(message)
    return result


def with_output_only(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as GetCustomJob / GetHyperparameterTuningJob returns it for a job that ran."""
    collection = "hyperparameterTuningJobs" if is_tuning_body(body) else "customJobs"
    extra: dict[str, Any] = {
        "name": f"projects/123456/locations/us-central1/{collection}/987654321",
        "state": "JOB_STATE_FAILED",
        "createTime": "2026-11-20T10:00:00.123456Z",
        "startTime": "2026-11-20T10:01:00Z",
        "endTime": "2026-11-20T11:00:00Z",
        "updateTime": "2026-11-20T11:00:01Z",
        "error": {"code": 3, "message": "The replica workerpool0-0 exited with a non-zero status"},
        "satisfiesPzs": True,
    }
    if is_tuning_body(body):
        extra["trials"] = [
            {
                "id": "1",
                "state": "SUCCEEDED",
                "parameters": [{"parameterId": "learning-rate", "value": 0.01}],
                "finalMeasurement": {
                    "stepCount": "3",
                    "metrics": [{"metricId": "a", "value": 0.9}],
                },
            },
            {"id": "2", "state": "INFEASIBLE", "infeasibleReason": "out of memory"},
        ]
    else:
        extra["webAccessUris"] = {"workerpool0-0": "https://abc-dot-us-central1.aiplatform..."}
    return as_server_returns({**body, **extra})


def refused(body: dict[str, Any]) -> UnmappedField:
    """The UnmappedField config_of_request raises for ``body`` (fails the test if none)."""
    with pytest.raises(UnmappedField) as caught:
        config_of_request(body)
    return caught.value


class TestRoundTrip:
    """Parsing the keys read from a job's body gives back the same body."""

    @pytest.mark.parametrize("case", sorted(ALL_JOBS))
    def test_request_is_given_back(self, case: str) -> None:
        """parse_job(config_of_request(R)).request_body() is R, for every kind of job."""
        body = request_of(ALL_JOBS[case])
        assert request_of(config_of_request(body)) == body

    @pytest.mark.parametrize("case", sorted(ALL_JOBS))
    def test_under_any_job_name(self, case: str) -> None:
        """Without the job's name, the display name is kept: any name gives back R."""
        body = request_of(ALL_JOBS[case])
        assert request_of(config_of_request(body), name="imported-7") == body

    @pytest.mark.parametrize("case", sorted(JOBS))
    def test_keys_read_as_written(self, case: str) -> None:
        """Given the job's name, the keys are the config the job was written with."""
        assert config_of_request(request_of(JOBS[case]), name=NAME) == JOBS[case]

    def test_short_forms_come_back_in_full(self) -> None:
        """A config leaning on defaults reads back with the machine and GPUs it ran on."""
        body = request_of({"image": IMAGE, "machine": "g2-standard-8", "workers": {"replicas": 2}})
        config = config_of_request(body, name=NAME)
        assert config == {
            "image": IMAGE,
            "machine": "g2-standard-8",
            "accelerator": {"type": "NVIDIA_L4", "count": 1},
            "workers": {"replicas": 2},
        }
        assert request_of(config) == body

    @pytest.mark.parametrize("case", sorted(ALL_JOBS))
    def test_reading_twice_reads_the_same(self, case: str) -> None:
        """The keys read back render to a body that reads back to the same keys."""
        config = config_of_request(request_of(ALL_JOBS[case]), name=NAME)
        assert config_of_request(request_of(config), name=NAME) == config


class TestServerBodies:
    """Bodies as the server returns them: proto3 JSON, output-only fields, provider labels."""

    @pytest.mark.parametrize("case", sorted(ALL_JOBS))
    def test_through_the_real_message(self, case: str) -> None:
        """R as the server's JSON (int64 as text, zero values left out) still gives back R."""
        body = request_of(ALL_JOBS[case])
        assert request_of(config_of_request(as_server_returns(body))) == body

    @pytest.mark.parametrize("case", sorted(ALL_JOBS))
    def test_output_only_fields_are_read_past(self, case: str) -> None:
        """name, state, times, error, webAccessUris and trials change nothing."""
        body = request_of(ALL_JOBS[case])
        config = config_of_request(with_output_only(body))
        assert config == config_of_request(body)
        assert request_of(config) == body

    @pytest.mark.parametrize("case", ["container", "tuning"])
    def test_provider_labels_are_dropped(self, case: str) -> None:
        """The three labels the provider adds on submission are not the user's."""
        body = request_of(JOBS[case])
        submitted = as_server_returns(labelled_request(body, Owner("dev"), NAME))
        assert len(submitted["labels"]) == len(body.get("labels", {})) + 3
        assert config_of_request(submitted, name=NAME) == JOBS[case]

    def test_rerun_label_is_the_rerun_key(self) -> None:
        """The rerun label reads back as rerun, a number when it is one."""
        for rerun in (3, "after-fix", "007"):
            body = request_of({**JOBS["container"], "rerun": rerun})
            assert body["labels"] == {RERUN_LABEL: str(rerun)}
            config = config_of_request(body, name=NAME)
            assert config == {**JOBS["container"], "rerun": rerun}

    def test_parameters_in_any_order(self) -> None:
        """A study whose parameters the server lists in another order reads the same."""
        body = request_of(JOBS["tuning-everything"])
        shuffled = copy.deepcopy(body)
        shuffled["studySpec"]["parameters"].reverse()
        again = request_of(config_of_request(shuffled))
        assert canonical_request(again) == canonical_request(body)

    def test_output_only_fields_are_the_clients(self) -> None:
        """Each output-only field named is a field of the installed client's message."""
        messages: dict[str, Any] = {
            "customJob": aiplatform_v1.CustomJob,
            "hyperparameterTuningJob": aiplatform_v1.HyperparameterTuningJob,
        }
        for kind, names in OUTPUT_ONLY_FIELDS.items():
            fields = {f.json_name for f in messages[kind].pb().DESCRIPTOR.fields}
            assert names <= fields, kind

    def test_region_of_a_job_elsewhere(self) -> None:
        """A job in another location than the stack's region gets a region key."""
        body = with_output_only(request_of(JOBS["container"]))
        assert "region" not in config_of_request(body, region="us-central1")
        assert config_of_request(body, region="europe-west4")["region"] == "us-central1"
        assert "region" not in config_of_request(body)


class TestForms:
    """Each key in the form a user writes it."""

    def test_display_name_only_when_not_the_job_name(self) -> None:
        """display_name is left out when it is the job name, parse_job's default."""
        body = request_of(JOBS["container"])
        assert body["displayName"] == NAME
        assert "display_name" not in config_of_request(body, name=NAME)
        assert config_of_request(body, name="other")["display_name"] == NAME

    def test_labels_other_tools_put_on_what_they_make_are_read_past(self) -> None:
        """pulumi-gcp's and Terraform's attribution labels are no key of the job."""
        body = request_of(JOBS["container"])
        mine = dict(body.get("labels") or {})
        body["labels"] = {**mine, "goog-pulumi-provisioned": "true"}
        body["labels"]["goog-terraform-provisioned"] = "true"
        assert config_of_request(body, name=NAME).get("labels", {}) == mine

    @pytest.mark.parametrize(
        ("seconds", "written"),
        [("90s", "1m30s"), ("3600s", "1h"), ("5400s", "1h30m"), ("86400s", "1d"), ("0s", "0s")],
    )
    def test_durations(self, seconds: str, written: str) -> None:
        """Durations read as the stack config writes them."""
        body = request_of(JOBS["flex-start"])
        body["jobSpec"]["scheduling"]["maxWaitDuration"] = seconds
        config = config_of_request(body)
        assert config["scheduling"]["max_wait_duration"] == written
        assert request_of(config) == body

    def test_whole_numbers_without_a_point(self) -> None:
        """Study bounds and values that are whole numbers read as integers."""
        body = request_of(JOBS["tuning-everything"])
        parameters = config_of_request(body)["study"]["parameters"]
        assert parameters["dropout"] == {"type": "double", "min": 0, "max": 1}
        assert parameters["width"]["values"] == [0.5, 1, 2]

    def test_reduction_server_image_is_the_catalogues(self) -> None:
        """The reduction server image and the API's boot disk are the catalogue's."""
        assert machines.REDUCTION_SERVER_IMAGE == REDUCTION_SERVER_IMAGE
        assert (machines.DEFAULT_DISK_TYPE, machines.DEFAULT_DISK_SIZE_GB) == (
            API_DISK_TYPE,
            API_DISK_SIZE_GB,
        )

    def test_other_images_in_pool_two_are_parameter_servers(self) -> None:
        """Pool 2 running anything but the reduction server image alone is parameter_servers."""
        body = request_of(JOBS["reduction-server"])
        body["jobSpec"]["workerPoolSpecs"][2]["containerSpec"]["args"] = ["--verbose"]
        config = config_of_request(body)
        assert "reduction_server" not in config
        assert config["parameter_servers"]["image"] == REDUCTION_SERVER_IMAGE
        assert request_of(config) == body


def _set(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """A change to a body: ``value`` at the dotted ``path`` (list indexes as numbers)."""

    def change(body: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = body
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value

    return change


POOL = "jobSpec.workerPoolSpecs.0"
#: (job, change to its body, the field the refusal names).
REFUSED = [
    pytest.param("container", _set("jobDetail", {}), "jobDetail", id="unknown-job-field"),
    pytest.param("container", _set("jobSpec.fooBar", 1), "jobSpec.fooBar", id="unknown-spec"),
    pytest.param(
        "container",
        _set(f"{POOL}.machineSpec.acceleratorKind", "X"),
        "jobSpec.workerPoolSpecs[0].machineSpec.acceleratorKind",
        id="unknown-machine-field",
    ),
    pytest.param(
        "tuning",
        _set("studySpec.observationNoise", "HIGH"),
        "studySpec.observationNoise",
        id="observation-noise",
    ),
    pytest.param(
        "tuning",
        _set("studySpec.studyStoppingConfig", {"maxNumTrials": 3}),
        "studySpec.studyStoppingConfig",
        id="study-stopping-config",
    ),
    pytest.param(
        "tuning",
        _set("studySpec.metrics.0.safetyConfig", {"safetyThreshold": 0.5}),
        "studySpec.metrics[0].safetyConfig",
        id="metric-safety-config",
    ),
    pytest.param(
        "tuning",
        _set("studySpec.parameters.1.doubleValueSpec.defaultValue", 0.01),
        "studySpec.parameters[1].doubleValueSpec.defaultValue",
        id="parameter-default-value",
    ),
    pytest.param(
        "container",
        _set(f"{POOL}.replicaCount", "2"),
        "jobSpec.workerPoolSpecs[0].replicaCount",
        id="primary-replicas",
    ),
    pytest.param(
        "evaluators-only",
        _set("jobSpec.workerPoolSpecs.3", {}),
        "jobSpec.workerPoolSpecs[3]",
        id="trailing-empty-pool",
    ),
    pytest.param(
        "container",
        _set("labels", {"goog-managed-by": "x"}),
        "labels.goog-managed-by",
        id="google-label",
    ),
    pytest.param(
        "scheduling",
        _set("jobSpec.scheduling.timeout", "1.5s"),
        "jobSpec.scheduling.timeout",
        id="fractional-duration",
    ),
    pytest.param(
        "container",
        _set(f"{POOL}.containerSpec.imageUri", "python:3.12"),
        "jobSpec.workerPoolSpecs[0].containerSpec.imageUri",
        id="bare-image-name",
    ),
    pytest.param(
        "container",
        _set(f"{POOL}.containerSpec.env", [{"name": "A", "value": "1"}, {"name": "A"}]),
        "jobSpec.workerPoolSpecs[0].containerSpec.env[1].name",
        id="env-name-twice",
    ),
    pytest.param(
        "access",
        _set(f"{POOL}.machineSpec.reservationAffinity.key", ""),
        "jobSpec.workerPoolSpecs[0].machineSpec.reservationAffinity.key",
        id="specific-reservation-without-key",
    ),
    pytest.param("container", _set("displayName", ""), "displayName", id="no-display-name"),
    pytest.param(
        "container",
        _set(f"{POOL}.pythonPackageSpec", {"packageUris": PACKAGES, "pythonModule": "t"}),
        "jobSpec.workerPoolSpecs[0].pythonPackageSpec",
        id="container-and-package",
    ),
]


class TestRefusals:
    """A field no key writes as it is raises UnmappedField naming it."""

    @pytest.mark.parametrize(("case", "change", "field"), REFUSED)
    def test_names_the_field(
        self, case: str, change: Callable[[dict[str, Any]], None], field: str
    ) -> None:
        """The error's field is the body's path to it, and its message starts with it."""
        body = request_of(JOBS[case])
        change(body)
        error = refused(body)
        assert error.field == field
        assert str(error).startswith(f"{field}: ")
        assert "cannot be imported" in str(error)

    def test_is_a_value_error(self) -> None:
        """Callers that catch ValueError catch it."""
        body = {**request_of(JOBS["container"]), "newApiField": True}
        with pytest.raises(ValueError, match="newApiField"):
            config_of_request(body)

    def test_too_many_pools(self) -> None:
        """A fifth worker pool has no key."""
        body = request_of(JOBS["pools"])
        body["jobSpec"]["workerPoolSpecs"].append(body["jobSpec"]["workerPoolSpecs"][1])
        assert refused(body).field == "jobSpec.workerPoolSpecs[4]"

    def test_values_the_keys_refuse_are_left_to_parse_job(self) -> None:
        """A value a key can hold but its rules refuse is read; parse_job names the key."""
        body = request_of(JOBS["container"])
        body["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]["machineType"] = "n9-huge-1"
        assert config_of_request(body)["machine"] == "n9-huge-1"
