#!/usr/bin/python3
"""Benchmark: pdc plans vs PyTorch 1.13 eager on the examples/cnn model.

Exports the CNN (Conv 3x3 + BatchNorm in training mode + Relu + MaxPool,
twice, then GlobalAveragePool, Flatten, Gemm, cross-entropy) with
examples/cnn/export.py at the microbatch size and wider channels, compiles
it with pdc at each --stages depth (microbatch b, m microbatches, global
batch B = b*m), runs each plan and reads its per-step time, and times
PyTorch eager training the same nn.Module on the same global batches with
the same optimizer and thread count. PyTorch normalises over the global
batch, pdc over each microbatch: the work is the same, the arithmetic of
BatchNorm is not (see DESIGN.md on BatchNorm under pipelining).

Not a test; run under /usr/bin/python3 (torch 1.13), e.g.
  /usr/bin/python3 bench/cnn_vs_torch.py --threads 1
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def parse_args(exporter):
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--channels", type=exporter.parse_channels, default=[32, 64],
                   help="channels of the two conv blocks, e.g. 32,64")
    p.add_argument("--depthwise", action="store_true",
                   help="depthwise + pointwise second block")
    p.add_argument("--samples", type=int, default=1024, help="dataset size")
    benchlib.add_common_args(p, microbatch=32, microbatches=4, optimizer="momentum",
                             lr=0.05)
    return p.parse_args()


def main():
    exporter = benchlib.load_example("cnn")
    args = parse_args(exporter)
    benchlib.prepare_env(args)
    work_dir = benchlib.make_work_dir(args, "cnn")
    torch.manual_seed(0)
    model = exporter.CNNWithLoss(args.channels, args.depthwise)
    model_path = os.path.join(work_dir, "cnn.onnx")
    exporter.export(model, model_path, args.microbatch, opset=15)
    x, y = exporter.make_dataset(args.samples, 1234)
    data_dir = benchlib.save_inputs(work_dir, x=x, y=y)
    title = (f"CNN channels {args.channels}{' depthwise' if args.depthwise else ''} "
             "on 1x16x16")
    benchlib.compare(args, title, model, model_path, data_dir,
                     benchlib.cycling_batches(args, x, y))


if __name__ == "__main__":
    main()
