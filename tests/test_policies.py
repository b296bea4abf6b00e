"""The team's review rules (vertex_training.review.policies) and what the policy pack reads from
the engine (policy/resources.py): each rule on a passing and a failing stack, enforcement,
mistakes in `vertex-training:policies` and in a policy pack config, and the jobs of every
kind of program read from their resources' own inputs."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from policy import resources
from tests.engine import REPO
from tests.prices import PRICES
from tests.stacks import parse_stack
from vertex_training.catalog.prices import save_snapshot
from vertex_training.errors import SpecError
from vertex_training.resources.job_arguments import JOB_ARGUMENT
from vertex_training.review import cost
from vertex_training.review.policies import (
    CONFIG_POLICY,
    COVERAGE_POLICY,
    POLICIES_KEY,
    PROGRAM_JOB_KEY,
    RULES,
    BucketAccess,
    Grant,
    PoliciesConfig,
    RuleResult,
    evaluate,
    from_pack_config,
    parse_policies,
    stack_policy,
)
from vertex_training.stackconfig import JobSpec
from vertex_training.stackconfig.platform import Platform, resolve_platform

IMAGE = "us-docker.pkg.dev/test-project/repo/trainer:1"
GOOD = {
    "image": IMAGE,
    "machine": "n1-standard-4",
    "labels": {"team": "vision", "cost-center": "ml"},
    "scheduling": {"timeout": "2h", "strategy": "SPOT"},
}


@dataclass(frozen=True)
class UnknownEstimate:
    """An estimate whose price is not in the snapshot (the shape of
    vertex_training.review.cost.Estimate)."""

    hourly_usd: float | None = None
    max_usd: float | None = None
    hours: float = 2.0
    trials: int = 1
    strategy: str = "STANDARD"
    unknown: tuple[str, ...] = ("no price for a3-ultragpu-8g in us-central1",)


#: A job the price table knows (STANDARD capacity).
PRICED = {**GOOD, "scheduling": {"timeout": "2h"}}


def stack_config(backend: str = "vertex", **jobs: dict[str, Any]) -> dict[str, Any]:
    return {
        "gcp:project": "test-project",
        "gcp:region": "us-central1",
        "vertex-training:backend": backend,
        "vertex-training:jobs": jobs,
    }


def jobs_of(backend: str = "vertex", **jobs: dict[str, Any]) -> dict[str, JobSpec]:
    _, parsed = parse_stack(stack_config(backend, **jobs), "dev")
    return parsed


def platform_of(**raw: Any) -> Platform:
    platform, issues = resolve_platform(
        raw, stack="dev", project="test-project", region="us-central1", backend="vertex"
    )
    assert platform is not None, issues
    return platform


def run(
    rules: dict[str, Any],
    jobs: dict[str, JobSpec],
    platform: Platform | None = None,
    estimates: dict[str, Any] | None = None,
    **kwargs: Any,
) -> list[RuleResult]:
    if estimates is None:
        estimates = {name: cost.estimate(job, PRICES) for name, job in jobs.items()}
    return evaluate(parse_policies(rules), jobs, platform, estimates, **kwargs)


def only(results: list[RuleResult]) -> RuleResult:
    assert len(results) == 1, results
    return results[0]


def issues_of(raw: Any) -> list[tuple[str, Any, str]]:
    with pytest.raises(SpecError) as caught:
        parse_policies(raw)
    return [(issue.key, issue.value, issue.message) for issue in caught.value.issues]


class TestParsePolicies:
    """`vertex-training:policies` -> PoliciesConfig, every mistake an Issue."""

    def test_unset_turns_every_rule_off(self) -> None:
        """None and {} enable nothing, so nothing is judged."""
        assert parse_policies(None) == PoliciesConfig() == parse_policies({})
        assert run({}, jobs_of(train=GOOD)) == []

    def test_the_documented_example_parses(self) -> None:
        """The example of docs/policies.md enables all nine rules."""
        example = yaml.safe_load(
            """
            required_labels: {enforcement: mandatory, labels: [team, cost-center]}
            allowed_regions: {enforcement: mandatory, regions: [us-central1, europe-west4]}
            max_accelerators_per_job: {enforcement: advisory, count: 8}
            max_cost_per_job: {enforcement: mandatory, usd: 500}
            max_cost_per_change: {enforcement: advisory, usd: 2000}
            spot_only: {enforcement: mandatory}
            require_timeout: {enforcement: mandatory}
            no_primitive_roles: {enforcement: mandatory}
            no_public_buckets: {enforcement: mandatory}
            """
        )
        config = parse_policies(example)
        assert list(config.enabled()) == list(RULES)
        assert config.max_accelerators_per_job is not None
        assert config.max_accelerators_per_job.enforcement == "advisory"

    def test_enforcement_defaults_to_mandatory(self) -> None:
        """A rule that names no enforcement is mandatory."""
        assert parse_policies({"spot_only": {}}).enabled()["spot_only"].enforcement == "mandatory"

    @pytest.mark.parametrize(
        ("raw", "key", "value", "fix"),
        [
            (
                {"max_cost_per_job": {"usd": -5}},
                "max_cost_per_job.usd",
                -5,
                "must be at least 0",
            ),
            (
                {"max_cost_per_job": {"usd": "lots"}},
                "max_cost_per_job.usd",
                "lots",
                "see docs/policies.md",
            ),
            (
                {"spot_only": {"enforcement": "mandetory"}},
                "spot_only.enforcement",
                "mandetory",
                "must be advisory or mandatory. Did you mean mandatory?",
            ),
            (
                {"spot_onyl": {}},
                "spot_onyl",
                {},
                "did you mean 'spot_only'?",
            ),
            (
                {"allowed_regions": {"regions": ["us-central"]}},
                "allowed_regions.regions[0]",
                "us-central",
                "write a training region such as us-central1",
            ),
            (
                {"required_labels": {"labels": ["Team"]}},
                "required_labels.labels[0]",
                "Team",
                "write e.g. team or cost-center",
            ),
            (
                {"required_labels": {}},
                "required_labels.labels",
                None,
                "'labels' is required here; add it",
            ),
            (
                {"max_accelerators_per_job": {"count": 8, "gpus": 2}},
                "max_accelerators_per_job.gpus",
                2,
                "unknown key 'gpus'",
            ),
            (
                {"require_timeout": True},
                "require_timeout",
                True,
                "write e.g. require_timeout: {enforcement: mandatory}",
            ),
            (
                ["spot_only"],
                "",
                ["spot_only"],
                "must be a mapping of rule: settings",
            ),
        ],
    )
    def test_mistakes_name_key_value_and_fix(
        self, raw: Any, key: str, value: Any, fix: str
    ) -> None:
        """Each mistake names the full key, the value written and what to write instead."""
        [(found_key, found_value, message)] = issues_of(raw)
        assert found_key == f"{POLICIES_KEY}.{key}".rstrip(".")
        assert found_value == value
        assert fix in message

    def test_every_mistake_is_reported_at_once(self) -> None:
        """Two bad rules give two issues."""
        found = issues_of({"spot_only": "yes", "max_cost_per_job": {"usd": -1}})
        assert [key for key, _, _ in found] == [
            f"{POLICIES_KEY}.spot_only",
            f"{POLICIES_KEY}.max_cost_per_job.usd",
        ]

    def test_the_stack_accepts_the_key_without_reading_it(self) -> None:
        """parse_stack takes `vertex-training:policies`, even with mistakes in it."""
        config = {**stack_config(train=GOOD), POLICIES_KEY: {"spot_onyl": 1}}
        _, jobs = parse_stack(config, "dev")
        assert list(jobs) == ["train"]

    def test_a_misspelt_stack_key_suggests_policies(self) -> None:
        """`vertex-training:polices` is an unknown key with a suggestion."""
        with pytest.raises(SpecError) as caught:
            parse_stack({**stack_config(train=GOOD), "vertex-training:polices": {}}, "dev")
        assert "policies" in str(caught.value)


class TestJobRules:
    """Rules judged per job: a passing and a failing stack each."""

    def test_required_labels(self) -> None:
        """A job missing a required label fails, naming the labels key."""
        rules = {"required_labels": {"labels": ["team", "cost-center"]}}
        assert only(run(rules, jobs_of(train=GOOD))).passed
        failed = only(run(rules, jobs_of(train={**GOOD, "labels": {"team": "vision"}})))
        assert (failed.passed, failed.job, failed.rule) == (False, "train", "required_labels")
        assert "cost-center" in failed.message
        assert "vertex-training:jobs.train.labels" in failed.message

    def test_allowed_regions(self) -> None:
        """A job outside the allowed regions fails, naming the region key and the choices."""
        rules = {"allowed_regions": {"regions": ["us-central1", "europe-west4"]}}
        assert only(run(rules, jobs_of(train=GOOD))).passed
        failed = only(run(rules, jobs_of(train={**GOOD, "region": "asia-east1"})))
        assert not failed.passed
        assert "asia-east1" in failed.message
        assert "vertex-training:jobs.train.region" in failed.message
        assert "us-central1 or europe-west4" in failed.message

    def test_max_accelerators_per_job(self) -> None:
        """Replicas times accelerators count against the ceiling."""
        rules = {"max_accelerators_per_job": {"count": 4}}
        four = {**GOOD, "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 4}}
        assert only(run(rules, jobs_of(train=four))).passed
        eight = {**four, "workers": {"replicas": 1}}
        failed = only(run(rules, jobs_of(train=eight)))
        assert not failed.passed
        assert "holds 8 accelerators" in failed.message

    def test_max_accelerators_counts_parallel_trials(self) -> None:
        """A tuning job holds each parallel trial's accelerators at once."""
        study = {
            "metrics": [{"id": "accuracy", "goal": "MAXIMIZE"}],
            "parameters": {"lr": {"type": "double", "min": 0.001, "max": 0.1}},
            "max_trials": 4,
            "parallel_trials": 2,
        }
        job = {**GOOD, "accelerator": {"type": "NVIDIA_TESLA_T4", "count": 2}, "study": study}
        assert only(run({"max_accelerators_per_job": {"count": 4}}, jobs_of(tune=job))).passed
        failed = only(run({"max_accelerators_per_job": {"count": 3}}, jobs_of(tune=job)))
        assert not failed.passed
        assert "parallel_trials" in failed.message

    def test_max_cost_per_job(self) -> None:
        """A job whose most cost is over the ceiling fails, with the levers to pull."""
        jobs = jobs_of(train=PRICED)
        most = cost.estimate(jobs["train"], PRICES).max_usd
        assert most is not None
        assert only(run({"max_cost_per_job": {"usd": most}}, jobs)).passed
        failed = only(run({"max_cost_per_job": {"usd": most / 2}}, jobs))
        assert not failed.passed
        assert "vertex-training:jobs.train.scheduling.timeout" in failed.message

    def test_an_unknown_cost_fails_the_cost_rule_saying_why(self) -> None:
        """No price in the table is a failure that gives the estimate's reason."""
        jobs = jobs_of(train=GOOD)
        failed = only(
            run({"max_cost_per_job": {"usd": 500}}, jobs, estimates={"train": UnknownEstimate()})
        )
        assert not failed.passed
        assert "unknown" in failed.message and "a3-ultragpu-8g" in failed.message
        missing = only(run({"max_cost_per_job": {"usd": 500}}, jobs, estimates={}))
        assert not missing.passed and "no estimate" in missing.message

    def test_spot_only(self) -> None:
        """A job not on SPOT fails, naming the strategy key."""
        assert only(run({"spot_only": {}}, jobs_of(train=GOOD))).passed
        standard = {**GOOD, "scheduling": {"timeout": "2h"}}
        failed = only(run({"spot_only": {}}, jobs_of(train=standard)))
        assert not failed.passed
        assert "STANDARD" in failed.message
        assert "vertex-training:jobs.train.scheduling.strategy: SPOT" in failed.message

    def test_require_timeout(self) -> None:
        """A job with no scheduling.timeout fails, naming the key."""
        assert only(run({"require_timeout": {}}, jobs_of(train=GOOD))).passed
        no_timeout = {**GOOD, "scheduling": {"strategy": "SPOT"}}
        failed = only(run({"require_timeout": {}}, jobs_of(train=no_timeout)))
        assert not failed.passed
        assert "vertex-training:jobs.train.scheduling.timeout" in failed.message

    def test_local_jobs_are_exempt_from_region_spot_and_cost(self) -> None:
        """A local-backend job passes the region, SPOT and cost rules, not the others."""
        local = {"image": IMAGE, "region": "asia-east1"}
        rules = {
            "allowed_regions": {"regions": ["us-central1"]},
            "spot_only": {},
            "max_cost_per_job": {"usd": 0},
            "max_cost_per_change": {"usd": 0},
            "require_timeout": {},
        }
        results = {r.rule: r for r in run(rules, jobs_of("local", here=local))}
        assert all(results[r].passed for r in ("allowed_regions", "spot_only", "max_cost_per_job"))
        assert results["max_cost_per_change"].passed
        assert not results["require_timeout"].passed


