"""The acceptance suite itself (acceptance/, `make acceptance`), run as a user runs it
without a project: against the fakes, through the same scenarios as against Google."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.engine import REPO, TOOLS_BIN, tools_missing

# The import scenario is a YAML program; the suite's result does not depend on the
# tests' Python.
pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

#: Each scenario, and the lines it must print.
SCENARIOS = {
    "test_container_job_lifecycle": ["preview submitted nothing", "destroy cancelled the running"],
    "test_failing_job_shows_its_last_log_lines": ["its replica's last log lines"],
    "test_tuning_job_of_two_trials": ["2 trials ran"],
    "test_engine_killed_mid_wait_then_recovered": ["the same job waited for", "a clean up"],
    "test_import_of_a_job_made_outside": ["previews with no change", "deleted the imported job"],
    "test_price_quota_and_image_refresh": ["prices:", "quotas:", "images:"],
    "test_orphans_of_a_removed_stack": ["deleted that job alone"],
}


@pytest.mark.timeout(1200)
def test_the_suite_passes_against_the_fakes_saying_what_each_scenario_checked() -> None:
    """Every scenario but the platform's (Google only) passes on the fakes, prints what it
    checked and that it left nothing; the sweeper runs first and last; the cost is priced."""
    if reason := tools_missing():
        pytest.skip(reason)
    if not (TOOLS_BIN / "pulumi-language-yaml").exists():
        pytest.skip("the YAML language host is not built: run `make all-tools`")
    env = {k: v for k, v in os.environ.items() if not k.startswith("VERTEX_TRAINING_ACCEPTANCE")}
    env["PATH"] = f"{TOOLS_BIN}:{env.get('PATH', '')}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "acceptance",
            "-p",
            "no:cacheprovider",
            "-v",
            "--timeout",
            "3600",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"\b7 passed, 1 skipped\b", output), output
    assert "no fake here: runs against Google only" in output
    for scenario, lines in SCENARIOS.items():
        passed = output.index(f"::{scenario} PASSED")
        checked = output[output.index(f"::{scenario} \n") : passed]
        for line in lines:
            assert line in checked, f"{scenario} did not say {line!r}:\n{output}"
        assert "checked: nothing left" in output[passed : passed + 400], output
    assert "sweeper first: " in output and "sweeper last: " in output
    assert re.search(r"cost of the run: [\d.]+ machine-minutes of e2-standard-4 at \$", output)
    assert "invented prices" in output
