"""The pull-request review action (actions/review): the comment its script builds from a
recorded review, that comment's life on a pull request through a fake of GitHub's REST API
on loopback, and the action's review step (action.yml's own `run:` line, running
review.py) with stand-ins for `pulumi` and `vertex-training` that print a recorded preview
and review.

The fake follows GitHub's REST reference for issue comments
(https://docs.github.com/en/rest/issues/comments): the listing pages by `per_page` (30 by
default, 100 at most) and `page` and says where the next page is in a `Link` header;
POST creates a comment (201), PATCH on /issues/comments/{id} edits one (200); a body over
65,536 characters is refused (422), and a token that may not write gets 403.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.prices import fake_snapshot
from vertex_training.catalog.prices import save_snapshot

REPO = Path(__file__).resolve().parent.parent
#: `pulumi preview --json` of a YAML program's change to its jobs, as the engine printed it
#: (less the engine's own fields: source positions, timestamps, the fake's address).
RECORDED_CHANGE = REPO / "tests" / "recorded" / "preview-yaml-change.json"
ACTION = REPO / "actions" / "review"
COMMENT = ACTION / "comment.py"
REPOSITORY = "acme/ml"
PULL_REQUEST = 7
COMMIT = "0123456789abcdef0123456789abcdef01234567"
RUN_URL = f"https://github.com/{REPOSITORY}/actions/runs/42"
FOOTER = f"<sub>`0123456` · [workflow run]({RUN_URL})</sub>"
MARKER = "<!-- vertex-training review: dev -->"
#: GitHub's limit on a comment's body, in characters.
MAX_BODY = 65_536
#: The token of the workflow (it may write comments), and of a person on the pull request.
ACTIONS_TOKEN = "ghs_actions"
READ_ONLY_TOKEN = "ghs_read_only"

#: A review as `vertex-training review --format markdown` prints it for the dev stack.
RECORDED_REVIEW = """\
### `dev`: what this change does (`pulumi preview` against the stack's state)

Costs from the Cloud Billing Catalog: prices read 2026-05-04, list prices in USD.

2 to submit, 1 to replace, 1 to delete; the jobs this change submits cost at most $61.45.

| job | change | pools | estimated cost |
| --- | --- | --- | --- |
| `example` | submit | chief: 1 x n1-standard-4 | $0.19/h, at most $0.19 |
| `finetune` | submit | chief: 1 x a2-highgpu-1g + 1 x NVIDIA_TESLA_A100 | $3.67/h, at most $58.74 |
| `eval` | replace | chief: 1 x n1-standard-8 + 1 x NVIDIA_TESLA_T4 | $0.63/h, at most $2.52 |
| `sweep` | delete | chief: 4 x n1-standard-4 | |

- `eval` (replace): `accelerator.count` 0 -> 1 (forces replacement)

**Rules**

