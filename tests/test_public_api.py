"""The package's public surface: what `provider` exports, and what importing it costs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import provider

REPO = Path(__file__).resolve().parent.parent


class TestPublicApi:
    """`provider` re-exports its public API, loaded on first use."""

    def test_all_is_pinned(self) -> None:
        """The public names are exactly these, sorted."""
        assert provider.__all__ == [
            "HyperparameterTuningJob",
            "Issue",
            "JobSpec",
            "JobWaiter",
            "LocalBackend",
            "SpecError",
            "StackSettings",
            "TrainingJob",
            "TrainingPlatform",
            "VertexBackend",
            "load_stack_file",
            "parse_job",
            "parse_stack",
        ]

    def test_every_name_resolves(self) -> None:
        """Each exported name is the object its module defines, and nothing else is."""
        assert sorted(provider._EXPORTS) == provider.__all__
        for name in provider.__all__:
            assert getattr(provider, name).__name__ == name

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
