"""The docs as a site and as a way in: every page under docs/ is in mkdocs.yml's nav and
every nav entry is a page (`make docs` builds them strictly); users' pages hold no
paragraph over 150 words; and the README's start in each language names what this
repository builds: the templates' paths, the plugin archive `make plugin` writes, the
npm tarball `scripts/pack-sdks.sh` writes, and the Go SDK's module."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

from tests.release import RELEASE, REPO
from vertex_training.plugin.schema import GO_MODULE

DOCS = REPO / "docs"
#: The nav section whose pages are for contributors, not users.
CONTRIBUTING = "Contributing"
MAX_PARAGRAPH_WORDS = 150


def nav() -> dict[str, list[str]]:
    """mkdocs.yml's pages by nav section (the home page under "")."""
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    sections: dict[str, list[str]] = {}

    def pages(entry: Any) -> Iterator[str]:
        if isinstance(entry, str):
            yield entry
        elif isinstance(entry, list):
            for item in entry:
                yield from pages(item)
        elif isinstance(entry, dict):
            for value in entry.values():
                yield from pages(value)

    for item in config["nav"]:
        [(title, entry)] = item.items()
        sections[title if isinstance(entry, list) else ""] = [
            *sections.get(title if isinstance(entry, list) else "", []),
            *pages(entry),
        ]
    return sections


def paragraphs(text: str) -> Iterator[str]:
    """The prose paragraphs of a Markdown page: not its code, tables, headings or
    comments; each list item, and each paragraph within one, on its own."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    for block in re.split(r"\n\s*\n", text):
        if block.strip() and not block.lstrip().startswith(("|", "#")):
            yield from re.split(r"\n(?=\s*(?:[-*]|\d+\.) )", block)


class TestNavigation:
    """mkdocs.yml's nav and the pages under docs/ are the same set."""

    def test_every_page_is_in_the_nav(self) -> None:
        """A page left out of the nav would be built but found by no reader."""
        listed = {page for pages in nav().values() for page in pages}
        present = {path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md")}
        assert present - listed == set(), "add these pages to mkdocs.yml's nav"
        assert listed - present == set(), "mkdocs.yml's nav names pages that do not exist"

    def test_the_sections(self) -> None:
        """The nav is organised as tutorials, how-to guides, reference and explanation,
        with contributors' pages apart."""
        assert list(nav()) == [
            "",
            "Tutorials",
            "How-to guides",
            "Reference",
            "Explanation",
            CONTRIBUTING,
        ]
        assert {"testing.md", "layout.md", "release.md", "engine.md"} <= set(nav()[CONTRIBUTING])


class TestParagraphs:
    """A user reads a page in one sitting: no paragraph of theirs runs on."""

    def test_users_pages_hold_no_paragraph_over_the_limit(self) -> None:
        """Every page outside the Contributing section, and the README."""
        users = [
            DOCS / page
            for section, pages in nav().items()
            if section != CONTRIBUTING
            for page in pages
        ]
        long = [
            f"{path.relative_to(REPO)}: {len(paragraph.split())} words: {paragraph[:60]!r}"
            for path in [*users, REPO / "README.md"]
            for paragraph in paragraphs(path.read_text(encoding="utf-8"))
            if len(paragraph.split()) > MAX_PARAGRAPH_WORDS
        ]
        assert long == []

    def test_the_counter_can_fail(self) -> None:
        """A long paragraph is found; code blocks and tables are not prose."""
        prose = " ".join(["word"] * 151)
        text = f"# Title\n\n{prose}\n\n```\n{prose}\n```\n\n| a | {prose} |\n"
        assert [len(p.split()) for p in paragraphs(text)] == [151]


class TestReadmeStart:
    """The README's start in each language names what this repository makes."""

    def readme(self) -> str:
        return (REPO / "README.md").read_text(encoding="utf-8")

    def test_each_language_starts_from_its_template(self) -> None:
        """`pulumi new` names a template folder of this repository, then the `local` stack."""
        text = self.readme()
        for language in ("typescript", "go", "yaml", "python"):
            template = f"templates/vertex-training-{language}"
            assert f"pulumi new $VT/{template} " in text, language
            assert (REPO / template / "Pulumi.local.yaml").is_file(), language
        assert text.count("pulumi stack init local") == 4
        assert "pulumi login --local" in text

    def test_the_packages_are_the_ones_built_here(self) -> None:
        """The plugin archive of this release, the npm tarball's name, the Go module."""
        text = self.readme()
        assert f"dist/pulumi-resource-vertex-training-v{RELEASE}-linux-amd64.tar.gz" in text
        assert f"pulumi plugin install resource vertex-training {RELEASE} " in text
        package = json.loads((REPO / "sdk" / "nodejs" / "package.json").read_text())
        assert f"dist/{package['name']}-{package['version']}.tgz" in text
        assert f"go mod edit -replace {GO_MODULE}=$VT/sdk/go" in text
        assert "pip install $VT/provider" in text

    def test_the_two_commands_stay(self) -> None:
        """Set-up is two commands: `make up` (the local stack) and `make test`."""
        [block] = re.findall(r"## Two commands\n.*?```sh\n(.*?)```", self.readme(), re.S)
        assert [line.split()[:2] for line in block.splitlines()] == [
            ["make", "up"],
            ["make", "test"],
        ]


def test_docs_requirements_are_pinned() -> None:
    """The docs' tools install at exact versions (docs/requirements.txt)."""
    lines = [
        line
        for line in (DOCS / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    assert lines and all(re.fullmatch(r"[A-Za-z0-9_.-]+==[\w.]+", line) for line in lines)
    assert any(line.startswith("mkdocs==") for line in lines)
