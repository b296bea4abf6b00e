"""The plugin's Pulumi package schema, written from the job's keys and the docs.

The types come from ``vertex_training.resources.arguments`` (what ``TrainingJobArgs``
holds, read by ``shapes``); a job key's or platform key's description from the pydantic
model that defines the key (``Field(description=...)``, read by ``job_keys``); each
resource property's from its row of docs/plugin.md. ``make schema`` writes ``schema.json``
beside this module (the installed plugin serves that file, stamped with its installed
version: the docs are not installed) and docs/config-shape.md's key tables;
``tests/test_plugin_schema.py`` fails when either is stale. The file carries the
release's version (provider/pyproject.toml's), which ``make sdks`` stamps into every SDK,
and the names each language's SDK is published under.

    python -m vertex_training.plugin.schema DOCS_DIR OUT.json VERSION
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vertex_training.plugin import job_keys, shapes
from vertex_training.resources import arguments

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
WAITED_TRIALS = f"{shapes.PACKAGE}:{shapes.MODULE}:WaitedTrials"
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
#: A job resource's outputs, each a plain value (what the dynamic resource records,
#: ``resources.training_job.OUTPUT_KEYS``, and what the stack outputs derive).
JOB_OUTPUTS: dict[str, dict[str, Any]] = {
    "state": {"type": "string"},
    "error": {"type": "string"},
    "createTime": {"type": "string"},
    "startTime": {"type": "string"},
    "endTime": {"type": "string"},
    "webAccessUris": {"type": "object", "additionalProperties": {"type": "string"}},
    "outputDirectory": {"type": "string"},
    "failure": {"$ref": f"#/types/{JOB_FAILURE}"},
    "attempts": {"type": "array", "items": {"$ref": f"#/types/{ATTEMPT}"}},
    "model": {"$ref": f"#/types/{MODEL_VERSION}"},
    "jobId": {"type": "string"},
    "consoleUrl": {"type": "string"},
    "logsUrl": {"type": "string"},
    "modelDirectory": {"type": "string"},
    "waiterEntry": {"$ref": f"#/types/{WAITER_ENTRY}"},
    # Known in a preview already (the rest once the job is submitted): the Vertex AI
    # request body, Google's shape, and what the job may cost.
    "request": {"type": "object", "additionalProperties": shapes.ANY},
    "estimate": {"$ref": f"#/types/{COST_ESTIMATE}"},
}
#: The properties of a job's ``estimate`` (``review.cost.Estimate``, in camelCase).
COST_ESTIMATE_PROPERTIES: dict[str, dict[str, Any]] = {
    "hourlyUsd": {"type": "number"},
    "maxUsd": {"type": "number"},
    "hours": {"type": "number"},
    "strategy": {"type": "string"},
    "pricesRead": {"type": "string"},
    "pricesSource": {"type": "string"},
    "unknown": {"type": "array", "items": {"type": "string"}},
    "summary": {"type": "string"},
}
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
TUNING_OUTPUTS: dict[str, dict[str, Any]] = {
    "trials": {"type": "array", "items": {"$ref": f"#/types/{TRIAL}"}},
    "bestTrial": {"$ref": f"#/types/{TRIAL}"},
}
#: The properties of a trial (``backends.base.Trial.to_output``, in camelCase: its keys
#: by ``plugin.waiter_shapes.trial_output``; the parameters' and metrics' IDs as written).
TRIAL_PROPERTIES: dict[str, dict[str, Any]] = {
    "id": {"type": "string"},
    "state": {"type": "string"},
    "parameters": {"type": "object", "additionalProperties": shapes.ANY},
    "finalMetric": {"type": "number"},
    "metrics": {"type": "object", "additionalProperties": {"type": "number"}},
    "startTime": {"type": "string"},
    "endTime": {"type": "string"},
    "infeasibleReason": {"type": "string"},
}
#: The properties of a job's ``model`` (``backends.base.RegisteredModel.to_output`` and
#: ``JobStatus.model_output``, in camelCase).
MODEL_VERSION_PROPERTIES: dict[str, dict[str, Any]] = {
    "resourceName": {"type": "string"},
    "modelId": {"type": "string"},
    "versionId": {"type": "string"},
    "versionName": {"type": "string"},
    "aliases": {"type": "array", "items": {"type": "string"}},
    "artifactUri": {"type": "string"},
    "displayName": {"type": "string"},
    "imageUri": {"type": "string"},
    "backingJob": {"type": "string"},
}
#: The properties of a failed job's ``failure`` (``api.failures.Failure.to_output``).
JOB_FAILURE_PROPERTIES: dict[str, dict[str, Any]] = {
    "class": {"type": "string"},
    "code": {"type": "integer"},
    "message": {"type": "string"},
    "fix": {"type": "string"},
    "replica": {"type": "string"},
}
#: The properties of an attempt (``resources.attempts.Attempt.output``, in camelCase:
#: ``plugin.waiter_shapes.attempt_outputs``).
ATTEMPT_PROPERTIES: dict[str, dict[str, Any]] = {
    "attempt": {"type": "integer"},
    "region": {"type": "string"},
    "strategy": {"type": "string"},
    "state": {"type": "string"},
    "class": {"type": "string"},
    "resourceName": {"type": "string"},
    "jobId": {"type": "string"},
    "consoleUrl": {"type": "string"},
    "logsUrl": {"type": "string"},
}
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
_ROW = re.compile(r"^\|\s*(`[^|]*?`(?:\s*,\s*`[^|]*?`)*)\s*\|\s*(.*?)\s*\|\s*$")
_HEADING = re.compile(r"^(#{2,3})\s+(.*?)\s*$")


def doc_tables(text: str) -> dict[str, dict[str, str]]:
    """The key tables of a docs page: heading -> key -> meaning. A row naming several
    keys (`` `args`, `env` ``) gives each the same meaning."""
    tables: dict[str, dict[str, str]] = {}
    heading = ""
    for line in text.splitlines():
        if found := _HEADING.match(line):
            heading = found.group(2)
        elif found := _ROW.match(line):
            for key in re.findall(r"`([^`]+)`", found.group(1)):
                tables.setdefault(heading, {})[key] = found.group(2)
    return tables


class Descriptions:
    """Each resource property's description, from docs/plugin.md's tables."""

    def __init__(self, docs: Path) -> None:
        plugin_text = (docs / "plugin.md").read_text()
        self.plugin = doc_tables(plugin_text)
        self.intros = _intros(plugin_text)

    def resource(self, section: str, prop: str) -> str:
        """A resource property's row of docs/plugin.md (TrainingJob's, for a tuning job
        property it shares)."""
        for table in (section, "TrainingJob"):
            if prop in self.plugin.get(table, {}):
                return job_keys.sentence(self.plugin[table][prop].replace("\\|", "|"))
        raise KeyError(f"docs/plugin.md has no row for {section}.{prop}")


def _intros(text: str) -> dict[str, str]:
    """The first paragraph under each ``###`` heading of docs/plugin.md."""
    intros: dict[str, str] = {}
    for section in re.split(r"^### ", text, flags=re.MULTILINE)[1:]:
        heading, _, body = section.partition("\n")
        paragraph = body.strip().split("\n\n")[0]
        intros[heading.strip()] = " ".join(paragraph.split())
    return intros


