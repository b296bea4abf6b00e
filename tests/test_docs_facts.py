"""Facts the docs state that the code decides, read from the code's own constants: the
label limits and the label keys the provider keeps for itself, the keys whose change
updates a job in place, where job submission's retry constants live, and the command
line's commands (docs/cli.md is written from the parser: scripts/gen-cli-docs.py). A doc
that says otherwise than the code fails here, naming the page."""

from __future__ import annotations

import importlib.util
import re
from types import ModuleType

from tests.release import REPO
from vertex_training.api import labels
from vertex_training.api.bodies import PROVIDER_SIDE_KEYS
from vertex_training.resources import submission

DOCS = REPO / "docs"


def page(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def prose(name: str) -> str:
    """The page with its line breaks and runs of spaces as single spaces."""
    return " ".join(page(name).split())


def ticked(text: str) -> set[str]:
    """The words in backticks in ``text``, outside its fenced blocks."""
    return set(re.findall(r"`([^`\n]+)`", re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)))


def snake(name: str) -> str:
    """A program's camelCase key in the stack config's naming (``runAfter``: run_after)."""
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def cli_docs() -> ModuleType:
    """scripts/gen-cli-docs.py, the generator of docs/cli.md."""
    spec = importlib.util.spec_from_file_location("gen_cli_docs", REPO / "scripts/gen-cli-docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestLabels:
    """docs/config-shape.md's `labels` row against vertex_training.api.labels."""

    def row(self) -> str:
        [row] = [
            line
            for line in page("docs/config-shape.md").splitlines()
            if line.startswith("| `labels` |")
        ]
        return row

    def test_the_limits_are_the_codes(self) -> None:
        """The row gives a job's limit, Vertex AI's and the characters a key or value has."""
        row = self.row()
        assert f"at most {labels.MAX_USER_LABELS} " in row, row
        assert f"Vertex AI takes {labels.MAX_LABELS}" in row, row
        assert f"the provider sets {len(labels.SUBMISSION_LABEL_KEYS)} " in row, row
        assert f"1 to {labels.MAX_LABEL_CHARS} characters" in row, row
        assert labels.MAX_LABELS - len(labels.SUBMISSION_LABEL_KEYS) == labels.MAX_USER_LABELS

    def test_the_reserved_keys_are_the_codes(self) -> None:
        """The row names every key the provider keeps, no other, and Google's prefix."""
        named = ticked(self.row()) - {"labels", labels.RESERVED_LABEL_PREFIX}
        assert named == set(labels.PROVIDER_LABEL_KEYS)
        assert f"`{labels.RESERVED_LABEL_PREFIX}`" in self.row()


class TestKeysThatUpdateInPlace:
    """Where a page lists the keys whose change submits nothing, it lists
    api.bodies.PROVIDER_SIDE_KEYS, in the stack file's or the program's naming."""

    def listed(self, name: str, pattern: str) -> list[set[str]]:
        found = [
            {snake(key) for key in ticked(match)} for match in re.findall(pattern, page(name), re.S)
        ]
        assert found, f"{name} no longer lists the keys that update in place"
        return found

    def test_the_review_page(self) -> None:
        """docs/review.md's **update**: the keys that change and submit nothing."""
        for keys in self.listed("docs/review.md", r"\*\*update\*\*\s*\(only (.*?) changed"):
            assert keys == set(PROVIDER_SIDE_KEYS), keys

    def test_the_config_page(self) -> None:
        """docs/config-shape.md's provider-side keys (and the stack-wide endpoint)."""
        for keys in self.listed("docs/config-shape.md", r"Changing a provider-side key \((.*?)\)"):
            assert keys - {"vertex-training:api_endpoint"} == set(PROVIDER_SIDE_KEYS), keys

    def test_the_plugin_page(self) -> None:
        """docs/plugin.md's keys that alone would update a job in place."""
        for keys in self.listed("docs/plugin.md", r"update it in place \((`[^)]*)\)"):
            assert keys == set(PROVIDER_SIDE_KEYS), keys


class TestSubmissionRetries:
    """docs/operations.md on what follows a submission that may have created its job."""

    def test_the_constants_are_where_the_page_says(self) -> None:
        """The file the page names defines CREATE_ATTEMPTS and the backoff."""
        text = prose("docs/operations.md")
        [path] = re.findall(r"`CREATE_ATTEMPTS` and `CREATE_BACKOFF_\*` in `([^`]+)`", text)
        source = page(path)
        assert "\nCREATE_ATTEMPTS = " in source and "\nCREATE_BACKOFF_INITIAL_S = " in source

    def test_the_figures_are_the_codes(self) -> None:
        """As many submissions, and the same waits between them, as the code makes."""
        text = prose("docs/operations.md")
        waits, wait = [], submission.CREATE_BACKOFF_INITIAL_S
        for _ in range(submission.CREATE_ATTEMPTS - 1):
            waits.append(int(wait))
            wait = min(wait * submission.CREATE_BACKOFF_MULTIPLIER, submission.CREATE_BACKOFF_MAX_S)
        said = f"({waits[0]} s, then {', '.join(str(w) for w in waits[1:])})"
        assert said in text, said
        assert f"at most {submission.CREATE_ATTEMPTS} submissions in all" in text


class TestCommandLine:
    """The pages that list the command line's commands list the parser's."""

    def test_the_reference_is_current(self) -> None:
        """docs/cli.md is what scripts/gen-cli-docs.py writes from the parser now."""
        assert page("docs/cli.md") == cli_docs().render(), (
            "docs/cli.md is stale: run .venv/bin/python scripts/gen-cli-docs.py"
        )

    def test_the_reference_lists_every_command(self) -> None:
        """Every command, subcommands by their full path, has a section of the page."""
        commands = cli_docs().commands()
        assert {"render", "prices refresh", "jobs orphans"} <= set(commands)
        text = page("docs/cli.md")
        for command in commands:
            assert f"`vertex-training {command}`" in text, command

    def test_the_guides_name_every_command(self) -> None:
        """docs/library.md, provider/README.md and docs/layout.md name each command."""
        commands = cli_docs().commands()
        library = page("docs/library.md")
        readme = ticked(page("provider/README.md"))
        [layout] = re.findall(r"`vertex-training ([a-z]+(?:\|[a-z]+)+)`", page("docs/layout.md"))
        for command in commands:
            assert f"`vertex-training {command}" in library, f"docs/library.md: {command}"
            assert command in readme, f"provider/README.md: {command}"
            assert command.split()[0] in layout.split("|"), f"docs/layout.md: {command}"
        assert len(layout.split("|")) == len({command.split()[0] for command in commands})
