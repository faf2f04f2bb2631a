#!/usr/bin/env python3
"""Write a shape-only GPT as ONNX: the paper's model shapes, no weights.

The graph is the GPT of examples/gpt at opset 17 (token and position
embeddings, pre-LN blocks with fused-qkv causal attention and an erf-GELU
MLP, final LayerNorm, LM head tied to the token embedding, mean
cross-entropy), built node by node with onnx.helper instead of exported
from PyTorch, so that a 28-billion-parameter model costs a few megabytes:
every parameter is an initializer whose data is *external* and absent
(`weights.bin` is never written). pdc --plan-only plans such a model
without reading a weight (DESIGN.md: what-if planning at scale); training
it would fail at load time, naming the missing file.

The batch is static (--batch) but every Reshape keeps dim 0 (shape entry
0), so pdc can import the model again at other microbatch sizes.

    /usr/bin/python3 bench/gpt_shapes.py --layers 2240 --hidden 1024 \\
        --heads 16 --seq 512 --vocab 50257 --batch 8 --out gpt28b.onnx
"""
import argparse
import math
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

# The paper's GPT shapes (PAPER.md): layers, hidden, heads.
PAPER_MODELS = {
    "gpt-1.3b": (24, 2048, 16),
    "gpt-2.2b": (32, 2304, 32),
    "gpt-3.8b": (32, 3072, 32),
    "gpt-28b": (2240, 1024, 16),
}


