"""Whether a job's keys declare a hyperparameter tuning job: asked of every job (by the
programs that pick its resource, and by each provider's check), so it loads nothing of
the study's models."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertex_training.stackconfig._constants import STUDY_KEY

#: The legacy AI Platform Training block, and its key that makes the job a tuning job
#: once translated (docs/config-shape.md, "Legacy AI Platform Training configs").
LEGACY_TRAINING_INPUT_KEY = "training_input"
LEGACY_HYPERPARAMETERS_KEY = "hyperparameters"


def is_tuning_job(raw: Any) -> bool:
    """Whether a job's stack config declares a hyperparameter tuning job.

    A ``study:`` block does; so does a legacy ``training_input`` with ``hyperparameters``,
    which is translated into a ``study:`` block (docs/config-shape.md).
    """
    if not isinstance(raw, Mapping):
        return False
    legacy = raw.get(LEGACY_TRAINING_INPUT_KEY)
    return STUDY_KEY in raw or (
        isinstance(legacy, Mapping) and LEGACY_HYPERPARAMETERS_KEY in legacy
    )
