"""`vertex-training convert`, and `render` on stacks whose jobs carry training_input.

The fixtures reproduce the structure and values of the config.yaml examples in Google's
AI Platform Training documentation for ``gcloud ai-platform jobs submit training``
("Specifying machine types or scale tiers": the CUSTOM tier cluster; "Using GPUs":
Compute Engine machines with acceleratorConfig, and GPU legacy machine types;
"Distributed training with containers": per-replica imageUri; "Using hyperparameter
tuning": the hyperparameters block), with the command-line flags the documentation passes
beside them (--region, --job-dir, --module-name, ... and the user arguments after --).
"""

from __future__ import annotations

import datetime
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli import run_cli
from vertex_training.__main__ import EXIT_INVALID_CONFIG, main
from vertex_training.stackconfig import JobSpec, StackSettings, parse_job

REPO = Path(__file__).resolve().parent.parent
JOBS_KEY = "vertex-training:jobs"
STACK = StackSettings(stack="dev", project="my-project", region="us-central1")
#: A day on which the TensorFlow 2.11 image (runtime version 2.11) was supported.
TODAY = "2023-06-01"
PACKAGE = "gs://my-bucket/census/trainer-0.1.tar.gz"
IMAGE = "gcr.io/my-project/census-repo:census-tag"
#: The flags the documentation passes to gcloud beside --config for a runtime-version job.
RUNTIME_FLAGS = (
    "--region=us-central1",
    "--job-dir=gs://my-bucket/census/output",
    "--module-name=trainer.task",
    f"--packages={PACKAGE}",
    "--runtime-version=2.11",
    "--python-version=3.7",
    f"--today={TODAY}",
)
#: The same flags judged as of the real day: runtime 2.11's image is gone (end of
#: availability 2024-11-15).
CENSUS_FLAGS = tuple(flag for flag in RUNTIME_FLAGS if not flag.startswith("--today"))
USER_ARGS = ("--", "--user_first_arg=first_arg_value", "--user_second_arg=second_arg_value")

# "Specifying machine types or scale tiers": a CUSTOM tier cluster.
CUSTOM_TIER = """\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  workerType: n1-highcpu-16
  parameterServerType: n1-highmem-8
  evaluatorType: n1-highcpu-16
  workerCount: 9
  parameterServerCount: 3
  evaluatorCount: 1
"""

# "Using GPUs": Compute Engine machine types with GPUs attached.
GPUS_ATTACHED = """\
trainingInput:
  scaleTier: CUSTOM
  # Configure a master worker with 4 T4 GPUs
  masterType: n1-highcpu-16
  masterConfig:
    acceleratorConfig:
      count: 4
      type: NVIDIA_TESLA_T4
  # Configure 9 workers, each with 4 T4 GPUs
  workerCount: 9
  workerType: n1-highcpu-16
  workerConfig:
    acceleratorConfig:
      count: 4
      type: NVIDIA_TESLA_T4
  # Configure 3 parameter servers with no GPUs
  parameterServerCount: 3
  parameterServerType: n1-highmem-8
"""

# "Using GPUs": legacy machine types that include GPUs (K80s).
GPU_LEGACY_MACHINES = """\
trainingInput:
  scaleTier: CUSTOM
  masterType: complex_model_m_gpu
  workerType: complex_model_m_gpu
  parameterServerType: large_model
  workerCount: 9
  parameterServerCount: 3
"""

# "Distributed training with containers": one image per replica type.
CUSTOM_CONTAINERS = f"""\
trainingInput:
  scaleTier: CUSTOM
  masterType: n1-highcpu-16
  masterConfig:
    imageUri: {IMAGE}
  workerType: n1-highcpu-16
  workerCount: 9
  workerConfig:
    imageUri: {IMAGE}
  parameterServerType: n1-highmem-8
  parameterServerCount: 3
  parameterServerConfig:
    imageUri: {IMAGE}
"""

