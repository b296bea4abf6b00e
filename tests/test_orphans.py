"""`vertex-training jobs orphans`: the labelled jobs no given stack records, against the
fake JobService through the real client (vertex_training.orphans)."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.clients import job_made_outside
from tests.prices import PRICES
from vertex_training import orphans, stackconfig
from vertex_training.__main__ import main
from vertex_training.api.labels import (
    IDENTITY_LABEL,
    PROJECT_LABEL,
    RESOURCE_LABEL,
    STACK_LABEL,
)
from vertex_training.backends.vertex import VertexBackend
from vertex_training.review import cost
from vertex_training.testing import FakeVertex, ManualClock

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
PROJECT, REGION = "test-project", "us-central1"
#: The fake's times: queued, pending, then running half an hour.
RUN_S = 1800.0


@pytest.fixture
def fake(clock: ManualClock) -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=1, pending_s=1, run_s=RUN_S, clock=clock) as server:
        yield server


@pytest.fixture
def backend(fake: FakeVertex) -> VertexBackend:
    return VertexBackend(PROJECT, REGION, api_endpoint=fake.address)


@pytest.fixture
def running() -> Iterator[FakeVertex]:
    """A fake on the real clock whose jobs run for a minute: cancels and deletes end."""
    with FakeVertex(queued_s=0.1, pending_s=0.1, run_s=60) as server:
        yield server


def submitted(fake: FakeVertex, stack: str, resource: str, **extra: str) -> str:
    """A job as the provider submits it for ``resource`` of ``stack``: its resource name."""
    labels = {
        IDENTITY_LABEL: f"{stack}-{resource}-key",
        STACK_LABEL: stack,
        RESOURCE_LABEL: resource,
        **extra,
    }
    return job_made_outside(fake.address, display_name=resource, image=IMAGE, labels=labels)


def export_of(
    stack: str, *job_names: str, pending: tuple[str, ...] = (), project: str = "training"
) -> dict[str, Any]:
    """What `pulumi stack export` prints for a stack of Pulumi project ``project``: its
    stack resource, these jobs (their resource names as IDs) and pending creates of these
    resources."""
    urn = f"urn:pulumi:{stack}::{project}::pulumi-python:dynamic/vertex:TrainingJob::"
    stack_urn = f"urn:pulumi:{stack}::{project}::pulumi:pulumi:Stack::{project}-{stack}"
    return {
        "version": 3,
        "deployment": {
            "resources": [
                {"urn": stack_urn},
                *(
                    {"urn": f"{urn}job{i}", "id": name, "outputs": {"state": "RUNNING"}}
                    for i, name in enumerate(job_names)
                ),
            ],
            "pending_operations": [
                {"resource": {"urn": f"{urn}{resource}"}, "type": "creating"}
                for resource in pending
            ],
        },
    }


def as_number(name: str) -> str:
    """The same job's name with the project given by number, as the API writes it."""
    return name.replace(f"projects/{PROJECT}/", "projects/123456789/")


