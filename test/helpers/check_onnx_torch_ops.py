#!/usr/bin/env python3
"""Check the torch ONNX interpreter (onnx_torch) against the ONNX backend node tests.

Runs every node test of Debian's libonnx-testdata whose ops onnx_torch
registers (or only the tests of the ops named with --ops) through the
interpreter's op functions in float32, and compares each output with the
expected one: the element type must be the same (integer and bool results
must not turn into floats) and the values must satisfy onnx's backend rule
|y - e| <= 1e-7 + 1e-3 |e|. Tests with random outputs (Dropout masks,
Bernoulli, ...), non-tensor inputs or element types torch 1.13 lacks are
skipped.

    /usr/bin/python3 test/helpers/check_onnx_torch_ops.py --ops GatherND Trilu

Prints one line per failure and `onnx_torch node tests: N passed, M failed,
K skipped`; exits 1 when a test fails.

Runs only under Debian's /usr/bin/python3 (torch 1.13, onnx 1.12).
"""
import argparse
import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import onnx
    import torch
    from onnx import numpy_helper
except ModuleNotFoundError:
    os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)

from onnx_torch import OPS, OpContext, attrs_of, model_opset  # noqa: E402
from onnx_torch import core, tensor, nn, conv  # noqa: E402,F401 (register ops)

NODE_TESTS = "/usr/share/libonnx-testdata/data/node"
RANDOM = ("dropout", "bernoulli", "random")


def load_tensors(pattern):
    """The tensors of the .pb files matching pattern, in file order."""
    files = sorted(glob.glob(pattern), key=lambda f: int(f.rsplit("_", 1)[1][:-3]))
    out = []
    for f in files:
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        out.append(numpy_helper.to_array(t))
    return out


def run_test(path):
    """None when the test passes, else the reason it failed; raises
    NotImplementedError (or TypeError, for an element type torch lacks) to
    skip it."""
    model = onnx.load(os.path.join(path, "model.onnx"))
    graph = model.graph
    if any(not v.type.HasField("tensor_type")
           for v in list(graph.input) + list(graph.output)):
        raise NotImplementedError("sequence or optional values")
    inputs = load_tensors(os.path.join(path, "test_data_set_0", "input_*.pb"))
    expected = load_tensors(os.path.join(path, "test_data_set_0", "output_*.pb"))
    env = {t.name: torch.from_numpy(numpy_helper.to_array(t).copy())
           for t in graph.initializer}
    names = [i.name for i in graph.input if i.name not in env]
    for name, value in zip(names, inputs):
        env[name] = torch.from_numpy(np.ascontiguousarray(value))
    opset = model_opset(model)
    for index, node in enumerate(graph.node):
        if node.op_type not in OPS or node.domain not in ("", "ai.onnx"):
            raise NotImplementedError(node.op_type)
        args = [env[n] if n else None for n in node.input]
        out = OPS[node.op_type](args, attrs_of(node),
                                OpContext(opset, node, index, {"next_id": 0}))
        for name, value in zip(node.output, out if isinstance(out, (tuple, list))
                               else (out,)):
            if name:
                env[name] = value
    for out, want in zip(graph.output, expected):
        got = env[out.name].numpy()
        if got.dtype != want.dtype:
            return f"{out.name}: type {got.dtype}, expected {want.dtype}"
        if got.shape != want.shape:
            return f"{out.name}: shape {got.shape}, expected {want.shape}"
        if want.dtype.kind in "fc":
            bad = ~np.isclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True)
        else:
            bad = got != want
        if bad.any():
            return f"{out.name}: {int(bad.sum())} of {got.size} elements differ"
    return None


def selected(ops):
    """The node test directories of the given ops (all registered ops if
    none), skipping random-output tests."""
    wanted = {o.lower() for o in (ops or OPS)}
    out = []
    for path in sorted(glob.glob(os.path.join(NODE_TESTS, "test_*"))):
        name = os.path.basename(path)
        if any(r in name for r in RANDOM):
            continue
        try:
            model = onnx.load(os.path.join(path, "model.onnx"))
        except Exception:  # noqa: BLE001 (unreadable by onnx 1.12: skip)
            continue
        if {n.op_type.lower() for n in model.graph.node} & wanted:
            out.append(path)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ops", nargs="*", help="only the tests using these ops")
    p.add_argument("--verbose", action="store_true", help="print skipped tests")
    a = p.parse_args()
    passed, failed, skipped = 0, 0, 0
    for path in selected(a.ops):
        name = os.path.basename(path)
        try:
            error = run_test(path)
        except (NotImplementedError, TypeError, KeyError) as e:
            skipped += 1
            if a.verbose:
                print(f"skip {name}: {type(e).__name__} {e}")
            continue
        except Exception as e:  # noqa: BLE001 (report, go on)
            error = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        if error:
            failed += 1
            print(f"FAIL {name}: {error}")
        else:
            passed += 1
    print(f"onnx_torch node tests: {passed} passed, {failed} failed, {skipped} skipped")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
