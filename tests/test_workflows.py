"""The GitHub workflows (.github/workflows, and the pull-request workflow each template in
templates/ ships), the review action (actions/review/action.yml) and the Dependabot config:
actionlint and zizmor report nothing, every third-party action is pinned to a commit (the
project's own review action to the release tag of this version), every job says what its
token may do, and the pull-request workflow picks the stacks a change touches.

zizmor is pinned in requirements.txt and runs from the virtualenv, offline. actionlint is
built from the Go module proxy into .tools/bin by scripts/install-actionlint.sh (`make
tools`); its check skips only when it is not built and Go is not there to build it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
#: The pull-request workflow each template ships (`pulumi new` copies .github/ too).
TEMPLATE_WORKFLOWS = sorted((REPO / "templates").glob("*/.github/workflows/*.yml"))
TEMPLATES = sorted(p for p in (REPO / "templates").iterdir() if p.is_dir())
#: The composite action that reviews a preview (zizmor audits composite actions too).
REVIEW_ACTION = REPO / "actions" / "review" / "action.yml"
DEPENDABOT = REPO / ".github" / "dependabot.yml"
#: This version of vertex-training, the one source of it.
RELEASE: str = tomllib.loads((REPO / "provider" / "pyproject.toml").read_text())["project"][
    "version"
]
INSTALL_ACTIONLINT = REPO / "scripts" / "install-actionlint.sh"
TOOLS_BIN = Path(os.environ.get("VERTEX_TOOLS_DIR", REPO / ".tools")) / "bin"
ZIZMOR = Path(sys.executable).parent / "zizmor"
#: A step's or a job's `uses:` line: a local action, or owner/repo[/path]@<commit> # vX.Y.Z.
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40} # v\d+(\.\d+)*$")
#: The project's own review action, pinned by release tag: the action installs the
#: vertex-training release its tag names. zizmor's hash-pin rule is waived on that line.
OWN_ACTION = re.compile(
    r"^vertex-training/vertex-training/actions/review@v(\d+\.\d+\.\d+)"
    r" # zizmor: ignore\[unpinned-uses\]$"
)
#: The action that exchanges the OIDC token: the one reason for `id-token: write`.
AUTH_ACTION = "google-github-actions/auth@"
PYPI_ACTION = "pypa/gh-action-pypi-publish@"


def load(path: Path) -> dict[str, Any]:
    """A workflow as data (PyYAML reads the `on` key as True; nothing here needs it)."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path.name} is not a YAML mapping"
    return data


def run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, check=False, timeout=600, **kwargs
    )


def test_there_are_workflows() -> None:
    """The pull-request and deploy workflows are there to check."""
    assert {p.name for p in WORKFLOWS} >= {"pull-request.yml", "deploy.yml"}


def test_every_template_has_a_pull_request_workflow() -> None:
    """Each template ships its pull-request workflow, and nothing else under .github/."""
    shipped = [sorted(p.relative_to(t) for p in (t / ".github").rglob("*.*")) for t in TEMPLATES]
    assert shipped == [[Path(".github/workflows/pull-request.yml")]] * len(TEMPLATES)


@pytest.fixture(scope="module")
def actionlint() -> Path:
    """actionlint at the version the install script names, built first when Go is there."""
    binary = TOOLS_BIN / "actionlint"
    if shutil.which("go"):
        built = run(["bash", str(INSTALL_ACTIONLINT)])
        assert built.returncode == 0, f"scripts/install-actionlint.sh failed:\n{built.stderr}"
    if not binary.exists():
        pytest.skip(
            f"actionlint is not built ({binary}) and Go is not installed to build it: "
            "install Go (go.dev/doc/install), then run `make test`"
        )
    return binary


class TestActionlint:
    def test_reports_nothing(self, actionlint: Path) -> None:
        """actionlint finds no error in any workflow."""
        result = run([str(actionlint), "-no-color", *map(str, WORKFLOWS + TEMPLATE_WORKFLOWS)])
        assert (result.returncode, result.stdout + result.stderr) == (0, "")

    def test_is_the_version_the_script_names(self, actionlint: Path) -> None:
        """The binary is the release scripts/install-actionlint.sh pins."""
        pinned = re.search(r"^VERSION=(\S+)$", INSTALL_ACTIONLINT.read_text(), re.M)
        assert pinned is not None
        version = run([str(actionlint), "-version"]).stdout.splitlines()[0]
        assert version.lstrip("v") == pinned[1]


