"""Every field a job can send, checked against the installed client's own messages; and
Google's examples of reservations, Private Service Connect interfaces and NFS mounts,
rendered.

The completeness test reads ``google.cloud.aiplatform_v1`` (the client this project
pins): each writable field of the messages a job's request is made of must be set by some
stack config key in the rich jobs below, or be listed in ``EXCLUDED`` with its reason.
Upgrading google-cloud-aiplatform then names each field the API gained.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format
from google.protobuf.message import Message

from vertex_training.catalog import machines
from vertex_training.errors import SpecError
from vertex_training.stackconfig import StackSettings, parse_job

STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
IMAGE = "us-central1-docker.pkg.dev/my-project/trainers/train:1"
#: A prebuilt image row the package job's stack adds (invented dates: a test's, not Google's).
PACKAGE_STACK = StackSettings(
    stack="dev",
    project="my-project",
    region="us-central1",
    images=[
        {
            "framework": "pytorch",
            "version": "2.5",
            "python": "3.10",
            "kinds": ["gpu"],
            "name": "pytorch-gpu.2-5.py310",
            "end_of_support": "2030-03-01",
            "end_of_availability": "2030-09-01",
            "source": "https://cloud.google.com/vertex-ai/docs/training/pre-built-containers",
            "read_on": "2026-11-26",
        }
    ],
)
RESERVATION = "projects/my-project/zones/us-central1-a/reservations/h100-pool"
NETWORK = "projects/123456/global/networks/training-vpc"

#: The messages a job's request is made of, by their client class.
MESSAGES: tuple[type, ...] = (
    aiplatform_v1.CustomJob,
    aiplatform_v1.CustomJobSpec,
    aiplatform_v1.WorkerPoolSpec,
    aiplatform_v1.MachineSpec,
    aiplatform_v1.DiskSpec,
    aiplatform_v1.Scheduling,
    aiplatform_v1.ContainerSpec,
    aiplatform_v1.PythonPackageSpec,
    aiplatform_v1.HyperparameterTuningJob,
    aiplatform_v1.StudySpec,
)

#: Writable fields no stack config key sets, on purpose: (message, field) -> why.
EXCLUDED: dict[tuple[str, str], str] = {
    ("StudySpec", "observation_noise"): (
        "a hint to Vertex AI Vizier's default algorithm about noisy measurements; the "
        "hyperparameter tuning pages do not document it for tuning jobs, so no study key "
        "sets it yet"
    ),
    ("StudySpec", "study_stopping_config"): (
        "stops a Vizier study on its own conditions; a tuning job is bounded by "
        "study.max_trials and scheduling.timeout, and Google documents this config for "
        "Vizier studies, not tuning jobs"
    ),
}

#: A custom job that sets every key of a container job.
CONTAINER_JOB: dict[str, Any] = {
    "display_name": "everything",
    "image": IMAGE,
    "command": ["python", "-m", "trainer.task"],
    "args": ["--epochs", "3"],
    "env": {"MODE": "full"},
    "machine": "a2-highgpu-1g",
    "gpu_partition_size": "3g.20gb",
    "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": [RESERVATION]},
    "disk": {"type": "pd-ssd", "size_gb": 200},
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
    "network": NETWORK,
    "reserved_ip_ranges": ["training-range"],
    "service_account": "trainer@my-project.iam.gserviceaccount.com",
    "base_output_directory": "gs://my-bucket/everything",
    "tensorboard": "projects/my-project/locations/us-central1/tensorboards/7",
    "enable_web_access": True,
    "enable_dashboard_access": True,
    "experiment": "projects/my-project/locations/us-central1/metadataStores/default/contexts/e",
    "experiment_run": "projects/my-project/locations/us-central1/metadataStores/default/"
    "contexts/e-run",
    "labels": {"team": "ml"},
    "kms_key": "projects/my-project/locations/us-central1/keyRings/r/cryptoKeys/k",
    "models": ["projects/my-project/locations/us-central1/models/42@golden"],
    "protected_artifact_location_id": "europe-west4",
    "scheduling": {
        "timeout": "2h",
        "restart_job_on_worker_restart": True,
        "disable_retries": True,
        "strategy": "SPOT",
    },
}
#: A Python package job on a persistent resource, reaching a network through PSC-I,
#: under flex-start.
PACKAGE_JOB: dict[str, Any] = {
    "python_package": {
        "executor_image": "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-5.py310:latest",
        "package_uris": ["gs://my-bucket/trainer-0.1.tar.gz"],
        "module": "trainer.task",
    },
    "args": ["--lr", "0.1"],
    "env": {"MODE": "fast"},
    "machine": "g2-standard-8",
    "persistent_resource_id": "my-cluster",
    "psc_interface_config": {
        "network_attachment": "training-attachment",
        "dns_peering_configs": [
            {"domain": "corp.example.", "target_project": "net-host", "target_network": "vpc"}
        ],
    },
    "scheduling": {"strategy": "FLEX_START", "max_wait_duration": "1h"},
}
STUDY: dict[str, Any] = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1, "scale": "log"}},
    "algorithm": "random",
    "measurement_selection": "best",
    "max_trials": 8,
    "parallel_trials": 2,
    "max_failed_trials": 1,
}
#: Tuning jobs, one per early-stopping rule (a oneof in StudySpec), on a TPU slice.
TUNING_JOBS: list[dict[str, Any]] = [
    {
        "image": IMAGE,
        "machine": "ct5lp-hightpu-4t",
        "tpu_topology": "2x2",
        "labels": {"team": "ml"},
        "kms_key": "projects/my-project/locations/us-central1/keyRings/r/cryptoKeys/k",
        "study": {**STUDY, "early_stopping": {rule: {}}},
    }
    for rule in ("decay_curve", "median", "convex")
]


def writable_fields(message: type) -> set[str]:
    """The fields of a client message that a request may set: those whose description, in
    the client's own docstring (the proto's comments), does not begin "Output only"."""
    doc = inspect.getdoc(message) or ""
    fields: dict[str, str] = {}
    current = None
    for line in doc.splitlines():
        if match := re.fullmatch(r"    (\w+) \(.+\):", line):
            current = match[1]
            fields[current] = ""
        elif current and line.startswith("        "):
            fields[current] += line.strip() + " "
    declared = {f.name for f in message.pb().DESCRIPTOR.fields}  # type: ignore[attr-defined]
    assert set(fields) == declared, f"{message.__name__}: docstring and descriptor differ"
    return {name for name, text in fields.items() if not text.startswith("Output only")}


def fields_set(message: Message, into: set[tuple[str, str]]) -> None:
    """Every (message name, field name) set in ``message``, recursively."""
    for field, value in message.ListFields():
        into.add((message.DESCRIPTOR.name, field.name))
        if field.message_type is None or field.message_type.GetOptions().map_entry:
            continue
        for item in value if field.is_repeated else [value]:
            fields_set(item, into)


def rendered(config: dict[str, Any]) -> Message:
    """The job's request, parsed into the client's own message (which refuses a field
    the API does not have)."""
    spec = parse_job("job", config, PACKAGE_STACK if config is PACKAGE_JOB else STACK)
    body = spec.request_body()
    kind = aiplatform_v1.HyperparameterTuningJob if "studySpec" in body else aiplatform_v1.CustomJob
    message = kind.pb(kind())
    json_format.ParseDict(body, message)
    return message


class TestEveryField:
    """The stack config covers the API's writable fields."""

    def test_every_writable_field_has_a_key_or_a_reason(self) -> None:
        """Each writable field of the request's messages is set by a key of the rich jobs,
        or excluded with its reason."""
        covered: set[tuple[str, str]] = set()
        for config in (CONTAINER_JOB, PACKAGE_JOB, *TUNING_JOBS):
            fields_set(rendered(config), covered)
        missing = sorted(
            f"{message.__name__}.{name}"
            for message in MESSAGES
            for name in writable_fields(message)
            if (message.__name__, name) not in covered and (message.__name__, name) not in EXCLUDED
        )
        assert missing == [], (
            f"fields with no stack config key and no reason in EXCLUDED: {missing}; add a key "
            "(docs/config-shape.md) or an exclusion with its reason"
        )

    def test_exclusions_are_current(self) -> None:
        """Every exclusion names a writable field no key sets, with a reason."""
        covered: set[tuple[str, str]] = set()
        for config in (CONTAINER_JOB, PACKAGE_JOB, *TUNING_JOBS):
            fields_set(rendered(config), covered)
        by_name = {m.__name__: m for m in MESSAGES}
        for (message, name), reason in EXCLUDED.items():
            assert name in writable_fields(by_name[message]), (message, name)
            assert (message, name) not in covered, f"{message}.{name} is set: drop its exclusion"
            assert len(reason) > 40

    def test_output_only_fields_are_not_counted(self) -> None:
        """The docstring reading finds the output-only fields (a job's state, its times)."""
        writable = writable_fields(aiplatform_v1.CustomJob)
        assert {"display_name", "job_spec", "labels", "encryption_spec"} <= writable
        assert not {"state", "create_time", "error", "web_access_uris"} & writable

    def test_a_new_field_is_named(self) -> None:
        """A field the walk has not seen set and no exclusion covers is reported: drop one
        exclusion and the walk names it."""
        covered: set[tuple[str, str]] = set()
        fields_set(rendered(CONTAINER_JOB), covered)
        assert ("MachineSpec", "reservation_affinity") in covered
        assert ("StudySpec", "observation_noise") not in covered