class TestKnownJobs:
    def test_a_job_named_anywhere_in_a_state_is_recorded_whatever_names_its_project(
        self,
    ) -> None:
        """A job is recorded by its location, kind and ID, in outputs or IDs alike."""
        name = f"projects/{PROJECT}/locations/{REGION}/customJobs/42"
        state = export_of("dev")
        state["deployment"]["resources"].append(
            {
                "urn": "urn:pulumi:dev::training::t::w",
                "outputs": {"attempts": [{"resource_name": name}]},
            }
        )
        known = orphans.known_jobs({"dev": orphans.deployment_of(state, "dev")})
        assert known.records(as_number(name))
        assert not known.records(name.replace("/42", "/43"))
        assert not known.records(name.replace(REGION, "europe-west4"))

    def test_a_file_backend_stack_file_gzipped_reads_as_its_export(self, tmp_path: Path) -> None:
        """A file backend's checkpoint (gzipped too) reads as `pulumi stack export` does."""
        name = f"projects/{PROJECT}/locations/{REGION}/customJobs/7"
        checkpoint = {"version": 3, "checkpoint": {"latest": export_of("dev", name)["deployment"]}}
        path = tmp_path / "dev.json.gz"
        path.write_bytes(gzip.compress(json.dumps(checkpoint).encode()))
        assert orphans.known_jobs({"f": orphans.read_state_file(path)}).records(name)

    def test_a_states_pulumi_project_is_read_from_its_urns(self) -> None:
        """Each state counts for the Pulumi project its resources' URNs name."""
        alpha = export_of("dev", pending=("train",), project="Alpha.ML")["deployment"]
        known = orphans.known_jobs({"stack dev": alpha, "empty": {"resources": []}})
        assert known.projects == {"stack dev": "Alpha.ML", "empty": ""}
        assert known.pending == {("alpha-ml", "dev", "train")}

    def test_a_state_whose_urns_name_two_projects_is_refused(self) -> None:
        """A state naming two Pulumi projects is no one stack's: no job is judged by it."""
        state = export_of("dev", project="alpha")
        state["deployment"]["resources"].append({"urn": "urn:pulumi:dev::beta::t::w"})
        with pytest.raises(orphans.StateError, match=r"2 Pulumi projects \(alpha, beta\)"):
            orphans.known_jobs({"stack dev": state["deployment"]})

    def test_a_file_that_is_no_state_is_refused(self, tmp_path: Path) -> None:
        """A file that is not a state stops the command: never read as an empty stack."""
        path = tmp_path / "notes.json"
        path.write_text('{"jobs": []}')
        with pytest.raises(orphans.StateError, match="not a Pulumi state"):
            orphans.read_state_file(path)