# "Using hyperparameter tuning": a cluster plus the hyperparameters block.
HYPERPARAMETER_TUNING = """\
trainingInput:
  scaleTier: CUSTOM
  masterType: complex_model_m
  workerType: complex_model_m
  parameterServerType: large_model
  workerCount: 9
  parameterServerCount: 3
  hyperparameters:
    goal: MAXIMIZE
    hyperparameterMetricTag: metric1
    maxTrials: 30
    maxParallelTrials: 1
    enableTrialEarlyStopping: True
    params:
    - parameterName: hidden1
      type: INTEGER
      minValue: 40
      maxValue: 400
      scaleType: UNIT_LINEAR_SCALE
    - parameterName: numRnnCells
      type: DISCRETE
      discreteValues:
      - 1
      - 2
      - 3
      - 4
    - parameterName: rnnCellType
      type: CATEGORICAL
      categoricalValues:
      - BasicLSTMCell
      - BasicRNNCell
      - GRUCell
      - LSTMCell
      - LayerNormBasicLSTMCell
"""


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> str:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def convert(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``vertex-training convert ARGS`` in process: (status, stdout, stderr)."""
    status = main(["convert", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def converted_job(stdout: str) -> tuple[str, dict[str, Any]]:
    """The one job of convert's output: (name, native keys)."""
    document = yaml.safe_load(stdout)
    assert list(document) == [JOBS_KEY]
    ((name, raw),) = document[JOBS_KEY].items()
    return name, raw


def reparse(stdout: str, today: str = TODAY) -> JobSpec:
    """convert's output parsed again by parse_job, as a stack would."""
    name, raw = converted_job(stdout)
    return parse_job(name, raw, STACK, today=datetime.date.fromisoformat(today))


@pytest.fixture(scope="module")
def parse_dict() -> Any:
    """ParseDict into an aiplatform_v1 message (the real protos), back to a dict."""
    pytest.importorskip("google.cloud.aiplatform_v1")
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format

    def parse(body: dict[str, Any], message_type: str = "CustomJob") -> dict[str, Any]:
        cls = getattr(aiplatform_v1, message_type)
        message = cls.pb(cls())
        json_format.ParseDict(body, message)
        return json_format.MessageToDict(message)

    return parse


class TestConvertDocumentedConfigs:
    """The documentation's config.yaml files convert, re-parse and render valid requests."""

    def test_custom_tier(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], parse_dict: Any
    ) -> None:
        """CUSTOM tier: master, 9 workers, 3 parameter servers, 1 evaluator; flags applied."""
        status, out, err = convert(capsys, write(tmp_path, CUSTOM_TIER), *RUNTIME_FLAGS, *USER_ARGS)
        assert status == 0, err
        name, raw = converted_job(out)
        assert name == "config"
        assert raw["workers"] == {"replicas": 9, "machine": "n1-highcpu-16"}
        assert raw["parameter_servers"] == {"replicas": 3, "machine": "n1-highmem-8"}
        assert raw["evaluators"] == {"replicas": 1, "machine": "n1-highcpu-16"}
        assert raw["args"] == [
            "--user_first_arg=first_arg_value",
            "--user_second_arg=second_arg_value",
            "--job-dir",
            "gs://my-bucket/census/output",
        ]
        body = reparse(out).request_body()
        assert parse_dict(body) == body
        pools = body["jobSpec"]["workerPoolSpecs"]
        assert [pool["replicaCount"] for pool in pools] == ["1", "9", "3", "1"]
        assert pools[0]["pythonPackageSpec"]["executorImageUri"] == (
            "us-docker.pkg.dev/vertex-ai/training/tf-cpu.2-11:latest"
        )

    def test_gpus_attached(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], parse_dict: Any
    ) -> None:
        """4 T4s on the master and each worker, none on the parameter servers; the GPU image."""
        status, out, err = convert(capsys, write(tmp_path, GPUS_ATTACHED), *RUNTIME_FLAGS)
        assert status == 0, err
        body = reparse(out).request_body()
        assert parse_dict(body) == body
        machines = [pool["machineSpec"] for pool in body["jobSpec"]["workerPoolSpecs"]]
        t4 = {"acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 4}
        assert machines == [
            {"machineType": "n1-highcpu-16", **t4},
            {"machineType": "n1-highcpu-16", **t4},
            {"machineType": "n1-highmem-8"},
        ]
        package = body["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]
        assert package["executorImageUri"].endswith("/tf-gpu.2-11:latest")

    def test_gpu_legacy_machines(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], parse_dict: Any
    ) -> None:
        """complex_model_m_gpu: K80s become T4s, warned on stderr by key."""
        status, out, err = convert(capsys, write(tmp_path, GPU_LEGACY_MACHINES), *RUNTIME_FLAGS)
        assert status == 0, err
        warnings = err.splitlines()
        assert any(
            line.startswith("warning: trainingInput.masterType: NVIDIA_TESLA_K80 GPUs are retired")
            for line in warnings
        ), warnings
        assert any(line.startswith("warning: trainingInput.workerType:") for line in warnings)
        body = reparse(out).request_body()
        assert parse_dict(body) == body
        assert body["jobSpec"]["workerPoolSpecs"][2]["machineSpec"] == {
            "machineType": "n1-highmem-8"
        }

    def test_custom_containers(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], parse_dict: Any
    ) -> None:
        """Per-replica imageUri become per-pool images; no prebuilt image, no date needed."""
        args = ("--region=us-central1", "--job-dir=gs://my-bucket/census/output")
        status, out, err = convert(capsys, write(tmp_path, CUSTOM_CONTAINERS), *args)
        assert status == 0, err
        body = reparse(out, today=datetime.date.today().isoformat()).request_body()
        assert parse_dict(body) == body
        for pool in body["jobSpec"]["workerPoolSpecs"]:
            assert pool["containerSpec"] == {
                "imageUri": IMAGE,
                "args": ["--job-dir", "gs://my-bucket/census/output"],
            }

    def test_hyperparameter_tuning(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], parse_dict: Any
    ) -> None:
        """hyperparameters become a study: block; the tuning job request parses."""
        study = pytest.importorskip("vertex_training.stackconfig.study")
        status, out, err = convert(capsys, write(tmp_path, HYPERPARAMETER_TUNING), *RUNTIME_FLAGS)
        assert status == 0, err
        _name, raw = converted_job(out)
        assert raw["study"] == {
            "metrics": [{"id": "metric1", "goal": "MAXIMIZE"}],
            "parameters": {
                "hidden1": {"type": "integer", "min": 40, "max": 400, "scale": "linear"},
                "numRnnCells": {"type": "discrete", "values": [1, 2, 3, 4]},
                "rnnCellType": {
                    "type": "categorical",
                    "values": [
                        "BasicLSTMCell",
                        "BasicRNNCell",
                        "GRUCell",
                        "LSTMCell",
                        "LayerNormBasicLSTMCell",
                    ],
                },
            },
            "early_stopping": {"decay_curve": {"use_elapsed_duration": False}},
            "max_trials": 30,
            "parallel_trials": 1,
        }
        spec = reparse(out)
        assert isinstance(spec, study.TuningJobSpec)
        body = spec.request_body()
        assert parse_dict(body, "HyperparameterTuningJob") == body
        assert body["studySpec"]["metrics"] == [{"metricId": "metric1", "goal": "MAXIMIZE"}]
        assert body["maxTrialCount"] == 30


