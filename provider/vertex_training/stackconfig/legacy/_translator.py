"""``_Translator``: one ``trainingInput`` block -> native keys, a key at a time. It reads the
block's own keys (region, job directory, scheduling, identity, network, encryption, web
access) and hands the rest to its parts, which share its ``TranslationContext``:
``ClusterLayout`` (``_cluster``: machines), ``ProgramTranslator`` (``_program``: what runs)
and ``StudyTranslator`` (``_study``: hyperparameter tuning).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vertex_training.errors import Issue
from vertex_training.stackconfig.legacy._cluster import ClusterLayout
from vertex_training.stackconfig.legacy._context import TranslationContext
from vertex_training.stackconfig.legacy._program import ProgramTranslator
from vertex_training.stackconfig.legacy._study import StudyTranslator
from vertex_training.stackconfig.legacy._tables import (
    ENCRYPTION_CONFIG_KEYS,
    JOB_DIR_FLAG,
    POOL_ROLES,
    SCHEDULING_KEYS,
    TRAINING_INPUT_KEYS,
)
from vertex_training.stackconfig.legacy._translation import _Origin


class _Translator:
    """Reads one ``trainingInput`` block and builds the native job keys."""

    def __init__(self, source: Mapping[str, Any], *, legacy_base: str, native_base: str) -> None:
        self.context = TranslationContext(source, legacy_base=legacy_base, native_base=native_base)
        self.cluster = ClusterLayout(self.context)
        self.program = ProgramTranslator(self.context)
        self.study = StudyTranslator(self.context)
        #: What the translation found: the context's lists, which every part appends to.
        self.issues: list[Issue] = self.context.issues
        self.warnings: list[Issue] = self.context.warnings
        self.origins: list[_Origin] = self.context.origins

    def translate(self) -> dict[str, Any]:
        source = self.context.block((), self.context.source, TRAINING_INPUT_KEYS)
        native: dict[str, Any] = {}
        region = self.context.text(("region",), source.get("region"))
        if region is not None:
            native["region"] = region
            self.context.came_from("region", ("region",))
        pools = self.cluster.pools(source)
        program = self.program.translate(source, pools)
        args = program.pop("args", None)
        native.update(program)
        native.update(pools.get("primary", {}))
        if args is not None:
            native["args"] = args
        for role in POOL_ROLES.values():
            if role in pools:
                native[role] = pools[role]
        self._job_dir(source, native)
        self._settings(source, native)
        study = self.study.translate(source.get("hyperparameters"))
        if study is not None:
            native["study"] = study
        return native

    def _job_dir(self, source: Mapping[str, Any], native: dict[str, Any]) -> None:
        """jobDir -> base_output_directory, and ``--job-dir <dir>`` for the application."""
        job_dir = self.context.text(("jobDir",), source.get("jobDir"))
        if job_dir is None:
            return
        native["base_output_directory"] = job_dir
        self.context.came_from("base_output_directory", ("jobDir",))
        if "image" not in native and "python_package" not in native:
            return
        native["args"] = _with_job_dir(native.get("args"), job_dir)
        for role in POOL_ROLES.values():
            pool = native.get(role)
            if isinstance(pool, dict) and "args" in pool:
                pool["args"] = _with_job_dir(pool["args"], job_dir)

    def _settings(self, source: Mapping[str, Any], native: dict[str, Any]) -> None:
        """Scheduling, identity, network, encryption, web access, TF_CONFIG naming."""
        scheduling = self.context.block(("scheduling",), source.get("scheduling"), SCHEDULING_KEYS)
        timeout = self.context.duration(
            ("scheduling", "maxRunningTime"), scheduling.get("maxRunningTime")
        )
        if timeout is not None:
            native["scheduling"] = {"timeout": f"{timeout}s"}
            self.context.came_from("scheduling", ("scheduling",))
            self.context.came_from("scheduling.timeout", ("scheduling", "maxRunningTime"))
        if scheduling.get("maxWaitTime") is not None:
            self.context.warn(
                ("scheduling", "maxWaitTime"),
                scheduling["maxWaitTime"],
                "Vertex AI has no queueing limit for standard scheduling (max_wait_duration "
                "applies to the FLEX_START strategy only): the job may wait in the queue "
                "longer; maxWaitTime is not used",
            )
        if scheduling.get("priority") is not None:
            self.context.warn(
                ("scheduling", "priority"),
                scheduling["priority"],
                "Vertex AI custom jobs have no priority: priority is not used",
            )
        for legacy, native_key in (("serviceAccount", "service_account"), ("network", "network")):
            value = self.context.text((legacy,), source.get(legacy))
            if value is not None:
                native[native_key] = value
                self.context.came_from(native_key, (legacy,))
        encryption = self.context.block(
            ("encryptionConfig",), source.get("encryptionConfig"), ENCRYPTION_CONFIG_KEYS
        )
        kms_key = self.context.text(
            ("encryptionConfig", "kmsKeyName"), encryption.get("kmsKeyName")
        )
        if kms_key is not None:
            native["kms_key"] = kms_key
            self.context.came_from("kms_key", ("encryptionConfig", "kmsKeyName"))
        web_access = self.context.flag(("enableWebAccess",), source.get("enableWebAccess"))
        if web_access:
            native["enable_web_access"] = True
            self.context.came_from("enable_web_access", ("enableWebAccess",))
        if self.context.flag(("useChiefInTfConfig",), source.get("useChiefInTfConfig")) is False:
            self.context.warn(
                ("useChiefInTfConfig",),
                False,
                "Vertex AI always names the primary replica 'chief' in TF_CONFIG; a trainer "
                "that looks for a 'master' task must look for 'chief' instead",
            )


def _with_job_dir(args: Sequence[str] | None, job_dir: str) -> list[str]:
    """``args`` plus ``--job-dir <dir>``, unless they pass --job-dir already."""
    current = list(args or [])
    if any(arg == JOB_DIR_FLAG or arg.startswith(f"{JOB_DIR_FLAG}=") for arg in current):
        return current
    return [*current, JOB_DIR_FLAG, job_dir]