class TestStackRules:
    """Rules judged on the whole stack: the change's cost, IAM and buckets."""

    def test_max_cost_per_change_sums_the_changed_jobs(self) -> None:
        """Only the jobs the change submits or replaces count; None counts them all."""
        jobs = jobs_of(a=PRICED, b=PRICED)
        each = cost.estimate(jobs["a"], PRICES).max_usd
        assert each is not None
        rules = {"max_cost_per_change": {"usd": each * 1.5}}
        assert only(run(rules, jobs, changed=["a"])).passed
        failed = only(run(rules, jobs))
        assert (failed.passed, failed.job) == (False, None)
        assert "a and b" in failed.message
        assert only(run(rules, jobs, changed=[])).passed

    def test_max_cost_per_change_with_an_unknown_cost(self) -> None:
        """A changed job of unknown cost makes the change's cost unknown."""
        jobs = jobs_of(a=GOOD)
        failed = only(
            run({"max_cost_per_change": {"usd": 10}}, jobs, estimates={"a": UnknownEstimate()})
        )
        assert not failed.passed and "unknown" in failed.message

    def test_no_primitive_roles(self) -> None:
        """The platform's own grants pass; an editor grant fails, naming member and role."""
        jobs, platform = jobs_of(train=GOOD), platform_of()
        passed = only(run({"no_primitive_roles": {}}, jobs, platform))
        assert passed.passed and "roles/storage.objectAdmin" in passed.message
        editor = [Grant("user:bob@example.com", "roles/editor", "project test-project")]
        failed = only(run({"no_primitive_roles": {}}, jobs, platform, grants=editor))
        assert not failed.passed
        assert "user:bob@example.com" in failed.message and "roles/editor" in failed.message

    def test_no_public_buckets(self) -> None:
        """The platform's bucket enforces prevention; a public bucket fails."""
        jobs, platform = jobs_of(train=GOOD), platform_of()
        passed = only(run({"no_public_buckets": {}}, jobs, platform))
        assert passed.passed and "enforces public access prevention" in passed.message
        public = [BucketAccess("open-data", "inherited", ("allUsers",))]
        failed = only(run({"no_public_buckets": {}}, jobs, platform, buckets=public))
        assert not failed.passed
        assert "allUsers" in failed.message and "inherited" in failed.message

    def test_a_bucket_managed_elsewhere_is_not_judged(self) -> None:
        """`existing.bucket` passes with a note that its access is not checked."""
        platform = platform_of(enabled=False, existing={"bucket": "shared-training"})
        result = only(run({"no_public_buckets": {}}, jobs_of(train=GOOD), platform))
        assert result.passed and "not checked" in result.message


