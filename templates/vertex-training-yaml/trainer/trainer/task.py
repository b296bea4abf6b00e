"""A training application as Vertex AI runs one: arguments in, a model in AIP_MODEL_DIR.

Fits y = w * x + b to generated points by gradient descent, in pure Python, and writes
the fitted parameters where Vertex AI (or the local backend) says the model goes.
"""

import argparse
import json
import os
import random
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--learning-rate", type=float, default=0.5)
    args = parser.parse_args()

    rng = random.Random(0)
    points = [(x, 3.0 * x + 1.0 + rng.gauss(0, 0.1)) for x in (rng.random() for _ in range(200))]
    w = b = 0.0
    for epoch in range(args.epochs):
        grad_w = sum((w * x + b - y) * x for x, y in points) * 2 / len(points)
        grad_b = sum(w * x + b - y for x, y in points) * 2 / len(points)
        w -= args.learning_rate * grad_w
        b -= args.learning_rate * grad_b
        loss = sum((w * x + b - y) ** 2 for x, y in points) / len(points)
        print(f"epoch {epoch + 1}: loss {loss:.4f}", flush=True)

    model_dir = os.environ.get("AIP_MODEL_DIR", "model")
    if model_dir.startswith("gs://"):
        print(f"model: w={w:.3f} b={b:.3f} (write it to {model_dir} with google-cloud-storage)")
        return
    Path(model_dir).mkdir(parents=True, exist_ok=True)
    (Path(model_dir) / "model.json").write_text(json.dumps({"w": w, "b": b}))
    print(f"model written to {model_dir}")


if __name__ == "__main__":
    main()
