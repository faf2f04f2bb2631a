#!/usr/bin/python3
"""Every side of the pdc comparison in one run on this machine: a markdown table and JSON.

For each GPT (examples/gpt; small: n_layer 4, n_embd 256, n_head 4, seq 128;
large: n_layer 8, n_embd 512, n_head 8, seq 256; both vocab 4096, global
batch 32 = microbatch 8 x 4 microbatches, Adam) it trains, on the same
batches from the same initial weights with one thread per process:

  torch113    PyTorch 1.13 eager (Debian, /usr/bin/python3)
  torch2      PyTorch 2.x eager (the venv of scripts/setup-venv.sh)
  pipelining  torch.distributed.pipelining over gloo, one process per rank:
              1 rank (ScheduleGPipe, one stage: the baseline), then 2 ranks
              with each --pipe-schedules schedule
  pdc         pdc plans at d=1 and d=2 with each --pdc-schedules schedule;
              two runs of the d=1 2bw plan at once, one per core (what two
              independent processes get of a machine whose cores share
              caches and memory bandwidth: the machine's share of d=2's
              loss against d=1); and once more d=1 2bw compiled with
              --instrument-ops: where its step goes (GEMM ops, other ops,
              the rest)

and reports per run the median ms/step, samples/s, the pipeline efficiency
(throughput / (d x the same system's single-process throughput)), the plan's
FLOPs per step against this machine's single-thread sgemm rate (measured with
torch.mm on OpenBLAS and on MKL), the peak RSS of every process, the loss of
step 1 (the same for every side when they train the same thing) and the BLAS
library and kernel family each side's processes report, and which GEMMs
pdc's plans split at a stage cut (plan.json split_gemms). A side that fails
is reported as "did not run: <reason>".

The machine's other load moves single runs by 5-15% here, so a model can be
measured in --rounds rounds: every configuration runs once per round, one
after the other (every second round in reverse order), and a row reports
the median of its rounds' medians and their range; the goal ratios are
also given per round, each from runs of the same round. Load that comes
and goes then hits every side alike instead of the one that happened to
run at the time. With --quiet-gate F every run first waits (up to
--quiet-wait seconds) until oneDNN's single-thread sgemm rate is at least
F of the best seen in the suite, so that the runs fall in the host's quiet
spells; the report says how many waited and how many started below the
gate, and sets the plan's FLOPs of pdc d=1 and the eager sides against
the rate measured just before each of their runs as well.

Not a test. Run under /usr/bin/python3, e.g. a quick check:
  bench/perf_suite.py --models small --layers 2 --embd 64 --seq 32 --steps 4 --warmup 1
"""
import argparse
import contextlib
import datetime
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402  (pins OPENBLAS_CORETYPE and the thread counts)
import op_report  # noqa: E402
import perf_proc  # noqa: E402
import perf_report  # noqa: E402

BENCH = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(BENCH, "perf_worker.py")
EXPORTER = os.path.join(benchlib.SRC_ROOT, "examples", "gpt", "export.py")
VENV = os.environ.get("PDC_VENV", os.path.expanduser("~/.cache/pdc-venv"))
OPTIMIZER = "adam"
SIDES = ("torch113", "torch2", "pipelining", "pdc")
DEFAULT_ROUNDS = "small=3,large=1"
MODELS = {
    "small": dict(layers=4, embd=256, heads=4, seq=128, vocab=4096,
                  microbatch=8, microbatches=4),
    "large": dict(layers=8, embd=512, heads=8, seq=256, vocab=4096,
                  microbatch=8, microbatches=4),
}
PDC_STEP_RE = re.compile(r"^step (\d+) loss (\S+) ms/step (\S+)", re.M)
COPIES_SCHEDULE = perf_report.COPIES_SCHEDULE
OPENBLAS_FILE_RE = re.compile(r"openblas\w*-r([\d.]+)\.so")


class SideFailed(Exception):
    """A run that did not complete; its message is the reason reported."""


