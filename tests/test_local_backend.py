"""The local backend runs real jobs: real processes, a real virtualenv, real files.

Most jobs run modules of a small ``probe`` package written once per module into a temp
directory; its virtualenv is built by the first job and reused from the cache by the rest.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from tests.packages import write_package
from vertex_training.api import states
from vertex_training.backends.base import JobStatus
from vertex_training.backends.local import (
    NO_ENGINE,
    REMOTE_OUTPUT,
    REMOTE_PACKAGE,
    LocalBackend,
    ProcessRef,
    _runner,
    container_engine,
    job_name,
    parse_job_name,
    preflight,
    read_json,
)
from vertex_training.backends.local._runner import cluster_environment
from vertex_training.errors import PermanentError

REPO = Path(__file__).resolve().parents[1]
TRAINER = REPO / "trainer"
#: Upper bound for a short job to end on a busy machine: `make test` runs twice as many
#: workers as cores, and a job's supervisor may wait its turn for seconds (under the
#: tests' own 60-second limit).
JOB_END_S = 45.0

PROBE_MODULES = {
    "ok": "print('ok')\n",
    "dump_env": """
        import json, os, sys
        from pathlib import Path
        task = json.loads(os.environ["CLUSTER_SPEC"])["task"]
        out = Path(os.environ["PROBE_OUT"]) / f"{task['type']}-{task['index']}.json"
        out.write_text(json.dumps({"env": dict(os.environ), "argv": sys.argv[1:]}))
    """,
    "fail": """
        import sys
        for i in range(30):
            print(f"line {i}")
        print("something went wrong", file=sys.stderr)
        sys.exit(3)
    """,
    "sleep": """
        import json, os, subprocess, sys, time
        from pathlib import Path
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        pids = {"replica": os.getpid(), "child": child.pid}
        out = Path(os.environ["PROBE_OUT"]) / "pids.json"
        out.with_suffix(".tmp").write_text(json.dumps(pids))
        os.replace(out.with_suffix(".tmp"), out)
        print("sleeping", flush=True)
        time.sleep(600)
    """,
    "crash_once": """
        import os, signal
        from pathlib import Path
        marker = Path(os.environ["PROBE_OUT"]) / "crashed"
        if not marker.exists():
            marker.touch()
            os.kill(os.getpid(), signal.SIGKILL)
        print("second start")
    """,
}


@pytest.fixture(scope="module")
def probe_package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A setuptools project with one module per behaviour a test needs."""
    return write_package(tmp_path_factory.mktemp("probe-project"), "probe", PROBE_MODULES)


@pytest.fixture(scope="module")
def backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalBackend]:
    """One backend root for the module, so the package virtualenvs are built once."""
    backend = LocalBackend(tmp_path_factory.mktemp("local-jobs"))
    yield backend
    for path in backend.root.iterdir():
        if path.name.isdigit():
            backend.cancel(job_name(path.name))


