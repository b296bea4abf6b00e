"""A Pulumi secret in a job's env stays encrypted in the state, on the real engine.

`pulumi config set --secret --path 'vertex-training:jobs.<job>.env.TOKEN' ...` makes the
whole `vertex-training:jobs` key secret; the program then keeps every job's config, and
everything derived from it, secret in the state. The job still gets the real value.
The job's package is a `package_path` directory, so this also runs trainer packaging
(sdist build, local package URI) through the engine.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.engine import Project, tools_missing

pytestmark = [
    pytest.mark.engine,
    pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or ""),
]

TOKEN = "tok-3b9f1c-plaintext-never-in-state"

TOKEN_PACKAGE = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "tokenjob"
        version = "0.1"
    """,
    "tokenjob/__init__.py": "",
    "tokenjob/main.py": """
        import os
        from pathlib import Path

        model_dir = Path(os.environ["AIP_MODEL_DIR"])
        model_dir.mkdir(parents=True, exist_ok=True)
        (model_dir / "token.txt").write_text(os.environ["TOKEN"])
    """,
}


def write_package(root: Path) -> None:
    for rel, text in TOKEN_PACKAGE.items():
        path = root / "tokenjob" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


class TestSecretEnv:
    """A secret env value: encrypted in state and stack file, real in the job."""

    def test_secret_stays_encrypted_and_reaches_the_job(self, tmp_path: Path) -> None:
        """stack export has no plaintext token; the job wrote the real token."""
        project = Project.create(tmp_path)
        write_package(project.root)
        project.write_stack(
            {
                "vertex-training:backend": "local",
                "gcp:region": "us-central1",
                "vertex-training:jobs": {
                    "example": {
                        "python_package": {"package_path": "tokenjob", "module": "tokenjob.main"},
                        "env": {"MODE": "test"},
                        "wait": "succeeded",
                    }
                },
            }
        )
        project.run(
            "config", "set", "--secret", "--path", "vertex-training:jobs.example.env.TOKEN", TOKEN
        ).check()
        stack_file = (project.root / "stacks" / f"Pulumi.{project.stack}.yaml").read_text()
        assert TOKEN not in stack_file and "secure:" in stack_file

        up = project.up().check()
        assert TOKEN not in up.output

        state = project.run("stack", "export").check().stdout
        assert TOKEN not in state
        assert "4dabf18193072939515e22adb298388d" in state  # Pulumi's secret signature
        revealed = project.run("stack", "export", "--show-secrets").check().stdout
        assert TOKEN in revealed  # it is in the state, encrypted

        job = project.outputs()["jobs"]["example"]
        assert job["state"] == "SUCCEEDED"
        assert (Path(job["model_directory"]) / "token.txt").read_text() == TOKEN

        preview = project.run("preview", "--diff", "--expect-no-changes")
        assert preview.returncode == 0, preview.output
        assert TOKEN not in preview.output
