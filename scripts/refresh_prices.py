"""Print candidate rows for provider/review/prices.py from Google's Vertex AI pricing page.

For a person with network access; never run by the tests, and it writes no file.

    python scripts/refresh_prices.py --region us-central1            # fetch the live page
    python scripts/refresh_prices.py --region us-central1 --html p.html  # a saved copy

It reads https://cloud.google.com/vertex-ai/pricing (or the saved HTML), walks every
table, keeps the rows whose first cell names a machine type of ``provider.catalog.machines`` or an
accelerator (``NVIDIA_TESLA_T4``, or the page's label such as "NVIDIA T4"), and prints each
as a ``Price(...)`` line with the first dollar amount of the row, the table's heading (so
that you can tell a Spot table from an on-demand one) and today's date.

Why it only prints: the page chooses its region with a selector and has changed its layout
before (per-machine prices, per-vCPU and per-GB prices, Spot columns), so what this parser
takes for "the price of n1-standard-4 in us-central1" must be checked by a person against
the page in a browser before it goes in the table. Paste the rows you checked into
``PRICES`` under a ``Source`` block naming the page and the day, and update ``PRICES_DATE``
(docs/cost.md, "Refreshing the table").
"""

from __future__ import annotations

import argparse
import datetime
import re
import sys
import urllib.request
from html.parser import HTMLParser
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from provider.catalog import machines  # the repository root is on the path (above)

PAGE_URL = "https://cloud.google.com/vertex-ai/pricing"
FETCH_TIMEOUT_S = 60
USER_AGENT = "vertex-training refresh_prices.py"
DOLLARS = re.compile(r"\$\s*([0-9][0-9,]*\.?[0-9]*)")
#: The page's accelerator labels -> AcceleratorType enum names (checked against the page).
ACCELERATOR_LABELS = {
    "NVIDIA T4": "NVIDIA_TESLA_T4",
    "NVIDIA TESLA T4": "NVIDIA_TESLA_T4",
    "NVIDIA P4": "NVIDIA_TESLA_P4",
    "NVIDIA P100": "NVIDIA_TESLA_P100",
    "NVIDIA V100": "NVIDIA_TESLA_V100",
    "NVIDIA A100": "NVIDIA_TESLA_A100",
    "NVIDIA A100 80GB": "NVIDIA_A100_80GB",
    "NVIDIA L4": "NVIDIA_L4",
    "NVIDIA H100 80GB": "NVIDIA_H100_80GB",
    "NVIDIA H100 MEGA 80GB": "NVIDIA_H100_MEGA_80GB",
    "NVIDIA H200": "NVIDIA_H200_141GB",
    "NVIDIA B200": "NVIDIA_B200",
}


class _Tables(HTMLParser):
    """Collects (heading, [cell texts]) for every table row of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, list[str]]] = []
        self._heading = ""
        self._in_heading = False
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("h2", "h3", "h4"):
            self._in_heading, self._heading = True, ""
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h2", "h3", "h4"):
            self._in_heading = False
        elif tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append((self._heading.strip(), self._row))
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._in_heading:
            self._heading += data
        if self._cell is not None:
            self._cell.append(data)


def _item(cell: str) -> tuple[str, str] | None:
    """(kind, name) when a first cell names a machine or an accelerator."""
    name = cell.strip()
    if name in machines.MACHINE_TYPES:
        return "machine", name
    if name in machines.ACCELERATOR_TYPES:
        return "accelerator", name
    label = name.upper()
    if label in ACCELERATOR_LABELS:
        return "accelerator", ACCELERATOR_LABELS[label]
    return None


def candidate_rows(html: str, region: str, today: str) -> list[str]:
    """``Price(...)`` lines for the rows of ``html`` that price a known item."""
    parser = _Tables()
    parser.feed(html)
    lines = []
    for heading, cells in parser.rows:
        found = _item(cells[0]) if cells else None
        if found is None:
            continue
        amounts = [m for cell in cells[1:] for m in DOLLARS.findall(cell)]
        if not amounts:
            continue
        kind, name = found
        usd = amounts[0].replace(",", "")
        strategy = "SPOT" if "spot" in heading.lower() else "STANDARD"
        lines.append(
            f'    Price("{name}", "{kind}", "{region}", {usd}, ("{strategy}",), SOURCE),'
            f"  # {heading or 'no heading'}; row: {' | '.join(cells)}; read {today}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Fetch (or read) the page and print its candidate rows."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--region", required=True, help="the region the page shows, e.g. us-central1"
    )
    parser.add_argument("--html", type=Path, help="a saved copy of the page instead of fetching it")
    parser.add_argument("--url", default=PAGE_URL, help=f"the page to fetch (default {PAGE_URL})")
    args = parser.parse_args(argv)
    if args.html is not None:
        html = args.html.read_text(encoding="utf-8")
    else:
        request = urllib.request.Request(args.url, headers={"User-Agent": USER_AGENT})
        with urllib.request.urlopen(request, timeout=FETCH_TIMEOUT_S) as response:
            html = response.read().decode("utf-8", errors="replace")
    today = datetime.date.today().isoformat()
    lines = candidate_rows(html, args.region, today)
    print(f"# {len(lines)} candidate rows from {args.html or args.url}, read {today}.")
    print("# Check each against the page in a browser before pasting it into PRICES.")
    print("\n".join(lines))
    return 0 if lines else 1


if __name__ == "__main__":
    sys.exit(main())