# ------------------------------------------------------------------ Google's examples

# Vertex AI, "Use reservations with training", REST request (read 2026-11-26:
# https://cloud.google.com/vertex-ai/docs/training/use-reservations). Placeholders filled:
# LOCATION us-central1, MACHINE_TYPE a3-highgpu-8g with 8 NVIDIA_H100_80GB, REPLICA_COUNT 1.
RESERVATION_DOC_REQUEST: dict[str, Any] = {
    "displayName": "reserved-train",
    "jobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {
                    "machineType": "a3-highgpu-8g",
                    "acceleratorType": "NVIDIA_H100_80GB",
                    "acceleratorCount": 8,
                    "reservationAffinity": {
                        "reservationAffinityType": "SPECIFIC_RESERVATION",
                        "key": "compute.googleapis.com/reservation-name",
                        "values": [RESERVATION],
                    },
                },
                "replicaCount": 1,
                "containerSpec": {"imageUri": IMAGE},
            }
        ]
    },
}
# Vertex AI, "Use Private Service Connect interface for Vertex AI Training" (read
# 2026-11-26: https://cloud.google.com/vertex-ai/docs/training/psc-i-egress): the custom job
# with job_spec.psc_interface_config.network_attachment and dns_peering_configs.
PSC_DOC_REQUEST: dict[str, Any] = {
    "displayName": "psc-train",
    "jobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "n2-standard-8"},
                "replicaCount": 1,
                "containerSpec": {"imageUri": IMAGE},
            }
        ],
        "pscInterfaceConfig": {
            "networkAttachment": "training-attachment",
            "dnsPeeringConfigs": [
                {
                    "domain": "corp.example.",
                    "targetProject": "net-host-project",
                    "targetNetwork": "shared-vpc",
                }
            ],
        },
    },
}
# Vertex AI, "Mount an NFS share for custom training", REST request over VPC peering (read
# 2026-11-26: https://cloud.google.com/vertex-ai/docs/training/train-nfs-share):
# workerPoolSpecs[].nfsMounts and the job's network.
NFS_DOC_REQUEST: dict[str, Any] = {
    "displayName": "nfs-train",
    "jobSpec": {
        "workerPoolSpecs": [
            {
                "machineSpec": {"machineType": "n1-standard-8"},
                "replicaCount": 1,
                "containerSpec": {"imageUri": IMAGE},
                "nfsMounts": [
                    {"server": "10.76.0.10", "path": "/vol1", "mountPoint": "sourceData"}
                ],
            }
        ],
        "network": NETWORK,
    },
}