class TestEnforcement:
    """Each result carries the enforcement the stack chose for its rule."""

    def test_advisory_and_mandatory_results(self) -> None:
        """A failure is advisory or mandatory as configured."""
        rules = {
            "spot_only": {"enforcement": "advisory"},
            "require_timeout": {"enforcement": "mandatory"},
        }
        bare = {"image": IMAGE}
        results = {r.rule: r for r in run(rules, jobs_of(train=bare))}
        assert (results["spot_only"].passed, results["spot_only"].enforcement) == (
            False,
            "advisory",
        )
        assert results["require_timeout"].enforcement == "mandatory"

    def test_results_follow_the_rules_order(self) -> None:
        """Results come rule by rule in RULES order, jobs by name."""
        rules = {"require_timeout": {}, "spot_only": {}}
        results = run(rules, jobs_of(b=GOOD, a=GOOD))
        assert [(r.rule, r.job) for r in results] == [
            ("spot_only", "a"),
            ("spot_only", "b"),
            ("require_timeout", "a"),
            ("require_timeout", "b"),
        ]


class TestProgramKeys:
    """`evaluate(keys=...)`: a program's job is named by its argument path in the fixes."""

    def test_a_programs_job_is_named_by_its_argument_path(self) -> None:
        """With keys={name: "job"}, fixes say job.labels, job.scheduling.timeout and the
        resource's region; other jobs keep their stack config key."""
        rules = {
            "required_labels": {"labels": ["team"]},
            "require_timeout": {},
            "allowed_regions": {"regions": ["europe-west4"]},
        }
        bare = {"image": IMAGE}
        results = run(rules, jobs_of(a=bare, b=bare), keys={"a": PROGRAM_JOB_KEY})
        by_job = {(r.rule, r.job): r.message for r in results}
        assert "add job.labels: {team: ...}" in by_job["required_labels", "a"]
        assert "write job.scheduling.timeout: 4h" in by_job["require_timeout", "a"]
        assert "job.region (or the resource's region)" in by_job["allowed_regions", "a"]
        assert "vertex-training:jobs.b.labels" in by_job["required_labels", "b"]
        assert "(or gcp:region)" in by_job["allowed_regions", "b"]

    def test_the_program_key_is_the_argument_a_job_is_given_as(self) -> None:
        """PROGRAM_JOB_KEY is TrainingJob's argument (the plugin's property) the resources'
        own refusals name."""
        assert PROGRAM_JOB_KEY == JOB_ARGUMENT


