"""The review action's work once vertex-training is installed: ``pulumi preview --json``
of the stack, ``vertex-training review`` of that preview, the review in the step summary
and as the stack's comment on the pull request, then the exit status that passes or fails
the check.

action.yml runs it with the action's own Python and these variables (besides those the
runner sets: GITHUB_EVENT_PATH, GITHUB_REPOSITORY, GITHUB_STEP_SUMMARY, ...): STACK,
WORK_DIR, POLICY_PACK, POLICY_PACK_CONFIG, PRICES, COMMENT ("true" or "false"),
GITHUB_TOKEN (for the comment only: the preview never sees it), VERTEX_TRAINING (the
command, from the action's virtualenv) and PULUMI (the command, ``pulumi`` on PATH).

A pull request from a fork gets no cloud credentials: its review is skipped, with a note,
and the step passes. Exit status: the review's when it failed (1 a mandatory rule, 2 an
invalid job or a failed preview), else 1 when the preview or the comment failed, else 0.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import comment

#: A stack's name as Pulumi takes it: stack, project/stack or org/project/stack.
STACK_NAME = re.compile(r"^[\w.-]+(/[\w.-]+){0,2}$")
#: How many of the failed preview's last lines the review shows.
PREVIEW_LOG_LINES = 40
#: What the review's exit statuses mean.
REVIEW_FAILED = {1: "a mandatory rule failed", 2: "a job is invalid or the preview failed"}


@dataclass(frozen=True)
class PullRequest:
    """The pull request the workflow runs for, from the event's payload."""

    number: int
    head_repository: str
    head_commit: str


def pull_request(event_path: str | None) -> PullRequest | None:
    """The pull request of the event, or None when the workflow runs for something else."""
    if not event_path or not Path(event_path).is_file():
        return None
    event = json.loads(Path(event_path).read_text(encoding="utf-8"))
    found = event.get("pull_request")
    if not found:
        return None
    head = found["head"]
    # A fork deleted since the pull request was opened has no repository.
    return PullRequest(found["number"], (head.get("repo") or {}).get("full_name", ""), head["sha"])


def preview_command(stack: str, policy_pack: str, policy_pack_config: str) -> list[str]:
    """``pulumi preview --json`` of the stack, with the policy pack when one is given."""
    command = [os.environ.get("PULUMI", "pulumi"), "preview", "--json", "--stack", stack]
    command.append("--non-interactive")
    if policy_pack:
        command += ["--policy-pack", policy_pack]
        if policy_pack_config:
            command += ["--policy-pack-config", policy_pack_config]
    return command


def review_command(preview: Path, stack: str, prices: str, policy_pack_config: str) -> list[str]:
    """``vertex-training review`` of the saved preview, as Markdown."""
    command = [os.environ.get("VERTEX_TRAINING", "vertex-training"), "review", str(preview)]
    command += ["--stack", stack, "--format", "markdown"]
    if prices:
        command += ["--prices", prices]
    if policy_pack_config:
        command += ["--policy-pack-config", policy_pack_config]
    return command


def without_token() -> dict[str, str]:
    """This step's environment less the GitHub token: the program the preview runs is the
    pull request's code, and has no use for it."""
    return {name: value for name, value in os.environ.items() if name != "GITHUB_TOKEN"}


def fenced(text: str) -> str:
    """``text`` in a code block whose fence is longer than any run of backticks in it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{text}\n{fence}"


def preview_failure(code: int, log: str) -> str:
    """A folded block with the failed preview's exit status and last lines."""
    last = "\n".join(log.strip().splitlines()[-PREVIEW_LOG_LINES:]) or "(no output)"
    return (
        f"<details>\n<summary><code>pulumi preview</code> failed (exit {code})</summary>\n\n"
        f"{fenced(last)}\n\n</details>"
    )


def summarize(text: str) -> None:
    """Appends ``text`` to the job's step summary (and to the log)."""
    print(text)
    if path := os.environ.get("GITHUB_STEP_SUMMARY"):
        with open(path, "a", encoding="utf-8") as summary:
            summary.write(text + "\n")


def set_outputs(**outputs: str) -> None:
    """The step's outputs, which action.yml hands on as the action's."""
    if path := os.environ.get("GITHUB_OUTPUT"):
        with open(path, "a", encoding="utf-8") as output:
            output.writelines(f"{name}={value}\n" for name, value in outputs.items())


def run_url() -> str | None:
    """The workflow run's page, when the runner says which run this is."""
    parts = [os.environ.get(n) for n in ("GITHUB_SERVER_URL", "GITHUB_REPOSITORY", "GITHUB_RUN_ID")]
    if not all(parts):
        return None
    server, repository, run_id = parts
    return f"{server}/{repository}/actions/runs/{run_id}"


