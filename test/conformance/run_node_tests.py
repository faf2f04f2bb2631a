#!/usr/bin/env python3
"""Run the ONNX backend node tests (Debian's libonnx-testdata) through pdc.

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
    loss       ReduceSum(sum_i D_i * D_i) * (1 / count), count = elements of all E_i

Residual graphs of tests with the same opset are placed side by side (names
prefixed c<k>_) in one model whose loss is the sum of their losses, with a
zero-weighted dummy graph input (pdc trains on data), and compiled with
`pdc --stages 1 --microbatches 1 --microbatch 1 --schedule flush` and run for
one step with `run --dump-grads`: one compile and one MPI launch serve many
tests (test inputs of any shape can share a plan because none of them is
a graph input; the per-sample data path is covered by the E2E tests). The
loss is computed before any update, and the gradient of the loss
with respect to P_i is 2 D_i / count, so the dump holds every error tensor
Y_i - E_i. A test passes when every element satisfies onnx's backend rule
|Y - E| <= atol + rtol * |E| (numpy's assert_allclose, rtol 1e-3, atol 1e-7);
the errors must also reproduce the printed loss of their group.

Each test is first compiled alone to LLVM IR (`--emit=llvm`, ~0.1 s): a clean
one-line rejection of an unsupported feature (pdc's "... not supported",
"unsupported ...", "only ... supported", element types) skips the test with
pdc's message, any other error fails it. A group that fails later (linking,
running) is bisected down to the failing tests.

Skipped without running: tests with an op that pdc does not import at the
test's opset (the dispatch tables `table["Op"] = {since, ...}` of
lib/Import/*.cpp), with element types other than f32/i64/i32/bool, zero-size
data tensors, random outputs. Tests of opset < 7 run at opset 7 (the
residual ops need it) when their ops did not change in between. Optional
outputs pdc does not compute (LayerNormalization Mean/InvStdDev, Dropout's
mask, SoftmaxCrossEntropyLoss's log_prob, training BatchNormalization's
running statistics) are left out of the check, and counted on the
`partial:` line.

Prints `conformance: N passed, M failed, K skipped (unsupported)`, then the
skip reasons with their counts, one line per failure with its error, and with
--list-skipped one line per skipped test; exits 1 when a test fails.
Runs under /usr/bin/python3 (Debian's onnx 1.12 and numpy).
"""
import argparse
import collections
import concurrent.futures
import dataclasses
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
    from onnx import TensorProto, helper, numpy_helper
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

DEFAULT_ROOT = "/usr/share/libonnx-testdata/data/node"
HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_IMPORT_SRC = os.path.join(HERE, "..", "..", "lib", "Import")

# Operand positions pdc needs as compile-time constants (they decide shapes
# or are attributes in disguise).
STATIC_OPERANDS = {
    "Reshape": {1}, "Slice": {1, 2, 3, 4}, "Split": {1}, "Squeeze": {1},
    "Unsqueeze": {1}, "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1},
    "Dropout": {1, 2}, "Pow": {1}, "Expand": {1}, "Tile": {1}, "Pad": {1, 2, 3},
    "Range": {0, 1, 2}, "ConstantOfShape": {0}, "TopK": {1}, "Clip": {1, 2},
    "Resize": {1, 2, 3},
}
# Outputs of training-only statistics or masks that pdc does not compute.
OPTIONAL_OUTPUTS = {"LayerNormalization": {1, 2}, "Dropout": {1},
                    "SoftmaxCrossEntropyLoss": {1}, "BatchNormalization": {1, 2}}
# The residual ops (Add, Sub, Mul, Cast, ReduceSum) need opset 7.
RESIDUAL_OPSET = 7
INPUT_TYPES = (np.float32, np.int64, np.int32, np.bool_)
INPUT_ELEM_TYPES = (TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32,
                    TensorProto.BOOL)
# ONNX generated these expected outputs with numpy's RNG (dropout masks at
# ratio > 0): no other implementation can reproduce them.
RANDOM_OUTPUT = re.compile(r"^test_training_dropout(_default)?(_mask)?$")
# pdc's clean rejections of a feature it does not support (one error line).
REJECTION = re.compile(r"^pdc: error: .*(unsupported|not supported|only .*"
                       r"(supported|constant)|element type|must be a scalar|"
                       r"must be a compile-time constant)")


