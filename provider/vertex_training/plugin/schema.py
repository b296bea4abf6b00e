"""The plugin's Pulumi package schema, written from the job's models and the code.

The types come from ``vertex_training.resources.arguments`` (what ``TrainingJobArgs``
holds, read by ``shapes``); a job key's or platform key's description from the pydantic
model that defines the key (``Field(description=...)``, read by ``job_keys``). The
outputs and their types, described, come from the dataclasses of their shapes
(``JobObserved``, ``JobPages``, ``PluginJobOutputs``, ``TrialOutput``, ``ModelVersion``,
``JobFailure``, ``AttemptOutput``, ``CostEstimate``: ``shapes.output_type``); each other
resource property's and each resource's description from ``resource_texts``. No
description is read from the docs: ``make schema`` writes ``schema.json`` beside this
module (the installed plugin serves that file, stamped with its installed version), then
the docs' references from it (docs/config-shape.md's key tables, docs/plugin.md's
resources: ``resource_docs``); ``tests/test_plugin_schema.py`` fails when one is stale.
The file carries the release's version (provider/pyproject.toml's), which ``make sdks``
stamps into every SDK, and the names each language's SDK is published under.

    python -m vertex_training.plugin.schema OUT.json VERSION
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vertex_training.api.failures import JobFailure
from vertex_training.backends.base import ModelVersion, TrialOutput, WaitedTrialsOutput
from vertex_training.plugin import resource_texts, shapes
from vertex_training.resources import arguments
from vertex_training.resources.pages import JobPages
from vertex_training.resources.records import AttemptOutput, JobObserved
from vertex_training.resources.state import OUTPUT_KEYS, TUNING_OUTPUT_KEYS

#: Where the written schema is, in the installed package.
SCHEMA_FILE = Path(__file__).with_name("schema.json")
#: The resources' tokens.
TRAINING_JOB = f"{shapes.PACKAGE}:{shapes.MODULE}:TrainingJob"
TUNING_JOB = f"{shapes.PACKAGE}:{shapes.MODULE}:HyperparameterTuningJob"
JOB_WAITER = f"{shapes.PACKAGE}:{shapes.MODULE}:JobWaiter"
TRAINING_PLATFORM = f"{shapes.PACKAGE}:{shapes.MODULE}:TrainingPlatform"
PLATFORM_SETTINGS = f"{shapes.PACKAGE}:{shapes.MODULE}:PlatformSettings"
WAITER_ENTRY = f"{shapes.PACKAGE}:{shapes.MODULE}:WaiterEntry"
COST_ESTIMATE = f"{shapes.PACKAGE}:{shapes.MODULE}:CostEstimate"
TRIAL = f"{shapes.PACKAGE}:{shapes.MODULE}:Trial"
MODEL_VERSION = f"{shapes.PACKAGE}:{shapes.MODULE}:ModelVersion"
WAITED_TRIALS = shapes.type_token(WaitedTrialsOutput)
ATTEMPT = f"{shapes.PACKAGE}:{shapes.MODULE}:Attempt"
JOB_FAILURE = f"{shapes.PACKAGE}:{shapes.MODULE}:JobFailure"
#: The repository releases are made from (.github/workflows/release.yml checks that it
#: runs in this one): its GitHub releases hold the plugin's archives, which the engine
#: downloads from PLUGIN_DOWNLOAD_URL, and it tags the Go SDK's module, GO_MODULE
#: (sdk/go/go.mod), sdk/go/vX.Y.Z.
REPOSITORY = "github.com/vertex-training/vertex-training"
PLUGIN_DOWNLOAD_URL = f"github://api.{REPOSITORY}"
GO_MODULE = f"{REPOSITORY}/sdk/go"
#: How each language's SDK is named where it is published (docs/library.md), and that it
#: takes the schema's version as its own.
LANGUAGES: dict[str, dict[str, Any]] = {
    "nodejs": {
        "packageName": "vertex-training",
        "packageDescription": "Google Cloud training jobs as Pulumi resources.",
        "respectSchemaVersion": True,
    },
    "go": {
        "importBasePath": f"{GO_MODULE}/vertextraining",
        "modulePath": GO_MODULE,
        "respectSchemaVersion": True,
    },
    # No build files: the generator's Gradle files name package hosts; scripts/gen-sdks.sh
    # writes a pom.xml instead.
    "java": {"basePackage": "io.github.vertex_training", "buildFiles": "none"},
    "csharp": {"rootNamespace": "VertexTraining", "respectSchemaVersion": True},
    "python": {
        "packageName": "pulumi_vertex_training",
        "pyproject": {"enabled": True},
        "pythonRequires": ">=3.11",
        "respectSchemaVersion": True,
    },
}


def languages(version: str) -> dict[str, dict[str, Any]]:
    """``LANGUAGES`` for the release ``version``: the Python SDK requires the
    vertex-training distribution of the same release, which installs the plugin
    (``pulumi-resource-vertex-training``) where the engine finds it."""
    python = {**LANGUAGES["python"], "requires": {"vertex-training": f"=={version}"}}
    return {**LANGUAGES, "python": python}


#: Settings a job takes beside its keys, in the schema's naming: the stack settings of
#: ``StackSettings`` that a program's job is given (``TrainingJob(project=..., ...)``).
JOB_SETTINGS = (
    "project",
    "region",
    "backend",
    "serviceAccount",
    "outputRoot",
    "imageRepository",
    "tensorboard",
)
#: A job resource's inputs: its keys, its settings, the images it may name and the
#: platform it may take its settings from.
JOB_INPUTS = ("job", *JOB_SETTINGS, "images", "platform")


@dataclass(frozen=True)
class PluginJobOutputs:
    """The outputs a plugin job's resource adds to its job's (``JobObserved``'s and
    ``JobPages``'): what its waiter entry, request and estimate are (their values made by
    ``waiter_shapes.waiter_entry`` and ``previews.request_and_estimate``)."""

    waiter_entry: Mapping[str, Any] = field(
        metadata={
            "schema": {"$ref": f"#/types/{WAITER_ENTRY}"},
            "description": "What a JobWaiter takes to wait for this job (give it in the "
            "waiter's `jobs`).",
        }
    )
    # A preview's (the rest are known once the job is submitted): the Vertex AI request
    # body, Google's shape, and what the job may cost. The state keeps neither: both are
    # derived from the job's keys, which it keeps.
    request: Mapping[str, Any] = field(
        metadata={
            "description": "The Vertex AI request body the job's create submits, as "
            "`vertex-training render` prints it (a CustomJob's; a tuning job's "
            "HyperparameterTuningJob); in a preview of the job's create, replacement or "
            "update. The state does not keep it (it is the job's keys, which the state "
            "keeps, in Google's shape)."
        }
    )
    #: ``review.cost.CostEstimate`` (its type written by ``build``: not imported at start).
    estimate: Mapping[str, Any] = field(
        metadata={
            "schema": {"$ref": f"#/types/{COST_ESTIMATE}"},
            "description": "What the job may cost, from the price snapshot the provider's "
            "`prices` names (a `CostEstimate`); in a preview of the job's create, "
            "replacement or update. The state does not keep it: `vertex-training review` "
            "prices a change from its preview.",
        }
    )


def job_outputs(types: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A job resource's outputs, described, from their shapes (what its job reports,
    ``JobObserved``, what the job it runs as names, ``JobPages``, and what the plugin
    adds); each output type they reach added to ``types``."""
    observed = shapes.output_properties(JobObserved, types)
    return {
        **{prop: spec for prop, spec in observed.items() if shapes.snake(prop) in OUTPUT_KEYS},
        **shapes.output_properties(JobPages, types),
        **shapes.output_properties(PluginJobOutputs, types),
    }


