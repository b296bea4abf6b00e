"""The ``retry:`` key of a job: its regions and strategies, attempt by attempt.

A part of the job resolver (``_resolve._JobResolver`` inherits it), kept apart so that
each module stays readable in one sitting: every listed region must run Vertex AI
training and offer the job's accelerators (the catalogue, with the same rule as the
job's own region), and keys that name a resource of the job's own region keep its
attempts there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from vertex_training.api.bodies import STANDARD_STRATEGY
from vertex_training.catalog import machines
from vertex_training.stackconfig._config import JobConfig
from vertex_training.stackconfig._issues import did_you_mean, one_of
from vertex_training.stackconfig._job import RetryAttempt, RetryPolicy, Scheduling, WorkerPool


class RetryRules:
    """The retry rules of the job resolver; the resolver provides what is declared here."""

    config: JobConfig
    vertex: bool
    region: str

    def fail(self, path: Sequence[str | int], value: Any, message: str) -> None:
        """Record an issue (the resolver's)."""
        raise NotImplementedError

    def _check_region_offers(
        self,
        path: Sequence[str | int],
        accelerator_type: str,
        where: Sequence[str],
        *,
        region: str | None = None,
    ) -> bool:
        """Whether the region offers the accelerator (the resolver's)."""
        raise NotImplementedError

    def _resolve_retry(
        self, pools: Sequence[WorkerPool | None], scheduling: Scheduling
    ) -> RetryPolicy | None:
        """``retry:``: each listed region runs Vertex AI training and offers every
        accelerator the job's pools use (the catalogue, as for the job's own region);
        attempt k takes the k-th region and strategy of the job's own followed by the
        lists, the last one again once a list runs out."""
        config = self.config.retry
        assert config is not None
        if self.vertex:
            for index, region in enumerate(config.regions):
                self._check_retry_region(index, region, pools)
            self._check_regional_keys(config.regions)
        regions = [self.region, *config.regions]
        strategies = [scheduling.strategy or STANDARD_STRATEGY, *config.strategies]
        return RetryPolicy(
            when=list(dict.fromkeys(config.when)),
            attempts=[
                RetryAttempt(
                    region=regions[min(k, len(regions) - 1)],
                    strategy=strategies[min(k, len(strategies) - 1)],
                )
                for k in range(config.attempts)
            ],
        )

    def _check_regional_keys(self, regions: Sequence[str]) -> None:
        """Keys that name a resource of the job's own region (a KMS key, a TensorBoard, a
        persistent resource, an experiment) cannot follow an attempt to another region."""
        elsewhere = sorted({r for r in regions if r != self.region})
        if not elsewhere:
            return
        config = self.config
        regional = {
            "kms_key": config.kms_key,
            "tensorboard": config.tensorboard if isinstance(config.tensorboard, str) else None,
            "persistent_resource_id": config.persistent_resource_id,
            "experiment": config.experiment,
        }
        for key, value in regional.items():
            if value:
                self.fail(
                    ("retry", "regions"),
                    elsewhere,
                    f"{key} names a resource in {self.region}, which an attempt in "
                    f"{one_of(elsewhere)} cannot use; retry in {self.region} only (leave "
                    f"regions out) or remove {key}",
                )

    def _check_retry_region(
        self, index: int, region: str, pools: Sequence[WorkerPool | None]
    ) -> None:
        """One of ``retry.regions``: a training region offering the job's accelerators."""
        path = ("retry", "regions", index)
        if region not in machines.TRAINING_REGIONS:
            hint = did_you_mean(region, machines.TRAINING_REGIONS)
            self.fail(
                path,
                region,
                f"Vertex AI custom training does not run in {region}.{hint} Write a training "
                "region such as us-central1 or europe-west4, or remove it from retry.regions",
            )
            return
        needed: dict[str, None] = {}
        for pool in pools:
            if pool is None:
                continue
            if pool.accelerator is not None:
                needed[pool.accelerator.type] = None
            machine = machines.MACHINE_TYPES.get(pool.machine)
            if machine is not None and machine.tpu:  # the machine is its TPU
                needed.update(dict.fromkeys(machine.accelerators))
        for accelerator_type in needed:
            self._check_region_offers(path, accelerator_type, (), region=region)