RESERVATION_CONFIG = {
    "display_name": "reserved-train",
    "image": IMAGE,
    "machine": "a3-highgpu-8g",
    "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": [RESERVATION]},
}
PSC_CONFIG = {
    "display_name": "psc-train",
    "image": IMAGE,
    "machine": "n2-standard-8",
    "psc_interface_config": {
        "network_attachment": "training-attachment",
        "dns_peering_configs": [
            {
                "domain": "corp.example.",
                "target_project": "net-host-project",
                "target_network": "shared-vpc",
            }
        ],
    },
}
NFS_CONFIG = {
    "display_name": "nfs-train",
    "image": IMAGE,
    "machine": "n1-standard-8",
    "nfs_mounts": [{"server": "10.76.0.10", "path": "/vol1", "mount_point": "sourceData"}],
    "network": NETWORK,
}


def as_sent(request: dict[str, Any]) -> dict[str, Any]:
    """A documented request as the client sends it, in proto3 JSON form."""
    message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
    json_format.ParseDict(request, message)
    return json_format.MessageToDict(message)


def render_without_additions(config: dict[str, Any]) -> dict[str, Any]:
    """The render in proto3 JSON form, less what the project adds to every job: the boot
    disk (the API's own default values) and the provider's labels."""
    message = rendered(config)
    assert isinstance(message, aiplatform_v1.CustomJob.pb())
    for pool in message.job_spec.worker_pool_specs:
        assert pool.disk_spec.boot_disk_size_gb == machines.DEFAULT_DISK_SIZE_GB
        pool.ClearField("disk_spec")
    message.ClearField("labels")
    return json_format.MessageToDict(message)


