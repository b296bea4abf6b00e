"""The log lines the fake's jobs write, for the fake Cloud Logging (``fake_logging``).

Vertex AI writes each replica's stdout and stderr to Cloud Logging as entries of the
monitored resource ``ml_job`` labelled with the job's numeric ``job_id`` and the
replica's ``task_name`` ("workerpool0-0"). The fake has no program to run, so the lines
are invented, and say so: each replica that started running logs ``STEPS`` training
steps, one per second of its run; a replica that failed a job ("The replica
workerpool0-0 exited with a non-zero status of 1") ends its log with a Python traceback.

It depends on ``_jobs``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from vertex_training.api import states
from vertex_training.testing._jobs import CUSTOM, JobRecord

#: Training-step lines each replica logs once it runs.
STEPS = 5
_FAILED_REPLICA = re.compile(r"replica (workerpool\d+-\d+) exited with a non-zero status")


@dataclass(frozen=True)
class LogLine:
    """One log entry: whose, when (epoch seconds) and what."""

    job_id: str
    replica: str
    timestamp: float
    text: str


def log_lines(records: Iterable[JobRecord], now: float) -> list[LogLine]:
    """Every line the custom jobs have logged by ``now``, oldest first."""
    lines: list[LogLine] = []
    for record in records:
        if record.kind is not CUSTOM:
            continue
        lines += _job_lines(record, now)
    return sorted(lines, key=lambda line: (line.timestamp, line.job_id, line.replica))


def _job_lines(record: JobRecord, now: float) -> list[LogLine]:
    phases = [(at, state) for at, state in record.phases() if at <= now]
    started = next((at for at, state in phases if state == states.RUNNING), None)
    if started is None:
        return []
    ended_at, state = phases[-1]
    end = ended_at if state in states.TERMINAL_STATES else now
    job_id = record.kind.parse(record.job.name)["custom_job"]
    failed = _FAILED_REPLICA.search(record.error()[1]) if state == states.FAILED else None
    lines = []
    for index, pool in enumerate(record.job.job_spec.worker_pool_specs):
        for replica_index in range(pool.replica_count):
            replica = f"workerpool{index}-{replica_index}"
            lines.append(LogLine(job_id, replica, started, f"[fake log] {replica} starting"))
            span = max(end - started, 0.0)
            for step in range(1, STEPS + 1):
                at = started + span * step / (STEPS + 1)
                lines.append(
                    LogLine(job_id, replica, at, f"[fake log] step {step}: loss {1 / step:.3f}")
                )
            if failed is not None and failed.group(1) == replica:
                lines += [
                    LogLine(job_id, replica, end, "Traceback (most recent call last):"),
                    LogLine(job_id, replica, end, '  File "trainer/task.py", line 42, in <module>'),
                    LogLine(job_id, replica, end, "ValueError: the fake's invented failure"),
                ]
    return lines
