"""The command line, `vertex-training <command>` (also `python -m vertex_training <command>`).

``render STACK_FILE`` prints, as JSON, the Vertex AI REST request body of every job the
stack would submit, keyed by job name, without calling any cloud API and without Pulumi:

    {"<job>": {"backend": ..., "customJob": {...}, "parent": "projects/P/locations/R",
               "region": ...}}

(``hyperparameterTuningJob`` instead of ``customJob`` for a job with a ``study:``.)
An invalid stack config prints each issue on stderr (the text ``pulumi preview`` shows)
and exits with status 2; warnings (e.g. about a translated ``training_input``) go to
stderr too, prefixed ``warning:``, and so does each job's cost estimate, prefixed
``estimate:`` (``vertex_training.review.cost``: hourly rate and most it can cost; stdout stays the
JSON alone).

``convert CONFIG [--name JOB] [gcloud flags] [-- ARGS]`` reads a gcloud ``ai-platform jobs
submit training --config`` file (``trainingInput: ...``, or a bare trainingInput block)
and prints the equivalent native stack config as YAML (``vertex-training:jobs: {JOB:
...}``), validated exactly as ``pulumi preview`` validates it. The gcloud flags that fill
trainingInput (``--region``, ``--job-dir``, ``--runtime-version``, ...) may be given as
they were to gcloud. Warnings go to stderr; a config that cannot be converted exits 2 with
each reason, keyed by the file's own keys (``trainingInput.masterType``). A runtime version
whose image Vertex AI no longer runs is written as is, with a warning naming its end of
availability and the version to move to (``render`` of the output refuses it, saying the
same).

``render`` also carries each job's cost in its JSON, as ``estimated_cost: {usd_per_hour,
max_usd, prices_read, breakdown, unknown}`` (``vertex_training.review.cost.to_json``).

``prices refresh [--region R ...] [--endpoint HOST:PORT] [--compute-endpoint HOST:PORT]
[--project P] [--out FILE]`` reads the machine types' shapes from Compute Engine, then Vertex AI's
and Compute Engine's SKUs from Google's Cloud Billing Catalog with application default
credentials (or the API key in ``CLOUD_BILLING_API_KEY``) and writes the price snapshot
(``vertex_training.catalog.refresh``), showing its progress on stderr.

``images refresh [--endpoint HOST:PORT] [--location us|europe|asia ...] [--out FILE]`` lists
Google's prebuilt training images in its registry (the ``vertex-ai`` project's ``training``
repositories) with application default credentials and writes the dated snapshot that
decides which prebuilt images exist (``prices/images.json``,
``vertex_training.catalog.registry``), showing its progress on stderr.

``plan STACK_FILE --base REF [--format markdown|json] [--today DATE]`` compares the jobs
the stack file defines at git ref REF with the working tree (``vertex_training.review.plan``):
each job submitted, replaced with the keys that changed, updated, deleted or unchanged,
its pools, its estimated cost, what the preview warns about it, and the stack's rules.
Exits 2 when a job is invalid, 1 when a mandatory rule fails, 0 otherwise.

``review PREVIEW_JSON`` does the same for the change ``pulumi preview --json`` shows, of a
program in any language (``vertex_training.preview.review``).

``jobs orphans --project P --region R [--stack NAME ...] [--state FILE ...]
[--project-name NAME ...] [--label KEY[=VALUE] ...] [--cancel | --delete] [--yes]`` lists
the jobs of the project and region that carry this project's identity label but that no
given stack's state records, with each one's Pulumi project, state, age, labels and cost
so far by the price snapshot (``vertex_training.orphans``); ``--cancel`` and ``--delete``
act on them once confirmed. ``models --stack NAME | --state FILE`` lists the models a
stack's jobs registered, each version marked (``vertex_training.models``).
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vertex_training import models
from vertex_training.errors import SpecError

#: Exit status for a stack config with mistakes in it (argparse also uses 2 for usage).
EXIT_INVALID_CONFIG = 2
#: Exit status of ``plan`` for a change that breaks a mandatory rule of the stack.
EXIT_RULE_FAILED = 1
JSON_INDENT = 2
WARNING_PREFIX = "warning: "
ESTIMATE_PREFIX = "estimate: "
#: Where ``prices refresh`` reads an API key from (never a command-line argument).
API_KEY_ENV = "CLOUD_BILLING_API_KEY"
#: Exit status of ``prices refresh`` when the catalog could not be read.
EXIT_PRICES_FAILED = 1
#: Exit status of a command used wrongly (argparse's own).
EXIT_USAGE = 2
#: Exit status of ``jobs orphans --cancel/--delete`` not confirmed, and with a job not done.
EXIT_NOT_CONFIRMED = 1
EXIT_NOT_DONE = 1
#: The stack a converted job is validated against: a placeholder project, and this region
#: when the legacy config names none (the job then runs in the stack's gcp:region).
CONVERT_STACK = "convert"
CONVERT_PROJECT = "my-project"
CONVERT_DEFAULT_REGION = "us-central1"
YAML_WIDTH = 100
#: What convert adds to a job it writes although its prebuilt image is retired.
RETIRED_IMAGE_NOTE = (
    "converted as is: render and pulumi preview refuse this job until it says what to run instead"
)


def render(
    stack_file: str,
    warnings: list[str] | None = None,
    estimates: list[str] | None = None,
    prices_file: Path | None = None,
) -> dict[str, Any]:
    """The request bodies a stack file would submit, keyed by job name.

    With the stack platform's defaults applied, as ``pulumi up`` applies them. A
    ``package_path`` is not built: its URI is the one ``pulumi up`` would upload to (from
    the digest of the package's sources), and a platform TensorBoard that does not exist
    yet prints as ``stack_platform.TENSORBOARD_PENDING``. ``estimates`` gets one line a job,
    ``<job>: <cost.describe(...)>``, then where the prices come from. Each job's entry
    carries ``estimated_cost`` from ``prices_file`` (default: the project's snapshot).
    """
    from vertex_training.catalog import prices
    from vertex_training.packaging import project_dir_of
    from vertex_training.review import cost
    from vertex_training.stackconfig import load_stack_file

    jobs = load_stack_file(stack_file).check().resolved
    project_dir = project_dir_of(Path(stack_file))
    if warnings is not None:
        warnings.extend(warning for job in jobs.values() for warning in job.warnings)
    snapshot, note = cost.load_prices(prices_file or prices.snapshot_path(project_dir))
    costs = {name: cost.estimate(job, snapshot) for name, job in jobs.items()}
    if estimates is not None:
        estimates.extend(f"{name}: {cost.describe(costs[name])}" for name, job in jobs.items())
        if snapshot is not None:
            estimates.append(f"prices read {snapshot.read_date.isoformat()} from {snapshot.source}")
    if warnings is not None and note and snapshot is not None:
        warnings.append(note)
    return {
        name: {
            "region": job.region,
            "backend": job.backend,
            "parent": job.parent,
            job.request_kind: job.request_body(),
            "estimated_cost": cost.to_json(costs[name]),
        }
        for name, job in jobs.items()
    }


def _cmd_prices_refresh(args: argparse.Namespace) -> int:
    import os

    from vertex_training.catalog import prices, refresh, shapes
    from vertex_training.errors import PricesError

    def progress(service: str, read: int, kept: int) -> None:
        if service.startswith(shapes.DEFAULT_ENDPOINT):
            line = f"{service}: {read:,} machine types read, {kept:,} kept"
        else:
            line = f"{service}: {read:,} SKUs read, {kept:,} kept"
        print(line, file=sys.stderr, flush=True)

    from vertex_training.packaging import enclosing_project

    out = Path(args.out) if args.out else prices.snapshot_path(enclosing_project(Path.cwd()))
    try:
        snapshot = refresh.refresh(
            args.region or None,
            endpoint=args.endpoint,
            api_key=os.environ.get(API_KEY_ENV) or None,
            progress=progress,
            compute_endpoint=args.compute_endpoint,
            project=args.project,
        )
    except PricesError as exc:
        print(exc, file=sys.stderr)
        return EXIT_PRICES_FAILED
    prices.save_snapshot(snapshot, out)
    print(
        f"wrote {out}: {len(snapshot.skus):,} SKUs for {len(snapshot.regions)} regions, "
        f"read {snapshot.read_at.isoformat(timespec='seconds')} from {snapshot.source}; "
        f"{len(snapshot.machine_shapes)} machine types from {snapshot.shapes_source}"
    )
    fakes = (
        (args.endpoint, "catalog's invented prices"),
        (args.compute_endpoint, "compute's machine shapes, not read from Google"),
    )
    for endpoint, what in fakes:
        if endpoint and refresh.is_loopback(endpoint):
            print(
                f"{WARNING_PREFIX}{endpoint} is a loopback endpoint (a fake {what}?): do not "
                "commit this snapshot",
                file=sys.stderr,
            )
    return 0


def _cmd_images_refresh(args: argparse.Namespace) -> int:
    from vertex_training.catalog import registry
    from vertex_training.catalog.refresh import is_loopback
    from vertex_training.packaging import enclosing_project

    def progress(repository: str, read: int, kept: int) -> None:
        print(f"{repository}: {read:,} images read, {kept:,} names", file=sys.stderr, flush=True)

    out = Path(args.out) if args.out else registry.snapshot_path(enclosing_project(Path.cwd()))
    try:
        snapshot = registry.refresh(
            endpoint=args.endpoint,
            locations=args.location or tuple(registry.REPOSITORIES),
            progress=progress,
        )
    except registry.ImagesError as exc:
        print(exc, file=sys.stderr)
        return EXIT_PRICES_FAILED
    registry.save_snapshot(snapshot, out)
    print(
        f"wrote {out}: {len(snapshot.names()):,} training and "
        f"{len(snapshot.names(registry.PREDICTION)):,} prediction image names in "
        f"{len(snapshot.repositories)} repositories, read "
        f"{snapshot.read_at.isoformat(timespec='seconds')} from {snapshot.source}"
    )
    if args.endpoint and is_loopback(args.endpoint):
        print(
            f"{WARNING_PREFIX}{args.endpoint} is a loopback endpoint (a fake registry's "
            "invented images?): do not commit this snapshot",
            file=sys.stderr,
        )
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from vertex_training.catalog import cloud_quotas
    from vertex_training.review import plan as review

    return _printed(
        lambda: review.plan_stack(
            Path(args.stack_file),
            args.base,
            today=args.today,
            quota_reader=cloud_quotas.reader(endpoint=args.quotas_endpoint),
        ),
        args.format,
    )


def _printed(make: Callable[[], Any], form: str) -> int:
    """Print the plan ``make`` makes, or its mistakes; the exit status."""
    from vertex_training.review import plan as review

    try:
        plan = make()
    except SpecError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return EXIT_INVALID_CONFIG
    sys.stdout.write(review.to_json(plan) if form == "json" else review.to_markdown(plan))
    if plan.invalid:
        return EXIT_INVALID_CONFIG
    return EXIT_RULE_FAILED if plan.mandatory_failures else 0


def _cmd_review(args: argparse.Namespace) -> int:
    from vertex_training.catalog import cloud_quotas
    from vertex_training.preview import review as preview

    return _printed(
        lambda: preview.review_file(
            args.preview,
            stack=args.stack,
            prices_file=Path(args.prices) if args.prices else None,
            pack_config=Path(args.policy_pack_config) if args.policy_pack_config else None,
            quota_reader=cloud_quotas.reader(endpoint=args.quotas_endpoint),
            today=args.today,
        ),
        args.format,
    )


def _review_options(parser: argparse.ArgumentParser, today: str) -> None:
    """The options ``plan`` and ``review`` share: the output's format, the day, quotas."""
    parser.add_argument("--format", choices=("markdown", "json"), default="markdown")
    parser.add_argument(
        "--today", type=_date, default=None, help=f"{today} as of this date (default: today)"
    )
    parser.add_argument(
        "--quotas-endpoint",
        default=None,
        metavar="HOST:PORT",
        help="read quotas from this Cloud Quotas endpoint (a loopback one: a fake, in plaintext)",
    )


def _cmd_render(args: argparse.Namespace) -> int:
    warnings: list[str] = []
    estimates: list[str] = []
    rendered = _reported(
        args.stack_file, lambda: (render(args.stack_file, warnings, estimates), warnings)
    )
    if rendered is None:
        return EXIT_INVALID_CONFIG
    for line in estimates:
        print(f"{ESTIMATE_PREFIX}{line}", file=sys.stderr)
    json.dump(rendered, sys.stdout, indent=JSON_INDENT, sort_keys=True)
    sys.stdout.write("\n")
    return 0


def convert(
    config_file: str,
    *,
    name: str | None = None,
    flags: dict[str, Any] | None = None,
    today: datetime.date | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The native stack config of a gcloud config file, and the warnings about it.

    ``flags`` are gcloud flag values (``vertex_training.stackconfig.legacy.GCLOUD_FLAG_KEYS``).
    Raises
    ``SpecError`` when the file cannot be converted, ``OSError`` when it cannot be read.
    A job whose only fault is a prebuilt image past its end of availability (a runtime
    version Vertex AI no longer runs) is still converted, as is: the refusal, with its
    advice, becomes a warning, and ``render`` / ``pulumi preview`` refuse the output.
    """
    import yaml

    from vertex_training.catalog import images
    from vertex_training.errors import Issue, RetiredImage
    from vertex_training.stackconfig import JOBS_KEY, StackSettings, legacy, parse_job

    path = Path(config_file)
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise SpecError([Issue(config_file, None, f"is not valid YAML: {exc}")]) from None
    read = legacy.read_legacy_document(document, source=config_file, flags=flags)
    if read.issues:
        raise SpecError(list(read.issues))
    job_name = name or (read.job_id if isinstance(read.job_id, str) else path.stem)
    translation = legacy.translate_training_input(
        read.training_input,
        legacy_base="trainingInput",
        native_base=f"{JOBS_KEY}.{job_name}",
        job_id=read.job_id,
        job_id_key="jobId",
    )
    if translation.issues:
        raise SpecError(list(translation.issues))
    native = dict(translation.native)
    filled = _fill_framework_placeholder(native, today)
    if read.labels is not None:
        native["labels"] = read.labels
    warnings = [str(warning) for warning in (*read.warnings, *translation.warnings)]
    if filled is not None:
        warnings = [w.replace(f'"{images.VERSION_PLACEHOLDER}"', f'"{filled}"') for w in warnings]
        warnings.append(
            f"trainingInput.runtimeVersion: framework.version is {filled}, the nearest TensorFlow "
            f"version Vertex AI still runs in this project's catalogue ({images.CATALOGUE_URL})"
        )
    if "region" not in native:
        warnings.append(
            "trainingInput.region: not set (gcloud took it from --region): the job runs in the "
            f"stack's gcp:region; checked here with {CONVERT_DEFAULT_REGION}"
        )
    stack = StackSettings(
        stack=CONVERT_STACK,
        project=CONVERT_PROJECT,
        region=native.get("region", CONVERT_DEFAULT_REGION),
    )
    try:
        job = parse_job(job_name, native, stack, today=today)
    except SpecError as exc:
        issues = translation.rekey_all(exc.issues)
        if not all(
            isinstance(issue, RetiredImage) or issue.value == images.VERSION_PLACEHOLDER
            for issue in issues
        ):
            raise SpecError(issues) from None
        # Only the image is past its end of availability: written as is, with the advice.
        warnings.extend(f"{issue}; {RETIRED_IMAGE_NOTE}" for issue in issues)
    else:
        warnings.extend(job.warnings)
    return {JOBS_KEY: {job_name: native}}, warnings


def _fill_framework_placeholder(native: dict[str, Any], today: datetime.date | None) -> str | None:
    """Replace the translation's placeholder framework version (a runtime with no Vertex AI
    image) with the oldest TensorFlow version Vertex AI still runs for the job's hardware,
    when the catalogue has one; that version, or None (the placeholder stays)."""
    from vertex_training.catalog import images, machines

    framework = native.get("framework")
    if not isinstance(framework, dict) or framework.get("version") != images.VERSION_PLACEHOLDER:
        return None
    accelerator = native.get("accelerator")
    machine = machines.MACHINE_TYPES.get(str(native.get("machine", "")))
    if machine is not None and machine.tpu:
        kind = images.TPU
    elif isinstance(accelerator, dict) or (machine is not None and machine.built_in):
        kind = images.GPU
    else:
        kind = images.CPU
    target = images.nearest_available("tensorflow", "1.0", kind, today or datetime.date.today())
    if target is None:
        return None
    native["framework"] = {**framework, "version": target.version}
    return target.version


def _cmd_convert(args: argparse.Namespace) -> int:
    import yaml

    flags = {flag: getattr(args, flag) for flag in _GCLOUD_FLAGS}
    flags["args"] = args.user_args or None
    if flags["packages"] is not None:
        flags["packages"] = [uri for uri in flags["packages"].split(",") if uri]
    if flags["scale_tier"] is not None:
        flags["scale_tier"] = flags["scale_tier"].upper()  # gcloud takes --scale-tier custom
    stack_config = _reported(
        args.config_file,
        lambda: convert(args.config_file, name=args.name, flags=flags, today=args.today),
    )
    if stack_config is None:
        return EXIT_INVALID_CONFIG
    sys.stdout.write(f"# converted from {args.config_file} by vertex-training convert\n")
    yaml.safe_dump(stack_config, sys.stdout, sort_keys=False, width=YAML_WIDTH)
    return 0


def _cmd_migrate(args: argparse.Namespace) -> int:
    from vertex_training.plugin.migrate import MigrationError, migrate, next_steps

    out = Path(args.out)
    try:
        migration = migrate(args.stack, out)
    except MigrationError as exc:
        print(f"vertex-training migrate: {exc}", file=sys.stderr)
        return 1
    print(next_steps(args.stack, out, migration))
    return 0


def _cmd_jobs_orphans(args: argparse.Namespace) -> int:
    import time

    from vertex_training import orphans
    from vertex_training.backends.vertex import VertexBackend
    from vertex_training.catalog import prices
    from vertex_training.errors import BackendError
    from vertex_training.packaging import enclosing_project
    from vertex_training.review import cost

    try:
        if not (args.stack or args.state or args.project_name or args.label):
            raise ValueError(orphans.NO_SCOPE)
        labels = orphans.read_labels(args.label)
        project_names = orphans.read_project_names(args.project_name)
        known = orphans.read_states(args.stack, [Path(p) for p in args.state], Path.cwd())
    except (ValueError, orphans.StateError) as exc:
        print(f"vertex-training jobs orphans: {exc}", file=sys.stderr)
        return EXIT_USAGE
    prices_file = (
        Path(args.prices) if args.prices else prices.snapshot_path(enclosing_project(Path.cwd()))
    )
    snapshot, note = cost.load_prices(prices_file)
    backend = VertexBackend(args.project, args.region, api_endpoint=args.endpoint)
    now = time.time()
    try:
        listing = orphans.find_orphans(
            backend,
            known,
            labels,
            snapshot,
            project_names=project_names,
            no_prices=note or "",
            now=lambda: now,
        )
    except BackendError as exc:
        print(f"vertex-training jobs orphans: listing the jobs failed: {exc}", file=sys.stderr)
        return EXIT_NOT_DONE
    if args.format == "json":
        json.dump(orphans.to_json(listing, known, now), sys.stdout, indent=JSON_INDENT)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(orphans.to_text(listing, known, snapshot, prices_file))
    action = orphans.DELETE if args.delete else orphans.CANCEL if args.cancel else None
    if action is None or not listing.orphans:
        return 0
    verb = "Cancel and delete" if action == orphans.DELETE else "Cancel"
    if not args.yes and not _confirmed(f"{verb} these {len(listing.orphans)} job(s)?"):
        print("nothing done (answer yes, or pass --yes)", file=sys.stderr)
        return EXIT_NOT_CONFIRMED
    try:
        outcomes = orphans.act(
            backend,
            listing.orphans,
            action,
            progress=lambda line: print(line, file=sys.stderr, flush=True),
        )
    except BackendError as exc:
        print(f"vertex-training jobs orphans: stopped: {exc}", file=sys.stderr)
        return EXIT_NOT_DONE
    for outcome in outcomes:
        print(f"{outcome.name}: {outcome.done or 'NOT DONE: ' + outcome.error}")
    return EXIT_NOT_DONE if any(o.error for o in outcomes) else 0


def _confirmed(question: str) -> bool:
    """Whether the person at the terminal answered yes to ``question``."""
    try:
        answer = input(f"{question} Type yes to go on: ")
    except EOFError:
        return False
    return answer.strip().lower() == "yes"


#: convert's gcloud flags: (flag, help). Their values fill trainingInput as gcloud did.
_GCLOUD_FLAGS: dict[str, str] = {
    "region": "trainingInput.region (gcloud --region)",
    "job_dir": "trainingInput.jobDir (gcloud --job-dir)",
    "runtime_version": "trainingInput.runtimeVersion (gcloud --runtime-version)",
    "python_version": "trainingInput.pythonVersion (gcloud --python-version)",
    "module_name": "trainingInput.pythonModule (gcloud --module-name)",
    "packages": "trainingInput.packageUris, comma-separated gs:// URIs (gcloud --packages)",
    "master_image_uri": "trainingInput.masterConfig.imageUri (gcloud --master-image-uri)",
    "scale_tier": "trainingInput.scaleTier (gcloud --scale-tier)",
    "master_machine_type": "trainingInput.masterType (gcloud --master-machine-type)",
}


def _reported(source: str, produce: Callable[[], tuple[Any, list[str]]]) -> Any:
    """Run a command's work; print its warnings, or its config mistakes and return None.

    ``produce`` returns (result, warnings). Mistakes and warnings go to stderr, each on a
    line of its own, in the words `pulumi preview` uses.
    """
    try:
        result, warnings = produce()
    except SpecError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return None
    except OSError as exc:
        print(f"{source}: {exc.strerror or exc}", file=sys.stderr)
        return None
    for warning in warnings:
        print(f"{WARNING_PREFIX}{warning}", file=sys.stderr)
    return result


def _date(text: str) -> datetime.date:
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date like 2026-11-21") from None


def _add_jobs_parser(subparsers: Any) -> None:
    """``jobs orphans``."""
    jobs_parser = subparsers.add_parser("jobs", help="the jobs of a project, beyond one stack")
    jobs_commands = jobs_parser.add_subparsers(dest="jobs_command", required=True)
    orphans_parser = jobs_commands.add_parser(
        "orphans",
        help="list (and cancel or delete) the jobs of this project that no stack records",
        description=(
            "List the custom and tuning jobs of a project and region that carry the "
            "vertex_training_key label (this project submitted them) but that none of the "
            "given stacks' states records: after `pulumi stack rm --force`, a lost state or "
            "an engine killed elsewhere. Each with its Pulumi project, state, age, labels "
            "and cost so far by the price snapshot. A job a pending create of a given stack "
            "of its Pulumi project will adopt is left alone; a job without the label is "
            "never listed."
        ),
    )
    orphans_parser.add_argument("--project", required=True, help="the Google Cloud project")
    orphans_parser.add_argument("--region", required=True, help="the region its jobs run in")
    orphans_parser.add_argument(
        "--stack",
        action="append",
        default=[],
        help="a stack whose jobs are not orphans, read with `pulumi stack export` in the "
        "working directory; repeatable",
    )
    orphans_parser.add_argument(
        "--state",
        action="append",
        default=[],
        metavar="FILE",
        help="a state whose jobs are not orphans: `pulumi stack export` output or a file "
        "backend's stack file; repeatable",
    )
    orphans_parser.add_argument(
        "--project-name",
        action="append",
        default=[],
        metavar="NAME",
        help="list only the jobs of this Pulumi project (its pulumi_project label; the "
        "`name:` of its Pulumi.yaml); repeatable",
    )
    orphans_parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="KEY[=VALUE]",
        help="list only the jobs carrying this label (any value without =); repeatable",
    )
    acting = orphans_parser.add_mutually_exclusive_group()
    acting.add_argument("--cancel", action="store_true", help="cancel the orphans still running")
    acting.add_argument(
        "--delete",
        action="store_true",
        help="cancel the orphans still running, wait for them to end, and delete every one",
    )
    orphans_parser.add_argument(
        "--yes", action="store_true", help="act without asking for confirmation"
    )
    orphans_parser.add_argument("--format", choices=("text", "json"), default="text")
    orphans_parser.add_argument(
        "--prices", metavar="FILE", help="the price snapshot (default: prices/snapshot.json)"
    )
    orphans_parser.add_argument(
        "--endpoint",
        metavar="HOST:PORT",
        help="the Vertex AI endpoint (default: the region's; loopback: a fake, in plaintext)",
    )
    orphans_parser.set_defaults(handler=_cmd_jobs_orphans)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; add a command with another ``subparsers.add_parser``."""
    parser = argparse.ArgumentParser(
        prog="vertex-training", description="vertex-training command line tools"
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    render_parser = subparsers.add_parser(
        "render",
        help="print the Vertex AI request bodies a stack would submit (no cloud calls)",
        description=(
            "Validate a stack file and print, as JSON, the exact Vertex AI CustomJob "
            "request body of every job (REST field names). Exits 2 on an invalid config."
        ),
    )
    render_parser.add_argument("stack_file", help="stacks/Pulumi.<stack>.yaml")
    render_parser.set_defaults(handler=_cmd_render)
    convert_parser = subparsers.add_parser(
        "convert",
        help="print the native stack config of a gcloud ai-platform training config.yaml",
        description=(
            "Translate a gcloud ai-platform jobs submit training --config file into this "
            "project's stack config (YAML on stdout), validated as pulumi preview validates "
            "it. Warnings on stderr; exits 2 when the config cannot be converted."
        ),
    )
    convert_parser.add_argument("config_file", help="the config.yaml given to gcloud --config")
    convert_parser.add_argument(
        "--name", help="the job name in the stack (default: the file's jobId, else its name)"
    )
    for flag, text in _GCLOUD_FLAGS.items():
        convert_parser.add_argument(f"--{flag.replace('_', '-')}", dest=flag, help=text)
    convert_parser.add_argument(
        "--today",
        type=_date,
        default=None,
        help="judge prebuilt image support and availability as of this date (default: today)",
    )
    convert_parser.set_defaults(handler=_cmd_convert, user_args=[])
    convert_parser.epilog = (
        "After --, the application's arguments (trainingInput.args), as after gcloud's --."
    )
    plan_parser = subparsers.add_parser(
        "plan",
        help="what a change to a stack file does to its jobs, for a pull-request reviewer",
        description=(
            "Compare the jobs a stack file defines at a git ref with the working tree, with "
            "no engine: each job submitted, replaced (with the changed keys), updated, "
            "deleted or unchanged, its machines, its estimated cost, the stack's rules, and "
            "the project's Vertex AI training quotas against what the submitted jobs need "
            "(the one cloud call, read with Google credentials, bounded in time; without "
            "them the plan says the quotas could not be checked). Exits 2 when a job is "
            "invalid, 1 when a mandatory rule fails."
        ),
    )
    plan_parser.add_argument("stack_file", help="stacks/Pulumi.<stack>.yaml")
    plan_parser.add_argument("--base", required=True, help="the git ref to compare with")
    _review_options(plan_parser, "judge prebuilt image support and availability")
    plan_parser.set_defaults(handler=_cmd_plan)
    review_parser = subparsers.add_parser(
        "review",
        help="what a program's change does to its jobs, read from `pulumi preview --json`",
        description=(
            "Each training job a preview submits, replaces (which keys force it), updates "
            "or deletes, with its machines, cost, warnings, the team's rules and quotas, "
            "as `plan` prints them, for a program in any language. Exits 2 when a job is "
            "invalid or the preview failed, 1 when a mandatory rule fails."
        ),
    )
    review_parser.add_argument("preview", help="`pulumi preview --json`'s output (- for stdin)")
    review_parser.add_argument("--stack", help="the stack's name (default: the preview's)")
    prices = "the price snapshot (default: vertex-training:prices, else prices/snapshot.json)"
    review_parser.add_argument("--prices", metavar="FILE", help=prices)
    rules = "the rules, as the policy pack reads them (default: vertex-training:policies)"
    review_parser.add_argument("--policy-pack-config", metavar="FILE", help=rules)
    _review_options(review_parser, "judge the price snapshot's age")
    review_parser.set_defaults(handler=_cmd_review)
    prices_parser = subparsers.add_parser(
        "prices", help="the price snapshot estimates use (prices/snapshot.json)"
    )
    prices_commands = prices_parser.add_subparsers(dest="prices_command", required=True)
    refresh_parser = prices_commands.add_parser(
        "refresh",
        help="read prices from Google's Cloud Billing Catalog into the snapshot",
        description=(
            "Read Vertex AI's and Compute Engine's SKUs from the Cloud Billing Catalog "
            "with application default credentials (or an API key in "
            f"{API_KEY_ENV}) and write the SKUs estimates use, dated, to the snapshot."
        ),
    )
    refresh_parser.add_argument(
        "--region",
        action="append",
        default=[],
        help="a region to keep prices for; repeatable (default: every training region)",
    )
    refresh_parser.add_argument(
        "--endpoint", help="HOST:PORT of the catalog (default: Google's; loopback: plaintext)"
    )
    refresh_parser.add_argument(
        "--compute-endpoint",
        help="HOST:PORT of Compute Engine's MachineTypes API (default: Google's; loopback: HTTP)",
    )
    refresh_parser.add_argument(
        "--project",
        help="the project machine types are listed in (default: GOOGLE_CLOUD_PROJECT or ADC's)",
    )
    refresh_parser.add_argument("--out", help="the file to write (default: prices/snapshot.json)")
    refresh_parser.set_defaults(handler=_cmd_prices_refresh)
    images_parser = subparsers.add_parser(
        "images", help="the snapshot of Google's prebuilt training images (prices/images.json)"
    )
    images_commands = images_parser.add_subparsers(dest="images_command", required=True)
    images_refresh = images_commands.add_parser(
        "refresh",
        help="list Google's prebuilt training images in its registry into the snapshot",
        description=(
            "List the Docker images of Google's registry of prebuilt training images "
            "(projects/vertex-ai/locations/{us,europe,asia}/repositories/training) with "
            "application default credentials and write each image's name, tags, digest and "
            "upload time, dated, to the snapshot that decides which prebuilt images exist."
        ),
    )
    images_refresh.add_argument(
        "--endpoint", help="HOST:PORT of Artifact Registry (default: Google's; loopback: plaintext)"
    )
    images_refresh.add_argument(
        "--location",
        action="append",
        choices=("us", "europe", "asia"),
        default=[],
        help="a registry multi-region to read; repeatable (default: all three)",
    )
    images_refresh.add_argument("--out", help="the file to write (default: prices/images.json)")
    images_refresh.set_defaults(handler=_cmd_images_refresh)
    _add_jobs_parser(subparsers)
    models.add_parser(subparsers)
    migrate_parser = subparsers.add_parser(
        "migrate",
        help="move a stack's jobs from the dynamic resources to the plugin's (docs/plugin.md)",
        description=(
            "Keep the stack's state as it is (STACK-before-migrate.json), mark each dynamic "
            "job record retained on delete (so no job is deleted when the program drops it), "
            "and write STACK-import.json for `pulumi import --file`: the same jobs as the "
            "plugin's resources. Run in the project directory, with the Pulumi CLI on PATH."
        ),
    )
    migrate_parser.add_argument("stack", help="the stack to move")
    migrate_parser.add_argument(
        "--out", default=".", help="where to write the files (default: the working directory)"
    )
    migrate_parser.set_defaults(handler=_cmd_migrate)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    trailing: list[str] = []
    if "--" in arguments:  # convert's application arguments, as gcloud takes them
        index = arguments.index("--")
        arguments, trailing = arguments[:index], arguments[index + 1 :]
    parser = build_parser()
    args = parser.parse_args(arguments)
    if trailing:
        if not hasattr(args, "user_args"):
            parser.error(f"unrecognized arguments: -- {' '.join(trailing)}")
        args.user_args = trailing
    handler: Callable[[argparse.Namespace], int] = args.handler
    return handler(args)


if __name__ == "__main__":
    sys.exit(main())
