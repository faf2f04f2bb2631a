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
import dataclasses
import glob
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib

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
# Float inputs pdc imports as buffers, not parameters (docs/training-semantics.md):
# no gradient is dumped for them.
BUFFER_OPERANDS = {"BatchNormalization": {3: "BatchNormalization statistics",
                                          4: "BatchNormalization statistics"}}
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
    weights: list = dataclasses.field(default_factory=list)
                          # [(probe name, R)] of the linear term (float outputs)
    grad_inputs: list = dataclasses.field(default_factory=list)
                          # names of the float test inputs (parameters)
    buffers: dict = dataclasses.field(default_factory=dict)
                          # {input name: why pdc does not train it}
    reference: bytes = b""  # the residual sub-graph as the reference sees it
                          # (without --perturb-grads' scaling)


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


def residual_tail(checked, p, shift, seed):
    """Probe, expected value, squared-error and linear-term nodes of the
    checked outputs.

    shift(E) is added to the expected values in the graph (the harness's
    self-check; zero normally). Returns (nodes, initializers, probes,
    count, weights): weights = [(probe name, R)] of the float outputs."""
    rng = np.random.default_rng(seed)
    nodes, inits, probes, sums, weights = [], [], [], [], []
    for i, (y, want) in checked:
        floating = want.dtype == np.float32
        if not floating:                 # bool and integer outputs: exact in f32
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
        sums.append(f"{p}sum_{i}")
        if floating:
            # The linear term sum((Y - E) R): the same value as D (Y + 0 =
            # Y), but not through the probe, so P's gradient stays 2 D / count.
            finite = np.abs(want[np.isfinite(want)])
            scale = max(1.0, float(finite.max())) if finite.size else 1.0
            r = (rng.standard_normal(want.shape) * scale).astype(np.float32)
            nodes += [helper.make_node("Sub", [y, exp], [f"{p}error_{i}"]),
                      constant_node(f"{p}weight_{i}", r),
                      helper.make_node("Mul", [f"{p}error_{i}", f"{p}weight_{i}"],
                                       [f"{p}weighted_{i}"]),
                      helper.make_node("ReduceSum", [f"{p}weighted_{i}"],
                                       [f"{p}linear_{i}"], keepdims=0)]
            sums.append(f"{p}linear_{i}")
            weights.append((probe, r))
        probes.append((probe, want))
    total = sums[0]
    for j, s in enumerate(sums[1:]):
        nodes.append(helper.make_node("Add", [total, s], [f"{p}total_{j}"]))
        total = f"{p}total_{j}"
    count = sum(w.size for _, w in probes)
    nodes += [constant_node(f"{p}inverse_count", np.array(1.0 / count, np.float32)),
              helper.make_node("Mul", [total, f"{p}inverse_count"], [f"{p}loss"])]
    return nodes, inits, probes, count, weights


def scale_gradients(nodes, inits, names, factor):
    """--perturb-grads: every read of the parameter x in nodes reads
    x + (x - C) * (factor - 1) instead, C a constant equal to x: the same
    value (exactly), a gradient `factor` times the true one. x is one of
    names with finite values, or an Identity copy of one (a parameter of its
    own: docs/training-semantics.md)."""
    values = {t.name: numpy_helper.to_array(t) for t in inits}
    names = [n for n in names if np.all(np.isfinite(values[n]))]
    copies = {node.output[0]: node.input[0] for node in nodes
              if node.op_type == "Identity" and node.input[0] in names}
    extra = []
    for name in names + list(copies):
        value = values[copies.get(name, name)]
        extra += [constant_node(name + "_copy", value),
                  constant_node(name + "_factor", np.array(factor - 1.0, np.float32)),
                  helper.make_node("Sub", [name, name + "_copy"], [name + "_zero"]),
                  helper.make_node("Mul", [name + "_zero", name + "_factor"],
                                   [name + "_zeroed"]),
                  helper.make_node("Add", [name, name + "_zeroed"], [name + "_scaled"])]
        for node in nodes:
            if not (node.op_type == "Identity" and node.output[0] in copies):
                node.input[:] = [name + "_scaled" if x == name else x
                                 for x in node.input]
    # A copy is read after the Identity that makes it.
    return [n for n in nodes if n.op_type == "Identity" and n.output[0] in copies] \
        + extra + [n for n in nodes if not (n.op_type == "Identity" and
                                            n.output[0] in copies)]


