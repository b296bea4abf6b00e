"""The process ``LocalBackend.submit`` starts for each local job, in its own session:
``python -m vertex_training.backends.local <job dir>``.

It runs the job's supervisor to the job's end: ``_study.StudySupervisor`` for a
HyperparameterTuningJob, ``_runner.Supervisor`` for a CustomJob. It depends on both;
neither depends on it.
"""

from __future__ import annotations

import sys
from pathlib import Path

from vertex_training.api.bodies import is_tuning_body
from vertex_training.backends.local._record import JobRecord
from vertex_training.backends.local._runner import supervise
from vertex_training.backends.local._study import StudySupervisor


def main(argv: list[str]) -> int:
    """Supervise the job whose directory is ``argv[0]``; record FAILED on a crash."""
    job_dir = Path(argv[0])
    record = JobRecord(job_dir.parent, job_dir.name)
    run = StudySupervisor(record).run if is_tuning_body(record.read_job()) else None
    return 0 if supervise(record, run) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