def pack_issues(raw: Any) -> list[tuple[str, Any, str]]:
    with pytest.raises(SpecError) as caught:
        from_pack_config(raw, "config.json")
    return [(issue.key, issue.value, issue.message) for issue in caught.value.issues]


class TestFromPackConfig:
    """A policy pack config (`--policy-pack-config`) -> PoliciesConfig, as the engine
    applies it to the pack's policies."""

    def test_each_rule_takes_the_level_and_settings_the_file_gives(self) -> None:
        """A level alone or with settings turns the rule on at that level."""
        config = from_pack_config(
            {
                "max_cost_per_job": {"enforcementLevel": "mandatory", "usd": 500},
                "require_timeout": "advisory",
            },
            "config.json",
        )
        enabled = config.enabled()
        assert list(enabled) == ["max_cost_per_job", "require_timeout"]
        assert enabled["max_cost_per_job"].enforcement == "mandatory"
        assert enabled["require_timeout"].enforcement == "advisory"

    def test_the_documented_pack_config_parses(self) -> None:
        """The JSON example of docs/policies.md turns all nine rules on."""
        text = (REPO / "docs" / "policies.md").read_text()
        example = text.split("```json\n", 1)[1].split("```", 1)[0]
        config = from_pack_config(json.loads(example), "rules.json")
        assert list(config.enabled()) == list(RULES)

    def test_a_rule_left_out_or_disabled_is_off(self) -> None:
        """`disabled`, and a rule named with neither a level nor settings, turn nothing on."""
        config = from_pack_config({"spot_only": "disabled", "require_timeout": {}}, "c.json")
        assert config.enabled() == {}

    def test_the_packs_own_policies_are_not_rules(self) -> None:
        """Levels for policies-config, policies-coverage and <rule>.<level> are skipped."""
        raw = {
            CONFIG_POLICY: "mandatory",
            COVERAGE_POLICY: "disabled",
            stack_policy("spot_only", "advisory"): "mandatory",
        }
        assert from_pack_config(raw, "config.json").enabled() == {}

    @pytest.mark.parametrize(
        ("raw", "key", "value", "fix"),
        [
            (
                {"max_cost_per_job": {"enforcementLevel": "mandatory", "usd": -5}},
                "config.json.max_cost_per_job.usd",
                -5,
                "must be at least 0",
            ),
            (
                {"max_cost_per_job": {"usd": 500}},
                "config.json.max_cost_per_job",
                {"usd": 500},
                'add "enforcementLevel": "mandatory"',
            ),
            (
                {"spot_onyl": "mandatory"},
                "config.json.spot_onyl",
                "mandatory",
                "did you mean 'spot_only'?",
            ),
            (
                {"require_timeout": "remediate"},
                "config.json.require_timeout.enforcementLevel",
                "remediate",
                "must be advisory or mandatory",
            ),
            (
                {"all": "mandatory", "require_timeout": {}},
                "config.json.all",
                "mandatory",
                'give each rule its own level instead, e.g. "require_timeout": "mandatory"',
            ),
            (
                ["require_timeout"],
                "config.json",
                ["require_timeout"],
                "must be a JSON object of policy: level",
            ),
        ],
    )
    def test_mistakes_name_the_key_the_value_and_the_fix(
        self, raw: Any, key: str, value: Any, fix: str
    ) -> None:
        """Each mistake is one issue naming the file's key, the value and the fix."""
        [(found_key, found_value, message)] = pack_issues(raw)
        assert (found_key, found_value) == (key, value)
        assert fix in message


