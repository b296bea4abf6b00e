"""What importing the package costs, and the module names earlier releases left in state."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from provider._moved import MOVED_MODULES

REPO = Path(__file__).resolve().parent.parent


class TestImportCost:
    """`import provider` loads nothing heavy."""

    def test_importing_the_package_loads_no_pulumi_or_google_client(self) -> None:
        """`import provider` stays cheap: no Pulumi, no Google client library (the bare
        `google.cloud` namespace package is set up at interpreter start, so not counted)."""
        script = (
            f"import sys; sys.path.insert(0, {str(REPO)!r}); import provider; "
            "heavy = [m for m in sys.modules if m.split('.')[0] in ('pulumi', 'pulumi_gcp')"
            " or m.startswith(('google.cloud.', 'google.api_core'))]; "
            "print(heavy); sys.exit(1 if heavy else 0)"
        )
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr


class TestMovedModules:
    """Provider classes pickled into state by earlier releases still load."""

    #: A TrainingJobProvider and a JobWaiterProvider as dill wrote them into the state
    #: (``__provider``) before the package was regrouped (release 0361723).
    OLD_PROVIDERS = (
        "gASVNAAAAAAAAACMFXByb3ZpZGVyLnRyYWluaW5nX2pvYpSME1RyYWluaW5nSm9iUHJvdmlkZXKUk5QpgZQu",
        "gASVLAAAAAAAAACMD3Byb3ZpZGVyLndhaXRlcpSMEUpvYldhaXRlclByb3ZpZGVylJOUKYGULg==",
    )

    def test_old_state_providers_deserialize(self) -> None:
        """The engine's deserializer finds each old provider under its new module."""
        import base64

        import dill

        from provider.resources.training_job import TrainingJobProvider
        from provider.resources.waiter import JobWaiterProvider

        # What pulumi.dynamic's provider host does with a resource's __provider.
        loaded = [dill.loads(base64.b64decode(blob)) for blob in self.OLD_PROVIDERS]
        assert isinstance(loaded[0], TrainingJobProvider)
        assert isinstance(loaded[1], JobWaiterProvider)

    def test_old_names_are_the_same_modules(self) -> None:
        """An old name is the new module itself, not a copy with state of its own."""
        import importlib

        for old, new in MOVED_MODULES.items():
            assert importlib.import_module(old) is importlib.import_module(new)
