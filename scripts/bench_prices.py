"""Benchmark: a price refresh against a fake catalog of 50,000 SKUs (`make bench-prices`).

The fake catalog (invented prices) and the fake Compute Engine MachineTypes API (invented
shapes) run in subprocesses, so the figures are the refresh's own: wall time, and this
process's peak memory (ru_maxrss) after it. Target on the
project's 2-core machine: under 60 s and 300 MB (docs/testing.md records the figures).
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from vertex_training.catalog import refresh  # noqa: E402

SKUS = 50_000
TARGET_S = 60
TARGET_MB = 300
START_TIMEOUT_S = 120


def main() -> int:
    """Serve 50,000 filler SKUs (plus the fake's own), refresh every region, report."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "vertex_training.testing.fake_catalog",
            "--port",
            "0",
            "--filler",
            str(SKUS),
            "--max-page-size",
            "5000",
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    compute = subprocess.Popen(
        [sys.executable, "-m", "vertex_training.testing.fake_compute", "--port", "0"],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None and compute.stdout is not None
        address = server.stdout.readline().strip()
        compute_address = compute.stdout.readline().strip()
        started = time.perf_counter()
        pages = 0

        def progress(service: str, read: int, kept: int) -> None:
            nonlocal pages
            pages += 1

        snapshot = refresh.refresh(
            endpoint=address,
            progress=progress,
            compute_endpoint=compute_address,
            project="bench-project",
        )
        elapsed = time.perf_counter() - started
    finally:
        for process in (server, compute):
            process.terminate()
            process.wait(timeout=START_TIMEOUT_S)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"refresh of {SKUS:,}+ SKUs in {pages} pages: {elapsed:.1f} s, peak memory "
        f"{peak_mb:.0f} MB, {len(snapshot.skus)} SKUs kept (targets: {TARGET_S} s, {TARGET_MB} MB)"
    )
    return 0 if elapsed < TARGET_S and peak_mb < TARGET_MB else 1


if __name__ == "__main__":
    sys.exit(main())
