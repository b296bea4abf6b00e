"""Stack files read as the Pulumi CLI reads them
(``provider/vertex_training/stackconfig/_yaml.py``).

The fast tests write out what the program gets for each case; the engine tests check each
of those values once against the real CLI (``pulumi config --json``), and the files in
``stacks/`` as a whole.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.engine import REPO, config_cli_env, tools_missing
from vertex_training.errors import SpecError
from vertex_training.stackconfig import read_stack_file
from vertex_training.stackconfig._yaml import StackYAMLError, read_config

#: Each case: a value as written in a stack file, and the value the program gets for it.
#: A top-level scalar reaches the program as text; an object as JSON, which it parses.
SCALARS: dict[str, tuple[str, Any]] = {
    "yes": ("yes", "yes"),
    "no": ("no", "no"),
    "on": ("on", "on"),
    "off": ("off", "off"),
    "y": ("y", "y"),
    "n": ("n", "n"),
    "True": ("True", "true"),
    "TRUE": ("TRUE", "true"),
    "false": ("false", "false"),
    "tilde": ("~", ""),
    "null": ("null", ""),
    "empty": ("", ""),
    "octal 1.1": ("0777", "511"),
    "octal 1.2": ("0o17", "15"),
    "hex": ("0x1F", "31"),
    "binary": ("0b101", "5"),
    "underscores": ("1_000", "1000"),
    "exponent": ("1e3", "1000"),
    "integral float": ("1.0", "1"),
    "leading dot": (".5", "0.5"),
    "negative zero": ("-0.0", "0"),
    "1e21": ("1e21", "1e+21"),
    "1e-7": ("1e-7", "1e-7"),
    "date": ("2026-01-02", "2026-01-02 00:00:00 +0000 UTC"),
    "datetime": ("2026-01-02T03:04:05Z", "2026-01-02 03:04:05 +0000 UTC"),
    "datetime fraction": ("2026-01-02T03:04:05.120Z", "2026-01-02 03:04:05.12 +0000 UTC"),
    "datetime no zone": ("2026-01-02T03:04:05", "2026-01-02T03:04:05"),
    "int64 max": ("9223372036854775807", "9223372036854775807"),
    "uint64 max": ("18446744073709551615", "18446744073709551615"),
    "beyond uint64": ("99999999999999999999", "100000000000000000000"),
    "quoted octal": ('"0777"', "0777"),
    "quoted float": ("'1.0'", "1.0"),
    "quoted yes": ('"yes"', "yes"),
    "str tag": ("!!str 0x1F", "0x1F"),
    "literal block": ("|\n    0x1F", "0x1F\n"),
    "folded block": (">-\n    on", "on"),
    "float tag": ("!!float 1", "1"),
    "local tag": ("!custom 12", "12"),
}

OBJECTS: dict[str, tuple[str, Any]] = {
    "env and args": (
        "{env: {DEBUG: yes, MODE: off}, args: [--flag, on]}",
        {"args": ["--flag", "on"], "env": {"DEBUG": "yes", "MODE": "off"}},
    ),
    "yaml 1.1 booleans": (
        "[yes, no, on, off, y, n, Yes, OFF]",
        ["yes", "no", "on", "off", "y", "n", "Yes", "OFF"],
    ),
    "yaml 1.2 booleans": ("[true, True, TRUE, false]", [True, True, True, False]),
    "nulls": ("[~, null, Null, ]", [None, None, None]),
    "ints": ("[0777, 0o17, 0x1F, 0b101, -0x1F, 1_000, +12]", [511, 15, 31, 5, -31, 1000, 12]),
    "floats": (
        "[1e3, 1.0, .5, -0.0, 1e21, 1e-7, 1.5e300, 3.14]",
        [1000, 1, 0.5, 0, 1e21, 1e-7, 1.5e300, 3.14],
    ),
    "timestamps": (
        "[2026-01-02, 2026-01-02T03:04:05Z, 2026-1-2 3:04:05.5]",
        [
            "2026-01-02 00:00:00 +0000 UTC",
            "2026-01-02 03:04:05 +0000 UTC",
            "2026-01-02 03:04:05.5 +0000 UTC",
        ],
    ),
    "big ints": (
        "[9223372036854775807, 18446744073709551615, 99999999999999999999]",
        [9223372036854775807, 18446744073709552000, 100000000000000000000],
    ),
    "quoted": ("['0777', \"1e3\", \"on\", '~']", ["0777", "1e3", "on", "~"]),
    "anchors": (
        "{base: &b {x: on, n: 0x10}, copy: *b}",
        {"base": {"n": 16, "x": "on"}, "copy": {"n": 16, "x": "on"}},
    ),
    "merge": (
        "{d: &d {a: 1, b: 2}, j: {<<: *d, b: 3}}",
        {"d": {"a": 1, "b": 2}, "j": {"a": 1, "b": 3}},
    ),
    "merge first wins": (
        "{d: &d {a: 1}, e: &e {a: 2, c: 4}, j: {b: 0, <<: [*d, *e]}}",
        {"d": {"a": 1}, "e": {"a": 2, "c": 4}, "j": {"a": 1, "b": 0, "c": 4}},
    ),
    "merged non-string keys": ("{j: {<<: {1: a, true: b}}}", {"j": {"1": "a", "true": "b"}}),
    "secure is not a string": ("{secure: 12}", {"secure": 12}),
    "non-string keys": (
        "{1: a, on: b, true: c, ~: d, 1.5: e, 2026-01-02: f, 1e3: g, .inf: h, 0x10: i}",
        {
            "+Inf": "h",
            "1": "a",
            "1.5": "e",
            "1000": "g",
            "16": "i",
            "2026-01-02 00:00:00 +0000 UTC": "f",
            "<nil>": "d",
            "on": "b",
            "true": "c",
        },
    ),
    "non-string keys below string keys": (
        "{c: [{2: y, x: 1}], <<: [{a: 1}, {a: 2, 3: x}]}",
        {"3": "x", "a": 1, "c": [{"2": "y", "x": 1}]},
    ),
}

#: Files the CLI refuses, and a word of what ours says.
REFUSED: dict[str, tuple[str, str]] = {
    "duplicate keys": ("config:\n  vertex-training:v: {a: 1, a: 2}\n", "already defined"),
    "duplicate config keys": (
        "config:\n  vertex-training:v: 1\n  vertex-training:v: 2\n",
        "already defined",
    ),
    "keys colliding when written again": (
        "config:\n  vertex-training:v: {1.0: a, 1: b}\n",
        "already defined",
    ),
    "non-string config key": ("config:\n  1: x\n", "configuration key"),
    "non-string key outside config": ("1: x\nconfig: {}\n", "expected only string keys"),
    "infinity": ("config:\n  vertex-training:v: -.inf\n", "unsupported value"),
    "nan in object": ("config:\n  vertex-training:v: [.nan]\n", "unsupported value"),
    "bad bool tag": ("config:\n  vertex-training:v: !!bool yes\n", "cannot decode"),
    "merge of a scalar": ("config:\n  vertex-training:v: {<<: 1}\n", "map merge"),
    "key with two colons": ("config:\n  a:b:c: 1\n", "configuration key"),
}


def _file(value: str) -> str:
    """A stack file whose one key holds this value (indented under it when multi-line)."""
    return f"config:\n  vertex-training:v: {value}\n"


class TestReadConfigScalars:
    """read_config: a top-level scalar reaches the program as the CLI's text for it."""

    @pytest.mark.parametrize(("text", "expected"), SCALARS.values(), ids=SCALARS.keys())
    def test_scalar_text(self, text: str, expected: str) -> None:
        """Each scalar gives the text `pulumi config` shows for it."""
        assert read_config(_file(text), "t.yaml") == {"vertex-training:v": expected}

    def test_secure_stays_encrypted(self) -> None:
        """A top-level {secure: ...} stays recognisable as a secret, still encrypted."""
        config = read_config(_file("{secure: 'v1:abc'}"), "t.yaml")
        assert config == {"vertex-training:v": {"secure": "v1:abc"}}

    def test_empty_file_and_config(self) -> None:
        """An empty file, or an empty config:, has no keys."""
        assert read_config("", "t.yaml") == {}
        assert read_config("config:\n", "t.yaml") == {}

    def test_keys_namespaced_with_project(self) -> None:
        """With project, a key without a namespace gets it, and a:config:b reads a:b."""
        text = "config:\n  jobs: {}\n  gcp:config:region: x\n"
        assert read_config(text, "t.yaml", project="p") == {"p:jobs": {}, "gcp:region": "x"}
        assert read_config(text, "t.yaml") == {"jobs": {}, "gcp:region": "x"}


