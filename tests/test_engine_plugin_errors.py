"""The plugin's failures on the real engine, as a user reads them: a YAML program outside
the repository whose `pulumi up` fails in every way a job can (a job that ends FAILED,
an endpoint that cannot be reached, a request Vertex AI refuses, credentials that
cannot be had), a `pulumi import` of a job that does not exist, and a preview with a
refused job and a TrainingPlatform whose project is not known yet. Each resource's
diagnostics are compared whole: the project's words, no "Unexpected <class ...>", no
stack of the provider's code.

Run twice: under the tests' own Python (the pinned ``pulumi``), and through the plugin
as its launcher installs it (``provider/pulumi-resource-vertex-training`` making its own
virtualenv from the package's source with the newest releases the package allows,
whose provider server re-raises every error with its stack). CI runs these once
(``polyglot``).
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any

import grpc
import pytest

from tests.engine import Project, Result
from tests.test_engine_plugin import missing
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

REPO = Path(__file__).resolve().parent.parent
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
PARENT = "projects/test-project/locations/us-central1"
FAILED_MESSAGE = "The replica workerpool0-0 exited with a non-zero status of 1."
REFUSED_MESSAGE = "List of found errors: 1.Field: job_spec.worker_pool_specs[0]; bad spec"
ACCOUNT = "trainer@test-project.iam.gserviceaccount.com"
PROVIDER_URN = "urn:pulumi:test::training::pulumi:providers:vertex-training::"


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def job(**keys: Any) -> dict[str, Any]:
    return {"image": IMAGE, "machine": "e2-standard-4", **keys}


def provider_of(endpoint: str, **settings: str) -> dict[str, Any]:
    """An explicit provider of the plugin, reaching Vertex AI at ``endpoint``."""
    return {
        "type": "pulumi:providers:vertex-training",
        "properties": {
            "apiEndpoint": endpoint,
            "project": "test-project",
            "region": "us-central1",
            **settings,
        },
    }


def program(plugin: Path, fake: FakeVertex, refusing: FakeVertex, dead_port: int) -> dict[str, Any]:
    """The failing program: each job on a provider that fails it one way (``dead_port``:
    where nothing listens)."""

    def on(provider_name: str, **keys: Any) -> dict[str, Any]:
        return {
            "type": "vertex-training:TrainingJob",
            "properties": {"job": job(**keys)},
            "options": {"provider": f"${{{provider_name}}}"},
        }

    return yaml_program(
        plugin,
        {
            "fake": provider_of(fake.address),
            "dead": provider_of(f"127.0.0.1:{dead_port}"),
            "refusing": provider_of(refusing.address),
            "nocreds": provider_of(fake.address, impersonateServiceAccount=ACCOUNT),
            "failme": on("fake", wait="succeeded"),
            "unreachable": on("dead"),
            "refused": on("refusing"),
            "signedout": on("nocreds"),
            "waiter": {
                "type": "vertex-training:JobWaiter",
                "properties": {"jobs": ["${failme.waiterEntry}"]},
                "options": {"provider": "${fake}"},
            },
        },
    )


def yaml_program(plugin: Path, resources: dict[str, Any]) -> dict[str, Any]:
    """A YAML program of these resources, naming ``plugin`` (a folder) as its plugin."""
    return {
        "name": "training",
        "runtime": "yaml",
        "plugins": {"providers": [{"name": "vertex-training", "path": str(plugin)}]},
        "resources": resources,
    }


def diagnostics(output: str) -> dict[str, str]:
    """The engine's diagnostics, by resource name: each one's lines, unindented."""
    found: dict[str, list[str]] = {}
    section = output.split("Diagnostics:", 1)[-1].split("\nResources:", 1)[0]
    current = ""
    for line in section.splitlines():
        head = re.match(r"^  \S.*\((?P<name>[^()]+)\):$", line)
        if head:
            current = head["name"]
            found.setdefault(current, [])
        elif current and line.strip():
            found[current].append(line.strip())
    return {name: "\n".join(lines) for name, lines in found.items()}


def diagnostic_of(output: str, name: str) -> str:
    """The engine's diagnostic of resource ``name``; a failure that shows the output when
    there is none."""
    found = diagnostics(output)
    assert name in found, f"no diagnostic of {name} in:\n{output}"
    return found[name]


def job_id(fake: FakeVertex, display_name: str) -> str:
    [name] = [n for n, j in fake.jobs.items() if j.display_name == display_name]
    return name


def on_fake(**keys: Any) -> dict[str, Any]:
    return {
        "type": "vertex-training:TrainingJob",
        "properties": {"job": job(**keys)},
        "options": {"provider": "${fake}"},
    }


def platform_on_new_job() -> dict[str, Any]:
    """A TrainingPlatform whose project a job still to be made gives (unknown in a preview)."""
    return {
        "later": on_fake(),
        "platform": {
            "type": "vertex-training:TrainingPlatform",
            "properties": {"project": "${later.jobId}", "region": "us-central1"},
            "options": {"providers": ["${fake}"]},
        },
    }


def kept_waiter(project: Project) -> None:
    """The waiter whose wait a job failed is in the state with what it saw (the engine
    updates it at the next `pulumi up`, which waits for that job again)."""
    [waiter] = [r for r in project.state_resources() if r["type"].endswith(":JobWaiter")]
    assert waiter["outputs"]["states"] == {"failme": "FAILED"}
    assert list(waiter["outputs"]["problems"]) == ["failme"]
    assert "ended FAILED" in waiter["initErrors"][0]


def launcher_plugin(tmp: Path) -> Path:
    """A copy of the package's source with its launcher, as a program names it: the first
    run makes ``.venv`` beside it and installs the package there with no constraints."""
    copy = tmp / "plugin"
    ignore = shutil.ignore_patterns(".venv*", "*.egg-info", "__pycache__", "build")
    shutil.copytree(REPO / "provider", copy, ignore=ignore)
    return copy


def run_failures(project: Project, fake: FakeVertex, refusing: FakeVertex) -> Result:
    """`pulumi up` of the failing program; its output."""
    fake.script("failme", run_s=0.5, outcome="FAILED", error_message=FAILED_MESSAGE)
    refusing.fail_next("CreateCustomJob", grpc.StatusCode.INVALID_ARGUMENT, message=REFUSED_MESSAGE)
    result = project.run("up", "--yes", "--skip-preview", "--continue-on-error")
    assert result.returncode != 0, result.output
    return result


def seconds_blurred(text: str) -> str:
    """``text`` with its durations (``0.9s``, ``14s``) as ``Ns``: they vary run to run."""
    return re.sub(r"\b\d+(\.\d+)?s\b", "Ns", text)


#: gRPC's own reason for a connection it could not make, which the project's words quote:
#: gRPC words it after its last attempt, and on a loaded machine that attempt may have
#: timed out rather than been refused.
GRPC_REASON = re.compile(r"(no connection could be made for Ns) \(([^()]*)\)")


def reasons_blurred(found: dict[str, str]) -> dict[str, str]:
    """``found`` (durations blurred) with gRPC's reason in the unreachable job's message
    as ``<gRPC's reason>`` (the project's own words around it name the address)."""
    return {name: GRPC_REASON.sub(r"\1 (<gRPC's reason>)", text) for name, text in found.items()}


def expected_up(fake: FakeVertex, dead_port: int) -> dict[str, str]:
    """Each failed resource's diagnostics, whole (durations blurred)."""
    name = job_id(fake, "failme")
    number = name.rsplit("/", 1)[-1]
    console = (
        f"https://console.cloud.google.com/vertex-ai/locations/us-central1/training/{number}"
        "/cpu?project=test-project"
    )
    logs = (
        "https://console.cloud.google.com/logs/query;query=resource.type%3D%22ml_job%22%0A"
        f"resource.labels.job_id%3D%22{number}%22?project=test-project"
    )
    lines = [e.text.strip() for e in fake.log_entries() if e.job_id == number]
    log_lines = "\n".join(lines[-9:])
    return {
        # The engine's own "1 error occurred" wraps a failure that kept its resource.
        "waiter": f"""failme: FAILED after Ns (ran Ns); console: {console}; logs: {logs}
error: 1 error occurred:
* job failme ({name}) ended FAILED: {FAILED_MESSAGE}
logs: {logs}
class: user_code
fix: the training program failed: read the replica's last log lines, fix the code or its \
arguments, and bump `rerun`
last 9 lines of workerpool0-0's log:
{log_lines}""",
        "unreachable": (
            f"error: cannot reach Vertex AI at 127.0.0.1:{dead_port}: no connection could be "
            "made for Ns (failed to connect to all addresses; last error: UNKNOWN: "
            f"ipv4:127.0.0.1:{dead_port}: Failed to connect to remote host: Connection "
            "refused); it is set by vertex-training:apiEndpoint: correct it (a fake service "
            "prints its address when it starts), or remove the key to reach Google's "
            "us-central1-aiplatform.googleapis.com. Nothing was submitted"
        ),
        "refused": f"error: {REFUSED_MESSAGE}",
        "signedout": (
            "error: no Google credentials (Your default credentials were not found. To set "
            "up Application Default Credentials, see https://cloud.google.com/docs/"
            "authentication/external/set-up-adc for more information.): sign in with "
            "`gcloud auth application-default login`, or set vertex-training:accessToken (or "
            "GOOGLE_OAUTH_ACCESS_TOKEN: Pulumi ESC's gcp-login sets it), or "
            "vertex-training:credentials (or GOOGLE_APPLICATION_CREDENTIALS) to a service "
            "account key or a Workload Identity Federation configuration"
        ),
        "training-test": "error: update failed",
    }


