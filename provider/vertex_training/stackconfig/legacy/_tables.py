"""The legacy keys this dialect reads, and the tables it translates by: legacy machines
and scale tiers to Vertex AI machines, each row with its reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

TRAINING_INPUT_KEY: Final = "training_input"
JOB_ID_KEY: Final = "job_id"
#: Legacy job IDs: letters, digits and underscores, starting with a letter, <= 128 chars.
MAX_JOB_ID_CHARS: Final = 128
_JOB_ID_RE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
#: What the legacy service optimized when ``hyperparameterMetricTag`` was not set (and
#: what cloudml-hypertune reports by default).
DEFAULT_METRIC_TAG: Final = "training/hptuning/metric"
DEFAULT_GOAL: Final = "MAXIMIZE"
#: Legacy defaults: "maxTrials ... Defaults to one", likewise maxParallelTrials.
DEFAULT_MAX_TRIALS: Final = 1
DEFAULT_PARALLEL_TRIALS: Final = 1
#: ``--job-dir``: the argument gcloud and the legacy service gave the application.
JOB_DIR_FLAG: Final = "--job-dir"
CUSTOM_TIER: Final = "CUSTOM"
DEFAULT_TIER: Final = "BASIC"
CLOUD_TPU: Final = "cloud_tpu"
VERTEX_CLOUD_TPU: Final = "cloud-tpu"
DEFAULT_TPU: Final = ("TPU_V2", 8)
UNSPECIFIED_ACCELERATOR: Final = "ACCELERATOR_TYPE_UNSPECIFIED"
_DURATION_RE = re.compile(r"(?P<seconds>\d+(\.\d+)?)s")

#: Keys of each legacy block (ml v1 REST reference, TrainingInput and its parts).
TRAINING_INPUT_KEYS: Final = (
    "scaleTier",
    "masterType",
    "masterConfig",
    "workerType",
    "workerConfig",
    "workerCount",
    "parameterServerType",
    "parameterServerConfig",
    "parameterServerCount",
    "evaluatorType",
    "evaluatorConfig",
    "evaluatorCount",
    "packageUris",
    "pythonModule",
    "args",
    "hyperparameters",
    "region",
    "jobDir",
    "runtimeVersion",
    "pythonVersion",
    "scheduling",
    "network",
    "serviceAccount",
    "encryptionConfig",
    "useChiefInTfConfig",
    "enableWebAccess",
)
REPLICA_CONFIG_KEYS: Final = (
    "acceleratorConfig",
    "imageUri",
    "containerCommand",
    "containerArgs",
    "diskConfig",
    "tpuTfVersion",
)
ACCELERATOR_CONFIG_KEYS: Final = ("count", "type")
DISK_CONFIG_KEYS: Final = ("bootDiskType", "bootDiskSizeGb")
SCHEDULING_KEYS: Final = ("maxRunningTime", "maxWaitTime", "priority")
ENCRYPTION_CONFIG_KEYS: Final = ("kmsKeyName",)
HYPERPARAMETER_KEYS: Final = (
    "goal",
    "params",
    "maxTrials",
    "maxParallelTrials",
    "maxFailedTrials",
    "hyperparameterMetricTag",
    "resumePreviousJobId",
    "enableTrialEarlyStopping",
    "algorithm",
)
PARAMETER_KEYS: Final = (
    "parameterName",
    "type",
    "minValue",
    "maxValue",
    "categoricalValues",
    "discreteValues",
    "scaleType",
)
GOALS: Final = ("MAXIMIZE", "MINIMIZE")
#: Legacy ``algorithm`` -> native ``study.algorithm``.
ALGORITHMS: Mapping[str, str] = MappingProxyType(
    {"ALGORITHM_UNSPECIFIED": "default", "GRID_SEARCH": "grid", "RANDOM_SEARCH": "random"}
)
#: Legacy parameter ``type`` -> native parameter ``type``.
PARAMETER_TYPES: Mapping[str, str] = MappingProxyType(
    {"DOUBLE": "double", "INTEGER": "integer", "CATEGORICAL": "categorical", "DISCRETE": "discrete"}
)
#: Legacy ``scaleType`` -> native ``scale`` (None: leave unset).
SCALE_TYPES: Mapping[str, str | None] = MappingProxyType(
    {
        "NONE": None,
        "UNIT_LINEAR_SCALE": "linear",
        "UNIT_LOG_SCALE": "log",
        "UNIT_REVERSE_LOG_SCALE": "reverse_log",
    }
)

#: The replica roles after the master: legacy key prefix -> native pool key.
POOL_ROLES: Mapping[str, str] = MappingProxyType(
    {"worker": "workers", "parameterServer": "parameter_servers", "evaluator": "evaluators"}
)
#: Native job keys that describe what runs: a job with ``training_input`` takes them all
#: from the translation, so setting them as well is a conflict.
EXCLUSIVE_NATIVE_KEYS: Final = (
    "image",
    "command",
    "python_package",
    "framework",
    "runtime_version",
    "python_version",
    "args",
    "machine",
    "accelerator",
    "tpu_topology",
    "disk",
    "replicas",
    "workers",
    "parameter_servers",
    "reduction_server",
    "evaluators",
    "scheduling",
    "study",
)
#: Native job keys the translation sets from a legacy key; either may be given, not both.
NATIVE_KEYS_FROM_LEGACY: Mapping[str, str] = MappingProxyType(
    {
        "region": "region",
        "service_account": "serviceAccount",
        "network": "network",
        "base_output_directory": "jobDir",
        "enable_web_access": "enableWebAccess",
        "kms_key": "encryptionConfig",
    }
)


_K80 = "NVIDIA_TESLA_K80"
_T4 = "NVIDIA_TESLA_T4"
_P100 = "NVIDIA_TESLA_P100"
_V100 = "NVIDIA_TESLA_V100"

#: Retired GPUs and the GPU that replaces them (see the module docstring for the K80).
RETIRED_GPU_REPLACEMENTS: Mapping[str, str] = MappingProxyType({_K80: _T4})


@dataclass(frozen=True)
class LegacyMachine:
    """A legacy AI Platform Training machine name and the Vertex AI machine that replaces it."""

    name: str
    #: What the legacy machine was: vCPUs, memory, GPUs.
    legacy: str
    machine: str
    #: The legacy machine's accelerators, before any retired GPU is replaced.
    accelerator: tuple[str, int] | None
    reasoning: str


def _machines(*rows: LegacyMachine) -> Mapping[str, LegacyMachine]:
    return MappingProxyType({row.name: row for row in rows})


#: Legacy machine names -> Vertex AI machines. Compute Engine names pass through.
LEGACY_MACHINES: Mapping[str, LegacyMachine] = _machines(
    LegacyMachine(
        "standard",
        "4 vCPUs, 15 GB",
        "n1-standard-4",
        None,
        "exactly an n1-standard-4 (4 vCPUs, 15 GB)",
    ),
    LegacyMachine(
        "large_model",
        "8 vCPUs, 52 GB (for parameter servers of large models)",
        "n1-highmem-8",
        None,
        "exactly an n1-highmem-8 (8 vCPUs, 52 GB)",
    ),
    LegacyMachine(
        "complex_model_s",
        "8 vCPUs, 7.2 GB",
        "n1-standard-8",
        None,
        "it was an n1-highcpu-8, which Vertex AI custom training does not offer (its N1 "
        "highcpu machines start at 16 vCPUs); n1-standard-8 keeps the 8 vCPUs with more "
        "memory (30 GB) rather than doubling the vCPUs",
    ),
    LegacyMachine(
        "complex_model_m",
        "16 vCPUs, 14.4 GB",
        "n1-highcpu-16",
        None,
        "exactly an n1-highcpu-16 (16 vCPUs, 14.4 GB)",
    ),
    LegacyMachine(
        "complex_model_l",
        "32 vCPUs, 28.8 GB",
        "n1-highcpu-32",
        None,
        "exactly an n1-highcpu-32 (32 vCPUs, 28.8 GB)",
    ),
    LegacyMachine(
        "standard_gpu",
        "standard + 1 NVIDIA K80",
        "n1-standard-4",
        (_K80, 1),
        "the standard machine; the retired K80 becomes one T4",
    ),
    LegacyMachine(
        "complex_model_m_gpu",
        "complex_model_m + 4 NVIDIA K80",
        "n1-highcpu-16",
        (_K80, 4),
        "the complex_model_m machine; four K80s become four T4s",
    ),
    LegacyMachine(
        "complex_model_l_gpu",
        "complex_model_l + 8 NVIDIA K80",
        "n1-highcpu-32",
        (_K80, 8),
        "the complex_model_l machine; eight K80s become four T4s, the most an N1 machine takes",
    ),
    LegacyMachine(
        "standard_p100",
        "standard + 1 NVIDIA P100",
        "n1-standard-4",
        (_P100, 1),
        "the standard machine with the same GPU (one P100 allows up to 16 vCPUs)",
    ),
    LegacyMachine(
        "complex_model_m_p100",
        "complex_model_m + 4 NVIDIA P100",
        "n1-highcpu-16",
        (_P100, 4),
        "the complex_model_m machine with the same GPUs",
    ),
    LegacyMachine(
        "standard_v100",
        "standard + 1 NVIDIA V100",
        "n1-standard-4",
        (_V100, 1),
        "the standard machine with the same GPU (one V100 allows up to 12 vCPUs)",
    ),
    LegacyMachine(
        "large_model_v100",
        "large_model + 1 NVIDIA V100",
        "n1-highmem-8",
        (_V100, 1),
        "the large_model machine with the same GPU",
    ),
    LegacyMachine(
        "complex_model_m_v100",
        "complex_model_m + 4 NVIDIA V100",
        "n1-highcpu-16",
        (_V100, 4),
        "the complex_model_m machine with the same GPUs",
    ),
    LegacyMachine(
        "complex_model_l_v100",
        "complex_model_l + 8 NVIDIA V100",
        "n1-highcpu-32",
        (_V100, 8),
        "the complex_model_l machine with the same GPUs (eight V100s allow up to 96 vCPUs)",
    ),
    LegacyMachine(
        CLOUD_TPU,
        "a TPU VM with one Cloud TPU (TPU v2, 8 cores, unless acceleratorConfig says v3)",
        VERTEX_CLOUD_TPU,
        DEFAULT_TPU,
        "Vertex AI's cloud-tpu machine runs the same TPU v2 or v3 with 8 cores",
    ),
)


@dataclass(frozen=True)
class ScaleTier:
    """A legacy scale tier: its machines (legacy names) and replica counts."""

    name: str
    published: str
    master: str
    workers: int = 0
    worker: str | None = None
    parameter_servers: int = 0
    parameter_server: str | None = None
    #: Whether the machines are this project's estimate (Google never published them).
    estimated: bool = False
    reasoning: str = ""


#: Scale tiers (CUSTOM is not a tier of fixed machines: its machines come from the types).
SCALE_TIERS: Mapping[str, ScaleTier] = MappingProxyType(
    {
        "BASIC": ScaleTier(
            "BASIC",
            "a single worker instance",
            "standard",
            reasoning="one standard machine: the smallest general-purpose machine Vertex AI "
            "custom training offers",
        ),
        "BASIC_GPU": ScaleTier(
            "BASIC_GPU",
            "a single worker instance with a single NVIDIA Tesla K80 GPU",
            "standard_gpu",
            reasoning="one standard_gpu machine (its K80 becomes a T4)",
        ),
        "BASIC_TPU": ScaleTier(
            "BASIC_TPU",
            "a master VM and a Cloud TPU with eight TPU v2 cores",
            CLOUD_TPU,
            reasoning="Vertex AI runs a TPU v2 job on one cloud-tpu machine with 8 TPU_V2 "
            "cores; no separate master VM",
        ),
        "STANDARD_1": ScaleTier(
            "STANDARD_1",
            "one master instance, plus four workers and three parameter servers",
            "complex_model_s",
            workers=4,
            worker="complex_model_s",
            parameter_servers=3,
            parameter_server="standard",
            estimated=True,
            reasoning="Google's counts; machines estimated: the master and workers compute "
            "(complex_model_s, as the legacy docs recommend for the master and workers of a "
            "cluster), the parameter servers hold a small model (standard)",
        ),
        "PREMIUM_1": ScaleTier(
            "PREMIUM_1",
            "one master instance, plus 19 workers and 11 parameter servers",
            "complex_model_l",
            workers=19,
            worker="complex_model_l",
            parameter_servers=11,
            parameter_server="large_model",
            estimated=True,
            reasoning="Google's counts; machines estimated: the largest CPU machine for the "
            "master and workers (complex_model_l) and large_model for the parameter servers "
            "(the legacy docs' machine 'specially suited for parameter servers')",
        ),
    }
)
SCALE_TIER_NAMES: Final = (*SCALE_TIERS, CUSTOM_TIER)