class TestReadConfigObjects:
    """read_config: an object reaches the program as JSON, which it parses."""

    @pytest.mark.parametrize(("text", "expected"), OBJECTS.values(), ids=OBJECTS.keys())
    def test_object_value(self, text: str, expected: Any) -> None:
        """Each object gives what the program parses from the CLI's JSON for it."""
        assert read_config(_file(text), "t.yaml") == {"vertex-training:v": expected}

    def test_nested_secure_stays_encrypted(self) -> None:
        """A {secure: ...} inside an object stays a secret where it is."""
        config = read_config(_file("{env: {TOKEN: {secure: 'v1:x'}, A: on}}"), "t.yaml")
        assert config == {"vertex-training:v": {"env": {"A": "on", "TOKEN": {"secure": "v1:x"}}}}


class TestReadConfigRefused:
    """read_config: files the CLI refuses raise StackYAMLError with its reason."""

    @pytest.mark.parametrize(("text", "reason"), REFUSED.values(), ids=REFUSED.keys())
    def test_refused(self, text: str, reason: str) -> None:
        """Each refused file raises, naming the file and the reason."""
        with pytest.raises(StackYAMLError, match=re.escape(reason)) as caught:
            read_config(text, "Pulumi.t.yaml")
        assert "Pulumi.t.yaml" in str(caught.value)


