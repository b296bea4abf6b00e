"""The local backend: runs jobs on this machine as Vertex AI would run them.

``_backend`` holds ``LocalBackend`` (submit, get, cancel, delete) and the preflight;
``_record`` a job's record on disk (``JobRecord``, ``ProcessRef``, JSON and log IO, job
names); ``_containers`` the container engines and a job's containers. ``__main__`` is the
detached process each job runs in (``python -m vertex_training.backends.local <job dir>``),
which hands it to the supervisor of a custom job (``_runner``) or of a tuning job
(``_study``). ``_venvs`` makes a Python-package job's own virtualenv, ``_images`` maps
prebuilt images to the framework each carries, ``gpus`` reads this machine's NVIDIA GPUs.
"""

from vertex_training.backends.local._backend import (
    NO_ENGINE,
    REMOTE_OUTPUT,
    REMOTE_PACKAGE,
    LocalBackend,
    console_url_at,
    logs_url_at,
    output_directory_at,
    preflight,
)
from vertex_training.backends.local._containers import container_engine
from vertex_training.backends.local._record import (
    JobRecord,
    ProcessRef,
    job_name,
    parse_job_name,
    read_json,
)

__all__ = [
    "NO_ENGINE",
    "REMOTE_OUTPUT",
    "REMOTE_PACKAGE",
    "JobRecord",
    "LocalBackend",
    "ProcessRef",
    "console_url_at",
    "container_engine",
    "job_name",
    "logs_url_at",
    "output_directory_at",
    "parse_job_name",
    "preflight",
    "read_json",
]
