"""The provider plugin's operations, called in process as the engine calls them, against
the fake JobService: the job resources' own checks on property paths, diffs that name
each changed key, submission with the adoption label, import, and delete; previews,
which show a job's request and estimate (from a snapshot of the fake catalog's invented
prices) and submit nothing; and the TrainingPlatform component under Pulumi's mocks (the
pulumi-gcp plugin cannot be had here, so the component is not run on the engine)."""

from __future__ import annotations

import asyncio
import dataclasses
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pulumi
import pytest
from pulumi.provider.experimental.property_value import Computed, PropertyValue
from pulumi.provider.experimental.provider import (
    CheckRequest,
    ConfigureRequest,
    ConstructRequest,
    CreateRequest,
    DeleteRequest,
    DiffRequest,
    PropertyDiffKind,
    ReadRequest,
    UpdateRequest,
)
from pulumi.runtime.sync_await import _sync_await

from tests.clients import job_made_outside
from tests.prices import PRICES, SOURCE
from vertex_training import stackconfig
from vertex_training.api import states
from vertex_training.api.labels import IDENTITY_LABEL
from vertex_training.catalog import prices
from vertex_training.errors import BackendError
from vertex_training.plugin import schema
from vertex_training.plugin.init_failed import InitFailedError
from vertex_training.plugin.job_shapes import unchanged
from vertex_training.plugin.previews import Replacement, preview_text
from vertex_training.plugin.provider import VertexTrainingProvider
from vertex_training.plugin.values import plain, plain_map, property_value
from vertex_training.plugin.waiter_shapes import waiting_again
from vertex_training.resources.job_arguments import UNKNOWN_TEXT
from vertex_training.review import cost
from vertex_training.review.cost import USD_DECIMALS
from vertex_training.testing.fake_vertex import FakeVertex

TRAINING = "vertex-training:index:TrainingJob"
TUNING = "vertex-training:index:HyperparameterTuningJob"
PLATFORM = "vertex-training:index:TrainingPlatform"
WAITER = "vertex-training:index:JobWaiter"
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
#: A tuning job's study of two trials, in the schema's naming.
STUDY = {
    "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
    "parameters": {"learning_rate": {"type": "double", "min": 0.001, "max": 0.1}},
    "maxTrials": 2,
    "parallelTrials": 2,
}


def urn(type_: str = TRAINING, name: str = "train") -> str:
    return f"urn:pulumi:dev::training::{type_}::{name}"


def values(props: dict[str, Any]) -> dict[str, Any]:
    return {key: property_value(value) for key, value in props.items()}


def job(**keys: Any) -> dict[str, Any]:
    return {"job": {"image": IMAGE, "machine": "e2-standard-4", **keys}}


@pytest.fixture
def fake() -> Iterator[FakeVertex]:
    with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5) as served:
        yield served


def started(fake: FakeVertex, **settings: str) -> VertexTrainingProvider:
    """A plugin as the engine starts it for an update, configured for the fake (and
    with these provider ``settings``)."""
    provider = VertexTrainingProvider("0.0.1")
    config = {
        "apiEndpoint": fake.address,
        "project": "test-project",
        "region": "us-central1",
        **settings,
    }
    asyncio.run(provider.configure(ConfigureRequest({}, values(config), True, True)))
    return provider


