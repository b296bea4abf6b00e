"""Ctrl-C during a wait: the engine's cancel, heard by every wait of the process.

At the first Ctrl-C the engine asks each provider to cancel what it is doing (the
provider protocol's ``Cancel``) and waits for the operations in flight to end. The
plugin's ``cancel`` cancels ``PROCESS``: each wait in progress stops at once
(its pause between reads, ``Cancellation.sleep``, ends the moment the cancel comes)
and fails its operation with ``WaitCancelledError``, which names each job's last
state and the jobs it had not seen through (the plugin keeps its waiter with them as
problems: ``plugin.provider``). Nothing is cancelled on Vertex AI, and each job is
already in the stack's state (its own create returned when it was submitted): the next
`pulumi up` waits for the jobs again, as after a killed engine, and submits none twice.

One event serves the process, as one engine serves the plugin: once cancelled, the
engine ends the plugin. (The Python dynamic provider host answers ``Cancel`` itself and
calls nothing of a provider's, so a Python program's waits end with its engine.)
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from vertex_training.errors import BackendError

#: How a stopped wait's message begins (and so the problem it leaves each job it had not
#: seen through).
STOPPED = "the wait was stopped (Ctrl-C)"


class WaitCancelledError(BackendError):
    """A wait that the engine's cancel (Ctrl-C) stopped; the jobs keep running."""

    def __init__(self, last_states: Mapping[str, str], unfinished: Sequence[str] = ()) -> None:
        self.last_states = dict(last_states)
        #: The jobs the wait had not seen through: the next one waits for them again.
        self.unfinished = tuple(unfinished)
        seen = ", ".join(f"{name} {state}" for name, state in sorted(last_states.items()))
        super().__init__(
            f"{STOPPED} before its jobs were done"
            + (f"; last seen: {seen}" if seen else "")
            + ". The jobs keep running on their backend and stay in the stack: the next "
            "`pulumi up` waits for them again and submits none of them twice (`pulumi "
            "destroy` cancels them)"
        )


class Cancellation:
    """Whether the engine has cancelled, and a pause between a wait's reads that ends
    the moment it does."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        """Stop every wait in progress, and any that would begin."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def sleep(self, seconds: float) -> None:
        """Pause for ``seconds``, or until the cancel (then return at once)."""
        self._event.wait(max(0.0, seconds))


#: The process's: what the plugin's ``cancel`` sets, and what every wait heeds.
PROCESS = Cancellation()
