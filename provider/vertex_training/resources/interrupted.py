"""A wait a killed engine left behind, noticed by the next `pulumi up`.

Pulumi marks an operation pending while a provider runs it. When the engine dies during
a create, the stack's state keeps that pending CREATE, and every later `pulumi up` warns
of it until `pulumi refresh --clear-pending-creates` drops it; the engine's own warning
says only that `pulumi refresh` must be run interactively. The waiter waits in its
create, so an engine killed while it waits (a crash, `kill -9`, a CI runner stopped)
leaves one behind.

A provider cannot read the stack's state. So the waiter marks each wait it begins in a
create: a file under the project's ``.state/waits/``, named for the waiter's URN, that
records the address of the engine that asked for it. The wait removes the mark when it
ends, however it ends. A create that finds a mark left by another engine knows that
engine stopped while it waited, and warns naming the command that clears the pending
CREATE (``INTERRUPTED``). Two engines never wait for the same waiter at once: the
stack's lock keeps them apart (only `pulumi cancel`, which the operations guide asks
for after a kill, breaks a dead engine's lock).

Marking is a courtesy: a mark that cannot be written or read changes nothing else.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path

#: Where the marks are kept, under the project (``.state/`` is the project's, git-ignored).
WAITS_DIR = Path(".state") / "waits"

#: What the waiter's row says when an earlier engine stopped while it waited.
INTERRUPTED = (
    "an earlier `pulumi up` stopped while it waited for these jobs (its engine was killed "
    "or lost). Pulumi keeps that wait as a pending CREATE of this resource and warns of it "
    "at every `pulumi up`; once this update is done, `pulumi refresh --yes "
    "--clear-pending-creates` clears it. The jobs are waited for now as usual: none is "
    "submitted twice"
)


def mark_path(base_dir: str | Path, urn: str) -> Path:
    """The mark of the waiter ``urn`` in the project at ``base_dir``."""
    digest = hashlib.sha256(urn.encode()).hexdigest()[:24]
    return Path(base_dir) / WAITS_DIR / f"{digest}.json"


@contextlib.contextmanager
def marked(base_dir: str | Path, urn: str, engine: str) -> Iterator[bool]:
    """Mark the wait of the waiter ``urn`` for the engine at ``engine`` while the block
    runs; yield whether a mark of another engine was there (an earlier wait that never
    ended). Without a URN or an engine address there is nothing to mark."""
    if not (urn and engine):
        yield False
        return
    path = mark_path(base_dir, urn)
    earlier = _engine_of(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"urn": urn, "engine": engine}) + "\n")
    except OSError:
        pass
    try:
        yield earlier is not None and earlier != engine
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)


def _engine_of(path: Path) -> str | None:
    """The engine address a mark records; None when there is no readable mark."""
    try:
        recorded = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    engine = recorded.get("engine") if isinstance(recorded, dict) else None
    return str(engine) if engine else None