class Skip(Exception):
    """The test is outside what pdc supports; the message says why."""


@dataclasses.dataclass
class Case:
    """One node test rewritten as a residual sub-graph."""
    name: str
    opset: int
    ir_version: int
    nodes: list
    inits: list
    probes: list          # [(probe parameter name, expected array)]
    count: int            # elements compared
    left_out: list        # optional outputs not checked
    index: int = 0        # prefix c<index>_ of its names


# ----------------------------------------------------------------------------
# Supported ops and test preparation
# ----------------------------------------------------------------------------

def supported_ops(import_src):
    """{op_type: first opset} from the importer's dispatch tables."""
    table = {}
    pattern = re.compile(r'table\["(\w+)"\]\s*=\s*\{\s*(\d+)')
    for path in glob.glob(os.path.join(import_src, "*.cpp")):
        with open(path) as f:
            for op, since in pattern.findall(f.read()):
                table[op] = int(since)
    if not table:
        raise SystemExit(f"error: no import tables found under {import_src}")
    return table


def opset_of(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 0


def residual_opset(model):
    """The test's opset, raised to RESIDUAL_OPSET when none of its ops changed
    in between (their semantics stay those of the test)."""
    opset = opset_of(model)
    if opset >= RESIDUAL_OPSET:
        return opset
    for n in model.graph.node:
        try:
            old = onnx.defs.get_schema(n.op_type, opset).since_version
            new = onnx.defs.get_schema(n.op_type, RESIDUAL_OPSET).since_version
        except onnx.defs.SchemaError:
            old, new = None, 0
        if old != new:
            raise Skip(f"op not supported at opset {opset} ({n.op_type} changed "
                       f"before opset {RESIDUAL_OPSET})")
    return RESIDUAL_OPSET


def check_ops(model, table):
    """Raise Skip unless pdc imports every node of model at its opset."""
    opset = residual_opset(model) if opset_of(model) else 0
    missing = sorted({n.op_type for n in model.graph.node
                      if n.domain not in ("", "ai.onnx") or n.op_type not in table})
    if missing or not opset:
        raise Skip("op not supported (" + ", ".join(missing) + ")")
    early = sorted({n.op_type for n in model.graph.node if opset < table[n.op_type]})
    if early:
        raise Skip(f"op not supported at opset {opset} ("
                   + ", ".join(f"{op} from {table[op]}" for op in early) + ")")


def load_tensors(case_dir, prefix):
    files = sorted(glob.glob(os.path.join(case_dir, "test_data_set_0", prefix + "_*.pb")),
                   key=lambda p: int(re.search(r"_(\d+)\.pb$", p).group(1)))
    out = []
    for path in files:
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        try:
            out.append(numpy_helper.to_array(t))
        except (ValueError, TypeError):
            raise Skip("type not supported (a sequence or optional value)")
    return out


def check_types(graph, inputs, expected):
    """Skip element types outside pdc's and zero-size tensors (but an empty
    shape-like operand, e.g. axes = [], is fine)."""
    for info, value in zip(list(graph.input) + list(graph.output), inputs + expected):
        # The declared type decides: onnx's to_array widens bfloat16 (and
        # float8) data to float32.
        declared = info.type.tensor_type.elem_type
        if declared and declared not in INPUT_ELEM_TYPES:
            raise Skip(f"type not supported ({TensorProto.DataType.Name(declared).lower()})")
        if value.dtype.type not in INPUT_TYPES:
            raise Skip(f"type not supported ({value.dtype})")
        if value.size == 0 and not is_static(graph, info.name):
            raise Skip("zero-size tensor")


def is_static(graph, name):
    return any(i in STATIC_OPERANDS.get(n.op_type, ()) for n in graph.node
               for i, x in enumerate(n.input) if x == name)


def constant_node(name, value):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(value, name))


def input_values(graph, inputs, p):
    """Initializers and Constant nodes that hold the test inputs."""
    nodes, inits = [], []
    for info, value in zip(graph.input, inputs):
        name = p + info.name
        if value.dtype == np.bool_ or (value.dtype == np.float32 and
                                      is_static(graph, info.name)):
            nodes.append(constant_node(name, value))
        else:
            inits.append(numpy_helper.from_array(value, name))
    return nodes, inits


