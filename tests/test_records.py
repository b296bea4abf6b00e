"""The job operations' typed records (``resources.records``): what each host hands the
operations of a job's state, and what it records of what they report."""

from __future__ import annotations

import dataclasses

from vertex_training.plugin import schema, shapes
from vertex_training.resources.records import JobObserved, JobRecord
from vertex_training.resources.state import (
    FLAT_SCHEMA_VERSION,
    OUTPUT_KEYS,
    SCHEMA_VERSION,
    TUNING_OUTPUT_KEYS,
)

STACK = {"stack": "dev", "project": "acme", "region": "us-central1"}
CONFIG = {"image": "us-docker.pkg.dev/acme/trainers/mnist:1", "machine": "n1-standard-4"}
#: The schema's job outputs that name the job (derived from its resource name and pages)
#: or come from its keys (its request, estimate and wait plan), not from its backend.
DERIVED_PROPERTIES = {
    "jobId",
    "consoleUrl",
    "logsUrl",
    "modelDirectory",
    "waiterEntry",
    "request",
    "estimate",
}


class TestJobRecord:
    def test_todays_state_reads_as_its_inputs(self) -> None:
        """Engine keys and outputs are no part of a record; it gives back the inputs."""
        inputs = {"name": "train", "schema": SCHEMA_VERSION, "stack": STACK, "config": CONFIG}
        state = {**inputs, "__provider": "pickled", "state": "RUNNING", "job_id": "1"}
        record = JobRecord.of_state(state)
        assert record == JobRecord("train", CONFIG, STACK)
        assert record.recorded() == inputs
        assert record.same_job(JobRecord.of_state(inputs))

    def test_a_flat_state_reads_as_todays(self) -> None:
        """Schema 3 held the config's keys one by one: its record is today's, so an
        upgrade shows no change."""
        flat = {"name": "train", "schema": FLAT_SCHEMA_VERSION, "stack": STACK, **CONFIG}
        assert JobRecord.of_state(flat) == JobRecord("train", CONFIG, STACK)

    def test_a_state_that_recorded_its_view_is_kept_as_written(self) -> None:
        """Schema 2 recorded what runs (its request among it): the record keeps it as
        read, and what runs is read from there, not parsed again."""
        view = {
            "name": "train",
            "schema": 2,
            "request": {"displayName": "train"},
            "location": {"backend": "vertex", "project": "acme", "region": "us-central1"},
            "wait": {"until": "submitted", "timeout_s": 60},
            "stack_name": "dev",
            "adopt": "",
            "retry": {"when": ["STOCKOUT"], "attempts": []},
        }
        record = JobRecord.of_state({**view, "state": "SUCCEEDED"})
        assert record.written == view and record.recorded() == view
        assert record.view()["request"] == {"displayName": "train"}
        assert record.sets("retry") and not record.sets("run_after")


class TestJobObserved:
    def test_empty_outputs_are_left_out_but_those_kept(self) -> None:
        observed = JobObserved("projects/p/locations/r/customJobs/1", state="RUNNING")
        assert observed.outputs(("state", "error")) == {"state": "RUNNING", "error": ""}

    def test_a_tuning_jobs_outputs_add_its_trials(self) -> None:
        trial = {"id": "1", "state": "SUCCEEDED", "final_metric": 0.9}
        observed = JobObserved("n", trials=(trial,), best_trial=trial)
        assert observed.tuning and not JobObserved("n").tuning
        assert observed.outputs(()) == {"trials": [trial], "best_trial": trial}

    def test_what_a_state_recorded_reads_back(self) -> None:
        """A recorded state's outputs read back as the record that wrote them."""
        observed = JobObserved(
            "n",
            state="FAILED",
            failure={"class": "STOCKOUT"},
            attempts=({"attempt": 1, "region": "us-central1"},),
            trials=(),
            best_trial=None,
        )
        kept = ("state", "trials", "best_trial")
        assert JobObserved.of_outputs("n", observed.outputs(kept)) == observed

    def test_its_outputs_are_the_states_and_the_schemas(self) -> None:
        """One list of outputs: the record's fields are the state's output keys
        (``state.JobOutputs``, ``TuningOutputs``), and the schema's job outputs are those
        in camelCase beside the ones derived from the job's name and keys."""
        fields = [f.name for f in dataclasses.fields(JobObserved)]
        assert fields == ["resource_name", *TUNING_OUTPUT_KEYS]
        reported = set(schema.JOB_OUTPUTS) - DERIVED_PROPERTIES
        assert reported == {shapes.camel(key) for key in OUTPUT_KEYS}
        tuning = {shapes.camel(key) for key in TUNING_OUTPUT_KEYS if key not in OUTPUT_KEYS}
        assert set(schema.TUNING_OUTPUTS) == tuning
