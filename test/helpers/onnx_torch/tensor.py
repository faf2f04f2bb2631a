"""Interpreters of the ONNX tensor ops (see __init__.py for the op signature)."""
import torch
import torch.nn.functional as F

from . import register


@register("Transpose")
def transpose(inputs, attrs, ctx):
    x = inputs[0]
    perm = attrs.get("perm") or list(reversed(range(x.dim())))
    return x.permute(*perm)


@register("Reshape")
def reshape(inputs, attrs, ctx):
    x, spec = inputs[0], [int(d) for d in inputs[1].tolist()]
    if not attrs.get("allowzero", 0):
        spec = [x.shape[i] if d == 0 else d for i, d in enumerate(spec)]
    return x.reshape(spec)


@register("Flatten")
def flatten(inputs, attrs, ctx):
    x = inputs[0]
    axis = attrs.get("axis", 1) % (x.dim() + 1) if x.dim() else 0
    return x.reshape(int(torch.tensor(x.shape[:axis]).prod()), -1)


def _squeeze_axes(inputs, attrs, ctx):
    if ctx.opset < 13:
        return list(attrs.get("axes", []))
    if len(inputs) > 1 and inputs[1] is not None:
        return [int(a) for a in inputs[1].tolist()]
    return []


@register("Squeeze")
def squeeze(inputs, attrs, ctx):
    x, axes = inputs[0], _squeeze_axes(inputs, attrs, ctx)
    if not axes:
        return x.squeeze()
    keep = [d for i, d in enumerate(x.shape)
            if i not in {a % x.dim() for a in axes}]
    return x.reshape(keep)


@register("Unsqueeze")
def unsqueeze(inputs, attrs, ctx):
    x, axes = inputs[0], _squeeze_axes(inputs, attrs, ctx)
    rank = x.dim() + len(axes)
    for a in sorted(a % rank for a in axes):
        x = x.unsqueeze(a)
    return x


@register("Gather")
def gather(inputs, attrs, ctx):
    data, idx = inputs[0], inputs[1].long()
    axis = attrs.get("axis", 0) % data.dim()
    idx = torch.where(idx < 0, idx + data.shape[axis], idx)
    out = torch.index_select(data, axis, idx.reshape(-1))
    shape = list(data.shape[:axis]) + list(idx.shape) + list(data.shape[axis + 1:])
    return out.reshape(shape)
