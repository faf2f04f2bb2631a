#!/usr/bin/env python3
"""The planner's predictions against measured runs on this machine.

Exports the GPT example (default: 4 layers, n_embd 256, seq 128, microbatch
8 x 4 microbatches, Adam), compiles it at every depth, schedule and
recomputation asked for, trains each plan and prints one table row per plan:
predicted vs measured step time (median of the logged ms/step after warm-up)
and per-stage arena memory (plan.json vs the bytes each rank allocates,
--print-memory). With --profile, pdc prices the ops with their costs
measured on this machine. Not a test: run it on the machine you report
figures for.

  /usr/bin/python3 bench/predict_vs_measured.py --pdc build/bin/pdc --auto --profile
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_MS_RE = re.compile(r"^step (\d+) loss \S+ ms/step (\S+)", re.M)
MEMORY_RE = re.compile(r"^memory stage=(\d+) arena=(\d+)", re.M)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pdc", default=os.path.join(ROOT, "build", "bin", "pdc"))
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--embd", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=512)
    p.add_argument("--microbatch", type=int, default=8)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--optimizer", default="adam")
    p.add_argument("--shapes", default="1x1,2x1,1x2",
                   help="pipelines as DxW (depth x replicas); m is scaled so "
                   "that every plan trains the same global batch")
    p.add_argument("--schedules", default="2bw,flush,gpipe")
    p.add_argument("--recompute", default="none,full")
    p.add_argument("--steps", type=int, default=12)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--device-spec", default="cpu")
    p.add_argument("--auto", action="store_true",
                   help="also let pdc plan the same global batch itself (no "
                   "placement flags) and measure its choice")
    p.add_argument("--profile", action="store_true",
                   help="price ops with costs measured on this machine (pdc "
                   "--profile, cached in the work directory)")
    p.add_argument("--work-dir")
    return p.parse_args()


def export(args, work):
    model = os.path.join(work, "gpt.onnx")
    data = os.path.join(work, "data")
    if not os.path.exists(model):
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "gpt", "export.py"),
                        "--quiet", "--layers", str(args.layers), "--embd", str(args.embd),
                        "--heads", str(args.heads), "--seq", str(args.seq),
                        "--vocab", str(args.vocab), "--batch", str(args.microbatch),
                        "--samples", str(args.microbatch * args.microbatches * 4),
                        "--out", model, "--data-dir", data], check=True)
    return model, data


def measure(args, model, data, work, d, schedule, recompute, w=1):
    """Compile (d, schedule, recompute; all None: the planner's choice for
    the same global batch on every core) and train; return (predicted s,
    measured s, [(plan bytes, allocated bytes)] per stage, plan.json)."""
    plan = os.path.join(work, f"plan-d{d}-w{w}-{schedule}-{recompute}")
    env = benchlib.child_env(1)
    if d is None:
        placement = ["--global-batch", str(args.microbatch * args.microbatches)]
    else:
        placement = ["--stages", str(d), "--replicas", str(w),
                     "--microbatches", str(args.microbatches // w),
                     "--schedule", schedule, "--recompute", recompute]
    costs = (["--profile", "--profile-cache", os.path.join(work, "profiles")]
             if args.profile else [])
    benchlib.run_checked([args.pdc, model, "-o", plan, *placement, *costs,
                          "--optimizer", args.optimizer,
                          "--device-spec", args.device_spec], env)
    out = benchlib.run_checked([os.path.join(plan, "run"), "--steps", str(args.steps),
                                "--data", data, "--log-every", "1",
                                "--print-memory"], env)
    with open(os.path.join(plan, "plan.json")) as f:
        planned = json.load(f)
    measured = statistics.median(float(ms) / 1e3 for step, ms in STEP_MS_RE.findall(out)
                                 if int(step) > args.warmup)
    arena = {int(k): int(b) for k, b in MEMORY_RE.findall(out)}
    memory = [(m["total"], arena.get(m["stage"])) for m in planned["memory_bytes"]]
    return planned["predicted"]["step_seconds"], measured, memory, planned


def main():
    args = parse_args()
    work = args.work_dir or tempfile.mkdtemp(prefix="pdc-predict-")
    os.makedirs(work, exist_ok=True)
    model, data = export(args, work)
    print(f"GPT {args.layers} layers, n_embd {args.embd}, seq {args.seq}, "
          f"microbatch {args.microbatch} x {args.microbatches}, {args.optimizer}; "
          f"device spec {args.device_spec}, "
          f"{'measured' if args.profile else 'roofline'} op costs; "
          f"BLAS {benchlib.blas_in_use()}")
    print("| d x w | schedule | recompute | predicted ms | measured ms | pred/meas "
          "| memory per stage (plan / allocated, KiB) |")
    print("|---|---|---|---|---|---|---|")
    for shape in args.shapes.split(","):
        d, w = map(int, shape.split("x"))
        for schedule in args.schedules.split(","):
            for recompute in args.recompute.split(","):
                row(args, model, data, work, d, schedule, recompute, w)
    if args.auto:
        row(args, model, data, work, None, None, None)


def row(args, model, data, work, d, schedule, recompute, w=1):
    """Print one table row (the planner's choice when d is None)."""
    pred, meas, memory, plan = measure(args, model, data, work, d, schedule,
                                       recompute, w)
    mem = ", ".join(f"{p / 1024:.0f} / {a / 1024:.0f}" if a else f"{p / 1024:.0f} / ?"
                    for p, a in memory)
    shape = f"{d}x{w}"
    if d is None:
        shape = f"auto: {plan['stages']}x{plan['replicas']}"
        schedule, recompute = plan["schedule"], ",".join(sorted(set(plan["recompute"])))
    print(f"| {shape} | {schedule} | {recompute} | {pred * 1e3:.1f} | "
          f"{meas * 1e3:.1f} | {pred / meas:.2f} | {mem} |", flush=True)


if __name__ == "__main__":
    main()
