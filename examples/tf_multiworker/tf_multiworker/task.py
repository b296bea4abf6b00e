"""Keras training across a primary and workers with MultiWorkerMirroredStrategy.

As in Vertex AI's multi-worker codelab: the strategy reads the cluster from TF_CONFIG
(Vertex AI names the primary ``chief``), every replica trains in step on its share of
each batch, and every replica saves the model (a SavedModel), because saving runs
collective operations too: the chief to AIP_MODEL_DIR, each worker to a temporary
directory that it removes afterwards.

The data are generated (a linear rule to learn), so the job needs no input files. Each
replica prints one ``RESULT {...}`` line with what it saw; ``result.json`` beside the
model holds the chief's.

    python -m tf_multiworker.task --epochs 3 --steps-per-epoch 20
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow as tf
import tf_keras as keras

FEATURES = 8
EXAMPLES = 4096
BATCH_PER_REPLICA = 32


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--steps-per-epoch", type=int, default=20)
    parser.add_argument("--learning-rate", type=float, default=0.05)
    return parser.parse_args(argv)


def dataset(global_batch: int) -> tf.data.Dataset:
    """Examples of a fixed linear rule, the same on every replica: the strategy splits
    each global batch among the replicas."""
    rng = np.random.default_rng(0)
    features = rng.normal(size=(EXAMPLES, FEATURES)).astype("float32")
    weights = rng.normal(size=(FEATURES, 1)).astype("float32")
    labels = (features @ weights > 0).astype("float32")
    data = tf.data.Dataset.from_tensor_slices((features, labels))
    return data.shuffle(EXAMPLES, seed=0).repeat().batch(global_batch)


def build_model(learning_rate: float) -> keras.Model:
    model = keras.Sequential(
        [
            keras.Input(shape=(FEATURES,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=learning_rate),
        loss="binary_crossentropy",
        metrics=["accuracy"],
    )
    return model


def is_chief(task_type: str | None, task_id: int, has_chief: bool) -> bool:
    """The chief (Vertex AI's primary), or worker 0 in a cluster without one."""
    if task_type is None or task_type == "chief":
        return True
    return not has_chief and task_type == "worker" and task_id == 0


def local_path(uri: str) -> str:
    """A writable path for a directory URI: on Vertex AI, AIP_MODEL_DIR is a gs:// URI,
    written through the Cloud Storage FUSE mount at /gcs/; locally it is a plain path."""
    if uri.startswith("gs://"):
        return "/gcs/" + uri.removeprefix("gs://")
    return uri.removeprefix("file://")


def save_path(model_dir: str, chief: bool, task_type: str, task_id: int) -> str:
    """Where this replica saves: the model directory for the chief, a temporary one
    for a worker (its copy is only needed for the collective operations of saving)."""
    if chief:
        return model_dir
    return os.path.join(tempfile.mkdtemp(), f"workertemp_{task_type}_{task_id}")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    resolver = strategy.cluster_resolver
    task_type, task_id = resolver.task_type, resolver.task_id or 0
    chief = is_chief(task_type, task_id, "chief" in resolver.cluster_spec().jobs)

    global_batch = BATCH_PER_REPLICA * strategy.num_replicas_in_sync
    with strategy.scope():
        model = build_model(args.learning_rate)
    history = model.fit(
        dataset(global_batch),
        epochs=args.epochs,
        steps_per_epoch=args.steps_per_epoch,
        verbose=2,
    )

    model_dir = local_path(os.environ.get("AIP_MODEL_DIR") or tempfile.mkdtemp())
    target = save_path(model_dir, chief, task_type or "chief", task_id)
    os.makedirs(target, exist_ok=True)
    model.save(target)
    result = {
        "task_type": task_type,
        "task_id": task_id,
        "replicas_in_sync": strategy.num_replicas_in_sync,
        "loss": history.history["loss"][-1],
        "accuracy": history.history["accuracy"][-1],
        # Synchronous training leaves every replica with the same weights.
        "weights_sum": float(sum(np.sum(w) for w in model.get_weights())),
        "saved_to": target,
    }
    if chief:
        with open(os.path.join(target, "result.json"), "w", encoding="utf-8") as out:
            json.dump(result, out)
    else:
        shutil.rmtree(os.path.dirname(target), ignore_errors=True)
    print("RESULT " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
