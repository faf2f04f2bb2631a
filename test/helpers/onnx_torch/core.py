"""Interpreters of the core ONNX ops (the MLP family): Gemm, MatMul, Add,
Sub, Mul, Relu, Identity, Constant, SoftmaxCrossEntropyLoss."""
import torch
import torch.nn.functional as F
from onnx import numpy_helper

from . import register


@register("Gemm")
def gemm(inputs, attrs, ctx):
    a, b = inputs[0], inputs[1]
    if attrs.get("transA", 0):
        a = a.t()
    if attrs.get("transB", 0):
        b = b.t()
    out = attrs.get("alpha", 1.0) * (a @ b)
    if len(inputs) > 2 and inputs[2] is not None:
        out = out + attrs.get("beta", 1.0) * inputs[2]
    return out


_CONSTANT_LISTS = {"value_float": torch.float32, "value_floats": torch.float32,
                   "value_int": torch.int64, "value_ints": torch.int64}


@register("Constant")
def constant(inputs, attrs, ctx):
    if "value" in attrs:
        return torch.from_numpy(numpy_helper.to_array(attrs["value"]).copy())
    for name, dtype in _CONSTANT_LISTS.items():
        if name in attrs:
            return torch.tensor(attrs[name], dtype=dtype)
    raise NotImplementedError(f"Constant with attributes {sorted(attrs)}")


@register("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy(inputs, attrs, ctx):
    if len(inputs) > 2 and inputs[2] is not None:
        raise NotImplementedError("SoftmaxCrossEntropyLoss with class weights")
    return F.cross_entropy(inputs[0], inputs[1].long(),
                           reduction=attrs.get("reduction", "mean"),
                           ignore_index=attrs.get("ignore_index", -100))


register("MatMul")(lambda i, a, c: torch.matmul(i[0], i[1]))
register("Add")(lambda i, a, c: i[0] + i[1])
register("Sub")(lambda i, a, c: i[0] - i[1])
register("Mul")(lambda i, a, c: i[0] * i[1])
register("Relu")(lambda i, a, c: torch.relu(i[0]))
register("Identity")(lambda i, a, c: i[0])