def zizmor(*inputs: Path) -> subprocess.CompletedProcess[str]:
    assert ZIZMOR.exists(), f"{ZIZMOR} is missing: pip install -r requirements.txt"
    return run(
        [str(ZIZMOR), "--offline", "--no-progress", "--color", "never", *map(str, inputs)],
        env={**os.environ, "NO_COLOR": "1"},
    )


class TestZizmor:
    def test_reports_nothing_on_the_workflows(self) -> None:
        """zizmor's audits (offline, regular persona) find nothing in the workflows."""
        result = zizmor(*WORKFLOWS)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "No findings to report" in result.stdout + result.stderr

    def test_reports_nothing_on_the_template_workflows(self) -> None:
        """Nor in the workflows the templates ship (the review action's tag pin is
        waived on its line, `# zizmor: ignore[unpinned-uses]`)."""
        result = zizmor(*TEMPLATE_WORKFLOWS)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "No findings to report" in result.stdout + result.stderr

    def test_reports_nothing_on_the_review_action(self) -> None:
        """Nor in the composite review action."""
        result = zizmor(REVIEW_ACTION)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "No findings to report" in result.stdout + result.stderr

    def test_reports_nothing_on_the_dependabot_config(self) -> None:
        """zizmor's Dependabot audits find nothing in .github/dependabot.yml."""
        result = zizmor(DEPENDABOT)
        assert result.returncode == 0, result.stdout + result.stderr
        assert "No findings to report" in result.stdout + result.stderr


def uses_lines(path: Path) -> list[str]:
    """What each `uses:` line of a workflow or an action names, comment included."""
    return [
        line.split("uses:", 1)[1].strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if re.match(r"^\s*(- )?uses:", line)
    ]


def unpinned(uses: list[str]) -> list[str]:
    """The actions not pinned to a commit with their release in a comment, but for local
    actions and the project's own review action at a release tag."""
    return [u for u in uses if not (u.startswith("./") or PINNED.match(u) or OWN_ACTION.match(u))]


@pytest.mark.parametrize(
    "path", WORKFLOWS + TEMPLATE_WORKFLOWS, ids=lambda p: str(p.relative_to(REPO))
)
class TestWorkflow:
    def test_third_party_actions_are_pinned_to_commits(self, path: Path) -> None:
        """Every `uses:` names a full commit SHA and, in a comment, the release it is."""
        lines = uses_lines(path)
        jobs = load(path)["jobs"].values()
        parsed = [s["uses"] for j in jobs for s in [j, *j.get("steps", [])] if "uses" in s]
        assert len(lines) == len(parsed), "every `uses:` should be on a line of its own"
        assert unpinned(lines) == []

    def test_every_job_sets_its_permissions(self, path: Path) -> None:
        """The workflow grants nothing by default and each job names what its token may do."""
        workflow = load(path)
        assert workflow.get("permissions") == {}
        assert [name for name, job in workflow["jobs"].items() if "permissions" not in job] == []

    def test_only_jobs_that_authenticate_get_an_oidc_token(self, path: Path) -> None:
        """`id-token: write` is granted exactly to the jobs that use google-github-actions/auth
        and to those that publish by trusted publishing (PyPI's action, `npm publish`)."""
        for name, job in load(path)["jobs"].items():
            steps = job.get("steps", [])
            uses = [step.get("uses", "") for step in steps]
            authenticates = any(u.startswith((AUTH_ACTION, PYPI_ACTION)) for u in uses) or any(
                "npm publish" in step.get("run", "") for step in steps
            )
            assert (job["permissions"].get("id-token") == "write") == authenticates, name

    def test_scripts_take_no_expressions(self, path: Path) -> None:
        """No `${{ }}` inside a `run:` or github-script body: values come in through env."""
        for name, job in load(path)["jobs"].items():
            for step in job.get("steps", []):
                script = step.get("run", "") + step.get("with", {}).get("script", "")
                assert "${{" not in script, f"{name}: {step.get('name', step.get('uses'))}"