@dataclass
class Model:
    """One GPT configuration and where its export and dataset live."""
    name: str
    config: dict
    dir: str

    @property
    def onnx(self):
        """The exported model."""
        return os.path.join(self.dir, "gpt.onnx")

    @property
    def data(self):
        """The dataset directory (idx.npy, targets.npy)."""
        return os.path.join(self.dir, "data")

    @property
    def global_batch(self):
        """Samples per optimizer step, b x m."""
        return self.config["microbatch"] * self.config["microbatches"]

    def export_args(self):
        """Options of examples/gpt/export.py (also taken by perf_worker.py)."""
        c = self.config
        return ["--layers", str(c["layers"]), "--embd", str(c["embd"]),
                "--heads", str(c["heads"]), "--seq", str(c["seq"]),
                "--vocab", str(c["vocab"]), "--batch", str(c["microbatch"]),
                "--data-dir", self.data]


def parse_args():
    """The command line; model overrides apply to every model chosen."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="small,large", help="of: " + ",".join(MODELS))
    p.add_argument("--sides", default=",".join(SIDES), help="of: " + ",".join(SIDES))
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--rounds", default=DEFAULT_ROUNDS,
                   help="runs of every configuration, interleaved: N, or MODEL=N,... "
                        f"(default {DEFAULT_ROUNDS})")
    p.add_argument("--warmup", type=int, default=3, help="steps left out of medians")
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--threads", type=int, default=1, help="threads per process")
    p.add_argument("--pdc-schedules", default="2bw,flush,gpipe")
    p.add_argument("--pdc-costs", choices=("profile", "roofline"), default="profile",
                   help="the op costs pdc plans with: measured on this machine "
                        "(pdc --profile, a cache in the work dir, so this build's "
                        "kernels are timed) or its roofline model")
    p.add_argument("--pipe-schedules",
                   default="1F1B,GPipe,Interleaved1F1B,InterleavedZeroBubble,ZBVZeroBubble",
                   help="names in perf_worker.PIPE_SCHEDULES (also LoopedBFS, DualPipeV)")
    for key in ("layers", "embd", "heads", "seq", "vocab", "microbatch", "microbatches"):
        p.add_argument("--" + key, type=int, help=f"override every model's {key}")
    p.add_argument("--gemm-size", type=int, default=1024, help="n of the sgemm rate")
    p.add_argument("--quiet-gate", type=float, default=0.0, metavar="FRACTION",
                   help="before each run, wait until oneDNN's single-thread sgemm "
                        "rate is at least FRACTION of the best seen in this suite "
                        "(a shared host's slow spells), at most --quiet-wait "
                        "seconds; 0: do not wait")
    p.add_argument("--quiet-wait", type=int, default=600,
                   help="seconds a run waits at most for the quiet gate")
    p.add_argument("--timeout", type=int, default=1800, help="seconds per run")
    p.add_argument("--pdc", default=os.path.join(benchlib.SRC_ROOT, "build", "bin", "pdc"))
    p.add_argument("--torch113-python", default="/usr/bin/python3")
    p.add_argument("--venv-python", default=os.path.join(VENV, "bin", "python"))
    p.add_argument("--work-dir", help="keep exports, data and plans here")
    p.add_argument("--out-md", default=os.path.join(BENCH, "results", "perf_suite.md"))
    p.add_argument("--write-readme", metavar="README.md",
                   help="replace the table between the perf_suite markers of this README")
    p.add_argument("--out-json", default=os.path.join(BENCH, "results", "perf_suite.json"))
    args = p.parse_args()
    for name, choices in (("models", MODELS), ("sides", SIDES)):
        unknown = set(getattr(args, name).split(",")) - set(choices)
        if unknown:
            p.error(f"--{name}: unknown {', '.join(sorted(unknown))}")
    try:
        args.rounds = parse_rounds(args.rounds)
    except ValueError as err:
        p.error(f"--rounds: {err}")
    return args


def parse_rounds(spec):
    """--rounds as {model: rounds}: "N" for every model, or "MODEL=N,..."
    (models not named get 1)."""
    if spec.isdigit():
        rounds = dict.fromkeys(MODELS, int(spec))
    else:
        rounds = dict.fromkeys(MODELS, 1)
        for item in spec.split(","):
            name, _, count = item.partition("=")
            if name not in MODELS or not count.isdigit():
                raise ValueError(f"expected N or MODEL=N,... with MODEL of "
                                 f"{','.join(MODELS)}, got '{item}'")
            rounds[name] = int(count)
    if min(rounds.values()) < 1:
        raise ValueError("at least one round per model")
    return rounds


def chosen_models(args):
    """The Model of every --models name with the overrides applied."""
    models = []
    for name in args.models.split(","):
        config = dict(MODELS[name])
        config.update({k: getattr(args, k) for k in config if getattr(args, k) is not None})
        models.append(Model(name, config, os.path.join(args.work_dir, name)))
    return models


def child_env(args):
    """The environment of every measured process: benchlib's (one OpenBLAS
    thread, OPENBLAS_CORETYPE, mpirun as root) plus MKL's thread count."""
    env = benchlib.child_env(args.threads)
    env["MKL_NUM_THREADS"] = str(args.threads)
    return env