def residual_tail(checked, p, shift):
    """Probe, expected value and squared-error nodes of the checked outputs.

    shift(E) is added to the expected values in the graph (the harness's
    self-check; zero normally)."""
    nodes, inits, probes, sums = [], [], [], []
    for i, (y, want) in checked:
        if want.dtype != np.float32:     # bool and integer outputs: exact in f32
            nodes.append(helper.make_node("Cast", [y], [f"{p}float_{i}"],
                                          to=TensorProto.FLOAT))
            y = f"{p}float_{i}"
        probe, exp, diff = f"{p}probe_{i}", f"{p}expected_{i}", f"{p}diff_{i}"
        inits += [numpy_helper.from_array(np.zeros(want.shape, np.float32), probe),
                  numpy_helper.from_array(want.astype(np.float32) + shift(want), exp)]
        nodes += [helper.make_node("Add", [y, probe], [f"{p}probed_{i}"]),
                  helper.make_node("Sub", [f"{p}probed_{i}", exp], [diff]),
                  helper.make_node("Mul", [diff, diff], [f"{p}square_{i}"]),
                  helper.make_node("ReduceSum", [f"{p}square_{i}"], [f"{p}sum_{i}"],
                                   keepdims=0)]
        probes.append((probe, want))
        sums.append(f"{p}sum_{i}")
    total = sums[0]
    for j, s in enumerate(sums[1:]):
        nodes.append(helper.make_node("Add", [total, s], [f"{p}total_{j}"]))
        total = f"{p}total_{j}"
    count = sum(w.size for _, w in probes)
    nodes += [constant_node(f"{p}inverse_count", np.array(1.0 / count, np.float32)),
              helper.make_node("Mul", [total, f"{p}inverse_count"], [f"{p}loss"])]
    return nodes, inits, probes, count


def prepare(case_dir, table, index, shift):
    """Return the Case of one node test, or raise Skip."""
    name = os.path.basename(case_dir)
    if RANDOM_OUTPUT.match(name):
        raise Skip("random output (expected values come from numpy's RNG)")
    model = onnx.load(os.path.join(case_dir, "model.onnx"))
    check_ops(model, table)
    graph = model.graph
    inputs, expected = load_tensors(case_dir, "input"), load_tensors(case_dir, "output")
    if len(inputs) != len(graph.input) or len(expected) != len(graph.output):
        raise Skip("optional inputs or outputs left out (not supported)")
    check_types(graph, inputs, expected)
    p = f"c{index}_"
    nodes, inits = input_values(graph, inputs, p)
    left_out, drop = [], set()
    for node in graph.node:
        copy = onnx.NodeProto()
        copy.CopyFrom(node)
        copy.name = p + (node.name or node.output[0])
        copy.input[:] = [p + x if x else x for x in node.input]
        for j, out in enumerate(node.output):
            if j in OPTIONAL_OUTPUTS.get(node.op_type, ()) and out:
                left_out.append(f"{node.op_type} output {j} '{out}'")
                drop.add(out)
        copy.output[:] = ["" if x in drop or not x else p + x for x in node.output]
        nodes.append(copy)
    checked = [(i, (p + info.name, want)) for i, (info, want)
               in enumerate(zip(graph.output, expected)) if info.name not in drop]
    if not checked:
        raise Skip("no output pdc computes")
    tail_nodes, tail_inits, probes, count = residual_tail(checked, p, shift)
    return Case(name, residual_opset(model), model.ir_version, nodes + tail_nodes,
                inits + tail_inits, probes, count, left_out, index)


