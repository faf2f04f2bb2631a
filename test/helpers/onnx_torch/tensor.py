"""Interpreters of the ONNX tensor ops (see __init__.py for the op signature):
data movement (Transpose, Reshape, Gather, GatherElements, GatherND,
ScatterND, Slice, Split, Concat, Expand, Trilu, Where, ...), casts, shapes
and ranges, Dropout. Integer and bool tensors pass through with their types;
FLOAT results use the interpreter's float type (core.interp_float)."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from onnx import numpy_helper

from . import register
from .core import interp_float
from .rng import dropout_keep


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
    x, axis = inputs[0], attrs.get("axis", 1)
    axis = axis + x.dim() if axis < 0 else axis  # in [-r, r]
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


def _normalize(idx, dims):
    """Indices with negative entries counted from the end of dims."""
    return torch.where(idx < 0, idx + dims, idx)


@register("GatherElements")
def gather_elements(inputs, attrs, ctx):
    data, idx = inputs[0], inputs[1].long()
    axis = attrs.get("axis", 0) % data.dim()
    return torch.gather(data, axis, _normalize(idx, data.shape[axis]))


def _nd_indices(data, indices, batch_dims):
    """GatherND/ScatterND addressing: data viewed as [B, ...] (B the product
    of the batch dims) and the index tuples as a tuple of [B, N] tensors."""
    idx = indices.long()
    k = idx.shape[-1]
    flat = data.reshape((-1,) + tuple(data.shape[batch_dims:]))
    idx = idx.reshape(flat.shape[0], -1, k)
    idx = _normalize(idx, torch.tensor(data.shape[batch_dims:batch_dims + k],
                                       dtype=torch.int64))
    rows = torch.arange(flat.shape[0]).unsqueeze(1).expand(idx.shape[:2])
    return flat, (rows,) + tuple(idx[..., j] for j in range(k))


@register("GatherND")
def gather_nd(inputs, attrs, ctx):
    data, indices = inputs
    b = attrs.get("batch_dims", 0)
    flat, where = _nd_indices(data, indices, b)
    k = indices.shape[-1]
    return flat[where].reshape(tuple(indices.shape[:-1]) +
                               tuple(data.shape[b + k:]))


_SCATTER = {"add": torch.add, "mul": torch.mul, "max": torch.maximum,
            "min": torch.minimum}


@register("ScatterND")
def scatter_nd(inputs, attrs, ctx):
    """Updates one index tuple at a time, in order (the reduction applies
    to repeated tuples as onnx's reference does)."""
    data, indices, updates = inputs
    out, where = _nd_indices(data.clone(), indices, 0)
    k = indices.shape[-1]
    upd = updates.reshape((-1,) + tuple(data.shape[k:]))
    reduce = _SCATTER.get(attrs.get("reduction", "none"))
    for n in range(upd.shape[0]):
        at = tuple(int(w[0, n]) for w in where)
        out[at] = reduce(out[at], upd[n]) if reduce else upd[n]
    return out.reshape(data.shape)


@register("Trilu")
def trilu(inputs, attrs, ctx):
    """Keeps the upper (upper=1, default) or lower triangle of the last two
    axes, from the k-th diagonal (k an optional input, default 0)."""
    x = inputs[0]
    k = int(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else 0
    return torch.triu(x, k) if attrs.get("upper", 1) else torch.tril(x, k)


def _slice_indices(start, end, step, dim):
    """The indices ONNX Slice selects on one axis (negative steps too)."""
    start = start + dim if start < 0 else start
    end = end + dim if end < 0 else end
    if step > 0:
        start, end = min(max(start, 0), dim), min(max(end, 0), dim)
    else:
        start, end = min(max(start, 0), dim - 1), min(max(end, -1), dim - 1)
    return list(range(start, end, step))


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
    for j, axis in enumerate(axes):
        axis = int(axis) % x.dim()
        step = int(steps[j]) if steps else 1
        idx = _slice_indices(int(starts[j]), int(ends[j]), step, x.shape[axis])
        x = torch.index_select(x, axis, torch.tensor(idx, dtype=torch.int64))
    return x


@register("Split")
def split(inputs, attrs, ctx):
    x, axis = inputs[0], attrs.get("axis", 0)
    sizes = attrs.get("split") if ctx.opset < 13 else (
        inputs[1].tolist() if len(inputs) > 1 and inputs[1] is not None else None)
    if not sizes:
        n = attrs.get("num_outputs", len(ctx.node.output))
        chunk = -(-x.shape[axis] // n)
        sizes = [min(chunk, x.shape[axis] - i * chunk) for i in range(n)]
    return tuple(torch.split(x, [int(s) for s in sizes], dim=axis))


@register("Concat")
def concat(inputs, attrs, ctx):
    return torch.cat(inputs, dim=attrs.get("axis", 0))


_CAST = {1: torch.float32, 2: torch.uint8, 3: torch.int8, 5: torch.int16,
         6: torch.int32, 7: torch.int64, 9: torch.bool, 10: torch.float16,
         11: torch.float64, 16: torch.bfloat16}


@register("Cast")
def cast(inputs, attrs, ctx):
    """Casts to FLOAT give the interpreter's float type (float64 in gradient
    checks), from any type; float to integer truncates toward zero."""
    if attrs["to"] not in _CAST:
        raise NotImplementedError(f"onnx_torch: Cast to type {attrs['to']}")
    target = _CAST[attrs["to"]]
    return inputs[0].to(ctx.dtype if target == torch.float32 else target)


@register("CastLike")
def cast_like(inputs, attrs, ctx):
    return inputs[0].to(inputs[1].dtype)


@register("SplitToSequence")
def split_to_sequence(inputs, attrs, ctx):
    x, axis = inputs[0], attrs.get("axis", 0)
    split = inputs[1] if len(inputs) > 1 else None
    if split is None:
        chunks = torch.split(x, 1, dim=axis)
        if not attrs.get("keepdims", 1):
            chunks = [c.squeeze(axis) for c in chunks]
    elif split.dim() == 0:
        chunks = torch.split(x, int(split), dim=axis)
    else:
        chunks = torch.split(x, [int(s) for s in split.tolist()], dim=axis)
    return (list(chunks),)  # one output: the sequence


register("SequenceAt")(lambda i, a, c: i[0][int(i[1])])


@register("Shape")
def shape(inputs, attrs, ctx):
    dims = list(inputs[0].shape)
    start, end = attrs.get("start", 0), attrs.get("end", len(dims))
    return torch.tensor(dims[slice(start, end)], dtype=torch.int64)


register("Size")(lambda i, a, c: torch.tensor(i[0].numel(), dtype=torch.int64))


@register("Range")
def range_(inputs, attrs, ctx):
    """start + i * delta for i < max(ceil((limit - start) / delta), 0), in
    start's type (the count exact for integers)."""
    start, limit, delta = inputs
    if start.is_floating_point():
        n = int(math.ceil((float(limit) - float(start)) / float(delta)))
    else:
        n = -((int(start) - int(limit)) // int(delta))
    return start + torch.arange(max(n, 0), dtype=start.dtype) * delta


@register("ConstantOfShape")
def constant_of_shape(inputs, attrs, ctx):
    value = attrs.get("value")
    fill = (torch.from_numpy(numpy_helper.to_array(value).copy()).reshape(())
            if value is not None else torch.tensor(0.0))
    return interp_float(torch.full([int(d) for d in inputs[0].tolist()],
                                   fill.item(), dtype=fill.dtype), ctx)


@register("Expand")
def expand(inputs, attrs, ctx):
    x, spec = inputs[0], [int(d) for d in inputs[1].tolist()]
    shape = torch.broadcast_shapes(tuple(x.shape), tuple(spec))
    return x.expand(shape).clone()
register("Where")(lambda i, a, c: torch.where(i[0].bool(), i[1], i[2]))


@register("Dropout")
def dropout(inputs, attrs, ctx):
    """Training mode with ratio > 0 draws pdc's counter-based mask (rng.py):
    the rng_id is the number of such dropouts before this one in the graph."""
    ratio = float(inputs[1]) if len(inputs) > 1 and inputs[1] is not None else 0.5
    training = bool(inputs[2]) if len(inputs) > 2 and inputs[2] is not None else False
    x = inputs[0]
    if not training or ratio == 0.0:
        return x, torch.ones_like(x, dtype=torch.bool)
    rng_id = ctx.rng["next_id"]
    ctx.rng["next_id"] += 1
    keep = torch.from_numpy(dropout_keep(x.numel(), ratio, ctx.rng["seed"], rng_id,
                                         ctx.rng["microbatch"])).reshape(x.shape)
    # pdc's scale is 1/(1 - ratio) in float32.
    scale = float(np.float32(1.0) / (np.float32(1.0) - np.float32(ratio)))
    return torch.where(keep, x * scale, torch.zeros_like(x)), keep
