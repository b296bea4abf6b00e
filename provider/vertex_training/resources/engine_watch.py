"""A provider process ends when its engine has gone.

The engine starts each provider (the plugin, and the Python host of the dynamic
resources) as a child process and ends it when the update ends. An engine that is killed
(SIGKILL, a crashed CI runner, an out-of-memory kill) ends nothing: the provider is
reparented and runs on, polling Vertex AI until its jobs end, and a create still in its
retries could submit a job while the next `pulumi up` does the same. `pulumi cancel`
does not reach it either.

So each provider process watches its engine from a daemon thread (``watch_engine``) and
stops the process at once (``os._exit``: no thread finishes what it was doing, so nothing
more is submitted) when either sign says the engine is gone:

- its parent is no longer the process that started it (the engine: the launchers
  ``exec`` the interpreter);
- the engine's gRPC address refuses connections ``ENGINE_MISSES`` times in a row.

Every job already submitted is in Vertex AI with its labels, and the next `pulumi up`
adopts it (``vertex_training.resources.submission``): stopping loses nothing.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
from collections.abc import Callable

#: How often the engine is looked for, in seconds.
ENGINE_CHECK_S = 1.0
#: How many refused connections in a row mean the engine is gone (a listening engine
#: accepts every connection, however busy it is).
ENGINE_MISSES = 3
#: How long one connection attempt to the engine may take, in seconds.
CONNECT_TIMEOUT_S = 1.0
#: The exit status of a provider that stopped because its engine had gone.
ENGINE_GONE_EXIT = 70

_STARTED = threading.Lock()
_watching: list[threading.Thread] = []


def refuses(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> bool:
    """Whether nothing listens at ``address`` (host:port, IPv6 in brackets) any more. A
    connection that times out counts as an engine still there (a busy machine)."""
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s):
            return False
    except (ConnectionRefusedError, socket.gaierror):
        return True
    except OSError:
        return False


class EngineWatch:
    """The signs that a provider's engine has gone: its parent changed, or its address
    refused ``misses`` connections in a row."""

    def __init__(self, address: str | None, parent: int, misses: int = ENGINE_MISSES) -> None:
        self.address = address
        self.parent = parent
        self.misses = misses
        self._refused = 0

    def gone(self) -> str:
        """Why the engine is gone, or "" while it is there (one look; call it again)."""
        if self.parent > 1 and os.getppid() != self.parent:
            return f"the process that started this provider (pid {self.parent}) has ended"
        if self.address:
            self._refused = self._refused + 1 if refuses(self.address) else 0
            if self._refused >= self.misses:
                return f"the Pulumi engine at {self.address} no longer answers"
        return ""


def watch_engine(
    address: str | None,
    *,
    check_s: float = ENGINE_CHECK_S,
    stop: Callable[[int], object] = os._exit,
) -> threading.Thread | None:
    """Watch this process's engine from a daemon thread (once per process) and ``stop``
    the process when it has gone. Nothing is watched without an engine ``address`` (the
    process is not a provider the engine started: a test, a command)."""
    if not address:
        return None
    with _STARTED:
        if _watching:
            return _watching[0]
        watch = EngineWatch(address, os.getppid())

        def run() -> None:
            while True:
                time.sleep(check_s)
                reason = watch.gone()
                if reason:
                    # Its stderr was the engine's: a pipe no one reads any more.
                    with contextlib.suppress(OSError, ValueError):
                        sys.stderr.write(
                            f"vertex-training: {reason}; stopping this provider (pid "
                            f"{os.getpid()}) so that it submits nothing more. Jobs already "
                            "submitted keep running; the next `pulumi up` finds them by "
                            "their labels.\n"
                        )
                        sys.stderr.flush()
                    stop(ENGINE_GONE_EXIT)
                    return

        thread = threading.Thread(target=run, name="vertex-training-engine-watch", daemon=True)
        thread.start()
        _watching.append(thread)
        return thread
