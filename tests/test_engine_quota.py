"""The real Pulumi engine against a fake Vertex service that enforces a request quota
(issue 19): a first `pulumi up` of more jobs than the submission quota admits in a window
slows down and succeeds, says why on the job's row, and submits each job once.

Like tests/test_engine.py, each test runs the CLI that `make tools` built on a copy of
the project (tests/engine.py); the fake runs in the test process, with its quotas set
when it starts (``request_quotas``: the real ones are per minute; here per 2 s, so that
the test takes seconds).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.engine import Project, tools_missing, vertex_stack
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
JOBS = 16
#: Submissions the fake admits per window, and the window: 4 per 2 s, so the first
#: burst of 16 creates (the provider host runs four at a time) meets the quota at once.
SUBMISSIONS = 4
WINDOW_S = 2.0


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project.create(tmp_path)


def test_a_first_up_over_the_submission_quota_slows_down_and_succeeds(
    project: Project,
) -> None:
    """Every job is submitted once, no window admitted more than the quota, the update
    succeeds, and the refusal that slowed it down is shown in its output."""
    with FakeVertex(request_quotas={"submit": SUBMISSIONS}, request_window_s=WINDOW_S) as fake:
        jobs = {f"job-{i:02d}": {"image": IMAGE} for i in range(JOBS)}
        project.write_stack(vertex_stack(fake, **jobs))
        result = project.up().check()

        assert fake.refused, "the burst should have met the quota"
        creates = [c for c in fake.calls if c.method == "CreateCustomJob"]
        admitted = len(creates) - sum(1 for c in fake.refused if c.method == "CreateCustomJob")
        assert admitted == JOBS
        assert len(fake.jobs) == JOBS
        identities = {job.labels[IDENTITY_LABEL] for job in fake.jobs.values()}
        assert len(identities) == JOBS
        windows = [w for w in fake.quota_windows if w.kind == "submit"]
        assert all(w.admitted <= SUBMISSIONS for w in windows)
        assert "refused a call for quota (RESOURCE_EXHAUSTED" in result.output
        assert project.jobs_in_state().keys() == jobs.keys()