def post_comment(stack: str, review: str, pr: PullRequest) -> bool:
    """The review as the stack's comment on the pull request; False when that failed."""
    text = comment.body(stack, review, comment.footer(pr.head_commit, run_url()))
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    repository = os.environ.get("GITHUB_REPOSITORY", "")
    token = os.environ.get("GITHUB_TOKEN", "")
    try:
        print(comment.post(api, repository, pr.number, token=token, stack=stack, text=text))
    except comment.CommentError as exc:
        print(f"::error::could not comment on the pull request: {exc}")
        return False
    return True


def run(
    command: list[str], work_dir: Path, stdout: int | IO[str], stderr: int | None = None
) -> subprocess.CompletedProcess[str]:
    """``command`` in the work dir without the GitHub token; a command that is not there
    exits 127 with a line that says so, as a shell's would."""
    try:
        return subprocess.run(
            command,
            cwd=work_dir,
            env=without_token(),
            stdout=stdout,
            stderr=stderr,
            text=True,
            check=False,
        )
    except FileNotFoundError:
        missing = f"{command[0]}: command not found"
        print(missing, file=sys.stderr)
        return subprocess.CompletedProcess(command, 127, stdout="", stderr=missing)


def preview_and_review(stack: str, work_dir: Path, out: Path) -> tuple[int, int, str]:
    """The preview's and the review's exit statuses, and the review, with the failed
    preview's last lines at its end."""
    policy_pack_config = os.environ.get("POLICY_PACK_CONFIG", "")
    preview = out / "preview.json"
    with preview.open("w", encoding="utf-8") as saved:
        previewed = run(
            preview_command(stack, os.environ.get("POLICY_PACK", ""), policy_pack_config),
            work_dir,
            stdout=saved,
            stderr=subprocess.PIPE,
        )
    print(previewed.stderr, end="", file=sys.stderr)
    (out / "preview.log").write_text(previewed.stderr, encoding="utf-8")

    prices = os.environ.get("PRICES", "")
    command = review_command(preview.resolve(), stack, prices, policy_pack_config)
    reviewed = run(command, work_dir, stdout=subprocess.PIPE)
    review = reviewed.stdout.strip() or (
        f"### `{stack}`: no review\n\n`vertex-training review` exited "
        f"{reviewed.returncode} and wrote no review."
    )
    if previewed.returncode != 0:
        review += "\n\n" + preview_failure(previewed.returncode, previewed.stderr)
    return previewed.returncode, reviewed.returncode, review


def skip_fork(stack: str, pr: PullRequest, repository: str) -> None:
    """Says, in the log and the step summary, why a fork's pull request is not reviewed."""
    print(f"::notice::review of stack {stack} skipped: the pull request comes from a fork")
    summarize(
        f"### `{stack}`: review skipped\n\nThis pull request comes from a fork "
        f"({pr.head_repository or 'deleted'}), and a fork's pull request gets no cloud "
        "credentials to run `pulumi preview` with. To review it, push its branch to "
        f"{repository} and open the pull request from there."
    )


def main() -> int:
    """Previews and reviews the stack, publishes the review, and says whether it passed."""
    stack = os.environ.get("STACK", "")
    if not STACK_NAME.match(stack):
        print(f"::error::stack {stack!r} is not a Pulumi stack name: write e.g. `stack: dev`")
        return 2
    pr = pull_request(os.environ.get("GITHUB_EVENT_PATH"))
    repository = os.environ.get("GITHUB_REPOSITORY", "")
    if pr and pr.head_repository != repository:
        skip_fork(stack, pr, repository)
        return 0

    # Beside the action's virtualenv (action.yml's vertex-training-review/venv).
    folder = stack.replace("/", "_")
    out = Path(os.environ.get("RUNNER_TEMP", "/tmp"), "vertex-training-review", "stacks", folder)
    out.mkdir(parents=True, exist_ok=True)
    work_dir = Path(os.environ.get("WORK_DIR") or ".")
    previewed, reviewed, review = preview_and_review(stack, work_dir, out)
    (out / "review.md").write_text(review + "\n", encoding="utf-8")
    set_outputs(status=str(reviewed), review=str(out / "review.md"))
    summarize(review)

    commented = True
    wanted = os.environ.get("COMMENT", "true").lower() == "true"
    if wanted and pr:
        commented = post_comment(stack, review, pr)
    elif wanted:
        print("::notice::not a pull request: the review is in the step summary only")

    if reviewed != 0:
        reason = REVIEW_FAILED.get(reviewed, "the review failed")
        print(f"::error::stack {stack}: {reason} (vertex-training review exited {reviewed})")
        return reviewed
    if previewed != 0:
        print(f"::error::stack {stack}: pulumi preview exited {previewed}")
        return 1
    return 0 if commented else 1


if __name__ == "__main__":
    sys.exit(main())
