//===- ONNXOpsConv.cpp - Convolutional ops ----------------------*- C++ -*-===//
//
// Handlers for the convolutional family that small CNNs export: Conv (2-D,
// groups, auto_pad), BatchNormalization (training mode with batch
// statistics, its running statistics pd.state it updates; inference mode
// with constant running statistics), MaxPool,
// AveragePool, GlobalAveragePool and zero-constant Pad (which PyTorch
// emits before AveragePool).
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

#include "dialects/PD/IR/PDOpsConv.h"

#include <cmath>

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

//===----------------------------------------------------------------------===//
// Windows: kernel, strides, pads, dilations, auto_pad
//===----------------------------------------------------------------------===//

namespace {

/// The resolved window of a Conv or pooling node.
struct WindowAttrs {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  bool ceilMode = false;
};

} // namespace

static RankedTensorType f32Tensor(NodeBinder &b, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, Float32Type::get(b.context()));
}

/// Reads INTS attribute `name` of `size` entries each >= `min`, or `size`
/// copies of `fill` when absent.
static ParseResult windowList(NodeBinder &b, SmallVectorImpl<int64_t> &out,
                              StringRef name, size_t size, int64_t min,
                              int64_t fill) {
  if (b.attr(out, name))
    return failure();
  if (!b.hasAttr(name))
    out.assign(size, fill);
  if (out.size() == size && llvm::all_of(out, [&](int64_t v) {
        return v >= min;
      }))
    return success();
  b.emitError() << "attribute '" << name << "' must have " << size
                << " entries, each at least " << min << " (2-D windows only)";
  return failure();
}

/// Pads from auto_pad: NOTSET reads `pads`, VALID is 0, SAME_UPPER and
/// SAME_LOWER pad to ceil(in / stride) outputs (the odd pad at the end for
/// UPPER, at the beginning for LOWER).
static ParseResult resolvePads(NodeBinder &b, ArrayRef<int64_t> spatial,
                               WindowAttrs &w) {
  std::string autoPad;
  if (b.attr(autoPad, "auto_pad", "NOTSET"))
    return failure();
  if (autoPad == "NOTSET")
    return windowList(b, w.pads, "pads", 4, 0, 0);
  if (b.hasAttr("pads")) {
    b.emitError() << "attributes 'pads' and auto_pad " << autoPad
                  << " cannot be used together";
    return failure();
  }
  w.pads.assign(4, 0);
  if (autoPad == "VALID")
    return success();
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    b.emitError() << "unsupported auto_pad '" << autoPad << "'";
    return failure();
  }
  for (int i = 0; i < 2; ++i) {
    int64_t out = (spatial[i] + w.strides[i] - 1) / w.strides[i];
    int64_t span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total =
        std::max<int64_t>(0, (out - 1) * w.strides[i] + span - spatial[i]);
    int64_t small = total / 2, big = total - small;
    bool upper = autoPad == "SAME_UPPER";
    w.pads[i] = upper ? small : big;
    w.pads[2 + i] = upper ? big : small;
  }
  return success();
}

/// Reads strides, dilations (default 1) and pads of a window on `spatial`
/// [H, W] with `kernel` already set; fails when no output fits.
static ParseResult readWindow(NodeBinder &b, ArrayRef<int64_t> spatial,
                              WindowAttrs &w) {
  if (windowList(b, w.strides, "strides", 2, 1, 1) ||
      windowList(b, w.dilations, "dilations", 2, 1, 1) ||
      resolvePads(b, spatial, w))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (convOutputSize(spatial[i], w.kernel[i], w.strides[i], w.pads[i],
                       w.pads[2 + i], w.dilations[i], w.ceilMode) <= 0) {
      b.emitError() << "the window does not fit the padded input "
                    << shapeString(spatial);
      return failure();
    }
  return success();
}