def package_job(
    package: Path | str,
    module: str,
    *,
    args: list[str] | None = None,
    env: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    scheduling: dict[str, Any] | None = None,
    output: Path | None = None,
    extra_pools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A CustomJob REST body with a Python package primary pool (and optional more pools)."""
    pool = {
        "machineSpec": {"machineType": "n1-standard-4"},
        "replicaCount": "1",
        "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 100},
        "pythonPackageSpec": {
            "executorImageUri": "us-docker.pkg.dev/vertex-ai/training/sklearn-cpu.1-6:latest",
            "packageUris": [str(package)],
            "pythonModule": module,
            "args": args or [],
            "env": [{"name": k, "value": v} for k, v in (env or {}).items()],
        },
    }
    job_spec: dict[str, Any] = {"workerPoolSpecs": [pool, *(extra_pools or [])]}
    if scheduling is not None:
        job_spec["scheduling"] = scheduling
    if output is not None:
        job_spec["baseOutputDirectory"] = {"outputUriPrefix": str(output)}
    return {"displayName": module, "labels": labels or {}, "jobSpec": job_spec}


def wait_for(backend: LocalBackend, name: str, wanted: tuple[str, ...]) -> JobStatus:
    """Poll the job until its state is one of ``wanted``; fail after JOB_END_S."""
    deadline = time.monotonic() + JOB_END_S
    while True:
        status = backend.get(name)
        assert status is not None, f"{name} disappeared"
        if status.state in wanted:
            return status
        assert time.monotonic() < deadline, f"{name} still {status.state}, wanted {wanted}"
        time.sleep(0.05)


def wait_for_file(path: Path) -> Path:
    deadline = time.monotonic() + JOB_END_S
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)
    return path


def alive(pid: int) -> bool:
    return ProcessRef.of(pid).alive()


def job_pids(backend: LocalBackend, status: JobStatus, pids_file: Path) -> list[int]:
    """The supervisor's, the replica's and the replica's child's pids."""
    record_dir = backend.root / status.job_id
    supervisor = read_json(record_dir / "supervisor.json")["pid"]
    return [supervisor, *read_json(pids_file).values()]


class TestNames:
    def test_name_round_trips(self) -> None:
        """A job name is local/customJobs/<id> and parses back to the id."""
        assert parse_job_name(job_name("123")) == "123"

    def test_foreign_name_is_refused(self) -> None:
        """A Vertex resource name is not a local job name."""
        with pytest.raises(PermanentError, match="not a local job name"):
            LocalBackend("/nonexistent").get("projects/p/locations/l/customJobs/1")


class TestPythonPackageJob:
    @pytest.mark.timeout(60)
    def test_trainer_job_succeeds_and_writes_model(
        self, backend: LocalBackend, tmp_path: Path
    ) -> None:
        """The example trainer runs to SUCCEEDED and leaves its model under the output dir."""
        body = package_job(
            TRAINER,
            "trainer.task",
            args=["--epochs", "2", "--num-samples", "1000"],
            output=tmp_path,
        )
        submitted = backend.submit(body)
        assert submitted.state == states.QUEUED
        assert submitted.create_time.endswith("Z")
        status = wait_for(backend, submitted.name, states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED, status.error
        model = json.loads((tmp_path / "model" / "model.json").read_text())
        assert model["metrics"]["accuracy"] > 0.6
        assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == [
            "ckpt-0001.json",
            "ckpt-0002.json",
        ]
        assert status.create_time <= status.start_time <= status.end_time
        log = Path(backend.logs_url(status.name).removeprefix("file://"))
        assert "final accuracy" in log.read_text()
        metrics = backend.root / status.job_id / "hypertune" / "workerpool0-0.metrics"
        assert json.loads(metrics.read_text())["accuracy"] == str(model["metrics"]["accuracy"])

    @pytest.mark.timeout(60)
    def test_job_outlives_the_submitting_process(
        self, backend: LocalBackend, probe_package: Path
    ) -> None:
        """A job submitted by a process that exited at once runs on, seen by a new instance."""
        body = package_job(probe_package, "probe.ok", labels={"case": "outlives"})
        submit = (
            "import json, sys; from vertex_training.backends.local import LocalBackend; "
            f"print(LocalBackend({str(backend.root)!r}).submit(json.loads(sys.argv[1])).name)"
        )
        name = subprocess.run(
            [sys.executable, "-c", submit, json.dumps(body)],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        status = wait_for(LocalBackend(backend.root), name, states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED, status.error
        assert status.labels == {"case": "outlives"}
        assert LocalBackend(backend.root).get(name) == status

    @pytest.mark.timeout(60)
    def test_failing_module_fails_with_log_tail(
        self, backend: LocalBackend, probe_package: Path
    ) -> None:
        """A replica exiting non-zero fails the job with the last lines of its log as error."""
        status = wait_for(
            backend,
            backend.submit(package_job(probe_package, "probe.fail")).name,
            states.TERMINAL_STATES,
        )
        assert status.state == states.FAILED
        assert "workerpool0-0 exited with a non-zero status of 3" in status.error
        assert "something went wrong" in status.error
        assert "line 29" in status.error and "line 0\n" not in status.error

    @pytest.mark.timeout(60)
    def test_wheel_installs_with_pip(self, backend: LocalBackend, tmp_path: Path) -> None:
        """A wheel package URI is installed with pip into the job's virtualenv and runs."""
        wheel = tmp_path / "wheelprobe-0.1.0-py3-none-any.whl"
        dist_info = "wheelprobe-0.1.0.dist-info"
        with zipfile.ZipFile(wheel, "w") as archive:
            archive.writestr("wheelprobe/__init__.py", "")
            archive.writestr("wheelprobe/main.py", "print('from a wheel')\n")
            archive.writestr(
                f"{dist_info}/METADATA", "Metadata-Version: 2.1\nName: wheelprobe\nVersion: 0.1.0\n"
            )
            archive.writestr(
                f"{dist_info}/WHEEL",
                "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
            )
            archive.writestr(f"{dist_info}/RECORD", "")
        status = wait_for(
            backend,
            backend.submit(package_job(wheel, "wheelprobe.main")).name,
            states.TERMINAL_STATES,
        )
        assert status.state == states.SUCCEEDED, status.error
        assert (
            "from a wheel"
            in Path(backend.logs_url(status.name).removeprefix("file://")).read_text()
        )

    def test_remote_package_is_refused(self, backend: LocalBackend) -> None:
        """A gs:// package URI cannot run locally: PermanentError at submit, no record."""
        body = package_job("gs://b/t.tar.gz", "trainer.task")
        before = set(backend.root.iterdir())
        with pytest.raises(PermanentError, match="gs://"):
            backend.submit(body)
        assert set(backend.root.iterdir()) == before


class TestLocalPaths:
    @pytest.mark.timeout(60)
    def test_relative_paths_resolve_against_base_dir(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """Relative package paths resolve against base_dir; no output dir means the default."""
        local = LocalBackend(backend.root, base_dir=probe_package.parent)
        body = package_job(probe_package.name, "probe.dump_env", env={"PROBE_OUT": str(tmp_path)})
        status = wait_for(local, local.submit(body).name, states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED, status.error
        job = read_json(backend.root / status.job_id / "job.json")
        assert job["jobSpec"]["workerPoolSpecs"][0]["pythonPackageSpec"]["packageUris"] == [
            str(probe_package)
        ]
        env = json.loads((tmp_path / "workerpool0-0.json").read_text())["env"]
        assert env["AIP_MODEL_DIR"] == f"{local.output_directory(status.name)}/model/"

    @pytest.mark.timeout(60)
    @pytest.mark.skipif(not Path("/proc/self/cwd").exists(), reason="reads /proc/<pid>/cwd")
    def test_supervisor_runs_in_base_dir(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """The supervisor works in base_dir, a directory outside the checkout, and runs the job."""
        project = tmp_path / "project"
        project.mkdir()
        local = LocalBackend(backend.root, base_dir=project)
        submitted = local.submit(
            package_job(probe_package, "probe.sleep", env={"PROBE_OUT": str(tmp_path)})
        )
        supervisor = job_pids(local, submitted, wait_for_file(tmp_path / "pids.json"))[0]
        try:
            assert Path(os.readlink(f"/proc/{supervisor}/cwd")) == project.resolve()
            assert wait_for(local, submitted.name, (states.RUNNING,)).state == states.RUNNING
        finally:
            local.cancel(submitted.name)

    def test_preflight_names_stack_config_keys(self, tmp_path: Path) -> None:
        """preflight reports remote or missing packages and remote outputs by config key."""
        body = package_job("gs://bucket/trainer.tar.gz", "trainer.task", output=Path("x"))
        body["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"] = "gs://bucket/out"
        workers = package_job("missing", "trainer.task")["jobSpec"]["workerPoolSpecs"][0]
        body["jobSpec"]["workerPoolSpecs"] += [workers, {}]
        issues = preflight(body, key_prefix="vertex-training:jobs.mnist", base_dir=tmp_path)
        assert [(i.key, i.value) for i in issues] == [
            (
                "vertex-training:jobs.mnist.python_package.package_uris",
                "gs://bucket/trainer.tar.gz",
            ),
            ("vertex-training:jobs.mnist.workers.python_package.package_uris", "missing"),
            ("vertex-training:jobs.mnist.base_output_directory", "gs://bucket/out"),
        ]
        assert issues[0].message == REMOTE_PACKAGE and issues[2].message == REMOTE_OUTPUT
        assert str(tmp_path / "missing") in issues[1].message

    def test_preflight_accepts_a_runnable_job(self, probe_package: Path) -> None:
        """A job with local packages and outputs has nothing to report."""
        assert preflight(package_job(probe_package, "probe.ok", output=Path("out"))) == []


class TestClusterEnvironment:
    def test_pools_map_to_vertex_names(self) -> None:
        """CLUSTER_SPEC names pools workerpoolN; TF_CONFIG chief/worker/ps and no evaluator."""
        spec = {"workerPoolSpecs": [{}, {}, {}, {}]}
        addresses = {0: ["h:1"], 1: ["h:2", "h:3"], 2: ["h:4"], 3: ["h:5"]}
        env = cluster_environment(spec, addresses, 2, 0)
        tf_config = json.loads(env["TF_CONFIG"])
        assert tf_config["cluster"] == {"chief": ["h:1"], "worker": ["h:2", "h:3"], "ps": ["h:4"]}
        assert tf_config["task"] == {"type": "ps", "index": 0}
        assert json.loads(env["CLUSTER_SPEC"])["cluster"]["workerpool3"] == ["h:5"]
        assert "RANK" not in env
        evaluator = json.loads(cluster_environment(spec, addresses, 3, 0)["TF_CONFIG"])["task"]
        assert evaluator == {"type": "evaluator", "index": 0}

    @pytest.mark.timeout(60)
    def test_replicas_get_cluster_and_vertex_variables(
        self,
        backend: LocalBackend,
        probe_package: Path,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:
        """Primary and worker see one cluster, their own task, rank and world size."""
        monkeypatch.setenv("PROVIDER_ONLY_SECRET", "x")
        args = ["--job-dir", "/somewhere", "--lr", "0.1"]
        body = package_job(
            probe_package,
            "probe.dump_env",
            args=args,
            env={"PROBE_OUT": str(tmp_path)},
            output=tmp_path / "out",
        )
        worker = json.loads(json.dumps(body["jobSpec"]["workerPoolSpecs"][0]))
        worker["replicaCount"] = 1
        body["jobSpec"]["workerPoolSpecs"].append(worker)
        status = wait_for(backend, backend.submit(body).name, states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED, status.error

        primary = json.loads((tmp_path / "workerpool0-0.json").read_text())
        second = json.loads((tmp_path / "workerpool1-0.json").read_text())
        cluster = json.loads(primary["env"]["CLUSTER_SPEC"])
        hosts = [*cluster["cluster"]["workerpool0"], *cluster["cluster"]["workerpool1"]]
        assert len(set(hosts)) == 2 and all(h.startswith("127.0.0.1:") for h in hosts)
        assert cluster["environment"] == "cloud"
        assert cluster["job"] == body["jobSpec"] | {
            "baseOutputDirectory": {"outputUriPrefix": str(tmp_path / "out")}
        }
        for replica, tf_type, rank in ((primary, "chief", "0"), (second, "worker", "1")):
            env = replica["env"]
            assert json.loads(env["CLUSTER_SPEC"])["cluster"] == cluster["cluster"]
            tf_config = json.loads(env["TF_CONFIG"])
            assert tf_config["cluster"] == {"chief": hosts[:1], "worker": hosts[1:]}
            assert tf_config["task"] == {"type": tf_type, "index": 0}
            assert (env["RANK"], env["WORLD_SIZE"]) == (rank, "2")
            assert f"{env['MASTER_ADDR']}:{env['MASTER_PORT']}" == hosts[0]
            assert env["AIP_MODEL_DIR"] == f"{tmp_path}/out/model/"
            assert env["AIP_CHECKPOINT_DIR"] == f"{tmp_path}/out/checkpoints/"
            assert env["AIP_TENSORBOARD_LOG_DIR"] == f"{tmp_path}/out/logs/"
            assert env["CLOUD_ML_JOB_ID"] == status.job_id
            assert "PROVIDER_ONLY_SECRET" not in env and "AIP_TRAINING_DATA_URI" not in env
            assert replica["argv"] == args
        assert json.loads(second["env"]["CLUSTER_SPEC"])["task"] == {
            "type": "workerpool1",
            "index": 0,
        }


class TestScheduling:
    @pytest.mark.timeout(60)
    def test_timeout_fails_job_and_stops_it(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """A job running past scheduling.timeout is stopped and FAILED."""
        body = package_job(
            probe_package,
            "probe.sleep",
            env={"PROBE_OUT": str(tmp_path)},
            scheduling={"timeout": "1s"},
        )
        submitted = backend.submit(body)
        pids = job_pids(backend, submitted, wait_for_file(tmp_path / "pids.json"))
        status = wait_for(backend, submitted.name, states.TERMINAL_STATES)
        assert status.state == states.FAILED
        assert "scheduling.timeout of 1s" in status.error
        assert not [pid for pid in pids[1:] if alive(pid)]

    @pytest.mark.timeout(60)
    def test_replica_killed_by_a_signal_is_restarted(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """A replica killed by a foreign signal restarts (like a worker VM) and can succeed."""
        body = package_job(probe_package, "probe.crash_once", env={"PROBE_OUT": str(tmp_path)})
        status = wait_for(backend, backend.submit(body).name, states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED, status.error
        log = (backend.root / status.job_id / "logs" / "workerpool0-0.log").read_text()
        assert "restarting workerpool0-0" in log and "second start" in log

    @pytest.mark.timeout(60)
    def test_disable_retries_fails_on_killed_replica(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """With scheduling.disableRetries, a replica killed by a signal fails the job."""
        body = package_job(
            probe_package,
            "probe.crash_once",
            env={"PROBE_OUT": str(tmp_path)},
            scheduling={"disableRetries": True},
        )
        status = wait_for(backend, backend.submit(body).name, states.TERMINAL_STATES)
        assert status.state == states.FAILED
        assert "workerpool0-0 was killed by signal SIGKILL" in status.error


class TestCancel:
    @pytest.mark.timeout(60)
    def test_cancel_kills_process_tree(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """Cancel stops the supervisor, the replica and its children; the job ends CANCELLED."""
        submitted = backend.submit(
            package_job(probe_package, "probe.sleep", env={"PROBE_OUT": str(tmp_path)})
        )
        pids = job_pids(backend, submitted, wait_for_file(tmp_path / "pids.json"))
        assert all(alive(pid) for pid in pids)
        assert set(pids) <= set(backend.pids(submitted.name))
        assert wait_for(backend, submitted.name, (states.RUNNING,)).start_time
        backend.cancel(submitted.name)
        status = backend.get(submitted.name)
        assert status is not None
        assert (status.state, status.error) == (states.CANCELLED, "cancelled")
        assert status.end_time
        assert [pid for pid in pids if alive(pid)] == []
        assert backend.pids(submitted.name) == []
        backend.cancel(submitted.name)  # a second cancel of an ended job does nothing
        assert backend.get(submitted.name) == status

    @pytest.mark.timeout(60)
    def test_lost_supervisor_fails_job(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """A supervisor that died (say, a reboot) is seen on get: FAILED, replicas stopped."""
        submitted = backend.submit(
            package_job(probe_package, "probe.sleep", env={"PROBE_OUT": str(tmp_path)})
        )
        pids = job_pids(backend, submitted, wait_for_file(tmp_path / "pids.json"))
        os.kill(pids[0], signal.SIGKILL)
        deadline = time.monotonic() + JOB_END_S
        while alive(pids[0]):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        status = backend.get(submitted.name)
        assert status is not None and status.state == states.FAILED
        assert "the local supervisor stopped" in status.error
        # get() SIGKILLed the replica and waited KILL_WAIT_S for it; on a loaded machine
        # the kernel may take longer to finish its exit: it must end, not within 2 s.
        deadline = time.monotonic() + JOB_END_S
        while alive(pids[1]):
            assert time.monotonic() < deadline, "the replica outlived its lost supervisor"
            time.sleep(0.05)


class TestDelete:
    @pytest.mark.timeout(60)
    def test_delete_stops_job_and_removes_record(
        self, backend: LocalBackend, probe_package: Path, tmp_path: Path
    ) -> None:
        """Delete of a running job stops it and removes its record; get then returns None."""
        body = package_job(
            probe_package,
            "probe.sleep",
            env={"PROBE_OUT": str(tmp_path)},
            labels={"case": "delete"},
        )
        submitted = backend.submit(body)
        pids = job_pids(backend, submitted, wait_for_file(tmp_path / "pids.json"))
        backend.delete(submitted.name)
        assert backend.get(submitted.name) is None
        assert not (backend.root / submitted.job_id).exists()
        assert backend.find_by_label("case", "delete") == []
        assert [pid for pid in pids if alive(pid)] == []
        backend.delete(submitted.name)  # NOT_FOUND is fine


class TestFindByLabel:
    @pytest.mark.timeout(60)
    def test_finds_labelled_jobs_newest_first(
        self, backend: LocalBackend, probe_package: Path
    ) -> None:
        """find_by_label returns exactly the jobs with that label value, newest first."""
        first = backend.submit(package_job(probe_package, "probe.ok", labels={"key": "find-me"}))
        other = backend.submit(package_job(probe_package, "probe.ok", labels={"key": "not-me"}))
        second = backend.submit(package_job(probe_package, "probe.ok", labels={"key": "find-me"}))
        found = backend.find_by_label("key", "find-me")
        assert [s.name for s in found] == [second.name, first.name]
        assert backend.find_by_label("key", "nobody") == []
        for job in (first, other, second):
            wait_for(backend, job.name, states.TERMINAL_STATES)


class TestConcurrency:
    @pytest.mark.timeout(60)
    def test_concurrent_submits_share_one_virtualenv(
        self, probe_package: Path, tmp_path: Path
    ) -> None:
        """Jobs submitted at once from several threads all run; their venv is built once."""
        backend = LocalBackend(tmp_path / "jobs")
        with ThreadPoolExecutor(max_workers=4) as pool:
            submitted = list(
                pool.map(lambda _: backend.submit(package_job(probe_package, "probe.ok")), range(4))
            )
        assert len({s.name for s in submitted}) == 4
        for job in submitted:
            status = wait_for(backend, job.name, states.TERMINAL_STATES)
            assert status.state == states.SUCCEEDED, status.error
        venvs = [p for p in (backend.root / "_venvs").iterdir() if p.is_dir()]
        assert len(venvs) == 1
        logs = [
            (backend.root / s.job_id / "logs" / "supervisor.log").read_text() for s in submitted
        ]
        assert sum("creating virtualenv" in log for log in logs) == 1


class TestContainerJob:
    @staticmethod
    def fake_engine(bin_dir: Path, info_exit: int) -> Path:
        """A ``docker`` on PATH that answers ``info`` and runs ``run``'s command on the host."""
        bin_dir.mkdir()
        docker = bin_dir / "docker"
        docker.write_text(
            f"#!{sys.executable}\n"
            + textwrap.dedent(f"""
                import os, sys
                args = sys.argv[1:]
                with open(os.path.join(os.path.dirname(__file__), "calls.log"), "a") as log:
                    log.write(" ".join(args) + "\\n")
                if args[0] != "run":
                    sys.exit({info_exit} if args[0] == "info" else 0)
                i, entrypoint = 1, []
                while args[i].startswith("--"):
                    if args[i] == "--entrypoint":
                        entrypoint = [args[i + 1]]
                    i += 1 if args[i] == "--rm" else 2
                command = entrypoint + args[i + 1:]
                os.execvp(command[0], command)
            """)
        )
        docker.chmod(0o755)
        return docker

    def test_no_engine_refuses_container_job(
        self, backend: LocalBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without a container engine answering, a container job is refused at submit."""
        self.fake_engine(tmp_path / "bin", info_exit=1)
        monkeypatch.setenv("PATH", str(tmp_path / "bin"))
        assert container_engine() is None
        body = {
            "displayName": "c",
            "jobSpec": {
                "workerPoolSpecs": [
                    {"replicaCount": 1, "containerSpec": {"imageUri": "example/trainer:1"}}
                ]
            },
        }
        issues = preflight(body, key_prefix="vertex-training:jobs.c")
        assert [(i.key, i.value, i.message) for i in issues] == [
            ("vertex-training:jobs.c.image", "example/trainer:1", NO_ENGINE)
        ]
        with pytest.raises(PermanentError, match="no container engine"):
            backend.submit(body)

    @pytest.mark.timeout(60)
    def test_container_job_runs_through_engine(
        self, backend: LocalBackend, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A container job runs `docker run` with the job's env by name, host network, mounts."""
        docker = self.fake_engine(tmp_path / "bin", info_exit=0)
        monkeypatch.setenv("PATH", f"{docker.parent}{os.pathsep}{os.environ['PATH']}")
        assert container_engine() == "docker"
        dump = "import json, os, sys; json.dump(dict(os.environ), open(sys.argv[1], 'w'))"
        body = {
            "displayName": "c",
            "jobSpec": {
                "workerPoolSpecs": [
                    {
                        "replicaCount": 1,
                        "containerSpec": {
                            "imageUri": "example/trainer:1",
                            "command": [sys.executable, "-c", dump],
                            "args": [str(tmp_path / "env.json")],
                            "env": [{"name": "MODE", "value": "container"}],
                        },
                    }
                ]
            },
        }
        status = wait_for(backend, backend.submit(body).name, states.TERMINAL_STATES)
        assert status.state == states.SUCCEEDED, status.error
        run = next(
            line
            for line in (docker.parent / "calls.log").read_text().splitlines()
            if line.startswith("run")
        )
        assert f"--name vertex-training-{status.job_id}-workerpool0-0" in run
        assert "--network host" in run and "--env MODE" in run and "--env AIP_MODEL_DIR" in run
        assert f"--entrypoint {sys.executable} example/trainer:1 -c" in run
        env = json.loads((tmp_path / "env.json").read_text())
        assert env["MODE"] == "container"
        assert json.loads(env["TF_CONFIG"])["task"] == {"type": "chief", "index": 0}


def test_replica_ports_are_free_and_below_the_ephemeral_ports(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A replica's port is picked below the ports the kernel hands out to connections
    (Linux's from 32768), so that no connection takes it before the replica binds it; a
    port something listens on, and one the job picked already, are passed over."""
    taken: set[int] = set()
    first = _runner._free_port(taken)
    assert first in _runner._CLUSTER_PORTS and max(_runner._CLUSTER_PORTS) < 32768
    assert taken == {first}
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        busy = listening.getsockname()[1]
        second = _runner._free_port(set(taken))
        offered = [busy, first, second]
        monkeypatch.setattr(_runner.random, "sample", lambda population, k: offered)
        assert _runner._free_port(taken) == second
    assert taken == {first, second}