def last_line(text):
    """The last non-empty line of text (a failure's reason), shortened."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no output"


def run_process(cmd, env, timeout):
    """Run cmd; return its stdout, or raise SideFailed with its last error line."""
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SideFailed(f"{os.path.basename(cmd[0])} timed out after {timeout} s")
    except OSError as err:
        raise SideFailed(f"{cmd[0]}: {err}")
    if proc.returncode != 0:
        raise SideFailed(f"exit {proc.returncode}: {last_line(proc.stderr or proc.stdout)}")
    return proc.stdout


def run_together(cmds, env, timeout):
    """Start every command at once and return each one's stdout; if one
    fails or the time runs out, stop the others and raise SideFailed with
    the first failure's last error line."""
    with contextlib.ExitStack() as files:
        logs = [(files.enter_context(tempfile.TemporaryFile(mode="w+")),
                 files.enter_context(tempfile.TemporaryFile(mode="w+"))) for _ in cmds]
        procs = [subprocess.Popen(cmd, env=env, stdout=out, stderr=err, text=True)
                 for cmd, (out, err) in zip(cmds, logs)]
        try:
            failure = wait_all(procs, logs, time.monotonic() + timeout)
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
        if failure:
            raise SideFailed(failure if failure != "timed out"
                             else f"timed out after {timeout} s")
        outs = []
        for out, _ in logs:
            out.seek(0)
            outs.append(out.read())
        return outs


def run_ranks(cmds, env, timeout):
    """Start every command at once (the ranks of one job) and return each
    one's PERF_RESULT."""
    return [read_result(out) for out in run_together(cmds, env, timeout)]


def first_failure(procs, logs):
    """The reason of the first process that exited non-zero, or None."""
    for proc, (_, err) in zip(procs, logs):
        if proc.poll() not in (None, 0):
            err.seek(0)
            return f"exit {proc.returncode}: {last_line(err.read())}"
    return None


def wait_all(procs, logs, deadline):
    """Wait until every process has exited; the first failure's reason
    ("timed out" past the deadline), or None."""
    while True:
        failure = first_failure(procs, logs)
        if failure or all(p.poll() is not None for p in procs):
            return failure
        if time.monotonic() > deadline:
            return "timed out"
        time.sleep(0.1)


def read_result(out):
    """The PERF_RESULT object a worker printed (its stdout, out)."""
    for line in out.splitlines():
        if line.startswith("PERF_RESULT "):
            return json.loads(line.split(" ", 1)[1])
    raise SideFailed("the worker printed no PERF_RESULT line")


def worker_cmd(args, python, model, mode, *extra):
    """The perf_worker.py command line of one measurement."""
    c = model.config
    return [python, WORKER, mode, *model.export_args(),
            "--microbatches", str(c["microbatches"]), "--optimizer", OPTIMIZER,
            "--lr", repr(args.lr), "--steps", str(args.steps),
            "--warmup", str(args.warmup), "--threads", str(args.threads),
            "--timeout", str(args.timeout), *map(str, extra)]


