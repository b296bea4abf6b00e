"""Container jobs for real: podman runs them through `pulumi up` on the local backend.

The image is built here without a registry: a root filesystem holding a static busybox,
imported with `podman import`. Podman (and runc, busybox) are installed with apt-get when
absent and this runs as root; otherwise the tests skip, saying why.

Some machines cannot start a container with podman's defaults: where root lacks
CAP_SYS_RESOURCE, raising RLIMIT_NOFILE / RLIMIT_NPROC to podman's defaults fails
("setrlimit ... Operation not permitted"), and crun refuses hybrid cgroup hierarchies.
The fixture then runs podman with a containers.conf (CONTAINERS_CONF) that asks for runc
and lower limits, the settings docs/operations.md gives users of such machines.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.engine import COMMAND_TIMEOUT_S, Project, local_stack, tools_missing
from vertex_training.backends.local import LocalBackend

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=str(tools_missing())),
    pytest.mark.timeout(COMMAND_TIMEOUT_S * 3),
]

#: One image per test process: a worker's teardown (`podman rmi -f`, which also ends the
#: containers that run it) must not reach the containers of a test on another worker.
IMAGE = f"localhost/vertex-training-test-{os.getpid()}:1"
APT_PACKAGES = ("podman", "runc", "busybox-static")
#: For hosts where podman's defaults cannot start a container (see the module docstring).
RESTRICTED_HOST_CONF = """\
[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]

[engine]
runtime = "runc"
"""
PROBE_TIMEOUT_S = 120


def _run(*argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, capture_output=True, text=True, check=False, timeout=PROBE_TIMEOUT_S, env=env
    )


def _install() -> str | None:
    """Install podman, runc and busybox with apt-get; why not, or None when done."""
    if all(shutil.which(tool) for tool in ("podman", "runc", "busybox")):
        return None
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        return "podman is not installed and apt-get cannot install it here (not root)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in (("apt-get", "update", "-qq"), ("apt-get", "install", "-y", "-qq", *APT_PACKAGES)):
        done = subprocess.run(argv, capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:
            return f"{' '.join(argv)} failed: {done.stderr.strip()[-300:]}"
    return None


def _build_image(tmp: Path) -> str | None:
    """Import a root filesystem with a static busybox as IMAGE; why not, or None."""
    busybox = Path(shutil.which("busybox") or "/bin/busybox")
    rootfs = tmp / "rootfs"
    for folder in ("bin", "tmp"):
        (rootfs / folder).mkdir(parents=True)
    shutil.copy2(busybox, rootfs / "bin" / "busybox")
    (rootfs / "bin" / "sh").symlink_to("busybox")
    archive = tmp / "rootfs.tar"
    with tarfile.open(archive, "w") as tar:
        tar.add(rootfs, arcname=".")
    done = _run("podman", "import", str(archive), IMAGE)
    return None if done.returncode == 0 else f"podman import failed: {done.stderr.strip()}"


@pytest.fixture(scope="module")
def podman_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The environment under which podman runs IMAGE here, or a skip saying why not."""
    reason = _install()
    if reason:
        pytest.skip(reason)
    tmp = tmp_path_factory.mktemp("podman")
    reason = _build_image(tmp)
    if reason:
        pytest.skip(reason)
    env = dict(os.environ)
    probe = _run("podman", "run", "--rm", IMAGE, "/bin/busybox", "true", env=env)
    if probe.returncode != 0:
        conf = tmp / "containers.conf"
        conf.write_text(RESTRICTED_HOST_CONF)
        env["CONTAINERS_CONF"] = str(conf)
        retry = _run("podman", "run", "--rm", IMAGE, "/bin/busybox", "true", env=env)
        if retry.returncode != 0:
            pytest.skip(
                "podman cannot start a container here, with its defaults "
                f"({probe.stderr.strip()}) or with runc and lower limits "
                f"({retry.stderr.strip()})"
            )
    yield env
    _run("podman", "rmi", "-f", IMAGE)


def container_project(tmp_path: Path, env: dict[str, str]) -> Project:
    project = Project.create(tmp_path)
    project.env.update({k: v for k, v in env.items() if k == "CONTAINERS_CONF"})
    return project


def running_containers(env: dict[str, str], job_id: str) -> list[str]:
    """The running containers of the local job ``job_id`` (its resource name: other tests'
    containers may run beside them)."""
    done = _run("podman", "ps", "--format", "{{.Names}}", env=env)
    return [name for name in done.stdout.split() if f"-{job_id.rsplit('/', 1)[-1]}-" in name]


class TestContainerJobs:
    """A container job with two replicas, through `pulumi up` and `pulumi destroy`."""

    def test_two_replicas_get_the_cluster_and_write_outputs(
        self, tmp_path: Path, podman_env: dict[str, str]
    ) -> None:
        """CLUSTER_SPEC and TF_CONFIG reach both containers; outputs land in the job's
        output directory; the job succeeds."""
        script = (
            'printf "%s" "$CLUSTER_SPEC" > "${AIP_MODEL_DIR}cluster-$RANK.json" && '
            'printf "%s" "$TF_CONFIG" > "${AIP_MODEL_DIR}tf-$RANK.json"'
        )
        job = {
            "image": IMAGE,
            "command": ["/bin/sh", "-c", f'mkdir -p "$AIP_MODEL_DIR" && {script}'],
            "workers": {"replicas": 1},
            "scheduling": {"timeout": "5m"},
            "wait": "succeeded",
        }
        project = container_project(tmp_path, podman_env)
        project.write_stack(local_stack(boxed=job))
        started = time.monotonic()
        project.up().check()
        elapsed = time.monotonic() - started
        outputs = project.outputs()["jobs"]["boxed"]
        assert outputs["state"] == "SUCCEEDED", outputs
        model = Path(outputs["model_directory"])
        specs = [json.loads((model / f"cluster-{rank}.json").read_text()) for rank in (0, 1)]
        assert [s["task"]["type"] for s in specs] == ["workerpool0", "workerpool1"]
        assert specs[0]["cluster"] == specs[1]["cluster"]
        tf = [json.loads((model / f"tf-{rank}.json").read_text()) for rank in (0, 1)]
        assert [t["task"]["type"] for t in tf] == ["chief", "worker"]
        print(f"container job with two replicas: pulumi up took {elapsed:.1f} s")

    def test_destroy_stops_the_containers(self, tmp_path: Path, podman_env: dict[str, str]) -> None:
        """`pulumi destroy` of a running container job leaves no container running."""
        job = {
            "image": IMAGE,
            "command": ["/bin/sh", "-c", "sleep 600"],
            "workers": {"replicas": 1},
            "wait": "running",
        }
        project = container_project(tmp_path, podman_env)
        project.write_stack(local_stack(sleeper=job))
        project.up().check()
        backend = LocalBackend(project.root / ".local-jobs", base_dir=project.root)
        job_id = project.outputs()["jobs"]["sleeper"]["resource_name"]
        deadline = time.monotonic() + 60
        while len(running_containers(podman_env, job_id)) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert len(running_containers(podman_env, job_id)) >= 2, "both replicas should run"
        project.run("destroy", "--yes").check()
        assert backend.get(job_id) is None
        deadline = time.monotonic() + 30
        while running_containers(podman_env, job_id) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert running_containers(podman_env, job_id) == []
