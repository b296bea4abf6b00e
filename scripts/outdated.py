"""Lists the pins of requirements.txt that have newer releases (`make outdated`).

Asks the package index through pip, run from the project's virtualenv. For each pin with a
newer release it names the installed packages whose requirements keep the newer one out,
so that a bump that cannot be made alone is seen as such. Exits 0 either way: it informs.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REQUIREMENTS = Path(__file__).resolve().parent.parent / "requirements.txt"
#: What holds a pin back that no package metadata says.
NOTES = {
    "pulumi": "the Pulumi CLI built here (tools/pulumi-cli) is the same release: move to one "
    "whose pkg/v3 and sdk/v3 modules the Go module proxy serves",
}
PIN_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s#;]+)")


def pins(path: Path = REQUIREMENTS) -> dict[str, str]:
    """The exact pins of a requirements file, by canonical name."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if match := PIN_RE.match(line.strip()):
            found[canonicalize_name(match[1])] = match[2]
    return found


def held_back_by(name: str, version: str) -> list[str]:
    """The installed packages whose requirements exclude ``name`` at ``version``."""
    holders = []
    for dist in metadata.distributions():
        for text in dist.requires or []:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) != name:
                continue
            if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
                continue
            if not requirement.specifier.contains(Version(version), prereleases=True):
                holders.append(f"{dist.metadata['Name']} requires {name}{requirement.specifier}")
    return sorted(set(holders))


def main() -> int:
    pinned = pins()
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "list", "--outdated", "--format=json"],
        capture_output=True,
        text=True,
        check=True,
    )
    newer = {
        canonicalize_name(row["name"]): row["latest_version"]
        for row in json.loads(listed.stdout or "[]")
    }
    rows = [(name, pinned[name], newer[name]) for name in sorted(pinned) if name in newer]
    if not rows:
        print(f"every pin of {REQUIREMENTS.name} is at its newest release")
        return 0
    width = max(len(name) for name, _, _ in rows)
    print(f"{'package':<{width}}  {'pinned':<12}  newest")
    for name, old, new in rows:
        holders = held_back_by(name, new) + ([NOTES[name]] if name in NOTES else [])
        note = f"  (held back: {'; '.join(holders)})" if holders else ""
        print(f"{name:<{width}}  {old:<12}  {new}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
