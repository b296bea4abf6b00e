"""AI Platform Training ``trainingInput`` -> this project's native job keys.

Teams have years of ``config.yaml`` files for ``gcloud ai-platform jobs submit training``.
A job of the stack config may carry such a block unchanged as ``training_input:`` (with an
optional legacy ``job_id``); ``translate_job`` turns it into the native keys of
docs/config-shape.md, which ``provider.spec`` then validates as usual. ``python -m provider
convert`` prints the same translation for a team that wants to move over for good.

Nothing is dropped silently: a setting with no Vertex AI equivalent is refused or warned
about by its key. Issues and warnings carry full keys
(``vertex-training:jobs.old.training_input.masterType``); ``Translation.rekey`` maps an
issue that native validation raises on a translated key back to the legacy key it came
from.

The tables (Google publishes no mapping from legacy machines or scale tiers to Vertex AI
machines, so every row here is this project's own; the reasoning is beside each row):

- ``LEGACY_MACHINES``: each legacy machine name -> a Vertex AI machine and accelerator.
  Verified: the GPUs of each GPU machine and the relations between the machines, from
  the ml v1 API reference (TrainingInput.masterType: "complex_model_m: roughly twice the
  number of cores and roughly double the memory of complex_model_s"; "standard_gpu: a
  machine equivalent to standard that also includes a single NVIDIA Tesla K80 GPU";
  "complex_model_l_v100: ... eight NVIDIA Tesla V100 GPUs"; ...). Not re-verified here:
  the absolute sizes (standard 4 vCPUs / 15 GB, large_model 8 / 52 GB, complex_model_s
  8 / 7.2 GB, complex_model_m 16 / 14.4 GB, complex_model_l 32 / 28.8 GB) are those the
  AI Platform Training "machine types" page gave; they agree with those relations and
  are exactly n1-standard-4, n1-highmem-8 and n1-highcpu-8 / -16 / -32. Compute Engine
  names such as ``n1-highmem-8`` pass through unchanged.
- ``SCALE_TIERS``: each scale tier -> its machines and replica counts. The counts are
  Google's (STANDARD_1: one master, four workers, three parameter servers; PREMIUM_1: one
  master, 19 workers, 11 parameter servers); the machines of STANDARD_1 and PREMIUM_1 were
  never published, so those two rows are estimates and a job using them gets a warning.

Decisions where Vertex AI has no equivalent:

- K80 GPUs (``standard_gpu``, ``complex_model_m_gpu``, ``complex_model_l_gpu``, BASIC_GPU,
  ``acceleratorConfig.type: NVIDIA_TESLA_K80``) are retired on Vertex AI. They are mapped
  to NVIDIA T4 with a warning, not refused: a T4 attaches to the same N1 machines, is
  offered in nearly every training region, and one T4 (8.1 FP32 TFLOPS, 16 GB) outruns the
  K80 GPU Compute Engine counted as one (half a K80 board: about 4.4 TFLOPS, 12 GB), so a
  trainer written for K80s runs unchanged. The count is kept where N1 takes it (1, 2 or 4
  T4s); eight K80s become four T4s (N1's maximum), about the same FP32 throughput with
  less GPU memory, and the warning says so.
- ``scheduling.maxWaitTime``: Vertex AI's ``max_wait_duration`` exists only for the
  FLEX_START strategy, and STANDARD scheduling has no queueing limit: warned (the limit is
  lost, the job itself runs as before). ``scheduling.priority``: no equivalent, warned.
- ``hyperparameters.resumePreviousJobId``: a Vertex AI tuning job cannot continue a legacy
  study: refused. ``enableTrialEarlyStopping: true`` becomes
  ``early_stopping: {decay_curve: {use_elapsed_duration: false}}``: the legacy service
  stopped unpromising trials with Vizier's performance-curve rule, which Vertex AI exposes
  as the decay curve stopping spec (measured by training step, as legacy trials reported).
- ``useChiefInTfConfig``: Vertex AI always names the primary replica ``chief`` in
  TF_CONFIG: ``true`` is accepted, ``false`` warned about (the trainer sees ``chief``, not
  ``master``).
- ``tpuTfVersion``: the TPU runtime comes with the image on Vertex AI: warned. The legacy
  TPU layout (a master VM plus a ``cloud_tpu`` worker) becomes one ``cloud-tpu`` pool, as
  Vertex AI runs TPU v2/v3 jobs; the unused master machine is warned about.
- ``jobDir`` becomes ``base_output_directory`` and is still passed to the application as
  ``--job-dir <dir>`` (gcloud and the legacy service did), unless its args already have it.
- ``runtimeVersion`` / ``pythonVersion`` stay as the native ``runtime_version`` /
  ``python_version`` keys, which ``provider.images`` resolves to a prebuilt image.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from provider import catalog
from provider.errors import Issue
from provider.images import LEGACY_RUNTIMES

__all__ = [
    "DEFAULT_METRIC_TAG",
    "GCLOUD_FLAG_KEYS",
    "LEGACY_MACHINES",
    "SCALE_TIERS",
    "LegacyDocument",
    "LegacyMachine",
    "ScaleTier",
    "Translation",
    "check_job_id",
    "read_legacy_document",
    "translate_job",
    "translate_training_input",
]

# ---------------------------------------------------------------------------- constants

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

# ------------------------------------------------------------------------- the machine table

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

# ------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class _Origin:
    """A native key (dotted path under the job) and the legacy key it was translated from."""

    native: str
    legacy: str
    #: Whether a deeper native key keeps its tail (``.type``, ``[0]``) on the legacy key.
    keep_suffix: bool = False


@dataclass(frozen=True)
class Translation:
    """A job's native keys, and what the translation refused or warned about."""

    native: dict[str, Any]
    issues: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()
    #: The job's full config key (``vertex-training:jobs.<name>``).
    native_base: str = ""
    origins: tuple[_Origin, ...] = field(default=(), repr=False)

    def rekey(self, issue: Issue) -> Issue:
        """The issue with a translated native key replaced by the legacy key it came from."""
        if not self.origins or not issue.key.startswith(self.native_base):
            return issue
        rest = issue.key[len(self.native_base) :]
        if not rest.startswith((".", "[")):
            return issue
        path = rest.removeprefix(".")
        matches = [
            origin
            for origin in self.origins
            if path == origin.native or path.startswith((f"{origin.native}.", f"{origin.native}["))
        ]
        if not matches:
            return issue
        best = max(matches, key=lambda origin: len(origin.native))
        suffix = path[len(best.native) :] if best.keep_suffix else ""
        return Issue(best.legacy + suffix, issue.value, issue.message)

    def rekey_all(self, issues: Iterable[Issue]) -> list[Issue]:
        """``rekey`` for each issue."""
        return [self.rekey(issue) for issue in issues]


