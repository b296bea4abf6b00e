"""A Google access token given as secret provider config, on the real engine: a YAML
program's `pulumi up` through the plugin submits its job with that token (the fake
refuses any call without it), and the token shows neither in the engine's output nor in
the exported state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.engine import Project
from tests.test_engine_plugin import missing
from vertex_training.testing.fake_vertex import FakeVertex

pytestmark = [pytest.mark.engine, pytest.mark.polyglot]

REPO = Path(__file__).resolve().parent.parent
TOKEN = "ya29.engine-token-3b9f1c-never-in-state"
IMAGE = "us-docker.pkg.dev/test-project/train/trainer:1"


def program(fake: FakeVertex) -> dict[str, Any]:
    """One training job of a YAML program, through provider/ as its plugin."""
    return {
        "name": "training",
        "runtime": "yaml",
        "plugins": {"providers": [{"name": "vertex-training", "path": str(REPO / "provider")}]},
        "config": {
            "vertex-training:apiEndpoint": fake.address,
            "vertex-training:project": "test-project",
            "vertex-training:region": "us-central1",
        },
        "resources": {
            "train": {
                "type": "vertex-training:TrainingJob",
                "properties": {"job": {"image": IMAGE, "machine": "e2-standard-4"}},
            }
        },
    }


class TestSecretAccessToken:
    """vertex-training:accessToken, set with --secret, through the plugin."""

    def test_the_token_reaches_the_service_and_never_the_state(self, tmp_path: Path) -> None:
        """Every call carries the token; `pulumi stack export` and the output do not."""
        if reason := missing():
            pytest.skip(reason)
        with FakeVertex(queued_s=0.2, pending_s=0.2, run_s=0.5, token=TOKEN) as fake:
            project = Project.of_yaml(tmp_path, program(fake))
            project.run("config", "set", "--secret", "vertex-training:accessToken", TOKEN).check()
            up = project.up().check()
            assert len(fake.jobs) == 1, up.output
            assert {bearer.token for bearer in fake.bearers} == {TOKEN}
            assert TOKEN not in up.output
            exported = project.run("stack", "export").check().stdout
            assert TOKEN not in exported
            # The provider's record holds it, encrypted: revealed, it is there.
            revealed = project.run("stack", "export", "--show-secrets").check().stdout
            assert TOKEN in revealed
            project.run("destroy", "--yes", "--skip-preview").check()
            assert fake.jobs == {}