def build(docs: Path, version: str) -> dict[str, Any]:
    """The whole schema, stamped with ``version``."""
    described = Descriptions(docs)
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
    types[TRIAL] = {
        "type": "object",
        "description": described.intros["Trials"],
        "properties": props("Trials", TRIAL_PROPERTIES),
        "required": ["id", "state", "parameters", "metrics"],
    }
    types[WAITED_TRIALS] = {
        "type": "object",
        "description": described.intros["Waited trials"],
        "properties": props(
            "Waited trials",
            {
                "trials": {"type": "array", "items": {"$ref": f"#/types/{TRIAL}"}},
                "bestTrial": {"$ref": f"#/types/{TRIAL}"},
            },
        ),
        "required": ["trials"],
    }
    types[MODEL_VERSION] = {
        "type": "object",
        "description": described.intros["Model versions"],
        # No property is always set (a pipeline names its backing job before its model):
        # no `required` (an empty one the engine drops when it reads the schema).
        "properties": props("Model versions", MODEL_VERSION_PROPERTIES),
    }
    types[JOB_FAILURE] = {
        "type": "object",
        "description": described.intros["Job failures"],
        "properties": props("Job failures", JOB_FAILURE_PROPERTIES),
        "required": list(JOB_FAILURE_PROPERTIES),
    }
    types[ATTEMPT] = {
        "type": "object",
        "description": described.intros["Attempts"],
        "properties": props("Attempts", ATTEMPT_PROPERTIES),
        "required": list(ATTEMPT_PROPERTIES),
    }
    types[COST_ESTIMATE] = {
        "type": "object",
        "description": described.intros["Cost estimates"],
        "properties": props("Cost estimates", COST_ESTIMATE_PROPERTIES),
        "required": ["hours", "strategy", "unknown", "summary"],
    }
    job_inputs = {
        "job": job_type,
        **{name: text for name in JOB_SETTINGS},
        "images": {"type": "array", "items": image_row},
        "platform": {"$ref": f"#/types/{PLATFORM_SETTINGS}"},
    }

    def job_resource(section: str, outputs: Mapping[str, dict[str, Any]]) -> dict[str, Any]:
        inputs = props(section, job_inputs)
        return {
            "description": described.intros[section],
            "inputProperties": inputs,
            "requiredInputs": ["job"],
            "properties": {**inputs, **props(section, outputs)},
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
        TRAINING_JOB: job_resource("TrainingJob", JOB_OUTPUTS),
        TUNING_JOB: job_resource("HyperparameterTuningJob", {**JOB_OUTPUTS, **TUNING_OUTPUTS}),
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


def render(docs: Path, version: str) -> str:
    """The schema as ``make schema`` writes it, for the release ``version``."""
    return json.dumps(build(docs, version), indent=2, sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    """``python -m vertex_training.plugin.schema DOCS_DIR OUT.json VERSION``."""
    docs, out, version = Path(argv[0]), Path(argv[1]), argv[2]
    out.write_text(render(docs, version))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