def case_model(nodes, inits, p, opset, ir_version):
    """The residual sub-graph of one case as a model (output: its loss)."""
    graph = helper.make_graph(nodes, "case", [],
                              [helper.make_tensor_value_info(f"{p}loss",
                                                             TensorProto.FLOAT, [])],
                              inits)
    return helper.make_model(graph, ir_version=ir_version,
                             opset_imports=[helper.make_opsetid("", opset)])


def prepare(case_dir, table, index, shift, grad_factor=1.0):
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
    grad_inputs = [p + info.name for info, value in zip(graph.input, inputs)
                   if value.dtype == np.float32 and not is_static(graph, info.name)]
    buffers = {}
    left_out, drop, body = [], set(), []
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
        for j, why in BUFFER_OPERANDS.get(node.op_type, {}).items():
            if j < len(copy.input) and copy.input[j]:
                buffers[copy.input[j]] = why
        body.append(copy)
    checked = [(i, (p + info.name, want)) for i, (info, want)
               in enumerate(zip(graph.output, expected)) if info.name not in drop]
    if not checked:
        raise Skip("no output pdc computes")
    tail_nodes, tail_inits, probes, count, weights = residual_tail(
        checked, p, shift, zlib.crc32(name.encode()))
    opset = residual_opset(model)
    reference = case_model(nodes + body + tail_nodes, inits + tail_inits, p, opset,
                           model.ir_version).SerializeToString()
    if grad_factor != 1.0:
        scaled = [n for n in grad_inputs if n not in buffers]
        body, tail_nodes = scale_gradients(body + tail_nodes, inits, scaled,
                                           grad_factor), []
    return Case(name, opset, model.ir_version, nodes + body + tail_nodes,
                inits + tail_inits, probes, count, left_out, index, weights,
                grad_inputs, buffers, reference)


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
    """(status, message, loss) from the probe gradients (the loss: the
    squared errors and the linear term over count)."""
    loss_sum, worst = 0.0, None
    weights = dict(case.weights)
    for name, want in case.probes:
        grad = grads.get(name)
        if grad is None or grad.shape != want.shape:
            return "fail", f"no gradient of shape {list(want.shape)} for {name}", None
        error = grad.astype(np.float64) * case.count / 2.0   # = Y - E
        if not np.all(np.isfinite(error)):
            return "fail", f"output {name.split('probe_')[1]}: non-finite values", None
        loss_sum += float(np.sum(error * error))
        if name in weights:             # the linear term: sum((Y - E) R)
            loss_sum += float(np.sum(error * weights[name].astype(np.float64)))
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
    return "pass", f"max |Y - E| {err:.3g}{note}", loss_sum / case.count


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
# Gradients against float64 autograd
# ----------------------------------------------------------------------------

def load_torch():
    """Imports torch and the ONNX interpreter (test/helpers/onnx_torch)."""
    global torch, OnnxModule
    sys.path.insert(0, os.path.join(HERE, "..", "helpers"))
    try:
        import torch
    except ModuleNotFoundError:
        raise SystemExit("error: the gradient check needs torch (Debian's "
                         "python3-torch); --no-grads checks the outputs only")
    from onnx_torch import OnnxModule
    torch.set_num_threads(1)


@dataclasses.dataclass
class Reference:
    """float64 autograd of one case's residual loss."""
    grads: dict = dataclasses.field(default_factory=dict)
                                # {input: gradient}; None: no autograd path
    kinks: dict = dataclasses.field(default_factory=dict)
                                # {input: bool mask of non-differentiable elements}
    copies: dict = dataclasses.field(default_factory=dict)
                                # {Identity copy: the input it copies}
    error: str = ""             # why there is no reference