def free_port():
    """A TCP port on 127.0.0.1 that is free now (for gloo's rendezvous)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def new_row(model, side, d, schedule, baseline=None, copies=1):
    """An empty result row; baseline: (side, schedule) of the d=1 run it is
    compared against for pipeline efficiency; copies: independent runs of
    one configuration at once (each trains its own global batch)."""
    return {"model": model.name, "side": side, "d": d, "schedule": schedule,
            "baseline": baseline, "copies": copies, "status": "ok", "rounds": []}


class QuietGate:
    """--quiet-gate: before a run, oneDNN's single-thread sgemm rate
    measured until it reaches the gate's fraction of the best rate seen so
    far (sleeping between measurements), or until --quiet-wait seconds
    passed. Each run records the rate it started at, whether it waited and
    whether it started below the gate."""

    def __init__(self, args, best):
        self.args, self.best = args, best or 0.0
        self.waits = self.below = self.runs = 0

    def rate(self):
        cmd = [self.args.torch113_python, WORKER, "dnnl-sgemm", "--gemm-size",
               str(self.args.gemm_size), "--steps", "5",
               "--threads", str(self.args.threads)]
        try:
            return run_ranks([cmd], child_env(self.args), self.args.timeout)[0]["gflops"]
        except (SideFailed, KeyError):
            return None

    def wait(self):
        """The host's sgemm GFLOP/s when the run may start (None: off or
        unmeasurable)."""
        if self.args.quiet_gate <= 0:
            return None
        self.runs += 1
        deadline = time.monotonic() + self.args.quiet_wait
        waited = False
        while True:
            rate = self.rate()
            if rate is None:
                return None
            self.best = max(self.best, rate)
            if rate >= self.args.quiet_gate * self.best:
                break
            if time.monotonic() + 20 > deadline:
                self.below += 1
                break
            waited = True
            print(f"  host at {rate:.0f} GFLOP/s, under {self.args.quiet_gate:.2f} of "
                  f"{self.best:.0f}: waiting", flush=True)
            time.sleep(20)
        self.waits += waited
        return rate

    def summary(self):
        return {"fraction": self.args.quiet_gate, "best_gflops": self.best,
                "runs": self.runs, "waited": self.waits, "started_below": self.below}


def run_round(row, measure, gate=None):
    """One round of a configuration: append measure()'s fields to
    row["rounds"], or mark the row as not run with the reason (later rounds
    skip it). With a quiet gate the run first waits for it and records the
    host's sgemm rate it started at."""
    if row["status"] != "ok":
        return
    host = gate.wait() if gate else None
    try:
        row["rounds"].append(measure())
        if host is not None:
            row["rounds"][-1]["host_gflops"] = host
    except SideFailed as err:
        row["status"] = f"did not run: {err}"
    print(f"  {row['side']} d={row['d']} {row['schedule']}: " +
          (f"{row['rounds'][-1]['median_s'] * 1e3:.1f} ms/step" if row["status"] == "ok"
           else row["status"]), flush=True)


def round_order(jobs, index):
    """The configurations of round `index` (from 0): in order in even rounds,
    reversed in odd ones, so that a drift of the host's speed over a round
    (a slow spell setting in or passing) falls on both ends alike."""
    return jobs if index % 2 == 0 else jobs[::-1]


def merge_rounds(row):
    """A row's fields from its rounds: the median of the rounds' medians
    and their range, every round's step times, the peak RSS per process
    over all rounds, step 1's loss and the BLAS of the first round."""
    rounds = row.pop("rounds")
    if row["status"] != "ok":
        return row
    medians = [r["median_s"] for r in rounds]
    row.update(median_s=statistics.median(medians), round_median_s=medians,
               round_step_s=[r["step_s"] for r in rounds],
               peak_rss_kib=[max(k or 0 for k in ks) or None
                             for ks in zip(*(r["peak_rss_kib"] for r in rounds))],
               loss_step1=rounds[0]["loss_step1"], blas=rounds[0]["blas"])
    hosts = [r.get("host_gflops") for r in rounds]
    if any(hosts):
        row["host_gflops"] = hosts  # None for a round the gate could not measure
    if "split_gemms" in rounds[0]:
        row["split_gemms"] = rounds[0]["split_gemms"]
    return row


def combine_ranks(results):
    """One run's fields from its ranks' PERF_RESULTs: a step lasts as long as
    its slowest rank; peak RSS per rank; the BLAS of rank 0."""
    loss = next((r["loss_step1"] for r in results if r["loss_step1"] is not None), None)
    return {"median_s": max(r["median_s"] for r in results),
            "step_s": [max(ts) for ts in zip(*(r["step_s"] for r in results))],
            "peak_rss_kib": [r["peak_rss_kib"] for r in results],
            "loss_step1": loss, "blas": results[0]["blas"]}


def eager_side(args, model, side, python):
    """Eager training in one process with the torch of `python`."""
    def measure():
        return combine_ranks(run_ranks([worker_cmd(args, python, model, "eager")],
                                       child_env(args), args.timeout))
    return [(new_row(model, side, 1, "accumulate m"), measure)]


def side_torch113(args, model):
    """PyTorch 1.13 eager (Debian's python)."""
    return eager_side(args, model, "torch113", args.torch113_python)


def side_torch2(args, model):
    """PyTorch 2.x eager (the venv's python)."""
    return eager_side(args, model, "torch2", args.venv_python)