def tuning_outputs(types: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """A tuning job resource's outputs beside a job's: its trials (``JobObserved``'s)."""
    observed = shapes.output_properties(JobObserved, types)
    tuning = set(TUNING_OUTPUT_KEYS) - set(OUTPUT_KEYS)
    return {prop: spec for prop, spec in observed.items() if shapes.snake(prop) in tuning}


#: A job resource's outputs (what the dynamic resource records,
#: ``resources.state.OUTPUT_KEYS``, in camelCase, and what the plugin adds), and a tuning
#: job's beside them.
JOB_OUTPUTS: dict[str, dict[str, Any]] = job_outputs({})
TUNING_OUTPUTS: dict[str, dict[str, Any]] = tuning_outputs({})
#: The outputs every job resource has once made (``VertexTrainingProvider`` sets them, an
#: empty text where there is nothing yet): an SDK types them as always present.
ALWAYS_SET = (
    "state",
    "error",
    "attempts",
    "jobId",
    "consoleUrl",
    "logsUrl",
    "outputDirectory",
    "modelDirectory",
    "waiterEntry",
)
#: The properties of the output types, from their shapes.
TRIAL_PROPERTIES = shapes.output_properties(TrialOutput, {})
MODEL_VERSION_PROPERTIES = shapes.output_properties(ModelVersion, {})
JOB_FAILURE_PROPERTIES = shapes.output_properties(JobFailure, {})
ATTEMPT_PROPERTIES = shapes.output_properties(AttemptOutput, {})
PLATFORM_OUTPUTS = ("bucket", "repositoryUrl", "serviceAccount")
PROVIDER_SETTINGS = (
    "apiEndpoint",
    "localAccelerators",
    "project",
    "region",
    "backend",
    "accessToken",
    "credentials",
    "impersonateServiceAccount",
    "prices",
)
#: The provider settings the engine keeps encrypted (``"secret": true``).
SECRET_SETTINGS = ("accessToken", "credentials")
#: What a job defaults from on a TrainingPlatform (``TrainingPlatform.job_settings``).
PLATFORM_SETTING_NAMES = tuple(name for name in JOB_SETTINGS if name != "backend")
#: A value of any shape.
ANY = shapes.ANY


class Descriptions:
    """Each resource property's description and each section's (``resource_texts``)."""

    intros = resource_texts.INTROS

    def resource(self, section: str, prop: str) -> str:
        """A property's description (TrainingJob's, for a tuning job property it shares)."""
        for table in (section, "TrainingJob"):
            if prop in resource_texts.PROPERTIES.get(table, {}):
                return resource_texts.PROPERTIES[table][prop]
        raise KeyError(f"resource_texts has no description of {section}.{prop}")


def build(version: str) -> dict[str, Any]:
    """The whole schema, stamped with ``version``."""
    # Here, not at the top: the descriptions are the stack config's models', which the
    # plugin does not load to serve a no-change preview (it serves schema.json).
    from vertex_training.plugin import job_keys
    from vertex_training.review.cost import CostEstimate

    described = Descriptions()
    types: dict[str, dict[str, Any]] = {}
    job_type = shapes.schema_type(arguments.TrainingJobArgs, types, job_keys.describe)
    image_row = shapes.schema_type(arguments.ImageRowArgs, types, job_keys.describe)
    platform_args = shapes.schema_type(arguments.PlatformArgs, types, job_keys.describe)

    def props(section: str, specs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        return {
            name: {**spec, "description": described.resource(section, name)}
            for name, spec in specs.items()
        }

    text = {"type": "string"}
    types[PLATFORM_SETTINGS] = {
        "type": "object",
        "description": described.intros["Platform settings"],
        "properties": props("Platform settings", {n: text for n in PLATFORM_SETTING_NAMES}),
    }
    types[WAITER_ENTRY] = {
        "type": "object",
        "description": described.intros["Waiter entries"],
        "properties": props(
            "Waiter entries",
            {
                "name": text,
                "resourceName": text,
                "until": text,
                "timeoutS": {"type": "number"},
                "startTimeoutS": {"type": "number"},
                "config": ANY,
                "stack": ANY,
            },
        ),
        "required": ["name", "resourceName", "until"],
    }
    shaped = (
        TrialOutput,
        ModelVersion,
        WaitedTrialsOutput,
        JobFailure,
        AttemptOutput,
        CostEstimate,
    )
    for shape in shaped:
        types[shapes.type_token(shape)] = shapes.output_type(shape, types)
    outputs = job_outputs(types)
    typed_inputs = {
        "job": job_type,
        "images": {"type": "array", "items": image_row},
        "platform": {"$ref": f"#/types/{PLATFORM_SETTINGS}"},
    }
    job_inputs = {name: typed_inputs.get(name, text) for name in JOB_INPUTS}  # a setting: text

    def job_resource(section: str, outputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        inputs = props(section, job_inputs)
        return {
            "description": described.intros[section],
            "inputProperties": inputs,
            "requiredInputs": ["job"],
            "properties": {**inputs, **outputs},
            "required": ["job", *ALWAYS_SET],
        }

    map_of_text = {"type": "object", "additionalProperties": text}
    waiter_inputs = {"jobs": {"type": "array", "items": {"$ref": f"#/types/{WAITER_ENTRY}"}}}
    waiter_outputs = {
        "states": map_of_text,
        "trials": {"type": "object", "additionalProperties": {"$ref": f"#/types/{WAITED_TRIALS}"}},
        "reasons": map_of_text,
        "attempts": {
            "type": "object",
            "additionalProperties": {"type": "array", "items": {"$ref": f"#/types/{ATTEMPT}"}},
        },
        "problems": map_of_text,
        "models": {"type": "object", "additionalProperties": {"$ref": f"#/types/{MODEL_VERSION}"}},
    }
    platform_inputs = {
        "project": text,
        "region": text,
        "settings": platform_args,
        "vertexApiRole": {"type": "boolean"},
    }
    platform_outputs = {
        "jobSettings": {"$ref": f"#/types/{PLATFORM_SETTINGS}"},
        **{name: text for name in PLATFORM_OUTPUTS},
    }
    provider_settings = props(
        "Provider settings",
        {n: {**text, "secret": True} if n in SECRET_SETTINGS else text for n in PROVIDER_SETTINGS},
    )
    resources = {
        TRAINING_JOB: job_resource("TrainingJob", outputs),
        TUNING_JOB: job_resource("HyperparameterTuningJob", {**outputs, **tuning_outputs(types)}),
        JOB_WAITER: {
            "description": described.intros["JobWaiter"],
            "inputProperties": props("JobWaiter", waiter_inputs),
            "requiredInputs": ["jobs"],
            "properties": props("JobWaiter", {**waiter_inputs, **waiter_outputs}),
            "required": ["jobs", *waiter_outputs],
        },
        TRAINING_PLATFORM: {
            "isComponent": True,
            "description": described.intros["TrainingPlatform"],
            "inputProperties": props("TrainingPlatform", platform_inputs),
            "requiredInputs": ["project", "region"],
            "properties": props("TrainingPlatform", platform_outputs),
            "required": list(platform_outputs),
        },
    }
    return {
        "name": shapes.PACKAGE,
        "displayName": "Vertex AI training",
        "version": version,
        "description": (
            "Google Cloud training jobs (Vertex AI CustomJobs and hyperparameter tuning "
            "jobs) as Pulumi resources."
        ),
        "keywords": ["pulumi", "vertex-ai", "google-cloud", "training"],
        "license": "Apache-2.0",
        "publisher": "The vertex-training authors",
        "homepage": f"https://{REPOSITORY}",
        "repository": f"https://{REPOSITORY}",
        "pluginDownloadURL": PLUGIN_DOWNLOAD_URL,
        "language": languages(version),
        "config": {"variables": provider_settings},
        "provider": {"inputProperties": provider_settings},
        "types": dict(sorted(types.items())),
        "resources": resources,
    }


def served(version: str) -> str:
    """The schema the plugin serves: the written file, stamped with ``version``."""
    schema = json.loads(SCHEMA_FILE.read_text())
    schema["version"] = version
    return json.dumps(schema)


def render(version: str) -> str:
    """The schema as ``make schema`` writes it, for the release ``version``."""
    return json.dumps(build(version), indent=2, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    """``python -m vertex_training.plugin.schema OUT.json VERSION``."""
    out, version = Path(argv[0]), argv[1]
    out.write_text(render(version))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