- :warning: max_cost_per_job (advisory) `finetune`: may cost up to $58.74, more than $50.00
- :white_check_mark: every job keeps require_timeout, spot_only
"""

#: `pulumi preview --json` of a program whose change submits one job.
RECORDED_PREVIEW = {
    "config": {"vertex-training:region": "us-central1"},
    "steps": [
        {
            "op": "create",
            "urn": "urn:pulumi:dev::acme-ml::vertex-training:index:TrainingJob::example",
            "provider": "urn:pulumi:dev::acme-ml::pulumi:providers:vertex-training::default",
            "newState": {
                "type": "vertex-training:index:TrainingJob",
                "inputs": {"job": {"machine": "n1-standard-4", "wait": "succeeded"}},
            },
        }
    ],
    "changeSummary": {"create": 1},
}


@dataclass
class FakeGitHub:
    """GitHub's issue-comment endpoints as the REST reference describes them, on loopback.
    Each token is a user; `requests` lists each call as "METHOD path?query"."""

    url: str = ""
    comments: list[dict[str, Any]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    users: dict[str, dict[str, str]] = field(
        default_factory=lambda: {
            ACTIONS_TOKEN: {"login": "github-actions[bot]", "type": "Bot"},
            READ_ONLY_TOKEN: {"login": "octocat", "type": "User"},
        }
    )

    def add(self, body: str, login: str = "octocat") -> dict[str, Any]:
        """A comment already on the pull request, by ``login``."""
        comment = {
            "id": 1000 + len(self.comments),
            "body": body,
            "user": {"login": login, "type": "Bot" if login.endswith("[bot]") else "User"},
            "html_url": "",
            "issue_url": f"{self.url}/repos/{REPOSITORY}/issues/{PULL_REQUEST}",
        }
        comment["html_url"] = (
            f"https://github.com/{REPOSITORY}/pull/{PULL_REQUEST}#issuecomment-{comment['id']}"
        )
        self.comments.append(comment)
        return comment

    def handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the test reads `requests`."""

            def answer(self, status: int, data: Any, link: str = "") -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(payload)))
                if link:
                    self.send_header("Link", link)
                self.end_headers()
                self.wfile.write(payload)

            def user(self) -> dict[str, str] | None:
                token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                return fake.users.get(token)

            def body(self) -> str | None:
                length = int(self.headers.get("Content-Length", "0"))
                data = json.loads(self.rfile.read(length) or b"{}")
                return data.get("body") if isinstance(data, dict) else None

            def refused(self, user: dict[str, str] | None, text: str | None) -> bool:
                """Answers 401, 403 or 422 as GitHub does, when the write may not happen."""
                if user is None:
                    self.answer(401, {"message": "Bad credentials"})
                elif user["login"] != "github-actions[bot]":
                    self.answer(403, {"message": "Resource not accessible by integration"})
                elif text is None or len(text) > MAX_BODY:
                    reason = "body is too long (maximum is 65536 characters)"
                    self.answer(422, {"message": "Validation Failed", "errors": [reason]})
                else:
                    return False
                return True

            def do_GET(self) -> None:
                url = urllib.parse.urlsplit(self.path)
                fake.requests.append(f"GET {self.path}")
                if self.user() is None:
                    self.answer(401, {"message": "Bad credentials"})
                    return
                if url.path != f"/repos/{REPOSITORY}/issues/{PULL_REQUEST}/comments":
                    self.answer(404, {"message": "Not Found"})
                    return
                query = dict(urllib.parse.parse_qsl(url.query))
                per_page = min(int(query.get("per_page", 30)), 100)
                page = int(query.get("page", 1))
                last = max(1, -(-len(fake.comments) // per_page))
                shown = fake.comments[(page - 1) * per_page : page * per_page]
                at = f"{fake.url}{url.path}?per_page={per_page}&page="
                links = []
                if page < last:
                    links += [f'<{at}{page + 1}>; rel="next"', f'<{at}{last}>; rel="last"']
                if page > 1:
                    links += [f'<{at}{page - 1}>; rel="prev"', f'<{at}1>; rel="first"']
                self.answer(200, shown, ", ".join(links))

            def do_POST(self) -> None:
                fake.requests.append(f"POST {self.path}")
                user, text = self.user(), self.body()
                if self.path != f"/repos/{REPOSITORY}/issues/{PULL_REQUEST}/comments":
                    self.answer(404, {"message": "Not Found"})
                elif not self.refused(user, text):
                    assert user is not None and text is not None
                    self.answer(201, fake.add(text, user["login"]))

            def do_PATCH(self) -> None:
                fake.requests.append(f"PATCH {self.path}")
                user, text = self.user(), self.body()
                found = re.fullmatch(rf"/repos/{REPOSITORY}/issues/comments/(\d+)", self.path)
                comment = next(
                    (c for c in fake.comments if found and c["id"] == int(found[1])), None
                )
                if comment is None:
                    self.answer(404, {"message": "Not Found"})
                elif not self.refused(user, text):
                    comment["body"] = text
                    self.answer(200, comment)

        return Handler


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    """The fake GitHub API, serving on an ephemeral loopback port for the test."""
    fake = FakeGitHub()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), fake.handler())
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()