def _key(base: str, path: Iterable[str | int]) -> str:
    """A full key: ``base`` plus ``.name`` / ``[index]`` parts (as provider.spec writes them)."""
    key = base
    for part in path:
        key += f"[{part}]" if isinstance(part, int) else (f".{part}" if key else str(part))
    return key


def _did_you_mean(value: str, choices: Sequence[str]) -> str:
    close = difflib.get_close_matches(value, list(choices), n=1, cutoff=0.6)
    return f" Did you mean {close[0]}?" if close else ""


def _one_of(values: Sequence[str]) -> str:
    texts = list(values)
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} or {texts[-1]}"


def check_job_id(job_id: Any) -> str | None:
    """Why ``job_id`` breaks the legacy job ID rules, or None when it keeps them."""
    if not isinstance(job_id, str):
        return "must be text: letters, digits and underscores, starting with a letter"
    if not 1 <= len(job_id) <= MAX_JOB_ID_CHARS:
        return f"legacy job IDs have 1 to {MAX_JOB_ID_CHARS} characters; this one has {len(job_id)}"
    if not _JOB_ID_RE.fullmatch(job_id):
        return (
            "legacy job IDs are letters, digits and underscores, starting with a letter "
            f"(e.g. {re.sub(r'[^A-Za-z0-9_]', '_', job_id).lstrip('_0123456789') or 'my_job_1'})"
        )
    return None


# ------------------------------------------------------------------------------ translator

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class _Role:
    """One replica role of the legacy cluster: its machine, count and the keys they came from."""

    machine: str
    replicas: int
    machine_path: Path
    count_path: Path
    #: masterConfig, workerConfig, ...: where its accelerators and disk are configured.
    config_key: str
    #: What the user wrote at ``machine_path`` (the machine, or the scale tier).
    written: str