/// [N, channels, OH, OW] of a window over input `x`.
static SmallVector<int64_t> windowResultShape(ArrayRef<int64_t> x,
                                              int64_t channels,
                                              const WindowAttrs &w) {
  SmallVector<int64_t> out{x[0], channels};
  for (int i = 0; i < 2; ++i)
    out.push_back(convOutputSize(x[2 + i], w.kernel[i], w.strides[i],
                                 w.pads[i], w.pads[2 + i], w.dilations[i],
                                 w.ceilMode));
  return out;
}

/// Binds input 0 as an f32 NCHW tensor.
static ParseResult nchwOperand(NodeBinder &b, Value &x) {
  if (b.f32Operand(x, 0))
    return failure();
  if (cast<RankedTensorType>(x.getType()).getRank() == 4)
    return success();
  b.emitError() << "input '" << b.inputName(0) << "' has shape "
                << shapeString(cast<RankedTensorType>(x.getType()).getShape())
                << "; only 2-D (NCHW) inputs are supported";
  return failure();
}

//===----------------------------------------------------------------------===//
// Conv
//===----------------------------------------------------------------------===//

/// Conv (1, 11): X [N, C, H, W], W [M, C/group, KH, KW], optional B [M].
static LogicalResult importConv(NodeBinder &b) {
  Value x, w, bias;
  int64_t group;
  if (b.expectOutputs(1) || nchwOperand(b, x) || b.f32Operand(w, 1) ||
      b.optionalF32Operand(bias, 2) || b.attr(group, "group", 1))
    return failure();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
  ArrayRef<int64_t> ws = cast<RankedTensorType>(w.getType()).getShape();
  if (ws.size() != 4 || group < 1 || xs[1] % group || ws[0] % group ||
      ws[1] * group != xs[1])
    return b.emitError() << "weight '" << b.inputName(1) << "' "
                         << shapeString(ws) << " does not match input "
                         << shapeString(xs) << " with group " << group;
  if (bias && cast<RankedTensorType>(bias.getType()).getShape() !=
                  ArrayRef<int64_t>{ws[0]})
    return b.emitError() << "bias '" << b.inputName(2) << "' must have shape ["
                         << ws[0] << "]";
  WindowAttrs win;
  win.kernel.assign(ws.begin() + 2, ws.end());
  SmallVector<int64_t> kernelAttr;
  if (b.attr(kernelAttr, "kernel_shape"))
    return failure();
  if (b.hasAttr("kernel_shape") && kernelAttr != win.kernel)
    return b.emitError() << "kernel_shape " << shapeString(kernelAttr)
                         << " differs from the weight's "
                         << shapeString(win.kernel);
  if (readWindow(b, xs.drop_front(2), win))
    return failure();
  OpBuilder &builder = b.builder();
  Value y = builder.create<Conv2dOp>(
      b.loc(), f32Tensor(b, windowResultShape(xs, ws[0], win)), x, w, bias,
      builder.getDenseI64ArrayAttr(win.strides),
      builder.getDenseI64ArrayAttr(win.pads),
      builder.getDenseI64ArrayAttr(win.dilations),
      builder.getI64IntegerAttr(group));
  return b.setResult(0, y);
}

//===----------------------------------------------------------------------===//
// BatchNormalization
//===----------------------------------------------------------------------===//

/// Whether the node normalises with batch statistics: the training_mode
/// attribute from opset 14, several outputs before.
static FailureOr<bool> batchNormTraining(NodeBinder &b) {
  if (b.opset() < 14)
    return b.numOutputs() > 1;
  int64_t mode;
  if (b.attr(mode, "training_mode", 0))
    return failure();
  return mode != 0;
}

/// The statistics outputs of a training node (running mean and var, and
/// before opset 14 the saved mean and var) are never computed: unused or
/// graph outputs (they are not trained) are fine, a reader is an error.
static LogicalResult checkStatisticsOutputs(NodeBinder &b) {
  for (unsigned i = 1; i < b.numOutputs(); ++i) {
    StringRef reader = b.outputConsumer(i);
    if (!reader.empty())
      return b.emitError() << "output '" << b.outputName(i)
                           << "' (a statistics output) is read by node '"
                           << reader << "'; the statistics outputs of a "
                           << "training-mode node are not computed";
    b.markSideOutput(i);
  }
  return success();
}

