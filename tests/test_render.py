"""`vertex-training render`: request bodies from a stack file, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests.cli import RUN_TIMEOUT_S, run_cli

REPO = Path(__file__).resolve().parent.parent
EXIT_INVALID_CONFIG = 2

GOOD_STACK = """\
encryptionsalt: v1:c2FsdA==:v1:abc
config:
  gcp:project: my-project
  gcp:region: us-central1
  vertex-training:jobs:
    mnist:
      image: us-docker.pkg.dev/my-project/trainers/mnist:1
      args: [--epochs, 3]
      env:
        LOG_LEVEL: info
        API_TOKEN:
          secure: v1:bm9uY2U=:dGhpcyBpcyBjaXBoZXJ0ZXh0
      accelerator: {type: NVIDIA_TESLA_T4, count: 1}
      workers: {replicas: 2, machine: n1-standard-8}
      reduction_server: {replicas: 1}
      scheduling: {strategy: SPOT, timeout: 2h}
      labels: {team: vision}
      wait: succeeded
    sklearn:
      region: europe-west4
      python_package:
        executor_image: europe-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-7:latest
        package_uris: [gs://my-bucket/trainer-0.1.tar.gz]
        module: trainer.task
"""

BAD_STACK = """\
config:
  gcp:project: my-project
  gcp:region: us-central1
  vertex-training:jobz: {}
  vertex-training:jobs:
    mnist:
      imgae: us-docker.pkg.dev/my-project/trainers/mnist:1
    gpu:
      image: us-docker.pkg.dev/my-project/trainers/mnist:1
      accelerator: {type: NVIDIA_TESLA_T4, count: 3}
"""


def write_stack(tmp_path: Path, text: str, stack: str = "dev") -> Path:
    """A stack file named as Pulumi names them."""
    path = tmp_path / f"Pulumi.{stack}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def parse_custom_job() -> Any:
    """ParseDict into aiplatform_v1.CustomJob (the real protos), back to a dict."""
    pytest.importorskip("google.cloud.aiplatform_v1")
    from google.cloud import aiplatform_v1
    from google.protobuf import json_format

    def parse(body: dict[str, Any]) -> dict[str, Any]:
        message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
        json_format.ParseDict(body, message)
        return json_format.MessageToDict(message)

    return parse


class TestRenderGoodStack:
    """render on a valid stack prints one entry per job with the REST body."""

    def test_prints_every_job(self, tmp_path: Path) -> None:
        """Exit 0; each job has region, backend, parent, customJob and estimated_cost."""
        result = run_cli("render", str(write_stack(tmp_path, GOOD_STACK)))
        assert result.returncode == 0, result.stderr
        rendered = json.loads(result.stdout)
        assert sorted(rendered) == ["mnist", "sklearn"]
        assert rendered["mnist"]["parent"] == "projects/my-project/locations/us-central1"
        assert rendered["sklearn"]["parent"] == "projects/my-project/locations/europe-west4"
        assert {entry["backend"] for entry in rendered.values()} == {"vertex"}
        assert set(rendered["mnist"]) == {
            "region",
            "backend",
            "parent",
            "customJob",
            "estimated_cost",
        }

    def test_bodies_parse_as_custom_jobs(self, tmp_path: Path, parse_custom_job: Any) -> None:
        """Every customJob is accepted by ParseDict into aiplatform_v1.CustomJob unchanged."""
        result = run_cli("render", str(write_stack(tmp_path, GOOD_STACK)))
        for entry in json.loads(result.stdout).values():
            assert parse_custom_job(entry["customJob"]) == entry["customJob"]

    def test_pools_and_secret(self, tmp_path: Path) -> None:
        """Pools sit at their positions; the secret prints as [secret], never ciphertext."""
        result = run_cli("render", str(write_stack(tmp_path, GOOD_STACK)))
        body = json.loads(result.stdout)["mnist"]["customJob"]
        pools = body["jobSpec"]["workerPoolSpecs"]
        assert [p["replicaCount"] for p in pools] == ["1", "2", "1"]
        assert "reductionserver" in pools[2]["containerSpec"]["imageUri"]
        env = pools[0]["containerSpec"]["env"]
        assert {"name": "API_TOKEN", "value": "[secret]"} in env
        assert "ciphertext" not in result.stdout and "dGhpcyBpcyBjaXBoZXJ0ZXh0" not in result.stdout

    def test_output_is_stable(self, tmp_path: Path) -> None:
        """Two runs print identical, key-sorted, indented JSON."""
        path = str(write_stack(tmp_path, GOOD_STACK))
        first, second = run_cli("render", path), run_cli("render", path)
        assert first.stdout == second.stdout
        assert first.stdout == json.dumps(json.loads(first.stdout), indent=2, sort_keys=True) + "\n"

    def test_loads_no_cloud_or_pulumi_module(self, tmp_path: Path) -> None:
        """Rendering imports neither Pulumi nor a Google client library (no cloud calls)."""
        path = str(write_stack(tmp_path, GOOD_STACK))
        probe = textwrap.dedent(
            f"""
            import contextlib, io, sys
            before = set(sys.modules)  # a namespace .pth preloads google.cloud itself
            from vertex_training.__main__ import main
            with contextlib.redirect_stdout(io.StringIO()):
                status = main(["render", {path!r}])
            loaded = sorted(m for m in set(sys.modules) - before
                            if m.split(".")[0] in ("pulumi", "grpc")
                            or m.startswith(("google.cloud", "google.api_core", "google.auth")))
            print(status, loaded)
            """
        )
        result = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            check=False,
        )
        assert result.stdout.strip() == "0 []", result.stderr

    def test_local_stack(self, tmp_path: Path) -> None:
        """A local stack renders without gcp:project, with local package paths."""
        text = textwrap.dedent(
            """\
            config:
              vertex-training:backend: local
              vertex-training:jobs:
                mnist:
                  python_package:
                    package_uris: [dist/trainer-0.1.tar.gz]
                    module: trainer.task
                  base_output_directory: .local-jobs/mnist
            """
        )
        result = run_cli("render", str(write_stack(tmp_path, text, stack="local")))
        assert result.returncode == 0, result.stderr
        entry = json.loads(result.stdout)["mnist"]
        assert entry["backend"] == "local"
        assert entry["parent"].startswith("projects/local/locations/")


class TestRenderBadStack:
    """render on an invalid stack: every issue on stderr, exit status 2."""

    def test_reports_every_issue(self, tmp_path: Path) -> None:
        """Exit 2, nothing on stdout, one stderr line per issue with key, fix and value."""
        result = run_cli("render", str(write_stack(tmp_path, BAD_STACK)))
        assert result.returncode == EXIT_INVALID_CONFIG
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert any(
            line.startswith("vertex-training:jobz: unknown key. Did you mean jobs?")
            for line in lines
        ), lines
        assert (
            "vertex-training:jobs.mnist.imgae: unknown key 'imgae'; did you mean 'image'? "
            "(got 'us-docker.pkg.dev/my-project/trainers/mnist:1')"
        ) in lines
        assert (
            "vertex-training:jobs.gpu.accelerator.count: n1-standard-4 takes NVIDIA_TESLA_T4 "
            "in counts 1, 2 or 4; write one of those (got 3)"
        ) in lines
        assert "Traceback" not in result.stderr

    def test_same_text_as_spec_error(self, tmp_path: Path) -> None:
        """Stderr is exactly str() of each issue the loader finds (what preview shows)."""
        from vertex_training.stackconfig import load_stack_file

        path = write_stack(tmp_path, BAD_STACK)
        issues = load_stack_file(path).all_issues()
        assert issues
        result = run_cli("render", str(path))
        assert result.stderr.splitlines() == [str(issue) for issue in issues]

    def test_missing_file(self, tmp_path: Path) -> None:
        """A stack file that does not exist exits 2 with a one-line message."""
        result = run_cli("render", str(tmp_path / "Pulumi.nope.yaml"))
        assert result.returncode == EXIT_INVALID_CONFIG
        assert "Pulumi.nope.yaml" in result.stderr and "Traceback" not in result.stderr

    def test_usage(self) -> None:
        """No command prints usage and exits 2 (argparse subcommands)."""
        result = run_cli()
        assert result.returncode == EXIT_INVALID_CONFIG
        assert "render" in result.stderr