class _Translator:
    """Reads one ``trainingInput`` block and builds the native job keys."""

    def __init__(self, source: Mapping[str, Any], *, legacy_base: str, native_base: str) -> None:
        self.source = source
        self.legacy_base = legacy_base
        self.native_base = native_base
        self.issues: list[Issue] = []
        self.warnings: list[Issue] = []
        self.origins: list[_Origin] = []

    # -- helpers

    def key(self, path: Path) -> str:
        return _key(self.legacy_base, path)

    def refuse(self, path: Path, value: Any, message: str) -> None:
        self.issues.append(Issue(self.key(path), value, message))

    def warn(self, path: Path, value: Any, message: str) -> None:
        self.warnings.append(Issue(self.key(path), value, message))

    def came_from(self, native: str, legacy: Path, *, keep_suffix: bool = False) -> None:
        """Record that native key ``native`` was translated from legacy ``legacy``."""
        self.origins.append(_Origin(native, self.key(legacy), keep_suffix))

    def block(self, path: Path, value: Any, keys: Sequence[str]) -> Mapping[str, Any]:
        """A legacy mapping with only ``keys`` (others refused); {} for null or a non-mapping."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.refuse(path, value, "must be a mapping of key: value lines")
            return {}
        for name in value:
            if name not in keys:
                hint = _did_you_mean(str(name), keys)
                self.refuse(
                    (*path, str(name)),
                    value[name],
                    f"not a key of this AI Platform Training block.{hint} The keys here are "
                    f"{_one_of(keys)}",
                )
        return value

    def text(self, path: Path, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value
        self.refuse(path, value, "must be text")
        return None

    def text_list(self, path: Path, value: Any) -> list[str] | None:
        """A list of scalars as text (``[--epochs, 3]`` -> ``["--epochs", "3"]``)."""
        if value is None:
            return None
        if not isinstance(value, list):
            self.refuse(path, value, "must be a list, like [a, b]")
            return None
        texts: list[str] = []
        for index, item in enumerate(value):
            if isinstance(item, bool):
                texts.append("true" if item else "false")
            elif isinstance(item, str | int | float):
                texts.append(str(item))
            else:
                self.refuse((*path, index), item, "must be text or a number")
        return texts

    def count(self, path: Path, value: Any) -> int | None:
        """A replica or accelerator count: an int64 (YAML number or JSON string)."""
        if value is None:
            return None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str) and value.strip().isdigit():
            number = int(value)
        else:
            self.refuse(path, value, "must be a whole number")
            return None
        if number < 0:
            self.refuse(path, value, "must not be negative")
            return None
        return number

    def flag(self, path: Path, value: Any) -> bool | None:
        if value is None or isinstance(value, bool):
            return value
        self.refuse(path, value, "must be true or false")
        return None

    def version_text(self, path: Path, value: Any, runtime: bool) -> str | None:
        """runtimeVersion / pythonVersion as gcloud sent them (YAML numbers become text)."""
        if value is None:
            return None
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int | float) and not isinstance(value, bool):
            text = str(value)
            with_zero = f"{text}0"
            if runtime and "." in text and with_zero in LEGACY_RUNTIMES:
                self.warn(
                    path,
                    value,
                    f"written as a number, which YAML reads as {text} (gcloud sent "
                    f'"{text}"); if {with_zero} was meant, quote it: "{with_zero}"',
                )
            return text
        self.refuse(path, value, 'must be a version, like "2.11"')
        return None

    def duration(self, path: Path, value: Any) -> int | None:
        """A google.protobuf.Duration in JSON form ("7200s") as whole seconds (rounded up)."""
        if value is None:
            return None
        match = _DURATION_RE.fullmatch(value.strip()) if isinstance(value, str) else None
        if match is None:
            self.refuse(path, value, 'must be a duration in seconds, like "7200s"')
            return None
        return math.ceil(float(match["seconds"]))

    # -- the translation

    def translate(self) -> dict[str, Any]:
        source = self.block((), self.source, TRAINING_INPUT_KEYS)
        native: dict[str, Any] = {}
        region = self.text(("region",), source.get("region"))
        if region is not None:
            native["region"] = region
            self.came_from("region", ("region",))
        pools = self._cluster(source)
        program = self._program(source, pools)
        args = program.pop("args", None)
        native.update(program)
        native.update(pools.get("primary", {}))
        if args is not None:
            native["args"] = args
        for role in POOL_ROLES.values():
            if role in pools:
                native[role] = pools[role]
        self._job_dir(source, native)
        self._settings(source, native)
        study = self._study(source.get("hyperparameters"))
        if study is not None:
            native["study"] = study
        return native

    # -- machines

    def _cluster(self, source: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """Native keys of the primary (``"primary"``) and of each other pool, by native key."""
        tier_name = self._tier_name(source.get("scaleTier"))
        configs = {
            key: self.block((key,), source.get(key), REPLICA_CONFIG_KEYS)
            for key in ("masterConfig", *(f"{prefix}Config" for prefix in POOL_ROLES))
        }
        if tier_name is None:
            return {}
        if tier_name == CUSTOM_TIER:
            layout = self._custom_layout(source, configs)
        else:
            layout = self._tier_layout(tier_name, source, configs)
        if layout is not None and any(r.machine == CLOUD_TPU for r in layout.values()):
            layout = self._tpu_layout(layout, configs)
        if layout is None:
            return {}
        pools: dict[str, dict[str, Any]] = {}
        for prefix, role in layout.items():
            native_role = "primary" if prefix == "master" else POOL_ROLES[prefix]
            pool = self._pool(native_role, role, configs[role.config_key])
            if native_role != "primary":
                pool = {"replicas": role.replicas, **pool}
                self.came_from(native_role, role.machine_path)
                self.came_from(f"{native_role}.replicas", role.count_path)
                if "accelerator" in pools["primary"] and "accelerator" not in pool:
                    pool["accelerator"] = None  # the legacy replica had none: do not inherit
                if "disk" in pools["primary"] and "disk" not in pool:
                    pool["disk"] = {"size_gb": catalog.DEFAULT_DISK_SIZE_GB}  # legacy default
            pools[native_role] = pool
        return pools

    def _tier_name(self, value: Any) -> str | None:
        if value is None:
            return DEFAULT_TIER
        if isinstance(value, str) and value in SCALE_TIER_NAMES:
            return value
        hint = _did_you_mean(str(value).upper(), SCALE_TIER_NAMES)
        self.refuse(("scaleTier",), value, f"must be {_one_of(SCALE_TIER_NAMES)}.{hint}")
        return None

    def _custom_layout(
        self, source: Mapping[str, Any], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """Each replica role of a CUSTOM tier job, from the *Type and *Count keys."""
        master = self.text(("masterType",), source.get("masterType"))
        if master is None:
            if "masterType" not in source:
                self.refuse(
                    ("masterType",),
                    None,
                    "scaleTier CUSTOM requires masterType: write masterType: n1-standard-4 "
                    "(a Compute Engine machine type) or a legacy name such as standard",
                )
            return None
        master_path: Path = ("masterType",)
        layout = {"master": _Role(master, 1, master_path, master_path, "masterConfig", master)}
        for prefix in POOL_ROLES:
            type_key, count_key, config_key = f"{prefix}Type", f"{prefix}Count", f"{prefix}Config"
            machine = self.text((type_key,), source.get(type_key))
            count = self.count((count_key,), source.get(count_key))
            if count and machine is None and type_key not in source:
                self.refuse(
                    (type_key,),
                    None,
                    f"{count_key} {count} requires {type_key}: the machine each of them runs on",
                )
            elif machine is not None and count:
                layout[prefix] = _Role(
                    machine, count, (type_key,), (count_key,), config_key, machine
                )
            elif machine is not None or configs[config_key]:
                unused = type_key if machine is not None else config_key
                self.warn(
                    (unused,),
                    machine if machine is not None else dict(configs[config_key]),
                    f"{count_key} is {count or 0}, so no {prefix} replicas run: {unused} is "
                    "not used",
                )
        return layout

    def _tier_layout(
        self, tier_name: str, source: Mapping[str, Any], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """Each replica role of a predefined scale tier (``SCALE_TIERS``)."""
        tier = SCALE_TIERS[tier_name]
        ok = True
        for name in ("masterType", *(f"{p}{s}" for p in POOL_ROLES for s in ("Type", "Count"))):
            if name in source:
                self.refuse(
                    (name,),
                    source[name],
                    f"applies only with scaleTier: CUSTOM (scaleTier {tier_name} fixes the "
                    "machines): set scaleTier: CUSTOM, or remove it",
                )
                ok = False
        for key, config in configs.items():
            if config.get("acceleratorConfig") is not None:
                self.refuse(
                    (key, "acceleratorConfig"),
                    config["acceleratorConfig"],
                    "applies only with scaleTier: CUSTOM and a Compute Engine machine type; "
                    f"scaleTier {tier_name} fixes the accelerators",
                )
                ok = False
        counts = {"worker": tier.workers, "parameterServer": tier.parameter_servers, "evaluator": 0}
        for prefix, count in counts.items():
            if configs[f"{prefix}Config"] and not count:
                self.refuse(
                    (f"{prefix}Config",),
                    dict(configs[f"{prefix}Config"]),
                    f"scaleTier {tier_name} has no {prefix} replicas: remove {prefix}Config",
                )
                ok = False
        if not ok:
            return None
        if tier.estimated:
            self.warn(
                ("scaleTier",),
                tier_name,
                f"Google never published the machines of {tier_name} ({tier.published}); "
                f"this project runs master {tier.master}, {tier.workers} x {tier.worker} "
                f"workers and {tier.parameter_servers} x {tier.parameter_server} parameter "
                "servers (see provider/legacy.py): check that this fits, or switch to "
                "scaleTier: CUSTOM with explicit machine types",
            )
        tier_key: Path = ("scaleTier",)
        layout = {"master": _Role(tier.master, 1, tier_key, tier_key, "masterConfig", tier_name)}
        if tier.worker:
            layout["worker"] = _Role(
                tier.worker, tier.workers, tier_key, tier_key, "workerConfig", tier_name
            )
        if tier.parameter_server:
            layout["parameterServer"] = _Role(
                tier.parameter_server,
                tier.parameter_servers,
                tier_key,
                tier_key,
                "parameterServerConfig",
                tier_name,
            )
        return layout

    def _tpu_layout(
        self, layout: dict[str, _Role], configs: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, _Role] | None:
        """The legacy TPU layouts as Vertex AI runs them: one cloud-tpu pool, one replica.

        Legacy TPU jobs ran the program on a master VM next to a ``cloud_tpu`` worker (or,
        later, on a ``cloud_tpu`` master); on Vertex AI the program runs on the TPU VM.
        """
        master = layout["master"]
        tpu = master
        if master.machine != CLOUD_TPU:
            worker = layout.get("worker")
            if worker is None or worker.machine != CLOUD_TPU:
                for prefix, role in layout.items():
                    if role.machine == CLOUD_TPU:
                        self.refuse(
                            role.machine_path,
                            role.written,
                            "a Cloud TPU runs as the master or as the single worker of a TPU "
                            f"job, not as the {prefix} replicas",
                        )
                return None
            if worker.replicas != 1:
                self.refuse(
                    worker.count_path,
                    worker.replicas,
                    "a legacy TPU job has exactly one cloud_tpu worker: write workerCount: 1",
                )
                return None
            self.warn(
                master.machine_path,
                master.written,
                "Vertex AI runs a TPU v2/v3 job on one cloud-tpu machine, without a separate "
                f"master VM: the master machine {master.machine} is not used",
            )
            for key in ("acceleratorConfig", "diskConfig"):
                if configs["masterConfig"].get(key) is not None:
                    self.warn(
                        ("masterConfig", key),
                        configs["masterConfig"][key],
                        f"belongs to the master VM, which Vertex AI does not run for a TPU "
                        f"job: {key} is not used",
                    )
            for key in ("imageUri", "containerCommand", "containerArgs"):
                if configs["workerConfig"].get(key) is not None:
                    self.warn(
                        ("workerConfig", key),
                        configs["workerConfig"][key],
                        "the TPU VM runs the master's program on Vertex AI (masterConfig, "
                        f"packageUris): the cloud_tpu worker's {key} is not used",
                    )
            tpu = worker
        extra = [p for p, role in layout.items() if role not in (master, tpu)]
        for prefix in extra:
            self.refuse(
                layout[prefix].machine_path,
                layout[prefix].written,
                f"Vertex AI runs a TPU job on one pool with one replica: remove the {prefix} "
                "replicas",
            )
        return None if extra else {"master": tpu}

    def _pool(self, native_role: str, role: _Role, config: Mapping[str, Any]) -> dict[str, Any]:
        """Native keys of one pool: machine, accelerator, disk (the program comes later)."""
        prefix = "" if native_role == "primary" else f"{native_role}."
        config_path: Path = (role.config_key,)
        pool: dict[str, Any] = {}
        legacy_machine = LEGACY_MACHINES.get(role.machine)
        if legacy_machine is not None:
            pool["machine"] = legacy_machine.machine
            if legacy_machine.accelerator is not None:
                pool["accelerator"] = self._accelerator(
                    role.machine_path, role.written, *legacy_machine.accelerator
                )
                self.came_from(f"{prefix}accelerator", role.machine_path)
        elif self._compute_engine_name(role.machine_path, role.machine):
            pool["machine"] = role.machine
        self.came_from(f"{prefix}machine", role.machine_path)
        accelerator_config = self.block(
            (*config_path, "acceleratorConfig"),
            config.get("acceleratorConfig"),
            ACCELERATOR_CONFIG_KEYS,
        )
        if accelerator_config:
            self._accelerator_config(pool, prefix, legacy_machine, role, accelerator_config)
        disk = self._disk(config_path, config.get("diskConfig"), prefix)
        if disk:
            pool["disk"] = disk
        tpu_tf_version = config.get("tpuTfVersion")
        if tpu_tf_version is not None:
            self.warn(
                (*config_path, "tpuTfVersion"),
                tpu_tf_version,
                "Vertex AI has no TPU runtime setting: the TPU software comes with the image "
                "(runtimeVersion or imageUri); tpuTfVersion is not used",
            )
        return pool

    def _compute_engine_name(self, path: Path, name: str) -> bool:
        """Whether ``name`` looks like a Compute Engine machine type (validated natively)."""
        if "-" in name:
            return True
        hint = _did_you_mean(name, list(LEGACY_MACHINES))
        self.refuse(
            path,
            name,
            f"not an AI Platform Training machine name.{hint} Write a Compute Engine machine "
            "type (n1-standard-4, n1-highmem-8, ...) or a legacy name: "
            f"{_one_of(list(LEGACY_MACHINES))}",
        )
        return False

    def _accelerator(self, path: Path, owner: str, gpu: str, count: int) -> dict[str, Any]:
        """A native accelerator; a retired GPU becomes its replacement, with a warning."""
        replacement = RETIRED_GPU_REPLACEMENTS.get(gpu)
        if replacement is None:
            return {"type": gpu, "count": count}
        allowed = sorted(catalog.N1_GPU_MAX_VCPUS[replacement])
        new_count = count if count in allowed else max(c for c in allowed if c <= max(count, 1))
        fewer = (
            f"; N1 machines take at most {allowed[-1]} {replacement}, so {count} K80s become "
            f"{new_count} (about the same FP32 throughput, {16 * new_count} GB of GPU memory "
            f"instead of {12 * count} GB)"
            if new_count != count
            else ""
        )
        self.warn(
            path,
            owner,
            f"{gpu} GPUs are retired on Vertex AI: this job gets {new_count} x {replacement} "
            f"instead of {count} x {gpu}{fewer}. A T4 outruns the K80 GPU it replaces and runs "
            "the same CUDA code; prices differ",
        )
        return {"type": replacement, "count": new_count}

    def _accelerator_config(
        self,
        pool: dict[str, Any],
        prefix: str,
        legacy_machine: LegacyMachine | None,
        role: _Role,
        config: Mapping[str, Any],
    ) -> None:
        path: Path = (role.config_key, "acceleratorConfig")
        if legacy_machine is not None and legacy_machine.name != CLOUD_TPU:
            self.refuse(
                path,
                dict(config),
                f"acceleratorConfig applies to Compute Engine machine types; the legacy "
                f"machine {role.machine} comes with its own accelerators: use a Compute Engine "
                "type (e.g. n1-standard-8) or remove acceleratorConfig",
            )
            return
        kind = self.text((*path, "type"), config.get("type"))
        count = self.count((*path, "count"), config.get("count"))
        if kind is None or kind == UNSPECIFIED_ACCELERATOR:
            if count:
                self.refuse(
                    (*path, "type"),
                    config.get("type"),
                    "an accelerator count needs its type, e.g. type: NVIDIA_TESLA_T4",
                )
            return
        count = 1 if count is None else count
        if count == 0:
            self.warn((*path, "count"), 0, "count is 0: the machine gets no accelerator")
            pool.pop("accelerator", None)
            return
        pool["accelerator"] = self._accelerator(path, kind, kind, count)
        self.came_from(f"{prefix}accelerator", path, keep_suffix=True)

    def _disk(self, config_path: Path, value: Any, prefix: str) -> dict[str, Any]:
        path: Path = (*config_path, "diskConfig")
        disk_config = self.block(path, value, DISK_CONFIG_KEYS)
        disk: dict[str, Any] = {}
        disk_type = self.text((*path, "bootDiskType"), disk_config.get("bootDiskType"))
        if disk_type is not None:
            disk["type"] = disk_type
            self.came_from(f"{prefix}disk.type", (*path, "bootDiskType"))
        size = self.count((*path, "bootDiskSizeGb"), disk_config.get("bootDiskSizeGb"))
        if size is not None:
            disk["size_gb"] = size
            self.came_from(f"{prefix}disk.size_gb", (*path, "bootDiskSizeGb"))
        if disk:
            self.came_from(f"{prefix}disk", path)
        return disk

    # -- what runs

    def _program(
        self, source: Mapping[str, Any], pools: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """image + command, or python_package + runtime_version; args; per-pool containers."""
        master_config = source.get("masterConfig")
        master = master_config if isinstance(master_config, Mapping) else {}
        image = self.text(("masterConfig", "imageUri"), master.get("imageUri"))
        package_uris = self.text_list(("packageUris",), source.get("packageUris"))
        module = self.text(("pythonModule",), source.get("pythonModule"))
        runtime = self.version_text(("runtimeVersion",), source.get("runtimeVersion"), True)
        python = self.version_text(("pythonVersion",), source.get("pythonVersion"), False)
        args = self.text_list(("args",), source.get("args"))
        program: dict[str, Any] = {}
        if image is not None:
            program.update(
                self._container(
                    source, master, image, package_uris=package_uris, runtime=runtime, python=python
                )
            )
        elif package_uris is not None or module is not None:
            program.update(self._package(source, package_uris, module, runtime, python))
        elif "masterConfig" not in source or "imageUri" not in master:
            self.refuse(
                ("packageUris",),
                None,
                "nothing to run: set packageUris and pythonModule (what gcloud's --packages "
                "or --package-path and --module-name gave) or masterConfig.imageUri "
                "(--master-image-uri)",
            )
        container_args = self.text_list(
            ("masterConfig", "containerArgs"), master.get("containerArgs")
        )
        if container_args is not None and args is not None:
            self.refuse(
                ("masterConfig", "containerArgs"),
                container_args,
                "containerArgs and args cannot both be set (AI Platform Training rule): keep one",
            )
        elif container_args is not None:
            program["args"] = container_args
            self.came_from("args", ("masterConfig", "containerArgs"), keep_suffix=True)
        elif args is not None:
            program["args"] = args
            self.came_from("args", ("args",), keep_suffix=True)
        for prefix, role in POOL_ROLES.items():
            if role in pools:
                pools[role].update(self._replica_container(prefix, role, source, image))
        return program

    def _container(
        self,
        source: Mapping[str, Any],
        master: Mapping[str, Any],
        image: str,
        *,
        package_uris: list[str] | None,
        runtime: str | None,
        python: str | None,
    ) -> dict[str, Any]:
        for name, value in (
            ("packageUris", package_uris),
            ("pythonModule", source.get("pythonModule")),
        ):
            if value is not None:
                self.refuse(
                    (name,),
                    value,
                    "a custom container job runs masterConfig.imageUri; packageUris and "
                    "pythonModule are for runtime-version jobs: remove one or the other",
                )
        for name, value in (("runtimeVersion", runtime), ("pythonVersion", python)):
            if value is not None:
                self.refuse(
                    (name,),
                    source.get(name),
                    f"a custom container brings its own framework and Python; {name} applies "
                    "to runtime-version jobs: remove it",
                )
        program: dict[str, Any] = {"image": image}
        self.came_from("image", ("masterConfig", "imageUri"))
        command = self.text_list(
            ("masterConfig", "containerCommand"), master.get("containerCommand")
        )
        if command is not None:
            program["command"] = command
            self.came_from("command", ("masterConfig", "containerCommand"), keep_suffix=True)
        return program

    def _package(
        self,
        source: Mapping[str, Any],
        package_uris: list[str] | None,
        module: str | None,
        runtime: str | None,
        python: str | None,
    ) -> dict[str, Any]:
        if package_uris is None:
            self.refuse(
                ("packageUris",),
                None,
                "pythonModule needs packageUris: the gs:// URIs of the trainer package (gcloud "
                "uploaded --package-path there)",
            )
        if module is None and "pythonModule" not in source:
            self.refuse(
                ("pythonModule",), None, "packageUris needs pythonModule, e.g. trainer.task"
            )
        master = source.get("masterConfig")
        if isinstance(master, Mapping):
            for name in ("containerCommand", "containerArgs"):
                if master.get(name) is not None:
                    self.refuse(
                        ("masterConfig", name),
                        master[name],
                        "applies to custom containers (masterConfig.imageUri) only",
                    )
        if runtime is None:
            self.refuse(
                ("runtimeVersion",),
                None,
                "Vertex AI runs a Python package on a prebuilt image, chosen from "
                'runtimeVersion: set runtimeVersion (e.g. "2.11")',
            )
        if package_uris is None or module is None:
            return {}
        program: dict[str, Any] = {
            "python_package": {"package_uris": package_uris, "module": module}
        }
        self.came_from("python_package", ("packageUris",))
        self.came_from("python_package.package_uris", ("packageUris",), keep_suffix=True)
        self.came_from("python_package.module", ("pythonModule",))
        self.came_from("python_package.executor_image", ("runtimeVersion",))
        if runtime is not None:
            program["runtime_version"] = runtime
            self.came_from("runtime_version", ("runtimeVersion",))
        if python is not None:
            program["python_version"] = python
            self.came_from("python_version", ("pythonVersion",))
        return program

    def _replica_container(
        self, prefix: str, role: str, source: Mapping[str, Any], master_image: str | None
    ) -> dict[str, Any]:
        """A pool's own container: imageUri (default: the master's), containerCommand, Args."""
        config = source.get(f"{prefix}Config")
        if not isinstance(config, Mapping):
            return {}
        path: Path = (f"{prefix}Config",)
        pool: dict[str, Any] = {}
        image = self.text((*path, "imageUri"), config.get("imageUri"))
        if image is not None:
            pool["image"] = image
            self.came_from(f"{role}.image", (*path, "imageUri"))
        command = self.text_list((*path, "containerCommand"), config.get("containerCommand"))
        if command is not None:
            if image is None and master_image is None:
                self.refuse(
                    (*path, "containerCommand"),
                    command,
                    "applies to custom containers (an imageUri) only",
                )
            else:
                # A native pool takes its command only with its own image: name it explicitly.
                pool["image"] = image or master_image
                pool["command"] = command
                self.came_from(f"{role}.command", (*path, "containerCommand"), keep_suffix=True)
        args = self.text_list((*path, "containerArgs"), config.get("containerArgs"))
        if args is not None:
            if image is None and master_image is None:
                self.refuse(
                    (*path, "containerArgs"),
                    args,
                    "applies to custom containers (an imageUri) only",
                )
            else:
                pool["args"] = args
                self.came_from(f"{role}.args", (*path, "containerArgs"), keep_suffix=True)
        return pool

    def _job_dir(self, source: Mapping[str, Any], native: dict[str, Any]) -> None:
        """jobDir -> base_output_directory, and ``--job-dir <dir>`` for the application."""
        job_dir = self.text(("jobDir",), source.get("jobDir"))
        if job_dir is None:
            return
        native["base_output_directory"] = job_dir
        self.came_from("base_output_directory", ("jobDir",))
        if "image" not in native and "python_package" not in native:
            return
        native["args"] = _with_job_dir(native.get("args"), job_dir)
        for role in POOL_ROLES.values():
            pool = native.get(role)
            if isinstance(pool, dict) and "args" in pool:
                pool["args"] = _with_job_dir(pool["args"], job_dir)

    def _settings(self, source: Mapping[str, Any], native: dict[str, Any]) -> None:
        """Scheduling, identity, network, encryption, web access, TF_CONFIG naming."""
        scheduling = self.block(("scheduling",), source.get("scheduling"), SCHEDULING_KEYS)
        timeout = self.duration(("scheduling", "maxRunningTime"), scheduling.get("maxRunningTime"))
        if timeout is not None:
            native["scheduling"] = {"timeout": f"{timeout}s"}
            self.came_from("scheduling", ("scheduling",))
            self.came_from("scheduling.timeout", ("scheduling", "maxRunningTime"))
        if scheduling.get("maxWaitTime") is not None:
            self.warn(
                ("scheduling", "maxWaitTime"),
                scheduling["maxWaitTime"],
                "Vertex AI has no queueing limit for standard scheduling (max_wait_duration "
                "applies to the FLEX_START strategy only): the job may wait in the queue "
                "longer; maxWaitTime is not used",
            )
        if scheduling.get("priority") is not None:
            self.warn(
                ("scheduling", "priority"),
                scheduling["priority"],
                "Vertex AI custom jobs have no priority: priority is not used",
            )
        for legacy, native_key in (("serviceAccount", "service_account"), ("network", "network")):
            value = self.text((legacy,), source.get(legacy))
            if value is not None:
                native[native_key] = value
                self.came_from(native_key, (legacy,))
        encryption = self.block(
            ("encryptionConfig",), source.get("encryptionConfig"), ENCRYPTION_CONFIG_KEYS
        )
        kms_key = self.text(("encryptionConfig", "kmsKeyName"), encryption.get("kmsKeyName"))
        if kms_key is not None:
            native["kms_key"] = kms_key
            self.came_from("kms_key", ("encryptionConfig", "kmsKeyName"))
        web_access = self.flag(("enableWebAccess",), source.get("enableWebAccess"))
        if web_access:
            native["enable_web_access"] = True
            self.came_from("enable_web_access", ("enableWebAccess",))
        if self.flag(("useChiefInTfConfig",), source.get("useChiefInTfConfig")) is False:
            self.warn(
                ("useChiefInTfConfig",),
                False,
                "Vertex AI always names the primary replica 'chief' in TF_CONFIG; a trainer "
                "that looks for a 'master' task must look for 'chief' instead",
            )

    # -- hyperparameter tuning

    def _study(self, value: Any) -> dict[str, Any] | None:
        """hyperparameters -> the native ``study:`` block (docs/config-shape.md)."""
        if value is None:
            return None
        base: Path = ("hyperparameters",)
        spec = self.block(base, value, HYPERPARAMETER_KEYS)
        if not spec:
            return None
        self.came_from("study", base)
        if spec.get("resumePreviousJobId") is not None:
            self.refuse(
                (*base, "resumePreviousJobId"),
                spec["resumePreviousJobId"],
                "a Vertex AI tuning job cannot continue a legacy AI Platform study: remove "
                "resumePreviousJobId (the tuning job starts a new study)",
            )
        goal = spec.get("goal", DEFAULT_GOAL)
        if goal not in GOALS:
            self.refuse((*base, "goal"), goal, f"must be {_one_of(GOALS)}")
        metric = self.text((*base, "hyperparameterMetricTag"), spec.get("hyperparameterMetricTag"))
        study: dict[str, Any] = {
            "metrics": [{"id": metric or DEFAULT_METRIC_TAG, "goal": goal}],
            "parameters": self._parameters((*base, "params"), spec.get("params")),
        }
        self.came_from("study.metrics", (*base, "hyperparameterMetricTag"))
        algorithm = spec.get("algorithm")
        if algorithm is not None:
            if algorithm in ALGORITHMS:
                if ALGORITHMS[algorithm] != "default":
                    study["algorithm"] = ALGORITHMS[algorithm]
                    self.came_from("study.algorithm", (*base, "algorithm"))
            else:
                self.refuse((*base, "algorithm"), algorithm, f"must be {_one_of(list(ALGORITHMS))}")
        if self.flag((*base, "enableTrialEarlyStopping"), spec.get("enableTrialEarlyStopping")):
            study["early_stopping"] = {"decay_curve": {"use_elapsed_duration": False}}
            self.came_from("study.early_stopping", (*base, "enableTrialEarlyStopping"))
        for legacy, native_key, default in (
            ("maxTrials", "max_trials", DEFAULT_MAX_TRIALS),
            ("maxParallelTrials", "parallel_trials", DEFAULT_PARALLEL_TRIALS),
            ("maxFailedTrials", "max_failed_trials", None),
        ):
            number = self.count((*base, legacy), spec.get(legacy))
            if number is None:
                number = default
            if number is not None:
                study[native_key] = number
                self.came_from(f"study.{native_key}", (*base, legacy))
        return study

    def _parameters(self, path: Path, value: Any) -> dict[str, Any]:
        if not isinstance(value, list) or not value:
            self.refuse(path, value, "list the parameters to tune (at least one)")
            return {}
        parameters: dict[str, Any] = {}
        for index, item in enumerate(value):
            item_path: Path = (*path, index)
            spec = self.block(item_path, item, PARAMETER_KEYS)
            name = self.text((*item_path, "parameterName"), spec.get("parameterName"))
            if name is None:
                if "parameterName" not in spec:
                    self.refuse(
                        (*item_path, "parameterName"), None, "each parameter needs parameterName"
                    )
                continue
            if name in parameters:
                self.refuse(
                    (*item_path, "parameterName"), name, "appears twice: parameter names are unique"
                )
                continue
            parameter = self._parameter(item_path, spec)
            if parameter is not None:
                parameters[name] = parameter
                self.came_from(f"study.parameters.{name}", item_path)
        return parameters

    def _parameter(self, path: Path, spec: Mapping[str, Any]) -> dict[str, Any] | None:
        legacy_type = spec.get("type")
        if legacy_type not in PARAMETER_TYPES:
            self.refuse((*path, "type"), legacy_type, f"must be {_one_of(list(PARAMETER_TYPES))}")
            return None
        kind = PARAMETER_TYPES[legacy_type]
        parameter: dict[str, Any] = {"type": kind}
        if kind in ("double", "integer"):
            for legacy, native_key in (("minValue", "min"), ("maxValue", "max")):
                if spec.get(legacy) is None:
                    self.refuse((*path, legacy), None, f"a {legacy_type} parameter needs {legacy}")
                    return None
                parameter[native_key] = spec[legacy]
        else:
            values_key = "categoricalValues" if kind == "categorical" else "discreteValues"
            values = spec.get(values_key)
            if not isinstance(values, list) or not values:
                self.refuse(
                    (*path, values_key), values, f"a {legacy_type} parameter lists {values_key}"
                )
                return None
            parameter["values"] = list(values)
        scale_type = spec.get("scaleType")
        if scale_type is not None:
            if scale_type not in SCALE_TYPES:
                self.refuse(
                    (*path, "scaleType"), scale_type, f"must be {_one_of(list(SCALE_TYPES))}"
                )
            elif kind == "categorical":
                if SCALE_TYPES[scale_type] is not None:
                    self.warn(
                        (*path, "scaleType"),
                        scale_type,
                        "categorical parameters have no scale on Vertex AI: scaleType is not used",
                    )
            elif SCALE_TYPES[scale_type] is not None:
                parameter["scale"] = SCALE_TYPES[scale_type]
        return parameter


def _with_job_dir(args: Sequence[str] | None, job_dir: str) -> list[str]:
    """``args`` plus ``--job-dir <dir>``, unless they pass --job-dir already."""
    current = list(args or [])
    if any(arg == JOB_DIR_FLAG or arg.startswith(f"{JOB_DIR_FLAG}=") for arg in current):
        return current
    return [*current, JOB_DIR_FLAG, job_dir]


# ------------------------------------------------------------------------------ public API


def translate_training_input(
    training_input: Mapping[str, Any],
    *,
    legacy_base: str,
    native_base: str,
    job_id: Any = None,
    job_id_key: str = JOB_ID_KEY,
) -> Translation:
    """Translate a ``trainingInput`` block (and a legacy job ID) into native job keys.

    ``legacy_base`` prefixes the keys of issues about the block
    (``vertex-training:jobs.old.training_input``, or ``trainingInput`` for a config file);
    ``native_base`` is the key the native job will have, for ``Translation.rekey``.
    """
    translator = _Translator(training_input, legacy_base=legacy_base, native_base=native_base)
    native: dict[str, Any] = {}
    if job_id is not None:
        problem = check_job_id(job_id)
        if problem is not None:
            translator.issues.append(Issue(job_id_key, job_id, problem))
        else:
            native["display_name"] = job_id
            translator.origins.append(_Origin("display_name", job_id_key))
    native.update(translator.translate())
    return Translation(
        native=native,
        issues=tuple(translator.issues),
        warnings=tuple(translator.warnings),
        native_base=native_base,
        origins=tuple(translator.origins),
    )


def translate_job(base: str, raw: Mapping[str, Any]) -> Translation:
    """A stack config job with ``training_input`` as native keys (other jobs unchanged).

    ``base`` is the job's full key (``vertex-training:jobs.<name>``). Native keys that say
    what runs cannot sit beside ``training_input``; the others (labels, wait, env, ...)
    are kept.
    """
    if TRAINING_INPUT_KEY not in raw:
        if JOB_ID_KEY in raw:
            return Translation(
                native=dict(raw),
                issues=(
                    Issue(
                        f"{base}.{JOB_ID_KEY}",
                        raw[JOB_ID_KEY],
                        "job_id is the legacy job name of a training_input job; for a native "
                        "job write display_name instead",
                    ),
                ),
                native_base=base,
            )
        return Translation(native=dict(raw), native_base=base)
    training_input = raw[TRAINING_INPUT_KEY]
    legacy_base = f"{base}.{TRAINING_INPUT_KEY}"
    if not isinstance(training_input, Mapping):
        return Translation(
            native={},
            issues=(
                Issue(
                    legacy_base,
                    training_input,
                    "must be the trainingInput block of a gcloud config.yaml: a mapping "
                    "with keys such as scaleTier, packageUris, pythonModule",
                ),
            ),
            native_base=base,
        )
    translation = translate_training_input(
        training_input,
        legacy_base=legacy_base,
        native_base=base,
        job_id=raw.get(JOB_ID_KEY),
        job_id_key=f"{base}.{JOB_ID_KEY}",
    )
    issues = list(translation.issues)
    native = dict(translation.native)
    for name, value in raw.items():
        if name in (TRAINING_INPUT_KEY, JOB_ID_KEY):
            continue
        conflict = _conflict(str(name), training_input, raw)
        if conflict is not None:
            issues.append(Issue(f"{base}.{name}", value, conflict))
        else:
            native[name] = value
    return Translation(
        native=native,
        issues=tuple(issues),
        warnings=translation.warnings,
        native_base=base,
        origins=translation.origins,
    )


def _conflict(name: str, training_input: Mapping[str, Any], raw: Mapping[str, Any]) -> str | None:
    """Why native key ``name`` cannot sit beside ``training_input``, or None."""
    if name in EXCLUSIVE_NATIVE_KEYS:
        return (
            f"{name} cannot be combined with training_input, which says what runs: set it "
            "inside training_input, or convert the job (python -m provider convert) and drop "
            "training_input"
        )
    legacy = NATIVE_KEYS_FROM_LEGACY.get(name)
    if legacy is not None and legacy in training_input:
        return f"training_input sets {legacy} already: keep one of the two"
    if name == "display_name" and JOB_ID_KEY in raw:
        return "job_id names the job already (it is the display name): keep one of the two"
    return None


# ----------------------------------------------------------- gcloud config files (convert)

#: Top-level keys of a gcloud ``--config`` file (a Job resource) that convert reads.
JOB_DOCUMENT_KEYS: Final = ("jobId", "labels", "trainingInput")
#: Output-only Job fields (as in ``gcloud ai-platform jobs describe``): ignored, with a warning.
OUTPUT_ONLY_JOB_KEYS: Final = (
    "createTime",
    "startTime",
    "endTime",
    "state",
    "errorMessage",
    "trainingOutput",
    "etag",
    "jobPosition",
)
#: gcloud ``ai-platform jobs submit training`` flags that fill (and override) trainingInput
#: keys, as gcloud applies them over the --config file.
GCLOUD_FLAG_KEYS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "region": ("region",),
        "job_dir": ("jobDir",),
        "runtime_version": ("runtimeVersion",),
        "python_version": ("pythonVersion",),
        "module_name": ("pythonModule",),
        "packages": ("packageUris",),
        "master_image_uri": ("masterConfig", "imageUri"),
        "scale_tier": ("scaleTier",),
        "master_machine_type": ("masterType",),
        "args": ("args",),
    }
)


@dataclass(frozen=True)
class LegacyDocument:
    """What a gcloud config file holds: the trainingInput block, job ID and labels."""

    training_input: dict[str, Any]
    job_id: Any = None
    labels: Any = None
    issues: tuple[Issue, ...] = ()
    warnings: tuple[Issue, ...] = ()


def read_legacy_document(
    document: Any, *, source: str, flags: Mapping[str, Any] | None = None
) -> LegacyDocument:
    """The legacy job in a gcloud ``--config`` file: ``{trainingInput: ...}`` or a bare block.

    ``flags`` are gcloud flag values by ``GCLOUD_FLAG_KEYS`` name (None: not given); like
    gcloud, they override the file.
    """
    issues: list[Issue] = []
    warnings: list[Issue] = []
    if not isinstance(document, Mapping):
        issue = Issue(
            source, document, "must be a gcloud config file: a mapping with trainingInput"
        )
        return LegacyDocument({}, issues=(issue,))
    if "trainingInput" in document:
        training_input = document["trainingInput"]
        for name, value in document.items():
            if name in OUTPUT_ONLY_JOB_KEYS:
                warnings.append(
                    Issue(str(name), value, "an output-only field of a described job: not used")
                )
            elif name not in JOB_DOCUMENT_KEYS:
                hint = _did_you_mean(str(name), JOB_DOCUMENT_KEYS)
                message = f"not a key of a training job config.{hint} The keys here are " + _one_of(
                    JOB_DOCUMENT_KEYS
                )
                issues.append(Issue(str(name), value, message))
        job_id, labels = document.get("jobId"), document.get("labels")
    elif any(name in TRAINING_INPUT_KEYS for name in document):
        training_input, job_id, labels = document, None, None
    else:
        issue = Issue(
            source,
            sorted(map(str, document)),
            "has no trainingInput: write the file gcloud ai-platform jobs submit training "
            "--config reads (trainingInput: {scaleTier: ..., ...}) or a bare trainingInput block",
        )
        return LegacyDocument({}, issues=(issue,))
    if not isinstance(training_input, Mapping):
        issue = Issue("trainingInput", training_input, "must be a mapping of key: value lines")
        return LegacyDocument({}, issues=(*issues, issue))
    merged = _with_flags(training_input, flags or {})
    return LegacyDocument(merged, job_id, labels, tuple(issues), tuple(warnings))


def _with_flags(training_input: Mapping[str, Any], flags: Mapping[str, Any]) -> dict[str, Any]:
    """``training_input`` with the gcloud flags that were given written over it."""
    merged: dict[str, Any] = {
        name: (dict(value) if isinstance(value, Mapping) else value)
        for name, value in training_input.items()
    }
    for flag, path in GCLOUD_FLAG_KEYS.items():
        value = flags.get(flag)
        if value is None:
            continue
        target = merged
        for part in path[:-1]:
            existing = target.get(part)
            target[part] = dict(existing) if isinstance(existing, Mapping) else {}
            target = target[part]
        target[path[-1]] = value
    return merged
