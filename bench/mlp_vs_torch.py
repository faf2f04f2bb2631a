#!/usr/bin/python3
"""Benchmark: pdc plans vs PyTorch 1.13 eager on the examples/mlp model.

Exports the MLP (forward + cross-entropy) with examples/mlp/export.py, compiles
it with pdc at each --stages depth (same microbatch b, m microbatches, global
batch B = b*m), runs each plan and reads its per-step time, and times PyTorch
eager training the same nn.Module on the same global batch with the same
optimizer and thread count. Prints median step times, samples/s and the ratios
(torch / pdc at the first depth, deeper plans' throughput against the first
with the ideal, predicted against measured step time).

Not a test; run under /usr/bin/python3 (torch 1.13), e.g.
  /usr/bin/python3 bench/mlp_vs_torch.py --threads 1
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
    """Import examples/mlp/export.py as a module."""
    path = os.path.join(benchlib.SRC_ROOT, "examples", "mlp", "export.py")
    spec = importlib.util.spec_from_file_location("mlp_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="512,2048,2048,512",
                   help="MLP layer widths, input first")
    benchlib.add_common_args(p, microbatch=32, microbatches=4, optimizer="sgd",
                             lr=0.01)
    return p.parse_args()


def prepare(args, exporter, work_dir):
    """Export the model and write the data; return (model path, data dir, module)."""
    sizes = exporter.parse_sizes(args.sizes)
    model = exporter.build_model(sizes, seed=0)
    model_path = os.path.join(work_dir, "mlp.onnx")
    exporter.export(model, model_path, args.microbatch, sizes[0], opset=13)
    data_dir = os.path.join(work_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    x, y = exporter.make_dataset(sizes, args.microbatch * args.microbatches * 4, 1234)
    np.save(os.path.join(data_dir, "x.npy"), x)
    np.save(os.path.join(data_dir, "y.npy"), y)
    return model_path, data_dir, model


def main():
    args = parse_args()
    benchlib.prepare_env(args)
    exporter = load_exporter()
    args.work_dir = args.work_dir or tempfile.mkdtemp(prefix="pdc-bench-mlp-")
    os.makedirs(args.work_dir, exist_ok=True)
    model_path, data_dir, model = prepare(args, exporter, args.work_dir)
    batch = args.microbatch * args.microbatches
    x = torch.from_numpy(np.load(os.path.join(data_dir, "x.npy")))
    y = torch.from_numpy(np.load(os.path.join(data_dir, "y.npy")))

    def batches(step):
        index = (step * batch + np.arange(batch)) % len(x)
        return x[index], y[index]

    print(f"MLP {args.sizes}, b={args.microbatch} m={args.microbatches} B={batch}, "
          f"{args.schedule}, {args.optimizer}, {args.threads} thread(s) per process, "
          f"BLAS {benchlib.blas_in_use()}")
    torch_s = benchlib.time_torch(args, model, batches)
    depths = [int(d) for d in args.stages.split(",")]
    pdc = [(d, *benchlib.time_pdc(args, model_path, data_dir, args.work_dir, d))
           for d in depths]
    benchlib.report(args, batch, torch_s, pdc)


if __name__ == "__main__":
    main()
