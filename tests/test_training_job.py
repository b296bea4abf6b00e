"""The TrainingJob and JobWaiter providers, called as the engine calls them, against the
fake Vertex JobService on loopback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import grpc
import pulumi
import pytest
from pulumi.dynamic.dynamic import serialize_provider

from tests.clients import configured, reaching, waited, waiter_for
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.backends.base import location_of
from vertex_training.backends.vertex import VertexBackend
from vertex_training.errors import JobEndedError, PermanentError
from vertex_training.program.exports import job_view, latest_state
from vertex_training.resources.changes import JobChange, KeyChange
from vertex_training.resources.job_arguments import recorded_view
from vertex_training.resources.records import JobRecord
from vertex_training.resources.submission import Owner, identity_label, labelled_request
from vertex_training.resources.training_job import TrainingJobProvider
from vertex_training.resources.waiter import (
    JobWaiterProvider,
    fail_on_problems,
    wait_entries,
    wait_for,
)
from vertex_training.testing.fake_vertex import FakeVertex

REPO = Path(__file__).resolve().parent.parent
IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"


def registered(fake: FakeVertex | None, config: dict[str, Any], name: str = "train") -> dict:
    """The properties __main__.py registers for a job, before check."""
    address = fake.address if fake else "127.0.0.1:1"
    stack = {
        "stack": "test",
        "project": "test-project",
        "region": "us-central1",
        "backend": "vertex",
        "api_endpoint": address,
    }
    return {"job": {"name": name, "config": config, "stack": stack}}


def of_project(registered: dict, project: str, organization: str = "organization") -> dict:
    """The properties of a job registered by a program of the Pulumi ``project`` (what
    every program gives since the identity named it: ``job_arguments.owner_settings``)."""
    job = registered["job"]
    stack = {**job["stack"], "pulumi_project": project, "pulumi_organization": organization}
    return {"job": {**job, "stack": stack}}


def record(state: dict[str, Any]) -> JobRecord:
    """The record of a job's state (``checked``'s), as either host hands it to ``diff_job``."""
    return JobRecord.of_state(state)


def checked(
    fake: FakeVertex | None, config: dict[str, Any], name: str = "train", project: str = ""
) -> dict:
    props = registered(fake, config, name)
    props = of_project(props, project) if project else props
    result = configured(TrainingJobProvider(), fake).check({}, props)
    assert not result.failures, [f.reason for f in result.failures]
    return result.inputs


def viewed(
    fake: FakeVertex | None, config: dict[str, Any], name: str = "train", project: str = ""
) -> dict:
    """The checked inputs with what the provider's operations derive from them."""
    return recorded_view(checked(fake, config, name, project))


@pytest.fixture
def fake() -> Any:
    with FakeVertex(queued_s=0.05, pending_s=0.05, run_s=0.3) as server:
        yield server


def wait_until_succeeded(created: Any, fake: FakeVertex) -> None:
    """Wait, as the JobWaiter does, for a job a create returned."""
    entry = {
        "resource_name": created.id,
        "location": location_of(created.id),
        "wait": {"until": "succeeded", "timeout_s": 30},
    }
    wait_for({"train": entry}, settings=reaching(fake))


def creates(fake: FakeVertex) -> int:
    return sum(1 for call in fake.calls if call.method == "CreateCustomJob")


