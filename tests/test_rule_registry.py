"""The review's rule registry (vertex_training.review.rules.REGISTRY): each rule is one
entry, and a rule added as one entry is read from `vertex-training:policies` and from a
policy pack config, judged, reported, hinted at, listed by the pack and on docs/rules.md."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml
from pydantic import Field

from policy import resources
from tests.stacks import parse_stack
from vertex_training.errors import SpecError
from vertex_training.review import policies, rules_page
from vertex_training.review.rule_model import Flag, JobKey, Rule, RuleResult, RuleSettings, Scope
from vertex_training.review.rules import REGISTRY

if TYPE_CHECKING:
    from vertex_training.review.cost import Estimate
    from vertex_training.stackconfig import JobSpec

IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"


class MaxWorkers(RuleSettings):
    """``max_workers: {count: 2}``."""

    count: int = Field(ge=1, description="The most worker replicas a job runs.")


def _max_workers(
    rule: MaxWorkers, key: JobKey, job: JobSpec, _estimates: Mapping[str, Estimate]
) -> tuple[bool, str]:
    replicas = sum(pool.replicas for pool in job.worker_pools[1:] if pool is not None)
    if replicas <= rule.count:
        return True, f"runs {replicas} workers, at most {rule.count}"
    return False, f"runs {replicas} workers, more than {rule.count}: lower {key('workers')}"


#: A rule that is not the project's: all it takes is this one entry (and its check and
#: settings model above).
MAX_WORKERS = Rule(
    name="max_workers",
    description="No job runs more worker replicas than the ceiling.",
    settings=MaxWorkers,
    scope=Scope.JOB,
    check=_max_workers,
    fix="run fewer worker replicas",
    example="count: 2",
)


@pytest.fixture
def max_workers() -> Iterator[Rule]:
    """MAX_WORKERS in the registry for one test."""
    REGISTRY[MAX_WORKERS.name] = MAX_WORKERS
    try:
        yield MAX_WORKERS
    finally:
        del REGISTRY[MAX_WORKERS.name]


def jobs_of(**jobs: dict[str, object]) -> dict[str, JobSpec]:
    config = {
        "gcp:project": "test-project",
        "gcp:region": "us-central1",
        "vertex-training:jobs": jobs,
    }
    _, parsed = parse_stack(config, "dev")
    return parsed


def issues_of(raw: object) -> list[tuple[str, object, str]]:
    with pytest.raises(SpecError) as caught:
        policies.parse_policies(raw)
    return [(issue.key, issue.value, issue.message) for issue in caught.value.issues]


class TestOneEntry:
    """A rule added as one registry entry is read, judged, hinted at and listed."""

    def test_it_is_read_from_the_stacks_key(self, max_workers: Rule) -> None:
        """`vertex-training:policies` takes it with its settings and its enforcement."""
        config = policies.parse_policies({"max_workers": {"enforcement": "advisory", "count": 2}})
        enabled = config.enabled()
        assert list(enabled) == ["max_workers"]
        assert isinstance(enabled["max_workers"], MaxWorkers)
        assert (enabled["max_workers"].enforcement, enabled["max_workers"].count) == (
            "advisory",
            2,
        )
        assert list(policies.RULES)[-1] == "max_workers"
        assert policies.RULES["max_workers"] == max_workers.description

    def test_its_mistakes_name_the_key_the_value_and_the_fix(self, max_workers: Rule) -> None:
        """Its settings model's limits, an unknown setting and a misspelt name are refused
        as the project's own rules' are."""
        assert issues_of({"max_workers": {"count": 0}}) == [
            ("vertex-training:policies.max_workers.count", 0, "must be at least 1")
        ]
        [(_key, _value, unknown)] = issues_of({"max_workers": {"count": 2, "replicas": 3}})
        assert unknown == "unknown key 'replicas'; the keys allowed here are count or enforcement"
        [(_key, _value, misspelt)] = issues_of({"max_worker": {}})
        assert "did you mean 'max_workers'?" in misspelt

    def test_its_hint_is_its_example(self, max_workers: Rule) -> None:
        """Settings that are no mapping are refused with the entry's example."""
        [(key, value, message)] = issues_of({"max_workers": 2})
        assert (key, value) == ("vertex-training:policies.max_workers", 2)
        assert message == (
            "a rule's settings are a mapping: write e.g. max_workers: {enforcement: "
            "mandatory} (with count: 2), or leave the rule out to turn it off"
        )

    def test_it_is_judged_on_each_job(self, max_workers: Rule) -> None:
        """evaluate runs its check on each job, by name, in the registry's order."""
        jobs = jobs_of(
            big={"image": IMAGE, "workers": {"replicas": 4}},
            small={"image": IMAGE, "scheduling": {"timeout": "1h"}},
        )
        config = policies.parse_policies({"max_workers": {"count": 2}, "require_timeout": {}})
        results = policies.evaluate(config, jobs, None, {})
        assert results == [
            RuleResult("require_timeout", "mandatory", False, "big", results[0].message),
            RuleResult("require_timeout", "mandatory", True, "small", "stops after 1h at most"),
            RuleResult(
                "max_workers",
                "mandatory",
                False,
                "big",
                "runs 4 workers, more than 2: lower vertex-training:jobs.big.workers",
            ),
            RuleResult("max_workers", "mandatory", True, "small", "runs 0 workers, at most 2"),
        ]

    def test_the_pack_lists_it_and_reads_it_from_its_config(
        self, max_workers: Rule, tmp_path: Path
    ) -> None:
        """The pack has its three policies, its settings declared with their description;
        a pack config turns it on and the pack reports its failure."""
        listed = {p.name: p for p in resources.rule_policies()}
        mine = [listed[name] for name in ("max_workers", *_stack_policies("max_workers"))]
        assert {p.description for p in mine} == {max_workers.description}
        assert [p.level for p in mine] == ["disabled", "mandatory", "advisory"]
        assert mine[0].settings == {
            "count": {"description": "The most worker replicas a job runs."}
        }
        assert set(_stack_policies("max_workers")) <= policies.pack_own_policies()

        (tmp_path / "Pulumi.yaml").write_text("name: training\n")
        job = resources.Resource(
            resources.PLUGIN_JOB_TYPES[0],
            "urn:pulumi:dev::training::vertex-training:index:TrainingJob::train",
            {
                "job": {"image": IMAGE, "workers": {"replicas": 3}},
                "project": "test-project",
                "region": "us-central1",
                "backend": "vertex",
            },
        )
        configured = {"max_workers": ("advisory", {"count": 2.0})}
        stack = resources.view([job], tmp_path, configured)
        assert (stack.source, stack.issues) == (resources.FROM_PACK_CONFIG, [])
        [result] = stack.results()
        assert (result.rule, result.enforcement, result.passed) == (
            "max_workers",
            "advisory",
            False,
        )
        assert result.message == "runs 3 workers, more than 2: lower job.workers"

    def test_it_leaves_with_its_entry(self) -> None:
        """Without the entry, the rule is unknown again and the project's rules are as
        they were."""
        [(_key, _value, message)] = issues_of({"max_workers": {"count": 2}})
        assert message.startswith("unknown key 'max_workers'")
        assert "max_workers" not in {p.rule for p in resources.rule_policies()}
        assert policies.parse_policies({}) == policies.PoliciesConfig()