class Graph:
    """Nodes and initializers of the model being written."""

    def __init__(self):
        self.nodes, self.inits, self.offset = [], [], 0
        self.count = 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def node(self, op, inputs, **attrs):
        out = self.name(op.lower())
        self.nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def param(self, name, shape):
        """A float parameter whose data lives, absent, in weights.bin."""
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape)
        t.data_location = TensorProto.EXTERNAL
        length = 4 * math.prod(shape)
        for key, value in (("location", "weights.bin"),
                           ("offset", str(self.offset)),
                           ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.inits.append(t)
        return name

    def const(self, array):
        """A Constant node holding `array`."""
        out = self.name("const")
        self.nodes.append(helper.make_node(
            "Constant", [], [out], name=out,
            value=numpy_helper.from_array(np.asarray(array), out)))
        return out


def linear(g, x, prefix, n_in, n_out):
    w = g.param(f"{prefix}.weight", [n_in, n_out])
    b = g.param(f"{prefix}.bias", [n_out])
    return g.node("Add", [g.node("MatMul", [x, w]), b])


def layer_norm(g, x, prefix, hidden):
    w = g.param(f"{prefix}.weight", [hidden])
    b = g.param(f"{prefix}.bias", [hidden])
    return g.node("LayerNormalization", [x, w, b], axis=-1, epsilon=1e-5)


def gelu(g, x):
    """0.5 x (1 + erf(x / sqrt 2)), as torch 1.13 exports F.gelu."""
    erf = g.node("Erf", [g.node("Div", [x, g.const(np.float32(math.sqrt(2)))])])
    one_plus = g.node("Add", [erf, g.const(np.float32(1.0))])
    return g.node("Mul", [g.node("Mul", [x, one_plus]), g.const(np.float32(0.5))])


def attention(g, x, prefix, hidden, heads, mask, split):
    hd = hidden // heads
    qkv = linear(g, x, f"{prefix}.qkv", hidden, 3 * hidden)
    outs = [g.name("split") for _ in range(3)]
    g.nodes.append(helper.make_node("Split", [qkv, split], outs,
                                    name=g.name("split"), axis=2))
    heads_shape = g.const(np.array([0, 0, heads, hd], dtype=np.int64))
    q, k, v = (g.node("Reshape", [t, heads_shape]) for t in outs)
    q = g.node("Transpose", [q], perm=[0, 2, 1, 3])
    k = g.node("Transpose", [k], perm=[0, 2, 3, 1])
    v = g.node("Transpose", [v], perm=[0, 2, 1, 3])
    att = g.node("Mul", [g.node("MatMul", [q, k]),
                         g.const(np.float32(1.0 / math.sqrt(hd)))])
    att = g.node("Where", [mask, att, g.const(np.float32(-np.inf))])
    att = g.node("Softmax", [att], axis=-1)
    y = g.node("Transpose", [g.node("MatMul", [att, v])], perm=[0, 2, 1, 3])
    y = g.node("Reshape", [y, g.const(np.array([0, 0, hidden], dtype=np.int64))])
    return linear(g, y, f"{prefix}.proj", hidden, hidden)


def build(layers, hidden, heads, seq, vocab, batch, tied=True):
    g = Graph()
    wte = g.param("wte.weight", [vocab, hidden])
    wpe = g.param("wpe.weight", [seq, hidden])
    pos = g.const(np.arange(seq, dtype=np.int64))
    mask = g.const(np.tril(np.ones((seq, seq), dtype=bool)).reshape(1, 1, seq, seq))
    split = g.const(np.array([hidden] * 3, dtype=np.int64))
    x = g.node("Add", [g.node("Gather", [wte, "idx"]), g.node("Gather", [wpe, pos])])
    for i in range(layers):
        p = f"h.{i}"
        x = g.node("Add", [x, attention(g, layer_norm(g, x, f"{p}.ln1", hidden),
                                        p, hidden, heads, mask, split)])
        h = layer_norm(g, x, f"{p}.ln2", hidden)
        h = linear(g, gelu(g, linear(g, h, f"{p}.fc", hidden, 4 * hidden)),
                   f"{p}.out", 4 * hidden, hidden)
        x = g.node("Add", [x, h])
    x = layer_norm(g, x, "ln_f", hidden)
    head = (g.node("Transpose", [wte], perm=[1, 0]) if tied
            else g.param("lm_head.weight", [hidden, vocab]))
    logits = g.node("MatMul", [x, head])
    logits = g.node("Reshape", [logits, g.const(np.array([-1, vocab], dtype=np.int64))])
    targets = g.node("Reshape", ["targets", g.const(np.array([-1], dtype=np.int64))])
    loss = g.node("SoftmaxCrossEntropyLoss", [logits, targets], reduction="mean")
    graph = helper.make_graph(
        g.nodes, "gpt",
        [helper.make_tensor_value_info("idx", TensorProto.INT64, [batch, seq]),
         helper.make_tensor_value_info("targets", TensorProto.INT64, [batch, seq])],
        [helper.make_tensor_value_info(loss, TensorProto.FLOAT, [])],
        initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="pdc bench/gpt_shapes.py")
    model.ir_version = 8
    params = g.offset // 4
    return model, params


def write(path, layers, hidden, heads, seq=512, vocab=50257, batch=8, tied=True):
    """Writes the model to `path`; returns its parameter count."""
    model, params = build(layers, hidden, heads, seq, vocab, batch, tied)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return params


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", choices=sorted(PAPER_MODELS),
                   help="one of the paper's shapes (sets layers, hidden, heads)")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--heads", type=int, default=16)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--vocab", type=int, default=50257)
    p.add_argument("--batch", type=int, default=8, help="the exported microbatch")
    p.add_argument("--untied", action="store_true",
                   help="an LM head of its own instead of the token embedding")
    p.add_argument("--out", default="gpt.onnx")
    a = p.parse_args()
    if a.model:
        a.layers, a.hidden, a.heads = PAPER_MODELS[a.model]
    params = write(a.out, a.layers, a.hidden, a.heads, a.seq, a.vocab, a.batch,
                   not a.untied)
    print(f"{a.out}: {a.layers} layers, hidden {a.hidden}, {a.heads} heads, "
          f"seq {a.seq}, vocab {a.vocab}, batch {a.batch}: "
          f"{params / 1e9:.2f}B parameters (data absent)")


if __name__ == "__main__":
    main()