class TestGoogleExamples:
    """Stack config jobs render to the requests Google's pages and client send."""

    @pytest.mark.parametrize(
        ("config", "request_"),
        [
            (RESERVATION_CONFIG, RESERVATION_DOC_REQUEST),
            (PSC_CONFIG, PSC_DOC_REQUEST),
            (NFS_CONFIG, NFS_DOC_REQUEST),
        ],
        ids=["reservation", "psc-interface", "nfs"],
    )
    def test_renders_the_documented_request(
        self, config: dict[str, Any], request_: dict[str, Any]
    ) -> None:
        """Field by field, the render is the page's request."""
        assert render_without_additions(config) == as_sent(request_)

    def test_reservation_pool_is_the_clients_own(self) -> None:
        """The Vertex AI SDK's own worker pool for a specific reservation (what
        ``CustomJob.run(reservation_affinity_type=...)`` sends) is the rendered pool."""
        from google.cloud.aiplatform.utils import worker_spec_utils

        (pool,) = worker_spec_utils._DistributedTrainingSpec.chief_worker_pool(
            replica_count=1,
            machine_type="a3-highgpu-8g",
            accelerator_type="NVIDIA_H100_80GB",
            accelerator_count=8,
            boot_disk_type="hyperdisk-balanced",
            reservation_affinity_type="SPECIFIC_RESERVATION",
            reservation_affinity_key="compute.googleapis.com/reservation-name",
            reservation_affinity_values=[RESERVATION],
        ).pool_specs
        sdk = aiplatform_v1.WorkerPoolSpec.pb(aiplatform_v1.WorkerPoolSpec(pool))
        message = rendered({**RESERVATION_CONFIG, "disk": {"type": "hyperdisk-balanced"}})
        ours = message.job_spec.worker_pool_specs[0]  # type: ignore[attr-defined]
        ours.ClearField("container_spec")
        assert json_format.MessageToDict(ours) == json_format.MessageToDict(sdk)

    def test_no_warnings(self) -> None:
        """The documented jobs render with no warning."""
        for config in (RESERVATION_CONFIG, PSC_CONFIG, NFS_CONFIG):
            assert parse_job("job", config, STACK).warnings == []


# ------------------------------------------------------------------------- the rules


def issue_of(config: dict[str, Any]) -> tuple[str, Any, str]:
    """The one issue a job's config has: (key, value, message)."""
    with pytest.raises(SpecError) as caught:
        parse_job("job", config, STACK)
    (issue,) = caught.value.issues
    return issue.key, issue.value, issue.message


