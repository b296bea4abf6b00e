"""What `pulumi preview --diff` shows of a new job on the real engine, through the provider
plugin: a Pulumi YAML program (``tests.test_engine_plugin.YamlProgram``) against the fake
JobService, with a price snapshot made from the fake catalog in the program's directory
(its prices are invented, never Google's), or with none.

The CLI prints no resource's outputs in a preview, only the stack's: the program exports
the job's ``request``, ``estimate`` and ``jobId``, and the waiter's ``states``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.prices import PRICES, READ_AT
from tests.test_engine_plugin import YamlProgram, missing
from vertex_training.catalog import prices
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"
MACHINE = "n1-standard-4"
#: How the CLI shows a stack output a preview does not know.
UNKNOWN_OUTPUT = "[unknown]"


@pytest.fixture
def program(tmp_path: Path) -> Iterator[YamlProgram]:
    """Two new jobs (one of a 2h timeout; one given the first's ID among its args) and a
    waiter of the first, whose outputs the stack exports."""
    if reason := missing():
        pytest.skip(reason)
    with FakeVertex(queued_s=0.5, pending_s=0.5, run_s=1.0) as fake:
        made = YamlProgram(tmp_path, fake)
        made.resources = {
            "train": {
                "type": "vertex-training:TrainingJob",
                "properties": {
                    "job": {
                        "image": IMAGE,
                        "machine": MACHINE,
                        "args": ["--epochs", "3"],
                        "scheduling": {"timeout": "2h"},
                        "wait": "succeeded",
                    }
                },
            },
            "evaluate": {
                "type": "vertex-training:TrainingJob",
                "properties": {
                    "job": {
                        "image": IMAGE,
                        "machine": MACHINE,
                        "args": ["--model-of", "${train.jobId}"],
                    }
                },
            },
            "wait-for-jobs": {
                "type": "vertex-training:JobWaiter",
                "properties": {"jobs": ["${train.waiterEntry}"]},
            },
        }
        made.outputs = {
            "request": "${train.request}",
            "estimate": "${train.estimate}",
            "jobId": "${train.jobId}",
            "states": "${wait-for-jobs.states}",
            "evaluateRequest": "${evaluate.request}",
            "evaluateEstimate": "${evaluate.estimate.summary}",
        }
        made.write()
        yield made


def shown(text: str, key: str, after: str = "") -> str:
    """The value the CLI's text shows for ``key`` (its first row, or the first after the
    row of ``after``)."""
    start = re.search(rf"^\s*{re.escape(after)}\s*: ", text, flags=re.MULTILINE) if after else None
    rows = text[start.end() :] if start else text
    found = re.search(rf"^\s*{re.escape(key)}\s*: (.*)$", rows, flags=re.MULTILINE)
    assert found, f"no {key} in:\n{text}"
    return found.group(1)


def previewed(program: YamlProgram) -> str:
    """`pulumi preview --diff`'s text (its diagnostics, the lines under each job, come on
    stderr); the fake served no call for it."""
    text = program.run("preview", "--diff").check().output
    assert "+ 4 to create" in text
    assert program.fake.calls == [] and program.fake.jobs == {}, "the preview called Vertex AI"
    return text


class TestPreviewOfANewJob:
    def test_the_request_and_estimate_are_known_and_what_submission_tells_is_not(
        self, program: YamlProgram
    ) -> None:
        """The request names the image and machine; the estimate its rate, its most for
        the 2h timeout and the snapshot's date; jobId and the waiter's states are unknown."""
        prices.save_snapshot(PRICES, prices.snapshot_path(program.root))

        text = previewed(program)

        assert shown(text, "imageUri") == f'"{IMAGE}"'
        assert shown(text, "machineType") == f'"{MACHINE}"'
        assert shown(text, "pricesRead") == f'"{READ_AT.date().isoformat()}"'
        hourly = float(shown(text, "hourlyUsd"))
        assert hourly > 0
        assert float(shown(text, "maxUsd")) == pytest.approx(2 * hourly, abs=1e-5)
        assert "(2h timeout)" in shown(text, "summary")
        assert shown(text, "jobId") == UNKNOWN_OUTPUT
        assert shown(text, "states") == UNKNOWN_OUTPUT
        # A value of another resource's output among the second job's args: its request
        # is unknown as a whole, its estimate known (Vertex AI's default timeout, 7 days).
        assert shown(text, "evaluateRequest") == UNKNOWN_OUTPUT
        assert shown(text, "evaluateEstimate").endswith('(7d default timeout)"')
        assert shown(text, "evaluateEstimate").startswith('"$')
        # Under each job, whatever the program exports: what it would submit and cost.
        summary = shown(text, "summary").strip('"')
        # The job that asks to be waited for says who waits for it.
        waited = "waited for (`wait: succeeded`) only by a JobWaiter that lists its `waiterEntry`"
        line = (
            f"would be submitted, {waited}, estimated {summary} (prices read "
            f"{READ_AT.date()}); request: "
        )
        assert (
            f'{line}{{"displayName": "train", "jobSpec": {{"scheduling": {{"timeout": "7200s"}}'
            in text
        )
        assert '"bootDiskSizeGb": 100,' in text
        assert "; request: known once the values of other resources it takes are" in text

    def test_without_a_snapshot_the_estimate_says_why_and_how_to_get_one(
        self, program: YamlProgram
    ) -> None:
        """No prices/snapshot.json in the program's directory: the amounts are absent and
        the reason names the file, the refresh and the config key, within what the CLI
        shows of a text (its first 150 characters)."""
        text = previewed(program)

        assert "hourlyUsd" not in text and "maxUsd" not in text
        reason = shown(text, "[0]", after="unknown")
        assert reason.startswith('"no price snapshot (prices/snapshot.json): ')
        assert "`vertex-training prices refresh`" in reason
        assert "`pulumi config set vertex-training:prices <path>`" in reason
        assert shown(text, "imageUri") == f'"{IMAGE}"'
