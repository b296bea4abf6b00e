"""`python -m vertex_training ...` run as a real subprocess, as a user runs it."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: A command of the provider's command line ends well within this.
RUN_TIMEOUT_S = 120


def run_cli(
    *args: str, cwd: Path = REPO, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m vertex_training ARGS`` (from the repository root unless ``cwd``)."""
    return subprocess.run(
        [sys.executable, "-m", "vertex_training", *args],
        cwd=cwd,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )
