"""Interpreters of the ONNX nn ops (see __init__.py for the op signature)."""
import math

import torch
import torch.nn.functional as F

from . import register


def _axes(inputs, attrs, ctx, input_since):
    """Reduction axes: an attribute before `input_since`, an input after."""
    if ctx.opset < input_since:
        return list(attrs.get("axes", []))
    if len(inputs) > 1 and inputs[1] is not None:
        return [int(a) for a in inputs[1].tolist()]
    return []


def _reduce(inputs, attrs, ctx, input_since, mean):
    x = inputs[0]
    axes = _axes(inputs, attrs, ctx, input_since)
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            return x
        axes = list(range(x.dim()))
    keep = bool(attrs.get("keepdims", 1))
    return (x.mean if mean else x.sum)(dim=axes, keepdim=keep)


register("ReduceSum")(lambda i, a, c: _reduce(i, a, c, 13, False))
register("ReduceMean")(lambda i, a, c: _reduce(i, a, c, 18, True))


@register("Div")
def div(inputs, attrs, ctx):
    """Integer Div truncates toward zero (onnx's reference and onnxruntime)."""
    a, b = inputs
    if a.is_floating_point() or b.is_floating_point():
        return a / b
    return torch.div(a, b, rounding_mode="trunc")


register("Einsum")(lambda i, a, c: torch.einsum(a["equation"], *i))
register("Neg")(lambda i, a, c: -i[0])
register("Sqrt")(lambda i, a, c: torch.sqrt(i[0]))
register("Exp")(lambda i, a, c: torch.exp(i[0]))
register("Log")(lambda i, a, c: torch.log(i[0]))
register("Erf")(lambda i, a, c: torch.erf(i[0]))
register("Tanh")(lambda i, a, c: torch.tanh(i[0]))
register("Sigmoid")(lambda i, a, c: torch.sigmoid(i[0]))
register("Reciprocal")(lambda i, a, c: 1.0 / i[0])
register("Pow")(lambda i, a, c: torch.pow(i[0], i[1].to(i[0].dtype)))


@register("Gelu")
def gelu(inputs, attrs, ctx):
    x = inputs[0]
    if attrs.get("approximate", "none") == "tanh":
        u = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)
        return 0.5 * x * (1.0 + torch.tanh(u))
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def _softmax(inputs, attrs, ctx, log):
    x = inputs[0]
    fn = F.log_softmax if log else F.softmax
    if ctx.opset >= 13:
        return fn(x, dim=attrs.get("axis", -1))
    axis = attrs.get("axis", 1) % x.dim()
    flat = x.reshape(int(torch.tensor(x.shape[:axis]).prod()), -1)
    return fn(flat, dim=1).reshape(x.shape)


register("Softmax")(lambda i, a, c: _softmax(i, a, c, False))
register("LogSoftmax")(lambda i, a, c: _softmax(i, a, c, True))


@register("LayerNormalization")
def layer_normalization(inputs, attrs, ctx):
    x, scale = inputs[0], inputs[1]
    bias = inputs[2] if len(inputs) > 2 else None
    axis = attrs.get("axis", -1) % x.dim()
    dims = list(range(axis, x.dim()))
    mean = x.mean(dim=dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
    inv_std = 1.0 / torch.sqrt(var + attrs.get("epsilon", 1e-5))
    y = (x - mean) * inv_std * scale
    if bias is not None:
        y = y + bias
    return y, mean, inv_std


@register("RMSNormalization")
def rms_normalization(inputs, attrs, ctx):
    """Opset 23: X / sqrt(mean(X^2 over axes axis..rank-1) + epsilon) * scale
    (stash_type only names the type of the statistics: the interpreter's)."""
    x, scale = inputs[0], inputs[1]
    axis = attrs.get("axis", -1) % x.dim()
    dims = list(range(axis, x.dim()))
    rms = torch.sqrt((x * x).mean(dim=dims, keepdim=True) + attrs.get("epsilon", 1e-5))
    return x / rms * scale
