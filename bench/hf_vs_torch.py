#!/usr/bin/env python3
"""Benchmark: pdc plans vs PyTorch 2.x eager on unmodified Hugging Face models.

Builds a transformers model (GPT2LMHeadModel, LlamaForCausalLM or
BertForMaskedLM) at examples/hf/export.py's "bench" size (4 layers, hidden
256, 4 heads, MLP 1024, vocab 4096), exports it with its own loss as a user
does (--exporter torchscript: opset 17; dynamo: opset 18), compiles the
export with pdc at each --stages depth (microbatch b, m microbatches) and
runs each plan; times the transformers module itself training eagerly in
torch 2.x on the same global batches (one pass, and m accumulated
microbatches), same optimizer and thread count. Prints median step times,
samples/s and the ratios, as bench/gpt_vs_torch.py does for our own GPT.
With --profile-ops it also compiles an instrumented d=1 plan and prints
bench/op_report.py's breakdown (GEMM share, costliest op kinds).

Not a test. Runs with the venv of scripts/setup-venv.sh (re-executes
itself there), e.g.
  bench/hf_vs_torch.py --family bert --seq 128 --threads 1 --profile-ops
"""
import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))
from pdc_venv import reexec_in_venv  # noqa: E402

if __name__ == "__main__":
    reexec_in_venv("transformers")

sys.path.insert(0, HERE)
import benchlib  # noqa: E402
import numpy as np  # noqa: E402


def parse_args(hf):
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--family", choices=sorted(hf.MODEL_CLASSES), default="bert")
    p.add_argument("--exporter", choices=["torchscript", "dynamo"],
                   default="torchscript")
    p.add_argument("--attn", choices=["eager", "sdpa"], default=hf.ATTN)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--samples", type=int, default=256, help="dataset size")
    p.add_argument("--profile-ops", action="store_true",
                   help="also run an instrumented d=1 plan and print op_report")
    benchlib.add_common_args(p, microbatch=8, microbatches=4,
                             optimizer="adam", lr=1e-4)
    return p.parse_args()


def prepare(args, hf):
    """Build the model, write its export and dataset under the work dir;
    return (model path, data dir, module, graph input arrays)."""
    work = benchlib.make_work_dir(args, f"hf-{args.family}")
    mask = hf.mask_mode(args.family, args.exporter, "auto")
    module = hf.wrap(hf.build_model(args.family, 0.0, 0, args.attn, "bench"), mask)
    data = hf.make_dataset(args.family, mask, args.samples, args.seq, 1,
                           hf.SIZES["bench"]["vocab"])
    model_path = os.path.join(work, f"{args.family}-{args.exporter}.onnx")
    hf.export(module, {k: v[:args.microbatch] for k, v in data.items()},
              model_path, args.exporter, 0.0)
    data_dir = benchlib.save_inputs(work, **data)
    return model_path, data_dir, module, list(data.values())


def profile_ops(args, model_path, data_dir):
    """Compile an instrumented d=1 plan, run it and print op_report."""
    plan = os.path.join(args.work_dir, "plan-d1-instrumented")
    times = os.path.join(args.work_dir, "op-times.json")
    benchlib.compile_pdc(args, model_path, plan, 1, ("--instrument-ops",))
    benchlib.run_checked([os.path.join(plan, "run"), "--steps", "4", "--data",
                          data_dir, "--profile-ops", times],
                         benchlib.child_env(args.threads))
    print(subprocess.run([sys.executable, os.path.join(HERE, "op_report.py"),
                          plan, times, "--top", "12"], check=True,
                         capture_output=True, text=True).stdout)


def main():
    hf = benchlib.load_example("hf")
    args = parse_args(hf)
    benchlib.prepare_env(args)
    if args.seq > hf.SIZES["bench"]["positions"]:
        sys.exit(f"error: --seq {args.seq} above the model's "
                 f"{hf.SIZES['bench']['positions']} positions")
    model_path, data_dir, module, inputs = prepare(args, hf)
    params = sum(p.numel() for p in module.parameters())
    title = (f"transformers {hf.MODEL_CLASSES[args.family]} ({args.attn}, "
             f"{args.exporter} export) T={args.seq} ({params / 1e6:.2f} M params), "
             f"torch {benchlib.torch.__version__}")
    benchlib.compare(args, title, module, model_path, data_dir,
                     benchlib.cycling_batches(args, *inputs))
    if args.profile_ops:
        profile_ops(args, model_path, data_dir)


if __name__ == "__main__":
    main()
