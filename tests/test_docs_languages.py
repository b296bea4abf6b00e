"""The programs the per-language pages show (docs/languages/) are programs of the SDKs as
they are: the Go page's compiles against sdk/go, the TypeScript page's type-checks
against the packed npm SDK, and the Python page's names only what pulumi_vertex_training
has. A page that drifts from the generated SDK fails here. The same programs with a
study's key misspelt fail `tsc` and `go vet`, naming the key: the study is typed; so do
they with a metric's goal none of its values (an enum). What a refusal tells a program to
write (an inherited accelerator's way out) type-checks too."""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.engine import go_env
from tests.release import RELEASE, REPO, SDK, copy_go_sdk, run
from vertex_training import stackconfig
from vertex_training.errors import SpecError
from vertex_training.plugin.schema import GO_MODULE

pytestmark = pytest.mark.polyglot

PAGES = REPO / "docs" / "languages"


def blocks(page: str, language: str) -> list[str]:
    """The fenced blocks of ``language`` on the page, each a program of its own (a first
    job, a pipeline)."""
    text = (PAGES / page).read_text()
    found = re.findall(rf"^```{language}\n(.*?)^```", text, re.S | re.M)
    assert found, f"docs/languages/{page} has no {language} block"
    return found


def block(page: str, language: str) -> str:
    """The first fenced block of ``language`` on the page."""
    return blocks(page, language)[0]


def refused(
    path: Path,
    page: str,
    written: str,
    wrong: str,
    *,
    command: list[str],
    env: dict[str, str] | None = None,
) -> str:
    """What ``command`` says of the page's program with ``written`` replaced by ``wrong``
    (written to ``path``), which it must refuse."""
    mistaken = page.replace(written, wrong)
    assert mistaken != page, f"the page's program has no {written}"
    path.write_text(mistaken)
    failed = subprocess.run(
        command, check=False, cwd=path.parent, env=env, capture_output=True, text=True
    )
    assert failed.returncode != 0, failed.stdout + failed.stderr
    return failed.stdout + failed.stderr


@pytest.mark.usefixtures("go_sdk")
def test_the_go_page_compiles(tmp_path: Path) -> None:
    if not shutil.which("go"):
        pytest.skip("go is not installed")
    sdk = copy_go_sdk(tmp_path / "sdk-go")
    program = tmp_path / "program"
    program.mkdir()
    (program / "go.mod").write_text(
        f"module example\n\ngo 1.25\n\nrequire {GO_MODULE} v0.0.0\n\nreplace {GO_MODULE} => {sdk}\n"
    )
    env = {**os.environ, **go_env()}
    for source in reversed(blocks("go.md", "go")):  # the first one last: it is misspelt next
        (program / "main.go").write_text(source)
        run("go", "mod", "tidy", cwd=program, env=env)
        run("go", "vet", ".", cwd=program, env=env)
    # A misspelt key, and a value that is none of a key's choices (an enum), fail.
    for written, wrong in (("MaxTrials:", "MaxTrial:"), ("GoalMaximize", "GoalMaximise")):
        page = block("go.md", "go")
        said = refused(
            program / "main.go", page, written, wrong, command=["go", "vet", "."], env=env
        )
        assert wrong.rstrip(":") in said, said


def test_the_typescript_page_type_checks(tmp_path: Path, nodejs_sdk: Path) -> None:
    package = {
        "name": "example",
        "dependencies": {"@pulumi/pulumi": "^3.259.0", "vertex-training": f"file:{nodejs_sdk}"},
        "devDependencies": {"@types/node": "^20", "typescript": "^5"},
    }
    (tmp_path / "package.json").write_text(json.dumps(package))
    tsconfig = {"compilerOptions": {"strict": True, "noEmit": True, "skipLibCheck": True}}
    (tmp_path / "tsconfig.json").write_text(json.dumps({**tsconfig, "files": ["index.ts"]}))
    run("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", cwd=tmp_path)
    for source in blocks("typescript.md", "typescript"):
        (tmp_path / "index.ts").write_text(source)
        run("npx", "tsc", "-p", ".", cwd=tmp_path)
    page = block("typescript.md", "typescript")
    for written, wrong in (("maxTrials:", "maxTrial:"), ('"MAXIMIZE"', '"MAXIMISE"')):
        said = refused(
            tmp_path / "index.ts", page, written, wrong, command=["npx", "tsc", "-p", "."]
        )
        assert wrong.rstrip(":") in said, said
    (tmp_path / "index.ts").write_text(ADVICE % {"none": json.dumps(inherited_advice())})
    run("npx", "tsc", "-p", ".", cwd=tmp_path)


#: A program that writes what a refusal advises (``%(none)s``: the value the refusal of an
#: inherited accelerator tells a worker pool to write).
ADVICE = """\
import * as vertex from "vertex-training";

new vertex.TrainingJob("train", { job: {
    image: "us-docker.pkg.dev/acme-ml/train/trainer:1",
    machine: "n1-standard-8",
    accelerator: { type: "NVIDIA_TESLA_T4", count: 1 },
    workers: { replicas: 2, machine: "e2-standard-8", accelerator: %(none)s },
} });
"""


def inherited_advice() -> Any:
    """The value the refusal of a worker pool's inherited accelerator says to write, read
    from the refusal's own words (``write accelerator: VALUE here for none``)."""
    keys = {
        "image": "us-docker.pkg.dev/acme-ml/train/trainer:1",
        "machine": "n1-standard-8",
        "accelerator": {"type": "NVIDIA_TESLA_T4"},
        "workers": {"replicas": 2, "machine": "e2-standard-8"},
    }
    settings = stackconfig.StackSettings(stack="dev", project="acme-ml", region="us-central1")
    with pytest.raises(SpecError) as refused:
        stackconfig.parse_job("train", keys, settings)
    [issue] = refused.value.issues
    found = re.search(r"write accelerator: (\{.*?\}) here for none", issue.message)
    assert found, issue.message
    return yaml.safe_load(found[1])


def test_the_python_page_names_what_the_sdk_has() -> None:
    trees = [ast.parse(source) for source in blocks("python.md", "python")]
    used = {
        node.attr
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "vertex"
    }
    source = "\n".join(
        path.read_text() for path in (SDK / "python" / "pulumi_vertex_training").glob("*.py")
    )
    defined = set(re.findall(r"^class (\w+)", source, re.M))
    assert used and used <= defined, used - defined


def test_the_docs_name_this_release() -> None:
    """Where the README and the language pages name a release to install, it is this one
    (a release bumps them with the version, docs/release.md)."""
    named = re.compile(
        r"vertex-training==(\d+\.\d+\.\d+)|resource vertex-training (\d+\.\d+\.\d+)"
        r"|sdk/go@v(\d+\.\d+\.\d+)|version: (\d+\.\d+\.\d+)"
    )
    pages = [REPO / "README.md", *sorted(PAGES.glob("*.md"))]
    found = {
        (page.name, version)
        for page in pages
        for match in named.finditer(page.read_text())
        for version in match.groups()
        if version
    }
    assert found, "the pages name no release"
    assert {version for _, version in found} == {RELEASE}, sorted(found)