def torch_reference(case, args):
    """Reference gradients of case's residual loss: the torch ONNX
    interpreter in float64, the test inputs as leaf tensors. The gradients
    are also taken on both sides of x, at x +- step * max(|x|, 1e-3 max|x|)
    * u (elementwise; u random, |u| in [0.5, 1]): elements whose gradient
    differs between the two sides by more than the tolerance, or is not
    finite, lie at a point where the loss is not differentiable (kinks)."""
    try:
        module = OnnxModule(io.BytesIO(case.reference), dtype=torch.float64)
    except Exception as err:            # an op the interpreter does not know
        return Reference(error=str(err))
    # An Identity of an initializer is a copy, a parameter of its own (pdc's
    # init_from and the interpreter's _untie_copies): its gradient is checked.
    names = case.grad_inputs + [c for c, kept in module.copies.items()
                                if kept in case.grad_inputs]
    probes = [n for n, _ in case.probes]
    base = {n: module.params[n] for n in names}
    rng = np.random.default_rng(zlib.crc32(case.name.encode()) + 1)

    def gradients(values):
        leaves = {n: v.clone().requires_grad_(True) for n, v in values.items()}
        leaves.update({n: module.params[n].clone().requires_grad_(True)
                       for n in probes})
        loss = module.loss(leaves, {})
        if not loss.requires_grad:
            return {n: None for n in leaves}
        out = torch.autograd.grad(loss, list(leaves.values()), allow_unused=True)
        return {n: None if g is None else g.numpy() for n, g in zip(leaves, out)}

    try:
        at = gradients(base)
        # The reference must reproduce onnx's outputs (within onnx's
        # tolerance): its probe gradients are 2 (Y - E') / count, E' the
        # expected values in the graph (E' = E but under --perturb).
        for name, want in case.probes:
            g, shifted = at[name], module.params[name.replace("probe_", "expected_")]
            error = (np.zeros(want.shape) if g is None else g * case.count / 2.0) \
                + (shifted.numpy() - want.astype(np.float64))
            excess = np.abs(error) - (args.atol + args.rtol *
                                      np.abs(want.astype(np.float64)))
            if np.any(excess > 0):
                worst = np.unravel_index(np.argmax(excess), excess.shape)
                return Reference(error=f"the interpreter's output "
                                 f"{name.split('probe_')[1]} differs from onnx's "
                                 f"at {list(map(int, worst))} by {error[worst]:.3g}")
        copies = {c: k for c, k in module.copies.items() if c in names}
        if all(at[n] is None for n in names):
            return Reference(grads={n: None for n in names}, copies=copies)
        # x_i +- step * max(|x_i|, 1e-3 max |x|) * u_i, |u_i| in [0.5, 1].
        moves = {}
        for n, v in base.items():
            x = v.numpy()
            floor = 1e-3 * float(np.abs(x).max()) if x.size else 0.0
            size = args.kink_step * np.maximum(np.abs(x), max(floor, 1e-30))
            moves[n] = torch.from_numpy(np.asarray(
                size * rng.choice([-1.0, 1.0], size=x.shape) *
                rng.uniform(0.5, 1.0, size=x.shape), np.float64))
        sides = [gradients({n: v + sign * moves[n] for n, v in base.items()})
                 for sign in (1.0, -1.0)]
    except Exception as err:            # an interpreter that cannot run the case
        return Reference(error=f"onnx_torch: {type(err).__name__}: {err}")
    kinks, scale = {}, largest(at[n] for n in names)
    for n in names:
        g = at[n]
        if g is None:
            continue
        plus, minus = sides[0][n], sides[1][n]
        plus = np.zeros_like(g) if plus is None else plus
        minus = np.zeros_like(g) if minus is None else minus
        with np.errstate(invalid="ignore"):
            tol = grad_tolerance(g, args, scale)
            kinks[n] = ~(np.isfinite(g) & np.isfinite(plus) & np.isfinite(minus)) | \
                (np.abs(plus - minus) > tol)
    return Reference(grads={n: at[n] for n in names}, kinks=kinks, copies=copies)


def largest(values):
    """max |v| over the finite elements of the arrays (0 if none)."""
    return max([float(np.max(np.abs(v[np.isfinite(v)]), initial=0.0))
                for v in values if v is not None], default=0.0)


def grad_tolerance(ref, args, case_scale):
    """atol + rtol |g_ref|, atol = grad_atol * max |g_ref| over the tensor's
    finite elements (over all the case's gradients when the tensor's are all
    0: a true gradient of 0 still gets float32 round-off)."""
    scale = largest([ref]) or case_scale
    return args.grad_atol * scale + args.grad_rtol * np.abs(ref)


