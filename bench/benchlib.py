"""Shared pieces of the pdc-vs-PyTorch benchmarks (bench/*_vs_torch.py).

Runs pdc plans and reads their per-step times, times PyTorch eager training
of the same nn.Module, and prints the comparison table. Not a test.
"""
import copy
import importlib.util
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time



def blas_core_for_this_cpu():
    """The OpenBLAS kernel family plan/run selects when OpenBLAS 0.3.21 would
    fall back to Prescott (SSE3) on this CPU: SkylakeX with AVX-512, else
    Haswell with AVX2, else None (leave OpenBLAS's own choice)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith("flags")), "").split()
    except OSError:
        return None
    if "avx512f" in flags:
        return "SkylakeX"
    return "Haswell" if "avx2" in flags else None


def threads_from_argv(argv, default=1):
    """The --threads N (or --threads=N) of a benchmark's command line."""
    for i, arg in enumerate(argv):
        if arg == "--threads" and i + 1 < len(argv):
            return int(argv[i + 1])
        if arg.startswith("--threads="):
            return int(arg.split("=", 1)[1])
    return default


# torch 1.13 on Debian calls the same OpenBLAS through libblas.so.3; give it
# the kernels and the thread count pdc's ranks get. OpenBLAS reads these
# variables when it loads, so they are set before torch is imported
# (torch.set_num_threads does not reach OpenBLAS).
if "OPENBLAS_CORETYPE" not in os.environ and blas_core_for_this_cpu():
    os.environ["OPENBLAS_CORETYPE"] = blas_core_for_this_cpu()
os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(
    threads_from_argv(sys.argv))

import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hostinfo import cpu_model  # noqa: E402,F401

SRC_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEP_MS_RE = re.compile(r"^step (\d+) loss \S+.*?ms/step (\S+)", re.M)
STEP_RE = re.compile(r"^step (\d+) loss ", re.M)
OPTIMIZERS = ("sgd", "momentum", "adam", "adamw")


def load_example(name):
    """Import examples/NAME/export.py as a module."""
    path = os.path.join(SRC_ROOT, "examples", name, "export.py")
    spec = importlib.util.spec_from_file_location(f"{name}_export", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_work_dir(args, name):
    """--work-dir, or a fresh temporary directory; stored back into args."""
    args.work_dir = args.work_dir or tempfile.mkdtemp(prefix=f"pdc-bench-{name}-")
    os.makedirs(args.work_dir, exist_ok=True)
    return args.work_dir


def save_inputs(work_dir, **arrays):
    """Write NAME.npy per array into work_dir/data; return that directory."""
    data_dir = os.path.join(work_dir, "data")
    os.makedirs(data_dir, exist_ok=True)
    for name, array in arrays.items():
        np.save(os.path.join(data_dir, name + ".npy"), array)
    return data_dir


def cycling_batches(args, *arrays):
    """batches(step): the step's global batch of every array, as plan/run
    reads them (samples [t*B, (t+1)*B), wrapping around)."""
    tensors = [torch.from_numpy(a) for a in arrays]
    batch = args.microbatch * args.microbatches

    def batches(step):
        index = (step * batch + np.arange(batch)) % len(tensors[0])
        return tuple(t[index] for t in tensors)
    return batches


def compare(args, title, model, model_path, data_dir, batches):
    """Print title, time torch on batches(step) and pdc at every --stages
    depth, and report."""
    batch = args.microbatch * args.microbatches
    print(f"{title}, b={args.microbatch} m={args.microbatches} B={batch}, "
          f"{args.schedule}, {args.optimizer}, {args.threads} thread(s) per process, "
          f"BLAS {blas_in_use()}")
    torch_s = time_torch(args, model, batches)
    torch_mb = time_torch(args, model, batches, chunks=args.microbatches)
    depths = [int(d) for d in args.stages.split(",")]
    pdc = [(d, *time_pdc(args, model_path, data_dir, args.work_dir, d)) for d in depths]
    report(args, batch, (torch_s, torch_mb), pdc)


def add_common_args(p, microbatch, microbatches, optimizer, lr):
    """Options every benchmark takes (plan shape, optimizer, timing)."""
    p.add_argument("--pdc", default=os.path.join(SRC_ROOT, "build", "bin", "pdc"))
    p.add_argument("--microbatch", type=int, default=microbatch, help="b")
    p.add_argument("--microbatches", type=int, default=microbatches, help="m (>= 2)")
    p.add_argument("--stages", default="1,2", help="pipeline depths to time")
    p.add_argument("--schedule", default="2bw", choices=("2bw", "flush", "gpipe"))
    p.add_argument("--optimizer", default=optimizer, choices=OPTIMIZERS)
    p.add_argument("--lr", type=float, default=lr)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5, help="steps left out of medians")
    p.add_argument("--threads", type=int, default=1,
                   help="threads per process: torch, OpenBLAS and OpenMP")
    p.add_argument("--work-dir", help="keep model, data and plans here")


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


