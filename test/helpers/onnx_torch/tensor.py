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


@register("Slice")
def slice_(inputs, attrs, ctx):
    x = inputs[0]
    if ctx.opset < 10:
        starts, ends = attrs["starts"], attrs["ends"]
        axes, steps = attrs.get("axes") or list(range(len(starts))), None
    else:
        starts, ends = inputs[1].tolist(), inputs[2].tolist()
        axes = inputs[3].tolist() if len(inputs) > 3 and inputs[3] is not None \
            else list(range(len(starts)))
        steps = inputs[4].tolist() if len(inputs) > 4 and inputs[4] is not None \
            else None
    index = [slice(None)] * x.dim()
    for j, axis in enumerate(axes):
        step = steps[j] if steps else 1
        index[axis % x.dim()] = slice(int(starts[j]), int(ends[j]), int(step))
    return x[tuple(index)]


@register("Split")
def split(inputs, attrs, ctx):
    x, axis = inputs[0], attrs.get("axis", 0)
    sizes = attrs.get("split") if ctx.opset < 13 else (
        inputs[1].tolist() if len(inputs) > 1 and inputs[1] is not None else None)
    if not sizes:
        n = len(ctx.node.output)
        chunk = -(-x.shape[axis] // n)
        sizes = [min(chunk, x.shape[axis] - i * chunk) for i in range(n)]
    return tuple(torch.split(x, [int(s) for s in sizes], dim=axis))


@register("Concat")
def concat(inputs, attrs, ctx):
    return torch.cat(inputs, dim=attrs.get("axis", 0))


_CAST = {1: torch.float32, 6: torch.int32, 7: torch.int64, 9: torch.bool,
         11: torch.float64}


@register("Cast")
def cast(inputs, attrs, ctx):
    target = _CAST[attrs["to"]]
    x = inputs[0]
    # Keep the interpreter's float precision (float64 in gradient checks).
    return x if target == torch.float32 and x.is_floating_point() else x.to(target)


register("Equal")(lambda i, a, c: i[0] == i[1])
register("Where")(lambda i, a, c: torch.where(i[0].bool(), i[1], i[2]))


@register("Dropout")
def dropout(inputs, attrs, ctx):
    ratio = float(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else 0.5
    training = bool(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else False
    if training and ratio != 0.0:
        raise NotImplementedError("training-mode dropout with ratio > 0")
    return inputs[0], torch.ones_like(inputs[0], dtype=torch.bool)
