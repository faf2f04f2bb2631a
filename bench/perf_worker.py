"""One PyTorch measurement of bench/perf_suite.py, in its own process.

Run by perf_suite.py with the interpreter of the torch under test
(/usr/bin/python3: Debian's torch 1.13; the venv's python: torch 2.x):

  eager  train the examples/gpt GPT eagerly, m accumulated microbatches and
         one optimizer step per global batch
  pipe   one rank of torch.distributed.pipelining over gloo training the
         same GPT split into stages (the LM head untied: a copy of the token
         embedding on the last stage)
  sgemm  this library's single-thread float32 GEMM rate
  dnnl-sgemm  the same for oneDNN's dnnl_sgemm (pdc's GEMM), through ctypes

Prints its result as one line `PERF_RESULT {json}`: per-step seconds, the
loss of step 1, the process's peak RSS and the BLAS the running torch
reports. Not a test.
"""
import argparse
import json
import os
import statistics
import sys
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402  (pins the BLAS threads before torch loads)
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import perf_proc  # noqa: E402

# name -> (torch.distributed.pipelining class, stages per rank, placement):
# "loop" puts stage k on rank k mod world, "v" folds stages back (rank 0
# holds the first and the last stage).
PIPE_SCHEDULES = {
    "1F1B": ("Schedule1F1B", 1, "loop"),
    "GPipe": ("ScheduleGPipe", 1, "loop"),
    "Interleaved1F1B": ("ScheduleInterleaved1F1B", 2, "loop"),
    "InterleavedZeroBubble": ("ScheduleInterleavedZeroBubble", 2, "loop"),
    "LoopedBFS": ("ScheduleLoopedBFS", 2, "loop"),
    "ZBVZeroBubble": ("ScheduleZBVZeroBubble", 2, "v"),
    "DualPipeV": ("ScheduleDualPipeV", 2, "v"),
}


def parse_args(exporter):
    """The GPT's own options (examples/gpt/export.py) plus the measurement's."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=("eager", "pipe", "sgemm", "dnnl-sgemm"))
    exporter.add_model_args(p)
    p.add_argument("--microbatches", type=int, default=4)
    p.add_argument("--optimizer", default="adam", choices=benchlib.OPTIMIZERS)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world", type=int, default=1)
    p.add_argument("--port", type=int, default=29500)
    p.add_argument("--schedule", default="GPipe", choices=sorted(PIPE_SCHEDULES),
                   help="pipe: the torch.distributed.pipelining schedule")
    p.add_argument("--timeout", type=int, default=600, help="pipe: gloo timeout, s")
    p.add_argument("--gemm-size", type=int, default=1024, help="sgemm: n of n x n x n")
    args = p.parse_args()
    args.microbatch = args.batch
    return args


def emit(result):
    """Print the result line perf_suite.py reads."""
    print("PERF_RESULT " + json.dumps(result), flush=True)


def global_batches(args):
    """batches(step): the step's (idx, targets) global batch of the dataset
    in --data-dir, as plan/run reads it."""
    arrays = [np.load(os.path.join(args.data_dir, name + ".npy"))
              for name in ("idx", "targets")]
    return benchlib.cycling_batches(args, *arrays)


def timed_steps(args, step):
    """Call step(t) for t < --steps; return (seconds per step, step 1's loss)."""
    seconds, losses = [], []
    for t in range(args.steps):
        start = time.perf_counter()
        losses.append(step(t))
        seconds.append(time.perf_counter() - start)
    return seconds, losses[0]


def process_report(args, seconds, loss):
    """The fields every mode reports about its run and its process."""
    return {"step_s": seconds, "median_s": statistics.median(seconds[args.warmup:]),
            "loss_step1": loss, "peak_rss_kib": perf_proc.peak_rss_kib(),
            "blas": perf_proc.torch_blas_report(torch)}


def run_eager(args, exporter):
    """Train the GPT eagerly: per step m accumulated microbatch passes (loss
    divided by m) and one optimizer step."""
    model = exporter.build_model(args)
    model.train()
    optimizer = benchlib.torch_optimizer(args, model.parameters())
    batches = global_batches(args)

    def step(t):
        optimizer.zero_grad()
        total = 0.0
        for idx, targets in zip(*(x.chunk(args.microbatches) for x in batches(t))):
            loss = model(idx, targets) / args.microbatches
            loss.backward()
            total += loss.item()
        optimizer.step()
        return total
    seconds, loss = timed_steps(args, step)
    emit(process_report(args, seconds, loss))


class GPTChunk(nn.Module):
    """Consecutive pieces of the examples/gpt GPT as one pipeline stage: the
    embeddings on the first chunk, a run of blocks, and on the last chunk the
    final LayerNorm and an untied copy of the LM head (logits out)."""

    def __init__(self, gpt, blocks, first, last):
        super().__init__()
        self.first, self.last = first, last
        if first:
            self.wte, self.wpe, self.drop = gpt.wte, gpt.wpe, gpt.drop
        self.blocks = nn.ModuleList(blocks)
        if last:
            self.ln_f = gpt.ln_f
            self.head = nn.Linear(gpt.head.in_features, gpt.head.out_features, bias=False)
            self.head.weight = nn.Parameter(gpt.head.weight.detach().clone())

    def forward(self, x):
        if self.first:
            pos = torch.arange(x.shape[1], dtype=torch.long).unsqueeze(0)
            x = self.drop(self.wte(x) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x)) if self.last else x


