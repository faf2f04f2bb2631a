#!/usr/bin/python3
"""Benchmark: pdc plans vs PyTorch 1.13 eager on the examples/mlp model.

Exports the MLP (forward + cross-entropy) with examples/mlp/export.py, compiles
it with pdc as a 1-stage and a 2-stage plan (same microbatch b, m microbatches,
global batch B = b*m), runs each plan and reads its per-step time, and times
PyTorch eager training the same nn.Module on the same global batch with the same
optimizer and thread count. Prints median step times, samples/s and the ratios
(torch / pdc 1-stage, and 2-stage / 1-stage throughput).

Not a test; run under /usr/bin/python3 (torch 1.13), e.g.
  /usr/bin/python3 bench/mlp_vs_torch.py --pdc build/bin/pdc
"""
import argparse
import importlib.util
import os
import re
import statistics
import subprocess
import tempfile
import time

import numpy as np
import torch

SRC_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_MS_RE = re.compile(r"^step (\d+) loss \S+.*?ms/step (\S+)", re.M)
STEP_RE = re.compile(r"^step (\d+) loss ", re.M)


def load_exporter():
    """Import examples/mlp/export.py as a module."""
    path = os.path.join(SRC_ROOT, "examples", "mlp", "export.py")
    spec = importlib.util.spec_from_file_location("mlp_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def parse_args():
    """Parse the command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pdc", default=os.path.join(SRC_ROOT, "build", "bin", "pdc"))
    p.add_argument("--sizes", default="512,2048,2048,512",
                   help="MLP layer widths, input first")
    p.add_argument("--microbatch", type=int, default=32, help="b")
    p.add_argument("--microbatches", type=int, default=4, help="m (>= 2)")
    p.add_argument("--schedule", default="2bw", choices=("2bw", "flush", "gpipe"))
    p.add_argument("--optimizer", default="sgd",
                   choices=("sgd", "momentum", "adam", "adamw"))
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5, help="steps left out of medians")
    p.add_argument("--threads", type=int, default=1,
                   help="threads per process: torch, OpenBLAS and OpenMP")
    p.add_argument("--work-dir", help="keep model, data and plans here")
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


def child_env(threads):
    """Environment for pdc ranks: fixed thread counts, mpirun as root allowed."""
    env = dict(os.environ)
    env.update(OPENBLAS_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    return env


def run_checked(cmd, env):
    """Run cmd; return its stdout, or exit with its stderr if it fails."""
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    except OSError as err:
        raise SystemExit(f"{cmd[0]}: {err}")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited with {proc.returncode}:\n"
                         f"{proc.stdout}{proc.stderr}")
    return proc.stdout


def time_pdc(args, model_path, data_dir, work_dir, stages):
    """Compile and run a plan with `stages` stages; return median seconds per step."""
    plan_dir = os.path.join(work_dir, f"plan-d{stages}")
    env = child_env(args.threads)
    run_checked([args.pdc, model_path, "-o", plan_dir, "--stages", str(stages),
                 "--replicas", "1", "--microbatch", str(args.microbatch),
                 "--microbatches", str(args.microbatches),
                 "--schedule", args.schedule, "--optimizer", args.optimizer,
                 "--lr", repr(args.lr)], env)
    start = time.perf_counter()
    out = run_checked([os.path.join(plan_dir, "run"), "--steps", str(args.steps),
                       "--data", data_dir, "--log-every", "1"], env)
    wall = time.perf_counter() - start
    per_step = [float(ms) / 1e3 for step, ms in STEP_MS_RE.findall(out)
                if int(step) > args.warmup]
    if per_step:
        return statistics.median(per_step), "ms/step printed by run"
    steps = len(STEP_RE.findall(out)) or args.steps
    return wall / steps, "wall clock incl. launch (run printed no ms/step)"


def make_torch_optimizer(args, params):
    """The torch.optim optimizer matching --optimizer (default hyperparameters)."""
    if args.optimizer in ("sgd", "momentum"):
        return torch.optim.SGD(params, lr=args.lr,
                               momentum=0.9 if args.optimizer == "momentum" else 0.0)
    cls = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
    return cls(params, lr=args.lr)


def time_torch(args, model, data_dir):
    """Train the nn.Module eagerly on the global batch; return median s/step."""
    torch.set_num_threads(args.threads)
    x = torch.from_numpy(np.load(os.path.join(data_dir, "x.npy")))
    y = torch.from_numpy(np.load(os.path.join(data_dir, "y.npy")))
    batch = args.microbatch * args.microbatches
    optimizer = make_torch_optimizer(args, model.parameters())
    times = []
    for step in range(args.steps):
        index = (step * batch + np.arange(batch)) % len(x)
        start = time.perf_counter()
        optimizer.zero_grad()
        model(x[index], y[index]).backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return statistics.median(times[args.warmup:])


def blas_in_use():
    """The shared library behind libblas.so.3 (what torch 1.13 calls on Debian)."""
    return os.path.realpath("/etc/alternatives/libblas.so.3-x86_64-linux-gnu")


def main():
    args = parse_args()
    os.environ.update(OPENBLAS_NUM_THREADS=str(args.threads),
                      OMP_NUM_THREADS=str(args.threads))
    exporter = load_exporter()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="pdc-bench-")
    os.makedirs(work_dir, exist_ok=True)
    model_path, data_dir, model = prepare(args, exporter, work_dir)
    batch = args.microbatch * args.microbatches
    print(f"model {args.sizes}, b={args.microbatch} m={args.microbatches} B={batch}, "
          f"{args.schedule}, {args.optimizer}, {args.threads} thread(s) per process, "
          f"BLAS {blas_in_use()}")
    torch_s = time_torch(args, model, data_dir)
    d1_s, how1 = time_pdc(args, model_path, data_dir, work_dir, 1)
    d2_s, how2 = time_pdc(args, model_path, data_dir, work_dir, 2)
    for name, sec, how in (("torch eager", torch_s, "median"), ("pdc d=1", d1_s, how1),
                           ("pdc d=2", d2_s, how2)):
        print(f"{name:12s} {sec * 1e3:9.2f} ms/step {batch / sec:10.1f} samples/s ({how})")
    print(f"ratio torch/pdc(d=1) step time: {torch_s / d1_s:.2f}  (>1: pdc faster)")
    print(f"ratio pdc d=2 / d=1 throughput: {d1_s / d2_s:.2f}  (2 processes vs 1)")
    print(f"work dir: {work_dir}")


if __name__ == "__main__":
    main()
