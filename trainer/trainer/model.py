"""Logistic regression trained by mini-batch gradient descent, in pure Python.

The data is generated: features drawn from a standard normal distribution, labels drawn
from a logistic model with hidden true weights, so the best reachable accuracy is below 1
and a trained model measurably beats chance. Everything is seeded: the same seed gives
the same data, the same shuffles and the same weights, to the last bit.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

#: Share of the generated samples held out for evaluation.
EVAL_FRACTION = 0.2
#: Scale of the hidden logits: larger means less label noise.
SIGNAL_STRENGTH = 4.0


@dataclass(frozen=True)
class Dataset:
    """Feature rows and their 0/1 labels."""

    features: list[list[float]]
    labels: list[int]


def make_datasets(num_samples: int, num_features: int, seed: int) -> tuple[Dataset, Dataset]:
    """Generate (train, eval) datasets from a hidden logistic model."""
    rng = random.Random(seed)
    true_weights = [rng.gauss(0.0, 1.0) for _ in range(num_features)]
    true_bias = rng.gauss(0.0, 0.5)
    features, labels = [], []
    for _ in range(num_samples):
        row = [rng.gauss(0.0, 1.0) for _ in range(num_features)]
        logit = SIGNAL_STRENGTH * (_dot(true_weights, row) + true_bias) / math.sqrt(num_features)
        features.append(row)
        labels.append(1 if rng.random() < _sigmoid(logit) else 0)
    split = int(num_samples * (1 - EVAL_FRACTION))
    return Dataset(features[:split], labels[:split]), Dataset(features[split:], labels[split:])


@dataclass
class Model:
    """A logistic regression model: P(y=1 | x) = sigmoid(w . x + b)."""

    weights: list[float]
    bias: float

    @classmethod
    def zeros(cls, num_features: int) -> Model:
        return cls([0.0] * num_features, 0.0)

    def probability(self, row: list[float]) -> float:
        return _sigmoid(_dot(self.weights, row) + self.bias)

    def train_epoch(
        self, data: Dataset, learning_rate: float, batch_size: int, rng: random.Random
    ) -> float:
        """One pass of mini-batch gradient descent over shuffled data; the mean log loss."""
        order = list(range(len(data.labels)))
        rng.shuffle(order)
        total_loss = 0.0
        for start in range(0, len(order), batch_size):
            batch = order[start : start + batch_size]
            grad_w = [0.0] * len(self.weights)
            grad_b = 0.0
            for i in batch:
                row, label = data.features[i], data.labels[i]
                p = self.probability(row)
                total_loss += _log_loss(p, label)
                error = p - label
                for j, x in enumerate(row):
                    grad_w[j] += error * x
                grad_b += error
            step = learning_rate / len(batch)
            self.weights = [w - step * g for w, g in zip(self.weights, grad_w, strict=True)]
            self.bias -= step * grad_b
        return total_loss / len(order)

    def evaluate(self, data: Dataset) -> dict[str, float]:
        """Accuracy and mean log loss on ``data``."""
        correct, loss = 0, 0.0
        for row, label in zip(data.features, data.labels, strict=True):
            p = self.probability(row)
            correct += int((p >= 0.5) == bool(label))
            loss += _log_loss(p, label)
        return {"accuracy": correct / len(data.labels), "loss": loss / len(data.labels)}


def _dot(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def _log_loss(p: float, label: int) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return -math.log(p if label else 1 - p)
