#!/usr/bin/env python3
"""Export the pdc CNN example (model + loss) to ONNX and write a synthetic dataset.

A small image classifier on 1x16x16 inputs: two blocks of Conv 3x3 (pad 1),
BatchNorm (batch statistics: the model is exported in TRAINING mode), ReLU
and 2x2 max pooling, then global average pooling, Flatten and a Linear layer
to 10 classes; forward(x, y) returns F.cross_entropy of the logits. With
--depthwise the second block's convolution is a depthwise 3x3 (groups = C)
followed by a pointwise 1x1. Exported without constant folding so every
parameter keeps its own initializer name. torch 1.13 emits Conv,
BatchNormalization (5 outputs at opset 13, 3 with training_mode=1 from
opset 15), Relu, MaxPool, GlobalAveragePool, Flatten, Gemm and
SoftmaxCrossEntropyLoss; the BatchNorm running statistics stay initializers
that pdc does not train but updates every forward as torch does (and
--save-onnx writes back).

The dataset is learnable: each class has a fixed random smooth 16x16
prototype; a sample is its class's prototype at a random brightness plus
Gaussian noise.

Runs only under Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
"""
import argparse
import collections
import os
import sys

try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

SIDE = 16
CLASSES = 10


class CNNWithLoss(nn.Module):
    """Two conv blocks + linear head; forward(x, y) returns the mean cross-entropy."""

    def __init__(self, channels, depthwise):
        super().__init__()
        c1, c2 = channels
        self.conv1 = nn.Conv2d(1, c1, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(c1)
        if depthwise:
            self.conv2 = nn.Sequential(
                nn.Conv2d(c1, c1, 3, padding=1, groups=c1, bias=False),
                nn.Conv2d(c1, c2, 1))
        else:
            self.conv2 = nn.Conv2d(c1, c2, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(c2)
        self.fc = nn.Linear(c2, CLASSES)

    def logits(self, x):
        """Return the class scores for a batch of [N, 1, 16, 16] images."""
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)

    def forward(self, x, y):
        return F.cross_entropy(self.logits(x), y)


def parse_channels(text):
    """Parse the two block widths, e.g. '8,16'."""
    channels = [int(s) for s in text.split(",")]
    if len(channels) != 2 or min(channels) < 1:
        raise argparse.ArgumentTypeError("need two positive widths")
    return channels


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="cnn.onnx", help="ONNX file to write")
    p.add_argument("--data-dir", help="write x.npy and y.npy here")
    p.add_argument("--channels", type=parse_channels, default=[8, 16],
                   help="widths of the two conv blocks")
    p.add_argument("--depthwise", action="store_true",
                   help="second block: depthwise 3x3 + pointwise 1x1")
    p.add_argument("--batch", type=int, default=8,
                   help="static batch size of the exported graph (the microbatch)")
    p.add_argument("--samples", type=int, default=512, help="dataset size")
    p.add_argument("--opset", type=int, default=13, choices=range(13, 18))
    p.add_argument("--seed", type=int, default=0, help="model initialisation seed")
    p.add_argument("--data-seed", type=int, default=1234, help="dataset seed")
    p.add_argument("--quiet", action="store_true", help="do not print the op list")
    return p.parse_args()


def export(model, path, batch, opset):
    """Export model (forward + loss) to path with static shapes."""
    x = torch.zeros(batch, 1, SIDE, SIDE)
    y = torch.zeros(batch, dtype=torch.int64)
    torch.onnx.export(model, (x, y), path, opset_version=opset,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      input_names=["x", "y"], output_names=["loss"])


def make_dataset(samples, seed):
    """Return (x, y): noisy, randomly scaled class prototypes, balanced labels."""
    gen = torch.Generator().manual_seed(seed)
    coarse = torch.randn(CLASSES, 1, 4, 4, generator=gen)
    prototypes = F.interpolate(coarse, size=(SIDE, SIDE), mode="bilinear",
                               align_corners=False)
    y = torch.arange(samples) % CLASSES
    y = y[torch.randperm(samples, generator=gen)]
    scale = 0.5 + torch.rand(samples, 1, 1, 1, generator=gen)
    noise = 0.5 * torch.randn(samples, 1, SIDE, SIDE, generator=gen)
    x = prototypes[y] * scale + noise
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
    torch.manual_seed(args.seed)
    model = CNNWithLoss(args.channels, args.depthwise)
    export(model, args.out, args.batch, args.opset)
    if not args.quiet:
        describe(args.out)
    if args.data_dir:
        os.makedirs(args.data_dir, exist_ok=True)
        x, y = make_dataset(args.samples, args.data_seed)
        np.save(os.path.join(args.data_dir, "x.npy"), x)
        np.save(os.path.join(args.data_dir, "y.npy"), y)
        if not args.quiet:
            print(f"data: {args.data_dir} x{list(x.shape)} y{list(y.shape)} "
                  f"class counts {np.bincount(y, minlength=CLASSES).tolist()}")


if __name__ == "__main__":
    main()
