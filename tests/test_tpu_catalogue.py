"""TPU slices and the accelerator-by-region table as Google runs them: the two TPU v5e
training jobs of Google's Vertex AI sample notebooks render to the requests the notebooks
send; multi-host slices; region rows that could not be re-read warn instead of refusing."""

from __future__ import annotations

from typing import Any

import pytest

from vertex_training.catalog import machines
from vertex_training.errors import SpecError
from vertex_training.stackconfig import StackSettings, parse_job

STACK = StackSettings(stack="dev", project="my-project", region="us-west1")
IMAGE = "us-west1-docker.pkg.dev/my-project/trainers/train:latest"

# GoogleCloudPlatform/vertex-ai-samples (commit cc0d791), the CustomJob dicts the two TPU
# v5e training notebooks pass to JobServiceClient.create_custom_job, LOCATION = "us-west1"
# in both. Placeholders stand for the notebooks' variables (an image of one's own, names).
LLAMA2_NOTEBOOK_JOB: dict[str, Any] = {
    # notebooks/official/training/tpuv5e_llama2_pytorch_finetuning_and_serving.ipynb
    "display_name": "llama2-7b-lora-train-4x4",
    "job_spec": {
        "worker_pool_specs": [
            {
                "machine_spec": {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x4"},
                "replica_count": 1,
                "container_spec": {
                    "image_uri": IMAGE,
                    "args": [
                        "--tpu_topology=4x4",
                        "--model_name=meta-llama/Llama-2-7b-hf",
                        "--bucket_name=my-bucket",
                        "--output_folder=output",
                        "--checkpoint_directory=output_chk",
                        "--epochs=200",
                        "--merged_model_folder=llama2-7b-hf/modelfiles",
                    ],
                },
            }
        ]
    },
}
GEMMA_NOTEBOOK_JOB: dict[str, Any] = {
    # notebooks/official/training/tpuv5e_gemma_peft_finetuning_and_serving.ipynb
    "display_name": "gemma-lora-train",
    "job_spec": {
        "worker_pool_specs": [
            {
                "machine_spec": {"machine_type": "ct5lp-hightpu-1t", "tpu_topology": "1x1"},
                "replica_count": 1,
                "container_spec": {
                    "image_uri": IMAGE,
                    "args": [
                        "--tpu_topology=1x1",
                        "--model_name=gemma_2b_en",
                        "--output_folder=/gcs/my-bucket/model/gemma-lora-model-tpuv5",
                        "--checkpoint_filename=fine_tuned.weights.h5",
                    ],
                    "env": [
                        {"name": "KAGGLE_KEY", "value": "your-kaggle-key"},
                        {"name": "KAGGLE_USERNAME", "value": "your-kaggle-username"},
                    ],
                },
            }
        ]
    },
}


def stack_config_of(notebook_job: dict[str, Any]) -> dict[str, Any]:
    """The notebook's pool as a user writes it in a stack config, region us-west1."""
    (pool,) = notebook_job["job_spec"]["worker_pool_specs"]
    container = pool["container_spec"]
    config: dict[str, Any] = {
        "display_name": notebook_job["display_name"],
        "region": "us-west1",
        "machine": pool["machine_spec"]["machine_type"],
        "tpu_topology": pool["machine_spec"]["tpu_topology"],
        "image": container["image_uri"],
        "args": container["args"],
    }
    if "env" in container:
        config["env"] = {e["name"]: e["value"] for e in container["env"]}
    return config


class TestNotebookJobs:
    """Google's TPU v5e training notebooks, rendered."""

    @pytest.mark.parametrize(
        "notebook_job", [LLAMA2_NOTEBOOK_JOB, GEMMA_NOTEBOOK_JOB], ids=["llama2-4x4", "gemma-1x1"]
    )
    def test_renders_the_notebook_request(self, notebook_job: dict[str, Any]) -> None:
        """The render, read as a CustomJob proto, is the notebook's request field by field;
        the only additions are the boot disk (the API's own defaults, pd-ssd and 100 GB)
        and the provider's labels."""
        from google.cloud import aiplatform_v1
        from google.protobuf import json_format

        spec = parse_job("nb", stack_config_of(notebook_job), STACK)
        rendered = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
        json_format.ParseDict(spec.request_body(), rendered)
        sent = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob(notebook_job))
        for pool in rendered.job_spec.worker_pool_specs:
            assert (pool.disk_spec.boot_disk_type, pool.disk_spec.boot_disk_size_gb) == (
                machines.DEFAULT_DISK_TYPE,
                machines.DEFAULT_DISK_SIZE_GB,
            )
            pool.ClearField("disk_spec")
        rendered.ClearField("labels")
        assert json_format.MessageToDict(rendered) == json_format.MessageToDict(sent)

    def test_no_warnings(self) -> None:
        """Both notebook jobs pass with no warning: their slices and region are sourced."""
        for job in (LLAMA2_NOTEBOOK_JOB, GEMMA_NOTEBOOK_JOB):
            assert parse_job("nb", stack_config_of(job), STACK).warnings == []