def compare_grads(case, mine, ref, args):
    """(status, message): "pass", "fail", "nondiff" (the loss is piecewise
    constant in every float input, or there is none) or "noref"."""
    if ref.error:
        return "noref", ref.error
    if not case.grad_inputs:
        return "nondiff", "no float input"
    notes, checked, kinks, worst = [], 0, 0, None
    prefix = f"c{case.index}_"
    scale = largest(ref.grads.values())
    for n in ref.grads:
        label = n[len(prefix):]
        if n in ref.copies:
            label += f" (Identity copy of '{ref.copies[n][len(prefix):]}')"
        g = ref.grads[n]
        got = mine.get(n)
        if n in case.buffers and got is None:
            notes.append(f"'{label}' not a parameter ({case.buffers[n]})")
            continue
        if g is None:
            # Piecewise constant: pdc's gradient, if any, must be 0.
            if got is not None and np.any(got != 0):
                at = np.unravel_index(np.argmax(np.abs(got)), got.shape)
                return "fail", (f"input '{label}': the loss is piecewise constant "
                                f"in it but pdc's gradient is {got[at]:.6g} at "
                                f"{list(map(int, at))}")
            notes.append(f"'{label}' not differentiable")
            continue
        if got is None:
            return "fail", f"input '{label}': pdc dumped no gradient"
        if got.shape != g.shape:
            return "fail", (f"input '{label}': gradient of shape {list(got.shape)}, "
                            f"expected {list(g.shape)}")
        got = got.astype(np.float64)
        skip = ref.kinks[n]
        tol = grad_tolerance(g, args, scale)
        with np.errstate(invalid="ignore"):
            excess = np.where(skip, -np.inf, np.abs(got - g) - tol)
            excess[~np.isfinite(got) & ~skip] = np.inf
        checked += 1
        kinks += int(skip.sum())
        if skip.all():
            continue
        at = np.unravel_index(np.argmax(excess), excess.shape)
        if worst is None or excess[at] > worst[0]:
            worst = (float(excess[at]), label, at, float(got[at]), float(g[at]),
                     float(tol[at]))
    if not checked:
        return "nondiff", "; ".join(notes) or "no float input"
    if kinks:
        notes.append(f"{kinks} element{'s' * (kinks != 1)} at kinks left out")
    suffix = f" ({'; '.join(notes)})" if notes else ""
    if worst is None:
        return "pass", "every element at a kink" + suffix
    excess, label, at, got, want, tol = worst
    where = f"input '{label}' element {list(map(int, at))}"
    if excess > 0:
        return "fail", (f"{where}: pdc {got:.7g}, reference {want:.7g}, "
                        f"|difference| {abs(got - want):.3g} > {tol:.3g}{suffix}")
    return "pass", (f"{checked} input{'s' * (checked != 1)}, worst {where}: "
                    f"|difference| {abs(got - want):.3g} <= {tol:.3g}{suffix}")


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


def report(results, grad_results, args):
    by = collections.defaultdict(list)
    for name in sorted(results):
        status, message = results[name]
        by[status].append((name, message))
    print(f"conformance: {len(by['pass'])} passed, {len(by['fail'])} failed, "
          f"{len(by['skip'])} skipped (unsupported)")
    grads = collections.defaultdict(list)
    for name in sorted(grad_results):
        status, message = grad_results[name]
        grads[status].append((name, message))
    if not args.no_grads:
        print(f"gradients: {len(grads['pass']) + len(grads['fail'])} checked, "
              f"{len(grads['fail'])} failed, {len(grads['nondiff'])} not "
              f"differentiable")
        if grads["noref"]:
            print(f"gradients: {len(grads['noref'])} without a reference (the "
                  f"torch interpreter cannot evaluate them)")
        kinks = [int(m.group(1)) for _, msg in grads["pass"] + grads["fail"]
                 for m in [re.search(r"(\d+) elements? at kinks", msg)] if m]
        if kinks:
            print(f"kinks: {sum(kinks)} element{'s' * (sum(kinks) != 1)} of "
                  f"{len(kinks)} test{'s' * (len(kinks) != 1)} at "
                  f"non-differentiable points left out")
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
    for name, message in grads["fail"]:
        print(f"grad FAIL {name}: {message}")
    for name, message in grads["noref"]:
        print(f"grad noref {name}: {message}")
    for name, message in by["pass"] if args.verbose else []:
        print(f"pass {name}: {message}")
    for name, message in grads["pass"] if args.verbose else []:
        print(f"grad pass {name}: {message}")
    for name, message in grads["nondiff"] if args.verbose else []:
        print(f"grad not differentiable {name}: {message}")
    for name, message in by["skip"] if args.list_skipped else []:
        print(f"skip {name}: {message}")
    return 1 if by["fail"] or grads["fail"] else 0


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
