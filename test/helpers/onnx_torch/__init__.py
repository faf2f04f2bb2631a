"""A torch interpreter for ONNX training graphs: the oracle of pdc's tests.

Each op family registers its ops in OPS from its own module (core, tensor,
nn, conv). An op is `fn(inputs, attrs, ctx) -> tensor or tuple of tensors`:
`inputs` are torch tensors (None for omitted optional inputs), `attrs` the
node's attributes as Python values (strings decoded), `ctx` an OpContext with
the model's opset, the node, its index in the graph, the RNG key of the
current microbatch (for Dropout: rng.py, pdc's stream bit for bit) and the
interpreter's float type (FLOAT tensors are evaluated in it: float64 in
gradient checks). Semantics follow each op's ONNX definition at the model's
opset; integer and bool tensors keep their ONNX types.

Runs only under Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
"""
import dataclasses
import re

import onnx
import torch
from onnx import numpy_helper

OPS = {}
STATE_INPUTS = {}


def register(name):
    """Decorator: register `fn` as the interpreter of ONNX op `name`."""
    def wrap(fn):
        OPS[name] = fn
        return fn
    return wrap


def register_state(name):
    """Decorator: `fn(node, attrs, opset)` returns the input indices of an
    `name` node that are state it updates (BatchNormalization's running
    statistics in training mode)."""
    def wrap(fn):
        STATE_INPUTS[name] = fn
        return fn
    return wrap


@dataclasses.dataclass
class OpContext:
    opset: int
    node: onnx.NodeProto
    index: int                  # position of the node in the graph
    rng: dict                   # Dropout's key: {"seed", "microbatch" (the
                                # run position, rng.microbatch_key),
                                # "next_id" (rng_id of the next dropout)}
    updates: dict = None        # state name -> new value, when collected
    dtype: torch.dtype = torch.float32  # the interpreter's float type: FLOAT
                                # values (Cast to FLOAT, float constants) use it


def attrs_of(node):
    """The node's attributes as Python values, strings decoded."""
    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        out[a.name] = v.decode() if isinstance(v, bytes) else v
    return out


_LITERAL_MOVE = {"Identity", "Cast", "CastLike"}
_LITERAL_ARITH = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where"}


def folded_by_torch2(model):
    """Whether torch 2's ONNX optimizer folded the model: produced by PyTorch
    2 or later, with an initializer named val_N (detectFoldedExport)."""
    major = model.producer_version.split(".")[0]
    return model.producer_name == "pytorch" and major.isdigit() and \
        int(major) >= 2 and any(re.fullmatch(r"val_[0-9]+", t.name)
                                for t in model.graph.initializer)


def scalar_literals(model):
    """The rank-0 float initializers pdc imports as constants, not weights,
    in a model folded by torch 2's optimizer: every use, possibly through
    Identity/Cast/CastLike, is an operand of elementwise arithmetic
    (GraphImporter::isScalarConstant)."""
    graph = model.graph
    if not folded_by_torch2(model):
        return set()
    readers = {}
    for node in graph.node:
        for i, name in enumerate(node.input):
            readers.setdefault(name, []).append((node, i))
    outputs = {o.name for o in graph.output}

    def literal(name):
        work, seen = [name], set()
        while work:
            value = work.pop()
            if value in outputs:
                return False
            if value in seen:
                continue
            seen.add(value)
            for node, i in readers.get(value, []):
                if node.op_type == "CastLike" and i == 1:
                    continue
                if node.op_type in _LITERAL_MOVE and i == 0:
                    work.extend(node.output)
                elif node.op_type not in _LITERAL_ARITH or \
                        (node.op_type == "Where" and i == 0):
                    return False
        return True

    return {t.name for t in graph.initializer
            if t.data_type == onnx.TensorProto.FLOAT and not t.dims and literal(t.name)}


def _varint(data, pos):
    """Decodes the protobuf varint at data[pos]; returns (value, next pos)."""
    value = shift = 0
    while True:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def value_metadata(info):
    """The metadata_props of a ValueInfoProto (field 4, ONNX 1.16), read
    from its wire format: Debian's onnx 1.12 keeps the field as an unknown
    one. Returns {key: value}."""
    data, pos, out = info.SerializeToString(), 0, {}
    while pos < len(data):
        tag, pos = _varint(data, pos)
        field, wire = tag >> 3, tag & 7
        if wire == 0:
            _, pos = _varint(data, pos)
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        elif wire == 2:
            length, pos = _varint(data, pos)
            if field == 4:
                entry = onnx.StringStringEntryProto()
                entry.ParseFromString(data[pos:pos + length])
                out[entry.key] = entry.value
            pos += length
        else:
            break
    return out


