"""vertex-training: Google Cloud training jobs as Pulumi resources (docs/library.md).

In a Pulumi Python program::

    import vertex_training as vt

    platform = vt.TrainingPlatform("ml", project="my-project", region="us-central1")
    job = vt.TrainingJob("train", {"image": "...", "machine": "n1-standard-8"},
                         platform=platform)
    vt.wait_for_jobs("wait", [job])

or, with the jobs declared under ``vertex-training:*`` stack config keys,
``vt.deploy_stack_config()``. The names below are imported on first use: importing the
package loads neither Pulumi nor a Google client library. The command line is
``vertex-training`` (``python -m vertex_training``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from vertex_training._exports import lazy_exports

if TYPE_CHECKING:  # what type checkers see; at run time each name loads on first use
    from vertex_training._version import __version__
    from vertex_training.errors import Issue, SpecError, VertexTrainingError
    from vertex_training.program.platform import TrainingPlatform
    from vertex_training.program.stack import StackResources, deploy_stack_config
    from vertex_training.program.waiting import wait_for_jobs
    from vertex_training.resources.arguments import (
        AcceleratorArgs,
        BucketArgs,
        DatasetArgs,
        DiskArgs,
        DnsPeeringArgs,
        FrameworkArgs,
        ImageRowArgs,
        LustreMountArgs,
        ModelArgs,
        NfsMountArgs,
        PlatformArgs,
        PoolArgs,
        PscInterfaceArgs,
        PythonPackageArgs,
        ReductionServerArgs,
        RepositoryArgs,
        ReservationAffinityArgs,
        RetryArgs,
        SchedulingArgs,
        ServiceAccountArgs,
        ServingArgs,
        ServingFrameworkArgs,
        TensorboardArgs,
        TrainingJobArgs,
        WaitArgs,
    )
    from vertex_training.resources.training_job import TrainingJob
    from vertex_training.resources.tuning_job import HyperparameterTuningJob
    from vertex_training.resources.waiter import JobWaiter

#: Public name -> the module that defines it.
_EXPORTS = {
    "AcceleratorArgs": "vertex_training.resources.arguments",
    "BucketArgs": "vertex_training.resources.arguments",
    "DatasetArgs": "vertex_training.resources.arguments",
    "DiskArgs": "vertex_training.resources.arguments",
    "DnsPeeringArgs": "vertex_training.resources.arguments",
    "FrameworkArgs": "vertex_training.resources.arguments",
    "HyperparameterTuningJob": "vertex_training.resources.tuning_job",
    "ImageRowArgs": "vertex_training.resources.arguments",
    "Issue": "vertex_training.errors",
    "JobWaiter": "vertex_training.resources.waiter",
    "LustreMountArgs": "vertex_training.resources.arguments",
    "ModelArgs": "vertex_training.resources.arguments",
    "NfsMountArgs": "vertex_training.resources.arguments",
    "PlatformArgs": "vertex_training.resources.arguments",
    "PoolArgs": "vertex_training.resources.arguments",
    "PscInterfaceArgs": "vertex_training.resources.arguments",
    "PythonPackageArgs": "vertex_training.resources.arguments",
    "ReductionServerArgs": "vertex_training.resources.arguments",
    "RepositoryArgs": "vertex_training.resources.arguments",
    "ReservationAffinityArgs": "vertex_training.resources.arguments",
    "RetryArgs": "vertex_training.resources.arguments",
    "SchedulingArgs": "vertex_training.resources.arguments",
    "ServiceAccountArgs": "vertex_training.resources.arguments",
    "ServingArgs": "vertex_training.resources.arguments",
    "ServingFrameworkArgs": "vertex_training.resources.arguments",
    "SpecError": "vertex_training.errors",
    "StackResources": "vertex_training.program.stack",
    "TensorboardArgs": "vertex_training.resources.arguments",
    "TrainingJob": "vertex_training.resources.training_job",
    "TrainingJobArgs": "vertex_training.resources.arguments",
    "TrainingPlatform": "vertex_training.program.platform",
    "VertexTrainingError": "vertex_training.errors",
    "WaitArgs": "vertex_training.resources.arguments",
    "__version__": "vertex_training._version",
    "deploy_stack_config": "vertex_training.program.stack",
    "wait_for_jobs": "vertex_training.program.waiting",
}

__all__ = [
    "AcceleratorArgs",
    "BucketArgs",
    "DatasetArgs",
    "DiskArgs",
    "DnsPeeringArgs",
    "FrameworkArgs",
    "HyperparameterTuningJob",
    "ImageRowArgs",
    "Issue",
    "JobWaiter",
    "LustreMountArgs",
    "ModelArgs",
    "NfsMountArgs",
    "PlatformArgs",
    "PoolArgs",
    "PscInterfaceArgs",
    "PythonPackageArgs",
    "ReductionServerArgs",
    "RepositoryArgs",
    "ReservationAffinityArgs",
    "RetryArgs",
    "SchedulingArgs",
    "ServiceAccountArgs",
    "ServingArgs",
    "ServingFrameworkArgs",
    "SpecError",
    "StackResources",
    "TensorboardArgs",
    "TrainingJob",
    "TrainingJobArgs",
    "TrainingPlatform",
    "VertexTrainingError",
    "WaitArgs",
    "__version__",
    "deploy_stack_config",
    "wait_for_jobs",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