/// Running statistic input `i` of a training node: state of shape [C] that
/// each forward updates (pd.state).
static FailureOr<StateOp> runningStatistic(NodeBinder &b, unsigned i,
                                           int64_t c) {
  FailureOr<StateOp> state = b.stateOperand(i);
  if (failed(state))
    return failure();
  if (cast<RankedTensorType>(state->getType()).getShape() !=
      ArrayRef<int64_t>{c})
    return b.emitError() << "input '" << b.inputName(i) << "' must have shape ["
                         << c << "]";
  return state;
}

/// A [C] f32 constant input as floats.
static ParseResult channelConstant(NodeBinder &b, unsigned i, int64_t c,
                                   SmallVectorImpl<float> &out) {
  SmallVector<double> values;
  if (b.constantOperand(values, i))
    return failure();
  if ((int64_t)values.size() != c) {
    b.emitError() << "input '" << b.inputName(i) << "' must have " << c
                  << " values";
    return failure();
  }
  out.assign(values.begin(), values.end());
  return success();
}

/// Inference mode: y = x * k + (bias - mean * k), k = scale / sqrt(var + eps)
/// with the running mean and var as constants; scale and bias are trained.
static LogicalResult importInferenceBatchNorm(NodeBinder &b, Value x,
                                              Value scale, Value bias,
                                              float eps) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t c = type.getShape()[1];
  SmallVector<float> mean, var;
  if (channelConstant(b, 3, c, mean) || channelConstant(b, 4, c, var))
    return failure();
  for (float &v : var)
    v = 1.0f / std::sqrt(v + eps);
  OpBuilder &builder = b.builder();
  Location loc = b.loc();
  auto vec = f32Tensor(b, {c});
  auto constant = [&](ArrayRef<float> v) -> Value {
    return builder.create<ConstantOp>(loc, DenseElementsAttr::get(vec, v));
  };
  Value k = builder.create<MulOp>(loc, vec, scale, constant(var));
  Value mk = builder.create<MulOp>(loc, vec, constant(mean), k);
  Value shift = builder.create<SubOp>(loc, vec, bias, mk);
  // [C] -> [C, 1, ...] to broadcast against [N, C, D...].
  SmallVector<int64_t> column(type.getRank() - 1, 1);
  column[0] = c;
  auto columnType = f32Tensor(b, column);
  Value kc = builder.create<ReshapeOp>(loc, columnType, k);
  Value sc = builder.create<ReshapeOp>(loc, columnType, shift);
  Value scaled = builder.create<MulOp>(loc, type, x, kc);
  return b.setResult(0, builder.create<AddOp>(loc, type, scaled, sc));
}

/// BatchNormalization (7, 9, 14, 15): X [N, C, D...], scale, B, mean, var.
static LogicalResult importBatchNorm(NodeBinder &b) {
  Value x, scale, bias;
  float eps;
  int64_t spatial;
  if (b.f32Operand(x, 0) || b.f32Operand(scale, 1) || b.f32Operand(bias, 2) ||
      b.attr(eps, "epsilon", 1e-5f) || b.attr(spatial, "spatial", 1))
    return failure();
  if (spatial != 1)
    return b.emitError() << "spatial = 0 (per-element statistics) is not "
                            "supported";
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() < 2)
    return b.emitError() << "input '" << b.inputName(0)
                         << "' must be [N, C, D...]";
  int64_t c = type.getShape()[1];
  for (Value v : {scale, bias})
    if (cast<RankedTensorType>(v.getType()).getShape() !=
        ArrayRef<int64_t>{c})
      return b.emitError() << "scale and B must have shape [" << c << "]";
  FailureOr<bool> training = batchNormTraining(b);
  if (failed(training))
    return failure();
  if (!*training) {
    if (b.expectOutputs(1))
      return failure();
    return importInferenceBatchNorm(b, x, scale, bias, eps);
  }
  if (failed(checkStatisticsOutputs(b)))
    return failure();
  float momentum;
  if (b.attr(momentum, "momentum", 0.9f))
    return failure();
  FailureOr<StateOp> mean = runningStatistic(b, 3, c);
  if (failed(mean))
    return failure();
  FailureOr<StateOp> var = runningStatistic(b, 4, c);
  if (failed(var))
    return failure();
  OpBuilder &builder = b.builder();
  Value y = builder.create<BatchNormOp>(
      b.loc(), type, x, scale, bias, builder.getF32FloatAttr(eps),
      builder.getF32FloatAttr(momentum),
      FlatSymbolRefAttr::get(mean->getSymNameAttr()),
      FlatSymbolRefAttr::get(var->getSymNameAttr()));
  return b.setResult(0, y);
}

