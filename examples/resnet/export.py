#!/usr/bin/env python3
"""Export torchvision's ResNet-18 (unmodified) with its loss to ONNX and write a dataset.

The model is `torchvision.models.resnet18(num_classes=10)` with random
weights (no download), wrapped so that forward(x, y) returns
F.cross_entropy(resnet(x), y). It is exported in TRAINING mode (batch
statistics; the running statistics are state pdc updates every forward)
without constant folding, at a static batch (the microbatch), by torch
1.13's TorchScript exporter. The ONNX graph has Conv, BatchNormalization,
Relu, MaxPool (3x3, stride 2, pad 1), Add (residuals), GlobalAveragePool,
Flatten, Gemm and SoftmaxCrossEntropyLoss.

The dataset is learnable: each class has a smooth random RGB prototype; a
sample is its class's prototype at a random brightness plus noise.

Runs only under Debian's /usr/bin/python3 (torch 1.13, torchvision 0.14).
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
    import torchvision
except ModuleNotFoundError:
    if sys.executable != "/usr/bin/python3":
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    raise

CLASSES = 10


class WithLoss(nn.Module):
    """A classifier and its mean cross-entropy: forward(x, y) -> loss."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x, y):
        return F.cross_entropy(self.net(x), y)


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="resnet18.onnx", help="ONNX file to write")
    p.add_argument("--data-dir", help="write x.npy and y.npy here")
    p.add_argument("--arch", default="resnet18",
                   help="torchvision.models constructor (resnet18, resnet34, ...)")
    p.add_argument("--side", type=int, default=32, help="image height and width")
    p.add_argument("--batch", type=int, default=4,
                   help="static batch size of the exported graph (the microbatch)")
    p.add_argument("--samples", type=int, default=64, help="dataset size")
    p.add_argument("--opset", type=int, default=13, choices=range(13, 18))
    p.add_argument("--seed", type=int, default=0, help="model initialisation seed")
    p.add_argument("--data-seed", type=int, default=1234, help="dataset seed")
    p.add_argument("--quiet", action="store_true", help="do not print the op list")
    return p.parse_args()


def make_dataset(samples, side, seed):
    """Return (x, y): noisy, randomly scaled RGB class prototypes."""
    gen = torch.Generator().manual_seed(seed)
    coarse = torch.randn(CLASSES, 3, 4, 4, generator=gen)
    prototypes = F.interpolate(coarse, size=(side, side), mode="bilinear",
                               align_corners=False)
    y = torch.arange(samples) % CLASSES
    y = y[torch.randperm(samples, generator=gen)]
    scale = 0.5 + torch.rand(samples, 1, 1, 1, generator=gen)
    noise = 0.5 * torch.randn(samples, 3, side, side, generator=gen)
    x = prototypes[y] * scale + noise
    return x.numpy().astype(np.float32), y.numpy().astype(np.int64)


def describe(path):
    """Print the op types of the exported model."""
    import onnx
    model = onnx.load(path)
    onnx.checker.check_model(model)
    ops = collections.Counter(node.op_type for node in model.graph.node)
    print(f"{path}: opset {model.opset_import[0].version}, "
          f"{len(model.graph.node)} nodes, {len(model.graph.initializer)} initializers")
    print("ops: " + ", ".join(f"{op} {n}" for op, n in sorted(ops.items())))


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    net = getattr(torchvision.models, args.arch)(num_classes=CLASSES)
    model = WithLoss(net)
    x = torch.zeros(args.batch, 3, args.side, args.side)
    y = torch.zeros(args.batch, dtype=torch.int64)
    torch.onnx.export(model, (x, y), args.out, opset_version=args.opset,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      input_names=["x", "y"], output_names=["loss"])
    if not args.quiet:
        describe(args.out)
    if args.data_dir:
        os.makedirs(args.data_dir, exist_ok=True)
        x, y = make_dataset(args.samples, args.side, args.data_seed)
        np.save(os.path.join(args.data_dir, "x.npy"), x)
        np.save(os.path.join(args.data_dir, "y.npy"), y)


if __name__ == "__main__":
    main()
