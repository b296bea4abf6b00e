"""Quotas before submission: a job's needs (vertex_training.catalog.quotas), the project's
limits read through the real google-cloud-quotas client from the fake service
(vertex_training.catalog.cloud_quotas, vertex_training.testing.fake_quotas), and plan's
Quota section."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest

from tests.cli import run_cli
from tests.test_plan import BASE_JOBS, HEAD_JOBS, git, stack
from vertex_training.catalog import cloud_quotas, quotas
from vertex_training.errors import QuotasError
from vertex_training.review import quota_check
from vertex_training.review.plan import plan_stack, to_json, to_markdown
from vertex_training.stackconfig import (
    Accelerator,
    JobSpec,
    ReservationAffinity,
    Scheduling,
    WorkerPool,
)
from vertex_training.testing.fake_quotas import FakeQuotas

CPUS = "aiplatform.googleapis.com/custom_model_training_cpus"
T4 = "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus"
SPOT_T4 = "aiplatform.googleapis.com/custom_model_training_preemptible_nvidia_t4_gpus"


def training_job(*pools: WorkerPool, strategy: str | None = None) -> JobSpec:
    return JobSpec(
        name="train",
        display_name="train",
        project="acme-ml-dev",
        region="us-central1",
        worker_pools=list(pools),
        scheduling=Scheduling(strategy=strategy),  # type: ignore[arg-type]
    )


def amounts(needs: quotas.JobNeeds) -> dict[str, float]:
    return {need.quota.metric: need.amount for need in needs.needs}


class TestJobNeeds:
    """job_needs: what a job holds in its region, with each amount's reasons."""

    def test_cpus_are_replicas_times_vcpus_over_every_pool(self) -> None:
        """1 x n1-standard-8 plus 3 x n1-standard-4 hold 8 + 12 = 20 N1 vCPUs."""
        job = training_job(
            WorkerPool(role="primary", machine="n1-standard-8"),
            WorkerPool(role="workers", replicas=3, machine="n1-standard-4"),
        )
        needs = quotas.job_needs(job)
        assert amounts(needs) == {CPUS: 20}
        [need] = needs.needs
        assert len(need.reasons) == 2 and "3 x n1-standard-4" in need.reasons[1]

    def test_a_tpu_slice_holds_every_chip_of_its_topology(self) -> None:
        """ct5lp-hightpu-4t (4 chips built in) at 4x4 holds 16 v5e chips; at 2x2, 4."""
        metric = "aiplatform.googleapis.com/custom_model_training_tpu_v5e"
        for topology, chips in (("4x4", 16), ("2x2", 4)):
            pool = WorkerPool(role="primary", machine="ct5lp-hightpu-4t", tpu_topology=topology)
            assert amounts(quotas.job_needs(training_job(pool))) == {metric: chips}

    def test_accelerators_count_per_replica(self) -> None:
        """2 replicas with 2 T4s each hold 4 of the T4 quota, beside their vCPUs."""
        job = training_job(
            WorkerPool(
                role="primary",
                replicas=2,
                machine="n1-standard-8",
                accelerator=Accelerator(type="NVIDIA_TESLA_T4", count=2),
            )
        )
        assert amounts(quotas.job_needs(job)) == {CPUS: 16, T4: 4}

    def test_flex_start_holds_the_preemptible_gpu_quota(self) -> None:
        """FLEX_START: its GPUs count against the preemptible GPU quota (Google's flex-start
        page), its vCPUs against the standard one."""
        job = training_job(
            WorkerPool(
                role="primary",
                machine="g2-standard-8",
                accelerator=Accelerator(type="NVIDIA_L4", count=1),
            ),
            strategy="FLEX_START",
        )
        needs = amounts(quotas.job_needs(job, shape_of=lambda _m: (8.0, "test")))
        assert needs == {
            "aiplatform.googleapis.com/custom_model_training_g2_cpus": 8,
            "aiplatform.googleapis.com/custom_model_training_preemptible_nvidia_l4_gpus": 1,
        }

    def test_a_reserved_pool_holds_the_same_quota_and_says_so(self) -> None:
        """A pool on a reservation needs the same quota; the reason names the reservation."""
        reserved = WorkerPool(
            role="primary",
            machine="n1-standard-4",
            accelerator=Accelerator(type="NVIDIA_TESLA_T4", count=1),
            reservation=ReservationAffinity(
                type="SPECIFIC_RESERVATION",
                key="compute.googleapis.com/reservation-name",
                values=["projects/p/zones/us-central1-a/reservations/r"],
            ),
        )
        plain = reserved.model_copy(update={"reservation": None})
        on_reservation = quotas.job_needs(training_job(reserved))
        assert amounts(on_reservation) == amounts(quotas.job_needs(training_job(plain)))
        (t4,) = [n for n in on_reservation.needs if n.quota.unit == "NVIDIA_TESLA_T4"]
        assert "on a reservation" in t4.reasons[0]

    def test_spot_holds_the_preemptible_quotas(self) -> None:
        """scheduling.strategy SPOT moves vCPUs and GPUs to their preemptible quotas."""
        job = training_job(
            WorkerPool(
                role="primary",
                machine="n1-standard-4",
                accelerator=Accelerator(type="NVIDIA_TESLA_T4", count=1),
            ),
            strategy="SPOT",
        )
        needs = quotas.job_needs(job)
        assert amounts(needs) == {
            "aiplatform.googleapis.com/custom_model_training_preemptible_cpus": 4,
            SPOT_T4: 1,
        }
        assert needs.strategy == "SPOT"

    def test_a_tuning_job_holds_its_parallel_trials(self) -> None:
        """copies=3 (parallel_trials) triples every amount and says so."""
        job = training_job(WorkerPool(role="primary", machine="n2-standard-16"))
        needs = quotas.job_needs(job, copies=3)
        [need] = needs.needs
        assert need.quota.name == "custom_model_training_n2_cpus" and need.amount == 48
        assert "3 trials at once" in need.reasons[0]

    def test_an_unknown_shape_is_named_not_zero(self) -> None:
        """A machine whose vCPUs neither the snapshot nor the catalogue gives is unknown."""
        job = training_job(WorkerPool(role="primary", machine="a2-highgpu-1g"))
        needs = quotas.job_needs(job)
        assert CPUS not in amounts(needs)
        assert any("a2-highgpu-1g" in reason for reason in needs.unknown)

    def test_the_snapshot_shapes_come_first(self) -> None:
        """shapes_from: a snapshot's guestCpus is used and named as the source."""
        shape = SimpleNamespace(guest_cpus=12)
        snapshot = SimpleNamespace(
            shape_of=lambda machine: shape if machine == "a2-highgpu-1g" else None,
            shapes_source="compute.googleapis.com",
        )
        lookup = quotas.shapes_from(snapshot)
        assert lookup("a2-highgpu-1g") == (
            12.0,
            "guestCpus in the price snapshot, from compute.googleapis.com",
        )
        assert lookup("n1-standard-4") is not None  # the catalogue for the rest

    def test_every_quota_says_whether_its_name_was_confirmed(self) -> None:
        """The T4 quota was seen in error text; an H200 one only follows the pattern."""
        t4 = quotas.accelerator_quota("NVIDIA_TESLA_T4")
        h200 = quotas.accelerator_quota("NVIDIA_H200_141GB")
        assert t4 is not None and t4.confirmed
        assert h200 is not None and not h200.confirmed and "not confirmed" in h200.how


