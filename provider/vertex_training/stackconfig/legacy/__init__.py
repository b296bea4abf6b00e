"""AI Platform Training ``trainingInput`` -> this project's native job keys.

Teams have years of ``config.yaml`` files for ``gcloud ai-platform jobs submit training``.
A job of the stack config may carry such a block unchanged as ``training_input:`` (with an
optional legacy ``job_id``); ``translate_job`` turns it into the native keys of
docs/config-shape.md, which ``vertex_training.stackconfig`` then validates as usual. ``python -m
vertex_training
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
  ``python_version`` keys, which ``vertex_training.catalog.images`` resolves to a prebuilt image.
"""

from __future__ import annotations

from vertex_training.stackconfig.legacy._gcloud import (
    GCLOUD_FLAG_KEYS,
    LegacyDocument,
    read_legacy_document,
)
from vertex_training.stackconfig.legacy._tables import (
    DEFAULT_METRIC_TAG,
    LEGACY_MACHINES,
    RETIRED_GPU_REPLACEMENTS,
    SCALE_TIERS,
    LegacyMachine,
    ScaleTier,
)
from vertex_training.stackconfig.legacy._translate import translate_job, translate_training_input
from vertex_training.stackconfig.legacy._translation import Translation, check_job_id

__all__ = [
    "DEFAULT_METRIC_TAG",
    "GCLOUD_FLAG_KEYS",
    "LEGACY_MACHINES",
    "RETIRED_GPU_REPLACEMENTS",
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
