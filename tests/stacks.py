"""Reading a stack in tests, through the loader every entry point uses."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vertex_training.stackconfig import JobSpec, StackSettings, load_stack

REPO = Path(__file__).resolve().parent.parent


def parse_stack(
    config: Mapping[str, Any], stack: str, project_dir: Path = REPO
) -> tuple[StackSettings, dict[str, JobSpec]]:
    """The settings and resolved jobs of raw config keys; ``SpecError`` lists every issue."""
    loaded = load_stack(config, stack, project_dir=project_dir).check()
    return loaded.settings, loaded.resolved
