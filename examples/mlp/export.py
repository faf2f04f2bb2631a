#!/usr/bin/env python3
"""Export the pdc MLP example (model + loss) to ONNX and write a synthetic dataset.

The model is a plain MLP classifier whose forward returns the cross-entropy loss,
exported in TRAINING mode without constant folding so every parameter keeps its
own initializer name. The dataset is labelled by a fixed random "teacher" MLP, so
the student can learn it and the loss visibly falls.

Runs only under Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
"""
import argparse
import collections
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MLPWithLoss(nn.Module):
    """MLP classifier whose forward(x, y) returns the mean cross-entropy loss."""

    def __init__(self, sizes):
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Linear(n_in, n_out) for n_in, n_out in zip(sizes[:-1], sizes[1:]))

    def logits(self, x):
        """Return the class scores for a batch of inputs."""
        for layer in self.layers[:-1]:
            x = F.relu(layer(x))
        return self.layers[-1](x)

    def forward(self, x, y):
        return F.cross_entropy(self.logits(x), y)


def parse_sizes(text):
    """Parse a comma-separated list of layer widths, e.g. '64,128,128,10'."""
    sizes = [int(s) for s in text.split(",")]
    if len(sizes) < 2 or min(sizes) < 1:
        raise argparse.ArgumentTypeError("need at least two positive sizes")
    return sizes


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="mlp.onnx", help="ONNX file to write")
    p.add_argument("--data-dir", help="write x.npy and y.npy here")
    p.add_argument("--sizes", type=parse_sizes, default=[64, 128, 128, 10],
                   help="layer widths, input first, classes last")
    p.add_argument("--batch", type=int, default=8,
                   help="static batch size of the exported graph (the microbatch)")
    p.add_argument("--samples", type=int, default=512, help="dataset size")
    p.add_argument("--opset", type=int, default=13, choices=range(13, 18))
    p.add_argument("--seed", type=int, default=0, help="model initialisation seed")
    p.add_argument("--data-seed", type=int, default=1234, help="dataset seed")
    p.add_argument("--quiet", action="store_true", help="do not print the op list")
    return p.parse_args()


def build_model(sizes, seed):
    """Return the student model, deterministically initialised from seed."""
    torch.manual_seed(seed)
    return MLPWithLoss(sizes)


def export(model, path, batch, in_features, opset):
    """Export model (forward + loss) to path with static shapes."""
    x = torch.zeros(batch, in_features)
    y = torch.zeros(batch, dtype=torch.int64)
    torch.onnx.export(model, (x, y), path, opset_version=opset,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      input_names=["x", "y"], output_names=["loss"])


def make_dataset(sizes, samples, seed):
    """Return (x, y): Gaussian inputs labelled by a fixed random teacher MLP.

    The teacher's scores are centred and scaled per class over the dataset before
    the argmax, so the classes come out roughly balanced.
    """
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(samples, sizes[0], generator=gen)
    teacher = MLPWithLoss([sizes[0], 2 * sizes[0], sizes[-1]])
    with torch.no_grad():
        for param in teacher.parameters():
            param.copy_(torch.randn(param.shape, generator=gen) / param.shape[-1] ** 0.5)
        scores = teacher.logits(x)
        scores = (scores - scores.mean(dim=0)) / scores.std(dim=0)
        y = scores.argmax(dim=1)
    return x.numpy().astype(np.float32), y.numpy().astype(np.int64)


def describe(path):
    """Print the op types and initializers of the exported model."""
    import onnx
    model = onnx.load(path)
    onnx.checker.check_model(model)
    ops = collections.Counter(node.op_type for node in model.graph.node)
    print(f"{path}: opset {model.opset_import[0].version}, "
          f"{len(model.graph.node)} nodes")
    print("ops: " + ", ".join(f"{op} {n}" for op, n in sorted(ops.items())))
    print("initializers: " + ", ".join(
        f"{t.name}{list(t.dims)}" for t in model.graph.initializer))


def main():
    args = parse_args()
    model = build_model(args.sizes, args.seed)
    export(model, args.out, args.batch, args.sizes[0], args.opset)
    if not args.quiet:
        describe(args.out)
    if args.data_dir:
        os.makedirs(args.data_dir, exist_ok=True)
        x, y = make_dataset(args.sizes, args.samples, args.data_seed)
        np.save(os.path.join(args.data_dir, "x.npy"), x)
        np.save(os.path.join(args.data_dir, "y.npy"), y)
        if not args.quiet:
            print(f"data: {args.data_dir} x{list(x.shape)} y{list(y.shape)} "
                  f"class counts {np.bincount(y, minlength=args.sizes[-1]).tolist()}")


if __name__ == "__main__":
    main()
