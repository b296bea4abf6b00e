"""``framework:`` and ``runtime_version:`` -> the prebuilt training image (``catalog.images``)
for the hardware of the pools that run the program: an issue for an image past its end of
availability, warnings for one past (or near) its end of support, and a warning on every
job that uses a catalogue compiled more than six months before ``today``. Every image the
job names itself (``image``, each pool's ``image``, ``python_package.executor_image``)
is first parsed as an image reference (``vertex_training.api.image_refs``): one that is not
is refused with the fix.
"""

from __future__ import annotations

import datetime
import typing
from collections.abc import Sequence
from typing import Any

from vertex_training.api import image_refs
from vertex_training.catalog import image_uris, images, machines, runtimes
from vertex_training.errors import Issue, RetiredImage
from vertex_training.stackconfig._config import FrameworkConfig, JobConfig, _PoolConfig
from vertex_training.stackconfig._constants import LOCAL_DEFAULT_REGION
from vertex_training.stackconfig._issues import full_key, one_of
from vertex_training.stackconfig._job import StackSettings

#: What stands in for an image that ``vertex_training.catalog.images`` refused (the job fails
#: anyway).
_UNRESOLVED_IMAGE = "unresolved"
_POOL_ROLES: tuple[str, ...] = ("workers", "parameter_servers", "evaluators")


def _pool_hardware(pool: _PoolConfig, parent: _PoolConfig | None) -> str:
    """CPU, GPU or TPU: what a pool runs on, inheriting from ``parent`` as ``_JobResolver``."""
    machine_name = pool.machine or (parent.machine if parent else None) or machines.DEFAULT_MACHINE
    machine = machines.MACHINE_TYPES.get(machine_name)
    if machine is not None and machine.tpu:
        return images.TPU
    if parent is None or "accelerator" in pool.model_fields_set:
        accelerator = pool.accelerator
    elif pool.machine is not None and machine is not None and machine.built_in is not None:
        accelerator = None  # its own accelerator-optimized machine: the built-in GPUs
    else:
        accelerator = parent.accelerator
    if accelerator is not None:
        return images.GPU if accelerator.type in machines.GPU_ACCELERATORS else images.CPU
    if machine is not None and machine.built_in is not None:
        return images.GPU if machine.built_in[0] in machines.GPU_ACCELERATORS else images.CPU
    return images.CPU


def _program_hardware(pools: Sequence[tuple[_PoolConfig, _PoolConfig | None]]) -> str:
    """The image kind for pools sharing one program: TPU, else GPU if any pool has one."""
    kinds = [_pool_hardware(pool, parent) for pool, parent in pools]
    for kind in (images.TPU, images.GPU):
        if kind in kinds:
            return kind
    return images.CPU


def _prebuilt_images(
    base: str, config: JobConfig, stack: StackSettings, today: datetime.date | None
) -> tuple[JobConfig, list[Issue], list[Issue]]:
    """Fill image / executor_image from ``framework`` or ``runtime_version``.

    Returns the config with the images filled in, the issues and the warnings (each naming
    its key). CPU, GPU or TPU comes from every pool that runs the program, the registry
    host from the job's region.
    """
    resolver = _PrebuiltImages(base, config, stack, today or datetime.date.today())
    return resolver.resolve()


