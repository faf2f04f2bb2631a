#!/usr/bin/env python3
# ===- export_pipeline_models.py - Models that stress the stage split ---=== #
#
# Exports small torch models (forward + loss) whose structure crosses
# pipeline stages in unusual ways, and a dataset for them:
#   tied: an MLP whose first-layer weight W [H, D] is reused, transposed,
#         as the last layer's weight (logits = h W, D classes), like a tied
#         embedding and LM head: W is read on the first and the last stage.
#   skip: an MLP with a residual from the first hidden layer to the last
#         one, so at depth 3 a value goes from stage 0 straight to stage 2.
# Exported with torch.onnx.export in TRAINING mode without constant folding
# (every parameter keeps one initializer). Needs Debian's /usr/bin/python3
# (torch 1.13, onnx 1.12).
#
# ===---------------------------------------------------------------------=== #

import argparse
import os
import sys


def _reexec_with_debian_python():
    """lit's %python may be a python3 without Debian's torch; use
    /usr/bin/python3, which has it."""
    debian = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(debian) and \
            os.path.exists(debian):
        os.execv(debian, [debian] + sys.argv)


try:
    import numpy as np
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ModuleNotFoundError:
    _reexec_with_debian_python()
    raise


class TiedMLP(nn.Module):
    """x -> relu(x W^T + b0) -> relu(. A_i^T + b_i)... -> . W + c -> loss."""

    def __init__(self, d_in, hidden, layers):
        super().__init__()
        self.w = nn.Parameter(torch.randn(hidden, d_in) / d_in ** 0.5)
        self.b0 = nn.Parameter(torch.zeros(hidden))
        self.hidden = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.c = nn.Parameter(torch.zeros(d_in))

    def forward(self, x, y):
        h = F.relu(F.linear(x, self.w, self.b0))
        for layer in self.hidden:
            h = F.relu(layer(h))
        return F.cross_entropy(torch.matmul(h, self.w) + self.c, y)


class SkipMLP(nn.Module):
    """h0 = relu(fc0 x); h = relu(fc_i h)...; logits = out(h + h0) -> loss."""

    def __init__(self, d_in, hidden, layers, classes):
        super().__init__()
        self.fc0 = nn.Linear(d_in, hidden)
        self.hidden = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.out = nn.Linear(hidden, classes)

    def forward(self, x, y):
        h0 = F.relu(self.fc0(x))
        h = h0
        for layer in self.hidden:
            h = F.relu(layer(h))
        return F.cross_entropy(self.out(h + h0), y)


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("model", choices=["tied", "skip"])
    p.add_argument("--out", required=True, help="ONNX file to write")
    p.add_argument("--data-dir", required=True, help="write x.npy and y.npy here")
    p.add_argument("--batch", type=int, default=4, help="microbatch of the graph")
    p.add_argument("--inputs", type=int, default=12, help="input features D")
    p.add_argument("--hidden", type=int, default=16, help="hidden width H")
    p.add_argument("--layers", type=int, default=2, help="hidden H x H layers")
    p.add_argument("--classes", type=int, default=6, help="classes (skip model)")
    p.add_argument("--samples", type=int, default=128, help="dataset size")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def main():
    args = parse_args()
    torch.manual_seed(args.seed)
    if args.model == "tied":
        model, classes = TiedMLP(args.inputs, args.hidden, args.layers), args.inputs
    else:
        model = SkipMLP(args.inputs, args.hidden, args.layers, args.classes)
        classes = args.classes
    x = torch.zeros(args.batch, args.inputs)
    y = torch.zeros(args.batch, dtype=torch.int64)
    torch.onnx.export(model, (x, y), args.out, opset_version=13,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      input_names=["x", "y"], output_names=["loss"])
    gen = torch.Generator().manual_seed(args.seed + 1)
    data = torch.randn(args.samples, args.inputs, generator=gen)
    teacher = torch.randn(args.inputs, classes, generator=gen)
    labels = (data @ teacher).argmax(dim=1)
    os.makedirs(args.data_dir, exist_ok=True)
    np.save(os.path.join(args.data_dir, "x.npy"), data.numpy().astype(np.float32))
    np.save(os.path.join(args.data_dir, "y.npy"), labels.numpy().astype(np.int64))


if __name__ == "__main__":
    main()
