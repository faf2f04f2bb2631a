#!/usr/bin/env python3
# ===- onnx_from_text.py - Build an .onnx file from ONNX text ------------=== #
#
# Converts an importer test written in the ONNX text format (.onnxtext) to a
# binary model with onnx.parser (onnx >= 1.12; run it with /usr/bin/python3).
# Lines starting with `//` (lit RUN and CHECK lines) are stripped first.
# --external-data stores the initializers in a side file MODEL.onnx.data.
#
# ===---------------------------------------------------------------------=== #

import argparse
import os
import sys


def _reexec_with_debian_python():
    """lit's %python may be a python3 without Debian's onnx/torch packages;
    fall back to /usr/bin/python3, which has them."""
    debian = "/usr/bin/python3"
    if os.path.realpath(sys.executable) != os.path.realpath(debian) and \
            os.path.exists(debian):
        os.execv(debian, [debian] + sys.argv)


try:
    import numpy
    import onnx
    import onnx.mapping
    import onnx.numpy_helper
    import onnx.parser
except ModuleNotFoundError:
    _reexec_with_debian_python()
    raise


def fill_initializers(model):
    """Expands initializers written with a single value (`float[16, 8] w =
    {0.5}`) to their full shape, and stores every initializer as raw_data
    (which save_as_external_data needs)."""
    for i, t in enumerate(model.graph.initializer):
        shape = tuple(t.dims)
        count = int(numpy.prod(shape)) if shape else 1
        values = (list(t.float_data) or list(t.int64_data) or
                  list(t.int32_data) or list(t.double_data))
        if not t.HasField("raw_data") and len(values) == 1 and count != 1:
            dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.data_type]
            data = numpy.full(shape, values[0], dtype=dtype)
        else:
            data = onnx.numpy_helper.to_array(t)
        model.graph.initializer[i].CopyFrom(
            onnx.numpy_helper.from_array(data, t.name))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("input", help="ONNX text model (.onnxtext)")
    parser.add_argument("output", help="binary model to write (.onnx)")
    parser.add_argument("--external-data", action="store_true",
                        help="store initializers in OUTPUT.data")
    args = parser.parse_args()

    with open(args.input) as f:
        lines = [l for l in f if not l.lstrip().startswith("//")]
    try:
        model = onnx.parser.parse_model("".join(lines))
    except Exception as e:  # the parser raises a bare Exception
        sys.exit(f"onnx_from_text.py: {args.input}: {e}")
    fill_initializers(model)
    if args.external_data:
        onnx.save_model(model, args.output, save_as_external_data=True,
                        all_tensors_to_one_file=True,
                        location=os.path.basename(args.output) + ".data",
                        size_threshold=0)
    else:
        onnx.save_model(model, args.output)


if __name__ == "__main__":
    main()