def pipelining_run(args, model, world, schedule):
    """One torch.distributed.pipelining job: `world` ranks over gloo."""
    port = free_port()
    cmds = [worker_cmd(args, args.venv_python, model, "pipe", "--rank", r,
                       "--world", world, "--port", port, "--schedule", schedule)
            for r in range(world)]
    return combine_ranks(run_ranks(cmds, child_env(args), args.timeout))


def side_pipelining(args, model):
    """torch.distributed.pipelining: 1 rank, then 2 ranks per schedule."""
    jobs = [(new_row(model, "pipelining", 1, "GPipe"),
             lambda: pipelining_run(args, model, 1, "GPipe"))]
    for schedule in args.pipe_schedules.split(","):
        row = new_row(model, "pipelining", 2, schedule, ("pipelining", "GPipe"))
        jobs.append((row, lambda s=schedule: pipelining_run(args, model, 2, s)))
    return jobs


def compile_plan(args, model, d, schedule, plan, *extra):
    """Compile model with pdc into plan with the fixed placement."""
    c = model.config
    if args.pdc_costs == "profile" and "--plan-only" not in extra:
        extra = (*extra, "--profile", "--profile-cache",
                 os.path.join(model.dir, "op-profiles"))
    run_process([args.pdc, model.onnx, "-o", plan, "--stages", str(d),
                 "--replicas", "1", "--microbatch", str(c["microbatch"]),
                 "--microbatches", str(c["microbatches"]), "--schedule", schedule,
                 "--recompute", "none", "--optimizer", OPTIMIZER, "--lr", repr(args.lr),
                 *extra], child_env(args), args.timeout)


def plan_gemm_libraries(plan):
    """How many of the plan's GEMM shapes pdc --profile put on each library
    (plan.json gemm_libraries: [m, n, k, trans_a, trans_b, library]);
    empty without a profile (the runtime's default then)."""
    with open(os.path.join(plan, "plan.json")) as f:
        gemms = json.load(f).get("gemm_libraries", [])
    return {lib: sum(1 for g in gemms if g[5] == lib) for lib in ("onednn", "openblas")
            if any(g[5] == lib for g in gemms)}


def core_has_avx512(gemm):
    """Whether oneDNN runs AVX-512 here (pdrt's default GEMM library then;
    OpenBLAS without it)."""
    return "avx-512" in gemm.get("kernels", "").lower()


def pdc_blas(args, stages, watcher):
    """The BLAS of a pdc plan's ranks: the libraries they mapped (oneDNN's
    version and ISA asked of the mapped file, the OpenBLAS kernel family
    stage0 reports in the same environment) and how many GEMM shapes the
    plan put on each (pdc --profile measures both per shape)."""
    env = child_env(args)
    core = run_process([stages[0], "--blas-core"], env, 60).strip()
    mapped = sorted({p for libs in watcher.mapped.values() for p in libs})
    versions = {m.group(1) for m in map(OPENBLAS_FILE_RE.search, mapped) if m}
    version = ",".join(sorted(versions)) or "?"
    openblas = f"OpenBLAS {version} {core}"
    dnnl = next((p for p in mapped if "dnnl" in os.path.basename(p)), None)
    gemm = None
    if dnnl:
        try:
            gemm = perf_proc.onednn_report(dnnl)
        except OSError as e:
            gemm = {"version": "?", "kernels": f"not asked: {e}", "source": dnnl}
    shapes = plan_gemm_libraries(os.path.dirname(stages[0]))
    onednn = f"oneDNN {gemm['version']} {gemm['kernels']}" if gemm else None
    # The library that runs most of the plan's GEMM shapes (without a
    # measured choice, pdrt's default: oneDNN only with AVX-512).
    if shapes:
        on_dnn = bool(gemm) and shapes.get("onednn", 0) >= shapes.get("openblas", 0)
        parts = [f"{name} ({shapes[key]} measured GEMM shapes)" if key in shapes else name
                 for key, name in (("openblas", openblas), ("onednn", onednn)) if name]
        summary = "; ".join(parts)
    else:
        on_dnn = bool(gemm) and core_has_avx512(gemm)
        first, second = (onednn, openblas) if on_dnn else (openblas, onednn)
        summary = "; ".join([f"{first} (GEMM, pdrt's default)"] + ([second] if second else []))
    return {"library": "oneDNN" if on_dnn else "OpenBLAS", "gemm_shapes": shapes,
            "version": gemm["version"] if on_dnn else version,
            "kernels": gemm["kernels"] if on_dnn else core,
            "openblas": openblas, "threads": int(env["OPENBLAS_NUM_THREADS"]),
            "mapped": mapped, "rank_threads": watcher.threads,
            "summary": summary,
            "source": "stage0 --blas-core; /proc/PID/maps of the running ranks; "
                      + (gemm["source"] + "; " if gemm else "")
                      + "OPENBLAS_NUM_THREADS of the ranks"}