def no_proxy() -> dict[str, str]:
    """This process's environment with loopback kept away from any proxy it names."""
    return {**os.environ, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


def comment(
    review: Path, *args: str, github: FakeGitHub | None = None, token: str = ACTIONS_TOKEN
) -> subprocess.CompletedProcess[str]:
    """actions/review/comment.py for the dev stack on ``review``."""
    env = no_proxy()
    env.pop("GITHUB_TOKEN", None)
    if github is not None:
        env.update(GITHUB_API_URL=github.url, GITHUB_TOKEN=token)
    command = [sys.executable, str(COMMENT), "--stack", "dev", "--review", str(review)]
    command += ["--commit", COMMIT, "--run-url", RUN_URL, *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def post(review: Path, github: FakeGitHub, token: str = ACTIONS_TOKEN) -> str:
    """Posts the review on the fake's pull request: what comment.py says it did."""
    where = ["--repository", REPOSITORY, "--pull-request", str(PULL_REQUEST)]
    result = comment(review, *where, github=github, token=token)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def dry_run(review: Path, tmp_path: Path) -> str:
    """The comment comment.py would post for ``review``."""
    out = tmp_path / "comment.md"
    result = comment(review, "--body-out", str(out))
    assert result.returncode == 0, result.stderr
    return out.read_text(encoding="utf-8")


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """The recorded review, in a file."""
    path = tmp_path / "review.md"
    path.write_text(RECORDED_REVIEW, encoding="utf-8")
    return path


def cut_apart(body: str) -> tuple[str, int, str]:
    """A cut comment's review before the note, the characters the note says are left out,
    and the review after it."""
    inner = body.removeprefix(f"{MARKER}\n").removesuffix(f"\n\n{FOOTER}\n")
    note = re.search(
        r"\n> \*\*([\d,]+) characters of the review are left out here\*\*: the full review "
        r"is in the step summary of the workflow run\.\n\n",
        inner,
    )
    assert note is not None, "no note where the review was cut"
    return inner[: note.start()], int(note[1].replace(",", "")), inner[note.end() :]


def long_review(tmp_path: Path, rows: int = 4000) -> tuple[Path, str]:
    """A review whose job table is far over a comment's limit, and its text."""
    lines = RECORDED_REVIEW.splitlines()
    table_end = lines.index("| `sweep` | delete | chief: 4 x n1-standard-4 | |")
    extra = [
        f"| `sweep-{n:04d}` | submit | chief: 1 x n1-standard-4 | $0.19/h |" for n in range(rows)
    ]
    text = "\n".join([*lines[:table_end], *extra, *lines[table_end:]]) + "\n"
    path = tmp_path / "long.md"
    path.write_text(text, encoding="utf-8")
    return path, text


class TestCommentBody:
    """The comment comment.py builds, written out with --body-out (nothing posted)."""

    def test_is_the_marker_the_review_and_a_footer(self, recorded: Path, tmp_path: Path) -> None:
        """The marker line, the review as it is, then the commit and the workflow run."""
        assert dry_run(recorded, tmp_path) == f"{MARKER}\n{RECORDED_REVIEW}\n{FOOTER}\n"

    def test_a_long_review_keeps_its_start_and_end_within_the_limit(self, tmp_path: Path) -> None:
        """A review over the limit loses whole lines from its middle, where a note says how
        many characters and where the full review is; the comment fits."""
        path, text = long_review(tmp_path)
        body = dry_run(path, tmp_path)
        assert len(text) > MAX_BODY >= len(body) > MAX_BODY - 200
        head, left_out, tail = cut_apart(body)
        assert head.startswith("### `dev`: what this change does") and head.endswith("|\n")
        assert tail.startswith("| `sweep-") and tail.endswith("spot_only")
        assert text.startswith(head) and f"\n{tail}\n" in text
        assert left_out == len(text.strip("\n")) - len(head) - len(tail)

    def test_a_code_block_cut_through_is_closed_and_opened_again(self, tmp_path: Path) -> None:
        """When the cut falls inside a fenced block, the block ends before the note and
        starts again after it, so the note reads as text and the rest as code."""
        log = "\n".join(f"error: step {n} failed" for n in range(8000))
        path = tmp_path / "log.md"
        path.write_text(f"### `dev`: the preview failed\n\n````text\n{log}\n````\n")
        body = dry_run(path, tmp_path)
        assert len(body) <= MAX_BODY
        head, _, tail = cut_apart(body)
        assert head.startswith("### `dev`: the preview failed\n\n````text\nerror: step 0")
        assert head.endswith(" failed\n````\n")
        assert tail.startswith("````text\nerror: step ")
        assert tail.endswith("error: step 7999 failed\n````")


class TestCommentOnPullRequest:
    """comment.py against the fake GitHub: one comment per stack, edited in place."""

    def test_the_first_run_posts_and_the_next_edits_the_same_comment(
        self, recorded: Path, github: FakeGitHub, tmp_path: Path
    ) -> None:
        """A first run creates the comment; a run with a changed review edits it, and the
        pull request still has that one comment of the stack's."""
        assert post(recorded, github).startswith("posted https://github.com/acme/ml/pull/7#")
        [first] = github.comments
        assert first["body"] == f"{MARKER}\n{RECORDED_REVIEW}\n{FOOTER}\n"

        changed = tmp_path / "changed.md"
        changed.write_text(RECORDED_REVIEW.replace("at most $61.45", "at most $2.71"))
        assert post(changed, github) == f"edited {first['html_url']}"
        assert [c["id"] for c in github.comments] == [first["id"]]
        assert "at most $2.71" in github.comments[0]["body"]
        assert [r.split("?")[0] for r in github.requests] == [
            "GET /repos/acme/ml/issues/7/comments",
            "POST /repos/acme/ml/issues/7/comments",
            "GET /repos/acme/ml/issues/7/comments",
            f"PATCH /repos/acme/ml/issues/comments/{first['id']}",
        ]

    def test_other_comments_are_left_alone(self, recorded: Path, github: FakeGitHub) -> None:
        """A person's comment, and the review of another stack, are not the dev stack's:
        the run posts its own and edits neither."""
        person = github.add("LGTM, but <!-- vertex-training review: dev --> is odd", "octocat")
        prod = github.add("<!-- vertex-training review: prod -->\n### `prod`: ...", "bot[bot]")
        post(recorded, github)
        assert [c["body"] for c in github.comments[:2]] == [person["body"], prod["body"]]
        assert github.comments[2]["body"].startswith(MARKER)
        assert not any(r.startswith("PATCH") for r in github.requests)

    def test_the_comment_is_found_on_a_later_page(self, recorded: Path, github: FakeGitHub) -> None:
        """The listing is read page after page, as its Link headers lead, 100 at a time."""
        for n in range(150):
            github.add(f"comment {n}")
        ours = github.add(f"{MARKER}\nan older review")
        assert post(recorded, github) == f"edited {ours['html_url']}"
        assert github.requests[:2] == [
            "GET /repos/acme/ml/issues/7/comments?per_page=100",
            "GET /repos/acme/ml/issues/7/comments?per_page=100&page=2",
        ]

    def test_a_long_review_is_posted_within_the_limit(
        self, github: FakeGitHub, tmp_path: Path
    ) -> None:
        """GitHub takes the cut comment (it refuses a body over 65,536 characters)."""
        path, _ = long_review(tmp_path)
        post(path, github)
        [posted] = github.comments
        assert len(posted["body"]) <= MAX_BODY

    def test_a_token_that_may_not_comment_fails_with_the_permission_it_needs(
        self, recorded: Path, github: FakeGitHub
    ) -> None:
        """GitHub's 403 ends the run with status 1 and names `pull-requests: write`."""
        where = ["--repository", REPOSITORY, "--pull-request", str(PULL_REQUEST)]
        result = comment(recorded, *where, github=github, token=READ_ONLY_TOKEN)
        assert result.returncode == 1
        assert "403 Resource not accessible by integration" in result.stderr
        assert "`pull-requests: write`" in result.stderr
        assert github.comments == []


def action() -> dict[str, Any]:
    """actions/review/action.yml as data."""
    data = yaml.safe_load((ACTION / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def step(step_id: str) -> dict[str, Any]:
    """The action's step with the given id."""
    return dict(next(s for s in action()["runs"]["steps"] if s.get("id") == step_id))


#: An expression in action.yml: ${{ name }}.
EXPRESSION = re.compile(r"\$\{\{\s*([\w.-]+)\s*\}\}")

STUB = """\
#!{python}
# A stand-in for `pulumi` and `vertex-training`: it records how it was called, prints
# the recorded output the test names, and exits as the test says.
import json, os, sys
from pathlib import Path

name = Path(sys.argv[0]).name
call = {{"name": name, "args": sys.argv[1:], "cwd": os.getcwd(),
        "token": "GITHUB_TOKEN" in os.environ}}
with open(os.environ["STUB_CALLS"], "a") as calls:
    calls.write(json.dumps(call) + "\\n")
prefix = "STUB_" + name.upper().replace("-", "_")
sys.stdout.write(Path(os.environ[prefix + "_OUT"]).read_text())
sys.stderr.write(os.environ.get(prefix + "_ERR", ""))
sys.exit(int(os.environ.get(prefix + "_EXIT", "0")))
"""


#: The real command line where the action installs it (the tests' own package).
REAL = """\
#!{python}
import runpy, sys

runpy.run_module("vertex_training", run_name="__main__")
"""


@dataclass
class Runner:
    """One run of the action's review step, as a GitHub runner makes it: the step's env:
    filled in from the inputs, the runner's own variables, a pull request's event."""

    root: Path
    github: FakeGitHub
    inputs: dict[str, str] = field(default_factory=dict)
    head_repository: str = REPOSITORY
    event: str = "pull_request"
    preview_exit: int = 0
    preview_err: str = ""
    review_exit: int = 0
    #: A recorded `pulumi preview --json` for the stand-in to print (RECORDED_PREVIEW if
    #: None), and whether the real `vertex-training review` reads it (the stand-in if not).
    preview: Path | None = None
    real_review: bool = False

    @property
    def temp(self) -> Path:
        return self.root / "runner-temp"

    @property
    def program(self) -> Path:
        return self.root / "program"

    def stubs(self) -> Path:
        """`pulumi` on PATH, and `vertex-training` where the action installs it."""
        bin_dir = self.root / "bin"
        venv_bin = self.temp / "vertex-training-review" / "venv" / "bin"
        for folder, name in ((bin_dir, "pulumi"), (venv_bin, "vertex-training")):
            folder.mkdir(parents=True, exist_ok=True)
            script = REAL if self.real_review and name == "vertex-training" else STUB
            (folder / name).write_text(script.format(python=sys.executable))
            (folder / name).chmod(0o755)
        return bin_dir

    def env(self) -> dict[str, str]:
        """The environment the runner gives the review step."""
        spec = action()
        values = {
            "github.token": ACTIONS_TOKEN,
            "runner.temp": str(self.temp),
            "steps.python.outputs.python-path": sys.executable,
        }

        def fill(text: str) -> str:
            return EXPRESSION.sub(lambda m: values[m[1]], text)

        given = {"stack": "dev", **self.inputs}
        for name, input_ in spec["inputs"].items():
            values[f"inputs.{name}"] = given.get(name, fill(str(input_.get("default", ""))))
        event = self.root / "event.json"
        payload: dict[str, Any] = {}
        if self.event == "pull_request":
            head = {"repo": {"full_name": self.head_repository}, "sha": COMMIT}
            payload = {"pull_request": {"number": PULL_REQUEST, "head": head}}
        event.write_text(json.dumps(payload))
        recorded = self.preview.read_text() if self.preview else json.dumps(RECORDED_PREVIEW)
        (self.root / "recorded-preview.json").write_text(recorded)
        (self.root / "recorded-review.md").write_text(RECORDED_REVIEW)
        self.program.mkdir(exist_ok=True)
        return {
            **{name: fill(value) for name, value in step("review")["env"].items()},
            **{k: v for k, v in no_proxy().items() if k in ("HOME", "LANG", "NO_PROXY")},
            "PATH": f"{self.stubs()}:{os.environ['PATH']}",
            "CI": "true",
            "RUNNER_TEMP": str(self.temp),
            "GITHUB_ACTION_PATH": str(ACTION),
            "GITHUB_EVENT_NAME": self.event,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "42",
            "GITHUB_API_URL": self.github.url,
            "GITHUB_STEP_SUMMARY": str(self.root / "summary.md"),
            "GITHUB_OUTPUT": str(self.root / "output"),
            "STUB_CALLS": str(self.root / "calls.jsonl"),
            "STUB_PULUMI_OUT": str(self.root / "recorded-preview.json"),
            "STUB_PULUMI_ERR": self.preview_err,
            "STUB_PULUMI_EXIT": str(self.preview_exit),
            "STUB_VERTEX_TRAINING_OUT": str(self.root / "recorded-review.md"),
            "STUB_VERTEX_TRAINING_EXIT": str(self.review_exit),
        }

    def run(self) -> subprocess.CompletedProcess[str]:
        """The step's `run:` line, in bash as the runner starts it, in the workspace."""
        env = self.env()
        command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step("review")["run"]]
        return subprocess.run(
            command, cwd=self.root, env=env, capture_output=True, text=True, check=False
        )

    def calls(self) -> list[dict[str, Any]]:
        """The stand-ins' calls, in order."""
        path = self.root / "calls.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines()]

    def summary(self) -> str:
        path = self.root / "summary.md"
        return path.read_text() if path.exists() else ""

    def outputs(self) -> dict[str, str]:
        path = self.root / "output"
        lines = path.read_text().splitlines() if path.exists() else []
        return dict(line.split("=", 1) for line in lines)


@pytest.fixture
def runner(tmp_path: Path, github: FakeGitHub) -> Runner:
    """A run of the review step on the fake GitHub's pull request, as yet unstarted."""
    return Runner(root=tmp_path, github=github)


class TestActionRun:
    """The review step of action.yml (review.py) with stand-in commands and the fake GitHub."""

    def test_previews_reviews_and_comments(self, runner: Runner) -> None:
        """The preview's JSON is saved and reviewed, the review goes to the step summary
        and the comment, and the step passes; neither command sees the GitHub token."""
        result = runner.run()
        assert result.returncode == 0, result.stdout + result.stderr
        preview, review = runner.calls()
        assert preview["args"] == ["preview", "--json", "--stack", "dev", "--non-interactive"]
        saved = runner.temp / "vertex-training-review" / "stacks" / "dev" / "preview.json"
        assert review["args"] == ["review", str(saved), "--stack", "dev", "--format", "markdown"]
        assert json.loads(saved.read_text()) == RECORDED_PREVIEW
        assert preview["cwd"] == review["cwd"] == str(runner.root)
        assert not preview["token"] and not review["token"]
        assert runner.summary() == RECORDED_REVIEW
        [posted] = runner.github.comments
        assert posted["body"] == f"{MARKER}\n{RECORDED_REVIEW}\n{FOOTER}\n"
        assert runner.outputs()["status"] == "0"

    def test_a_failed_mandatory_rule_fails_the_step_after_commenting(self, runner: Runner) -> None:
        """The review's exit 1 is the step's, once the review is posted and summarized."""
        runner.review_exit = 1
        result = runner.run()
        assert result.returncode == 1
        assert "::error::stack dev: a mandatory rule failed" in result.stdout
        assert runner.github.comments[0]["body"].startswith(MARKER)
        assert runner.summary() == RECORDED_REVIEW
        assert runner.outputs()["status"] == "1"

    def test_a_failed_preview_shows_its_last_lines_and_fails_the_step(self, runner: Runner) -> None:
        """When `pulumi preview` fails, the review (exit 2) ends with the preview's
        error, folded, and the step fails."""
        runner.preview_exit, runner.review_exit = 255, 2
        runner.preview_err = (
            "error: failed to load the stack: 403 the caller may not read gs://acme-state\n"
        )
        result = runner.run()
        assert result.returncode == 2
        body = runner.github.comments[0]["body"]
        assert "<code>pulumi preview</code> failed (exit 255)</summary>" in body
        assert "```text\nerror: failed to load the stack: 403" in body
        assert "403 the caller may not read" in result.stderr

    def test_the_inputs_reach_the_preview_and_the_review(self, runner: Runner) -> None:
        """The policy pack and its config go to the preview, the config and the prices to
        the review; both run in work-dir."""
        runner.inputs = {
            "work-dir": str(runner.program),
            "policy-pack": "policy",
            "policy-pack-config": "policy-config.json",
            "prices": "prices/snapshot.json",
        }
        assert runner.run().returncode == 0
        preview, review = runner.calls()
        assert preview["args"][-4:] == [
            "--policy-pack",
            "policy",
            "--policy-pack-config",
            "policy-config.json",
        ]
        assert review["args"][-4:] == [
            "--prices",
            "prices/snapshot.json",
            "--policy-pack-config",
            "policy-config.json",
        ]
        assert preview["cwd"] == review["cwd"] == str(runner.program)

    def test_a_fork_is_skipped_with_a_note(self, runner: Runner) -> None:
        """A fork's pull request has no cloud credentials: nothing runs, the step passes,
        and the log and the step summary say why."""
        runner.head_repository = "someone/ml"
        result = runner.run()
        assert result.returncode == 0
        assert runner.calls() == [] and runner.github.requests == []
        assert "::notice::review of stack dev skipped" in result.stdout
        assert "fork (someone/ml)" in runner.summary()
        assert "gets no cloud credentials" in runner.summary()

    def test_comment_false_posts_nothing(self, runner: Runner) -> None:
        """With `comment: false` the review is in the step summary only."""
        runner.inputs = {"comment": "false"}
        assert runner.run().returncode == 0
        assert runner.github.requests == []
        assert runner.summary() == RECORDED_REVIEW

    def test_a_comment_refused_fails_the_step(self, runner: Runner) -> None:
        """A token that may not comment fails the step, naming the permission."""
        runner.inputs = {"github-token": READ_ONLY_TOKEN}
        result = runner.run()
        assert result.returncode == 1
        assert "`pull-requests: write`" in result.stdout
        assert runner.summary() == RECORDED_REVIEW

    def test_outside_a_pull_request_only_the_summary_has_the_review(self, runner: Runner) -> None:
        """On a push there is no pull request to comment on: the step summary has it."""
        runner.event = "push"
        assert runner.run().returncode == 0
        assert runner.github.requests == []
        assert runner.summary() == RECORDED_REVIEW


class TestActionOnARecordedPreview:
    """The review step with the real `vertex-training review` reading a recorded preview:
    `pulumi preview --json` of a YAML program's change (tests/recorded/; its `train` job
    moves to n1-standard-4 with two T4 GPUs, `old` goes, `new` comes), with the program's
    price snapshot (the fake catalog's invented prices) and a rules file."""

    def test_the_comment_is_the_review_of_the_preview(self, runner: Runner) -> None:
        runner.preview, runner.real_review = RECORDED_CHANGE, True
        runner.inputs = {"work-dir": str(runner.program), "policy-pack-config": "rules.json"}
        runner.program.mkdir()
        save_snapshot(fake_snapshot(), runner.program / "prices" / "snapshot.json")
        rules = {"required_labels": {"enforcementLevel": "mandatory", "labels": ["cost-center"]}}
        (runner.program / "rules.json").write_text(json.dumps(rules))
        result = runner.run()
        assert result.returncode == 1, result.stdout + result.stderr  # the mandatory rule
        options = ["--stack", "dev", "--policy-pack-config", "rules.json"]
        review = subprocess.run(
            [sys.executable, "-m", "vertex_training", "review", str(RECORDED_CHANGE), *options],
            cwd=runner.program,
            env={**os.environ, "CI": "true"},  # as GitHub's runner gives every step
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        [posted] = runner.github.comments
        assert posted["body"] == f"{MARKER}\n{review}\n{FOOTER}\n"
        for line in (
            "### `dev`: what this change does (`pulumi preview` against the stack's state)",
            "1 to submit, 1 to replace, 1 to delete; the jobs this change submits cost at most $",
            "| `train` | replace | primary: 1 x n1-standard-4 + 2 x NVIDIA_TESLA_T4 | was $0.20/h",
            "| `new` | submit | primary: 1 x e2-standard-4 | $0.20/h;",
            "| `old` | delete | primary: 1 x e2-standard-4 | cancelled if it still runs, then "
            "deleted: stops up to $0.20/h |",
            "`job.machine` e2-standard-4 -> n1-standard-4 (forces replacement)",
            "- :x: required_labels (mandatory) `new`: lacks the required label cost-center: "
            "add job.labels: {cost-center: ...}",
        ):
            assert line in posted["body"]
        assert "prices read 2026-11-20" in posted["body"]
        assert runner.summary() == review


class TestActionDefinition:
    """What action.yml promises its callers."""

    def test_inputs_and_their_defaults(self) -> None:
        """The stack is required; the rest have the defaults the README lists."""
        inputs = action()["inputs"]
        assert inputs["stack"]["required"] is True
        defaults = {name: spec.get("default") for name, spec in inputs.items() if name != "stack"}
        assert defaults == {
            "work-dir": ".",
            "github-token": "${{ github.token }}",
            "comment": "true",
            "policy-pack": "",
            "policy-pack-config": "",
            "prices": "",
            "python-version": "3.13",
        }

    def test_installs_the_package_beside_it_into_a_virtualenv_of_its_own(self) -> None:
        """vertex-training comes from the action's own checkout (../../provider), into a
        virtualenv under the runner's temp folder, with a Python that leaves PATH alone;
        the review step runs that virtualenv's command."""
        steps = action()["runs"]["steps"]
        [setup] = [s for s in steps if s.get("uses", "").startswith("actions/setup-python@")]
        assert setup["with"]["update-environment"] is False
        [install] = [s for s in steps if s.get("name") == "Install vertex-training"]
        assert '"$GITHUB_ACTION_PATH/../../provider"' in install["run"]
        assert 'venv="$RUNNER_TEMP/vertex-training-review/venv"' in install["run"]
        venv_bin = "${{ runner.temp }}/vertex-training-review/venv/bin"
        assert step("review")["env"]["VERTEX_TRAINING"] == f"{venv_bin}/vertex-training"

    def test_the_constraints_are_the_repository_pins(self, tmp_path: Path) -> None:
        """The install step's constraints (requirements.txt less its editable line) are
        exact pins that pip takes as constraints."""
        [install] = [
            s for s in action()["runs"]["steps"] if s.get("name") == "Install vertex-training"
        ]
        sed = next(
            line.strip() for line in install["run"].splitlines() if line.strip().startswith("sed ")
        )
        command = sed.replace("$GITHUB_ACTION_PATH", str(ACTION)).replace("$venv", str(tmp_path))
        subprocess.run(["bash", "-c", command], check=True)
        lines = (tmp_path / "constraints.txt").read_text().splitlines()
        pins = [line for line in lines if line and not line.startswith("#")]
        assert pins and all(re.fullmatch(r"[\w.-]+==[\w.]+", pin) for pin in pins), pins
