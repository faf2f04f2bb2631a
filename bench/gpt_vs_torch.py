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
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


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
    exporter = benchlib.load_example("gpt")
    args = parse_args(exporter)
    benchlib.prepare_env(args)
    model_path, data_dir, model = prepare(args, exporter,
                                          benchlib.make_work_dir(args, "gpt"))
    inputs = [np.load(os.path.join(data_dir, n + ".npy")) for n in ("idx", "targets")]
    params = sum(p.numel() for p in model.parameters())
    title = (f"GPT opset {args.opset} L={args.layers} d={args.embd} h={args.heads} "
             f"T={args.seq} V={args.vocab} ({params / 1e6:.2f} M params)")
    benchlib.compare(args, title, model, model_path, data_dir,
                     benchlib.cycling_batches(args, *inputs))


if __name__ == "__main__":
    main()
