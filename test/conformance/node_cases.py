"""Loading the ONNX backend node tests and rewriting each as a residual
sub-graph (a Case); run_node_tests.py describes the scheme."""
import dataclasses
import glob
import os
import re
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

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