class TestCheck:
    """check: stack config -> canonical inputs, or failures naming the key."""

    def test_a_valid_job_is_recorded_as_written(self) -> None:
        """The checked inputs hold the user's keys as written, the stack settings and the
        schema, and nothing derived from them."""
        config = {"image": IMAGE, "args": ["--x"], "wait": "succeeded"}
        inputs = checked(None, config)
        stack = registered(None, {})["job"]["stack"]
        assert inputs == {"name": "train", "schema": 4, "stack": stack, "config": config}

    def test_the_view_gives_the_request_and_settings(self) -> None:
        """What the operations derive: the API request, the wait policy, the location."""
        inputs = viewed(None, {"image": IMAGE, "args": ["--x"], "wait": "succeeded"})
        assert inputs["args"] == ["--x"]
        pool = inputs["request"]["jobSpec"]["workerPoolSpecs"][0]
        assert pool["containerSpec"] == {"imageUri": IMAGE, "args": ["--x"]}
        assert inputs["wait"] == {"until": "succeeded", "timeout_s": 86400}
        assert inputs["location"] == {
            "backend": "vertex",
            "project": "test-project",
            "region": "us-central1",
        }

    def test_a_mistake_is_a_failure_naming_key_value_and_fix(self) -> None:
        """A wrong accelerator count is reported against its stack config key."""
        config = {"image": IMAGE, "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 3}}
        result = TrainingJobProvider().check({}, registered(None, config))
        [failure] = result.failures
        assert failure.property == "accelerator"
        assert "vertex-training:jobs.train.accelerator.count" in failure.reason
        assert "3" in failure.reason

    def test_an_unchanged_job_is_not_parsed_again(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A job whose config and stack settings are those it was last checked with passed
        then, and is not submitted again: check gives its inputs back without parsing it
        (a no-change preview parses no job); a changed job is parsed."""
        before = checked(None, {"image": IMAGE})

        def parse_job(*_args: Any) -> None:
            raise AssertionError("parsed")

        monkeypatch.setattr("vertex_training.stackconfig.parse_job", parse_job)
        same = TrainingJobProvider().check(before, registered(None, {"image": IMAGE}))
        assert (same.inputs, same.failures) == (before, [])
        with pytest.raises(AssertionError, match="parsed"):
            TrainingJobProvider().check(before, registered(None, {"image": IMAGE, "args": ["x"]}))

    def test_an_unchanged_job_is_not_diffed_by_parsing(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """diff of a job recorded as the program now sends it is no change without a
        parse; a recorded failure (a `retry` may have an attempt left) is parsed."""
        inputs = checked(None, {"image": IMAGE})

        def parse_job(*_args: Any) -> None:
            raise AssertionError("parsed")

        monkeypatch.setattr("vertex_training.stackconfig.parse_job", parse_job)
        assert not TrainingJobProvider().diff("id", {**inputs, "state": "RUNNING"}, inputs).changes
        with pytest.raises(AssertionError, match="parsed"):
            TrainingJobProvider().diff("id", {**inputs, "state": "FAILED"}, inputs)

    def test_check_and_diff_load_no_google_client(self) -> None:
        """A no-change preview (check, then diff) imports no Google client library."""
        props = registered(None, {"image": IMAGE})
        script = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
from vertex_training.resources.training_job import TrainingJobProvider
provider = TrainingJobProvider()
inputs = provider.check({{}}, {props!r}).inputs
assert not provider.diff("id", inputs, inputs).changes
loaded = [m for m in sys.modules if m.startswith(("google.cloud.aiplatform", "google.api_core"))]
print(loaded[:5])
sys.exit(1 if loaded else 0)
"""
        result = subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=False
        )
        assert result.returncode == 0, result.stdout + result.stderr


class TestDiff:
    """diff: replace when what runs changes, update for provider-side settings."""

    def test_no_change_is_no_diff(self) -> None:
        """The same config twice is no change."""
        inputs = checked(None, {"image": IMAGE})
        assert (
            TrainingJobProvider().diff("id", inputs, checked(None, {"image": IMAGE})).changes
            is False
        )

    def test_a_change_to_what_runs_replaces_and_names_the_keys(self) -> None:
        """Changing args replaces the job, naming `args` and the API request."""
        old = checked(None, {"image": IMAGE})
        new = checked(None, {"image": IMAGE, "args": ["--epochs", "2"]})
        diff = TrainingJobProvider().diff("id", old, new)
        assert diff.changes is True
        assert diff.replaces == ["args", "request"]

    def test_a_wait_change_is_an_update(self) -> None:
        """Changing the wait policy updates in place."""
        old = checked(None, {"image": IMAGE})
        new = checked(None, {"image": IMAGE, "wait": {"until": "running", "timeout": "1h"}})
        diff = TrainingJobProvider().diff("id", old, new)
        assert diff.changes is True and diff.replaces == []

    def test_a_new_rerun_value_replaces(self) -> None:
        """`rerun` changes the request's labels, so the job is submitted again."""
        old = checked(None, {"image": IMAGE, "rerun": 1})
        new = checked(None, {"image": IMAGE, "rerun": 2})
        diff = TrainingJobProvider().diff("id", old, new)
        assert diff.replaces == ["request", "rerun"]
        assert recorded_view(new)["request"]["labels"] == {"vertex_training_rerun": "2"}

    def test_writing_out_a_default_does_not_resubmit(self) -> None:
        """Spelling out the default machine changes no request, so it is not a replace."""
        old = checked(None, {"image": IMAGE})
        new = checked(None, {"image": IMAGE, "machine": "n1-standard-4"})
        diff = TrainingJobProvider().diff("id", old, new)
        assert diff.replaces == []

    def test_the_diffs_record_marks_which_config_keys_replace(self) -> None:
        """``diff_job``, the one diff both hosts read: each changed config key with its
        kind, the replacing ones apart from the provider-side ones beside them."""
        old = checked(None, {"image": IMAGE, "args": ["--epochs", "1"]})
        new = checked(None, {"image": IMAGE, "args": ["--epochs", "2"], "wait": "running"})
        change = TrainingJobProvider().diff_job(record(old), record(new))
        assert change.replaces == ("args", "request") and change.cause == ""
        assert change.keys == (
            KeyChange("args", "update", replaces=True),
            KeyChange("wait", "add", replaces=False),
        )
        updated = TrainingJobProvider().diff_job(
            record(old), record(checked(None, {"image": IMAGE}))
        )
        assert updated.keys == (KeyChange("args", "delete", replaces=True),)
        assert TrainingJobProvider().diff_job(record(old), record(old)) == JobChange()

    def test_a_replacement_no_key_forces_says_why(self) -> None:
        """A new region (a stack setting: no key of the job's config) replaces the job;
        its record has no replacing key, and says so (``cause``)."""
        old = checked(None, {"image": IMAGE})
        moved = {**old, "stack": {**old["stack"], "region": "europe-west4"}}
        change = TrainingJobProvider().diff_job(record(old), record(moved))
        assert change.replacing and change.keys == () and change.cause == "settings"

    def test_outputs_in_the_old_state_are_not_changes(self) -> None:
        """The old state's outputs (state, times, URLs) never count as a change."""
        old = {**checked(None, {"image": IMAGE}), "state": "SUCCEEDED", "job_id": "1"}
        diff = TrainingJobProvider().diff("id", old, checked(None, {"image": IMAGE}))
        assert diff.changes is False


class TestOwnership:
    """A job belongs to one stack of one Pulumi project: creates of other projects with
    the same stack and resource names never take it."""

    def test_two_projects_get_a_job_each_and_one_delete_leaves_the_other(
        self, fake: FakeVertex
    ) -> None:
        """team-a and team-b, stack ``test``, resource ``train``, the same request: two
        jobs, each labelled with its project; team-b's delete leaves team-a's job."""
        a = configured(TrainingJobProvider(), fake).create(
            checked(fake, {"image": IMAGE}, project="team-a")
        )
        b = configured(TrainingJobProvider(), fake).create(
            checked(fake, {"image": IMAGE}, project="team-b")
        )
        assert a.id != b.id
        assert creates(fake) == 2
        assert fake.jobs[a.id].labels["pulumi_project"] == "team-a"
        assert fake.jobs[b.id].labels["pulumi_project"] == "team-b"
        assert fake.jobs[a.id].labels[IDENTITY_LABEL] != fake.jobs[b.id].labels[IDENTITY_LABEL]
        configured(TrainingJobProvider(), fake).delete(b.id, b.outs)
        assert list(fake.jobs) == [a.id]

    def test_the_organization_is_part_of_the_identity_where_the_engine_names_one(self) -> None:
        """Two organizations' projects of one name differ; the SDK's placeholder for no
        organization is no organization."""
        request = {"displayName": "t", "jobSpec": {}}
        labels = {
            org: identity_label(Owner("dev", "ml", org), "train", request)
            for org in ("acme", "globex", "")
        }
        assert len(set(labels.values())) == 3
        placeholder = Owner.of(
            {"stack": "dev", "pulumi_project": "ml", "pulumi_organization": "organization"}
        )
        assert identity_label(placeholder, "train", request) == labels[""]

    def test_a_job_with_this_identity_but_another_projects_labels_is_not_taken(
        self, fake: FakeVertex
    ) -> None:
        """The identity label alone adopts nothing: the project, stack and resource labels
        must be this resource's too."""
        inputs = viewed(fake, {"image": IMAGE}, project="team-a")
        body = labelled_request(inputs["request"], Owner("test", "team-a"), "train")
        backend = VertexBackend("test-project", "us-central1", api_endpoint=fake.address)
        backend.submit({**body, "labels": {**body["labels"], "pulumi_project": "team-b"}})
        result = configured(TrainingJobProvider(), fake).create(inputs)
        assert creates(fake) == 2
        assert fake.jobs[result.id].labels["pulumi_project"] == "team-a"

    def test_a_job_an_earlier_release_submitted_is_found_by_its_label(
        self, fake: FakeVertex
    ) -> None:
        """A create interrupted under a release up to 0.3.0 (its job labelled by stack,
        resource and request, no project label) and rerun under this one adopts that job,
        once; a job of that release under another resource name is not taken."""
        inputs = viewed(fake, {"image": IMAGE}, project="team-a")
        backend = VertexBackend("test-project", "us-central1", api_endpoint=fake.address)
        earlier = backend.submit(labelled_request(inputs["request"], Owner("test"), "train"))
        backend.submit(labelled_request(inputs["request"], Owner("test"), "other"))
        assert "pulumi_project" not in fake.jobs[earlier.name].labels
        result = configured(TrainingJobProvider(), fake).create(inputs)
        assert result.id == earlier.name
        assert creates(fake) == 2

    def test_a_job_recorded_before_the_project_was_named_shows_no_diff(self) -> None:
        """The same job, its stack settings recorded without the Pulumi project by a
        release up to 0.3.0 and given with it now: no change."""
        before = {**checked(None, {"image": IMAGE}), "state": "SUCCEEDED", "job_id": "1"}
        now = checked(None, {"image": IMAGE}, project="team-a")
        assert before["stack"] != now["stack"]
        diff = TrainingJobProvider().diff("id", before, now)
        assert (diff.changes, diff.replaces) == (False, [])


class TestCreate:
    """create: submit once, adopt what an interrupted run submitted."""

    def test_submits_with_identity_labels(self, fake: FakeVertex) -> None:
        """The job is created with the provider's labels; the ID is the resource name."""
        inputs = checked(fake, {"image": IMAGE, "labels": {"team": "vision"}})
        result = configured(TrainingJobProvider(), fake).create(inputs)
        [job] = fake.jobs.values()
        assert result.id == job.name
        assert job.labels["team"] == "vision"
        assert job.labels["pulumi_stack"] == "test"
        assert job.labels["pulumi_resource"] == "train"
        assert len(job.labels[IDENTITY_LABEL]) == 40
        assert result.outs["state"] == "QUEUED"
        # Nothing the ID or the config derive is recorded again.
        derived = {"resource_name", "job_id", "console_url", "logs_url", "request", "location"}
        assert not derived & set(result.outs)
        # The outputs the program reads are recorded even empty; the others only when set.
        assert result.outs["error"] == ""
        reported = {"state", "error", "create_time"}
        assert set(result.outs) == {*inputs, *reported}

    def test_adopts_the_job_an_interrupted_run_submitted(self, fake: FakeVertex) -> None:
        """A job already carrying this identity is taken over, not submitted again."""
        inputs = viewed(fake, {"image": IMAGE})
        earlier = VertexBackend("test-project", "us-central1", api_endpoint=fake.address).submit(
            labelled_request(inputs["request"], Owner("test"), "train")
        )
        result = configured(TrainingJobProvider(), fake).create(inputs)
        assert result.id == earlier.name
        assert creates(fake) == 1

    def test_replacing_a_job_with_itself_keeps_it(self, fake: FakeVertex) -> None:
        """A forced replace of an unchanged job takes the job over; the delete keeps it.
        (Each update has a provider host of its own: a provider configured anew.)"""
        old = configured(TrainingJobProvider(), fake).create(checked(fake, {"image": IMAGE}))
        provider = configured(TrainingJobProvider(), fake)
        new = provider.create(checked(fake, {"image": IMAGE}))
        provider.delete(old.id, old.outs)
        assert new.id == old.id
        assert list(fake.jobs) == [old.id]

    def test_an_update_lists_the_stack_once(self, fake: FakeVertex) -> None:
        """The creates of one update look their labels up in one listing of the stack's
        jobs (a list call per kind of job), and still adopt a job an interrupted run
        submitted before the update began."""
        earlier_inputs = viewed(fake, {"image": IMAGE}, name="b")
        earlier = VertexBackend("test-project", "us-central1", api_endpoint=fake.address).submit(
            labelled_request(earlier_inputs["request"], Owner("test"), "b")
        )
        provider = configured(TrainingJobProvider(), fake)
        before = len(fake.calls)
        results = {
            name: provider.create(checked(fake, {"image": IMAGE}, name=name))
            for name in ("a", "b", "c", "d")
        }
        methods = [call.method for call in fake.calls[before:]]
        assert methods.count("ListCustomJobs") == 1
        assert methods.count("ListHyperparameterTuningJobs") == 1
        assert methods.count("CreateCustomJob") == 3
        assert results["b"].id == earlier.name
        assert len(fake.jobs) == 4

    def test_a_create_that_timed_out_after_acting_is_adopted(self, fake: FakeVertex) -> None:
        """DEADLINE_EXCEEDED after the server created the job leaves exactly one job."""
        fake.fail_next("CreateCustomJob", grpc.StatusCode.DEADLINE_EXCEEDED, take_effect=True)
        result = configured(TrainingJobProvider(), fake).create(checked(fake, {"image": IMAGE}))
        assert list(fake.jobs) == [result.id]

    def test_a_refusal_surfaces_the_api_message(self, fake: FakeVertex) -> None:
        """PERMISSION_DENIED fails the create at once with the API's message."""
        fake.fail_next(
            "CreateCustomJob",
            grpc.StatusCode.PERMISSION_DENIED,
            message="Permission 'aiplatform.customJobs.create' denied",
        )
        with pytest.raises(PermanentError, match=r"aiplatform\.customJobs\.create"):
            configured(TrainingJobProvider(), fake).create(checked(fake, {"image": IMAGE}))
        assert fake.jobs == {}

    def test_adopt_takes_over_a_named_job(self, fake: FakeVertex) -> None:
        """`adopt` makes the resource track an existing job without submitting."""
        backend = VertexBackend("test-project", "us-central1", api_endpoint=fake.address)
        existing = backend.submit(viewed(fake, {"image": IMAGE})["request"])
        result = configured(TrainingJobProvider(), fake).create(
            checked(fake, {"image": IMAGE, "adopt": existing.name})
        )
        assert result.id == existing.name
        assert creates(fake) == 1


class TestReadAndDelete:
    """read drops a job deleted outside Pulumi; delete cancels, then deletes."""

    def test_read_of_a_deleted_job_has_no_id(self, fake: FakeVertex) -> None:
        """Refresh of a job deleted outside Pulumi returns an empty ID."""
        provider = configured(TrainingJobProvider(), fake)
        created = provider.create(checked(fake, {"image": IMAGE}))
        wait_until_succeeded(created, fake)
        VertexBackend("test-project", "us-central1", api_endpoint=fake.address).delete(created.id)
        assert provider.read(created.id, created.outs).id == ""

    def test_read_brings_back_the_state(self, fake: FakeVertex) -> None:
        """Refresh reports the job's current state."""
        provider = configured(TrainingJobProvider(), fake)
        created = provider.create(checked(fake, {"image": IMAGE}))
        wait_until_succeeded(created, fake)
        read = provider.read(created.id, created.outs)
        assert read.id == created.id and read.outs["state"] == "SUCCEEDED"
        assert read.outs["end_time"] and read.outs["start_time"]
        assert "failure" not in read.outs and "attempts" not in read.outs

    def test_delete_cancels_a_running_job_first(self) -> None:
        """A running job is cancelled, waited for, then deleted."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=float("inf")) as fake:
            provider = configured(TrainingJobProvider(), fake)
            created = provider.create(checked(fake, {"image": IMAGE}))
            provider.delete(created.id, created.outs)
            methods = [call.method for call in fake.calls]
            assert methods.index("CancelCustomJob") < methods.index("DeleteCustomJob")
            assert fake.jobs == {}

    def test_delete_of_a_missing_job_is_done(self, fake: FakeVertex) -> None:
        """NOT_FOUND on delete counts as deleted."""
        inputs = checked(fake, {"image": IMAGE})
        configured(TrainingJobProvider(), fake).delete(
            "projects/test-project/locations/us-central1/customJobs/404", inputs
        )


class TestWaiter:
    """JobWaiter: all jobs waited for in one call; failures name the job and its error."""

    def submit(
        self, fake: FakeVertex, name: str, until: str = "succeeded", timeout_s: float = 60
    ) -> dict[str, Any]:
        created = configured(TrainingJobProvider(), fake).create(
            checked(fake, {"image": IMAGE, "display_name": name}, name)
        )
        return {
            "resource_name": created.id,
            "location": location_of(created.id),
            "wait": {"until": until, "timeout_s": timeout_s},
        }

    def test_waits_for_every_job(self, fake: FakeVertex) -> None:
        """Twelve jobs of different lengths are all waited for to SUCCEEDED."""
        for i in range(12):
            fake.script(f"job-{i}", run_s=0.1 * i)
        entries = {f"job-{i}": self.submit(fake, f"job-{i}") for i in range(12)}
        assert wait_for(entries, settings=reaching(fake)) == dict.fromkeys(entries, "SUCCEEDED")

    def test_a_failed_job_fails_with_its_error_and_logs(self, fake: FakeVertex) -> None:
        """A FAILED job is reported with its message and logs link; the others still pass."""
        fake.script("bad", outcome="FAILED", error_message="replica workerpool0-0 exited 3")
        entries = {"bad": self.submit(fake, "bad"), "good": self.submit(fake, "good")}
        with pytest.raises(JobEndedError) as caught:
            wait_for(entries, settings=reaching(fake))
        message = str(caught.value)
        assert "job bad" in message and "replica workerpool0-0 exited 3" in message
        assert "console.cloud.google.com/logs" in message
        assert "job good" not in message

    def test_a_timeout_says_the_job_keeps_running(self) -> None:
        """Waiting past the timeout fails, saying the job runs on and stays in the stack."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=float("inf")) as fake:
            entries = {"slow": self.submit(fake, "slow", timeout_s=0.5)}
            with pytest.raises(JobEndedError, match=r"still RUNNING.*keeps running"):
                wait_for(entries, settings=reaching(fake))

    def test_running_policy_returns_once_running(self) -> None:
        """`wait: running` returns while the job runs."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=float("inf")) as fake:
            entries = {"long": self.submit(fake, "long", until="running")}
            assert wait_for(entries, settings=reaching(fake)) == {"long": "RUNNING"}

    def test_submitted_policy_does_not_poll(self, fake: FakeVertex) -> None:
        """`wait: submitted` jobs are not polled at all."""
        entries = {"quick": self.submit(fake, "quick", until="submitted")}
        before = len(fake.calls)
        assert wait_for(entries, settings=reaching(fake)) == {}
        assert len(fake.calls) == before

    def test_update_waits_only_for_new_or_changed_jobs(self, fake: FakeVertex) -> None:
        """An update polls the jobs whose entries changed, keeping the others' states; it
        reads each job's wait policy and location from the stack config."""
        old_entry = self.submit(fake, "old")
        new_entry = self.submit(fake, "new")
        jobs = {name: {"image": IMAGE, "display_name": name} for name in ("old", "new")}
        waiter = waiter_for(
            fake, {name: {**job, "wait": "succeeded"} for name, job in jobs.items()}
        )
        old = waited(old_entry["resource_name"])
        olds = {"jobs": {"old": old}, "states": {"old": "SUCCEEDED"}}
        stack = registered(fake, {})["job"]["stack"]
        news = {"jobs": {"old": old, "new": waited(new_entry["resource_name"])}, "stack": stack}
        before = len(fake.calls)
        result = waiter.update("jobs", olds, news)
        assert result.outs["states"] == {"old": "SUCCEEDED", "new": "SUCCEEDED"}
        polled = {call.request.name for call in fake.calls[before:]}
        assert polled == {new_entry["resource_name"]}

    def test_a_failed_wait_is_recorded_then_waited_for_again(self, fake: FakeVertex) -> None:
        """A job that fails the wait does not fail the waiter's create: the state it was
        last seen in and why it failed (``problems``) are recorded, and the program fails
        the update from them (``fail_on_problems``). The next `pulumi up` sees a change
        and waits for that job again, and only that one."""
        fake.script("bad", outcome="FAILED", error_message="replica workerpool0-0 exited 3")
        entries = {name: self.submit(fake, name) for name in ("bad", "good")}
        configs = {name: {"image": IMAGE, "display_name": name} for name in entries}
        waiter = waiter_for(
            fake, {name: {**config, "wait": "succeeded"} for name, config in configs.items()}
        )
        stack = registered(fake, {})["job"]["stack"]
        jobs = {name: waited(entry["resource_name"]) for name, entry in entries.items()}
        news = {"jobs": jobs, "stack": stack}
        outs = waiter.create(news).outs
        assert outs["states"] == {"bad": "FAILED", "good": "SUCCEEDED"}
        assert list(outs["problems"]) == ["bad"]
        assert "ended FAILED: replica workerpool0-0 exited 3" in outs["problems"]["bad"]
        with pytest.raises(pulumi.RunError, match=r"^job bad \(projects/"):
            fail_on_problems(outs["problems"])
        fail_on_problems({})
        fail_on_problems(None)

        assert waiter.diff("jobs", outs, news).changes
        assert not waiter.diff("jobs", {**outs, "problems": {}}, news).changes
        before = len(fake.calls)
        again = waiter.update("jobs", outs, news).outs
        assert {call.request.name for call in fake.calls[before:]} == {
            entries["bad"]["resource_name"]
        }
        assert list(again["problems"]) == ["bad"]
        assert again["states"] == outs["states"]


class TestWaitEntries:
    """What the waiter reads of a job from the stack config is what its check derived."""

    def test_a_job_with_retry_reads_as_its_check_derived_it(self, fake: FakeVertex) -> None:
        """Wait policy, location, request, retry and stack name: the same request, so the
        attempts the waiter looks up carry the labels the resource's create gave them."""
        config = {
            "image": IMAGE,
            "env": {"EPOCHS": 16},
            "wait": {"until": "succeeded", "timeout": "2h", "start_timeout": "10m"},
            "retry": {"when": ["capacity"], "attempts": 2, "regions": ["us-east1"]},
        }
        inputs = viewed(fake, config)
        keys = {
            "gcp:project": "test-project",
            "gcp:region": "us-central1",
            "vertex-training:jobs": {"train": config},
        }
        stack = registered(fake, {})["job"]["stack"]
        entries = wait_entries({"train": waited("projects/x")}, stack, keys, Path.cwd())
        entry = entries["train"]
        assert entry["resource_name"] == "projects/x"
        for key in ("wait", "location", "request", "retry", "stack_name", "name"):
            assert entry[key] == inputs[key], key
        assert labelled_request(entry["request"], Owner("test"), "train", 2) == labelled_request(
            inputs["request"], Owner("test"), "train", 2
        )


class TestLatestState:
    """The state exported for a job: the newer of the resource's and the waiter's."""

    @pytest.mark.parametrize(
        ("job_state", "waited", "expected"),
        [
            ("QUEUED", {"a": "SUCCEEDED"}, "SUCCEEDED"),
            ("SUCCEEDED", {"a": "RUNNING"}, "SUCCEEDED"),
            ("RUNNING", None, "RUNNING"),
            ("QUEUED", {"b": "RUNNING"}, "QUEUED"),
        ],
    )
    def test_latest_state(self, job_state: str, waited: dict | None, expected: str) -> None:
        """A terminal state wins; otherwise what the waiter saw last."""
        assert latest_state(job_state, waited, "a") == expected


class TestJobView:
    """A job's stack outputs, from the outputs the program reads of its resource and what
    the waiter saw."""

    RECORDED: ClassVar[dict[str, Any]] = {
        "resource_name": "projects/p/locations/us-central1/customJobs/42",
        "state": "QUEUED",
        "error": "",
    }
    CONSOLE = "https://console.cloud.google.com/vertex-ai/locations/us-central1/training/42"
    LOGS = (
        "https://console.cloud.google.com/logs/query;query=resource.type%3D%22ml_job%22"
        "%0Aresource.labels.job_id%3D%2242%22?project=p"
    )

    def test_derived_keys_and_the_waiters_newer_state(self) -> None:
        """The job ID, its pages, output and model directories are derived (the output
        directory is the one its request names); the waiter's state is newer."""
        seen = {"states": {"a": "SUCCEEDED"}}
        view = job_view("a", self.RECORDED, seen, "/nowhere", "gs://bucket/out")
        assert view == {
            "resource_name": "projects/p/locations/us-central1/customJobs/42",
            "job_id": "42",
            "console_url": f"{self.CONSOLE}/cpu?project=p",
            "logs_url": self.LOGS,
            "attempts": [],
            "state": "SUCCEEDED",
            "error": "",
            "waiting_reason": "",
            "output_directory": "gs://bucket/out",
            "model_directory": "gs://bucket/out/model",
        }

    def test_a_failed_wait_gives_the_error_and_the_reason(self) -> None:
        """A job that failed the wait: the state the waiter last saw, why it failed the
        wait as its error, and why it had not started; its own error comes first."""
        seen = {
            "states": {"a": "QUEUED"},
            "reasons": {"a": "QUEUED 3m: waiting for quota custom_model_training_cpus (4)"},
            "problems": {"a": "job a (...) is still QUEUED after 180s, ..."},
        }
        view = job_view("a", self.RECORDED, seen, "/nowhere")
        assert view["state"] == "QUEUED"
        assert view["error"] == seen["problems"]["a"]
        assert view["waiting_reason"] == seen["reasons"]["a"]
        own = job_view("a", {**self.RECORDED, "error": "replica exited 1"}, seen, "/nowhere")
        assert own["error"] == "replica exited 1"

    def test_the_last_attempt_names_the_job(self) -> None:
        """With retry, the job the outputs name is the waiter's last attempt."""
        second = {
            "attempt": 2,
            "resource_name": "projects/p/locations/us-east1/customJobs/43",
            "job_id": "43",
            "console_url": "https://console/43",
            "logs_url": "https://logs/43",
        }
        recorded = {**self.RECORDED, "attempts": [{"attempt": 1, "job_id": "42"}]}
        view = job_view("a", recorded, {"attempts": {"a": [{"attempt": 1}, second]}}, "/x")
        assert view["attempts"][-1] == second
        assert (view["job_id"], view["console_url"]) == ("43", "https://console/43")

    def test_an_attempt_the_waiter_saw_end_has_its_state(self) -> None:
        """A job with retry that ended on its first attempt: the waiter lists no attempts
        (it does once one fails), so the attempt the resource recorded at submission
        (QUEUED) takes the state the waiter saw; an attempt that ended keeps its own."""
        first = {"attempt": 1, "state": "QUEUED", "resource_name": self.RECORDED["resource_name"]}
        recorded = {**self.RECORDED, "attempts": [first]}
        view = job_view("a", recorded, {"states": {"a": "SUCCEEDED"}}, "/x")
        assert [a["state"] for a in view["attempts"]] == ["SUCCEEDED"]
        assert view["state"] == "SUCCEEDED"
        ended = {**recorded, "attempts": [{**first, "state": "FAILED"}]}
        kept = job_view("a", ended, {"states": {"a": "SUCCEEDED"}}, "/x")
        assert [a["state"] for a in kept["attempts"]] == ["FAILED"]
        assert job_view("a", recorded, {}, "/x")["attempts"] == [first]

    def test_a_local_jobs_pages_are_its_files(self, tmp_path: Path) -> None:
        """A local job's pages and output directory are those the local backend gives."""
        from vertex_training.backends.local import LocalBackend

        name = "local/customJobs/7"
        recorded = {"resource_name": name, "state": "RUNNING"}
        view = job_view("a", recorded, {}, str(tmp_path))
        backend = LocalBackend(str(tmp_path), base_dir=str(tmp_path))
        assert view["console_url"] == backend.console_url(name)
        assert view["logs_url"] == backend.logs_url(name)
        assert view["console_url"] == (tmp_path / "7").resolve().as_uri()
        # Named by none: the local backend's own directory for the job's outputs.
        assert view["output_directory"] == str(tmp_path.resolve() / "outputs" / "7")
        assert view["model_directory"] == f"{view['output_directory']}/model"
        named = job_view("a", recorded, {}, str(tmp_path), "/data/out")
        assert named["output_directory"] == "/data/out"


class TestResourceClasses:
    """What the SDK does again for every job it registers."""

    def test_no_annotations_at_run_time(self) -> None:
        """The SDK reads a resource class's own annotations (``get_type_hints``) for every
        instance: the job classes keep theirs for type checkers only."""
        import inspect

        from vertex_training.resources.training_job import TrainingJob
        from vertex_training.resources.tuning_job import HyperparameterTuningJob

        for cls in (TrainingJob, HyperparameterTuningJob):
            assert inspect.get_annotations(cls) == {}, cls


class TestSerializedProvider:
    """The provider pickled into the state is small and stable."""

    def test_same_bytes_every_time_and_small(self) -> None:
        """Two serializations are identical (no spurious __provider diffs) and tiny."""
        first = serialize_provider(TrainingJobProvider())
        assert first == serialize_provider(TrainingJobProvider())
        assert len(first) < 200
        assert serialize_provider(JobWaiterProvider()) == serialize_provider(JobWaiterProvider())


RETRY = {"when": ["capacity"], "attempts": 3, "regions": ["us-east1", "europe-west4"]}


class TestRetryAttempts:
    """A job with ``retry``: attempts with their own labels, one alive at a time."""

    def test_attempt_one_keeps_the_label_of_earlier_releases(self) -> None:
        """Attempt 1's identity label is the job's usual one; later attempts differ."""
        request = {"displayName": "x", "jobSpec": {}}
        first = identity_label(Owner("s"), "r", request)
        assert identity_label(Owner("s"), "r", request, 1) == first
        assert (
            len(
                {
                    first,
                    identity_label(Owner("s"), "r", request, 2),
                    identity_label(Owner("s"), "r", request, 3),
                }
            )
            == 3
        )

    def test_no_attempt_is_submitted_while_one_is_alive(self) -> None:
        """A create that finds a live attempt adopts it instead of submitting."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=float("inf")) as fake:
            inputs = checked(fake, {"image": IMAGE, "retry": RETRY})
            provider = configured(TrainingJobProvider(), fake)
            first = provider.create(inputs)
            again = provider.create(inputs)
            assert again.id == first.id
            assert [c.method for c in fake.calls].count("CreateCustomJob") == 1

    def test_after_a_stockout_the_next_attempt_runs_in_the_next_region(self) -> None:
        """A create after attempt 1 failed for capacity submits attempt 2 in us-east1, and
        delete removes both."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=0.2) as fake:
            fake.stockout("us-central1")
            inputs = checked(fake, {"image": IMAGE, "retry": RETRY})
            provider = configured(TrainingJobProvider(), fake)
            first = provider.create(inputs)
            wait_until_done(first.id, fake)
            second = provider.create(inputs)
            assert "/locations/us-east1/" in second.id
            assert [(a["attempt"], a["class"]) for a in second.outs["attempts"]] == [
                (1, "capacity"),
                (2, ""),
            ]
            read = provider.read(first.id, {**first.outs, **inputs})
            assert read.id == second.id
            provider.delete(second.id, second.outs)
            assert fake.jobs == {}

    def test_an_attempt_an_earlier_release_submitted_counts_after_the_upgrade(self) -> None:
        """Attempt 1 submitted and failed for capacity under a release up to 0.3.0 (its
        state without the Pulumi project): under this release, with the project, the job
        goes on with attempt 2 rather than submitting attempt 1 again, and its delete
        removes both."""
        with FakeVertex(queued_s=0.0, pending_s=0.0, run_s=0.2) as fake:
            fake.stockout("us-central1")
            provider = configured(TrainingJobProvider(), fake)
            first = provider.create(checked(fake, {"image": IMAGE, "retry": RETRY}))
            assert "pulumi_project" not in fake.jobs[first.id].labels
            wait_until_done(first.id, fake)
            upgraded = checked(fake, {"image": IMAGE, "retry": RETRY}, project="team-a")
            second = provider.create(upgraded)
            assert "/locations/us-east1/" in second.id
            assert [a["attempt"] for a in second.outs["attempts"]] == [1, 2]
            assert fake.jobs[second.id].labels["pulumi_project"] == "team-a"
            provider.delete(second.id, second.outs)
            assert fake.jobs == {}

    def test_diff_replaces_a_recorded_retryable_failure_with_attempts_left(self) -> None:
        """A recorded capacity failure with attempts left is a replacement caused by retry;
        a user_code failure, or no attempts left, is no change."""
        provider = TrainingJobProvider()
        retry = {"when": ["capacity"], "attempts": 2, "regions": ["us-east1"]}
        news = checked(None, {"image": IMAGE, "retry": retry})
        failed = {**news, "state": "FAILED", "failure": {"class": "capacity"}}
        assert provider.diff("id", failed, news).replaces == ["retry"]
        user = {**failed, "failure": {"class": "user_code"}}
        assert not provider.diff("id", user, news).changes
        spent = {**failed, "attempts": [{"attempt": 1}, {"attempt": 2}]}
        assert not provider.diff("id", spent, news).changes


def wait_until_done(name: str, fake: FakeVertex, timeout_s: float = 10.0) -> None:
    """Poll the fake until job ``name`` ended."""
    import time

    backend = VertexBackend("test-project", "us-central1", api_endpoint=fake.address)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = backend.get(name)
        if status is not None and status.state in ("SUCCEEDED", "FAILED", "CANCELLED"):
            return
        time.sleep(0.05)
    raise AssertionError(f"{name} did not end")