def group_model(cases):
    """One model: the cases side by side, loss = sum of their losses."""
    nodes = [n for c in cases for n in c.nodes]
    inits = [t for c in cases for t in c.inits]
    total = f"c{cases[0].index}_loss"
    for c in cases[1:]:
        nodes.append(helper.make_node("Add", [total, f"c{c.index}_loss"],
                                      [f"c{c.index}_running"]))
        total = f"c{c.index}_running"
    # pdc trains on data: a graph input that weighs zero in the loss.
    nodes += [constant_node("dummy_zero", np.zeros([1, 1], np.float32)),
              helper.make_node("Mul", ["dummy", "dummy_zero"], ["dummy_zeroed"]),
              helper.make_node("ReduceSum", ["dummy_zeroed"], ["dummy_sum"], keepdims=0),
              helper.make_node("Add", [total, "dummy_sum"], ["loss"])]
    graph = helper.make_graph(
        nodes, "residual",
        [helper.make_tensor_value_info("dummy", TensorProto.FLOAT, [1, 1])],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], inits)
    return helper.make_model(graph, ir_version=max(c.ir_version for c in cases),
                             opset_imports=[helper.make_opsetid("", cases[0].opset)])


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


def compare(case, grads, rtol, atol):
    """(status, message, sum of squared errors) from the probe gradients."""
    sum_squares, worst = 0.0, None
    for name, want in case.probes:
        grad = grads.get(name)
        if grad is None or grad.shape != want.shape:
            return "fail", f"no gradient of shape {list(want.shape)} for {name}", None
        error = grad.astype(np.float64) * case.count / 2.0   # = Y - E
        if not np.all(np.isfinite(error)):
            return "fail", f"output {name.split('probe_')[1]}: non-finite values", None
        sum_squares += float(np.sum(error * error))
        want = want.astype(np.float64)
        excess = np.abs(error) - (atol + rtol * np.abs(want))
        at = np.unravel_index(np.argmax(excess), excess.shape)
        if worst is None or excess[at] > worst[0]:
            worst = (float(excess[at]), float(abs(error[at])), name, at, float(want[at]))
    excess, err, name, at, want = worst
    if excess > 0:
        return "fail", (f"output {name.split('probe_')[1]} element {list(map(int, at))}: "
                        f"|Y - E| = {err:.3g} > {atol:g} + {rtol:g} * |{want:.6g}|"), None
    note = f"; without {', '.join(case.left_out)}" if case.left_out else ""
    return "pass", f"max |Y - E| {err:.3g}{note}", sum_squares / case.count


def run_group(args, cases):
    """Compile and run cases together; returns {name: (status, message)}."""
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
            return {cases[0].name: ("fail", str(err))}
        half = len(cases) // 2          # bisect down to the failing tests
        return {**run_group(args, cases[:half]), **run_group(args, cases[half:])}
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
    return results


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

    for index, case_dir in enumerate(dirs):
        try:
            cases.append(prepare(case_dir, table, index, shift))
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


def report(results, args):
    by = collections.defaultdict(list)
    for name in sorted(results):
        status, message = results[name]
        by[status].append((name, message))
    print(f"conformance: {len(by['pass'])} passed, {len(by['fail'])} failed, "
          f"{len(by['skip'])} skipped (unsupported)")
    partial = [n for n, m in by["pass"] if "; without " in m]
    if partial:
        print(f"partial: {len(partial)} passed without the optional outputs pdc "
              f"does not compute")
    reasons = collections.Counter(re.sub(r" \(.*", "", m) if m.startswith("op not")
                                  else m for _, m in by["skip"])
    for reason, n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"skipped {n}: {reason}")
    for name, message in by["fail"]:
        print(f"FAIL {name}: {message}")
    for name, message in by["pass"] if args.verbose else []:
        print(f"pass {name}: {message}")
    for name, message in by["skip"] if args.list_skipped else []:
        print(f"skip {name}: {message}")
    return 1 if by["fail"] else 0


def main():
    args = parse_args()
    if args.work_dir:
        os.makedirs(args.work_dir, exist_ok=True)
    cases, results = prepare_all(args, supported_ops(args.import_src))
    with concurrent.futures.ThreadPoolExecutor(max(args.jobs, 1)) as pool:
        checked = list(pool.map(lambda c: precheck(args, c), cases))
        runnable = []
        for case, verdict in zip(cases, checked):
            if verdict:
                results[case.name] = verdict
            else:
                runnable.append(case)
        groups = list(groups_of(runnable, max(args.group_size, 1)))
        for outcome in pool.map(lambda g: run_group(args, g), groups):
            results.update(outcome)
    return report(results, args)


if __name__ == "__main__":
    sys.exit(main())