class TestReadStackFile:
    """read_stack_file: stack files read through read_config, mistakes as issues."""

    def test_issue_example(self, tmp_path: Path) -> None:
        """env: {DEBUG: yes, MODE: off} and args: [--flag, on] stay strings (issue 15)."""
        path = tmp_path / "Pulumi.dev.yaml"
        path.write_text(
            "config:\n  vertex-training:jobs:\n    a:\n      env: {DEBUG: yes, MODE: off}\n"
            "      args: [--flag, on]\n"
        )
        stack, config = read_stack_file(path)
        assert stack == "dev"
        job = config["vertex-training:jobs"]["a"]
        assert job == {"args": ["--flag", "on"], "env": {"DEBUG": "yes", "MODE": "off"}}

    def test_a_key_without_namespace_gets_the_projects(self, tmp_path: Path) -> None:
        """In a project, `backend: local` reads as <project name>:backend, as the CLI gives
        it to the program."""
        (tmp_path / "stacks").mkdir()
        path = tmp_path / "stacks" / "Pulumi.dev.yaml"
        path.write_text("config:\n  backend: local\n  gcp:region: us-central1\n")
        (tmp_path / "Pulumi.yaml").write_text("name: other-project\nruntime: python\n")
        assert read_stack_file(path)[1] == {
            "other-project:backend": "local",
            "gcp:region": "us-central1",
        }

    def test_refused_file_is_an_issue(self, tmp_path: Path) -> None:
        """A file the CLI refuses is a SpecError naming the file and the reason."""
        path = tmp_path / "Pulumi.dev.yaml"
        path.write_text("config:\n  vertex-training:jobs: {a: 1, a: 2}\n")
        with pytest.raises(SpecError, match="already defined"):
            read_stack_file(path)

    def test_bad_syntax_is_an_issue(self, tmp_path: Path) -> None:
        """Broken YAML is a SpecError with its line and column."""
        path = tmp_path / "Pulumi.dev.yaml"
        path.write_text("config:\n  a: [1\n")
        with pytest.raises(SpecError, match="is not valid YAML at line"):
            read_stack_file(path)


# --- against the real CLI ----------------------------------------------------------------


@dataclass
class _Cli:
    """A Pulumi project in a temporary directory, with a file backend, for `pulumi config`."""

    root: Path
    env: dict[str, str]

    @classmethod
    def create(cls, tmp: Path) -> _Cli:
        root = tmp / "project"
        (root / "stacks").mkdir(parents=True)
        (root / "Pulumi.yaml").write_text(
            "name: vertex-training\nruntime: python\nstackConfigDir: stacks\n"
        )
        return cls(root, config_cli_env(tmp))

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["pulumi", *args, "--non-interactive"],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )

    def stack(self, name: str, text: str) -> Path:
        """A stack whose file holds ``text`` (`stack init` writes its own first, with a salt)."""
        path = self.root / "stacks" / f"Pulumi.{name}.yaml"
        result = self.run("stack", "init", name)
        assert result.returncode == 0, result.stderr
        salt = re.search(r"^encryptionsalt: .*$", path.read_text(), re.MULTILINE)
        assert salt is not None
        if "encryptionsalt:" not in text:
            text = f"{salt[0]}\n{text}"
        path.write_text(text)
        return path

    def config(self, name: str) -> tuple[int, dict[str, Any], str]:
        """`pulumi config --json` (secrets shown): what the program gets for each key."""
        out = self.root / f"{name}.json"
        with out.open("w") as stdout:
            proc = subprocess.run(
                ["pulumi", "config", "--json", "--show-secrets", "--stack", name],
                cwd=self.root,
                env=self.env,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
                check=False,
            )
        if proc.returncode != 0:
            return proc.returncode, {}, proc.stderr
        shown = json.loads(out.read_text())
        return 0, {key: _program_view(entry) for key, entry in shown.items()}, proc.stderr