class TestFindOrphans:
    def test_a_removed_stacks_job_is_found_a_live_ones_is_not_an_unlabelled_one_never(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """Only the labelled job that no given state records is an orphan."""
        live = submitted(fake, "live", "train")
        gone = submitted(fake, "gone", "train")
        job_made_outside(fake.address, display_name="by-hand", image=IMAGE)
        known = orphans.known_jobs({"stack live": export_of("live", live)["deployment"]})
        listing = orphans.find_orphans(backend, known, {}, None)
        assert [o.name for o in listing.orphans] == [gone]
        assert listing.recorded == 1

    def test_a_label_restricts_the_listing(self, fake: FakeVertex, backend: VertexBackend) -> None:
        """`--label KEY=VALUE` lists only the jobs carrying it; `KEY` any value of it."""
        mine = submitted(fake, "a", "one", acceptance_run="run-1")
        other = submitted(fake, "a", "two", acceptance_run="run-2")
        submitted(fake, "a", "three")
        only = orphans.find_orphans(backend, orphans.Known(), {"acceptance_run": "run-1"}, None)
        assert [o.name for o in only.orphans] == [mine]
        runs = orphans.find_orphans(backend, orphans.Known(), {"acceptance_run": None}, None)
        assert sorted(o.name for o in runs.orphans) == sorted([mine, other])

    def test_the_job_of_a_pending_create_is_left_alone(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A job whose create a given stack holds pending is its next `up`'s, not an orphan."""
        adopted_next = submitted(fake, "dev", "train")
        state = export_of("dev", pending=("train",))
        known = orphans.known_jobs({"stack dev": state["deployment"]})
        listing = orphans.find_orphans(backend, known, {}, None)
        assert listing.orphans == []
        assert [s.name for s in listing.pending] == [adopted_next]

    def test_a_project_name_restricts_the_listing_to_its_jobs(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """`--project-name NAME` lists only the jobs labelled with that Pulumi project
        (its label value); a job without the project label belongs to none."""
        alpha = submitted(fake, "dev", "train", **{PROJECT_LABEL: "alpha-ml"})
        beta = submitted(fake, "dev", "train", **{PROJECT_LABEL: "beta"})
        submitted(fake, "dev", "train")
        one = orphans.find_orphans(backend, orphans.Known(), {}, None, project_names=("Alpha.ML",))
        assert [o.name for o in one.orphans] == [alpha]
        both = orphans.find_orphans(
            backend, orphans.Known(), {}, None, project_names=("Alpha.ML", "beta")
        )
        assert sorted(o.name for o in both.orphans) == sorted([alpha, beta])

    def test_a_pending_create_does_not_cover_another_projects_job(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """Project alpha's pending create of dev's `train` leaves project beta's job of
        the same stack and resource an orphan."""
        alphas = submitted(fake, "dev", "train", **{PROJECT_LABEL: "alpha"})
        betas = submitted(fake, "dev", "train", **{PROJECT_LABEL: "beta"})
        state = export_of("dev", pending=("train",), project="alpha")
        known = orphans.known_jobs({"stack dev": state["deployment"]})
        listing = orphans.find_orphans(backend, known, {}, None)
        assert [s.name for s in listing.pending] == [alphas]
        assert [o.name for o in listing.orphans] == [betas]

    def test_a_pending_create_still_covers_a_job_without_the_project_label(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A job a release up to 0.3.0 submitted (no project label) is covered by its stack
        and resource, whatever the state's project, as before."""
        earlier = submitted(fake, "dev", "train")
        state = export_of("dev", pending=("train",), project="alpha")
        known = orphans.known_jobs({"stack dev": state["deployment"]})
        listing = orphans.find_orphans(backend, known, {}, None)
        assert listing.orphans == []
        assert [s.name for s in listing.pending] == [earlier]

    def test_a_job_a_state_names_is_recorded_whatever_its_project(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A job ID in a state is recorded, even when its labels name another project."""
        betas = submitted(fake, "dev", "train", **{PROJECT_LABEL: "beta"})
        state = export_of("dev", betas, project="alpha")
        known = orphans.known_jobs({"stack dev": state["deployment"]})
        listing = orphans.find_orphans(backend, known, {}, None)
        assert listing.orphans == [] and listing.recorded == 1

    def test_orphans_are_grouped_by_project_then_stack_those_without_one_last(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """The orphans come by Pulumi project, then stack; jobs of no project last."""
        earlier = submitted(fake, "a", "train")
        beta_b = submitted(fake, "b", "train", **{PROJECT_LABEL: "beta"})
        alpha_b = submitted(fake, "b", "train", **{PROJECT_LABEL: "alpha"})
        beta_a = submitted(fake, "a", "train", **{PROJECT_LABEL: "beta"})
        listing = orphans.find_orphans(backend, orphans.Known(), {}, None)
        assert [o.name for o in listing.orphans] == [alpha_b, beta_a, beta_b, earlier]

    def test_the_cost_so_far_is_the_hours_run_at_the_jobs_rate(
        self, fake: FakeVertex, backend: VertexBackend, clock: ManualClock
    ) -> None:
        """An ended job's cost is its running hours at the rate its machines have by the
        snapshot (the fake's invented prices), as render prices the same job."""
        submitted(fake, "gone", "train")
        clock.advance(2 + RUN_S + 60)
        listing = orphans.find_orphans(backend, orphans.Known(), {STACK_LABEL: "gone"}, PRICES)
        (orphan,) = listing.orphans
        settings = stackconfig.StackSettings(stack="s", project=PROJECT, region=REGION)
        job = stackconfig.parse_job("train", {"image": IMAGE, "machine": "e2-standard-4"}, settings)
        hourly = cost.estimate(job, PRICES).hourly_usd
        assert hourly is not None and hourly > 0
        assert orphan.status.state == "SUCCEEDED"
        assert orphan.cost.hours == pytest.approx(RUN_S / 3600)
        assert orphan.cost.usd == pytest.approx(hourly * RUN_S / 3600)

    def test_without_a_snapshot_the_cost_is_unknown_saying_why(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """No snapshot: the cost is unknown, never zero, and says how to make one."""
        submitted(fake, "gone", "train")
        listing = orphans.find_orphans(
            backend, orphans.Known(), {}, None, no_prices="no price snapshot: run make prices"
        )
        assert listing.orphans[0].cost.usd is None
        assert "make prices" in orphans.to_text(listing, orphans.Known())


class TestCommand:
    def run(self, *args: str, stdin: str = "") -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr("sys.stdout", out)
            patch.setattr("sys.stderr", err)
            patch.setattr("sys.stdin", io.StringIO(stdin))
            code = main(["jobs", "orphans", "--project", PROJECT, "--region", REGION, *args])
        return code, out.getvalue(), err.getvalue()

    def test_delete_with_yes_deletes_the_removed_stacks_job_and_leaves_the_others(
        self, running: FakeVertex, tmp_path: Path
    ) -> None:
        """`--delete --yes` cancels the running orphan, waits for it to end, deletes it;
        the live stack's job and the unlabelled one stay, still running."""
        backend = VertexBackend(PROJECT, REGION, api_endpoint=running.address)
        live = submitted(running, "live", "train")
        gone = submitted(running, "gone", "train")
        by_hand = job_made_outside(running.address, display_name="by-hand", image=IMAGE)
        state = tmp_path / "live.json"
        state.write_text(json.dumps(export_of("live", live)))
        code, out, err = self.run(
            "--state", str(state), "--endpoint", running.address, "--delete", "--yes"
        )
        assert code == 0, err
        assert f"{gone}: deleted" in out
        assert f"{gone}: cancel requested" in err
        assert backend.get(gone) is None
        for kept in (live, by_hand):
            status = backend.get(kept)
            assert status is not None and status.state not in ("CANCELLING", "CANCELLED")

    def test_cancel_stops_an_orphan_and_keeps_its_record(self, running: FakeVertex) -> None:
        """`--cancel --yes` cancels the orphan; the job stays, to be read or deleted."""
        backend = VertexBackend(PROJECT, REGION, api_endpoint=running.address)
        gone = submitted(running, "gone", "train")
        code, out, _ = self.run(
            "--label", "pulumi_stack=gone", "--endpoint", running.address, "--cancel", "--yes"
        )
        assert code == 0
        assert f"{gone}: cancelled" in out
        status = backend.get(gone)
        assert status is not None and status.state in ("CANCELLING", "CANCELLED")

    def test_an_unconfirmed_delete_does_nothing(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """Without --yes, anything but `yes` on stdin leaves every job as it was."""
        gone = submitted(fake, "gone", "train")
        code, out, err = self.run(
            "--label", "pulumi_stack=gone", "--endpoint", fake.address, "--delete", stdin="no\n"
        )
        assert code == 1
        assert gone in out and "nothing done" in err
        status = backend.get(gone)
        assert status is not None and status.state != "CANCELLED"

    def test_with_neither_a_stack_nor_a_label_it_refuses(self) -> None:
        """Every labelled job would be an orphan: the command asks for stacks or a label."""
        code, _, err = self.run("--delete", "--yes")
        assert code == 2
        assert "--stack NAME" in err and "--label" in err

    def test_a_project_name_that_is_no_name_is_refused_naming_it(self) -> None:
        """A --project-name Pulumi would refuse is refused, saying what to write."""
        code, _, err = self.run("--project-name", "my project")
        assert code == 2
        assert "--project-name 'my project' is not a Pulumi project name" in err
        assert "Pulumi.yaml" in err

    def test_a_label_that_is_no_label_is_refused_naming_it(self) -> None:
        """A --label Google would refuse is refused here, saying what to write."""
        code, _, err = self.run("--label", "Run ID=x")
        assert code == 2
        assert "--label Run ID=x is not a label: write KEY=VALUE" in err

    def test_a_service_that_cannot_be_reached_is_named_without_a_traceback(self) -> None:
        """No JobService at the endpoint: the command says so and exits 1."""
        with FakeVertex() as stopped:
            address = stopped.address
        code, out, err = self.run("--label", "pulumi_stack", "--endpoint", address)
        assert code == 1 and out == ""
        assert "listing the jobs failed" in err and address in err
        assert "Traceback" not in err

    def test_a_stack_that_cannot_be_exported_stops_it(
        self, fake: FakeVertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A stack whose state cannot be read stops the command before any job is judged."""
        monkeypatch.chdir(tmp_path)
        submitted(fake, "gone", "train")
        code, out, err = self.run("--stack", "nowhere", "--endpoint", fake.address, "--delete")
        assert code == 2
        assert "`pulumi stack export --stack nowhere`" in err
        assert out == ""

    def test_json_lists_each_orphan_with_its_state_age_labels_and_cost(
        self, fake: FakeVertex, clock: ManualClock
    ) -> None:
        """`--format json`: name, state, age, labels, hours run, cost or why unknown."""
        gone = submitted(fake, "gone", "train")
        clock.advance(2 + RUN_S + 10)
        code, out, _ = self.run(
            "--label",
            "pulumi_stack",
            "--endpoint",
            fake.address,
            "--format",
            "json",
            "--prices",
            "/nonexistent/snapshot.json",
        )
        assert code == 0
        (orphan,) = json.loads(out)["orphans"]
        assert orphan["name"] == gone
        assert orphan["state"] == "SUCCEEDED"
        assert orphan["labels"][STACK_LABEL] == "gone"
        assert orphan["hours_run"] == pytest.approx(RUN_S / 3600)
        assert orphan["cost_usd"] is None
        assert "no price snapshot (/nonexistent/snapshot.json)" in orphan["cost_unknown"]
        assert orphan["age_s"] > 0

    def test_the_table_prices_each_orphan_and_says_by_which_snapshot(
        self, fake: FakeVertex, clock: ManualClock, tmp_path: Path
    ) -> None:
        """The text table has each orphan's cost, and a line names the snapshot's date."""
        from vertex_training.catalog import prices

        snapshot = tmp_path / "snapshot.json"
        prices.save_snapshot(PRICES, snapshot)
        gone = submitted(fake, "gone", "train")
        clock.advance(2 + RUN_S + 10)
        code, out, _ = self.run(
            "--label", "pulumi_stack=gone", "--endpoint", fake.address, "--prices", str(snapshot)
        )
        assert code == 0
        [row] = [line for line in out.splitlines() if line.startswith(gone)]
        assert "SUCCEEDED" in row and "$0." in row and "pulumi_stack=gone" in row
        assert f"costs so far by {snapshot}: prices read {PRICES.read_date}" in out

    def test_project_name_lists_that_projects_jobs_and_the_table_names_each_project(
        self, fake: FakeVertex, tmp_path: Path
    ) -> None:
        """`--project-name` alone is enough to list; each row names its Pulumi project, and
        the states read name theirs."""
        alpha = submitted(fake, "dev", "train", **{PROJECT_LABEL: "alpha-ml"})
        betas = submitted(fake, "dev", "train", **{PROJECT_LABEL: "beta"})
        state = tmp_path / "dev.json"
        state.write_text(json.dumps(export_of("dev", project="Alpha.ML")))
        code, out, err = self.run(
            "--project-name", "Alpha.ML", "--state", str(state), "--endpoint", fake.address
        )
        assert code == 0, err
        [row] = [line for line in out.splitlines() if line.startswith(alpha)]
        assert " alpha-ml " in row and f"{PROJECT_LABEL}=" not in row
        assert betas not in out
        assert f"stacks read: {state} (Pulumi project Alpha.ML)" in out

    def test_the_table_says_a_job_without_the_project_label_has_none(
        self, fake: FakeVertex
    ) -> None:
        """A job a release up to 0.3.0 submitted is listed as of no Pulumi project."""
        earlier = submitted(fake, "old", "train")
        code, out, _ = self.run("--label", "pulumi_stack=old", "--endpoint", fake.address)
        assert code == 0
        [row] = [line for line in out.splitlines() if line.startswith(earlier)]
        assert orphans.NO_PROJECT in row

    def test_json_names_each_orphans_project_and_each_states(
        self, fake: FakeVertex, tmp_path: Path
    ) -> None:
        """`--format json`: each orphan's `pulumi_project` (null without the label), and
        the Pulumi project of each state read."""
        alpha = submitted(fake, "dev", "train", **{PROJECT_LABEL: "alpha"})
        earlier = submitted(fake, "dev", "eval")
        state = tmp_path / "dev.json"
        state.write_text(json.dumps(export_of("dev", project="alpha")))
        code, out, _ = self.run(
            "--state", str(state), "--endpoint", fake.address, "--format", "json"
        )
        assert code == 0
        listing = json.loads(out)
        projects = {o["name"]: o["pulumi_project"] for o in listing["orphans"]}
        assert projects == {alpha: "alpha", earlier: None}
        assert listing["stack_projects"] == {str(state): "alpha"}


class TestAct:
    def test_a_job_already_cancelling_is_waited_for_then_deleted(self) -> None:
        """A delete waits for a job another hand cancelled to end, then deletes it."""
        with FakeVertex(queued_s=0.1, pending_s=0.1, run_s=60, cancel_s=2.0) as slow:
            backend = VertexBackend(PROJECT, REGION, api_endpoint=slow.address)
            gone = submitted(slow, "gone", "train")
            backend.cancel(gone)
            listing = orphans.find_orphans(backend, orphans.Known(), {STACK_LABEL: "gone"}, None)
            [orphan] = listing.orphans
            assert orphan.status.state == "CANCELLING"
            outcomes = orphans.act(backend, listing.orphans, orphans.DELETE)
            assert outcomes == [orphans.Outcome(gone, "deleted")]
            assert backend.get(gone) is None

    def test_a_job_without_the_identity_label_is_refused_whatever_is_passed(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """act never cancels nor deletes a job this project did not submit."""
        by_hand = job_made_outside(fake.address, display_name="by-hand", image=IMAGE)
        status = backend.get(by_hand)
        assert status is not None
        stray = orphans.Orphan(status, 0.0, orphans.Cost(None, 0.0))
        [outcome] = orphans.act(backend, [stray], orphans.DELETE)
        assert outcome.done == "" and IDENTITY_LABEL in outcome.error
        assert backend.get(by_hand) is not None
        assert [c.method for c in fake.calls if c.method.startswith(("Cancel", "Delete"))] == []


class TestPipelineOrphans:
    def test_a_removed_stacks_pipeline_is_an_orphan_a_recorded_one_is_not(
        self, fake: FakeVertex, backend: VertexBackend
    ) -> None:
        """A labelled training pipeline no state records is listed (its backing job is
        not); one a state records is not."""
        from vertex_training.api.pipelines import pipeline_body

        def pipeline(stack: str) -> str:
            labels = {IDENTITY_LABEL: f"{stack}-key", STACK_LABEL: stack, RESOURCE_LABEL: "train"}
            job = {
                "displayName": "train",
                "jobSpec": {
                    "workerPoolSpecs": [
                        {
                            "machineSpec": {"machineType": "n1-standard-4"},
                            "replicaCount": "1",
                            "containerSpec": {"imageUri": IMAGE},
                        }
                    ],
                    "baseOutputDirectory": {"outputUriPrefix": f"gs://b/{stack}"},
                },
                "labels": labels,
            }
            upload = {"modelToUpload": {"displayName": "m", "containerSpec": {"imageUri": IMAGE}}}
            return backend.submit(pipeline_body(job, upload)).name

        live, gone = pipeline("live"), pipeline("gone")
        assert "/trainingPipelines/" in gone
        known = orphans.known_jobs({"stack live": export_of("live", live)["deployment"]})
        listing = orphans.find_orphans(backend, known, {}, None)
        assert [o.name for o in listing.orphans] == [gone]