class TestRules:
    """Each mistake is refused at preview, naming the key, the value and the fix."""

    def test_flex_start_timeout_over_seven_days(self) -> None:
        key, value, message = issue_of(
            {
                "image": IMAGE,
                "machine": "a3-highgpu-8g",
                "scheduling": {"strategy": "FLEX_START", "timeout": "10d"},
            }
        )
        assert (key, value) == ("vertex-training:jobs.job.scheduling.timeout", "10d")
        assert "7d or less" in message

    def test_flex_start_pools_differ(self) -> None:
        key, value, message = issue_of(
            {
                "image": IMAGE,
                "machine": "a3-highgpu-8g",
                "scheduling": {"strategy": "FLEX_START"},
                "workers": {"replicas": 2, "machine": "a2-highgpu-1g"},
            }
        )
        assert (key, value) == ("vertex-training:jobs.job.workers.machine", "a2-highgpu-1g")
        assert "same" in message and "a3-highgpu-8g" in message

    def test_flex_start_needs_a_listed_gpu(self) -> None:
        key, _, message = issue_of(
            {"image": IMAGE, "machine": "g4-standard-48", "scheduling": {"strategy": "FLEX_START"}}
        )
        assert key == "vertex-training:jobs.job.machine"
        assert "L4, A100, H100, H200 or B200" in message

    def test_flex_start_on_a_reservation(self) -> None:
        key, _, message = issue_of({**RESERVATION_CONFIG, "scheduling": {"strategy": "FLEX_START"}})
        assert key == "vertex-training:jobs.job.reservation_affinity"
        assert "remove reservation_affinity" in message

    def test_specific_reservation_needs_values(self) -> None:
        key, _, message = issue_of(
            {"image": IMAGE, "reservation_affinity": {"type": "SPECIFIC_RESERVATION"}}
        )
        assert key == "vertex-training:jobs.job.reservation_affinity.values"
        assert "projects/PROJECT/zones/ZONE/reservations/NAME" in message

    def test_reservation_in_another_region(self) -> None:
        other = "projects/my-project/zones/europe-west4-a/reservations/r"
        key, value, message = issue_of(
            {
                "image": IMAGE,
                "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": [other]},
            }
        )
        assert (key, value) == ("vertex-training:jobs.job.reservation_affinity.values[0]", other)
        assert "region: europe-west4" in message

    def test_a_bare_reservation_name_warns(self) -> None:
        spec = parse_job(
            "job",
            {
                "image": IMAGE,
                "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": "h100-pool"},
            },
            STACK,
        )
        (warning,) = spec.warnings
        assert "projects/PROJECT/zones/ZONE/reservations/h100-pool" in warning

    def test_workers_inherit_the_reservation_with_the_machine(self) -> None:
        spec = parse_job(
            "job",
            {
                **RESERVATION_CONFIG,
                "workers": {"replicas": 3},
                "evaluators": {"machine": "n1-standard-8"},
            },
            STACK,
        )
        primary, workers, _, evaluators = spec.worker_pools
        assert primary is not None and workers is not None and evaluators is not None
        assert workers.reservation == primary.reservation is not None
        assert evaluators.reservation is None

    def test_retry_elsewhere_cannot_use_the_reservation(self) -> None:
        key, value, message = issue_of(
            {**RESERVATION_CONFIG, "retry": {"when": ["capacity"], "regions": ["us-east4"]}}
        )
        assert (key, value) == ("vertex-training:jobs.job.retry.regions", ["us-east4"])
        assert "the primary pool runs on a specific reservation" in message

    def test_local_backend_warns_that_it_ignores_them(self) -> None:
        local = StackSettings(stack="local", backend="local")
        spec = parse_job("job", NFS_CONFIG, local)
        assert any("nfs_mounts" in w and "local backend" in w for w in spec.warnings)

    def test_gb200_needs_a_reservation(self) -> None:
        key, _, message = issue_of({"image": IMAGE, "machine": "a4x-highgpu-4g"})
        assert key == "vertex-training:jobs.job.reservation_affinity"
        assert "shared Compute Engine reservation" in message

    def test_gpu_partition_size(self) -> None:
        key, value, message = issue_of(
            {"image": IMAGE, "machine": "a2-highgpu-1g", "gpu_partition_size": "1g.10gb"}
        )
        assert (key, value) == ("vertex-training:jobs.job.gpu_partition_size", "1g.10gb")
        assert "1g.5gb" in message
        key, _, message = issue_of(
            {"image": IMAGE, "machine": "a2-highgpu-2g", "gpu_partition_size": "1g.5gb"}
        )
        assert "accelerator.count: 1" in message

    def test_nfs_needs_a_network(self) -> None:
        key, _, message = issue_of({k: v for k, v in NFS_CONFIG.items() if k != "network"})
        assert key == "vertex-training:jobs.job.nfs_mounts"
        assert "set network" in message and "psc_interface_config" in message

    def test_nfs_mount_point_is_a_name(self) -> None:
        key, value, message = issue_of(
            {
                **NFS_CONFIG,
                "nfs_mounts": [{"server": "10.76.0.10", "path": "/v", "mount_point": "/d"}],
            }
        )
        assert (key, value) == ("vertex-training:jobs.job.nfs_mounts[0].mount_point", "/d")
        assert "one directory name" in message

    def test_dns_domain_ends_with_a_dot(self) -> None:
        config = {
            **PSC_CONFIG,
            "psc_interface_config": {
                "network_attachment": "a",
                "dns_peering_configs": [
                    {"domain": "corp", "target_project": "p", "target_network": "n"}
                ],
            },
        }
        key, value, message = issue_of(config)
        assert key.endswith("psc_interface_config.dns_peering_configs[0].domain")
        assert value == "corp" and '"corp."' in message

    def test_network_attachment_in_another_region(self) -> None:
        attachment = "projects/my-project/regions/us-east1/networkAttachments/a"
        key, value, message = issue_of(
            {**PSC_CONFIG, "psc_interface_config": {"network_attachment": attachment}}
        )
        assert (key, value) == (
            "vertex-training:jobs.job.psc_interface_config.network_attachment",
            attachment,
        )
        assert "us-central1" in message

    def test_no_vpc_peering_with_h200(self) -> None:
        key, _, message = issue_of(
            {"image": IMAGE, "machine": "a3-ultragpu-8g", "network": NETWORK}
        )
        assert key == "vertex-training:jobs.job.network"
        assert "psc_interface_config" in message

    def test_protected_artifact_location(self) -> None:
        key, _, message = issue_of(
            {"image": IMAGE, "protected_artifact_location_id": "us-central1"}
        )
        assert key == "vertex-training:jobs.job.protected_artifact_location_id"
        assert "remove it" in message

    def test_each_suggestion_passes(self) -> None:
        """The fixes the messages give are accepted."""
        for config in (
            {
                "image": IMAGE,
                "machine": "a3-highgpu-8g",
                "scheduling": {"strategy": "FLEX_START", "timeout": "7d"},
            },
            {"image": IMAGE, "machine": "a2-highgpu-1g", "gpu_partition_size": "1g.5gb"},
            {**NFS_CONFIG, "network": None, "psc_interface_config": {"network_attachment": "a"}},
            {
                "image": IMAGE,
                "machine": "a3-ultragpu-8g",
                "psc_interface_config": {"network_attachment": "a"},
            },
        ):
            parse_job("job", {k: v for k, v in config.items() if v is not None}, STACK)