def _stack_policies(rule: str) -> tuple[str, str]:
    return policies.stack_policy(rule, "mandatory"), policies.stack_policy(rule, "advisory")


class TestRegistry:
    """The project's entries: each one complete and consistent."""

    @pytest.mark.parametrize("name", list(REGISTRY))
    def test_each_example_is_the_rules_settings(self, name: str) -> None:
        """An entry's example, as a stack file writes it, parses as its rule's settings."""
        rule = REGISTRY[name]
        assert rule.name == name
        written = yaml.safe_load(f"{{{rule.example}}}")
        config = policies.parse_policies({name: written})
        assert type(config.enabled()[name]) is rule.settings
        assert set(written) == set(rule.settings.described())

    def test_the_config_model_is_derived_from_the_registry(self) -> None:
        """PoliciesConfig has one optional field per entry, in the registry's order."""
        fields = policies.PoliciesConfig.model_fields
        assert list(fields) == list(REGISTRY) == list(policies.RULES)
        for name, field in fields.items():
            assert field.default is None
            assert REGISTRY[name].settings in getattr(field.annotation, "__args__", ())

    def test_an_entry_gives_an_example_exactly_when_it_has_settings(self) -> None:
        """An example for a rule with no settings, or none for one with settings, is
        refused when the entry is made."""
        with pytest.raises(ValueError, match="give an example exactly when it has settings"):
            Rule("x", "X.", Flag, Scope.JOB, _max_workers, "fix it", example="count: 2")
        with pytest.raises(ValueError, match="give an example exactly when it has settings"):
            Rule("x", "X.", MaxWorkers, Scope.JOB, _max_workers, "fix it")


class TestRulesPage:
    """docs/rules.md, written from the registry (vertex_training.review.rules_page)."""

    PAGE = Path(__file__).resolve().parent.parent / rules_page.PAGE

    def test_the_page_is_not_stale(self) -> None:
        """The page is what the registry writes: run `python -m
        vertex_training.review.rules_page docs/rules.md` after changing a rule."""
        assert self.PAGE.read_text(encoding="utf-8") == rules_page.render()

    def test_the_pages_examples_turn_every_rule_on(self) -> None:
        """Its stack file and its pack config each turn on every rule, mandatory."""
        text = self.PAGE.read_text(encoding="utf-8")
        stack = yaml.safe_load(text.split("```yaml\n", 1)[1].split("```", 1)[0])
        pack = json.loads(text.split("```json\n", 1)[1].split("```", 1)[0])
        for config in (
            policies.parse_policies(stack["config"][policies.POLICIES_KEY]),
            policies.from_pack_config(pack, "rules.json"),
        ):
            enabled = config.enabled()
            assert list(enabled) == list(REGISTRY)
            assert {s.enforcement for s in enabled.values()} == {"mandatory"}

    def test_a_new_entry_is_on_the_page(self, max_workers: Rule) -> None:
        """The page lists a rule added as one entry, with its settings and fix."""
        page = rules_page.render()
        assert (
            "| `max_workers` | job | No job runs more worker replicas than the ceiling. | "
            "`count`: The most worker replicas a job runs. | run fewer worker replicas |"
        ) in page
        assert "max_workers: {enforcement: mandatory, count: 2}" in page
