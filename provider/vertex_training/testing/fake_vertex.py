"""A fake Vertex AI JobService, PipelineService and ModelService, served over real gRPC on
loopback.

The real ``google.cloud.aiplatform_v1.JobServiceClient`` talks to it through a local (or
an insecure) channel to ``FakeVertex.address``; nothing is mocked on the client side.
Each call's bearer token is recorded (``FakeVertex.bearers``), and with ``token`` (or
``--token``) a call without that token is refused UNAUTHENTICATED, as Google refuses one
(``_loopback``). The fake serves
the CustomJob and HyperparameterTuningJob methods of
``google.cloud.aiplatform.v1.JobService``, the TrainingPipeline methods of
``PipelineService`` (``fake_pipelines``), the Model Registry methods of ``ModelService``
but UploadModel (``fake_models``), and ``GetOperation`` of
``google.longrunning.Operations`` (which the client polls for the Delete methods); other
methods answer UNIMPLEMENTED, as gRPC does for unregistered methods.

References cited beside each behaviour (all in github.com/googleapis/googleapis unless
a URL is given):

- ``google/cloud/aiplatform/v1/job_service.proto``: the RPCs and their requests.
- ``google/cloud/aiplatform/v1/custom_job.proto``: CustomJob, its spec and field rules.
- ``google/cloud/aiplatform/v1/hyperparameter_tuning_job.proto``: HyperparameterTuningJob.
- ``google/cloud/aiplatform/v1/study.proto``: StudySpec, Trial, Measurement.
- ``google/cloud/aiplatform/v1/job_state.proto``: the states.
- ``google/longrunning/operations.proto``: long-running operations.
- ``google/rpc/code.proto``: which error code means what.
- https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.customJobs
  (create, get, list, cancel, delete).
- https://google.aip.dev/158 (pagination) and https://google.aip.dev/160 (filtering).

The fake is split by concern into the private modules of ``vertex_training.testing``; each
depends only on those listed before it:

- ``_clock``: ``ManualClock``, and clock readings as protobuf Timestamps.
- ``_faults``: ``RpcError`` and the faults a test injects (``fail_next``, ``stall_next``).
- ``_request_quotas``: Vertex AI's request quotas (calls per minute per kind), when asked.
- ``_filters``: the list methods' filter (AIP-160) and pagination (AIP-158).
- ``_validation``: the rules a created CustomJob or HyperparameterTuningJob must keep.
- ``_operations``: the long-running delete operations, and ``GetOperation``.
- ``_jobs``: the jobs and their lifecycle (time decides each job's state when read),
  and the CustomJob methods.
- ``_tuning``: hyperparameter tuning jobs and their trials (``default_trial_metric``).
- ``fake_models``: the models training pipelines register, and ModelService.
- ``fake_pipelines``: training pipelines, which run their backing job through ``_jobs``
  or ``_tuning`` and register its model through ``fake_models``.
- ``_server``: ``FakeVertex``, the gRPC server and the wiring of the parts into it.

This module re-exports the names tests use, and is the command line. Run from another
process (a Pulumi engine test points a stack at it)::

    python -m vertex_training.testing.fake_vertex --port 0 --run-seconds 2 --trial-seconds 0.5

(``--request-quota submit=60 --request-quota crud=600`` adds Vertex AI's default request
quotas; ``--token TOKEN`` refuses calls without that bearer token.)

prints the address (``127.0.0.1:PORT``) on its first line and serves until killed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from vertex_training.testing._clock import ManualClock
from vertex_training.testing._jobs import (
    DEFAULT_PENDING_S,
    DEFAULT_QUEUED_S,
    DEFAULT_RUN_S,
    SCRIPTABLE_OUTCOMES,
)
from vertex_training.testing._loopback import Bearer, serve_until_stopped
from vertex_training.testing._request_quotas import CRUD, DEFAULT_WINDOW_S, SUBMIT
from vertex_training.testing._server import Call, FakeVertex
from vertex_training.testing._tuning import DEFAULT_TRIAL_S, TrialMetric, default_trial_metric

__all__ = [
    "Bearer",
    "Call",
    "FakeVertex",
    "ManualClock",
    "TrialMetric",
    "default_trial_metric",
    "main",
]


# -- command line ---------------------------------------------------------------------------


def _parse_script(text: str) -> tuple[str, str, float | None]:
    """DISPLAY_NAME=OUTCOME[@RUN_SECONDS] -> (display name, outcome, run seconds)."""
    display_name, sep, rest = text.rpartition("=")
    if not sep or not display_name:
        raise argparse.ArgumentTypeError(f"expected DISPLAY_NAME=OUTCOME[@SECONDS], got {text!r}")
    outcome, _, seconds = rest.partition("@")
    if outcome not in SCRIPTABLE_OUTCOMES:
        raise argparse.ArgumentTypeError(f"outcome must be one of {SCRIPTABLE_OUTCOMES}")
    return display_name, outcome, float(seconds) if seconds else None


def _parse_request_quota(text: str) -> tuple[str, int]:
    """KIND=CALLS -> (kind, calls per window)."""
    kind, sep, calls = text.partition("=")
    if kind not in (SUBMIT, CRUD) or not sep or not calls.isdecimal():
        raise argparse.ArgumentTypeError(
            f"expected KIND=CALLS, KIND one of {SUBMIT}, {CRUD} (submit=60), got {text!r}"
        )
    return kind, int(calls)


def _parse_stockout(text: str) -> tuple[str, int]:
    """REGION[=TIMES] -> (region, times)."""
    region, _, times = text.partition("=")
    if not region or (times and not times.isdecimal()):
        raise argparse.ArgumentTypeError(f"expected REGION[=TIMES], got {text!r}")
    return region, int(times) if times else 1


def _parse_quota(text: str) -> tuple[str, dict[str, float]]:
    """REGION:RESOURCE=AMOUNT[,RESOURCE=AMOUNT] -> (region, limits)."""
    region, sep, rest = text.partition(":")
    limits: dict[str, float] = {}
    try:
        for part in rest.split(","):
            resource, eq, amount = part.partition("=")
            if not (resource and eq):
                raise ValueError(part)
            limits[resource] = float(amount)
    except ValueError:
        limits = {}
    if not (region and sep and limits):
        raise argparse.ArgumentTypeError(
            "expected REGION:RESOURCE=AMOUNT[,...] (resources: cpus or an accelerator "
            f"type, e.g. us-central1:cpus=8,NVIDIA_TESLA_T4=1), got {text!r}"
        )
    return region, limits


def main(argv: Sequence[str] | None = None) -> int:
    """Serve a fake JobService until SIGTERM or SIGINT; print its address first."""
    parser = argparse.ArgumentParser(
        prog="python -m vertex_training.testing.fake_vertex", description=main.__doc__
    )
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--queued-seconds", type=float, default=DEFAULT_QUEUED_S)
    parser.add_argument("--pending-seconds", type=float, default=DEFAULT_PENDING_S)
    parser.add_argument(
        "--run-seconds",
        type=float,
        default=DEFAULT_RUN_S,
        help="how long each job stays RUNNING ('inf': until cancelled)",
    )
    parser.add_argument(
        "--trial-seconds",
        type=float,
        default=DEFAULT_TRIAL_S,
        help="how long each trial of a hyperparameter tuning job runs",
    )
    parser.add_argument(
        "--script",
        type=_parse_script,
        action="append",
        default=[],
        metavar="DISPLAY_NAME=OUTCOME[@SECONDS]",
        help="give jobs with this display name this outcome (and run time); repeatable",
    )
    parser.add_argument(
        "--request-quota",
        type=_parse_request_quota,
        action="append",
        default=[],
        metavar="KIND=CALLS",
        help="refuse calls of KIND (submit, crud) past CALLS per window; repeatable",
    )
    parser.add_argument(
        "--request-window-seconds",
        type=float,
        default=DEFAULT_WINDOW_S,
        help="the request quotas' window",
    )
    parser.add_argument(
        "--stockout",
        type=_parse_stockout,
        action="append",
        default=[],
        metavar="REGION[=TIMES]",
        help="fail the next TIMES (1) jobs created in REGION with Vertex AI's 'Resources are "
        "insufficient in region'; repeatable",
    )
    parser.add_argument(
        "--preempt-spot",
        type=float,
        action="append",
        default=[],
        metavar="SECONDS",
        help="preempt the next SPOT job SECONDS into running; repeatable (one job each)",
    )
    parser.add_argument(
        "--flex-capacity-after",
        type=float,
        metavar="SECONDS",
        help="FLEX_START jobs get capacity SECONDS after submission (a shorter "
        "max_wait_duration fails)",
    )
    parser.add_argument(
        "--quota",
        type=_parse_quota,
        action="append",
        default=[],
        metavar="REGION:RESOURCE=AMOUNT[,...]",
        help="the region's custom-training quota: jobs over it stay QUEUED; repeatable",
    )
    parser.add_argument(
        "--token",
        help="refuse every call whose bearer token is not TOKEN (UNAUTHENTICATED)",
    )
    parser.add_argument(
        "--serve-logging",
        action="store_true",
        help="also serve Cloud Logging (the jobs' invented log lines) on the same port",
    )
    args = parser.parse_args(argv)
    fake = FakeVertex(
        queued_s=args.queued_seconds,
        pending_s=args.pending_seconds,
        run_s=args.run_seconds,
        trial_s=args.trial_seconds,
        port=args.port,
        request_quotas=dict(args.request_quota),
        request_window_s=args.request_window_seconds,
        quotas=dict(args.quota),
        serve_logging=args.serve_logging,
        token=args.token,
    )
    for display_name, outcome, run_s in args.script:
        fake.script(display_name, outcome=outcome, run_s=run_s)
    for region, times in args.stockout:
        fake.stockout(region, times=times)
    for after_s in args.preempt_spot:
        fake.preempt_spot(after_s)
    if args.flex_capacity_after is not None:
        fake.flex_start_capacity_after(args.flex_capacity_after)
    return serve_until_stopped(fake)


if __name__ == "__main__":
    sys.exit(main())
