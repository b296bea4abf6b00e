"""What the plugin's resources, their settings and the types only the plugin has say of
themselves: each resource's and type's description and each of their properties' that no
model or output dataclass gives (a job's keys are the stack config models', its outputs
the output dataclasses'). ``schema.build`` reads them into the schema, and
``resource_docs`` writes docs/plugin.md's reference of the resources from the schema
(``make schema``): the one place these sentences are written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

#: Each resource's and plugin-only type's description, by its section of docs/plugin.md.
INTROS: Final[Mapping[str, str]] = {
    "TrainingJob": ("A Vertex AI CustomJob, or a job run on this machine (`backend: local`)."),
    "HyperparameterTuningJob": (
        "A Vertex AI hyperparameter tuning job: a job with a `study` (docs/tuning.md). "
        "Its properties are TrainingJob's, and:"
    ),
    "JobWaiter": ("Waits for jobs to reach the state their `wait` asks for."),
    "TrainingPlatform": (
        "A component: the APIs, staging bucket, Artifact Registry repository, service "
        "account and IAM the jobs run on (docs/platform.md)."
    ),
    "Platform settings": ("The type of `jobSettings` and of a job's `platform`."),
    "Waiter entries": (
        "What a JobWaiter takes to wait for one job (a job's `waiterEntry`): the job's "
        "wait plan, written by the plugin and followed by the waiter as it is (where the "
        "job runs is read from its resource name)."
    ),
    "Provider settings": (
        "Each setting of the provider: `vertex-training:<setting>` in a stack's config, or "
        "an argument of an explicit provider resource."
    ),
}

#: Each property's description, by section: a resource's inputs (a job's settings beside
#: its keys), a JobWaiter's and a TrainingPlatform's properties, the provider's settings
#: and the plugin-only types' properties.
PROPERTIES: Final[Mapping[str, Mapping[str, str]]] = {
    "TrainingJob": {
        "job": (
            "The job's keys, as a stack config job has them (docs/config-shape.md), in camelCase."
        ),
        "project": (
            "The Google Cloud project the job runs in; default the platform's, else "
            "`vertex-training:project`."
        ),
        "region": (
            "The job's region, unless its `job.region` says otherwise; default the "
            "platform's, else `vertex-training:region`."
        ),
        "backend": (
            "`vertex` (Vertex AI) or `local` (this machine); default `vertex-"
            "training:backend`, else `vertex`."
        ),
        "serviceAccount": (
            "The account the job runs as, unless `job.serviceAccount` says otherwise."
        ),
        "outputRoot": (
            "A `gs://` prefix under which each job writes to `<outputRoot>/<job name>`, "
            "unless `job.baseOutputDirectory` says otherwise."
        ),
        "imageRepository": ("The Docker repository a bare image name (`trainer:1`) is read from."),
        "tensorboard": ("The Vertex AI TensorBoard of `tensorboard: true` jobs."),
        "images": ("Rows added to the catalogue of prebuilt images (docs/images.md)."),
        "platform": (
            "A TrainingPlatform's `jobSettings`: the project, region, account, output "
            "root, repository and TensorBoard the job defaults from (the arguments above "
            "win)."
        ),
    },
    "JobWaiter": {
        "jobs": ("The jobs to wait for: each job's `waiterEntry`."),
        "states": ("The state each job was last seen in, by job name."),
        "trials": ("The trials of each tuning job waited for, by job name."),
        "reasons": ("Why a job was not running yet, the last reason the wait gave, by job name."),
        "attempts": (
            "The attempts of each job with `retry` the wait saw (each an `Attempt`), by job name."
        ),
        "problems": (
            "Why each job failed the last wait, by job name (the update failed naming it)."
        ),
        "models": (
            "What each job with `model` registered once the wait saw its training "
            "pipeline succeed (each a `ModelVersion`), by job name."
        ),
    },
    "TrainingPlatform": {
        "project": ("The project the platform is made in."),
        "region": ("The region of its bucket, repository and jobs."),
        "settings": (
            "The platform's keys, as `vertex-training:platform` has them "
            "(docs/platform.md), in camelCase."
        ),
        "vertexApiRole": (
            "Grant the jobs' account `roles/aiplatform.user` (for TensorBoard or Experiments)."
        ),
        "jobSettings": (
            "What a job run on this platform defaults from: give it as the job's `platform`."
        ),
        "bucket": ("The staging bucket's name."),
        "repositoryUrl": ("The Docker repository, `<region>-docker.pkg.dev/<project>/<id>`."),
        "serviceAccount": ("The jobs' service account's email."),
    },
    "Platform settings": {
        "project": ("The project jobs run in."),
        "region": ("The region jobs run in."),
        "serviceAccount": ("The account jobs run as."),
        "outputRoot": ("A `gs://` prefix each job writes under."),
        "imageRepository": ("The repository bare image names are read from."),
        "tensorboard": ("The TensorBoard of `tensorboard: true` jobs."),
    },
    "Provider settings": {
        "apiEndpoint": (
            "Another JobService address (`host:port`); loopback addresses get a local "
            "channel, no TLS, and credentials only when some are set. For tests."
        ),
        "localAccelerators": (
            "On the local backend: `gpu` (default) or `cpu` (a job with accelerators runs"
            " on the CPU when this machine has none)."
        ),
        "project": ("The project of every job that names none."),
        "region": ("The region of every job that names none."),
        "backend": ("Where every job that names none runs: `vertex` (default) or `local`."),
        "accessToken": (
            "An OAuth 2.0 access token every Google call uses (a secret); else "
            "`GOOGLE_OAUTH_ACCESS_TOKEN`, which Pulumi ESC's `gcp-login` sets "
            '(docs/plugin.md, "Credentials").'
        ),
        "credentials": (
            "The path to, or the JSON of, a service account key or a Workload Identity "
            "Federation configuration (a secret); `accessToken` wins over it; else "
            "`GOOGLE_CREDENTIALS`, else Application Default Credentials."
        ),
        "impersonateServiceAccount": (
            "The service account every Google call is made as, with `accessToken`, "
            "`credentials` or Application Default Credentials as the source; else "
            "`GOOGLE_IMPERSONATE_SERVICE_ACCOUNT`."
        ),
        "prices": (
            "The price snapshot jobs' estimates are read from, as `vertex-training prices"
            " refresh` writes one: its path, relative to the program's directory; default"
            " `prices/snapshot.json` there."
        ),
    },
    "Waiter entries": {
        "name": ("The job's name in the program."),
        "resourceName": ("The job's resource name at its backend."),
        "until": ("The state to wait for: `running` or `succeeded` (`submitted`: not waited for)."),
        "timeoutS": ("How long the wait may last, in seconds (the job's `wait.timeout`)."),
        "startTimeoutS": (
            "How long the job may take to start running, in seconds (the job's "
            "`wait.startTimeout`); absent when it has none."
        ),
        "config": (
            "Only for a job with `retry`: the job's keys, as its check read them (the "
            "waiter submits its next attempts from them)."
        ),
        "stack": ("Only for a job with `retry`: the job's settings, as its check read them."),
    },
}
