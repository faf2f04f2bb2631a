"""Interpreters of the ONNX conv ops (see __init__.py for the op signature).

Conv, BatchNormalization (training mode with batch statistics, updating the
running statistics as torch does; inference mode with the running
statistics, which get no gradient), MaxPool,
AveragePool, GlobalAveragePool and Pad. 2-D windows pad explicitly (so
asymmetric and auto_pad pads work) and crop to ONNX's output size.
"""
import math

import torch
import torch.nn.functional as F

from . import register, register_state


def _out_size(size, k, s, begin, end, d, ceil):
    """ONNX/PyTorch output size; a ceil window must start before the end pad."""
    span = size + begin + end - d * (k - 1) - 1
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + begin:
        out -= 1
    return out


def _window(x, attrs, kernel, dilations):
    """strides and [top, left, bottom, right] pads, auto_pad resolved."""
    strides = list(attrs.get("strides", [1, 1]))
    auto = attrs.get("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return strides, list(attrs.get("pads", [0, 0, 0, 0]))
    if auto == "VALID":
        return strides, [0, 0, 0, 0]
    pads = [0, 0, 0, 0]
    for i in range(2):
        size = x.shape[2 + i]
        out = -(-size // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size)
        small, big = total // 2, total - total // 2
        upper = auto == "SAME_UPPER"
        pads[i], pads[2 + i] = (small, big) if upper else (big, small)
    return strides, pads


def _pad2d(x, pads, value):
    """Pads the last two axes by ONNX [top, left, bottom, right]."""
    return F.pad(x, (pads[1], pads[3], pads[0], pads[2]), value=value)


@register("Conv")
def conv(inputs, attrs, ctx):
    x, w = inputs[0], inputs[1]
    b = inputs[2] if len(inputs) > 2 else None
    kernel = list(w.shape[2:])
    dilations = list(attrs.get("dilations", [1, 1]))
    strides, pads = _window(x, attrs, kernel, dilations)
    return F.conv2d(_pad2d(x, pads, 0.0), w, b, stride=strides,
                    dilation=dilations, groups=attrs.get("group", 1))


def _bn_training(node, attrs, opset):
    """training_mode from opset 14, several outputs before."""
    return attrs.get("training_mode", 0) if opset >= 14 else len(node.output) > 1


@register_state("BatchNormalization")
def batch_normalization_state(node, attrs, opset):
    """Training mode updates the running mean and var (inputs 3 and 4)."""
    return [3, 4] if _bn_training(node, attrs, opset) else []


@register("BatchNormalization")
def batch_normalization(inputs, attrs, ctx):
    x, scale, bias, mean, var = inputs[:5]
    eps = attrs.get("epsilon", 1e-5)
    momentum = attrs.get("momentum", 0.9)
    if not _bn_training(ctx.node, attrs, ctx.opset):
        # The running statistics are constants, not trained.
        return F.batch_norm(x, mean.detach(), var.detach(), scale, bias,
                            training=False, eps=eps)
    # Batch statistics; torch updates the running statistics in place with
    # its momentum (1 - ONNX's) and the unbiased batch variance.
    run_mean, run_var = mean.detach().clone(), var.detach().clone()
    y = F.batch_norm(x, run_mean, run_var, scale, bias, training=True,
                     momentum=1.0 - momentum, eps=eps)
    if ctx.updates is not None:
        ctx.updates[ctx.node.input[3]] = run_mean
        ctx.updates[ctx.node.input[4]] = run_var
    dims = [0] + list(range(2, x.dim()))
    batch_mean = x.detach().mean(dim=dims)
    batch_var = x.detach().var(dim=dims, unbiased=False)
    outs = (y, run_mean, run_var, batch_mean, batch_var)
    return outs[:len(ctx.node.output)]


def _pool(inputs, attrs, ctx, is_max):
    x = inputs[0]
    kernel = list(attrs["kernel_shape"])
    ceil = bool(attrs.get("ceil_mode", 0))
    strides, pads = _window(x, attrs, kernel, [1, 1])
    out = [_out_size(x.shape[2 + i], kernel[i], strides[i], pads[i], pads[2 + i], 1, ceil)
           for i in range(2)]
    if is_max:
        y = F.max_pool2d(_pad2d(x, pads, -math.inf), kernel, strides, ceil_mode=ceil)
        return y[:, :, :out[0], :out[1]]
    # Sum of the window over the number of its cells that count: the padded
    # cells with count_include_pad, else the input cells.
    def window_sum(t):
        return F.avg_pool2d(t, kernel, strides, ceil_mode=ceil,
                            divisor_override=1)[:, :, :out[0], :out[1]]
    ones = torch.ones_like(x[:1, :1])
    fill = 1.0 if attrs.get("count_include_pad", 0) else 0.0
    count = window_sum(_pad2d(ones, pads, fill))
    return window_sum(_pad2d(x, pads, 0.0)) / count


register("MaxPool")(lambda i, a, c: _pool(i, a, c, True))
register("AveragePool")(lambda i, a, c: _pool(i, a, c, False))


@register("GlobalAveragePool")
def global_average_pool(inputs, attrs, ctx):
    x = inputs[0]
    return x.mean(dim=list(range(2, x.dim())), keepdim=True)


@register("Pad")
def pad(inputs, attrs, ctx):
    x = inputs[0]
    if attrs.get("mode", "constant") != "constant":
        raise NotImplementedError("onnx_torch: Pad supports constant mode only")
    if ctx.opset < 11:
        pads, value = list(attrs["pads"]), attrs.get("value", 0.0)
        axes = list(range(x.dim()))
    else:
        pads = [int(p) for p in inputs[1].tolist()]
        # .item(): an int64 fill (labels padded with -100) stays exact.
        value = inputs[2].item() if len(inputs) > 2 and inputs[2] is not None else 0
        axes = (list(range(x.dim())) if len(inputs) < 4 or inputs[3] is None
                else [int(a) % x.dim() for a in inputs[3].tolist()])
    n = len(axes)
    spec = [0] * (2 * x.dim())
    for i, a in enumerate(axes):
        spec[2 * (x.dim() - 1 - a)] = pads[i]
        spec[2 * (x.dim() - 1 - a) + 1] = pads[n + i]
    return F.pad(x, spec, value=value)