def pdc_run(args, model, d, plan):
    """Train the d-stage pdc plan in plan, watching its ranks' memory."""
    stages = [os.path.join(plan, f"stage{k}") for k in range(d)]
    with perf_proc.ExecutableWatcher(stages) as watcher:
        out = run_process([os.path.join(plan, "run"), "--steps", str(args.steps),
                           "--data", model.data, "--log-every", "1"],
                          child_env(args), args.timeout)
    seconds, loss = pdc_steps(args, out)
    return {"median_s": statistics.median(seconds[args.warmup:]), "step_s": seconds,
            "loss_step1": loss,
            "peak_rss_kib": [watcher.peak_kib.get(s) for s in stages],
            "blas": pdc_blas(args, stages, watcher),
            "split_gemms": plan_splits(plan)}


def plan_splits(plan):
    """The GEMMs the plan's planner split at its stage cuts (plan.json
    split_gemms: op id and rows before the cut)."""
    with open(os.path.join(plan, "plan.json")) as f:
        return json.load(f).get("split_gemms", [])


def pdc_steps(args, out):
    """The step times (seconds) and step 1's loss a plan's run printed."""
    steps = PDC_STEP_RE.findall(out)
    if len(steps) <= args.warmup:
        raise SideFailed(f"run printed {len(steps)} step lines: {last_line(out)}")
    return [float(ms) / 1e3 for _, _, ms in steps], float(steps[0][1])