class TestReviewAction:
    """actions/review/action.yml, by the rules the workflows keep."""

    def steps(self) -> list[dict[str, Any]]:
        return list(load(REVIEW_ACTION)["runs"]["steps"])

    def test_its_actions_are_pinned_to_commits(self) -> None:
        """Each action it uses names a full commit SHA and its release in a comment."""
        lines = uses_lines(REVIEW_ACTION)
        assert len(lines) == len([s for s in self.steps() if "uses" in s])
        assert lines and unpinned(lines) == []

    def test_scripts_take_no_expressions_and_name_their_shell(self) -> None:
        """No `${{ }}` inside a `run:` (values come in through env), and each `run:` says
        its shell, as a composite action must."""
        runs = [s for s in self.steps() if "run" in s]
        assert runs
        for step in runs:
            assert "${{" not in step["run"], step.get("name")
            assert step.get("shell") == "bash", step.get("name")


@pytest.mark.parametrize("path", TEMPLATE_WORKFLOWS, ids=lambda p: p.parts[-4])
class TestTemplateWorkflow:
    """The pull-request workflow a template ships: its own language's set-up, then the
    review of the dev stack, by the project's action at this release."""

    def job(self, path: Path) -> dict[str, Any]:
        [job] = load(path)["jobs"].values()
        return dict(job)

    def step(self, path: Path, action: str) -> dict[str, Any]:
        [step] = [s for s in self.job(path)["steps"] if s.get("uses", "").startswith(action)]
        return dict(step)

    def test_calls_the_review_action_of_this_release_for_the_dev_stack(self, path: Path) -> None:
        """The review action is pinned at v<this version> (provider/pyproject.toml)."""
        [own] = [found[1] for u in uses_lines(path) if (found := OWN_ACTION.match(u))]
        assert own == RELEASE
        review = self.step(path, "vertex-training/vertex-training/actions/review@")
        assert review["with"] == {"stack": "dev"}

    def test_may_read_comment_and_authenticate(self, path: Path) -> None:
        """The job reads the repository, comments, and exchanges an OIDC token; nothing else."""
        assert self.job(path)["permissions"] == {
            "contents": "read",
            "id-token": "write",
            "pull-requests": "write",
        }

    def test_authenticates_with_no_key_and_not_for_a_fork(self, path: Path) -> None:
        """Workload Identity Federation from repository variables; a fork's pull request
        (no OIDC token) skips the step, and the review action says why."""
        auth = self.step(path, AUTH_ACTION)
        assert auth["with"] == {
            "workload_identity_provider": "${{ vars.GCP_WORKLOAD_IDENTITY_PROVIDER }}",
            "service_account": "${{ vars.GCP_PLAN_SERVICE_ACCOUNT }}",
        }
        assert auth["if"] == "github.event.pull_request.head.repo.full_name == github.repository"
        assert self.job(path)["env"]["PULUMI_BACKEND_URL"] == "${{ vars.PULUMI_BACKEND_URL }}"

    def test_sets_up_its_own_language_then_pulumi_then_reviews(self, path: Path) -> None:
        """The template's language (none for YAML), the Pulumi CLI, the program's
        dependencies, authentication, then the review."""
        language = path.parts[-4].removeprefix("vertex-training-")
        setup = {
            "python": ["actions/setup-python@"],
            "typescript": ["actions/setup-node@"],
            "go": ["actions/setup-go@"],
            "yaml": [],
        }[language]
        order = ["actions/checkout@", *setup, "pulumi/actions@", "pulumi install", AUTH_ACTION]
        order.append("vertex-training/vertex-training/actions/review@")
        steps = [s.get("uses") or s["run"] for s in self.job(path)["steps"]]
        assert [next((o for o in order if s.startswith(o)), s) for s in steps] == order


def find_stacks_script() -> str:
    """The `run:` of the pull-request workflow's step that finds the stacks."""
    steps = load(REPO / ".github" / "workflows" / "pull-request.yml")["jobs"]["stacks"]["steps"]
    return next(step["run"] for step in steps if step.get("id") == "find")


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    """A git repository with the three stacks, a program and a README, committed once."""
    if not (shutil.which("git") and shutil.which("jq")):
        pytest.skip("git and jq are needed to run the workflow's step here")
    for path, text in {
        "stacks/Pulumi.local.yaml": "config: {}\n",
        "stacks/Pulumi.dev.yaml": "config: {}\n",
        "stacks/Pulumi.prod.yaml": "config: {}\n",
        "provider/vertex_training/__init__.py": "",
        "README.md": "# x\n",
    }.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "base")
    return tmp_path