class TestConvertFile:
    """What convert reads: the file's shapes, its job ID and labels, the gcloud flags."""

    def test_bare_training_input(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A bare trainingInput block (no trainingInput: key) converts the same."""
        bare = textwrap.dedent(CUSTOM_TIER.split("\n", 1)[1])
        status, out, err = convert(capsys, write(tmp_path, bare), *RUNTIME_FLAGS)
        assert status == 0, err
        assert converted_job(out)[1]["workers"]["replicas"] == 9

    def test_job_id_and_labels(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """jobId names the job and is its display name; labels are kept."""
        text = "jobId: census_1\nlabels: {team: ml}\n" + CUSTOM_TIER
        status, out, err = convert(capsys, write(tmp_path, text), *RUNTIME_FLAGS)
        assert status == 0, err
        name, raw = converted_job(out)
        assert (name, raw["display_name"], raw["labels"]) == (
            "census_1",
            "census_1",
            {"team": "ml"},
        )

    def test_name_option(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--name names the job in the stack."""
        status, out, _err = convert(
            capsys, write(tmp_path, CUSTOM_TIER), *RUNTIME_FLAGS, "--name", "census"
        )
        assert status == 0
        assert converted_job(out)[0] == "census"

    def test_flags_override_file(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """gcloud flags win over the file's values, as with gcloud."""
        text = CUSTOM_TIER + "  region: europe-west4\n"
        status, out, err = convert(capsys, write(tmp_path, text), *RUNTIME_FLAGS)
        assert status == 0, err
        assert converted_job(out)[1]["region"] == "us-central1"

    def test_scale_tier_flag(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """--scale-tier basic-gpu style lower case is accepted, as gcloud accepts it."""
        text = "trainingInput: {}\n"
        status, out, err = convert(
            capsys, write(tmp_path, text), *RUNTIME_FLAGS, "--scale-tier=basic_gpu"
        )
        assert status == 0, err
        assert converted_job(out)[1]["accelerator"] == {"type": "NVIDIA_TESLA_T4", "count": 1}

    def test_output_only_fields_warned(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A described job's output-only fields are warned about, not refused."""
        text = "state: SUCCEEDED\ncreateTime: '2020-01-01T00:00:00Z'\n" + CUSTOM_TIER
        status, _out, err = convert(capsys, write(tmp_path, text), *RUNTIME_FLAGS)
        assert status == 0, err
        assert "warning: state: an output-only field of a described job: not used" in err

    def test_no_region_warned(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Without a region the job takes the stack's gcp:region: warned."""
        flags = [flag for flag in RUNTIME_FLAGS if not flag.startswith("--region")]
        status, out, err = convert(capsys, write(tmp_path, CUSTOM_TIER), *flags)
        assert status == 0, err
        assert "region" not in converted_job(out)[1]
        assert "warning: trainingInput.region: not set" in err

    def test_output_is_a_stack_config(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The output pastes under config: of a stack file: a header comment, then the jobs key."""
        status, out, _err = convert(capsys, write(tmp_path, CUSTOM_TIER), *RUNTIME_FLAGS)
        assert status == 0
        first, second = out.splitlines()[:2]
        assert first.startswith("# converted from ") and second == f"{JOBS_KEY}:"


class TestConvertRetiredRuntime:
    """Google's census config.yaml (runtime version 2.11, whose image Vertex AI no longer runs):
    converted as is, exit 0, with a warning that says what to change; render refuses it."""

    ADVICE = "replace runtime_version with framework: {name: tensorflow, version: ...}"

    def census(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
        status, out, err = convert(
            capsys, write(tmp_path, CUSTOM_TIER, "census.yaml"), *CENSUS_FLAGS, *USER_ARGS
        )
        assert status == 0, err
        return out, err

    def test_written_as_is(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The translated job is written, runtime version and all."""
        out, _err = self.census(tmp_path, capsys)
        name, raw = converted_job(out)
        assert name == "census"
        assert (raw["runtime_version"], raw["python_version"]) == ("2.11", "3.7")
        assert raw["workers"] == {"replicas": 9, "machine": "n1-highcpu-16"}

    def test_names_what_to_change(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The warning names the end of availability, the key, and what to write instead."""
        _out, err = self.census(tmp_path, capsys)
        (line,) = [line for line in err.splitlines() if "runtimeVersion" in line]
        assert line.startswith("warning: trainingInput.runtimeVersion: runtime version 2.11 ")
        assert "reached end of availability on 2024-11-15" in line
        assert self.ADVICE in line
        assert "render and pulumi preview refuse this job" in line

    def test_nearest_available_named(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """On a day a newer TensorFlow image still ran, that version is named."""
        flags = [*CENSUS_FLAGS, "--today=2025-07-01"]
        status, _out, err = convert(capsys, write(tmp_path, CUSTOM_TIER), *flags)
        assert status == 0, err
        assert 'framework: {name: tensorflow, version: "2.13"}' in err

    def test_render_refuses_with_the_same_advice(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """render of convert's output (pasted under config:) exits 2 with the same advice."""
        out, err = self.census(tmp_path, capsys)
        stack = tmp_path / "Pulumi.census.yaml"
        body = textwrap.indent(out.split("\n", 1)[1], "  ")
        stack.write_text(
            f"config:\n  gcp:project: my-project\n  gcp:region: us-central1\n{body}",
            encoding="utf-8",
        )
        result = run_cli("render", str(stack))
        assert result.returncode == EXIT_INVALID_CONFIG, result.stdout
        refusal = result.stderr.strip()
        assert refusal.startswith(f"{JOBS_KEY}.census.runtime_version: runtime version 2.11 ")
        advice = refusal.split(": ", 1)[1]
        (warning,) = [line for line in err.splitlines() if "runtimeVersion" in line]
        assert advice in warning
        assert self.ADVICE in advice


class TestConvertRefusals:
    """A config that cannot be converted: exit 2, each reason on stderr by the file's keys."""

    def test_no_program(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The documentation's CUSTOM tier file alone has nothing to run (flags gave it)."""
        status, out, err = convert(capsys, write(tmp_path, CUSTOM_TIER), "--region=us-central1")
        assert status == EXIT_INVALID_CONFIG and out == ""
        assert err.startswith("trainingInput.packageUris: nothing to run")

    def test_retired_image_and_another_fault(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A retired runtime image beside another mistake: nothing written, exit 2."""
        text = CUSTOM_TIER.replace("masterType: n1-highcpu-16", "masterType: n1-highcpu-8")
        status, out, err = convert(capsys, write(tmp_path, text), *CENSUS_FLAGS)
        assert status == EXIT_INVALID_CONFIG and out == ""
        assert err.startswith("trainingInput.masterType: n1-highcpu-8 is not a machine type")

    def test_native_refusal_rekeyed(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A machine Vertex AI lacks is refused on the file's key."""
        text = CUSTOM_TIER.replace("masterType: n1-highcpu-16", "masterType: n1-highcpu-8")
        status, _out, err = convert(capsys, write(tmp_path, text), *RUNTIME_FLAGS)
        assert status == EXIT_INVALID_CONFIG
        assert err.startswith("trainingInput.masterType: n1-highcpu-8 is not a machine type")

    def test_refused_settings(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Every refused setting is listed, each with its key."""
        text = CUSTOM_TIER + "  hyperparameters: {params: [], resumePreviousJobId: old_job}\n"
        text += "  masterConfig: {acceleratorConfig: {count: 2}}\n"
        status, _out, err = convert(capsys, write(tmp_path, text), *RUNTIME_FLAGS)
        assert status == EXIT_INVALID_CONFIG
        keys = [line.split(":", 1)[0] for line in err.splitlines()]
        assert keys == [
            "trainingInput.masterConfig.acceleratorConfig.type",
            "trainingInput.hyperparameters.resumePreviousJobId",
            "trainingInput.hyperparameters.params",
        ]

    def test_bad_job_id(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A jobId that breaks the legacy rules is refused on jobId."""
        text = "jobId: 1-census\n" + CUSTOM_TIER
        status, _out, err = convert(
            capsys, write(tmp_path, text), *RUNTIME_FLAGS, "--name", "census"
        )
        assert status == EXIT_INVALID_CONFIG
        assert err.startswith("jobId: legacy job IDs are letters, digits and underscores")

    def test_unknown_top_level_key(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A prediction job file is not a training config."""
        text = "predictionInput: {}\n" + CUSTOM_TIER
        status, _out, err = convert(capsys, write(tmp_path, text), *RUNTIME_FLAGS)
        assert status == EXIT_INVALID_CONFIG
        assert err.startswith("predictionInput: not a key of a training job config")

    def test_not_a_training_config(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A file without trainingInput keys is refused."""
        status, _out, err = convert(capsys, write(tmp_path, "foo: 1\n"))
        assert status == EXIT_INVALID_CONFIG and "has no trainingInput" in err

    def test_invalid_yaml(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A file that is not YAML exits 2."""
        status, _out, err = convert(capsys, write(tmp_path, "trainingInput: [\n"))
        assert status == EXIT_INVALID_CONFIG and "is not valid YAML" in err

    def test_missing_file(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A file that does not exist exits 2 with one line."""
        status, _out, err = convert(capsys, str(tmp_path / "nope.yaml"))
        assert status == EXIT_INVALID_CONFIG and "nope.yaml" in err and "Traceback" not in err


#: A stack whose job carries the custom-containers config unchanged, plus jobDir and
#: scheduling, with a legacy job ID and labels.
LEGACY_STACK = f"""\
config:
  gcp:project: my-project
  gcp:region: us-central1
  vertex-training:jobs:
    census:
      job_id: census_containers_1
      labels: {{team: ml}}
      training_input:
{textwrap.indent(CUSTOM_CONTAINERS.split(chr(10), 1)[1], " " * 6)}\
        jobDir: gs://my-bucket/census/output
        scheduling: {{maxRunningTime: 7200s, maxWaitTime: 3600s}}
"""


class TestCommandLine:
    """The real command line, as a subprocess: convert, and render of legacy jobs."""

    def test_convert(self, tmp_path: Path) -> None:
        """convert prints YAML on stdout and warnings on stderr; exit 0."""
        result = run_cli(
            "convert", write(tmp_path, GPU_LEGACY_MACHINES), *RUNTIME_FLAGS, *USER_ARGS
        )
        assert result.returncode == 0, result.stderr
        _name, raw = converted_job(result.stdout)
        assert raw["machine"] == "n1-highcpu-16"
        assert "warning: trainingInput.masterType:" in result.stderr

    def test_render_legacy_stack(self, tmp_path: Path, parse_dict: Any) -> None:
        """render shows the Vertex AI request of a training_input job; warnings on stderr."""
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(LEGACY_STACK, encoding="utf-8")
        result = run_cli("render", str(stack))
        assert result.returncode == 0, result.stderr
        body = json.loads(result.stdout)["census"]["customJob"]
        assert parse_dict(body) == body
        assert body["displayName"] == "census_containers_1"
        assert body["labels"] == {"team": "ml"}
        assert body["jobSpec"]["scheduling"] == {"timeout": "7200s"}
        assert [pool["replicaCount"] for pool in body["jobSpec"]["workerPoolSpecs"]] == [
            "1",
            "9",
            "3",
        ]
        assert (
            "warning: vertex-training:jobs.census.training_input.scheduling.maxWaitTime: "
            in result.stderr
        )

    def test_render_refusal(self, tmp_path: Path) -> None:
        """render of a training_input job with a refused setting exits 2 with the legacy key."""
        stack = tmp_path / "Pulumi.dev.yaml"
        stack.write_text(
            LEGACY_STACK.replace("masterType: n1-highcpu-16", "masterType: standart"),
            encoding="utf-8",
        )
        result = run_cli("render", str(stack))
        assert result.returncode == EXIT_INVALID_CONFIG
        assert result.stderr.startswith(
            "vertex-training:jobs.census.training_input.masterType: not an AI Platform"
        )

    def test_usage_lists_convert(self) -> None:
        """The command list names convert."""
        result = run_cli("--help")
        assert "convert" in result.stdout