def expected_refusals() -> dict[str, str]:
    """The diagnostics of a refused import, platform and job (``refusals``)."""
    return {
        "imported": (
            f"error: Preview failed: {PARENT}/customJobs/404 does not exist; check the ID "
            "and the region"
        ),
        "platform": (
            "error: vertex-training:index:TrainingPlatform resource 'platform' has a "
            "problem: a TrainingPlatform's project must be known when it is made\n- "
            "property project with value 'output<null>{}' has a problem: give it as text "
            "(a stack config value), not as another resource's output: the platform's "
            "bucket, repository and account are named from it"
        ),
        "bad": (
            "error: vertex-training:index:TrainingJob resource 'bad': property job.machine "
            "value {<nil>} has a problem: job.machine: n1-standard-3 is not a machine type "
            "Vertex AI custom training offers. Did you mean n1-standard-32? Write one such "
            "as n1-standard-4, n2-standard-8, g2-standard-8 or a2-highgpu-1g (got "
            "'n1-standard-3')"
        ),
    }


def refusals(project: Project, plugin: Path, fake: FakeVertex) -> dict[str, str]:
    """The diagnostics of `pulumi import` of a job that does not exist, and of previews
    of a TrainingPlatform whose project is not known yet and of a job a check refuses
    (apart: a refusal ends the preview), by resource."""
    found: dict[str, str] = {}
    imported = project.run(
        "import",
        "vertex-training:index:TrainingJob",
        "imported",
        f"{PARENT}/customJobs/404",
        "--yes",
        "--provider",
        f"fake={PROVIDER_URN}fake",
    )
    assert imported.returncode != 0, imported.output
    found["imported"] = diagnostic_of(imported.output, "imported")
    provider = {"fake": provider_of(fake.address)}
    project.write_program(yaml_program(plugin, {**provider, **platform_on_new_job()}))
    preview = project.run("preview")
    assert preview.returncode != 0, preview.output
    found["platform"] = diagnostic_of(preview.output, f"training-{project.stack}")
    project.write_program(
        yaml_program(plugin, {**provider, "bad": on_fake(machine="n1-standard-3")})
    )
    preview = project.run("preview")
    assert preview.returncode != 0, preview.output
    found["bad"] = diagnostic_of(preview.output, "bad")
    return found