class _PrebuiltImages:
    """Picks the prebuilt images a job names by framework or legacy runtime version."""

    def __init__(
        self, base: str, config: JobConfig, stack: StackSettings, today: datetime.date
    ) -> None:
        self.base = base
        self.config = config
        self.today = today
        self.region = config.region or stack.region or LOCAL_DEFAULT_REGION
        self.issues: list[Issue] = []
        self.warnings: list[Issue] = []
        #: The first key (and its value) that picked an image from the catalogue.
        self.catalogue_key: tuple[str, object] | None = None
        host = images.registry_host(self.region)
        self.unresolved = f"{host}/{image_uris.IMAGE_PATH}/{_UNRESOLVED_IMAGE}:latest"

    def resolve(self) -> tuple[JobConfig, list[Issue], list[Issue]]:
        config = self.config
        if config.python_version is not None and config.runtime_version is None:
            self.issues.append(
                Issue(
                    full_key(self.base, ("python_version",)),
                    config.python_version,
                    "python_version goes with runtime_version; with framework write "
                    "framework.python",
                )
            )
        self._named_images()
        self._job_program()
        for role in _POOL_ROLES:
            self._pool_program(role)
        self._catalogue_age()
        return self.config, self.issues, self.warnings

    def _named_images(self) -> None:
        """The images the job names by URI: each must parse as an image reference
        (``vertex_training.api.image_refs``), and a catalogued prebuilt image is held to the same
        dates as one picked by ``framework`` (refused past its end of availability)."""
        config = self.config
        holders: list[tuple[tuple[str, ...], _PoolConfig, _PoolConfig | None]] = [
            ((), config, None),
            *(
                ((role,), pool, config)
                for role in _POOL_ROLES
                if (pool := getattr(config, role)) is not None
            ),
        ]
        for path, holder, parent in holders:
            package = holder.python_package
            named = (
                (("image",), holder.image),
                (("python_package", "executor_image"), package.executor_image if package else None),
            )
            for field, uri in named:
                if uri is None:
                    continue
                key = full_key(self.base, (*path, *field))
                reference = image_refs.parse(uri)
                if isinstance(reference, image_refs.NotAReference):
                    self.issues.append(image_refs.image_issue(key, uri, reference))
                    continue
                image = images.catalogued_image(uri)
                if image is None:
                    continue
                if self.catalogue_key is None:
                    self.catalogue_key = (key, uri)
                kind = _pool_hardware(holder, parent)
                verdict = images.check_named_image(
                    image, kind, region=self.region, today=self.today
                )
                if isinstance(verdict, images.ImageRefusal):
                    self.issues.append(_refusal(key, uri, verdict))
                else:
                    self.warnings.extend(Issue(key, uri, text) for text in verdict)

    def _catalogue_age(self) -> None:
        """One warning on the job's first catalogue key when the catalogue is old."""
        if self.catalogue_key is None:
            return
        text = images.catalogue_age_warning(self.today)
        if text is not None:
            key, value = self.catalogue_key
            self.warnings.append(Issue(key, value, text))

    def _job_program(self) -> None:
        """The job's own program: ``framework``, ``runtime_version`` or the package's."""
        config = self.config
        package = config.python_package
        chosen = [
            key
            for key, value in (
                ("framework", config.framework),
                ("runtime_version", config.runtime_version),
                ("python_package.framework", package.framework if package else None),
            )
            if value is not None
        ]
        if not chosen:
            return
        if len(chosen) > 1:
            message = f"{one_of(chosen, 'and')} each pick the image: keep one"
            self.issues.append(Issue(full_key(self.base, (chosen[1],)), None, message))
            return
        existing = (package.executor_image if package else None) or config.image
        if existing is not None:
            self.issues.append(
                Issue(
                    full_key(self.base, (chosen[0],)),
                    existing,
                    f"{chosen[0]} picks the prebuilt image, and the job names one already "
                    "(image or python_package.executor_image): keep one",
                )
            )
            return
        inheriting = [
            (pool, config)
            for role in _POOL_ROLES
            if (pool := getattr(config, role)) is not None
            and pool.image is None
            and pool.python_package is None
        ]
        kind = _program_hardware([(config, None), *inheriting])
        if package is not None and package.framework is not None:
            uri = self._framework_image(("python_package",), package.framework, kind)
        elif config.framework is not None:
            uri = self._framework_image((), config.framework, kind)
        else:
            uri = self._runtime_image(kind)
        if package is not None:
            new_package = package.model_copy(update={"executor_image": uri})
            self.config = config.model_copy(update={"python_package": new_package})
        else:
            self.config = config.model_copy(update={"image": uri})

    def _pool_program(self, role: str) -> None:
        """A pool's own ``python_package.framework``, for its own accelerators."""
        pool = getattr(self.config, role)
        package = pool.python_package if pool is not None else None
        if pool is None or package is None or package.framework is None:
            return
        if package.executor_image is not None:
            self.issues.append(
                Issue(
                    full_key(self.base, (role, "python_package", "framework")),
                    package.executor_image,
                    "framework picks the executor image, and executor_image names one: keep one",
                )
            )
            return
        kind = _pool_hardware(pool, self.config)
        uri = self._framework_image((role, "python_package"), package.framework, kind)
        new_pool = pool.model_copy(
            update={"python_package": package.model_copy(update={"executor_image": uri})}
        )
        self.config = self.config.model_copy(update={role: new_pool})

    def _framework_image(self, path: tuple[str, ...], framework: FrameworkConfig, kind: str) -> str:
        key = full_key(self.base, (*path, "framework", "version"))
        if self.catalogue_key is None:
            self.catalogue_key = (key, framework.version)
        choice = images.pick_image(
            framework.name,
            framework.version,
            framework.python,
            kind=kind,
            region=self.region,
            today=self.today,
        )
        if isinstance(choice, images.ImageRefusal):
            refused = full_key(self.base, (*path, "framework", choice.field))
            self.issues.append(_refusal(refused, getattr(framework, choice.field), choice))
            return self.unresolved
        self.warnings.extend(Issue(key, framework.version, text) for text in choice.warnings)
        return choice.uri

    def _runtime_image(self, kind: str) -> str:
        config = self.config
        runtime_version = typing.cast(str, config.runtime_version)
        key = full_key(self.base, ("runtime_version",))
        if self.catalogue_key is None:
            self.catalogue_key = (key, runtime_version)
        choice = runtimes.pick_runtime_image(
            runtime_version, config.python_version, kind=kind, region=self.region, today=self.today
        )
        if isinstance(choice, images.ImageRefusal):
            refused = full_key(self.base, (choice.field,))
            self.issues.append(_refusal(refused, getattr(config, choice.field), choice))
            return self.unresolved
        self.warnings.extend(Issue(key, runtime_version, text) for text in choice.warnings)
        return choice.uri


def _refusal(key: str, value: Any, refusal: images.ImageRefusal) -> Issue:
    """The issue of an image refusal: a ``RetiredImage`` when Vertex AI no longer runs it."""
    kind = RetiredImage if refusal.retired else Issue
    return kind(key, value, refusal.message)
