"""``ProgramTranslator``: what runs -> native keys: a custom container (image, command,
args, each pool's own container) or a Python package on a runtime version.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertex_training.catalog.images import CATALOGUE_URL, LEGACY_RUNTIMES, VERSION_PLACEHOLDER
from vertex_training.stackconfig.legacy._context import Path, TranslationContext
from vertex_training.stackconfig.legacy._tables import (
    POOL_ROLES,
)


class ProgramTranslator:
    """Reads the image or the package, the runtime and the args, and each pool's container."""

    def __init__(self, context: TranslationContext) -> None:
        self.context = context

    def translate(
        self, source: Mapping[str, Any], pools: dict[str, dict[str, Any]]
    ) -> dict[str, Any]:
        """image + command, or python_package + runtime_version; args; per-pool containers."""
        master_config = source.get("masterConfig")
        master = master_config if isinstance(master_config, Mapping) else {}
        image = self.context.text(("masterConfig", "imageUri"), master.get("imageUri"))
        package_uris = self.context.text_list(("packageUris",), source.get("packageUris"))
        module = self.context.text(("pythonModule",), source.get("pythonModule"))
        runtime = self.context.version_text(("runtimeVersion",), source.get("runtimeVersion"), True)
        python = self.context.version_text(("pythonVersion",), source.get("pythonVersion"), False)
        args = self.context.text_list(("args",), source.get("args"))
        program: dict[str, Any] = {}
        if image is not None:
            program.update(
                self._container(
                    source, master, image, package_uris=package_uris, runtime=runtime, python=python
                )
            )
        elif package_uris is not None or module is not None:
            program.update(self._package(source, package_uris, module, runtime, python))
        elif "masterConfig" not in source or "imageUri" not in master:
            self.context.refuse(
                ("packageUris",),
                None,
                "nothing to run: set packageUris and pythonModule (what gcloud's --packages "
                "or --package-path and --module-name gave) or masterConfig.imageUri "
                "(--master-image-uri)",
            )
        container_args = self.context.text_list(
            ("masterConfig", "containerArgs"), master.get("containerArgs")
        )
        if container_args is not None and args is not None:
            self.context.refuse(
                ("masterConfig", "containerArgs"),
                container_args,
                "containerArgs and args cannot both be set (AI Platform Training rule): keep one",
            )
        elif container_args is not None:
            program["args"] = container_args
            self.context.came_from("args", ("masterConfig", "containerArgs"), keep_suffix=True)
        elif args is not None:
            program["args"] = args
            self.context.came_from("args", ("args",), keep_suffix=True)
        for prefix, role in POOL_ROLES.items():
            if role in pools:
                pools[role].update(self._replica_container(prefix, role, source, image))
        return program

    def _container(
        self,
        source: Mapping[str, Any],
        master: Mapping[str, Any],
        image: str,
        *,
        package_uris: list[str] | None,
        runtime: str | None,
        python: str | None,
    ) -> dict[str, Any]:
        for name, value in (
            ("packageUris", package_uris),
            ("pythonModule", source.get("pythonModule")),
        ):
            if value is not None:
                self.context.refuse(
                    (name,),
                    value,
                    "a custom container job runs masterConfig.imageUri; packageUris and "
                    "pythonModule are for runtime-version jobs: remove one or the other",
                )
        for name, value in (("runtimeVersion", runtime), ("pythonVersion", python)):
            if value is not None:
                self.context.refuse(
                    (name,),
                    source.get(name),
                    f"a custom container brings its own framework and Python; {name} applies "
                    "to runtime-version jobs: remove it",
                )
        program: dict[str, Any] = {"image": image}
        self.context.came_from("image", ("masterConfig", "imageUri"))
        command = self.context.text_list(
            ("masterConfig", "containerCommand"), master.get("containerCommand")
        )
        if command is not None:
            program["command"] = command
            self.context.came_from(
                "command", ("masterConfig", "containerCommand"), keep_suffix=True
            )
        return program

    def _package(
        self,
        source: Mapping[str, Any],
        package_uris: list[str] | None,
        module: str | None,
        runtime: str | None,
        python: str | None,
    ) -> dict[str, Any]:
        if package_uris is None:
            self.context.refuse(
                ("packageUris",),
                None,
                "pythonModule needs packageUris: the gs:// URIs of the trainer package (gcloud "
                "uploaded --package-path there)",
            )
        if module is None and "pythonModule" not in source:
            self.context.refuse(
                ("pythonModule",), None, "packageUris needs pythonModule, e.g. trainer.task"
            )
        master = source.get("masterConfig")
        if isinstance(master, Mapping):
            for name in ("containerCommand", "containerArgs"):
                if master.get(name) is not None:
                    self.context.refuse(
                        ("masterConfig", name),
                        master[name],
                        "applies to custom containers (masterConfig.imageUri) only",
                    )
        if package_uris is None or module is None:
            return {}
        program: dict[str, Any] = {
            "python_package": {"package_uris": package_uris, "module": module}
        }
        self.context.came_from("python_package", ("packageUris",))
        self.context.came_from("python_package.package_uris", ("packageUris",), keep_suffix=True)
        self.context.came_from("python_package.module", ("pythonModule",))
        self.context.came_from("python_package.executor_image", ("runtimeVersion",))
        if runtime is None or runtime not in LEGACY_RUNTIMES:
            program["framework"] = self._framework_for(runtime, python)
            self.context.came_from("framework", ("runtimeVersion",))
            return program
        program["runtime_version"] = runtime
        self.context.came_from("runtime_version", ("runtimeVersion",))
        if python is not None:
            program["python_version"] = python
            self.context.came_from("python_version", ("pythonVersion",))
        return program

    def _framework_for(self, runtime: str | None, python: str | None) -> dict[str, Any]:
        """A runtime with no Vertex AI image (1.0 to 1.14, or none given: AI Platform's
        default was 1.0): TensorFlow, at a version the user fills in
        (``images.VERSION_PLACEHOLDER``; ``vertex-training convert`` writes the nearest
        version Vertex AI still runs instead, when the catalogue has one)."""
        given = (
            f"runtime version {runtime}" if runtime else "no runtimeVersion (AI Platform ran 1.0)"
        )
        dropped = (
            f"; pythonVersion {python} is dropped: framework picks the newest Python of the "
            "version (framework.python picks another)"
            if python is not None
            else ""
        )
        self.context.warn(
            ("runtimeVersion",),
            runtime,
            f"{given} has no Vertex AI prebuilt image (those start at 1.15): the job is "
            f'written with framework: {{name: tensorflow, version: "{VERSION_PLACEHOLDER}"}} '
            f"to fill in with a TensorFlow version Vertex AI still runs ({CATALOGUE_URL}), "
            f"or replace framework with image: a container of your own{dropped}",
        )
        return {"name": "tensorflow", "version": VERSION_PLACEHOLDER}

    def _replica_container(
        self, prefix: str, role: str, source: Mapping[str, Any], master_image: str | None
    ) -> dict[str, Any]:
        """A pool's own container: imageUri (default: the master's), containerCommand, Args."""
        config = source.get(f"{prefix}Config")
        if not isinstance(config, Mapping):
            return {}
        path: Path = (f"{prefix}Config",)
        pool: dict[str, Any] = {}
        image = self.context.text((*path, "imageUri"), config.get("imageUri"))
        if image is not None:
            pool["image"] = image
            self.context.came_from(f"{role}.image", (*path, "imageUri"))
        command = self.context.text_list(
            (*path, "containerCommand"), config.get("containerCommand")
        )
        if command is not None:
            if image is None and master_image is None:
                self.context.refuse(
                    (*path, "containerCommand"),
                    command,
                    "applies to custom containers (an imageUri) only",
                )
            else:
                # A native pool takes its command only with its own image: name it explicitly.
                pool["image"] = image or master_image
                pool["command"] = command
                if image is None:
                    self.context.came_from(f"{role}.image", ("masterConfig", "imageUri"))
                self.context.came_from(
                    f"{role}.command", (*path, "containerCommand"), keep_suffix=True
                )
        args = self.context.text_list((*path, "containerArgs"), config.get("containerArgs"))
        if args is not None:
            if image is None and master_image is None:
                self.context.refuse(
                    (*path, "containerArgs"),
                    args,
                    "applies to custom containers (an imageUri) only",
                )
            else:
                pool["args"] = args
                self.context.came_from(f"{role}.args", (*path, "containerArgs"), keep_suffix=True)
        return pool
