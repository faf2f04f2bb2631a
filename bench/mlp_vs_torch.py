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
import os
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="512,2048,2048,512",
                   help="MLP layer widths, input first")
    benchlib.add_common_args(p, microbatch=32, microbatches=4, optimizer="sgd",
                             lr=0.01)
    return p.parse_args()


def main():
    args = parse_args()
    benchlib.prepare_env(args)
    exporter = benchlib.load_example("mlp")
    work_dir = benchlib.make_work_dir(args, "mlp")
    sizes = exporter.parse_sizes(args.sizes)
    model = exporter.build_model(sizes, seed=0)
    model_path = os.path.join(work_dir, "mlp.onnx")
    exporter.export(model, model_path, args.microbatch, sizes[0], opset=13)
    x, y = exporter.make_dataset(sizes, args.microbatch * args.microbatches * 4, 1234)
    data_dir = benchlib.save_inputs(work_dir, x=x, y=y)
    benchlib.compare(args, f"MLP {args.sizes}", model, model_path, data_dir,
                     benchlib.cycling_batches(args, x, y))


if __name__ == "__main__":
    main()