@pytest.fixture
def plugin(
    fake: FakeVertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> VertexTrainingProvider:
    monkeypatch.chdir(tmp_path)
    return started(fake)


def check(plugin: VertexTrainingProvider, props: dict[str, Any], type_: str = TRAINING) -> Any:
    return asyncio.run(plugin.check(CheckRequest(urn(type_), {}, values(props), b"")))


@dataclasses.dataclass(frozen=True)
class Made:
    """A resource a create made: its ID, its outputs as the state records them
    (``properties``) and its checked inputs."""

    resource_id: str | None
    properties: dict[str, PropertyValue]
    inputs: dict[str, PropertyValue]

    @property
    def olds(self) -> dict[str, PropertyValue]:
        """Its outputs as the plugin's servicer gives them to a diff, update or delete:
        completed by its recorded inputs (``plugin.__main__.with_old_inputs``)."""
        return {**self.inputs, **self.properties}


def create(
    plugin: VertexTrainingProvider,
    props: dict[str, Any],
    type_: str = TRAINING,
    *,
    preview: bool = False,
) -> Made:
    checked = check(plugin, props, type_)
    assert not checked.failures, [f.reason for f in checked.failures]
    made = asyncio.run(plugin.create(CreateRequest(urn(type_), checked.inputs, 60.0, preview)))
    return Made(made.resource_id, made.properties, checked.inputs)


class TestCheck:
    def test_a_mistake_is_refused_on_its_property_path(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """The job's own check, its key renamed: job.scheduling.maxWaitDuration."""
        result = check(plugin, job(scheduling={"maxWaitDuration": "1h"}))
        [failure] = result.failures
        assert failure.property == "job.scheduling.maxWaitDuration"
        assert failure.reason.startswith("job.scheduling.maxWaitDuration: ")
        assert "FLEX_START" in failure.reason

    def test_a_typed_accelerator_with_a_count_of_0_is_refused_on_its_count(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """A plugin job's {type: T4, count: 0} is refused on job.accelerator.count."""
        result = check(plugin, job(accelerator={"type": "NVIDIA_TESLA_T4", "count": 0}))
        [failure] = result.failures
        assert failure.property == "job.accelerator.count"
        assert "write a count of at least 1" in failure.reason

    def test_a_job_with_model_is_checked_on_its_model_keys(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """A plugin job's model mistakes are refused on their property paths."""
        model = {"id": "9lives", "serving": {"image": "us-docker.pkg.dev/p/r/s:1"}}
        result = check(plugin, job(baseOutputDirectory="gs://b/t", model=model))
        [failure] = result.failures
        assert failure.property == "job.model.id"

    def test_the_provider_defaults_are_recorded(self, plugin: VertexTrainingProvider) -> None:
        """A job that names no project, region or backend records the provider's."""
        inputs = plain_map(check(plugin, job()).inputs)
        assert (inputs["project"], inputs["region"], inputs["backend"]) == (
            "test-project",
            "us-central1",
            "vertex",
        )

    def test_a_missing_project_or_region_is_refused_with_a_programs_advice(self) -> None:
        """No project or region anywhere: the refusal names the resource's property and
        the provider's config key a program sets, never a stack config's gcp: key."""
        provider = VertexTrainingProvider("0.0.1")
        asyncio.run(provider.configure(ConfigureRequest({}, {}, True, True)))
        failures = {f.property: f.reason for f in check(provider, job()).failures}
        assert set(failures) == {"project", "job.region"}
        assert "pulumi config set vertex-training:project" in failures["project"]
        assert "pulumi config set vertex-training:region" in failures["job.region"]
        assert not any("gcp:" in reason for reason in failures.values())

    def test_a_training_job_with_a_study_is_refused(self, plugin: VertexTrainingProvider) -> None:
        """A study makes a tuning job: the TrainingJob says which type to declare."""
        study = {"metrics": [{"id": "a", "goal": "MAXIMIZE"}], "parameters": {}, "max_trials": 1}
        [failure] = check(plugin, job(study=study)).failures
        assert failure.property == "job.study"
        assert failure.reason == (
            "job.study: a TrainingJob runs no study; declare this job as a "
            "HyperparameterTuningJob (docs/tuning.md), or remove study"
        )

    def test_a_package_directory_is_refused_with_the_way_to_upload_it(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """The plugin builds no packages: packagePath is refused, naming packageUris."""
        package = {"packagePath": "trainer", "module": "trainer.task"}
        result = check(plugin, {"job": {"pythonPackage": package}})
        assert [f.property for f in result.failures] == ["job.pythonPackage.packagePath"]
        assert "packageUris" in result.failures[0].reason

    def test_a_provider_setting_it_cannot_use_is_refused(self) -> None:
        """vertex-training:localAccelerators takes gpu or cpu, vertex-training:backend
        vertex or local: refused in the stack config's words (one rule for both)."""
        provider = VertexTrainingProvider("0.0.1")
        given = values({"localAccelerators": "tpu", "backend": "vertx"})
        result = asyncio.run(provider.check_config(CheckRequest("urn", {}, given, b"")))
        assert [(f.property, f.reason) for f in result.failures] == [
            (
                "backend",
                "vertex-training:backend: must be vertex or local. Did you mean vertex? "
                "(got 'vertx')",
            ),
            (
                "localAccelerators",
                "vertex-training:localAccelerators: must be gpu (local jobs use this "
                "machine's GPUs) or cpu (a job with accelerators runs on the CPU when there "
                "is no GPU here) (got 'tpu')",
            ),
        ]


class TestLifecycle:
    def test_create_submits_the_job_with_its_label_and_outputs(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """One job at the fake, labelled for adoption; the outputs name it."""
        created = create(plugin, job(wait="succeeded"))
        [submitted] = fake.jobs.values()
        assert created.resource_id == submitted.name
        assert IDENTITY_LABEL in submitted.labels
        outputs = plain_map(created.properties)
        assert outputs["jobId"] == submitted.name.rsplit("/", 1)[-1]
        assert outputs["waiterEntry"]["until"] == "succeeded"
        assert outputs["state"] == "QUEUED"

    def test_a_rerun_adopts_the_job_instead_of_submitting_it_again(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A create after an interrupted one (its update never recorded the job) finds
        the job by its label, in the next update's plugin."""
        first = create(plugin, job())
        again = create(started(fake), job())
        assert again.resource_id == first.resource_id and len(fake.jobs) == 1

    @pytest.mark.parametrize("retry", [False, True], ids=["plan", "retry"])
    def test_a_secret_stays_secret_in_the_outputs(
        self, plugin: VertexTrainingProvider, retry: bool
    ) -> None:
        """A secret env value keeps the job input and its request secret. The waiter entry
        of a job without retry is its wait plan, which holds no secret, so that a diff
        names the job; one with retry carries the job's keys (the waiter submits its next
        attempts from them), and is secret whole."""
        token = property_value("s3cret", secret=True)
        extra = {"retry": {"when": ["capacity"], "regions": ["us-east1"]}} if retry else {}
        job_value = property_value(job(wait="succeeded", **extra)["job"])
        keys = dict(job_value.value)
        keys["env"] = PropertyValue({"TOKEN": token})
        inputs = {"job": job_value.with_value(keys)}
        checked = asyncio.run(plugin.check(CheckRequest(urn(), {}, inputs, b"")))
        assert not checked.failures
        previewed = asyncio.run(plugin.create(CreateRequest(urn(), checked.inputs, 60.0, True)))
        assert previewed.properties["job"].contains_secret()
        assert previewed.properties["request"].is_secret
        made = asyncio.run(plugin.create(CreateRequest(urn(), checked.inputs, 60.0, False)))
        assert checked.inputs["job"].contains_secret()
        entry = made.properties["waiterEntry"]
        assert entry.is_secret is retry
        plain_entry = plain(entry)
        assert plain_entry["name"] == "train" and plain_entry["until"] == "succeeded"
        assert plain_entry["timeoutS"] == 86400.0
        if retry:
            assert plain_entry["config"]["env"] == {"TOKEN": "s3cret"}
            assert plain_entry["config"]["retry"]["regions"] == ["us-east1"]
            assert "project" in plain_entry["stack"]
        else:
            assert set(plain_entry) == {"name", "resourceName", "until", "timeoutS"}

    def test_diff_names_the_changed_key_and_replaces(self, plugin: VertexTrainingProvider) -> None:
        """A new machine replaces the job; the diff says job.machine."""
        created = create(plugin, job())
        news = check(plugin, job(machine="e2-standard-8")).inputs
        diff = asyncio.run(
            plugin.diff(DiffRequest(urn(), created.resource_id, created.olds, news, []))
        )
        assert diff.changes and diff.replaces == ["job"]
        assert diff.detailed_diff["job.machine"].kind == PropertyDiffKind.UPDATE_REPLACE

    def test_the_same_job_is_no_change_and_wait_updates_in_place(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """No diff for the same inputs; a new wait is an update, not a replacement."""
        created = create(plugin, job())
        same = check(plugin, job()).inputs
        unchanged = asyncio.run(
            plugin.diff(DiffRequest(urn(), created.resource_id, created.olds, same, []))
        )
        assert unchanged.changes is False
        waits = check(plugin, job(wait="running")).inputs
        update = asyncio.run(
            plugin.diff(DiffRequest(urn(), created.resource_id, created.olds, waits, []))
        )
        assert update.changes and update.replaces == []
        assert update.detailed_diff["job.wait"].kind == PropertyDiffKind.ADD

    def test_inputs_as_recorded_are_no_change_and_a_setting_left_out_is_one(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """The diff of a job whose inputs are those recorded answers without reading the
        job (``unchanged``), unless the job last failed (its ``retry`` may resubmit it);
        a setting the program no longer gives is a change, found by the job's diff."""
        account = "trainer@test-project.iam.gserviceaccount.com"
        created = create(plugin, {**job(), "serviceAccount": account})
        assert unchanged(created.olds, created.inputs)
        failed = {**created.olds, "state": property_value("FAILED")}
        assert not unchanged(failed, created.inputs)
        news = check(plugin, job()).inputs
        assert not unchanged(created.olds, news)
        diff = asyncio.run(
            plugin.diff(DiffRequest(urn(), created.resource_id, created.olds, news, []))
        )
        assert diff.changes and "serviceAccount" in diff.diffs

    def test_run_after_beside_a_replacing_key_is_marked_as_updating(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """The provider-side keys are the job provider's: runAfter does not replace."""
        created = create(plugin, job())
        after = ["projects/test-project/locations/us-central1/customJobs/1"]
        news = check(plugin, job(machine="e2-standard-8", runAfter=after)).inputs
        diff = asyncio.run(
            plugin.diff(DiffRequest(urn(), created.resource_id, created.olds, news, []))
        )
        assert diff.detailed_diff["job.machine"].kind == PropertyDiffKind.UPDATE_REPLACE
        assert diff.detailed_diff["job.runAfter"].kind == PropertyDiffKind.ADD

    def test_delete_cancels_and_deletes_the_job(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """Destroying a running job cancels it, then deletes its record."""
        created = create(plugin, job())
        request = DeleteRequest(urn(), created.resource_id, created.olds, 60.0)
        asyncio.run(plugin.delete(request))
        assert fake.jobs == {}
        assert any(c.method == "CancelCustomJob" for c in fake.calls)


class TestImport:
    def test_a_job_made_outside_is_read_into_inputs(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """Read with no inputs gives the job's keys, which check as the same job."""
        outside = job_made_outside(fake.address, display_name="by-hand", image=IMAGE)
        read = asyncio.run(plugin.read(ReadRequest(urn(), outside, {}, {})))
        inputs = plain_map(read.inputs)
        assert inputs["job"] == {
            "image": IMAGE,
            "machine": "e2-standard-4",
            "displayName": "by-hand",
        }
        assert (inputs["project"], inputs["region"]) == ("test-project", "us-central1")
        checked = asyncio.run(plugin.check(CheckRequest(urn(), read.inputs, read.inputs, b"")))
        assert not checked.failures
        diff = asyncio.run(
            plugin.diff(
                DiffRequest(urn(), outside, {**read.inputs, **read.properties}, checked.inputs, [])
            )
        )
        assert diff.changes is False

    def test_a_tuning_job_made_outside_is_read_into_inputs(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A tuning job's study comes back in the schema's spelling, as the same job."""
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1, "scale": "log"}},
            "maxTrials": 2,
            "parallelTrials": 2,
        }
        made = create(plugin, {"job": {"image": IMAGE, "study": study}}, TUNING)
        read = asyncio.run(plugin.read(ReadRequest(urn(TUNING), made.resource_id, {}, {})))
        inputs = plain_map(read.inputs)
        assert inputs["job"]["study"]["maxTrials"] == 2
        assert inputs["job"]["study"]["parameters"]["lr"]["scale"] == "log"
        checked = asyncio.run(
            plugin.check(CheckRequest(urn(TUNING), read.inputs, read.inputs, b""))
        )
        assert not checked.failures, [f.reason for f in checked.failures]
        diff = asyncio.run(
            plugin.diff(
                DiffRequest(
                    urn(TUNING),
                    made.resource_id,
                    {**read.inputs, **read.properties},
                    checked.inputs,
                    [],
                )
            )
        )
        assert diff.changes is False

    def test_a_study_of_the_earlier_spelling_is_the_same_job(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A tuning job recorded by 0.3.0, its study in the stack config's spelling, is
        no change once the program writes it in camelCase; a misspelt key is refused on
        its property path."""
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1}},
            "max_trials": 2,
            "parallel_trials": 2,
        }
        made = create(plugin, {"job": {"image": IMAGE, "study": study}}, TUNING)
        camel = {**study, "maxTrials": 2, "parallelTrials": 2}
        del camel["max_trials"], camel["parallel_trials"]
        news = check(plugin, {"job": {"image": IMAGE, "study": camel}}, TUNING).inputs
        request = DiffRequest(urn(TUNING), made.resource_id, made.olds, news, [])
        assert not asyncio.run(plugin.diff(request)).changes
        refused = check(
            plugin, {"job": {"image": IMAGE, "study": {**camel, "maxTrials": 0}}}, TUNING
        )
        assert [f.property for f in refused.failures] == ["job.study.maxTrials"]

    def test_keys_that_would_make_another_job_are_refused(
        self, plugin: VertexTrainingProvider, fake: FakeVertex, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An import never records keys whose request is not the job the server holds."""
        from vertex_training.api import job_config

        made = create(plugin, job(args=["--lr", "0.1"]))
        reading = job_config.config_of_request

        def forgetful(body: Any, **kwargs: Any) -> dict[str, Any]:
            keys = reading(body, **kwargs)
            keys.pop("args")
            return keys

        monkeypatch.setattr(job_config, "config_of_request", forgetful)
        with pytest.raises(BackendError, match="its jobSpec differ"):
            asyncio.run(plugin.read(ReadRequest(urn(), made.resource_id, {}, {})))

    def test_a_tuning_job_id_is_not_a_training_job(self, plugin: VertexTrainingProvider) -> None:
        """Importing a tuning job as a TrainingJob is refused, naming the right type."""
        name = "projects/test-project/locations/us-central1/hyperparameterTuningJobs/1"
        with pytest.raises(BackendError, match=f"import this one as {TUNING}"):
            asyncio.run(plugin.read(ReadRequest(urn(), name, {}, {})))


class PlatformMocks(pulumi.runtime.Mocks):
    """The engine's answers for the platform's pulumi-gcp resources (its plugin cannot be
    had here): a resource's inputs as its outputs, an account's email, the runner."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
        outputs = dict(args.inputs)
        if args.typ == "gcp:serviceaccount/account:Account":
            outputs["email"] = f"{args.inputs['accountId']}@acme-ml.iam.gserviceaccount.com"
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict[str, Any]:
        return {"email": "alice@acme.example"}


class TestPlatform:
    def test_the_component_gives_its_outputs_and_job_settings(self) -> None:
        """Construct makes the platform under the schema's type; jobSettings depends on
        the APIs and grants a job waits for."""
        # The SDK runs a program on the thread's event loop (each asyncio.run above closes
        # its own): a new one for this program.
        asyncio.set_event_loop(asyncio.new_event_loop())
        pulumi.runtime.set_mocks(PlatformMocks(), project="training", stack="dev", preview=False)
        plugin = VertexTrainingProvider("0.0.1")
        inputs = {
            "project": "acme-ml",
            "region": "us-central1",
            "settings": {"bucket": {"forceDestroy": True}},
        }
        request = ConstructRequest(PLATFORM, "ml", values(inputs), pulumi.ResourceOptions())
        response = _sync_await(plugin.construct(request))
        assert response.urn.endswith(f"{PLATFORM}::ml")
        state = response.state
        assert plain_map(state)["jobSettings"] == {
            "project": "acme-ml",
            "region": "us-central1",
            "serviceAccount": "vertex-training@acme-ml.iam.gserviceaccount.com",
            "outputRoot": "gs://acme-ml-vertex-training-dev",
            "imageRepository": "us-central1-docker.pkg.dev/acme-ml/training",
        }
        waits_for = {urn.rsplit("::", 1)[-1] for urn in state["jobSettings"].dependencies}
        assert {"ml-aiplatform", "ml-jobs-storage-objectadmin"} <= waits_for
        assert plain_map(state)["bucket"] == "acme-ml-vertex-training-dev"

    def test_only_the_platform_is_constructed(self) -> None:
        """Another component type is refused, naming the plugin's."""
        request = ConstructRequest("vertex-training:index:Other", "x", {}, pulumi.ResourceOptions())
        with pytest.raises(BackendError, match=PLATFORM):
            asyncio.run(VertexTrainingProvider("0.0.1").construct(request))


class TestProviderConfig:
    def test_the_state_records_the_plugins_version(self) -> None:
        """The provider's checked config carries the plugin's version."""
        provider = VertexTrainingProvider("1.2.3")
        result = asyncio.run(provider.check_config(CheckRequest("urn", {}, {}, b"")))
        assert plain_map(result.inputs)["version"] == "1.2.3"

    def test_a_new_setting_updates_the_provider_and_replaces_nothing(self) -> None:
        """A changed endpoint or version is a change without replacement."""
        provider = VertexTrainingProvider("1.2.4")
        olds = values({"apiEndpoint": "127.0.0.1:1", "version": "1.2.3"})
        news = values({"apiEndpoint": "127.0.0.1:2", "version": "1.2.4"})
        diff = asyncio.run(provider.diff_config(DiffRequest("urn", "id", olds, news, [])))
        assert diff.changes and diff.replaces == [] and diff.diffs == ["apiEndpoint", "version"]


class TestWaiter:
    def test_the_waiter_waits_and_fails_the_update_naming_a_failed_job(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A job that ends FAILED fails the waiter's create with its error and class,
        the waiter kept with what it saw (``InitFailedError``); one that succeeds is
        recorded in ``states``."""
        fake.script("doomed", outcome="FAILED")
        good = create(plugin, job(wait="succeeded", displayName="good"))
        entry = plain_map(good.properties)["waiterEntry"]
        waiter = {"jobs": [entry]}
        made = asyncio.run(
            plugin.create(CreateRequest(urn(WAITER, "wait"), values(waiter), 60.0, False))
        )
        assert plain_map(made.properties)["states"] == {"train": "SUCCEEDED"}

        bad = create(started(fake), job(wait="succeeded", displayName="doomed"))
        failing = {"jobs": [plain_map(bad.properties)["waiterEntry"]]}
        with pytest.raises(InitFailedError, match=r"job train \(.*\) ended FAILED") as failed:
            asyncio.run(
                plugin.create(CreateRequest(urn(WAITER, "wait"), values(failing), 60.0, False))
            )
        kept = plain_map(failed.value.properties)
        assert kept["states"] == {"train": "FAILED"} and list(kept["problems"]) == ["train"]
        assert failed.value.resource_id == "jobs"

    def test_the_trials_are_typed_trials_in_camel_case(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """The waiter's trials of a tuning job, and the job's own (filled by the create
        that waited for it, and by a read), are the schema's Trial type: camelCase keys,
        the parameters' and metrics' IDs as written."""
        made = create(
            plugin, {"job": {"image": IMAGE, "study": STUDY, "wait": "succeeded"}}, TUNING
        )
        own = plain_map(made.properties)
        assert own["state"] == "SUCCEEDED" and len(own["trials"]) == 2
        assert own["bestTrial"] == max(own["trials"], key=lambda trial: trial["finalMetric"])
        entry = own["waiterEntry"]
        waited = asyncio.run(
            plugin.create(
                CreateRequest(urn(WAITER, "wait"), values({"jobs": [entry]}), 60.0, False)
            )
        )
        seen = plain_map(waited.properties)["trials"]["train"]
        assert set(seen) == {"trials", "bestTrial"} and len(seen["trials"]) == 2
        trial_keys = set(schema.TRIAL_PROPERTIES)
        for trial in [*seen["trials"], seen["bestTrial"]]:
            assert set(trial) == trial_keys, trial
            assert set(trial["parameters"]) == {"learning_rate"}
            assert set(trial["metrics"]) == {"accuracy"}
        best = max(seen["trials"], key=lambda trial: trial["finalMetric"])
        assert seen["bestTrial"] == best

        assert own["bestTrial"] == best and own["trials"] == seen["trials"]

        request = ReadRequest(urn(TUNING), made.resource_id, made.properties, made.inputs)
        read = plain_map(asyncio.run(plugin.read(request)).properties)
        assert read["bestTrial"] == best
        assert all(set(trial) == trial_keys for trial in read["trials"])

    def test_a_tuning_job_that_fails_its_own_wait_is_kept_and_waited_for_again(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A tuning job waits in its own create; one that ends FAILED (no trial reports
        its metric) fails it with the job kept (its ID and what the wait saw:
        ``InitFailedError``) and its class and fix in the message. The update the engine
        makes of a kept job waits again (one read: it fails at once), and submits
        nothing."""
        monkeypatch.chdir(tmp_path)
        keys = {"job": {"image": IMAGE, "study": STUDY, "wait": "succeeded"}}
        with FakeVertex(queued_s=0.1, pending_s=0.1, trial_metric=lambda *_: None) as fake:
            plugin = started(fake)
            with pytest.raises(InitFailedError, match=r"job train \(.*\) ended FAILED") as failed:
                create(plugin, keys, TUNING)
            assert "class:" in str(failed.value) and "fix:" in str(failed.value)
            kept = plain_map(failed.value.properties)
            assert failed.value.resource_id == kept["waiterEntry"]["resourceName"]
            assert kept["state"] == "FAILED" and len(fake.tuning_jobs) == 1
            assert plain_map(failed.value.inputs)["job"] == keys["job"]

            inputs = failed.value.inputs
            recorded = {**inputs, **failed.value.properties}  # as the servicer gives them
            again = UpdateRequest(
                urn(TUNING), failed.value.resource_id, recorded, inputs, 60.0, [], False
            )
            with pytest.raises(InitFailedError, match="ended FAILED"):
                asyncio.run(plugin.update(again))
            assert len(fake.tuning_jobs) == 1, "the update submitted the job again"

    def test_a_tuning_job_at_submitted_is_not_waited_for_by_its_create(
        self, plugin: VertexTrainingProvider
    ) -> None:
        made = plain_map(
            create(plugin, {"job": {"image": IMAGE, "study": STUDY}}, TUNING).properties
        )
        assert made["state"] in {"QUEUED", "PENDING"} and made["bestTrial"] is None

    def test_a_job_left_at_submitted_is_not_waited_for(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """A waiter given a job whose wait is submitted records nothing for it."""
        made = create(plugin, job())
        entry = plain_map(made.properties)["waiterEntry"]
        assert entry["until"] == "submitted"
        waited = asyncio.run(
            plugin.create(
                CreateRequest(urn(WAITER, "wait"), values({"jobs": [entry]}), 60.0, False)
            )
        )
        assert plain_map(waited.properties)["states"] == {}


def snapshot_in(directory: Path, path: str = "prices/snapshot.json") -> None:
    """The fake catalog's snapshot (invented prices) written at ``path`` in ``directory``."""
    prices.save_snapshot(PRICES, directory / path)


def expected(keys: dict[str, Any]) -> tuple[dict[str, Any], cost.Estimate]:
    """The request `vertex-training render` prints for a job of these keys in the fake's
    project and region, and its estimate from the fake catalog's snapshot."""
    stack = stackconfig.StackSettings(stack="dev", project="test-project", region="us-central1")
    spec = stackconfig.parse_job("train", keys, stack)
    return spec.request_body(), cost.estimate(spec, PRICES)


def known(properties: dict[str, PropertyValue], *names: str) -> list[str]:
    """Those of ``names`` whose value is known among ``properties`` (not the engine's
    unknown)."""
    return [name for name in names if properties[name].value != UNKNOWN_TEXT]


#: The outputs a job's submission tells.
SUBMITTED = (
    "jobId",
    "state",
    "error",
    "createTime",
    "startTime",
    "consoleUrl",
    "logsUrl",
    "outputDirectory",
    "modelDirectory",
    "attempts",
)


class TestPreview:
    def test_the_plugin_supports_previews(self) -> None:
        """Configure tells the engine to call create and update in a preview."""
        provider = VertexTrainingProvider("0.0.1")
        response = asyncio.run(provider.configure(ConfigureRequest({}, {}, True, True)))
        assert response.supports_preview

    def test_a_create_shows_the_request_and_estimate_and_submits_nothing(
        self, plugin: VertexTrainingProvider, fake: FakeVertex, tmp_path: Path
    ) -> None:
        """The request and estimate are known; what a submission tells is unknown."""
        snapshot_in(tmp_path)
        made = create(plugin, job(wait="succeeded"), preview=True)
        assert fake.calls == [] and fake.jobs == {}
        assert not made.resource_id
        outputs = plain_map(made.properties)
        body, estimate = expected({"image": IMAGE, "machine": "e2-standard-4"})
        assert outputs["request"] == body
        assert estimate.hourly_usd is not None and estimate.max_usd is not None
        assert outputs["estimate"] == {
            "hourlyUsd": round(estimate.hourly_usd, USD_DECIMALS),
            "maxUsd": round(estimate.max_usd, USD_DECIMALS),
            "hours": 7 * 24.0,
            "strategy": "STANDARD",
            "pricesRead": "2026-11-20",
            "pricesSource": SOURCE,
            "unknown": [],
            "summary": cost.describe(estimate),
        }
        assert known(made.properties, *SUBMITTED) == []
        entry = outputs["waiterEntry"]
        assert entry["resourceName"] == UNKNOWN_TEXT and entry["until"] == "succeeded"

    def test_an_unknown_is_sent_as_the_engines_computed_value(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """The preview's properties marshal, an unknown as the sentinel the engine reads
        as computed (the SDK's own Computed does not marshal)."""
        made = create(plugin, job(), preview=True)
        wire = PropertyValue.marshal_map(made.properties)
        assert wire.fields["jobId"].string_value == pulumi.runtime.rpc.UNKNOWN

    def test_a_tuning_job_shows_its_tuning_request_and_unknown_trials(
        self, plugin: VertexTrainingProvider, tmp_path: Path
    ) -> None:
        """A tuning job's request is the HyperparameterTuningJob body; its trials are
        unknown; its estimate counts every trial."""
        snapshot_in(tmp_path)
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1}},
            "maxTrials": 3,
        }
        keys = {"image": IMAGE, "machine": "e2-standard-4", "study": study}
        made = create(plugin, {"job": keys}, TUNING, preview=True)
        outputs = plain_map(made.properties)
        assert outputs["request"]["maxTrialCount"] == 3
        assert "studySpec" in outputs["request"]
        assert known(made.properties, "trials", "bestTrial") == []
        assert "x 3 trials" in outputs["estimate"]["summary"]

    def test_another_resources_output_in_the_args_leaves_the_estimate_known(
        self, plugin: VertexTrainingProvider, tmp_path: Path
    ) -> None:
        """An unknown arg: the request is unknown as a whole, the estimate known; an
        unknown machine: both unknown (the job cannot be read yet)."""
        snapshot_in(tmp_path)
        made = create(plugin, job(args=["--model-of", UNKNOWN_TEXT]), preview=True)
        assert known(made.properties, "request") == []
        assert "hourlyUsd" in plain_map(made.properties)["estimate"]
        machine = create(plugin, job(machine=UNKNOWN_TEXT), preview=True)
        assert known(machine.properties, "request", "estimate") == []

    def test_an_update_keeps_the_jobs_names_and_reads_nothing(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A new wait previewed: the job's ID and pages as recorded, its state unknown,
        no call to the service."""
        made = create(plugin, job())
        calls = len(fake.calls)
        news = check(plugin, job(wait="running")).inputs
        request = UpdateRequest(urn(), made.resource_id, made.olds, news, 60.0, [], True)
        updated = asyncio.run(plugin.update(request))
        assert len(fake.calls) == calls
        outputs = plain_map(updated.properties)
        recorded = plain_map(made.properties)
        assert outputs["jobId"] == recorded["jobId"] and outputs["logsUrl"] == recorded["logsUrl"]
        assert known(updated.properties, "state", "createTime") == []
        assert outputs["waiterEntry"]["resourceName"] == made.resource_id
        assert outputs["waiterEntry"]["until"] == "running"
        assert outputs["request"] == expected({"image": IMAGE, "machine": "e2-standard-4"})[0]

    def test_the_waiter_waits_for_nothing_and_its_outputs_are_unknown(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A waiter's create and update in a preview read no job; what it sees is unknown."""
        made = create(plugin, job(wait="succeeded"))
        calls = len(fake.calls)
        waiter = values({"jobs": [plain_map(made.properties)["waiterEntry"]]})
        created = asyncio.run(plugin.create(CreateRequest(urn(WAITER, "wait"), waiter, 60.0, True)))
        update = UpdateRequest(urn(WAITER, "wait"), "jobs", waiter, waiter, 60.0, [], True)
        updated = asyncio.run(plugin.update(update))
        assert len(fake.calls) == calls
        seen = ("states", "trials", "reasons", "attempts", "problems")
        assert known(created.properties, *seen) == [] and known(updated.properties, *seen) == []


class TestEstimate:
    def test_without_a_snapshot_the_estimate_says_why_and_how_to_get_one(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """No prices/snapshot.json: no amounts, and a reason naming the file, the refresh
        and the config key."""
        made = create(plugin, job(), preview=True)
        estimate = plain_map(made.properties)["estimate"]
        assert "hourlyUsd" not in estimate and "maxUsd" not in estimate
        [reason] = estimate["unknown"]
        assert reason.startswith("no price snapshot (prices/snapshot.json): ")
        assert "`vertex-training prices refresh`" in reason
        assert "`pulumi config set vertex-training:prices <path>`" in reason
        assert estimate["summary"].startswith(f"unknown: {reason}")

    def test_the_prices_setting_is_read_relative_to_the_working_directory(
        self, fake: FakeVertex, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """vertex-training:prices names a snapshot in the program's directory; one that
        is not there is named, with the refresh that writes it."""
        monkeypatch.chdir(tmp_path)
        snapshot_in(tmp_path, "snapshots/fake.json")
        priced = plain_map(
            create(started(fake, prices="snapshots/fake.json"), job(), preview=True).properties
        )
        assert priced["estimate"]["pricesSource"] == SOURCE
        missing = started(fake, prices="snapshots/none.json")
        [reason] = plain_map(create(missing, job(), preview=True).properties)["estimate"]["unknown"]
        assert reason.startswith("no price snapshot (snapshots/none.json, vertex-training:prices)")
        assert "`vertex-training prices refresh --out snapshots/none.json`" in reason

    def test_a_made_job_records_what_its_inputs_do_not_give(
        self, plugin: VertexTrainingProvider, tmp_path: Path
    ) -> None:
        """A real create records the job's outputs but its request, its estimate and its
        keys, which its recorded inputs give (a preview shows the first two); a refresh
        records the same, and one of a job an earlier state recorded whole drops them."""
        snapshot_in(tmp_path)
        made = create(plugin, job())
        left_out = {"request", "estimate", "job"}
        assert left_out.isdisjoint(made.properties)
        assert {"project", "region", "backend", "jobId", "waiterEntry"} <= set(made.properties)
        assert set(made.properties) <= set(schema.JOB_OUTPUTS) | {"project", "region", "backend"}
        previewed = plain_map(create(plugin, job(), preview=True).properties)
        earlier = {**made.properties, **{key: property_value(previewed[key]) for key in left_out}}
        request = ReadRequest(urn(), made.resource_id, earlier, made.inputs)
        read = asyncio.run(plugin.read(request))
        assert plain_map(read.properties) == {
            **plain_map(made.properties),
            "state": plain_map(read.properties)["state"],
        }

    def test_the_snapshot_is_read_once_and_only_when_an_estimate_needs_it(
        self, plugin: VertexTrainingProvider, tmp_path: Path
    ) -> None:
        """A check and a no-change diff read no snapshot (it is written after them and
        found); a snapshot removed after the first estimate still prices the next."""
        same = check(plugin, job()).inputs
        diff = asyncio.run(plugin.diff(DiffRequest(urn(), "id", same, same, [])))
        assert diff.changes is False
        snapshot_in(tmp_path)
        first = plain_map(create(plugin, job(displayName="first"), preview=True).properties)
        (tmp_path / "prices" / "snapshot.json").unlink()
        second = plain_map(create(plugin, job(displayName="second"), preview=True).properties)
        assert first["estimate"]["pricesSource"] == second["estimate"]["pricesSource"] == SOURCE

    def test_a_local_job_costs_nothing_and_needs_no_prices(
        self, plugin: VertexTrainingProvider, tmp_path: Path
    ) -> None:
        """A job on the local backend is free on Google Cloud, with no snapshot. (A
        package job: a container one would need a container engine answering here.)"""
        (tmp_path / "trainer-0.1.tar.gz").write_bytes(b"")
        package = {"packageUris": ["trainer-0.1.tar.gz"], "module": "trainer.task"}
        keys = {"pythonPackage": package, "machine": "e2-standard-4"}
        made = create(plugin, {"job": keys, "backend": "local"}, preview=True)
        estimate = plain_map(made.properties)["estimate"]
        assert (estimate["hourlyUsd"], estimate["maxUsd"], estimate["unknown"]) == (0.0, 0.0, [])
        assert estimate["summary"] == "runs locally: no Google Cloud cost"


class TestPreviewText:
    """The line under a job in `pulumi preview` of its create (plugin.previews)."""

    estimate = PropertyValue({"summary": PropertyValue("$0.20/h; at most $0.40 (2h timeout)")})

    def test_says_what_it_costs_and_submits(self) -> None:
        request = PropertyValue({"displayName": PropertyValue("train")})
        text = preview_text({"estimate": self.estimate, "request": request}, secret=False)
        assert text == (
            "would be submitted, estimated $0.20/h; at most $0.40 (2h timeout); request: "
            '{"displayName": "train"}'
        )

    def test_a_secret_in_its_inputs_keeps_the_request_hidden(self) -> None:
        request = PropertyValue({"displayName": PropertyValue("train")}, True)
        text = preview_text({"estimate": self.estimate, "request": request}, secret=True)
        assert text.endswith("; request: [secret] (its inputs hold a secret)")
        assert "train" not in text

    def test_a_request_holding_another_resources_value_is_said_unknown(self) -> None:
        request = PropertyValue(UNKNOWN_TEXT)
        text = preview_text({"estimate": self.estimate, "request": request}, secret=False)
        assert text.endswith("; request: known once the values of other resources it takes are")

    def test_a_job_that_asks_to_be_waited_for_says_who_waits(self) -> None:
        """Nothing but a JobWaiter waits for it: the preview says so on the job itself."""
        request = PropertyValue({"displayName": PropertyValue("train")})
        job = PropertyValue({"wait": PropertyValue({"until": PropertyValue("succeeded")})})
        properties = {"estimate": self.estimate, "request": request, "job": job}
        assert preview_text(properties, secret=False).startswith(
            "would be submitted, waited for (`wait: succeeded`) only by a JobWaiter that lists "
            "its `waiterEntry`, estimated $0.20/h"
        )

    def test_a_job_that_runs_after_others_names_those_known(self) -> None:
        known = "projects/p/locations/us-central1/customJobs/1"
        after = PropertyValue([PropertyValue(known), PropertyValue(UNKNOWN_TEXT)])
        job = PropertyValue({"runAfter": after})
        text = preview_text({"estimate": self.estimate, "job": job}, secret=False)
        assert text.startswith(
            "would be submitted, once the 2 jobs it runs after have succeeded "
            f"(`{known}`, one submitted earlier in this update), estimated $0.20/h"
        )

    def test_a_replacement_says_which_keys_submit_it_again(self) -> None:
        """A label changed beside the wait: the label forces it, the wait would not."""
        request = PropertyValue({"displayName": PropertyValue("train")})
        why = Replacement(("job.labels",), ("job.wait",))
        text = preview_text({"estimate": self.estimate, "request": request}, False, why)
        assert text.startswith(
            "would be submitted again, replacing the job, because `job.labels` changed "
            "(Vertex AI cannot update a submitted job; `job.wait` alone would update it in "
            "place), estimated $0.20/h"
        )

    def test_the_diff_of_a_replacement_gives_its_preview_the_reason(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """The engine's diff, then the preview of the replacement's create, of one URN."""
        made = create(plugin, job())
        news = check(plugin, job(displayName="renamed")).inputs
        request = DiffRequest(urn(), made.resource_id, made.olds, news, [])
        assert asyncio.run(plugin.diff(request)).replaces == ["job"]
        assert plugin.replacements[urn()] == Replacement(("job.displayName",))
        create(plugin, job(displayName="renamed"), preview=True)
        assert urn() not in plugin.replacements


def entry(name: str, index: int, **keys: Any) -> dict[str, Any]:
    """A job's waiter entry as its ``waiterEntry`` output gives it (plain)."""
    config = {"image": IMAGE, "machine": "e2-standard-4", "wait": "succeeded", **keys}
    return {
        "name": name,
        "resourceName": f"projects/test-project/locations/us-central1/customJobs/{index}",
        "until": "succeeded",
        "config": config,
        "stack": {"stack": "dev", "pulumi_project": "training", "project": "test-project"},
    }


def waiter_diff(olds: list[Any], news: dict[str, Any]) -> Any:
    plugin = VertexTrainingProvider("0.0.1")
    request = DiffRequest(urn(WAITER, "wait"), "jobs", values({"jobs": olds}), values(news), [])
    return asyncio.run(plugin.diff(request))


def kinds(diff: Any) -> dict[str, PropertyDiffKind]:
    return {path: d.kind for path, d in diff.detailed_diff.items()}


class TestWaiterDiff:
    def test_jobs_that_failed_the_last_wait_are_named_and_their_problems_replaced(
        self,
    ) -> None:
        """The same list, one job of which failed the last wait: an update whose diff is
        the problems recorded then (no entry of the list), its preview naming the job."""
        listed = [entry("plain", 1), entry("doomed", 2)]
        olds = {"jobs": listed, "problems": {"doomed": "job doomed ... ended FAILED"}}
        plugin = VertexTrainingProvider("0.0.1")
        request = DiffRequest(
            urn(WAITER, "wait"), "jobs", values(olds), values({"jobs": listed}), []
        )
        diff = asyncio.run(plugin.diff(request))
        assert diff.changes and diff.diffs == ["problems"]
        assert kinds(diff) == {"problems": PropertyDiffKind.UPDATE}
        assert waiting_again(olds, {"jobs": listed}).startswith(
            "waits again for doomed, which failed the last wait"
        )

    """A JobWaiter's diff names only the jobs whose entry changed (issue 44)."""

    a, b = entry("a", 1, args=["--epochs", "3"]), entry("b", 2, args=["--epochs", "3"])

    def test_one_jobs_new_args_are_that_entrys_path_alone(self) -> None:
        """The other job's entry is not in the diff; the changed key is, on its path."""
        changed = entry("b", 2, args=["--epochs", "5"])
        diff = waiter_diff([self.a, self.b], {"jobs": [self.a, changed]})
        assert diff.changes and diff.replaces in (None, []) and diff.diffs == ["jobs"]
        assert kinds(diff) == {"jobs[1].config.args": PropertyDiffKind.UPDATE}
        assert all(d.input_diff for d in diff.detailed_diff.values())

    def test_a_new_wait_is_its_key_and_until(self) -> None:
        """Keys added to or removed from a job show as such, beside its entry's keys; a
        key that is no name is quoted in the path."""
        changed = {
            **entry("a", 1, wait="running", env={"A": "x"}, **{"x-y": 1}),
            "until": "running",
        }
        diff = waiter_diff([self.a, self.b], {"jobs": [changed, self.b]})
        assert kinds(diff) == {
            "jobs[0].config.args": PropertyDiffKind.DELETE,
            "jobs[0].config.env": PropertyDiffKind.ADD,
            'jobs[0].config["x-y"]': PropertyDiffKind.ADD,
            "jobs[0].config.wait": PropertyDiffKind.UPDATE,
            "jobs[0].until": PropertyDiffKind.UPDATE,
        }

    def test_a_reordered_list_is_no_change(self) -> None:
        """Entries are matched by their job's name, not their place."""
        diff = waiter_diff([self.a, self.b], {"jobs": [self.b, self.a]})
        assert diff.changes is False and not diff.detailed_diff

    def test_an_added_or_removed_job_is_its_whole_entry(self) -> None:
        """A new job is an add at its new place; a removed one a delete at its old."""
        c = entry("c", 3)
        added = waiter_diff([self.a, self.b], {"jobs": [self.a, self.b, c]})
        assert kinds(added) == {"jobs[2]": PropertyDiffKind.ADD}
        removed = waiter_diff([self.a, self.b], {"jobs": [self.b]})
        assert kinds(removed) == {"jobs[0]": PropertyDiffKind.DELETE}
        swapped = waiter_diff([self.a, self.b], {"jobs": [c, self.b]})
        assert kinds(swapped) == {"jobs[0]": PropertyDiffKind.UPDATE}

    def test_an_entry_a_preview_cannot_know_is_that_place_updated(self) -> None:
        """A job the preview replaces has an unknown entry: its place alone is updated."""
        news = values({"jobs": [self.a]})
        news["jobs"] = news["jobs"].with_value([news["jobs"].value[0], PropertyValue(Computed())])
        plugin = VertexTrainingProvider("0.0.1")
        request = DiffRequest(
            urn(WAITER, "wait"), "jobs", values({"jobs": [self.a, self.b]}), news, []
        )
        diff = asyncio.run(plugin.diff(request))
        assert kinds(diff) == {"jobs[1]": PropertyDiffKind.UPDATE}

    def test_a_job_moved_and_changed_is_its_whole_entry_at_its_new_place(self) -> None:
        """The engine reads one index in both lists: a moved entry is shown whole."""
        changed = entry("a", 1, args=["--epochs", "5"])
        diff = waiter_diff([self.a, self.b], {"jobs": [self.b, changed]})
        assert kinds(diff) == {"jobs[1]": PropertyDiffKind.UPDATE}

    def test_a_secret_entry_is_diffed_and_never_shown(self) -> None:
        """An entry holding a secret is read (plain) for the diff; the diff names paths
        only, never a value."""
        token = entry("b", 2, env={"TOKEN": "s3cret"})
        olds = values({"jobs": [self.a]})
        olds["jobs"] = olds["jobs"].with_value(
            [olds["jobs"].value[0], property_value(token, secret=True)]
        )
        news = values({"jobs": [self.a]})
        rotated = entry("b", 2, env={"TOKEN": "n3w-s3cret"})
        news["jobs"] = news["jobs"].with_value(
            [news["jobs"].value[0], property_value(rotated, secret=True)]
        )
        plugin = VertexTrainingProvider("0.0.1")
        diff = asyncio.run(plugin.diff(DiffRequest(urn(WAITER, "wait"), "jobs", olds, news, [])))
        assert kinds(diff) == {"jobs[1].config.env": PropertyDiffKind.UPDATE}
        assert "s3cret" not in repr(diff.detailed_diff) + repr(diff.diffs)


class TestWaiterEntryPlan:
    """A job's waiterEntry is its wait plan, made or previewed: no copy of its keys, so
    no secret of theirs, and the waiter follows it as it is."""

    def test_the_preview_and_the_made_job_give_the_plan_the_waiter_follows(
        self, plugin: VertexTrainingProvider
    ) -> None:
        """Both places that build an entry give the plan (unknown resource name in the
        preview); the waiter waits for the job by it, reading no stack config."""
        keys = values(job(wait={"until": "succeeded", "timeout": "2h", "startTimeout": "1h"}))
        keys_value = keys["job"].value
        assert isinstance(keys_value, Mapping)
        env = PropertyValue({"T": property_value("s3cret", secret=True)})
        inputs = {"job": PropertyValue({**keys_value, "env": env})}
        checked = asyncio.run(plugin.check(CheckRequest(urn(), {}, inputs, b"")))
        assert checked.inputs is not None and not checked.failures
        previewed = asyncio.run(plugin.create(CreateRequest(urn(), checked.inputs, 60.0, True)))
        made = asyncio.run(plugin.create(CreateRequest(urn(), checked.inputs, 60.0, False)))
        assert previewed.properties is not None and made.properties is not None
        plan = {"name": "train", "until": "succeeded", "timeoutS": 7200.0, "startTimeoutS": 3600.0}
        for properties, resource_name in (
            (previewed.properties, UNKNOWN_TEXT),
            (made.properties, made.resource_id),
        ):
            assert not properties["waiterEntry"].contains_secret()
            assert plain(properties["waiterEntry"]) == {**plan, "resourceName": resource_name}
        waited = wait_for(plugin, made.properties["waiterEntry"])
        assert waited["states"] == {"train": "SUCCEEDED"}


def wait_for(plugin: VertexTrainingProvider, *entries: PropertyValue) -> dict[str, Any]:
    """A JobWaiter's create over the jobs' entries: its properties, kept when a job failed
    the wait (``InitFailedError``)."""
    request = CreateRequest(
        urn(WAITER, "wait"), {"jobs": PropertyValue(list(entries))}, 60.0, False
    )
    try:
        made = asyncio.run(plugin.create(request))
    except InitFailedError as failed:
        return plain_map(failed.properties)
    return plain_map(made.properties)


class TestTypedOutputs:
    """A failed job's ``failure`` (a ``JobFailure``) and the ``attempts`` of a job with
    ``retry`` (each an ``Attempt``, in camelCase), on the job and on the JobWaiter that
    submitted its next attempt, whose entry is its wait plan and its keys both."""

    def test_a_failed_job_reads_its_failure_typed(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        fake.script("train", outcome=states.FAILED)
        made = create(plugin, job(wait="succeeded"))
        waited = wait_for(plugin, made.properties["waiterEntry"])
        assert "ended FAILED" in waited["problems"]["train"]
        read = asyncio.run(
            plugin.read(ReadRequest(urn(), made.resource_id, made.properties, made.inputs))
        )
        failure = plain_map(read.properties)["failure"]
        assert set(failure) == set(schema.JOB_FAILURE_PROPERTIES)
        assert failure["class"] == "user_code" and failure["replica"] == "workerpool0-0"
        assert failure["fix"] and failure["code"] > 0

    def test_attempts_are_typed_on_the_job_and_its_waiter(
        self, plugin: VertexTrainingProvider, fake: FakeVertex
    ) -> None:
        """A job whose first attempt found no capacity: its waiter submits the second in the
        next region; both list the attempts in camelCase, the waiter's by job name. Its entry
        carries its keys (the waiter submits its next attempts from them) beside its plan."""
        fake.stockout("us-central1")
        retry = {"when": ["capacity"], "regions": ["us-east1"]}
        made = create(plugin, job(wait="succeeded", retry=retry))
        entry = plain(made.properties["waiterEntry"])
        assert entry["timeoutS"] == 86400.0 and entry["config"]["retry"] == retry
        first = plain_map(made.properties)["attempts"]
        assert [set(a) for a in first] == [set(schema.ATTEMPT_PROPERTIES)]
        assert first[0]["attempt"] == 1 and first[0]["region"] == "us-central1"
        assert first[0]["resourceName"] == made.resource_id

        waited = wait_for(plugin, made.properties["waiterEntry"])
        assert waited["states"] == {"train": states.SUCCEEDED}, waited.get("problems")
        attempts = waited["attempts"]["train"]
        assert [(a["attempt"], a["region"], a["class"]) for a in attempts] == [
            (1, "us-central1", "capacity"),
            (2, "us-east1", ""),
        ]
        assert all(set(a) == set(schema.ATTEMPT_PROPERTIES) for a in attempts)
        assert attempts[1]["jobId"] and attempts[1]["resourceName"].endswith(attempts[1]["jobId"])
        assert "us-east1" in attempts[1]["consoleUrl"]

        read = asyncio.run(
            plugin.read(ReadRequest(urn(), made.resource_id, made.properties, made.inputs))
        )
        recorded = plain_map(read.properties)
        assert [a["region"] for a in recorded["attempts"]] == ["us-central1", "us-east1"]
        assert recorded["attempts"][1]["jobId"] == attempts[1]["jobId"]


class TestStart:
    def test_the_plugin_starts_without_the_stack_configs_models(self) -> None:
        """The plugin's modules load no pydantic model at start: a no-change preview (a
        check and a diff of each unchanged job) parses no job, and the models' import was
        a third of the plugin's start (docs/testing.md, "A stack of many jobs"). The
        schema, written from the models' descriptions, is read from schema.json."""
        code = (
            "import sys, vertex_training.plugin.__main__, vertex_training.plugin.provider\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic'))"
        )
        loaded = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout
        assert loaded.strip() == "[]", loaded