def git(repository: Path, *args: str) -> str:
    identity = ["-c", "user.name=test", "-c", "user.email=test@example.com"]
    return subprocess.run(
        ["git", *identity, *args], cwd=repository, capture_output=True, text=True, check=True
    ).stdout.strip()


def stacks_after(repository: Path, changes: dict[str, str | None]) -> str:
    """The step's `stacks` output once ``changes`` (path: text, or None to delete) land."""
    base = git(repository, "rev-parse", "HEAD")
    for path, text in changes.items():
        target = repository / path
        if text is None:
            target.unlink()
        else:
            target.write_text(text)
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "--allow-empty", "-m", "change")
    output = repository / "output"
    result = subprocess.run(
        ["bash", "-c", find_stacks_script()],
        cwd=repository,
        env={**os.environ, "BASE_SHA": base, "GITHUB_OUTPUT": str(output)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return output.read_text().removeprefix("stacks=").strip()


class TestFindStacks:
    def test_a_stack_file_touches_its_stack_but_local_is_never_previewed(
        self, repository: Path
    ) -> None:
        """Changing the dev and the local stack files previews dev alone."""
        changes = {"stacks/Pulumi.dev.yaml": "config: {a: 1}\n"}
        changes["stacks/Pulumi.local.yaml"] = "config: {a: 1}\n"
        assert stacks_after(repository, dict(changes)) == '["dev"]'

    def test_a_program_change_touches_every_stack_but_local(self, repository: Path) -> None:
        """A change under provider/ previews every non-local stack."""
        changes = {"provider/vertex_training/__init__.py": "x = 1\n"}
        assert stacks_after(repository, dict(changes)) == '["dev","prod"]'

    def test_a_deleted_stack_and_other_files_touch_nothing(self, repository: Path) -> None:
        """A deleted stack file has nothing to preview; a README change touches no stack."""
        changes = {"stacks/Pulumi.prod.yaml": None, "README.md": "# y\n"}
        assert stacks_after(repository, changes) == "[]"


class TestPrices:
    def test_the_pull_request_refreshes_prices_before_the_plan(self) -> None:
        """The preview job authenticates, refreshes prices, then plans, in that order."""
        steps = load(REPO / ".github" / "workflows" / "pull-request.yml")["jobs"]["preview"][
            "steps"
        ]
        names = [step.get("name", step.get("uses", "")) for step in steps]
        refresh = next(i for i, s in enumerate(steps) if "make prices" in s.get("run", ""))
        auth = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith(AUTH_ACTION))
        plan = names.index("Plan")
        assert auth < refresh < plan, names


class TestAcceptance:
    def job(self) -> dict[str, Any]:
        return dict(load(REPO / ".github" / "workflows" / "acceptance.yml")["jobs"]["acceptance"])

    def test_sweeps_before_the_suite_and_after_it_even_when_it_fails(self) -> None:
        """The sweeper runs after authenticating and before the suite, and again after it
        whatever became of it (`if: always()`)."""
        steps = self.job()["steps"]
        runs = [step.get("run", "") for step in steps]
        auth = next(i for i, s in enumerate(steps) if s.get("uses", "").startswith(AUTH_ACTION))
        sweeps = [i for i, run in enumerate(runs) if run == "make acceptance-sweep"]
        suite = runs.index("make acceptance")
        assert len(sweeps) == 2 and auth < sweeps[0] < suite < sweeps[1], runs
        assert steps[sweeps[1]].get("if") == "always()"

    def test_is_skipped_without_a_project_and_authenticates_with_no_key(self) -> None:
        """No project configured: the job does not run. Credentials come from Workload
        Identity Federation, never a key."""
        job = self.job()
        assert job["if"] == "vars.VERTEX_TRAINING_ACCEPTANCE_PROJECT != ''"
        [auth] = [s for s in job["steps"] if s.get("uses", "").startswith(AUTH_ACTION)]
        assert set(auth["with"]) == {"workload_identity_provider", "service_account"}