def compile_pdc(args, model_path, plan_dir, stages, extra=()):
    """Compile a plan with `stages` stages and the benchmark's options (and
    the pdc options `extra`) into plan_dir."""
    run_checked([args.pdc, model_path, "-o", plan_dir, "--stages", str(stages),
                 "--replicas", "1", "--microbatch", str(args.microbatch),
                 "--microbatches", str(args.microbatches),
                 "--schedule", args.schedule, "--optimizer", args.optimizer,
                 "--lr", repr(args.lr), *extra], child_env(args.threads))


def time_pdc(args, model_path, data_dir, work_dir, stages, extra=()):
    """Compile and run a plan with `stages` stages; return (s/step, how
    measured, with the plan's predicted step time and its ratio to it)."""
    plan_dir = os.path.join(work_dir, f"plan-d{stages}")
    env = child_env(args.threads)
    compile_pdc(args, model_path, plan_dir, stages, extra)
    start = time.perf_counter()
    out = run_checked([os.path.join(plan_dir, "run"), "--steps", str(args.steps),
                       "--data", data_dir, "--log-every", "1"], env)
    wall = time.perf_counter() - start
    per_step = [float(ms) / 1e3 for step, ms in STEP_MS_RE.findall(out)
                if int(step) > args.warmup]
    with open(os.path.join(plan_dir, "plan.json")) as f:
        predicted = json.load(f)["predicted"]["step_seconds"]
    how = f"predicted {predicted * 1e3:.1f} ms"
    if per_step:
        measured = statistics.median(per_step)
        return measured, f"ms/step printed by run; {how}, x{predicted / measured:.2f}"
    steps = len(STEP_RE.findall(out)) or args.steps
    return wall / steps, f"wall clock incl. launch; {how}"


def torch_optimizer(args, params):
    """The torch.optim optimizer matching --optimizer (default hyperparameters)."""
    if args.optimizer in ("sgd", "momentum"):
        return torch.optim.SGD(params, lr=args.lr,
                               momentum=0.9 if args.optimizer == "momentum" else 0.0)
    cls = torch.optim.Adam if args.optimizer == "adam" else torch.optim.AdamW
    return cls(params, lr=args.lr)


def time_torch(args, model, batches, chunks=1):
    """Train model eagerly, one global batch per step from batches(step) (a tuple
    of forward arguments), as `chunks` accumulated forward/backward passes
    (chunks = m is the microbatched work pdc does; 1 is one pass over the
    batch); return the median seconds per step. Training changes the model,
    so each call starts from a copy."""
    torch.set_num_threads(args.threads)
    model = copy.deepcopy(model)
    model.train()
    optimizer = torch_optimizer(args, model.parameters())
    times = []
    for step in range(args.steps):
        inputs = batches(step)
        start = time.perf_counter()
        optimizer.zero_grad()
        for part in zip(*(t.chunk(chunks) for t in inputs)):
            (model(*part) / chunks).backward()
        optimizer.step()
        times.append(time.perf_counter() - start)
    return statistics.median(times[args.warmup:])


def blas_in_use():
    """The BLAS the running torch calls for float32 GEMM, asked of the
    library (bench/perf_proc.py: MKL's own report, or OpenBLAS's)."""
    import perf_proc
    torch.ones(8, 8) @ torch.ones(8, 8)  # load the BLAS
    return (f"{perf_proc.torch_blas_report(torch)['summary']} "
            f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'auto')})")


def report(args, batch, torch_times, pdc_times):
    """Print step times, throughput and the ratios against torch and the ideal.

    torch_times: (one pass over the batch, m accumulated microbatches);
    pdc_times: [(stages, seconds, how)], stage counts ascending."""
    torch_s, torch_mb = torch_times
    rows = [("torch eager", torch_s, "median, the batch in one pass"),
            ("torch eager", torch_mb, f"median, {args.microbatches} accumulated "
                                      f"microbatches of {args.microbatch}")]
    rows += [(f"pdc d={d}", s, how) for d, s, how in pdc_times]
    for name, sec, how in rows:
        print(f"{name:12s} {sec * 1e3:9.2f} ms/step {batch / sec:10.1f} samples/s ({how})")
    d1, s1, _ = pdc_times[0]
    print(f"ratio torch/pdc(d={d1}) step time: {torch_s / s1:.2f} against one pass, "
          f"{torch_mb / s1:.2f} against the same microbatches  (>1: pdc faster)")
    for d, s, _ in pdc_times[1:]:
        print(f"ratio pdc d={d} / d={d1} throughput: {s1 / s:.2f}  "
              f"(ideal {d / d1:.0f}: {d} processes vs {d1})")
    print(f"work dir: {args.work_dir}")


def prepare_env(args):
    """Pin this process's thread counts to --threads."""
    os.environ.update(OPENBLAS_NUM_THREADS=str(args.threads),
                      OMP_NUM_THREADS=str(args.threads))
