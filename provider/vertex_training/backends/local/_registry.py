"""The local Model Registry: the models local training pipelines register, as Vertex AI's
Model Registry keeps them (``model.proto``: a model, its versions numbered from 1, the
version aliases, ``default`` on the newest version).

On disk, under the local backend's root (beside the job records, so that deleting a job
never deletes a model)::

    models/<model id>/model.json                      the model: display name, labels, ...
    models/<model id>/versions/<n>/version.json       version n: aliases, serving image, ...
    models/<model id>/versions/<n>/artifacts/         a copy of what the trainer wrote to
                                                      AIP_MODEL_DIR

A model's resource name is ``local/models/<id>``, a version's ``local/models/<id>@<n>``.
Nothing in this project deletes a model or a version: delete the folder to do so.
"""

from __future__ import annotations

import contextlib
import fcntl
import secrets
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

from vertex_training.api import states
from vertex_training.api.bodies import is_tuning_body, named_output_directory
from vertex_training.api.pipelines import DEFAULT_ALIAS
from vertex_training.backends.base import LOCAL_NAME_ROOT, RegisteredModel, Trial, best_trial
from vertex_training.backends.local._record import (
    JobRecord,
    now_rfc3339,
    read_json,
    write_json_atomic,
)

#: Every local model's resource name starts with this.
MODEL_NAME_PREFIX: Final = f"{LOCAL_NAME_ROOT}/models/"


class UploadError(Exception):
    """What the trainer left cannot be registered (no model in AIP_MODEL_DIR)."""


def model_id_of(name: str) -> str:
    """The ID in a local model's resource name (``local/models/<id>``); ValueError for any
    other name."""
    if not name.startswith(MODEL_NAME_PREFIX) or "/" in name[len(MODEL_NAME_PREFIX) :]:
        raise ValueError(f"{name!r} is not a local model name ({MODEL_NAME_PREFIX}<id>)")
    return name[len(MODEL_NAME_PREFIX) :]