def split_gpt(gpt, chunks):
    """The GPT as `chunks` GPTChunks with the blocks split evenly."""
    layers = len(gpt.blocks)
    bounds = [round(i * layers / chunks) for i in range(chunks + 1)]
    return [GPTChunk(gpt, gpt.blocks[bounds[i]:bounds[i + 1]], i == 0, i == chunks - 1)
            for i in range(chunks)]


def local_stage_ids(placement, per_rank, rank, world):
    """The stage indices this rank holds."""
    if placement == "v":
        return [rank, 2 * world - 1 - rank]
    return [rank + k * world for k in range(per_rank)]


def lm_loss(logits, targets):
    """Mean next-token cross-entropy of the last stage's logits."""
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))


def run_pipe(args, exporter):
    """Train one rank of the GPT pipeline with torch.distributed.pipelining."""
    import torch.distributed as dist
    from torch.distributed import pipelining

    class_name, per_rank, placement = PIPE_SCHEDULES[args.schedule]
    schedule_class = getattr(pipelining, class_name)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{args.port}",
                            rank=args.rank, world_size=args.world,
                            timeout=timedelta(seconds=args.timeout))
    n_stages = per_rank * args.world
    ids = local_stage_ids(placement, per_rank, args.rank, args.world)
    chunks = split_gpt(exporter.build_model(args), n_stages)
    modules = [chunks[i].train() for i in ids]
    del chunks
    stages = [pipelining.PipelineStage(m, i, n_stages, torch.device("cpu"))
              for m, i in zip(modules, ids)]
    schedule = schedule_class(stages if per_rank > 1 else stages[0],
                              n_microbatches=args.microbatches, loss_fn=lm_loss)
    optimizer = benchlib.torch_optimizer(
        args, [p for m in modules for p in m.parameters()])
    batches = global_batches(args)
    has_first, has_last = 0 in ids, n_stages - 1 in ids

    def step(t):
        idx, targets = batches(t)
        optimizer.zero_grad()
        losses = []
        inputs = (idx,) if has_first else ()
        extra = {"target": targets, "losses": losses} if has_last else {}
        schedule.step(*inputs, return_outputs=False, **extra)
        optimizer.step()
        return float(torch.stack(losses).detach().mean()) if losses else None
    seconds, loss = timed_steps(args, step)
    result = process_report(args, seconds, loss)
    result.update(rank=args.rank, stages=ids, n_stages=n_stages,
                  params=sum(p.numel() for m in modules for p in m.parameters()))
    dist.destroy_process_group()
    emit(result)


def run_sgemm(args):
    """Time torch.mm of two n x n float32 matrices on this torch's BLAS; report
    the best and the median GFLOP/s of --steps calls after one warm-up."""
    torch.set_num_threads(args.threads)
    n = args.gemm_size
    a, b = torch.randn(n, n), torch.randn(n, n)
    torch.mm(a, b)
    rates = []
    for _ in range(args.steps):
        start = time.perf_counter()
        torch.mm(a, b)
        rates.append(2 * n ** 3 / (time.perf_counter() - start) / 1e9)
    emit({"gflops": max(rates), "gflops_median": statistics.median(rates), "n": n,
          "blas": perf_proc.torch_blas_report(torch)})


def run_dnnl_sgemm(args):
    """Time dnnl_sgemm (row-major, n x n x n, one OpenMP thread through the
    environment) as run_sgemm times torch.mm."""
    import ctypes
    lib = ctypes.CDLL("libdnnl.so.2")
    f, i64, ptr = ctypes.c_float, ctypes.c_int64, ctypes.c_void_p
    lib.dnnl_sgemm.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, f,
                               ptr, i64, ptr, i64, f, ptr, i64]

    class Version(ctypes.Structure):
        _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int),
                    ("patch", ctypes.c_int), ("hash", ctypes.c_char_p)]
    lib.dnnl_version.restype = ctypes.POINTER(Version)
    v = lib.dnnl_version().contents
    n = args.gemm_size
    a, b = np.random.randn(n, n).astype(np.float32), np.random.randn(n, n).astype(np.float32)
    c = np.empty((n, n), np.float32)

    def sgemm():
        lib.dnnl_sgemm(b"N", b"N", n, n, n, 1.0, a.ctypes.data, n, b.ctypes.data, n,
                       0.0, c.ctypes.data, n)
    sgemm()
    rates = []
    for _ in range(args.steps):
        start = time.perf_counter()
        sgemm()
        rates.append(2 * n ** 3 / (time.perf_counter() - start) / 1e9)
    emit({"gflops": max(rates), "gflops_median": statistics.median(rates), "n": n,
          "blas": {"summary": f"oneDNN {v.major}.{v.minor}.{v.patch} dnnl_sgemm "
                              "(pdc's GEMM)"}})


def main():
    exporter = benchlib.load_example("gpt")
    args = parse_args(exporter)
    torch.set_num_threads(args.threads)
    if args.mode == "eager":
        run_eager(args, exporter)
    elif args.mode == "pipe":
        run_pipe(args, exporter)
    elif args.mode == "dnnl-sgemm":
        run_dnnl_sgemm(args)
    else:
        run_sgemm(args)


if __name__ == "__main__":
    main()