//===----------------------------------------------------------------------===//
// Pooling and padding
//===----------------------------------------------------------------------===//

/// The common attributes of MaxPool and AveragePool.
static ParseResult readPoolWindow(NodeBinder &b, ArrayRef<int64_t> xs,
                                  WindowAttrs &win) {
  int64_t ceil = 0;
  if (b.attr(win.kernel, "kernel_shape") ||
      (b.opset() >= 10 && b.attr(ceil, "ceil_mode", 0)))
    return failure();
  if (win.kernel.size() != 2 || llvm::any_of(win.kernel, [](int64_t k) {
        return k < 1;
      })) {
    b.emitError() << "kernel_shape must have 2 positive entries";
    return failure();
  }
  win.ceilMode = ceil != 0;
  if (readWindow(b, xs.drop_front(2), win))
    return failure();
  if (llvm::any_of(win.dilations, [](int64_t d) { return d != 1; })) {
    b.emitError() << "dilations other than 1 are not supported";
    return failure();
  }
  for (int i = 0; i < 4; ++i)
    if (win.pads[i] >= win.kernel[i % 2]) {
      b.emitError() << "pads " << shapeString(win.pads)
                    << " must be smaller than the kernel";
      return failure();
    }
  return success();
}

/// MaxPool (1, 8, 10, 11, 12) and AveragePool (1, 7, 10, 11, 19), 2-D.
template <bool Max> static LogicalResult importPool(NodeBinder &b) {
  Value x;
  WindowAttrs win;
  if (nchwOperand(b, x))
    return failure();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape();
  if (readPoolWindow(b, xs, win))
    return failure();
  if (!Max && b.expectOutputs(1))
    return failure();
  if (Max && b.isOutputUsed(1))
    return b.emitError() << "the Indices output is not supported";
  OpBuilder &builder = b.builder();
  auto type = f32Tensor(b, windowResultShape(xs, xs[1], win));
  auto kernel = builder.getDenseI64ArrayAttr(win.kernel);
  auto strides = builder.getDenseI64ArrayAttr(win.strides);
  auto pads = builder.getDenseI64ArrayAttr(win.pads);
  UnitAttr ceil = win.ceilMode ? builder.getUnitAttr() : UnitAttr();
  if (Max)
    return b.setResult(0, builder.create<MaxPool2dOp>(b.loc(), type, x, kernel,
                                                      strides, pads, ceil));
  int64_t includePad;
  if (b.attr(includePad, "count_include_pad", 0))
    return failure();
  Value y = builder.create<AvgPool2dOp>(
      b.loc(), type, x, kernel, strides, pads, ceil,
      includePad ? builder.getUnitAttr() : UnitAttr());
  return b.setResult(0, y);
}

