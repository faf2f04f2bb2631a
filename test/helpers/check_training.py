#!/usr/bin/env python3
"""End-to-end check of one pdc training run against the PyTorch oracle.

Compiles MODEL with pdc into a plan directory, trains it with PLAN/run
(--save-onnx), trains the same model with torch_reference.py on the same
batches, and compares every trained initializer (relative error
max|a-b| / max(max|b|, 1e-6 max over tensors of max|b|) per tensor, the max
over tensors must be <= --tol)
and every printed step loss (within 10 * --tol, relative to max(|ref|, 1)).
The saved state (BatchNormalization running statistics, updated by every
forward) is also compared on its own, within --state-tol.

Options add checks: --compare-to-replicas W2 also trains with W2 replicas on the
same global batch (m scaled by W/W2) and compares the two pdc runs;
--check-memory checks that each stage's printed arena size equals
plan.json's memory_bytes[k].total; --check-ties runs with --check-ties (tied
copies bitwise identical at the end) and prints plan.json's tied parameters;
--compare-recompute also trains with --recompute full and requires
bitwise identical weights, state and losses, and a stash (plan.json
memory_bytes[k].stash) no larger on any stage and smaller on some (both
runs again with --split-gemms=false where the planner splits a GEMM
differently with recomputation: a split computes other bits);
--check-saved runs onnx.checker on the saved model and evaluates it with the
torch interpreter on the first microbatch, which must give the loss of the
reference model at its trained weights.

Prints PASS or FAIL (last line); exits 1 on failure. Runs under /usr/bin/python3.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import torch
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_reference  # noqa: E402

STEP_RE = re.compile(r"^step (\d+) loss (\S+)", re.M)
MEMORY_RE = re.compile(r"^memory stage=(\d+) arena=(\d+)", re.M)


class CheckFailure(Exception):
    """A failed check; its message says what differed."""


def parse_args():
    """Parse the command line (the training arguments are torch_reference's)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pdc", required=True, help="path of the pdc compiler")
    torch_reference.add_training_args(p)
    p.add_argument("--stages", type=int, required=True, help="pipeline depth d")
    p.add_argument("--tol", type=float, default=1e-4)
    p.add_argument("--reference-dtype", choices=("float32", "float64"),
                   default="float32",
                   help="precision of the torch reference; with float64 the "
                   "reference is also run in float32, and a tensor whose error "
                   "exceeds --tol passes when it is within twice torch's own "
                   "float32 error (ReLU decisions within float32 round-off of 0 "
                   "make some models' trajectories differ in float32)")
    p.add_argument("--state-tol", type=float, default=1e-5,
                   help="tolerance of the saved state (BatchNormalization "
                   "running statistics), also within --tol")
    p.add_argument("--compare-to-replicas", type=int, metavar="W2",
                   help="also run with W2 replicas on the same global batch")
    p.add_argument("--compare-recompute", action="store_true",
                   help="also train with --recompute full; require identical results")
    p.add_argument("--check-memory", action="store_true",
                   help="check printed arena bytes against plan.json")
    p.add_argument("--check-ties", action="store_true",
                   help="make the run fail unless tied copies stay identical")
    p.add_argument("--check-saved", action="store_true",
                   help="check the saved model with onnx.checker and evaluate it")
    p.add_argument("--dim", action="append", default=[], metavar="NAME=N",
                   help="size of a symbolic input dimension, passed to pdc")
    p.add_argument("--work-dir", help="keep plans and outputs here (default: a "
                   "temporary directory, removed afterwards)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per command")
    return p.parse_args()


def run_command(cmd, timeout, what, forbidden=()):
    """Run cmd; return its stdout, or raise CheckFailure with its output (also
    when its stderr contains one of the `forbidden` strings)."""
    print("+ " + " ".join(cmd), flush=True)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CheckFailure(f"{what} timed out after {timeout:.0f} s")
    except OSError as err:
        raise CheckFailure(f"{what} could not start: {err}")
    if proc.returncode != 0:
        raise CheckFailure(f"{what} exited with {proc.returncode}\n"
                           f"--- stdout ---\n{proc.stdout}--- stderr ---\n{proc.stderr}")
    for text in forbidden:
        if text in proc.stderr:
            raise CheckFailure(f"{what} printed '{text}'\n--- stderr ---\n{proc.stderr}")
    return proc.stdout


def compile_plan(args, plan_dir, replicas, microbatches, recompute="none",
                 extra=()):
    """Run pdc with every schedule and optimizer option given explicitly
    (and the options `extra`)."""
    cmd = [args.pdc, args.model, "-o", plan_dir, "--recompute", recompute,
           "--stages", str(args.stages), "--replicas", str(replicas),
           "--microbatch", str(args.microbatch), "--microbatches", str(microbatches),
           "--schedule", args.schedule, "--optimizer", args.optimizer,
           "--lr", repr(args.lr), "--momentum", repr(args.momentum),
           "--beta1", repr(args.beta1), "--beta2", repr(args.beta2),
           "--eps", repr(args.eps), "--weight-decay", repr(args.weight_decay)]
    cmd += [f"--dim={d}" for d in args.dim] + list(extra)
    # The planner's stage model must equal the compiled plan on every model.
    run_command(cmd, args.timeout, "pdc",
                forbidden=["memory and time model differs"])
    with open(os.path.join(plan_dir, "plan.json")) as f:
        plan = json.load(f)
    expected = {"stages": args.stages, "replicas": replicas,
                "microbatch": args.microbatch, "microbatches": microbatches,
                "schedule": args.schedule}
    for key, value in expected.items():
        if plan.get(key) != value:
            raise CheckFailure(f"plan.json {key} is {plan.get(key)!r}, expected {value!r}")
    return plan


def run_plan(args, plan_dir, out_onnx):
    """Train with PLAN/run; return its stdout."""
    cmd = [os.path.join(plan_dir, "run"), "--steps", str(args.steps),
           "--data", args.data, "--save-onnx", out_onnx, "--log-every", "1",
           "--seed", str(args.seed)]
    if args.check_memory:
        cmd.append("--print-memory")
    if args.check_ties:
        cmd.append("--check-ties")
    return run_command(cmd, args.timeout, "run")


def pdc_train(args, work_dir, replicas, microbatches, recompute="none",
              extra=()):
    """Compile (with the pdc options `extra`) and run one plan; return
    (plan, trained weights, losses, stdout)."""
    tag = f"w{replicas}-recompute-{recompute}" + "".join(
        "-" + e.lstrip("-").replace("=", "-") for e in extra)
    plan_dir = os.path.join(work_dir, "plan-" + tag)
    shutil.rmtree(plan_dir, ignore_errors=True)
    plan = compile_plan(args, plan_dir, replicas, microbatches, recompute, extra)
    out_onnx = os.path.join(work_dir, f"trained-{tag}.onnx")
    stdout = run_plan(args, plan_dir, out_onnx)
    weights = {t.name: numpy_helper.to_array(t)
               for t in onnx.load(out_onnx).graph.initializer}
    if args.check_saved:
        check_saved(args, out_onnx)
    return plan, weights, parse_losses(stdout, args.steps), stdout


def check_saved(args, saved):
    """The saved model is valid ONNX and computes the trained model's loss."""
    try:
        onnx.checker.check_model(onnx.load(saved), full_check=True)
    except onnx.checker.ValidationError as err:
        raise CheckFailure(f"saved model {saved} is not valid ONNX: {err}")
    data = torch_reference.load_data(args.data, torch_reference.OnnxModule(
        args.model).input_names)
    batch = torch_reference.step_microbatches(data, 0, args.microbatch, 1)[0]
    got = torch_reference.OnnxModule(saved).loss({}, batch).item()
    ref = torch_reference.evaluate(args.model, args.saved_reference, batch)
    if not abs(got - ref) <= args.tol * max(abs(ref), 1.0):
        raise CheckFailure(f"saved model: loss {got} on the first microbatch, "
                           f"the reference model at its trained weights gives {ref}")
    print(f"saved model: valid ONNX, first-microbatch loss {got:.6f} matches")


def parse_losses(stdout, steps):
    """Return the losses of steps 1..steps printed by run."""
    losses = {int(s): float(v) for s, v in STEP_RE.findall(stdout)}
    missing = [s for s in range(1, steps + 1) if s not in losses]
    if missing:
        raise CheckFailure(f"run printed no loss for steps {missing}\n{stdout}")
    return [losses[s] for s in range(1, steps + 1)]


# A tensor whose reference values stay below this fraction of the model's
# largest weight holds round-off, not signal (an attention key bias: its
# gradient is 0 in exact arithmetic, ~1e-12 in float32); its error is
# measured against that floor instead of its own magnitude.
ROUNDOFF_FLOOR = 1e-6


def compare_weights(got, ref, tol, label, spread=None):
    """Check every initializer of ref against got; print the max relative
    error, max|a-b| / max(max|b|, ROUNDOFF_FLOOR * the largest |b| of all
    tensors). With `spread` (torch's own float32 weights), a tensor also
    passes when its error is within twice torch's float32 error against
    ref."""
    missing = sorted(set(ref) - set(got))
    if missing:
        raise CheckFailure(f"{label}: trained model lacks initializers {missing}")
    errors, forgiven = {}, set()
    floor = ROUNDOFF_FLOOR * max(float(np.max(np.abs(w))) for w in ref.values())
    for name, want in ref.items():
        if got[name].shape != want.shape:
            raise CheckFailure(f"{label}: {name} has shape {got[name].shape}, "
                               f"expected {want.shape}")
        scale = float(np.max(np.abs(want)))
        errors[name] = float(np.max(np.abs(got[name] - want))) / max(scale, floor)
        if spread is not None and errors[name] > tol:
            own = torch_reference.max_relative_error({name: spread[name]},
                                                     {name: want})
            if errors[name] <= 2 * own:
                print(f"{label}: {name} {errors[name]:.3e} is float32 round-off "
                      f"(torch float32 {own:.3e})")
                forgiven.add(name)
    worst = max(errors, key=lambda n: (n not in forgiven, errors[n]))
    if worst in forgiven:
        print(f"{label}: every tensor is within float32 round-off")
        return
    print(f"{label}: max relative error {errors[worst]:.3e} over {len(errors)} "
          f"tensors (worst {worst})")
    if not errors[worst] <= tol:
        raise CheckFailure(f"{label}: {worst} differs by {errors[worst]:.3e} > {tol}")


def compare_losses(got, ref, tol, label):
    """Check per-step losses within tol relative to max(|ref|, 1)."""
    for step, (a, b) in enumerate(zip(got, ref), start=1):
        if not abs(a - b) <= tol * max(abs(b), 1.0):
            raise CheckFailure(f"{label}: step {step} loss {a} vs {b} (tol {tol})")
    print(f"{label}: {len(ref)} step losses match, {ref[0]:.6f} -> {ref[-1]:.6f}")


def compare_recompute(args, work_dir, plan, weights, losses):
    """--recompute full trains bitwise identically with a smaller stash.
    A GEMM split by rows at a stage cut computes its halves with other BLAS
    calls than the whole (other bits), so where the planner splits GEMMs
    differently with recomputation (its stage costs differ), both runs are
    made again with --split-gemms=false."""
    plan2, weights2, losses2, _ = pdc_train(args, work_dir, args.replicas,
                                            args.microbatches, "full")
    splits = (plan.get("split_gemms", []), plan2.get("split_gemms", []))
    if splits[0] != splits[1]:
        print(f"recompute: the planner splits GEMMs {splits[1]} with it and "
              f"{splits[0]} without; both again with --split-gemms=false")
        same = ("--split-gemms=false",)
        plan, weights, losses, _ = pdc_train(
            args, work_dir, args.replicas, args.microbatches, "none", same)
        plan2, weights2, losses2, _ = pdc_train(
            args, work_dir, args.replicas, args.microbatches, "full", same)
    if plan2["recompute"] != ["full"] * args.stages:
        raise CheckFailure(f"plan.json recompute is {plan2['recompute']}")
    for name, value in weights.items():
        if not np.array_equal(value, weights2[name]):
            raise CheckFailure(f"recompute: {name} differs from the run without "
                               f"(max |diff| {np.abs(value - weights2[name]).max():.3g})")
    if losses != losses2:
        raise CheckFailure(f"recompute: losses {losses2} differ from {losses}")
    before = [m["stash"] for m in plan["memory_bytes"]]
    after = [m["stash"] for m in plan2["memory_bytes"]]
    if any(a > b for a, b in zip(after, before)) or after == before:
        raise CheckFailure(f"recompute: stash bytes {after} vs {before} without")
    print(f"recompute: bitwise identical; stash bytes per stage {before} -> {after}")


def check_memory(plan, stdout):
    """Check each stage's printed arena bytes against plan.json's total."""
    totals = [entry["total"] for entry in plan["memory_bytes"]]
    if len(totals) != plan["stages"]:
        raise CheckFailure(f"plan.json memory_bytes has {len(totals)} entries for "
                           f"{plan['stages']} stages")
    seen = set()
    for stage, arena in MEMORY_RE.findall(stdout):
        stage, arena = int(stage), int(arena)
        if stage >= len(totals) or arena != totals[stage]:
            raise CheckFailure(f"stage {stage} arena {arena} bytes, plan.json says "
                               f"{totals[stage] if stage < len(totals) else 'nothing'}")
        seen.add(stage)
    if seen != set(range(len(totals))):
        raise CheckFailure(f"no memory line for stages {sorted(set(range(len(totals))) - seen)}")
    print(f"memory: arena bytes per stage {totals} match plan.json")


def report_ties(plan):
    """Print plan.json's tied parameters (run --check-ties checked them)."""
    ties = plan.get("tied", [])
    print("tied: " + (", ".join(f"{t['name']} on stages {t['owners']}"
                                for t in ties) or "none"))


def scaled_microbatches(args, replicas):
    """Return m that keeps the global batch b*m*W with W = replicas."""
    total = args.microbatches * args.replicas
    if total % replicas:
        raise CheckFailure(f"m*W = {total} is not divisible by {replicas} replicas")
    return total // replicas


def check(args, work_dir):
    """Run every requested check; raise CheckFailure on the first failure."""
    if args.compare_to_replicas:
        microbatches2 = scaled_microbatches(args, args.compare_to_replicas)
    def reference(dtype):
        return torch_reference.train(
            args.model, args.data, args.schedule, torch_reference.hyperparameters(args),
            args.microbatch, args.microbatches, args.replicas, args.steps,
            args.seed, dtype=dtype)
    spread = None
    try:
        if args.reference_dtype == "float64":
            ref_weights, ref_losses = reference(torch.float64)
            spread = reference(torch.float32)[0]
        else:
            ref_weights, ref_losses = reference(torch.float32)
    except (NotImplementedError, OSError, ValueError) as err:
        raise CheckFailure(f"torch reference: {err}")
    args.saved_reference = ref_weights
    plan, weights, losses, stdout = pdc_train(args, work_dir, args.replicas,
                                              args.microbatches)
    compare_weights(weights, ref_weights, args.tol, "pdc vs torch", spread)
    state = torch_reference.OnnxModule(args.model).state_names
    if state:
        compare_weights(weights, {n: ref_weights[n] for n in state},
                        args.state_tol, "running statistics")
    compare_losses(losses, ref_losses, 10 * args.tol, "pdc vs torch")
    if args.check_memory:
        check_memory(plan, stdout)
    if args.compare_recompute:
        compare_recompute(args, work_dir, plan, weights, losses)
    if args.check_ties:
        report_ties(plan)
    if args.compare_to_replicas:
        w2 = args.compare_to_replicas
        _, weights2, losses2, _ = pdc_train(args, work_dir, w2, microbatches2)
        compare_weights(weights2, weights, args.tol, f"pdc w={w2} vs w={args.replicas}")
        compare_losses(losses2, losses, 10 * args.tol, f"pdc w={w2} vs w={args.replicas}")


def main():
    args = parse_args()
    work_dir = args.work_dir or tempfile.mkdtemp(prefix="pdc-check-")
    os.makedirs(work_dir, exist_ok=True)
    try:
        check(args, work_dir)
    except CheckFailure as err:
        print(f"error: {err}", file=sys.stderr)
        print("FAIL")
        return 1
    finally:
        if not args.work_dir:
            shutil.rmtree(work_dir, ignore_errors=True)
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