def _program_view(entry: dict[str, Any]) -> Any:
    """A key as the program holds it: objects JSON-parsed (settings.py ``_value``)."""
    return json.loads(entry["value"]) if "objectValue" in entry else entry["value"]


def _with_plaintext(ours: Any, cli: Any) -> Any:
    """``ours`` with each {secure: ...} replaced by the plaintext the CLI shows there."""
    if isinstance(ours, dict) and set(ours) == {"secure"} and isinstance(ours["secure"], str):
        assert isinstance(cli, str)
        return cli
    if isinstance(ours, dict) and isinstance(cli, dict):
        return {k: _with_plaintext(v, cli.get(k)) for k, v in ours.items()}
    if isinstance(ours, list) and isinstance(cli, list) and len(ours) == len(cli):
        return [_with_plaintext(v, c) for v, c in zip(ours, cli, strict=True)]
    return ours


needs_cli = pytest.mark.skipif(tools_missing() is not None, reason=tools_missing() or "")

ALL_CASES = {**SCALARS, **OBJECTS}


@pytest.fixture(scope="module")
def cli_cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The CLI's reading of one stack file holding every case, one key each."""
    cli = _Cli.create(tmp_path_factory.mktemp("cli-cases"))
    lines = ["config:"]
    for index, (text, _) in enumerate(ALL_CASES.values()):
        lines.append(f"  vertex-training:case{index}: {text}")
    cli.stack("cases", "\n".join(lines) + "\n")
    code, config, err = cli.config("cases")
    assert code == 0, err
    yield config


@pytest.mark.engine
@needs_cli
class TestAgainstCli:
    """The written-out values above are the CLI's own."""

    @pytest.mark.parametrize("index", range(len(ALL_CASES)), ids=ALL_CASES.keys())
    def test_case_matches_cli(self, cli_cases: dict[str, Any], index: int) -> None:
        """The CLI gives the program the value written out for this case."""
        expected = list(ALL_CASES.values())[index][1]
        assert cli_cases[f"vertex-training:case{index}"] == expected

    @pytest.mark.parametrize(("text", "reason"), REFUSED.values(), ids=REFUSED.keys())
    def test_refused_by_cli(self, tmp_path: Path, text: str, reason: str) -> None:
        """The CLI refuses each file read_config refuses."""
        cli = _Cli.create(tmp_path)
        cli.stack("bad", text)
        code, _, _ = cli.config("bad")
        assert code != 0

    def test_secrets(self, tmp_path: Path) -> None:
        """Secrets set by the CLI read as {secure: ...} where the CLI decrypts them."""
        cli = _Cli.create(tmp_path)
        path = cli.stack("s", "config:\n  vertex-training:jobs: {a: {env: {A: on}}}\n")
        for args in (
            ("vertex-training:token", "s3cret"),
            ("--path", "vertex-training:jobs.a.env.TOKEN", "t0ken"),
        ):
            result = cli.run("config", "set", "--secret", "--stack", "s", *args)
            assert result.returncode == 0, result.stderr
        code, shown, err = cli.config("s")
        assert code == 0, err
        ours = read_config(path.read_text(), str(path))
        assert ours["vertex-training:token"].keys() == {"secure"}
        assert ours["vertex-training:jobs"]["a"]["env"]["TOKEN"].keys() == {"secure"}
        assert _with_plaintext(ours, shown) == shown

    @pytest.mark.parametrize(
        "path", sorted((REPO / "stacks").glob("Pulumi.*.yaml")), ids=lambda p: p.name
    )
    def test_stacks_read_as_cli_reads_them(self, tmp_path: Path, path: Path) -> None:
        """Each file in stacks/ reads the same through read_stack_file as through the CLI."""
        name = path.name.removeprefix("Pulumi.").removesuffix(".yaml")
        cli = _Cli.create(tmp_path)
        cli.stack(name, path.read_text())
        code, shown, err = cli.config(name)
        assert code == 0, err
        _, ours = read_stack_file(path)
        assert ours == shown
