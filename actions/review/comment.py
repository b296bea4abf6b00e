"""One pull-request comment per stack holding its vertex-training review, edited in place.

The comment's first line is a marker, ``<!-- vertex-training review: <stack> -->``: the next
run lists the pull request's comments, finds the one that starts with it and edits it, or
posts a new one. A review too long for a comment keeps its start and its end, with a note
where the middle was cut. Standard library only, so the action's Python runs it as it is::

    GITHUB_TOKEN=... python comment.py --stack dev --review review.md \\
        --repository owner/name --pull-request 12
    python comment.py --stack dev --review review.md --body-out comment.md  # posts nothing

The REST calls: https://docs.github.com/en/rest/issues/comments.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: GitHub refuses a comment body longer than this, in characters.
MAX_BODY = 65_536
#: The most comments one page of the listing may hold.
PER_PAGE = 100
#: How long one REST call may take, in seconds.
TIMEOUT_S = 30
API_VERSION = "2022-11-28"
#: A line that opens or closes a fenced code block, and the fence itself.
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
#: The URL of the next page in a listing's Link header.
NEXT_PAGE = re.compile(r'<([^>]+)>;\s*rel="next"')


class CommentError(Exception):
    """A REST call failed: the method, the URL, GitHub's status and message."""


def marker(stack: str) -> str:
    """The first line of the stack's comment, by which the next run finds it."""
    return f"<!-- vertex-training review: {stack} -->"


def open_fence(text: str) -> tuple[str, str] | None:
    """The line that opened the code block ``text`` ends inside, and its fence; or None."""
    opened: tuple[str, str] | None = None
    for line in text.splitlines():
        found = FENCE.match(line)
        if found is None:
            continue
        fence = found[1]
        if opened is None:
            opened = (line, fence)
        elif fence[0] == opened[1][0] and len(fence) >= len(opened[1]) and line.strip() == fence:
            opened = None
    return opened


def cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters: as it is, or its start and its end with a
    note between them. Cuts fall at line ends; a code block open at the cut is closed
    before the note and opened again after it."""
    if len(text) <= room:
        return text
    spare = room
    while True:
        head = text[: spare * 3 // 5]
        head = head[: head.rfind("\n") + 1]
        tail = text[len(text) - (spare - spare * 3 // 5) :]
        tail = tail[tail.find("\n") + 1 :]
        note = (
            f"\n> **{len(text) - len(head) - len(tail):,} characters of the review are left "
            "out here**: the full review is in the step summary of the workflow run.\n\n"
        )
        opened = open_fence(head)
        if opened is not None:
            line, fence = opened
            head += fence + "\n"
            tail = line + "\n" + tail
        joined = head + note + tail
        if len(joined) <= room:
            return joined
        spare -= len(joined) - room


def body(stack: str, review: str, last_line: str = "") -> str:
    """The comment for the stack: its marker, the review (cut to fit), then ``last_line``."""
    start = marker(stack) + "\n"
    end = f"\n\n{last_line}\n" if last_line else "\n"
    return start + cut(review.strip("\n"), MAX_BODY - len(start) - len(end)) + end


def footer(commit: str | None, run_url: str | None) -> str:
    """A small last line naming the commit reviewed and the workflow run, when known."""
    parts = [f"`{commit[:7]}`"] if commit else []
    if run_url:
        parts.append(f"[workflow run]({run_url})")
    return f"<sub>{' · '.join(parts)}</sub>" if parts else ""


def call(
    method: str, url: str, token: str, payload: dict[str, Any] | None = None
) -> tuple[Any, str]:
    """One REST call: the JSON GitHub answers and its Link header ("" when none)."""
    request = urllib.request.Request(
        url,
        method=method,
        data=None if payload is None else json.dumps(payload).encode(),
        headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "User-Agent": "vertex-training-review",
            "X-GitHub-Api-Version": API_VERSION,
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            return json.load(response), response.headers.get("Link", "")
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")
        with contextlib.suppress(ValueError, AttributeError):
            detail = json.loads(detail).get("message", detail)
        hint = ""
        if exc.code in (403, 404):
            hint = " (the token needs `pull-requests: write` on this repository)"
        raise CommentError(f"{method} {url}: {exc.code} {detail}{hint}") from exc
    except urllib.error.URLError as exc:
        raise CommentError(f"{method} {url}: {exc.reason}") from exc


def comments(url: str, token: str) -> Iterator[dict[str, Any]]:
    """Every comment of a listing, page after page, as its Link headers lead."""
    next_url: str | None = url
    while next_url:
        page, link = call("GET", next_url, token)
        yield from page
        found = NEXT_PAGE.search(link)
        next_url = found[1] if found else None


def post(api: str, repository: str, number: int, *, token: str, stack: str, text: str) -> str:
    """Edits the stack's comment on the pull request, or posts it: what was done, and where."""
    issue = f"{api}/repos/{repository}/issues"
    listing = f"{issue}/{number}/comments?per_page={PER_PAGE}"
    for comment in comments(listing, token):
        if (comment.get("body") or "").startswith(marker(stack)):
            edited, _ = call("PATCH", f"{issue}/comments/{comment['id']}", token, {"body": text})
            return f"edited {edited['html_url']}"
    posted, _ = call("POST", f"{issue}/{number}/comments", token, {"body": text})
    return f"posted {posted['html_url']}"


def main(argv: list[str] | None = None) -> int:
    """Builds the stack's comment from the review, then posts it or writes it to a file."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--review", required=True, type=Path, help="the review, Markdown")
    parser.add_argument("--commit", help="the commit reviewed, named in the footer")
    parser.add_argument("--run-url", help="the workflow run, linked in the footer")
    parser.add_argument("--body-out", type=Path, help="write the comment here; post nothing")
    parser.add_argument("--repository", default=os.environ.get("GITHUB_REPOSITORY"))
    parser.add_argument("--pull-request", type=int)
    args = parser.parse_args(argv)

    review = args.review.read_text(encoding="utf-8")
    text = body(args.stack, review, footer(args.commit, args.run_url))
    if args.body_out:
        args.body_out.write_text(text, encoding="utf-8")
        return 0
    token = os.environ.get("GITHUB_TOKEN", "")
    if not (token and args.repository and args.pull_request):
        parser.error("posting needs GITHUB_TOKEN, --repository and --pull-request")
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
    try:
        print(
            post(api, args.repository, args.pull_request, token=token, stack=args.stack, text=text)
        )
    except CommentError as exc:
        print(f"::error::could not comment on the pull request: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
