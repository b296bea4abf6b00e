"""Where a test run's time and CPU went, from the file `VERTEX_TEST_TIMELINE` names
(tests/conftest.py writes a line per test).

    VERTEX_TEST_TIMELINE=/tmp/timeline make test
    python scripts/test_timeline.py /tmp/timeline [--top 30]

Prints the run's wall time and CPU (tests' workers and the processes they waited for:
the CLI and its plugins, the programs, the fakes started by the tests), the CPU by test
file and of the costliest tests, and, minute by minute, how many tests ran and how many
cores their CPU filled (each test's CPU spread evenly over its time): the minutes with
idle cores are where more workers, or another order, would help.
"""

from __future__ import annotations

import argparse
import collections
import os
from pathlib import Path
from typing import NamedTuple


class Test(NamedTuple):
    worker: str
    start: float
    end: float
    cpu: float
    nodeid: str


def read(path: Path) -> list[Test]:
    tests = []
    for line in path.read_text().splitlines():
        worker, start, end, own, children, nodeid = line.split("\t")
        tests.append(Test(worker, float(start), float(end), float(own) + float(children), nodeid))
    return tests


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timeline", type=Path)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--minute", type=float, default=60.0, help="bucket width, seconds")
    args = parser.parse_args()
    tests = read(args.timeline)
    begin = min(t.start for t in tests)
    wall = max(t.end for t in tests) - begin
    cpu = sum(t.cpu for t in tests)
    cores = os.cpu_count() or 1
    workers = len({t.worker for t in tests})
    print(f"{len(tests)} tests, {workers} workers, {wall:.0f} s wall, {cpu:.0f} s CPU")
    print(f"cores filled on average: {cpu / wall:.2f} of {cores}\n")

    by_file: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for t in tests:
        row = by_file[t.nodeid.split("::")[0]]
        row[0] += t.cpu
        row[1] += t.end - t.start
        row[2] += 1
    print(f"{'CPU s':>8} {'test s':>8} {'tests':>6}  file")
    for name, (file_cpu, file_wall, count) in sorted(by_file.items(), key=lambda kv: -kv[1][0]):
        print(f"{file_cpu:8.0f} {file_wall:8.0f} {count:6d}  {name}")

    print(f"\n{'CPU s':>8} {'wall s':>8}  the {args.top} costliest tests")
    for t in sorted(tests, key=lambda t: -t.cpu)[: args.top]:
        print(f"{t.cpu:8.1f} {t.end - t.start:8.1f}  {t.nodeid}")

    print(f"\n{'from s':>7} {'running':>8} {'cores':>6}")
    buckets = int(wall // args.minute) + 1
    running = [0.0] * buckets
    filled = [0.0] * buckets
    for t in tests:
        length = max(t.end - t.start, 1e-6)
        for index in range(buckets):
            low = begin + index * args.minute
            overlap = min(t.end, low + args.minute) - max(t.start, low)
            if overlap > 0:
                running[index] += overlap / args.minute
                filled[index] += t.cpu * overlap / length / args.minute
    for index in range(buckets):
        print(f"{index * args.minute:7.0f} {running[index]:8.1f} {filled[index]:6.2f}")


if __name__ == "__main__":
    main()