class LocalRegistry:
    """The models under ``root/models``."""

    def __init__(self, root: Path) -> None:
        self.path = root / "models"

    def find(self, model_id: str, owner_labels: Mapping[str, str]) -> str | None:
        """The model ``model_id`` when given and registered, else the newest model carrying
        every one of ``owner_labels``; its resource name, or None."""
        if model_id:
            return MODEL_NAME_PREFIX + model_id if self._model_file(model_id).exists() else None
        if not owner_labels or not self.path.is_dir():
            return None
        found = []
        for folder in self.path.iterdir():
            with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                model = read_json(folder / "model.json")
                labels = model.get("labels") or {}
                if all(labels.get(k) == v for k, v in owner_labels.items()):
                    found.append((model.get("createTime", ""), folder.name))
        return MODEL_NAME_PREFIX + max(found)[1] if found else None

    def versions(self, name: str) -> list[RegisteredModel]:
        """Every version of the model ``name``, oldest first; [] when there is none."""
        model_id = model_id_of(name)
        try:
            model = read_json(self._model_file(model_id))
        except FileNotFoundError:
            return []
        folder = self.path / model_id / "versions"
        numbers = sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())
        return [self._version(model_id, model, n) for n in numbers]

    def version(self, name: str, version_id: str) -> RegisteredModel | None:
        """Version ``version_id`` of the model ``name``, or None."""
        return next((v for v in self.versions(name) if v.version_id == version_id), None)

    def register(
        self, upload: Mapping[str, Any], parent: str, model_id: str, model_dir: Path, pipeline: str
    ) -> RegisteredModel:
        """Register what the trainer wrote to ``model_dir`` as the next version of
        ``parent`` (a model's resource name), else as version 1 of a new model of
        ``model_id`` (a fresh numeric ID when ""): ``upload`` is the pipeline's
        ``modelToUpload``. The new version takes ``default`` and its own aliases, which
        leave the model's other versions. UploadError when ``model_dir`` holds nothing."""
        if not model_dir.is_dir() or not any(model_dir.iterdir()):
            raise UploadError(
                f"the trainer wrote no model to AIP_MODEL_DIR ({model_dir}): save the trained "
                "model under the directory that variable names, or remove model: to run "
                "the job without registering one"
            )
        model_id = model_id_of(parent) if parent else model_id or _fresh_id()
        self.path.mkdir(parents=True, exist_ok=True)
        with self._locked(model_id):
            model_file = self._model_file(model_id)
            if not model_file.exists():
                model_file.parent.mkdir(parents=True, exist_ok=True)
                write_json_atomic(
                    model_file,
                    {
                        "name": MODEL_NAME_PREFIX + model_id,
                        "displayName": upload.get("displayName", ""),
                        "description": upload.get("description", ""),
                        "labels": dict(upload.get("labels") or {}),
                        "createTime": now_rfc3339(),
                    },
                )
            versions = self.path / model_id / "versions"
            versions.mkdir(exist_ok=True)
            taken = [int(p.name) for p in versions.iterdir() if p.name.isdigit()]
            number = str(max(taken, default=0) + 1)
            aliases = [DEFAULT_ALIAS, *(a for a in upload.get("versionAliases") or [])]
            for other in taken:
                self._drop_aliases(versions / str(other) / "version.json", aliases)
            folder = versions / number
            shutil.copytree(model_dir, folder / "artifacts")
            write_json_atomic(
                folder / "version.json",
                {
                    "versionId": number,
                    "versionAliases": list(dict.fromkeys(aliases)),
                    "versionDescription": upload.get("versionDescription", ""),
                    "containerSpec": dict(upload.get("containerSpec") or {}),
                    "trainingPipeline": pipeline,
                    "createTime": now_rfc3339(),
                },
            )
        found = self.version(MODEL_NAME_PREFIX + model_id, number)
        assert found is not None
        return found

    # -- helpers -----------------------------------------------------------------------

    def _model_file(self, model_id: str) -> Path:
        return self.path / model_id / "model.json"

    def _version(self, model_id: str, model: Mapping[str, Any], number: int) -> RegisteredModel:
        folder = self.path / model_id / "versions" / str(number)
        version = read_json(folder / "version.json")
        return RegisteredModel(
            name=MODEL_NAME_PREFIX + model_id,
            version_id=str(number),
            aliases=tuple(version.get("versionAliases") or ()),
            artifact_uri=str(folder / "artifacts"),
            display_name=str(model.get("displayName", "")),
            image_uri=str((version.get("containerSpec") or {}).get("imageUri", "")),
        )

    @staticmethod
    def _drop_aliases(path: Path, aliases: list[str]) -> None:
        with contextlib.suppress(FileNotFoundError):
            version = read_json(path)
            kept = [a for a in version.get("versionAliases") or [] if a not in aliases]
            if kept != version.get("versionAliases"):
                write_json_atomic(path, {**version, "versionAliases": kept})

    @contextlib.contextmanager
    def _locked(self, model_id: str) -> Iterator[None]:
        """One registration of a model at a time (across processes)."""
        with (self.path / f".{model_id}.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _fresh_id() -> str:
    """A numeric model ID, as Vertex AI chooses one."""
    return f"{time.time_ns() // 1000}{secrets.randbelow(1000):03d}"


#: The file of a local pipeline's record that holds what it registers (``modelToUpload``
#: and ``modelId`` or ``parentModel``), beside its job's ``job.json``; and the file its
#: registered version is recorded in.
PIPELINE_FILE: Final = "pipeline.json"
REGISTERED_FILE: Final = "registered.json"


def finish(record: JobRecord, state: str, error: str) -> None:
    """End a local job in ``state``: a training pipeline's job that SUCCEEDED first
    registers its model (a tuning job's best trial's), and the pipeline FAILED when it
    cannot, as Vertex AI fails a pipeline whose upload fails."""
    pipeline_file = record.path / PIPELINE_FILE
    if state == states.SUCCEEDED and pipeline_file.exists():
        try:
            pipeline = read_json(pipeline_file)
            registered = LocalRegistry(record.root).register(
                pipeline["modelToUpload"],
                str(pipeline.get("parentModel") or ""),
                str(pipeline.get("modelId") or ""),
                _model_dir(record),
                record.read_job().get("name", ""),
            )
            write_json_atomic(
                record.path / REGISTERED_FILE,
                {"name": registered.name, "versionId": registered.version_id},
            )
        except (UploadError, OSError) as exc:
            state, error = states.FAILED, f"the model upload failed: {exc}"
    record.update_state(state, error)


def registered(record: JobRecord) -> RegisteredModel | None:
    """The version a local pipeline registered, as its model holds it now; None before."""
    try:
        found = read_json(record.path / REGISTERED_FILE)
    except FileNotFoundError:
        return None
    return LocalRegistry(record.root).version(found["name"], found["versionId"])


def _model_dir(record: JobRecord) -> Path:
    """Where the job's trainer wrote its model (AIP_MODEL_DIR): a tuning job's best
    trial's."""
    job = record.read_job()
    output = Path(named_output_directory(job) or record.default_output_dir)
    if not is_tuning_body(job):
        return output / "model"
    metrics = (job.get("studySpec") or {}).get("metrics") or [{}]
    trials = [
        Trial(id=t["id"], state=t["state"], metrics=dict(t.get("metrics") or {}))
        for t in record.read_trials()
    ]
    best = best_trial(trials, metrics[0].get("metricId", ""), metrics[0].get("goal", ""))
    if best is None:
        raise UploadError("no trial reported its metric, so there is no best trial to register")
    return output / best.id / "model"