class TestTpuSlices:
    """Topologies per TPU machine, multi-host slices included."""

    def test_every_row_has_a_source(self) -> None:
        """Every TPU slice row names sources the catalogue lists, and its read date."""
        for name, rows in machines.TPU_SLICES.items():
            assert rows, name
            for row in rows:
                assert row.source and set(row.source) <= set(machines.TPU_SOURCES)
                assert row.read_on in ("2026-11-21", "2026-11-23")

    def test_multi_host_chips(self) -> None:
        """4x4 on ct5lp-hightpu-4t is 16 chips on 4 VMs, one replica."""
        row = machines.MACHINE_TYPES["ct5lp-hightpu-4t"].tpu_slice("4x4")
        assert row is not None and (row.chips, row.vms, row.vertex_confirmed) == (16, 4, True)

    def test_unconfirmed_slice_warns(self) -> None:
        """A v5e shape only Cloud TPU documents (8x8) is accepted with a warning naming the
        configure-compute page."""
        spec = parse_job(
            "big", {"image": IMAGE, "machine": "ct5lp-hightpu-4t", "tpu_topology": "8x8"}, STACK
        )
        (warning,) = spec.warnings
        assert machines.CONFIGURE_COMPUTE_URL in warning and "64 chips" in warning

    def test_unknown_topology_refused_with_the_machine_s(self) -> None:
        """A shape no source documents is refused, listing the machine's topologies."""
        with pytest.raises(SpecError) as caught:
            parse_job(
                "odd", {"image": IMAGE, "machine": "ct5lp-hightpu-4t", "tpu_topology": "3x3"}, STACK
            )
        (issue,) = caught.value.issues
        assert "4x4 (16 chips, 4 VMs)" in issue.message

    def test_quota(self) -> None:
        """TPU v5e training chips count against the notebook's quota."""
        assert machines.TPU_TRAINING_QUOTAS["TPU_V5_LITEPOD"].endswith(
            "custom_model_training_tpu_v5e"
        )


class TestRegions:
    """The accelerator-by-region table: sourced rows; gaps warn while it is not re-read."""

    def test_us_west1_offers_v5e(self) -> None:
        """us-west1 offers TPU v5e, sourced from the notebooks and Cloud TPU's zones."""
        assert "TPU_V5_LITEPOD" in machines.TRAINING_ACCELERATORS_BY_REGION["us-west1"]
        source = machines.region_row_source("us-west1", "TPU_V5_LITEPOD")
        assert "tpuv5e_llama2" in source and "types-zones" in source

    def test_every_row_has_a_source(self) -> None:
        """Every (region, accelerator) entry names where it was read."""
        for region, offered in machines.TRAINING_ACCELERATORS_BY_REGION.items():
            for accelerator in offered:
                assert "read 2026-11-2" in machines.region_row_source(region, accelerator)

    def test_gap_warns_naming_the_page(self) -> None:
        """A region whose row lacks the accelerator: a warning naming the locations page."""
        spec = parse_job(
            "job",
            {"image": IMAGE, "region": "us-west2", "machine": "g2-standard-8"},
            STACK,
        )
        (warning,) = spec.warnings
        assert "NVIDIA_L4" in warning and machines.LOCATIONS_URL in warning

    def test_confirmed_table_refuses(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Once the page is re-read (REGION_TABLE_CONFIRMED_ON set), a gap is refused."""
        monkeypatch.setattr(machines, "REGION_TABLE_CONFIRMED_ON", "2026-12-01")
        with pytest.raises(SpecError) as caught:
            parse_job(
                "job", {"image": IMAGE, "region": "us-west2", "machine": "g2-standard-8"}, STACK
            )
        (issue,) = caught.value.issues
        assert "not offered for training in us-west2" in issue.message
