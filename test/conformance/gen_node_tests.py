#!/usr/bin/env python3
"""Write ONNX backend node tests from the test-case generators of the
installed onnx package (the venv's, newer than Debian's libonnx-testdata
1.12: Gelu is opset 20) as test_*/model.onnx + test_data_set_0/*.pb for
run_node_tests.py --root. Only the tests whose name matches PATTERN;
tests with data Debian's onnx 1.12 cannot read (float8, int4, sequences of
unsupported types) are left out.

Usage: gen_node_tests.py OUT_DIR PATTERN   (run with the venv's python)
"""
import os
import re
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper
from onnx.backend.test.case.node import collect_testcases

# Element types Debian's onnx 1.12 (and the harness) can read.
READABLE = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE, onnx.TensorProto.FLOAT16,
            onnx.TensorProto.BFLOAT16, onnx.TensorProto.INT64, onnx.TensorProto.INT32,
            onnx.TensorProto.BOOL, onnx.TensorProto.UINT8, onnx.TensorProto.INT8,
            onnx.TensorProto.STRING}


def to_proto(value, name):
    """A TensorProto or SequenceProto of a test value; None if unreadable."""
    if isinstance(value, onnx.TensorProto):
        proto = onnx.TensorProto()
        proto.CopyFrom(value)
        proto.name = name
        return proto if proto.data_type in READABLE else None
    if isinstance(value, list):
        return onnx.helper.make_sequence(
            name, onnx.SequenceProto.TENSOR,
            [numpy_helper.from_array(np.asarray(v)) for v in value])
    proto = numpy_helper.from_array(np.asarray(value), name)
    return proto if proto.data_type in READABLE else None


def write_case(out, case):
    """Write one case; False when a value is unreadable by onnx 1.12."""
    inputs, outputs = case.data_sets[0]
    files = {}
    for kind, values, infos in (("input", inputs, case.model.graph.input),
                                ("output", outputs, case.model.graph.output)):
        for i, (value, info) in enumerate(zip(values, infos)):
            try:
                proto = to_proto(value, info.name)
            except NotImplementedError:
                proto = None
            if proto is None:
                return False
            files[f"{kind}_{i}.pb"] = proto.SerializeToString()
    data = os.path.join(out, case.name, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.save(case.model, os.path.join(out, case.name, "model.onnx"))
    for name, payload in files.items():
        with open(os.path.join(data, name), "wb") as f:
            f.write(payload)
    return True


def main():
    out, pattern = sys.argv[1], re.compile(sys.argv[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = [c for c in collect_testcases(None) if pattern.search(c.name)]
    written = sum(write_case(out, c) for c in cases)
    print(f"gen_node_tests: wrote {written} of {len(cases)} tests matching "
          f"{pattern.pattern} (onnx {onnx.__version__})")


if __name__ == "__main__":
    main()