/// GlobalAveragePool (1): the mean over every axis after N and C, kept.
static LogicalResult importGlobalAveragePool(NodeBinder &b) {
  Value x;
  if (b.expectOutputs(1) || b.f32Operand(x, 0))
    return failure();
  auto type = cast<RankedTensorType>(x.getType());
  if (type.getRank() < 3)
    return b.emitError() << "input '" << b.inputName(0)
                         << "' must be [N, C, D...]";
  SmallVector<int64_t> axes, shape(type.getShape());
  int64_t count = 1;
  for (int64_t i = 2; i < type.getRank(); ++i) {
    axes.push_back(i);
    count *= shape[i];
    shape[i] = 1;
  }
  OpBuilder &builder = b.builder();
  Value sum = builder.create<ReduceSumOp>(
      b.loc(), f32Tensor(b, shape), x, builder.getDenseI64ArrayAttr(axes),
      builder.getUnitAttr());
  Value mean = builder.create<ScaleOp>(b.loc(), sum,
                                       builder.getF32FloatAttr(1.0f / count));
  return b.setResult(0, mean);
}

/// Pad's pads (attribute before 11, constant input from 11, restricted to
/// `axes` from 18) as [begin..., end...] over all `rank` axes.
static FailureOr<SmallVector<int64_t>> padAmounts(NodeBinder &b, int64_t rank) {
  SmallVector<int64_t> pads, axes;
  if (b.opset() < 11) {
    if (b.attr(pads, "pads"))
      return failure();
  } else {
    SmallVector<double> values;
    if (b.constantOperand(values, 1))
      return failure();
    pads.assign(values.begin(), values.end());
  }
  if (b.opset() >= 18 && b.hasInput(3)) {
    SmallVector<double> values;
    if (b.constantOperand(values, 3))
      return failure();
    for (double v : values)
      axes.push_back(v < 0 ? (int64_t)v + rank : (int64_t)v);
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  size_t n = axes.size();
  if (pads.size() != 2 * n || llvm::any_of(axes, [&](int64_t a) {
        return a < 0 || a >= rank;
      }))
    return b.emitError() << "pads must hold 2 values per padded axis";
  SmallVector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < n; ++i) {
    full[axes[i]] = pads[i];
    full[rank + axes[i]] = pads[n + i];
  }
  if (llvm::any_of(full, [](int64_t p) { return p < 0; }))
    return b.emitError() << "negative pads (cropping) are not supported";
  return full;
}

/// Pad (2, 11, 13, 18) in constant mode, of any element type (labels are
/// padded with -100 by transformers' causal LM loss).
static LogicalResult importPad(NodeBinder &b) {
  Value x;
  std::string mode;
  if (b.expectOutputs(1) || b.operand(x, 0) ||
      b.attr(mode, "mode", "constant"))
    return failure();
  if (mode != "constant")
    return b.emitError() << "mode '" << mode << "' is not supported (only "
                         << "constant padding)";
  double value = 0.0;
  if (b.opset() < 11) {
    float v;
    if (b.attr(v, "value", 0.0f))
      return failure();
    value = v;
  } else if (b.hasInput(2)) {
    SmallVector<double> values;
    if (b.constantOperand(values, 2))
      return failure();
    if (values.size() != 1)
      return b.emitError() << "constant_value '" << b.inputName(2)
                           << "' must hold one value";
    value = values[0];
  }
  auto type = cast<RankedTensorType>(x.getType());
  auto pads = padAmounts(b, type.getRank());
  if (failed(pads))
    return failure();
  if (llvm::all_of(*pads, [](int64_t p) { return p == 0; }))
    return b.setResult(0, x);
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t i = 0; i < type.getRank(); ++i)
    shape[i] += (*pads)[i] + (*pads)[type.getRank() + i];
  Value y = b.builder().create<PadOp>(
      b.loc(), RankedTensorType::get(shape, type.getElementType()), x,
      b.builder().getDenseI64ArrayAttr(*pads), b.builder().getF64FloatAttr(value));
  return b.setResult(0, y);
}

void mlir::pd::detail::registerConvHandlers(HandlerTable &table) {
  table["Conv"] = {1, importConv};
  table["BatchNormalization"] = {7, importBatchNorm};
  table["MaxPool"] = {1, importPool<true>};
  table["AveragePool"] = {1, importPool<false>};
  table["GlobalAveragePool"] = {1, importGlobalAveragePool};
  table["Pad"] = {2, importPad};
}