def pdc_copies_run(args, model, plan, copies):
    """`copies` runs of the one-stage plan at once, each pinned to a core
    of its own (taskset; mpirun told not to bind): what this machine gives
    as many independent processes as a d-stage pipeline has ranks, sharing
    its caches and memory bandwidth as the pipeline's ranks do. A step
    lasts as long as the slower copy's."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < copies:
        raise SideFailed(f"needs {copies} cores, this process may use {len(cores)}")
    if not shutil.which("taskset"):
        raise SideFailed("taskset (util-linux) not found")
    stage = os.path.join(plan, "stage0")
    cmds = [["taskset", "-c", str(core), os.path.join(plan, "run"),
             "--steps", str(args.steps), "--data", model.data, "--log-every", "1",
             "--", "--bind-to", "none"] for core in cores[:copies]]
    with perf_proc.ExecutableWatcher([stage]) as watcher:
        outs = run_together(cmds, child_env(args), args.timeout)
    runs = [pdc_steps(args, out) for out in outs]
    step_s = [max(ts) for ts in zip(*(seconds for seconds, _ in runs))]
    return {"median_s": max(statistics.median(s[args.warmup:]) for s, _ in runs),
            "step_s": step_s, "loss_step1": runs[0][1],
            "peak_rss_kib": [watcher.peak_kib.get(stage)],
            "blas": pdc_blas(args, [stage], watcher)}


def side_pdc(args, model):
    """pdc plans at d=1 and d=2 for every --pdc-schedules schedule, and two
    runs of the d=1 2bw plan at once (what two processes get of the
    machine)."""
    jobs = []
    for d in (1, 2):
        for schedule in args.pdc_schedules.split(","):
            baseline = ("pdc", schedule) if d > 1 else None
            jobs.append((new_row(model, "pdc", d, schedule, baseline),
                         pdc_measure(args, model, d, schedule)))
    if "2bw" in args.pdc_schedules.split(","):
        jobs.append((new_row(model, "pdc", 2, COPIES_SCHEDULE, ("pdc", "2bw"), copies=2),
                     pdc_measure(args, model, 1, "2bw", copies=2)))
    return jobs


def pdc_measure(args, model, d, schedule, copies=1):
    """A round of one pdc configuration (`copies` > 1: that many runs of
    the plan at once): the first compiles its plan."""
    plan = os.path.join(model.dir, f"pdc-d{d}-{schedule}" +
                        (f"-{copies}-copies" if copies > 1 else ""))
    compiled = False
    def measure():
        nonlocal compiled
        if not compiled:
            compile_plan(args, model, d, schedule, plan)
            compiled = True
        if copies > 1:
            return pdc_copies_run(args, model, plan, copies)
        return pdc_run(args, model, d, plan)
    return measure


def pdc_op_profile(args, model):
    """Where pdc d=1 2bw's step goes: its plan compiled with
    --instrument-ops and run once with --profile-ops; the GEMM ops, the
    other ops, the optimizer update and the rest of the step (data
    loading, the runtime) in seconds per step, and the costliest other op
    kinds."""
    plan = os.path.join(model.dir, "pdc-d1-2bw-instrumented")
    times = os.path.join(model.dir, "op-times.json")
    try:
        compile_plan(args, model, 1, "2bw", plan, "--instrument-ops")
        out = run_process([os.path.join(plan, "run"), "--steps", str(args.steps),
                           "--data", model.data, "--log-every", "1",
                           "--profile-ops", times], child_env(args), args.timeout)
        ops, ranks = op_report.load(plan, times)
    except (SideFailed, OSError, ValueError, KeyError) as err:
        return {"status": f"did not run: {err}"}
    steps = [float(ms) / 1e3 for _, _, ms in PDC_STEP_RE.findall(out)]
    if len(steps) < 2:
        return {"status": f"run printed {len(steps)} step lines"}
    report = op_report.summarize(ops, ranks)[0]
    m = model.config["microbatches"]
    per_step = lambda ms: ms * m / 1e3
    total = per_step(report["microbatch_ms"])
    share = report["share"]
    other = [o for o in report["ops"] if op_report.kind(o["op"]) == "other"]
    # The op times leave out the first step: so does the step time.
    return {"status": "ok", "step_s": statistics.mean(steps[1:]),
            "gemm_s": total * share.get("gemm", 0.0),
            "other_ops_s": total * share.get("other", 0.0),
            "ops_s": total,
            "update_s": (report["update_ms"] or 0.0) / 1e3,
            "top_other": [{"op": o["op"], "function": o["function"],
                           "s": per_step(o["ms_per_microbatch"])} for o in other[:6]]}


def export_model(args, model):
    """Export the GPT at the microbatch size (opset 17) and write its dataset
    (4 global batches) with examples/gpt/export.py under torch 1.13."""
    os.makedirs(model.dir, exist_ok=True)
    # Op costs are measured afresh with this build's kernels (compile_plan).
    shutil.rmtree(os.path.join(model.dir, "op-profiles"), ignore_errors=True)
    run_process([args.torch113_python, EXPORTER, "--quiet", "--opset", "17",
                 "--out", model.onnx, "--samples", str(4 * model.global_batch),
                 *model.export_args()], child_env(args), args.timeout)


def plan_flops(args, model):
    """FLOPs per step of the d=1 plan: forward + backward of its stage per
    microbatch (plan.json stage_ops) times m; None if pdc fails."""
    plan = os.path.join(model.dir, "flops-plan")
    try:
        compile_plan(args, model, 1, "flush", plan, "--plan-only")
    except SideFailed:
        return None
    with open(os.path.join(plan, "plan.json")) as f:
        ops = json.load(f)["stage_ops"]
    # The dense model's work: a causal GEMM's skipped blocks count, as
    # every other side computes them.
    per_microbatch = sum(s["forward_flops"] + s["backward_flops"] +
                         s.get("skipped_flops", 0) for s in ops)
    return per_microbatch * model.config["microbatches"]


def sgemm_rates(args):
    """Single-thread sgemm GFLOP/s of each side's GEMM library: each torch's
    BLAS (torch 1.13: OpenBLAS; the venv's torch: MKL) and oneDNN's, which
    pdc runs."""
    rates = {}
    for name, python, mode in (("torch 1.13", args.torch113_python, "sgemm"),
                               ("torch 2.x", args.venv_python, "sgemm"),
                               ("oneDNN (pdc)", args.torch113_python, "dnnl-sgemm")):
        cmd = [python, WORKER, mode, "--gemm-size", str(args.gemm_size),
               "--steps", str(args.steps), "--threads", str(args.threads)]
        try:
            rates[name] = run_ranks([cmd], child_env(args), args.timeout)[0]
        except SideFailed as err:
            rates[name] = {"error": str(err)}
    return rates


def best_rate(*measurements):
    """The best GFLOP/s of any library in any of the measurements."""
    rates = [g["gflops"] for m in measurements for g in m.values() if "gflops" in g]
    return max(rates) if rates else None


def finish_rows(rows, flops, roofline_gflops, global_batch):
    """Add samples/s, pipeline efficiency against the row's baseline and the
    fractions of the GEMM roofline."""
    ok = {(r["side"], r["schedule"]): r for r in rows
          if r["status"] == "ok" and r["d"] == 1}
    for row in rows:
        if row["status"] != "ok":
            continue
        copies = row.get("copies", 1)
        row["samples_per_s"] = copies * global_batch / row["median_s"]
        base = ok.get(tuple(row["baseline"])) if row["baseline"] else None
        if base:
            row["efficiency"] = copies * base["median_s"] / (row["d"] * row["median_s"])
        if flops and roofline_gflops:
            row["roofline"] = copies * flops / (roofline_gflops * 1e9) / row["median_s"]
            row["roofline_per_process"] = row["roofline"] / row["d"]
        if flops and row.get("host_gflops"):
            # Against the rate the quiet gate measured just before each round's run.
            row["host_rate_fraction"] = [g and copies * flops / (g * 1e9) / t for g, t in
                                    zip(row["host_gflops"], row["round_median_s"])]


def loadavg():
    """The 1-, 5- and 15-minute load averages."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def write_outputs(args, result):
    """Print the markdown and write it and the JSON to --out-md and --out-json."""
    text = perf_report.markdown(result)
    print(text)
    for path, content in ((args.out_md, text),
                          (args.out_json, json.dumps(result, indent=1) + "\n")):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            f.write(content)
    print(f"wrote {args.out_md} and {args.out_json}; work dir {args.work_dir}")
    if args.write_readme:
        perf_report.write_readme(args.write_readme, result)
        print(f"updated the performance table of {args.write_readme}")


def main():
    args = parse_args()
    benchlib.make_work_dir(args, "perf-suite")
    sides = {"torch113": side_torch113, "torch2": side_torch2,
             "pipelining": side_pipelining, "pdc": side_pdc}
    result = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
              "cpu": perf_proc.cpu_model(), "loadavg_start": loadavg(),
              "settings": {"steps": args.steps, "warmup": args.warmup, "lr": args.lr,
                           "optimizer": OPTIMIZER, "threads": args.threads, "rounds": args.rounds,
                           "pdc_costs": args.pdc_costs,
                           "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "unset")}}
    print("measuring the single-thread sgemm rate", flush=True)
    result["sgemm"] = sgemm_rates(args)
    result["models"] = []
    gate = QuietGate(args, best_rate(result["sgemm"]))
    for model in chosen_models(args):
        print(f"{model.name}: {model.config}", flush=True)
        try:
            export_model(args, model)
        except SideFailed as err:
            raise SystemExit(f"examples/gpt/export.py failed: {err}")
        flops = plan_flops(args, model)
        jobs = [job for side in args.sides.split(",") for job in sides[side](args, model)]
        rounds = args.rounds[model.name]
        for r in range(rounds):
            print(f"round {r + 1} of {rounds}", flush=True)
            for row, measure in round_order(jobs, r):
                run_round(row, measure, gate)
        rows = [merge_rounds(row) for row, _ in jobs]
        entry = {"name": model.name, "config": model.config,
                 "flops_per_step": flops, "rounds": rounds,
                 "rows": rows, "global_batch": model.global_batch}
        if "pdc" in args.sides.split(","):
            print("pdc d=1 with its ops timed", flush=True)
            entry["pdc_op_profile"] = pdc_op_profile(args, model)
        result["models"].append(entry)
    # Measured again at the end: on a shared machine one measurement can
    # fall in a slow spell and understate the roofline.
    print("measuring the single-thread sgemm rate again", flush=True)
    result["sgemm_end"] = sgemm_rates(args)
    result["roofline_gflops"] = best_rate(result["sgemm"], result["sgemm_end"])
    if args.quiet_gate > 0:
        result["quiet_gate"] = gate.summary()
    for m in result["models"]:
        finish_rows(m["rows"], m["flops_per_step"], result["roofline_gflops"],
                    m["global_batch"])
    result["loadavg_end"] = loadavg()
    write_outputs(args, result)


if __name__ == "__main__":
    main()
