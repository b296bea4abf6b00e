"""Train the example model: ``python -m trainer.task [--epochs N] [--learning-rate LR] ...``.

Where things go, as on Vertex AI:

- the model (``model.json``: weights, bias, metrics, hyperparameters) to AIP_MODEL_DIR,
  else ``<--job-dir>/model``;
- one checkpoint per epoch (``ckpt-<epoch>.json``) to AIP_CHECKPOINT_DIR, else
  ``<--job-dir>/checkpoints``. A restarted run resumes after the latest checkpoint, and
  ends with the same weights as a run that was never interrupted;
- ``gs://bucket/path`` directories are written through Vertex's Cloud Storage FUSE mount,
  ``/gcs/bucket/path``.

Only the primary replica (CLUSTER_SPEC task ``workerpool0``, TF_CONFIG ``chief``, or torch
RANK 0; a process with none of these is primary) writes checkpoints and the model and
reports the final accuracy to hyperparameter tuning (``cloudml-hypertune``, when
installed). Other replicas train and log only.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from trainer.model import Model, make_datasets

try:
    import hypertune
except ImportError:  # optional: only hyperparameter tuning jobs need it
    hypertune = None

#: The metric reported to hyperparameter tuning.
METRIC_TAG = "accuracy"
MODEL_FILE = "model.json"
_CHECKPOINT = re.compile(r"^ckpt-(\d+)\.json$")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m trainer.task", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--epochs", type=int, default=12, help="passes over the training data")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=42, help="seeds the data and the shuffles")
    parser.add_argument("--num-samples", type=int, default=12_000, help="generated samples")
    parser.add_argument("--num-features", type=int, default=24)
    parser.add_argument(
        "--job-dir",
        default="job-output",
        help="output root when AIP_MODEL_DIR / AIP_CHECKPOINT_DIR are not set",
    )
    args = parser.parse_args(argv)
    for name in ("epochs", "batch_size", "num_samples", "num_features"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def to_local_path(uri: str) -> Path:
    """A writable path for a directory URI: gs:// through Vertex's /gcs mount, file://."""
    if uri.startswith("gs://"):
        return Path("/gcs") / uri.removeprefix("gs://")
    return Path(uri.removeprefix("file://"))


def output_dirs(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[Path, Path]:
    """The (model, checkpoint) directories: Vertex's variables first, then --job-dir."""
    job_dir = to_local_path(args.job_dir)
    model_dir = environ.get("AIP_MODEL_DIR") or str(job_dir / "model")
    checkpoint_dir = environ.get("AIP_CHECKPOINT_DIR") or str(job_dir / "checkpoints")
    return to_local_path(model_dir), to_local_path(checkpoint_dir)


def is_primary(environ: Mapping[str, str]) -> bool:
    """Whether this process is the job's primary replica."""
    if "CLUSTER_SPEC" in environ:
        return bool(json.loads(environ["CLUSTER_SPEC"])["task"]["type"] == "workerpool0")
    if "TF_CONFIG" in environ:
        return json.loads(environ["TF_CONFIG"])["task"]["type"] in ("chief", "master")
    return environ.get("RANK", "0") == "0"


def latest_checkpoint(checkpoint_dir: Path) -> dict[str, Any] | None:
    """The checkpoint of the highest epoch in ``checkpoint_dir``, or None."""
    if not checkpoint_dir.is_dir():
        return None
    epochs = [int(m.group(1)) for p in checkpoint_dir.iterdir() if (m := _CHECKPOINT.match(p.name))]
    for epoch in sorted(epochs, reverse=True):
        try:
            return dict(json.loads((checkpoint_dir / f"ckpt-{epoch:04d}.json").read_text()))
        except (OSError, ValueError):
            continue  # unreadable: fall back to the one before
    return None


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically, so a run killed mid-write leaves the previous file intact."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


def train(args: argparse.Namespace, environ: Mapping[str, str]) -> dict[str, float]:
    """Train (resuming from the latest checkpoint), write the model; return eval metrics."""
    primary = is_primary(environ)
    model_dir, checkpoint_dir = output_dirs(args, environ)
    train_data, eval_data = make_datasets(args.num_samples, args.num_features, args.seed)
    model = Model.zeros(args.num_features)
    first_epoch = 1
    checkpoint = latest_checkpoint(checkpoint_dir)
    if checkpoint is not None and len(checkpoint["weights"]) == args.num_features:
        model = Model(checkpoint["weights"], checkpoint["bias"])
        first_epoch = checkpoint["epoch"] + 1
        print(f"resuming from checkpoint of epoch {checkpoint['epoch']} in {checkpoint_dir}")
    role = "primary" if primary else "non-primary replica (writes nothing)"
    print(
        f"training on {len(train_data.labels)} samples, epochs {first_epoch}..{args.epochs}, {role}"
    )

    metrics = model.evaluate(eval_data)
    for epoch in range(first_epoch, args.epochs + 1):
        started = time.monotonic()
        rng = random.Random(args.seed * 100_003 + epoch)
        train_loss = model.train_epoch(train_data, args.learning_rate, args.batch_size, rng)
        metrics = model.evaluate(eval_data)
        print(
            f"epoch {epoch}/{args.epochs} train_loss={train_loss:.4f} "
            f"eval_loss={metrics['loss']:.4f} accuracy={metrics['accuracy']:.4f} "
            f"({time.monotonic() - started:.2f}s)",
            flush=True,
        )
        if primary:
            write_json(
                checkpoint_dir / f"ckpt-{epoch:04d}.json",
                {"epoch": epoch, "weights": model.weights, "bias": model.bias, "metrics": metrics},
            )

    if primary:
        write_json(
            model_dir / MODEL_FILE,
            {
                "format": "logistic-regression/v1",
                "weights": model.weights,
                "bias": model.bias,
                "metrics": metrics,
                "epochs": args.epochs,
                "hyperparameters": {
                    "learning_rate": args.learning_rate,
                    "batch_size": args.batch_size,
                    "seed": args.seed,
                    "num_samples": args.num_samples,
                    "num_features": args.num_features,
                },
            },
        )
        print(f"wrote {model_dir / MODEL_FILE}")
        if hypertune is not None:
            hypertune.HyperTune().report_hyperparameter_tuning_metric(
                hyperparameter_metric_tag=METRIC_TAG,
                metric_value=metrics["accuracy"],
                global_step=args.epochs,
            )
    print(f"final accuracy={metrics['accuracy']:.4f} loss={metrics['loss']:.4f}")
    return metrics


def main(argv: Sequence[str] | None = None) -> int:
    train(parse_args(argv), os.environ)
    return 0


if __name__ == "__main__":
    sys.exit(main())