IMAGE_JOB = {"image": IMAGE, "machine": "n1-standard-4"}
#: A plugin job resource's checked inputs (the provider's check fills project, region and
#: backend from its config).
PLUGIN_SETTINGS = {"project": "test-project", "region": "us-central1", "backend": "vertex"}


class TestPackResources:
    """policy/resources.py: what the engine shows the pack -> evaluate's arguments."""

    URN = "urn:pulumi:dev::training::{type}::{name}"

    def resource(self, type_: str, urn_name: str, /, **props: Any) -> resources.Resource:
        return resources.Resource(type_, self.URN.format(type=type_, name=urn_name), props)

    def plugin_job(self, name: str, **job: Any) -> resources.Resource:
        return self.resource(
            resources.PLUGIN_JOB_TYPES[0], name, job={**IMAGE_JOB, **job}, **PLUGIN_SETTINGS
        )

    def dynamic_job(
        self,
        name: str,
        config: dict[str, Any],
        *,
        program: bool,
        recorded: bool = True,
        **settings: Any,
    ) -> resources.Resource:
        """A job of the Python package's dynamic resources: as its provider's check
        recorded it (``recorded``: what a preview shows), or as the program gives it."""
        stack = {"stack": "dev", "project": "test-project", "region": "us-central1", **settings}
        if program:
            stack["config_from"] = "program"
        job = {"name": name, "config": config, "stack": stack}
        if recorded:
            return self.resource(resources.DYNAMIC_JOB_TYPES[0], name, schema=4, **job)
        return self.resource(resources.DYNAMIC_JOB_TYPES[0], name, job=job)

    def project(self, tmp_path: Path, **keys: Any) -> Path:
        """A project whose stack file `dev` holds ``keys`` (none: no stack file)."""
        (tmp_path / "stacks").mkdir(parents=True)
        (tmp_path / "Pulumi.yaml").write_text("name: training\nstackConfigDir: stacks\n")
        if keys:
            path = tmp_path / "stacks" / "Pulumi.dev.yaml"
            path.write_text(yaml.safe_dump({"config": keys}))
        return tmp_path

    @staticmethod
    def configured(**levels: Any) -> dict[str, tuple[str, dict[str, Any]]]:
        """What the engine configures the pack with for a pack config naming ``levels``
        (each a level, or a level and settings), the rest at the pack's defaults."""
        found: dict[str, tuple[str, dict[str, Any]]] = {
            CONFIG_POLICY: ("mandatory", {}),
            COVERAGE_POLICY: ("advisory", {}),
        }
        for rule in RULES:
            found[rule] = ("disabled", {})
            for level in ("advisory", "mandatory"):
                found[stack_policy(rule, level)] = (level, {})
        for name, given in levels.items():
            if isinstance(given, str):
                found[name] = (given, {})
            else:
                settings = dict(given)
                found[name] = (settings.pop("enforcementLevel", "disabled"), settings)
        return found

    def failed(self, stack: resources.StackView) -> dict[tuple[str, str | None], str]:
        return {(r.rule, r.job): r.message for r in stack.results() if not r.passed}

    def test_a_plugin_job_is_read_from_its_inputs_and_named_by_property(
        self, tmp_path: Path
    ) -> None:
        """A TrainingJob of the plugin (any language) is judged from its properties, with
        no stack file; its fixes name job.labels and job.scheduling.timeout."""
        project = self.project(tmp_path)
        seen = [self.plugin_job("train", labels={"env": "dev"})]
        configured = self.configured(
            required_labels={"enforcementLevel": "mandatory", "labels": ["team"]},
            require_timeout="advisory",
        )
        stack = resources.view(seen, project, configured)
        assert (stack.source, stack.issues) == (resources.FROM_PACK_CONFIG, [])
        assert stack.urns["train"] == seen[0].urn
        failed = self.failed(stack)
        assert "add job.labels: {team: ...}" in failed["required_labels", "train"]
        assert "job.scheduling.timeout" in failed["require_timeout", "train"]
        assert {r.enforcement for r in stack.results()} == {"mandatory", "advisory"}

    def test_a_python_programs_jobs_in_code_and_from_the_stack_file(self, tmp_path: Path) -> None:
        """A dynamic job given in code is named by argument path; one from the stack file by
        its stack config key; both read from the resource's `job` input."""
        project = self.project(tmp_path, **{POLICIES_KEY: {"require_timeout": {}}})
        seen = [
            self.dynamic_job("coded", {"image": IMAGE}, program=True),
            self.dynamic_job("filed", {"image": IMAGE}, program=False),
            self.dynamic_job("given", {"image": IMAGE}, program=True, recorded=False),
        ]
        stack = resources.view(seen, project, self.configured())
        assert stack.source == resources.FROM_STACK
        failed = self.failed(stack)
        assert "write job.scheduling.timeout: 4h" in failed["require_timeout", "coded"]
        assert "write job.scheduling.timeout: 4h" in failed["require_timeout", "given"]
        assert (
            "write vertex-training:jobs.filed.scheduling.timeout: 4h"
            in failed["require_timeout", "filed"]
        )

    def test_pulumi_gcps_jobs_and_persistent_resources_are_judged_too(self, tmp_path: Path) -> None:
        """An AiCustomJob is held to the job rules by its own name; a persistent resource
        counts in max_cost_per_change (a month of it); one the pack cannot read is named."""
        pool = {"machineSpec": {"machineType": "n1-standard-8"}, "replicaCount": "2"}
        seen = [
            self.resource(
                "gcp:vertex/aiCustomJob:AiCustomJob",
                "bert",
                displayName="bert",
                region="us-central1",
                project="test-project",
                jobSpec={
                    "workerPoolSpecs": [
                        {**pool, "replicaCount": "1", "containerSpec": {"imageUri": IMAGE}}
                    ]
                },
            ),
            self.resource(
                "gcp:vertex/aiPersistentResource:AiPersistentResource",
                "pool",
                location="us-central1",
                resourcePools=[pool],
            ),
            self.resource(
                "gcp:vertex/aiCustomJob:AiCustomJob", "odd", region="us-central1", jobSpec=3
            ),
        ]
        configured = self.configured(
            require_timeout="mandatory",
            max_cost_per_change={"enforcementLevel": "mandatory", "usd": 1},
        )
        stack = resources.view(seen, self.project(tmp_path), configured)
        failed = self.failed(stack)
        assert "write bert.scheduling.timeout: 4h" in failed["require_timeout", "bert"]
        assert "odd" in failed["max_cost_per_change", None]
        assert set(stack.others) == {"pool", "odd"} and stack.others["odd"] is None
        [(why, _urn)] = stack.skipped
        assert why.startswith("odd: its inputs cannot be read: jobSpec is no object (got 3)")
        assert why.endswith("(declared by pulumi-gcp `gcp.vertex.AiCustomJob`)")

    def test_the_stacks_key_kept_outside_its_stack_file(self, tmp_path: Path) -> None:
        """A key the engine configured the default provider with (a YAML program's
        Pulumi.yaml config:) is read when the stack file has none."""
        provider = self.resource(
            resources.PLUGIN_PROVIDER_TYPE,
            "default_0_4_0",
            policies=json.dumps({"require_timeout": {"enforcement": "advisory"}}),
            region="us-central1",
        )
        stack = resources.view([provider, self.plugin_job("train")], self.project(tmp_path))
        assert stack.source == resources.FROM_STACK
        [failed] = [r for r in stack.results() if not r.passed]
        assert (failed.rule, failed.enforcement) == ("require_timeout", "advisory")

    def test_the_pack_config_wins_over_the_stacks_key(self, tmp_path: Path) -> None:
        """With both, only the pack config's rules apply, and a note says the key is unread."""
        project = self.project(tmp_path, **{POLICIES_KEY: {"spot_only": {}}})
        seen = [self.plugin_job("train")]
        stack = resources.view(seen, project, self.configured(require_timeout="mandatory"))
        assert stack.source == resources.FROM_PACK_CONFIG
        assert set(self.failed(stack)) == {("require_timeout", "train")}
        [note] = stack.notes
        assert f"the stack's {POLICIES_KEY} is not read" in note

    def test_without_either_no_rule_applies(self, tmp_path: Path) -> None:
        """No pack config and no stack file: nothing is judged, nothing is wrong."""
        stack = resources.view([self.plugin_job("train")], self.project(tmp_path))
        assert (stack.config, stack.issues, stack.results()) == (None, [], [])

    def test_a_mistake_in_the_pack_config_is_an_issue(self, tmp_path: Path) -> None:
        """A bad setting or a misspelt rule is an issue (policies-config, mandatory) naming
        the pack config's key; the engine's whole floats read as the numbers written."""
        configured = self.configured(
            max_cost_per_job={"enforcementLevel": "mandatory", "usd": -5.0},
            spot_onyl="mandatory",
        )
        stack = resources.view([self.plugin_job("train")], self.project(tmp_path), configured)
        assert stack.config is None
        assert stack.issues == [
            "--policy-pack-config.max_cost_per_job.usd: must be at least 0.0 (got -5)",
            "--policy-pack-config.spot_onyl: unknown key 'spot_onyl'; did you mean "
            "'spot_only'? (got 'mandatory')",
        ]

    def test_all_in_the_pack_config_is_refused_alone(self, tmp_path: Path) -> None:
        """`all`, which the engine gives every policy, is the one issue reported (not each
        rule it turned on without settings); a rule given settings alone is refused too."""
        engine_applied_all = {
            name: ("advisory", {}) for name in self.configured() if name != CONFIG_POLICY
        }
        configured = {**engine_applied_all, "all": ("advisory", {})}
        stack = resources.view([self.plugin_job("t")], self.project(tmp_path), configured)
        [issue] = stack.issues
        assert issue.startswith("--policy-pack-config.all: the engine gives its level")
        settings_alone = self.configured(max_cost_per_job={"usd": 5})
        stack = resources.view([self.plugin_job("t")], self.project(tmp_path / "x"), settings_alone)
        assert stack.issues == [
            "--policy-pack-config.max_cost_per_job: has settings but no enforcementLevel, so "
            'the rule is off: add "enforcementLevel": "mandatory" (or "advisory"), or write '
            '"max_cost_per_job": "disabled" to turn it off (got {\'usd\': 5})'
        ]

    def test_a_mistake_in_the_stacks_key_is_an_issue(self, tmp_path: Path) -> None:
        """Bad rules in the stack file are reported with the stack config key."""
        project = self.project(tmp_path, **{POLICIES_KEY: {"max_cost_per_job": {"usd": -1}}})
        stack = resources.view([self.resource("pulumi:pulumi:Stack", "s")], project)
        assert stack.config is None
        assert any(f"{POLICIES_KEY}.max_cost_per_job.usd" in issue for issue in stack.issues)

    def test_a_job_not_known_before_up_is_skipped_with_the_reason(self, tmp_path: Path) -> None:
        """A job whose settings wait for a resource still to be made is named, not judged."""
        project = self.project(tmp_path, **{POLICIES_KEY: {"require_timeout": {}}})
        waiting = self.dynamic_job(
            "train", {"image": IMAGE}, program=True, service_account=resources.UNKNOWN
        )
        stack = resources.view([waiting], project)
        assert stack.jobs == {} and stack.results() == []
        [(why, urn)] = stack.skipped
        assert why.startswith("train: its service_account is not known before pulumi up")
        assert urn == waiting.urn

    def test_prices_come_from_the_stacks_prices_key(self, tmp_path: Path) -> None:
        """`vertex-training:prices` names the snapshot, relative to the project."""
        save_snapshot(PRICES, tmp_path / "elsewhere.json")
        project = self.project(tmp_path, **{resources.PRICES_KEY: "elsewhere.json"})
        priced = self.plugin_job("train", scheduling={"timeout": "2h"})
        stack = resources.view([priced], project, self.configured(max_cost_per_job="mandatory"))
        assert stack.prices is not None
        unpriced = resources.view([priced], self.project(tmp_path / "bare"))
        assert unpriced.prices is None

    def test_grants_and_buckets_are_read_from_the_resources(self, tmp_path: Path) -> None:
        """An IAM member and a public bucket become the platform rules' inputs."""
        project = self.project(
            tmp_path, **{POLICIES_KEY: {"no_primitive_roles": {}, "no_public_buckets": {}}}
        )
        seen = [
            self.resource(
                "gcp:projects/iAMMember:IAMMember",
                "owner",
                project="test-project",
                role="roles/owner",
                member=resources.UNKNOWN,
            ),
            self.resource(
                resources.BUCKET_TYPE, "bucket", name="data", publicAccessPrevention="inherited"
            ),
            self.resource(
                "gcp:storage/bucketIAMMember:BucketIAMMember",
                "public",
                bucket="data",
                role="roles/storage.objectViewer",
                member="allUsers",
            ),
        ]
        stack = resources.view(seen, project)
        failed = {r.rule: r for r in stack.results() if not r.passed}
        assert set(failed) == {"no_primitive_roles", "no_public_buckets"}
        assert "roles/owner" in failed["no_primitive_roles"].message
        assert "allUsers" in failed["no_public_buckets"].message

    def test_an_iam_policy_is_read_binding_by_binding(self) -> None:
        """A *IAMPolicy's policyData yields one grant per member."""
        policy = self.resource(
            "gcp:storage/bucketIAMPolicy:BucketIAMPolicy",
            "p",
            bucket="data",
            policyData='{"bindings": [{"role": "roles/viewer", "members": ["allUsers"]}]}',
        )
        assert resources.grants_of(policy) == [Grant("allUsers", "roles/viewer", "bucket data")]

    def test_the_settings_schema_names_each_rules_settings(self) -> None:
        """The pack declares to CrossGuard exactly the settings each rule takes, each with
        a description; the stack's policies declare none."""
        for policy in resources.rule_policies():
            model = PoliciesConfig.model_fields[policy.rule].annotation
            settings = {
                name
                for arg in getattr(model, "__args__", ())
                if arg is not type(None)
                for name in arg.model_fields
                if name != "enforcement"
            }
            if policy.source == resources.FROM_STACK:
                assert policy.settings == {}, policy.name
                continue
            assert set(policy.settings) == settings, policy.name
            assert all(given["description"] for given in policy.settings.values())
