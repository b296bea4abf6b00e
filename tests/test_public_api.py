"""What importing the package costs, and the module names earlier releases left in state."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import ClassVar

from vertex_training._moved import current_name

REPO = Path(__file__).resolve().parent.parent


class TestImportCost:
    """`import vertex_training` loads nothing heavy."""

    def test_importing_the_package_loads_no_pulumi_or_google_client(self) -> None:
        """`import vertex_training` stays cheap: no Pulumi, no Google client library (the bare
        `google.cloud` namespace package is set up at interpreter start, so not counted)."""
        script = (
            "import sys; import vertex_training; "
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp')"
            " or m.startswith(('google.cloud.', 'google.api_core'))]; "
            "print(heavy); sys.exit(1 if heavy else 0)"
        )
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr


class TestMovedModules:
    """Provider classes pickled into state by earlier releases still load, where the
    engine's provider host loads them: in the project directory, whose ``provider.py``
    answers the package's name before 0.2.0."""

    #: Providers as dill wrote them into the state (``__provider``): before the package
    #: was regrouped (release 0361723), and as ``provider.resources.*`` before it was
    #: renamed (release 3523990).
    OLD_PROVIDERS: ClassVar[dict[str, tuple[str, ...]]] = {
        "TrainingJobProvider": (
            "gASVNAAAAAAAAACMFXByb3ZpZGVyLnRyYWluaW5nX2pvYpSME1RyYWluaW5nSm9iUHJvdmlkZXKUk5QpgZQu",
            "gASVPgAAAAAAAACMH3Byb3ZpZGVyLnJlc291cmNlcy50cmFpbmluZ19qb2KUjBNUcmFpbmluZ0pvYlByb3ZpZGVylJOUKYGULg==",
        ),
        "JobWaiterProvider": (
            "gASVLAAAAAAAAACMD3Byb3ZpZGVyLndhaXRlcpSMEUpvYldhaXRlclByb3ZpZGVylJOUKYGULg==",
            "gASVNgAAAAAAAACMGXByb3ZpZGVyLnJlc291cmNlcy53YWl0ZXKUjBFKb2JXYWl0ZXJQcm92aWRlcpSTlCmBlC4=",
        ),
        "HyperparameterTuningJobProvider": (
            "gASVSAAAAAAAAACMHXByb3ZpZGVyLnJlc291cmNlcy50dW5pbmdfam9ilIwfSHlwZXJwYXJhbWV0ZXJUdW5pbmdKb2JQcm92aWRlcpSTlCmBlC4=",
        ),
    }

    def host(self, project: Path, script: str) -> subprocess.CompletedProcess[str]:
        """Run ``script`` as the provider host runs: ``python -m``, in ``project``."""
        (project / "host_check.py").write_text(script)
        return subprocess.run(
            [sys.executable, "-m", "host_check"],
            cwd=project,
            capture_output=True,
            text=True,
            check=False,
        )

    def test_old_state_providers_deserialize(self, tmp_path: Path) -> None:
        """The engine's deserializer finds each old provider under its module of today,
        the same class object, from a project directory with the repository's
        ``provider.py``."""
        shutil.copy(REPO / "provider.py", tmp_path / "provider.py")
        script = textwrap.dedent(
            f"""
            import base64, sys
            import dill
            from vertex_training.resources.training_job import TrainingJobProvider
            from vertex_training.resources.tuning_job import HyperparameterTuningJobProvider
            from vertex_training.resources.waiter import JobWaiterProvider
            for name, blobs in {self.OLD_PROVIDERS!r}.items():
                for blob in blobs:
                    loaded = dill.loads(base64.b64decode(blob))
                    assert type(loaded) is globals()[name], (name, type(loaded))
            import vertex_training.resources.training_job as today
            assert sys.modules["provider.resources.training_job"] is today
            assert sys.modules["provider.training_job"] is today
            print("ok")
            """
        )
        result = self.host(tmp_path, script)
        assert result.stdout.strip() == "ok", result.stdout + result.stderr

    def test_without_the_legacy_module_nothing_answers_the_old_name(self, tmp_path: Path) -> None:
        """The installed package alone makes no ``provider`` importable (the check above
        can fail): the name is answered only where a project keeps ``provider.py``."""
        blob = self.OLD_PROVIDERS["TrainingJobProvider"][1]
        script = (
            "import base64, dill, vertex_training.resources.training_job\n"
            f"dill.loads(base64.b64decode({blob!r}))\n"
        )
        result = self.host(tmp_path, script)
        assert result.returncode != 0
        assert "No module named 'provider'" in result.stderr


class TestLegacyCommandLine:
    """``python -m provider`` (the command line before 0.2.0) still runs, saying its name."""

    def test_it_runs_vertex_training_and_says_so(self) -> None:
        """In the repository, ``python -m provider render --help`` is ``vertex-training
        render --help``, with a note on stderr."""
        result = subprocess.run(
            [sys.executable, "-m", "provider", "render", "--help"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("usage: vertex-training render")
        assert "`python -m provider` is `vertex-training`" in result.stderr


class TestLegacyNames:
    """``vertex_training._moved.current_name``: a legacy module name -> today's."""

    def test_moved_and_renamed_names(self) -> None:
        """Schema 1's top-level modules moved under resources/; every name is renamed."""
        assert current_name("provider.training_job") == "vertex_training.resources.training_job"
        assert current_name("provider.resources.waiter") == "vertex_training.resources.waiter"
        assert current_name("provider.stackconfig") == "vertex_training.stackconfig"

    def test_other_names_are_not_answered(self) -> None:
        """Only the legacy package's modules: not the package itself, nor look-alikes."""
        assert current_name("provider") is None
        assert current_name("providers.x") is None
        assert current_name("vertex_training.keys") is None