def exported_buffers(model):
    """Initializers torch's dynamo exporter marked as buffers (torch.export
    input kind BUFFER or CONSTANT_TENSOR): not trained, as in torch."""
    key = "pkg.torch.export.graph_signature.InputSpec.kind"
    inits = {t.name for t in model.graph.initializer}
    return {vi.name for vi in list(model.graph.value_info) + list(model.graph.input)
            if vi.name in inits and
            value_metadata(vi).get(key) in ("BUFFER", "CONSTANT_TENSOR")}


def model_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


class OnnxModule:
    """A torch evaluation of an ONNX graph (forward + scalar loss)."""

    def __init__(self, path, dtype=torch.float32):
        from . import core, tensor, nn, conv  # noqa: F401 (register ops)
        self.model = onnx.load(path)
        self.opset = model_opset(self.model)
        graph = self.model.graph
        for node in graph.node:
            if node.op_type not in OPS or node.domain not in ("", "ai.onnx"):
                raise NotImplementedError(
                    f"onnx_torch: unsupported op {node.domain or 'ai.onnx'}."
                    f"{node.op_type} (node '{node.name}')")
        self.params = {}
        for t in graph.initializer:
            value = torch.from_numpy(numpy_helper.to_array(t).copy())
            if value.is_floating_point():
                value = value.to(dtype)
            self.params[t.name] = value
        self.copies = self._untie_copies(graph)
        self.state_names = self._state_names(graph)
        self.input_names = [i.name for i in graph.input
                            if i.name not in self.params]
        self.literals = scalar_literals(self.model) | exported_buffers(self.model)
        # A copy of a literal is a literal (pdc: a copy of a constant is one).
        self.literals |= {c for c, kept in self.copies.items() if kept in self.literals}
        self.loss_name = graph.output[0].name
        self.dtype = dtype

    def _untie_copies(self, graph):
        """An eval-mode export keeps one of several equal initializers and
        copies it for the others (`copy = Identity(kept)`): each copy is a
        distinct tensor of the torch module (every LayerNorm weight), so it
        gets its own entry in params, initialised with the kept value, and
        the Identity is not evaluated. Returns {copy: kept initializer}."""
        copies = {}
        for node in graph.node:
            if (node.op_type == "Identity" and len(node.input) == 1 and
                    node.input[0] in self.params and
                    node.output[0] not in self.params and
                    self.params[node.input[0]].is_floating_point()):
                self.params[node.output[0]] = self.params[node.input[0]].clone()
                copies[node.output[0]] = copies.get(node.input[0], node.input[0])
        return copies

    def _state_names(self, graph):
        """Initializers that ops update as state (STATE_INPUTS), in order."""
        names = []
        for node in graph.node:
            fn = STATE_INPUTS.get(node.op_type)
            if fn:
                names += [node.input[i] for i in fn(node, attrs_of(node), self.opset)]
        return names

    def initializers(self):
        """The names of the model file's own initializers (not the copies)."""
        return [n for n in self.params if n not in self.copies]

    def trainable(self):
        """The names of the floating-point initializers that are neither
        state nor scalar literals (see scalar_literals) nor exported
        buffers (exported_buffers): the weights."""
        return [n for n, t in self.params.items()
                if t.is_floating_point() and n not in self.state_names
                and n not in self.literals]

    def loss(self, weights, inputs, rng=None, updates=None):
        """Evaluates the graph; weights and inputs map names to tensors
        (state included, else its initial value is used). With `updates`
        (a dict) the ops that update state record its new values there."""
        env = dict(self.params)
        env.update(weights)
        for name, value in inputs.items():
            env[name] = value.to(self.dtype) if value.is_floating_point() else value
        rng = dict(rng or {"seed": 0, "microbatch": 0}, next_id=0)
        for index, node in enumerate(self.model.graph.node):
            if node.op_type == "Identity" and node.output[0] in self.copies:
                continue
            args = [env[n] if n else None for n in node.input]
            ctx = OpContext(self.opset, node, index, rng, updates, self.dtype)
            out = OPS[node.op_type](args, attrs_of(node), ctx)
            outs = out if isinstance(out, (tuple, list)) else (out,)
            for name, value in zip(node.output, outs):
                if name:
                    env[name] = value
        return env[self.loss_name]
