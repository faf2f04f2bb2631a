#!/usr/bin/env python3
"""Run the ONNX backend node tests (Debian's libonnx-testdata) through pdc:
their outputs against onnx's expected values, and the gradients of a loss
built on them against float64 autograd.

pdc compiles training graphs whose single output is a scalar f32 loss, so
each node test (model.onnx + test_data_set_0/{input,output}_*.pb) becomes a
RESIDUAL graph:

    inputs     float test inputs become trainable parameters (float
               initializers, never folded, so the kernels run); integer ones
               become integer initializers and bool ones Constant nodes
               (constants); shape-like operands (Reshape's shape, Slice's
               starts, axes, Dropout's ratio, Pow's exponent, ...) are
               constants whatever their type
    for every output Y_i with expected E_i (bool and integer outputs Cast to f32):
               D_i = (Y_i + P_i) - E_i
               with P_i a zero parameter (the probe) and E_i an initializer
    loss       (sum_i ReduceSum(D_i * D_i) + sum_i ReduceSum((Y_i - E_i) * R_i))
               * (1 / count), count = elements of all E_i, R_i a constant
               N(0, 1) * max(1, max |E_i|) (seeded by the test's name) for
               the float outputs (no term for bool and integer ones)

Residual graphs of tests with the same opset are placed side by side (names
prefixed c<k>_) in one model whose loss is the sum of their losses, with a
zero-weighted dummy graph input (pdc trains on data), and compiled with
`pdc --stages 1 --microbatches 1 --microbatch 1 --schedule flush` and run for
one step with `run --dump-grads`: one compile and one MPI launch serve many
tests (test inputs of any shape can share a plan because none of them is
a graph input; the per-sample data path is covered by the E2E tests). The
loss is computed before any update.

Outputs. The gradient of the loss with respect to P_i is 2 D_i / count (the
linear term does not read P_i), so the dump holds every error tensor
Y_i - E_i. A test passes when every element satisfies onnx's backend rule
|Y - E| <= atol + rtol * |E| (numpy's assert_allclose, rtol 1e-3, atol 1e-7);
the errors must also reproduce the printed loss of their group
(sum (D^2 + D R) / count: Y - E is D exactly, Y + 0 being Y).

Gradients. The dump also holds the gradient of the loss with respect to every
float test input, J_i^T (2 D_i + R_i) / count summed over the outputs. The
linear term is what makes it a test: D alone is float32 round-off (often
exactly 0), and so would J^T D be; R makes the cotangent O(1) and dominant
(2 D / R ~ 1e-7). The reference evaluates the same residual sub-graph of the
case (without the other cases and the dummy input) with the torch ONNX
interpreter of test/helpers/onnx_torch in float64, the test inputs as
float64 leaf tensors, and takes torch autograd's gradients. Its outputs must
match onnx's expected values within the rule above first (the probes' float64
gradients), else the test has no reference. Every element of every checked
gradient must satisfy

    |g_pdc - g_ref| <= grad_atol * max |g_ref| + grad_rtol * |g_ref|

with grad_atol 1e-4 (relative to the largest element of that tensor: a
float32 kernel's round-off scales with the tensor's magnitude, not with the
element's, e.g. the sums of a matmul or a normalization; to the largest of
the case's gradients when that tensor's are all 0) and grad_rtol 1e-3,
float32 kernels against a float64 reference; a FAIL names the worst element
(index, pdc's and the reference's value). Elements at a point where the loss
is not differentiable are left out and counted (`kinks:` line): those whose
reference gradient is not finite, or differs between x + h and x - h,
h = 1e-9 * max(|x_i|, 1e-3 max |x|) * u_i elementwise, u_i random with
|u_i| in [0.5, 1], by more than the tolerance (Relu at 0, Max/Min and
MaxPool ties, Pow of 0 with a fractional exponent); smooth gradients move by
O(h), far less. A test whose loss is piecewise constant in all its float
inputs (comparisons, IsNaN, Shape: torch has no autograd path) or that has
none is counted as not differentiable; a dumped gradient of such an input
must be 0. Inputs pdc imports as buffers, not parameters (BatchNormalization
statistics, docs/training-semantics.md), have no gradient and are noted. An
Identity of a test input is a copy, a parameter of its own (pdc's init_from,
the interpreter's _untie_copies): the copy's gradient is checked.

Each test is first compiled alone to LLVM IR (`--emit=llvm`, ~0.1 s): a clean
one-line rejection of an unsupported feature (pdc's "... not supported",
"unsupported ...", "only ... supported", element types) skips the test with
pdc's message, any other error fails it. A group that fails later (linking,
running) is bisected down to the failing tests. The references are computed
while pdc compiles (about 1 s for 400 tests).

Skipped without running: tests with an op that pdc does not import at the
test's opset (the dispatch tables `table["Op"] = {since, ...}` of
lib/Import/*.cpp), with element types other than f32/i64/i32/bool, zero-size
data tensors, random outputs. Tests of opset < 7 run at opset 7 (the
residual ops need it) when their ops did not change in between. Optional
outputs pdc does not compute (LayerNormalization Mean/InvStdDev, Dropout's
mask, SoftmaxCrossEntropyLoss's log_prob, training BatchNormalization's
running statistics) are left out of the check, and counted on the
`partial:` line.

Prints `conformance: N passed, M failed, K skipped (unsupported)`, then
`gradients: N checked, M failed, K not differentiable` (and the count of
tests without a reference, if any), the skip reasons with their counts, one
line per failure with its error (`FAIL test: ...`, `grad FAIL test: ...`),
with --verbose one line per passed test (`pass`, `grad pass`, `grad not
differentiable`) and with --list-skipped one line per skipped test; exits 1
when an output or a gradient fails.

Self-checks: --perturb S shifts every expected value by S times its
tolerance, --perturb-grads S makes pdc's gradient of every test input
1 + S (grad_rtol + grad_atol) times the true one (pdc's graph reads
x + (x - C) (factor - 1), C a constant equal to x: the same values); S > 1
must fail every test (every differentiable one), S < 1 pass it.
Runs under /usr/bin/python3 (Debian's onnx 1.12, numpy and, for the
gradients, torch 1.13).
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile


try:
    import numpy as np
    import onnx
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

HERE = os.path.dirname(os.path.abspath(__file__))
# The sibling modules (importable under the /usr/bin/python3 fallback too).
sys.path.insert(0, HERE)
from node_cases import Skip, group_model, prepare, supported_ops  # noqa: E402
from node_reference import load_torch, torch_reference  # noqa: E402
from node_report import compare, compare_grads, report  # noqa: E402

DEFAULT_ROOT = "/usr/share/libonnx-testdata/data/node"
DEFAULT_IMPORT_SRC = os.path.join(HERE, "..", "..", "lib", "Import")

# pdc's clean rejections of a feature it does not support (one error line).
REJECTION = re.compile(r"^pdc: error: .*(unsupported|not supported|only .*"
                       r"(supported|constant)|element type|must be a scalar|"
                       r"must be a compile-time constant)")


# ----------------------------------------------------------------------------
# Compiling and running
# ----------------------------------------------------------------------------

class CommandError(Exception):
    """A command failed; the message is its last error line."""


def run_command(cmd, timeout):
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CommandError(f"{os.path.basename(cmd[0])} timed out after {timeout:.0f} s")
    if proc.returncode != 0:
        lines = [l for l in (proc.stderr + proc.stdout).splitlines() if l.strip()]
        raise CommandError(lines[-1] if lines else
                           f"{os.path.basename(cmd[0])} exited with {proc.returncode}")
    return proc.stdout


PDC_FLAGS = ["--stages", "1", "--microbatches", "1", "--microbatch", "1",
             "--schedule", "flush", "--optimizer", "sgd", "--lr", "1"]


def precheck(args, case):
    """Compile one case to LLVM IR; returns None, or (status, message)."""
    work = tempfile.mkdtemp(prefix=case.name + "-", dir=args.work_dir)
    try:
        path = os.path.join(work, "model.onnx")
        onnx.save(group_model([case]), path)
        run_command([args.pdc, path, "--emit=llvm"] + PDC_FLAGS, args.timeout)
        return None
    except CommandError as err:
        message = str(err)
        if REJECTION.match(message):
            # "node 'c7_y' (Op, domain 'ai.onnx'): what" -> "Op: what"
            what = re.sub(r"^node '[^']*' \((\w+), domain '[^']*'\)", r"\1",
                          message[len("pdc: error: "):])
            return "skip", "rejected by pdc: " + re.sub(r"\bc\d+_", "", what)
        return "fail", message
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_group(args, cases):
    """Compile and run cases together; returns ({name: (status, message)},
    {name: {test input: pdc's gradient}})."""
    work = tempfile.mkdtemp(prefix=f"opset{cases[0].opset}-", dir=args.work_dir)
    try:
        path, data, grads_dir, plan = (os.path.join(work, d) for d in
                                       ("model.onnx", "data", "grads", "plan"))
        os.makedirs(data)
        os.makedirs(grads_dir)
        onnx.save(group_model(cases), path)
        np.save(os.path.join(data, "dummy.npy"), np.zeros([1, 1], np.float32))
        run_command([args.pdc, path, "-o", plan] + PDC_FLAGS, args.timeout)
        out = run_command([os.path.join(plan, "run"), "--steps", "1",
                           "--dump-grads", grads_dir, "--data", data], args.timeout)
        found = re.search(r"^step 1 loss (\S+)", out, re.M)
        if not found:
            raise CommandError("run printed no loss for step 1")
        grads = {f[:-4].replace("__", "/"): np.load(os.path.join(grads_dir, f))
                 for f in os.listdir(grads_dir) if f.endswith(".npy")}
    except CommandError as err:
        if len(cases) == 1:
            return {cases[0].name: ("fail", str(err))}, {}
        half = len(cases) // 2          # bisect down to the failing tests
        (r1, g1), (r2, g2) = run_group(args, cases[:half]), run_group(args, cases[half:])
        return {**r1, **r2}, {**g1, **g2}
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    results, losses = {}, []
    for case in cases:
        status, message, loss = compare(case, grads, args.rtol, args.atol)
        results[case.name] = (status, message)
        losses.append(loss)
    printed = float(found.group(1))
    if all(l is not None for l in losses) and not (
            abs(sum(losses) - printed) <= 1e-4 * abs(printed) + 1e-6):
        message = (f"printed loss {printed:.6g} but the probe gradients give "
                   f"{sum(losses):.6g}")
        results = {c.name: ("fail", message) for c in cases}
    return results, {c.name: {n: g for n, g in grads.items()
                               if n.startswith(f"c{c.index}_")} for c in cases}


# ----------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pdc", required=True, help="path of the pdc compiler")
    p.add_argument("--root", default=DEFAULT_ROOT, help="directory of test_* cases")
    p.add_argument("--import-src", default=DEFAULT_IMPORT_SRC,
                   help="pdc's lib/Import (its dispatch tables list the supported ops)")
    p.add_argument("--filter", default="", help="run only tests matching this regex")
    p.add_argument("--jobs", type=int, default=2, help="commands run in parallel")
    p.add_argument("--group-size", type=int, default=40,
                   help="tests compiled into one plan (1: one plan per test)")
    p.add_argument("--rtol", type=float, default=1e-3)
    p.add_argument("--atol", type=float, default=1e-7)
    p.add_argument("--perturb", type=float, default=0.0, metavar="S",
                   help="self-check: shift every expected value by S times its "
                   "tolerance (S > 1 must fail every test, S < 1 pass it)")
    p.add_argument("--grad-rtol", type=float, default=1e-3)
    p.add_argument("--grad-atol", type=float, default=1e-4,
                   help="times max |g_ref| of the tensor")
    p.add_argument("--kink-step", type=float, default=1e-9,
                   help="relative step of the kink detection")
    p.add_argument("--perturb-grads", type=float, default=0.0, metavar="S",
                   help="self-check: scale pdc's gradient of every test input by "
                   "1 + S (grad_rtol + grad_atol) (S > 1 must fail every "
                   "differentiable test, S < 1 pass it)")
    p.add_argument("--no-grads", action="store_true",
                   help="check the outputs only")
    p.add_argument("--timeout", type=float, default=300, help="seconds per command")
    p.add_argument("--work-dir", help="parent of the temporary directories")
    p.add_argument("--keep", action="store_true", help="keep the plans of the groups")
    p.add_argument("--verbose", action="store_true", help="print every passed test")
    p.add_argument("--list-skipped", action="store_true",
                   help="print every skipped test with its reason")
    return p.parse_args()


def prepare_all(args, table):
    """Returns (runnable cases, {name: (status, message)} of the others)."""
    dirs = sorted(d for d in glob.glob(os.path.join(args.root, "test_*"))
                  if re.search(args.filter, os.path.basename(d)))
    cases, results = [], {}

    def shift(want):
        bound = args.atol + args.rtol * np.abs(want.astype(np.float32))
        return (args.perturb * bound).astype(np.float32)

    factor = 1.0 + args.perturb_grads * (args.grad_rtol + args.grad_atol)
    for index, case_dir in enumerate(dirs):
        try:
            cases.append(prepare(case_dir, table, index, shift, factor))
        except Skip as why:
            results[os.path.basename(case_dir)] = ("skip", str(why))
    return cases, results


def groups_of(cases, size):
    by_opset = collections.defaultdict(list)
    for case in cases:
        by_opset[case.opset].append(case)
    for opset in sorted(by_opset):
        group = by_opset[opset]
        count = -(-len(group) // size)
        for k in range(count):           # equal-sized chunks
            yield group[k * len(group) // count:(k + 1) * len(group) // count]


def main():
    args = parse_args()
    if args.work_dir:
        os.makedirs(args.work_dir, exist_ok=True)
    cases, results = prepare_all(args, supported_ops(args.import_src))
    refs, pdc_grads = {}, {}
    with concurrent.futures.ThreadPoolExecutor(max(args.jobs, 1)) as pool:
        checked = list(pool.map(lambda c: precheck(args, c), cases))
        runnable = []
        for case, verdict in zip(cases, checked):
            if verdict:
                results[case.name] = verdict
            else:
                runnable.append(case)
        groups = list(groups_of(runnable, max(args.group_size, 1)))
        futures = [pool.submit(run_group, args, g) for g in groups]
        if not args.no_grads:
            # The references, in this thread while pdc compiles and runs.
            load_torch()
            refs = {c.name: torch_reference(c, args) for c in runnable}
        for future in futures:
            outcome, grads = future.result()
            results.update(outcome)
            pdc_grads.update(grads)
    grad_results = {c.name: compare_grads(c, pdc_grads[c.name], refs[c.name], args)
                    for c in runnable if c.name in refs and c.name in pdc_grads}
    return report(results, grad_results, args)


if __name__ == "__main__":
    sys.exit(main())
