#!/usr/bin/python3
"""Benchmark: pdc plans vs PyTorch 1.13 eager on the examples/gpt model.

Exports the GPT (pre-LN blocks, causal attention, GELU MLP, tied LM head,
cross-entropy; opset 17 with LayerNormalization, or --opset 13) with examples/gpt/export.py
at the microbatch size, compiles it with pdc at each --stages depth (same
microbatch b, m microbatches, global batch B = b*m), runs each plan and reads
its per-step time, and times PyTorch eager training the same nn.Module on the
same global batches with the same optimizer and thread count. Prints median
step times, samples/s and the ratios (torch / pdc at the first depth, and
throughput of the deeper plans against the first with the ideal).

Not a test; run under /usr/bin/python3 (torch 1.13), e.g.
  /usr/bin/python3 bench/gpt_vs_torch.py --threads 1
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
    """Import examples/gpt/export.py as a module."""
    path = os.path.join(benchlib.SRC_ROOT, "examples", "gpt", "export.py")
    spec = importlib.util.spec_from_file_location("gpt_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args(exporter):
    """Parse the command line: the GPT's own options plus the benchmark's."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    exporter.add_model_args(p)
    p.set_defaults(seq=64, vocab=512, layers=4, embd=256, heads=4, samples=512,
                   quiet=True)
    p.add_argument("--opset", type=int, default=17, choices=range(13, 18),
                   help="13: LayerNorm decomposed (fused back by pdc), 17: LayerNormalization")
    benchlib.add_common_args(p, microbatch=8, microbatches=4, optimizer="adam",
                             lr=3e-4)
    return p.parse_args()


def prepare(args, exporter, work_dir):
    """Export the model and write the data; return (model path, data dir, module)."""
    args.batch = args.microbatch
    args.data_dir = os.path.join(work_dir, "data")
    model = exporter.build_model(args)
    path = os.path.join(work_dir, "gpt.onnx")
    idx = torch.zeros(args.batch, args.seq, dtype=torch.long)
    torch.onnx.export(model, (idx, idx.clone()), path, opset_version=args.opset,
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False,
                      input_names=["idx", "targets"], output_names=["loss"])
    exporter.write_data(args)
    return path, args.data_dir, model


def main():
    exporter = load_exporter()
    args = parse_args(exporter)
    benchlib.prepare_env(args)
    args.work_dir = args.work_dir or tempfile.mkdtemp(prefix="pdc-bench-gpt-")
    os.makedirs(args.work_dir, exist_ok=True)
    model_path, data_dir, model = prepare(args, exporter, args.work_dir)
    batch = args.microbatch * args.microbatches
    idx = torch.from_numpy(np.load(os.path.join(data_dir, "idx.npy")))
    targets = torch.from_numpy(np.load(os.path.join(data_dir, "targets.npy")))

    def batches(step):
        index = (step * batch + np.arange(batch)) % len(idx)
        return idx[index], targets[index]

    params = sum(p.numel() for p in model.parameters())
    print(f"GPT opset {args.opset} L={args.layers} d={args.embd} h={args.heads} T={args.seq} "
          f"V={args.vocab} ({params / 1e6:.2f} M params), b={args.microbatch} "
          f"m={args.microbatches} B={batch}, {args.schedule}, {args.optimizer}, "
          f"{args.threads} thread(s) per process, BLAS {benchlib.blas_in_use()}")
    torch_s = benchlib.time_torch(args, model, batches)
    depths = [int(d) for d in args.stages.split(",")]
    pdc = [(d, *benchlib.time_pdc(args, model_path, data_dir, args.work_dir, d))
           for d in depths]
    benchlib.report(args, batch, torch_s, pdc)


if __name__ == "__main__":
    main()