@pytest.fixture
def fake() -> Iterator[FakeQuotas]:
    """A fake Cloud Quotas service, 10 quotas a page."""
    with FakeQuotas() as service:
        yield service


class TestReadLimits:
    """read_limits through the real CloudQuotasClient against the fake."""

    def test_region_values_and_the_default_across_pages(self, fake: FakeQuotas) -> None:
        """A region with its own DimensionsInfo gets it; another gets the default."""
        limits = cloud_quotas.read_limits(
            "acme-ml-dev", [CPUS, T4], ["us-central1", "asia-east1"], endpoint=fake.address
        )
        central = limits.get(CPUS, "us-central1")
        asia = limits.get(T4, "asia-east1")
        assert central is not None and central.value == 64 and central.specific
        assert asia is not None and asia.value == 0 and not asia.specific
        pages = [c for c in fake.calls if c.method == "ListQuotaInfos"]
        assert len(pages) > 1 and pages[0].target.endswith(
            "/locations/global/services/aiplatform.googleapis.com"
        )
        assert CPUS in limits.metrics

    def test_transient_unavailable_is_retried(self, fake: FakeQuotas) -> None:
        """Two UNAVAILABLE answers are retried; the read succeeds."""
        fake.fail_next(2)
        limits = cloud_quotas.read_limits(
            "acme-ml-dev", [CPUS], ["us-central1"], endpoint=fake.address
        )
        assert limits.get(CPUS, "us-central1") is not None

    def test_a_read_that_keeps_failing_ends_in_bounded_time(self, fake: FakeQuotas) -> None:
        """UNAVAILABLE forever: QuotasError after the deadline, not a hang."""
        fake.fail_next(1000)
        with pytest.raises(QuotasError, match="kept failing"):
            cloud_quotas.read_limits(
                "acme-ml-dev", [CPUS], ["us-central1"], endpoint=fake.address, deadline_s=1.5
            )

    def test_permission_denied_names_the_role(self, fake: FakeQuotas) -> None:
        """PERMISSION_DENIED is not retried and says which role reads quotas."""
        fake.fail_next(1, grpc.StatusCode.PERMISSION_DENIED)
        with pytest.raises(QuotasError, match=r"roles/cloudquotas\.viewer"):
            cloud_quotas.read_limits("acme-ml-dev", [CPUS], ["us-central1"], endpoint=fake.address)

    def test_without_credentials_it_says_so(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No application default credentials: QuotasError, before any call."""
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
        with pytest.raises(QuotasError, match="no Google credentials"):
            cloud_quotas.read_limits("acme-ml-dev", [CPUS], ["us-central1"])


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository whose dev stack changes from BASE_JOBS to HEAD_JOBS (test_plan's)."""
    git(tmp_path, "init", "-q")
    (tmp_path / "Pulumi.yaml").write_text("name: plan-test\nruntime: python\n")
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.dev.yaml").write_text(stack(BASE_JOBS))
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    (stacks / "Pulumi.dev.yaml").write_text(
        stack({k: v for k, v in HEAD_JOBS.items() if k != "broken"})
    )
    git(tmp_path, "commit", "-q", "-am", "change")
    return tmp_path


class TestPlanQuotaSection:
    """plan's Quota section: within, exceeded, or could not be checked; never silent."""

    def test_within_the_limits(self, repo: Path, fake: FakeQuotas) -> None:
        """The submitted and replaced jobs' needs sit beside the limits, none exceeded."""
        plan = plan_stack(
            repo / "stacks" / "Pulumi.dev.yaml",
            "HEAD~1",
            quota_reader=cloud_quotas.reader(endpoint=fake.address),
        )
        assert plan.quotas is not None and plan.quotas.unchecked is None
        assert not plan.quotas.exceeded
        text = to_markdown(plan)
        assert (
            "**Quota**" in text
            and "| us-central1 | `custom_model_training_cpus` | 32 | 64 | `gpu` 8, `new` 24 |"
            in text
        )

    def test_a_job_that_would_exceed_is_named(self, repo: Path, fake: FakeQuotas) -> None:
        """2 T4s against a limit of 1: the job and the quota are named; the plan still exits 0."""
        fake.set_limit(T4, "us-central1", 1)
        plan = plan_stack(
            repo / "stacks" / "Pulumi.dev.yaml",
            "HEAD~1",
            quota_reader=cloud_quotas.reader(endpoint=fake.address),
        )
        assert plan.quotas is not None
        [exceeded] = plan.quotas.exceeded
        assert exceeded.exceeding_jobs == ("gpu",) and exceeded.quota.metric == T4
        assert f"`gpu` would exceed {T4} in us-central1: it needs 2, the limit is 1" in to_markdown(
            plan
        )
        assert not plan.mandatory_failures and not plan.invalid

    def test_without_credentials_it_could_not_check(
        self, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No credentials: the section says why, and what each job needs."""
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
        monkeypatch.delenv("CI", raising=False)
        plan = plan_stack(
            repo / "stacks" / "Pulumi.dev.yaml", "HEAD~1", quota_reader=cloud_quotas.reader()
        )
        text = to_markdown(plan)
        assert "quotas could not be checked: no Google credentials" in text
        assert "run with Google credentials (`gcloud auth application-default login`)" in text
        assert "| us-central1 | `custom_model_training_cpus` | 32 | `gpu` 8, `new` 24 |" in text
        assert '"unchecked": "no Google credentials' in to_json(plan)

    def test_in_ci_one_line_names_the_role_the_ci_identity_needs(
        self, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """In CI: one line, the role to grant and the docs; no laptop sign-in advice."""
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "none.json"))
        monkeypatch.setenv("CI", "true")
        plan = plan_stack(
            repo / "stacks" / "Pulumi.dev.yaml", "HEAD~1", quota_reader=cloud_quotas.reader()
        )
        text = to_markdown(plan)
        [line] = [line for line in text.splitlines() if "could not be checked" in line]
        assert line.endswith(
            "give the CI identity `roles/cloudquotas.viewer` on the project (docs/review.md#quota)"
        )
        assert "gcloud" not in text.split("**Quota**")[1]
        assert line == (
            "- :warning: quotas could not be checked: no Google credentials; give the CI "
            "identity `roles/cloudquotas.viewer` on the project (docs/review.md#quota)"
        )

    def test_the_command_line_reads_the_fake(self, repo: Path, fake: FakeQuotas) -> None:
        """vertex-training plan --quotas-endpoint shows the section, read from the fake."""
        result = run_cli(
            "plan",
            "stacks/Pulumi.dev.yaml",
            "--base",
            "HEAD~1",
            "--quotas-endpoint",
            fake.address,
            cwd=repo,
            env={
                "PYTHONPATH": str(Path(__file__).resolve().parent.parent),
                "PATH": "/usr/bin:/bin",
            },
        )
        assert result.returncode == 0, result.stderr
        assert f"read from `{fake.address}`" in result.stdout

    def test_no_vertex_job_submitted_means_no_section(self) -> None:
        """A change that submits nothing reads no quota and shows no section."""
        check = quota_check.check_quotas([], reader=None)
        assert check.needs == [] and quota_check.markdown(check) == []


class TestFakeCommandLine:
    """python -m vertex_training.testing.fake_quotas serves until stopped and prints its address."""

    def test_serves_and_prints_its_address(self) -> None:
        """The first line is 127.0.0.1:PORT; a read through it sees a --limit value."""
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vertex_training.testing.fake_quotas",
                "--port",
                "0",
                "--limit",
                "custom_model_training_cpus=us-central1:3",
            ],
            cwd=Path(__file__).resolve().parent.parent,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert process.stdout is not None
            address = process.stdout.readline().strip()
            limits = cloud_quotas.read_limits("p", [CPUS], ["us-central1"], endpoint=address)
            found = limits.get(CPUS, "us-central1")
            assert found is not None and found.value == 3
        finally:
            process.terminate()
            process.wait(timeout=10)
