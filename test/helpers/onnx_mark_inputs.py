#!/usr/bin/env python3
"""Annotate initializers of an ONNX model the way torch's dynamo exporter
does: a value_info entry whose metadata_props (ValueInfoProto field 4, ONNX
1.16) hold `pkg.torch.export.graph_signature.InputSpec.kind`.

  onnx_mark_inputs.py IN.onnx OUT.onnx NAME=KIND...   (KIND: PARAMETER, BUFFER, ...)

Works with Debian's onnx 1.12, which lacks the field: the entry is appended
to the value_info's wire format and kept as an unknown field, as a model
written by a newer onnx reads there.
"""
import sys

import onnx

KEY = "pkg.torch.export.graph_signature.InputSpec.kind"


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def metadata_field(key, value):
    """The wire bytes of one metadata_props entry (field 4)."""
    entry = onnx.StringStringEntryProto(key=key, value=value).SerializeToString()
    return varint(4 << 3 | 2) + varint(len(entry)) + entry


def main():
    src, dst, marks = sys.argv[1], sys.argv[2], sys.argv[3:]
    model = onnx.load(src)
    inits = {t.name: t for t in model.graph.initializer}
    for mark in marks:
        name, kind = mark.split("=")
        init = inits[name]
        info = onnx.helper.make_tensor_value_info(name, init.data_type, list(init.dims))
        info.ParseFromString(info.SerializeToString() + metadata_field(KEY, kind))
        model.graph.value_info.append(info)
    onnx.save(model, dst)


if __name__ == "__main__":
    main()
