"""Job states, named as in google.cloud.aiplatform.v1.JobState without the prefix."""

from __future__ import annotations

QUEUED = "QUEUED"
PENDING = "PENDING"
RUNNING = "RUNNING"
SUCCEEDED = "SUCCEEDED"
FAILED = "FAILED"
CANCELLING = "CANCELLING"
CANCELLED = "CANCELLED"
PAUSED = "PAUSED"
EXPIRED = "EXPIRED"
UPDATING = "UPDATING"
PARTIALLY_SUCCEEDED = "PARTIALLY_SUCCEEDED"

#: States a job never leaves.
TERMINAL_STATES = (SUCCEEDED, FAILED, CANCELLED, EXPIRED, PARTIALLY_SUCCEEDED)
#: Terminal states that fail a `pulumi up` waiting for the job.
FAILED_STATES = (FAILED, CANCELLED, EXPIRED)
#: States in which a job has started running (or is past it).
STARTED_STATES = (RUNNING, *TERMINAL_STATES)
