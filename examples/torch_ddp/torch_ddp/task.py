"""PyTorch DistributedDataParallel training across a primary and workers.

Vertex AI sets MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK for the primary pool and
the worker pool (RANK 0 on the primary), which is what ``init_process_group``'s
``env://`` method reads. Each replica trains on its own shard of generated data (a
linear rule to learn); DDP averages the gradients, so every replica ends with the same
weights. The primary saves the model to AIP_MODEL_DIR. Each replica prints one
``RESULT {...}`` line with what it saw; ``result.json`` beside the model holds the
primary's.

    python -m torch_ddp.task --steps 50            # gloo, on the CPU
    python -m torch_ddp.task --backend nccl        # one GPU per replica
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

FEATURES = 8
EXAMPLES_PER_RANK = 1024
BATCH = 64


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--backend", choices=("gloo", "nccl"), default="gloo")
    return parser.parse_args(argv)


def shard(rank: int) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's examples: its own draw of features, one rule for all ranks."""
    rule = torch.Generator().manual_seed(0)
    weights = torch.randn(FEATURES, 1, generator=rule)
    draw = torch.Generator().manual_seed(1 + rank)
    features = torch.randn(EXAMPLES_PER_RANK, FEATURES, generator=draw)
    labels = (features @ weights > 0).float()
    return features, labels


def local_path(uri: str) -> str:
    """A writable path for a directory URI: on Vertex AI, AIP_MODEL_DIR is a gs:// URI,
    written through the Cloud Storage FUSE mount at /gcs/; locally it is a plain path."""
    if uri.startswith("gs://"):
        return "/gcs/" + uri.removeprefix("gs://")
    return uri.removeprefix("file://")


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    dist.init_process_group(args.backend)  # env://: MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK
    rank, world = dist.get_rank(), dist.get_world_size()
    device = torch.device("cuda", 0) if args.backend == "nccl" else torch.device("cpu")

    torch.manual_seed(rank)  # different initial weights: DDP broadcasts rank 0's
    model = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1)
    ).to(device)
    ddp = DistributedDataParallel(model)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=args.learning_rate)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    features, labels = (t.to(device) for t in shard(rank))

    for step in range(args.steps):
        start = (step * BATCH) % EXAMPLES_PER_RANK
        optimizer.zero_grad()
        loss = loss_fn(ddp(features[start : start + BATCH]), labels[start : start + BATCH])
        loss.backward()
        optimizer.step()

    with torch.no_grad():
        accuracy = ((model(features) > 0).float() == labels).float().mean().item()
        weights_sum = sum(p.sum() for p in model.parameters())
        # Every rank's sum of weights, gathered: DDP keeps them equal.
        sums = [torch.zeros(1, device=device) for _ in range(world)]
        dist.all_gather(sums, weights_sum.reshape(1))

    result = {
        "rank": rank,
        "world_size": world,
        "device": str(device),
        "loss": loss.item(),
        "accuracy": accuracy,
        "weights_sums": [s.item() for s in sums],
    }
    if rank == 0:
        model_dir = local_path(os.environ.get("AIP_MODEL_DIR") or tempfile.mkdtemp())
        os.makedirs(model_dir, exist_ok=True)
        torch.save(model.state_dict(), os.path.join(model_dir, "model.pt"))
        with open(os.path.join(model_dir, "result.json"), "w", encoding="utf-8") as out:
            json.dump(result, out)
    print("RESULT " + json.dumps(result), flush=True)
    # Tear the group down only once every rank is done with it: a rank that leaves while
    # another still saves can make the other's teardown abort the process (C++
    # "terminate called without an active exception"), which restarts the replica.
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