class TestNewestGpus:
    """H200, B200, GB200 and RTX PRO 6000: machines, counts, regions, each row sourced."""

    def test_rtx_pro_6000_machines(self) -> None:
        """g4-standard-96 comes with 2 RTX PRO 6000 and boots from Hyperdisk; us-central1
        offers them (no warning)."""
        spec = parse_job("job", {"image": IMAGE, "machine": "g4-standard-96"}, STACK)
        machine = spec.request_body()["jobSpec"]["workerPoolSpecs"][0]["machineSpec"]
        assert (machine["acceleratorType"], machine["acceleratorCount"]) == (
            "NVIDIA_RTX_PRO_6000",
            2,
        )
        assert spec.primary.disk.type == "hyperdisk-balanced"
        assert spec.warnings == []

    def test_a_region_whose_row_lacks_it_warns_naming_the_page(self) -> None:
        asia = StackSettings(stack="dev", project="my-project", region="asia-east1")
        spec = parse_job("job", {"image": IMAGE, "machine": "g4-standard-48"}, asia)
        (warning,) = spec.warnings
        assert "NVIDIA_RTX_PRO_6000" in warning and machines.LOCATIONS_URL in warning

    def test_gb200_on_a_reservation(self) -> None:
        """a4x-highgpu-4g: 4 GB200 on a reservation, warned that its hosts are ARM."""
        spec = parse_job(
            "job",
            {
                "image": IMAGE,
                "machine": "a4x-highgpu-4g",
                "reservation_affinity": {"type": "SPECIFIC_RESERVATION", "values": [RESERVATION]},
            },
            STACK,
        )
        assert spec.primary.accelerator is not None
        assert (spec.primary.accelerator.type, spec.primary.accelerator.count) == (
            "NVIDIA_GB200",
            4,
        )
        (warning,) = spec.warnings
        assert "arm64" in warning

    def test_every_added_row_names_its_source_and_day(self) -> None:
        """Each region row added for the newest GPUs names the locations page and the day."""
        newest = {"NVIDIA_H200_141GB", "NVIDIA_B200", "NVIDIA_GB200", "NVIDIA_RTX_PRO_6000"}
        added = [key for key in machines.REGION_ROW_ADDITIONS if key[1] in newest]
        assert added
        for region, accelerator in added:
            assert accelerator in machines.TRAINING_ACCELERATORS_BY_REGION[region]
            assert "read 2026-11-26" in machines.region_row_source(region, accelerator)
        for source in machines.NEWEST_GPU_SOURCES.values():
            assert "https://" in source and "read 2026-11-26" in source

    def test_quotas_and_billing_phrases(self) -> None:
        """Every newest GPU has a quota metric and a billing phrase (by pattern where Google's
        were not read: quotas.py and billing.py say which)."""
        from vertex_training.catalog import billing, quotas

        for gpu in ("NVIDIA_H200_141GB", "NVIDIA_B200", "NVIDIA_GB200", "NVIDIA_RTX_PRO_6000"):
            quota = quotas.accelerator_quota(gpu)
            assert quota is not None and quota.name.endswith("_gpus")
            assert all(billing.ACCELERATOR_RESOURCES[gpu])
