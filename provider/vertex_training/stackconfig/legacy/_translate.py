"""The dialect's entries: ``translate_training_input`` (a bare block) and ``translate_job``
(a stack config job that may carry ``training_input:``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vertex_training.errors import Issue
from vertex_training.stackconfig.legacy._tables import (
    EXCLUSIVE_NATIVE_KEYS,
    JOB_ID_KEY,
    NATIVE_KEYS_FROM_LEGACY,
    TRAINING_INPUT_KEY,
)
from vertex_training.stackconfig.legacy._translation import Translation, _Origin, check_job_id
from vertex_training.stackconfig.legacy._translator import _Translator


def translate_training_input(
    training_input: Mapping[str, Any],
    *,
    legacy_base: str,
    native_base: str,
    job_id: Any = None,
    job_id_key: str = JOB_ID_KEY,
) -> Translation:
    """Translate a ``trainingInput`` block (and a legacy job ID) into native job keys.

    ``legacy_base`` prefixes the keys of issues about the block
    (``vertex-training:jobs.old.training_input``, or ``trainingInput`` for a config file);
    ``native_base`` is the key the native job will have, for ``Translation.rekey``.
    """
    translator = _Translator(training_input, legacy_base=legacy_base, native_base=native_base)
    native: dict[str, Any] = {}
    if job_id is not None:
        problem = check_job_id(job_id)
        if problem is not None:
            translator.issues.append(Issue(job_id_key, job_id, problem))
        else:
            native["display_name"] = job_id
            translator.origins.append(_Origin("display_name", job_id_key))
    native.update(translator.translate())
    return Translation(
        native=native,
        issues=tuple(translator.issues),
        warnings=tuple(translator.warnings),
        native_base=native_base,
        origins=tuple(translator.origins),
    )


def translate_job(base: str, raw: Mapping[str, Any]) -> Translation:
    """A stack config job with ``training_input`` as native keys (other jobs unchanged).

    ``base`` is the job's full key (``vertex-training:jobs.<name>``). Native keys that say
    what runs cannot sit beside ``training_input``; the others (labels, wait, env, ...)
    are kept.
    """
    if TRAINING_INPUT_KEY not in raw:
        if JOB_ID_KEY in raw:
            return Translation(
                native=dict(raw),
                issues=(
                    Issue(
                        f"{base}.{JOB_ID_KEY}",
                        raw[JOB_ID_KEY],
                        "job_id is the legacy job name of a training_input job; for a native "
                        "job write display_name instead",
                    ),
                ),
                native_base=base,
            )
        return Translation(native=dict(raw), native_base=base)
    training_input = raw[TRAINING_INPUT_KEY]
    legacy_base = f"{base}.{TRAINING_INPUT_KEY}"
    if not isinstance(training_input, Mapping):
        return Translation(
            native={},
            issues=(
                Issue(
                    legacy_base,
                    training_input,
                    "must be the trainingInput block of a gcloud config.yaml: a mapping "
                    "with keys such as scaleTier, packageUris, pythonModule",
                ),
            ),
            native_base=base,
        )
    translation = translate_training_input(
        training_input,
        legacy_base=legacy_base,
        native_base=base,
        job_id=raw.get(JOB_ID_KEY),
        job_id_key=f"{base}.{JOB_ID_KEY}",
    )
    issues = list(translation.issues)
    native = dict(translation.native)
    for name, value in raw.items():
        if name in (TRAINING_INPUT_KEY, JOB_ID_KEY):
            continue
        conflict = _conflict(str(name), training_input, raw)
        if conflict is not None:
            issues.append(Issue(f"{base}.{name}", value, conflict))
        else:
            native[name] = value
    return Translation(
        native=native,
        issues=tuple(issues),
        warnings=translation.warnings,
        native_base=base,
        origins=translation.origins,
    )


def _conflict(name: str, training_input: Mapping[str, Any], raw: Mapping[str, Any]) -> str | None:
    """Why native key ``name`` cannot sit beside ``training_input``, or None."""
    if name in EXCLUSIVE_NATIVE_KEYS:
        return (
            f"{name} cannot be combined with training_input, which says what runs: set it "
            "inside training_input, or convert the job (vertex-training convert) and drop "
            "training_input"
        )
    legacy = NATIVE_KEYS_FROM_LEGACY.get(name)
    if legacy is not None and legacy in training_input:
        return f"training_input sets {legacy} already: keep one of the two"
    if name == "display_name" and JOB_ID_KEY in raw:
        return "job_id names the job already (it is the display name): keep one of the two"
    return None
