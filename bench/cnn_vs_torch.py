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
import importlib.util
import os
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def load_exporter():
    """Import examples/cnn/export.py as a module."""
    path = os.path.join(benchlib.SRC_ROOT, "examples", "cnn", "export.py")
    spec = importlib.util.spec_from_file_location("cnn_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


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
    exporter = load_exporter()
    args = parse_args(exporter)
    benchlib.prepare_env(args)
    args.work_dir = args.work_dir or tempfile.mkdtemp(prefix="pdc-bench-cnn-")
    os.makedirs(args.work_dir, exist_ok=True)
    torch.manual_seed(0)
    model = exporter.CNNWithLoss(args.channels, args.depthwise)
    model_path = os.path.join(args.work_dir, "cnn.onnx")
    exporter.export(model, model_path, args.microbatch, opset=15)
    x, y = exporter.make_dataset(args.samples, 1234)
    data_dir = os.path.join(args.work_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    np.save(os.path.join(data_dir, "x.npy"), x)
    np.save(os.path.join(data_dir, "y.npy"), y)
    batch = args.microbatch * args.microbatches
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)

    def batches(step):
        index = (step * batch + np.arange(batch)) % len(tx)
        return tx[index], ty[index]

    print(f"CNN channels {args.channels}{' depthwise' if args.depthwise else ''} "
          f"on 1x16x16, b={args.microbatch} m={args.microbatches} B={batch}, "
          f"{args.schedule}, {args.optimizer}, {args.threads} thread(s) per process, "
          f"BLAS {benchlib.blas_in_use()}")
    torch_s = benchlib.time_torch(args, model, batches)
    depths = [int(d) for d in args.stages.split(",")]
    pdc = [(d, *benchlib.time_pdc(args, model_path, data_dir, args.work_dir, d))
           for d in depths]
    benchlib.report(args, batch, torch_s, pdc)


if __name__ == "__main__":
    main()
