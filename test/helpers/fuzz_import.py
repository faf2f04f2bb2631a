#!/usr/bin/env python3
"""Mutation fuzzing of pdc's error paths on real exported models.

Applies 1-3 random mutations to MODEL (dangling or empty node inputs,
out-of-range or NaN attributes, deleted inputs/nodes/outputs, bad
initializer dims, element types or truncated data, swapped op types,
changed or symbolic graph-input dims) and runs `pdc MUT.onnx -o PLAN
--plan-only [pdc args after --]` on each mutant. Every run must either
succeed (exit 0) or print exactly one `pdc: error: ...` line and exit 1
without leaving PLAN behind; a crash, an assertion, a signal, another exit
code, several lines or a half-written plan is a failure, and the mutant is
kept in --keep for replay. Deterministic for a given --seed.

Prints `fuzz: N mutants, A accepted, R rejected cleanly, F failures` and
exits 1 on any failure. Runs under /usr/bin/python3 (Debian's onnx).
"""
import argparse
import copy
import os
import random
import shutil
import subprocess
import sys
import tempfile

import onnx
from onnx import TensorProto

OP_TYPES = ["Add", "MatMul", "Reshape", "Gather", "Softmax", "Transpose", "Concat",
            "Slice", "LayerNormalization", "Where", "Split", "Conv", "If", "Loop"]


def mutate_input(rng, g, n):
    if n.input:
        n.input[rng.randrange(len(n.input))] = rng.choice(
            ["", "nonexistent", rng.choice(g.node).output[0]])


def mutate_attribute(rng, g, n):
    if not n.attribute:
        return
    a = rng.choice(n.attribute)
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice([-5, -1, 0, 1, 2, 7, 1 << 40])
    elif a.type == onnx.AttributeProto.INTS and a.ints:
        a.ints[rng.randrange(len(a.ints))] = rng.choice([-9, -1, 0, 3, 99])
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice([-1.0, 0.0, float("nan"), 1e30])


def mutate_initializer(rng, g, n):
    if not g.initializer:
        return
    t = rng.choice(g.initializer)
    what = rng.randrange(3)
    if what == 0 and t.dims:
        t.dims[rng.randrange(len(t.dims))] = rng.choice([0, 1, 3, 100000])
    elif what == 1:
        t.data_type = rng.choice([TensorProto.FLOAT16, TensorProto.INT8,
                                  TensorProto.DOUBLE, TensorProto.STRING, 0])
    elif t.raw_data:
        t.raw_data = t.raw_data[:rng.randrange(len(t.raw_data) + 1)]


def mutate_graph_io(rng, g, n):
    value = rng.choice(list(g.input) + list(g.output))
    dims = value.type.tensor_type.shape.dim
    if dims:
        d = dims[rng.randrange(len(dims))]
        if rng.random() < 0.5:
            d.dim_value = rng.choice([0, 1, 2, 5])
        else:
            d.dim_param = "Q"


def mutate_node(rng, g, n):
    what = rng.randrange(4)
    if what == 0:
        del n.input[:]
    elif what == 1:
        n.op_type = rng.choice(OP_TYPES)
    elif what == 2:
        g.node.remove(n)
    else:
        n.output[0] = rng.choice(["", g.input[0].name, "dup"])


MUTATIONS = [mutate_input, mutate_attribute, mutate_initializer, mutate_graph_io,
             mutate_node]


def mutant(rng, base):
    m = copy.deepcopy(base)
    for _ in range(rng.randint(1, 3)):
        if m.graph.node:
            rng.choice(MUTATIONS)(rng, m.graph, rng.choice(m.graph.node))
    return m


def check(pdc, path, plan, extra):
    """None if pdc behaved, else what went wrong."""
    shutil.rmtree(plan, ignore_errors=True)
    try:
        p = subprocess.run([pdc, path, "-o", plan, "--plan-only", *extra],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "timeout"
    if p.returncode == 0:
        return None
    lines = p.stderr.strip().splitlines()
    if p.returncode != 1:
        return f"exit code {p.returncode}: " + " | ".join(lines[-4:])
    if len(lines) != 1 or not lines[0].startswith("pdc: error: "):
        return "not one error line: " + " | ".join(lines[:4])
    if os.path.exists(plan):
        return "plan directory left behind: " + lines[0]
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model")
    p.add_argument("--pdc", default="pdc")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--mutants", type=int, default=100)
    p.add_argument("--keep", help="directory for failing mutants")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    a = p.parse_args(argv[:len(argv) - len(extra) - (1 if extra or "--" in argv else 0)])
    a.pdc_args = extra
    rng = random.Random(a.seed)
    base = onnx.load(a.model)
    counts = {"accepted": 0, "rejected": 0, "failures": 0}
    with tempfile.TemporaryDirectory() as work:
        path, plan = os.path.join(work, "mutant.onnx"), os.path.join(work, "plan")
        for i in range(a.mutants):
            with open(path, "wb") as f:
                f.write(mutant(rng, base).SerializeToString())
            problem = check(a.pdc, path, plan, a.pdc_args)
            if problem is None:
                counts["accepted" if os.path.exists(plan) else "rejected"] += 1
                continue
            counts["failures"] += 1
            print(f"FAIL mutant {i}: {problem}")
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                shutil.copy(path, os.path.join(a.keep, f"mutant{i}.onnx"))
    print(f"fuzz: {a.mutants} mutants, {counts['accepted']} accepted, "
          f"{counts['rejected']} rejected cleanly, {counts['failures']} failures")
    return 1 if counts["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