class TestFailuresOnTheEngine:
    def test_each_failure_reads_in_the_projects_words(self, tmp_path: Path) -> None:
        """Under the pinned SDK: the failures of an up, an import, a component and a
        check, each whole."""
        if reason := missing():
            pytest.skip(reason)
        port = closed_port()
        with (
            FakeVertex(queued_s=0.2, pending_s=0.2, serve_logging=True) as fake,
            FakeVertex() as refusing,
        ):
            project = Project.of_yaml(tmp_path, program(REPO / "provider", fake, refusing, port))
            result = run_failures(project, fake, refusing)
            found = {k: seconds_blurred(v) for k, v in diagnostics(result.output).items()}
            assert fake.jobs, result.output  # nothing submitted: expected_up cannot be read
            assert reasons_blurred(found) == reasons_blurred(expected_up(fake, port)), result.output
            kept_waiter(project)
            assert refusals(project, REPO / "provider", fake) == expected_refusals()

    def test_the_plugin_as_its_launcher_installs_it(self, tmp_path: Path) -> None:
        """The launcher's own virtualenv, made from the package's source with no
        constraints (the newest ``pulumi`` the package allows): the same words."""
        if reason := missing():
            pytest.skip(reason)
        plugin = launcher_plugin(tmp_path)
        port = closed_port()
        with (
            FakeVertex(queued_s=0.2, pending_s=0.2, serve_logging=True) as fake,
            FakeVertex() as refusing,
        ):
            project = Project.of_yaml(tmp_path, program(plugin, fake, refusing, port))
            del project.env["VERTEX_TRAINING_PYTHON"]
            result = run_failures(project, fake, refusing)
            found = {k: seconds_blurred(v) for k, v in diagnostics(result.output).items()}
            assert fake.jobs, result.output  # nothing submitted: expected_up cannot be read
            installed = launcher_pulumi(plugin)
            expected = reasons_blurred(expected_up(fake, port))
            assert reasons_blurred(found) == expected, f"pulumi {installed}:\n{result.output}"


def launcher_pulumi(plugin: Path) -> str:
    """The release of ``pulumi`` the launcher installed beside ``plugin``."""
    python = plugin / ".venv" / "bin" / "python"
    script = "import importlib.metadata as m; print(m.version('pulumi'))"
    done = subprocess.run([python, "-c", script], capture_output=True, text=True, check=True)
    return done.stdout.strip()
