"""What one release is made of, as the tests read it: its version (provider/pyproject.toml's,
the one source of it) and where its SDKs are."""

from __future__ import annotations

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: The release's version.
RELEASE: str = tomllib.loads((REPO / "provider" / "pyproject.toml").read_text())["project"][
    "version"
]
#: The checked-in SDKs (`make sdks`), one folder per language.
SDK = REPO / "sdk"
