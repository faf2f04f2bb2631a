"""Interpreters of the core ONNX ops: the MLP family (Gemm, MatMul, Add, Sub,
Mul, Relu, Identity, Constant, SoftmaxCrossEntropyLoss) and the elementwise
comparisons, logic and math of exported transformers (Equal, Less,
LessOrEqual, Greater, GreaterOrEqual, And, Or, Xor, Not, Min, Max, Cos, Sin,
IsNaN, IsInf, CumSum). Comparisons and logic return bool tensors; integer
operands stay integers."""
import functools

import torch
import torch.nn.functional as F
from onnx import numpy_helper

from . import register


def interp_float(value, ctx):
    """value, with a FLOAT (float32) tensor moved to the interpreter's float
    type: float constants then compute in float64 like the weights do (and a
    float32 constant cannot narrow a float64 value through CastLike, Where or
    MatMul)."""
    return value.to(ctx.dtype) if value.dtype == torch.float32 else value


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
        value = torch.from_numpy(numpy_helper.to_array(attrs["value"]).copy())
        return interp_float(value, ctx)
    for name, dtype in _CONSTANT_LISTS.items():
        if name in attrs:
            return interp_float(torch.tensor(attrs[name], dtype=dtype), ctx)
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
register("Equal")(lambda i, a, c: torch.eq(i[0], i[1]))
register("Less")(lambda i, a, c: torch.lt(i[0], i[1]))
register("LessOrEqual")(lambda i, a, c: torch.le(i[0], i[1]))
register("Greater")(lambda i, a, c: torch.gt(i[0], i[1]))
register("GreaterOrEqual")(lambda i, a, c: torch.ge(i[0], i[1]))
register("And")(lambda i, a, c: torch.logical_and(i[0], i[1]))
register("Or")(lambda i, a, c: torch.logical_or(i[0], i[1]))
register("Xor")(lambda i, a, c: torch.logical_xor(i[0], i[1]))
register("Not")(lambda i, a, c: torch.logical_not(i[0]))
# Variadic and broadcasting; NaN propagates (torch.maximum/minimum) as in
# onnx's reference (numpy.maximum).
register("Max")(lambda i, a, c: functools.reduce(torch.maximum, i))
register("Min")(lambda i, a, c: functools.reduce(torch.minimum, i))
register("Cos")(lambda i, a, c: torch.cos(i[0]))
register("Sin")(lambda i, a, c: torch.sin(i[0]))
register("IsNaN")(lambda i, a, c: torch.isnan(i[0]))


@register("IsInf")
def is_inf(inputs, attrs, ctx):
    x, none = inputs[0], torch.zeros_like(inputs[0], dtype=torch.bool)
    pos = torch.isposinf(x) if attrs.get("detect_positive", 1) else none
    neg = torch.isneginf(x) if attrs.get("detect_negative", 1) else none
    return pos | neg


@register("CumSum")
def cumsum(inputs, attrs, ctx):
    """Running sum along the axis input; `exclusive` shifts it by one (the
    first element 0), `reverse` sums from the end. Keeps the input type."""
    x, axis = inputs[0], int(inputs[1]) % max(inputs[0].dim(), 1)
    if attrs.get("reverse", 0):
        x = x.flip(axis)
    out = torch.cumsum(x, dim=axis, dtype=x.dtype)
    if attrs.get("exclusive", 0):
        out = torch.cat([torch.zeros_like(out.narrow(axis, 0, 1)),
                         out.narrow(axis, 0, out.shape[axis] - 1)], dim=axis)
    return out.flip(axis) if attrs.get("reverse", 0) else out
