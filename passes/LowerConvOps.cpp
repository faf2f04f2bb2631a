//===- LowerConvOps.cpp - Runtime calls of conv ops -------------*- C++ -*-===//
//
// pd-lower-to-runtime's patterns for the convolutional ops (conv, batch
// norm, pooling, padding): each op becomes one call of its pdrt_* kernel
// (runtime/include/pdrt/pdrt_conv.h) on its buffers' addresses, window
// geometry passed as a constant descriptor.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::pd;

namespace {

/// The window of a conv or pooling op (dilations 1 and group = channels for
/// pooling).
struct Window {
  ArrayRef<int64_t> kernel, strides, pads, dilations;
  int64_t group;
  int64_t flags;
};

} // namespace

/// The geometry descriptor of pdrt_conv_numerics.h for input shape `x`
/// ([n, c, h, w]) and output shape `y` ([n, m, oh, ow]).
static Value geometry(RuntimeCallBuilder &b, ArrayRef<int64_t> x,
                      ArrayRef<int64_t> y, const Window &win) {
  return b.descriptor({x[0], x[1], x[2], x[3], y[1], win.kernel[0],
                       win.kernel[1], y[2], y[3], win.strides[0],
                       win.strides[1], win.pads[0], win.pads[1], win.pads[2],
                       win.pads[3], win.dilations[0], win.dilations[1],
                       win.group, win.flags});
}

template <typename ConvLike> static Window convWindow(ConvLike op, Value w) {
  return {shapeOf(w).drop_front(2), op.getStrides(), op.getPads(),
          op.getDilations(), (int64_t)op.getGroup(), 0};
}

static constexpr int64_t kUnitDilations[] = {1, 1};

template <typename PoolLike>
static Window poolWindow(PoolLike op, int64_t channels, bool includePad) {
  return {op.getKernelShape(), op.getStrides(), op.getPads(), kUnitDilations,
          channels, includePad ? 1 : 0};
}

/// The address of an optional operand, or a null pointer.
static Value addressOrNull(RuntimeCallBuilder &b, Value v) {
  return v ? b.address(v) : b.null();
}

/// [n, c, s]: batch, channels and the product of the trailing dims.
static std::array<int64_t, 3> batchNormDims(Value x) {
  ArrayRef<int64_t> shape = shapeOf(x);
  int64_t s = 1;
  for (int64_t d : shape.drop_front(2))
    s *= d;
  return {shape[0], shape[1], s};
}

/// The address of pd.state `sym` in the stage's state region:
/// pdrt_state_region(ctx) plus its offset in the function's `pd.state`.
static FailureOr<Value> stateAddress(RuntimeCallBuilder &b, Operation *op,
                                     FlatSymbolRefAttr sym) {
  DictionaryAttr layout = b.getStage().stateLayout;
  auto offset =
      layout ? layout.getAs<IntegerAttr>(sym.getValue()) : IntegerAttr();
  if (!offset)
    return op->emitError("pd-lower-to-runtime: state ")
           << sym << " has no offset in pd.state; run pd-allocate-buffers";
  Value region = b.call(RuntimeFn::pdrt_state_region, {b.ctx()});
  return b.offset(region, offset.getInt());
}

/// y = batch_norm(x) and, with running statistics, their update.
static LogicalResult lowerBatchNormForward(RuntimeCallBuilder &b, BatchNormOp bn) {
  auto [n, c, s] = batchNormDims(bn.getInput());
  b.call(RuntimeFn::pdrt_batch_norm,
         {b.ctx(), b.address(bn.getInput()), b.address(bn.getScale()),
          b.address(bn.getBias()), b.address(bn), b.i64(n), b.i64(c), b.i64(s),
          b.f32(bn.getEpsilon().convertToFloat())});
  if (!bn.getRunningMeanAttr())
    return success();
  FailureOr<Value> mean = stateAddress(b, bn, bn.getRunningMeanAttr());
  if (failed(mean))
    return failure();
  FailureOr<Value> var = stateAddress(b, bn, bn.getRunningVarAttr());
  if (failed(var))
    return failure();
  b.call(RuntimeFn::pdrt_batch_norm_running_stats,
         {b.ctx(), b.address(bn.getInput()), *mean, *var, b.i64(n), b.i64(c),
          b.i64(s), b.f32(bn.getMomentum()->convertToFloat())});
  return success();
}

/// dx, dscale and dbias of batch norm over the batch's statistics.
static LogicalResult lowerBatchNormGrad(RuntimeCallBuilder &b,
                                        BatchNormGradOp g) {
  auto [n, c, s] = batchNormDims(g.getInput());
  b.call(RuntimeFn::pdrt_batch_norm_grad,
         {b.ctx(), b.address(g.getGrad()), b.address(g.getInput()),
          b.address(g.getScale()), b.address(g.getInputGrad()),
          b.address(g.getScaleGrad()), b.address(g.getBiasGrad()), b.i64(n),
          b.i64(c), b.i64(s), b.f32(g.getEpsilon().convertToFloat())});
  return success();
}

/// pdrt_pad's descriptor [rank, x_dims, y_dims, begin].
static LogicalResult lowerPad(RuntimeCallBuilder &b, PadOp p) {
  ArrayRef<int64_t> x = shapeOf(p.getInput()), y = shapeOf(p);
  SmallVector<int64_t> words{(int64_t)x.size()};
  words.append(x.begin(), x.end());
  words.append(y.begin(), y.end());
  ArrayRef<int64_t> begin = p.getPads().take_front(x.size());
  words.append(begin.begin(), begin.end());
  Type elem = cast<RankedTensorType>(p.getType()).getElementType();
  double value = p.getValue().convertToDouble();
  if (elem.isF32() && value == 0.0) {
    b.call(RuntimeFn::pdrt_pad, {b.ctx(), b.address(p.getInput()), b.address(p),
                        b.descriptor(words)});
    return success();
  }
  // The fill element's bytes: a float's bit pattern, an integer's value.
  int64_t bits = (int64_t)value;
  if (elem.isF32())
    bits = (int64_t)llvm::bit_cast<uint32_t>((float)value);
  else if (elem.isInteger(1))
    bits = value != 0.0;
  b.call(RuntimeFn::pdrt_pad_value,
         {b.ctx(), b.address(p.getInput()), b.address(p), b.descriptor(words),
          b.i64((elem.getIntOrFloatBitWidth() + 7) / 8), b.i64(bits)});
  return success();
}

void mlir::pd::populateConvRuntimePatterns(RuntimePatterns &patterns) {
  patterns.add<Conv2dOp>([](Conv2dOp c, RuntimeCallBuilder &b) {
    Value desc = geometry(b, shapeOf(c.getInput()), shapeOf(c),
                          convWindow(c, c.getFilter()));
    b.call(RuntimeFn::pdrt_conv2d,
           {b.ctx(), b.address(c.getInput()), b.address(c.getFilter()),
            addressOrNull(b, c.getBias()), b.address(c), desc});
    return success();
  });
  patterns.add<Conv2dGradInputOp>([](Conv2dGradInputOp c,
                                     RuntimeCallBuilder &b) {
    Value desc = geometry(b, shapeOf(c), shapeOf(c.getGrad()),
                          convWindow(c, c.getFilter()));
    b.call(RuntimeFn::pdrt_conv2d_grad_input,
           {b.ctx(), b.address(c.getGrad()), b.address(c.getFilter()),
            b.address(c), desc});
    return success();
  });
  patterns.add<Conv2dGradFilterOp>([](Conv2dGradFilterOp c,
                                      RuntimeCallBuilder &b) {
    Value desc = geometry(b, shapeOf(c.getInput()), shapeOf(c.getGrad()),
                          convWindow(c, c.getResult()));
    b.call(RuntimeFn::pdrt_conv2d_grad_filter,
           {b.ctx(), b.address(c.getGrad()), b.address(c.getInput()),
            b.address(c), desc});
    return success();
  });
  patterns.add<BatchNormOp>([](BatchNormOp bn, RuntimeCallBuilder &b) {
    return lowerBatchNormForward(b, bn);
  });
  patterns.add<BatchNormGradOp>([](BatchNormGradOp g, RuntimeCallBuilder &b) {
    return lowerBatchNormGrad(b, g);
  });
  patterns.add<MaxPool2dOp>([](MaxPool2dOp p, RuntimeCallBuilder &b) {
    ArrayRef<int64_t> x = shapeOf(p.getInput());
    Value desc = geometry(b, x, shapeOf(p), poolWindow(p, x[1], false));
    b.call(RuntimeFn::pdrt_max_pool2d,
           {b.ctx(), b.address(p.getInput()), b.address(p), desc});
    return success();
  });
  patterns.add<MaxPool2dGradOp>([](MaxPool2dGradOp p, RuntimeCallBuilder &b) {
    ArrayRef<int64_t> x = shapeOf(p.getInput());
    Value desc =
        geometry(b, x, shapeOf(p.getGrad()), poolWindow(p, x[1], false));
    b.call(RuntimeFn::pdrt_max_pool2d_grad,
           {b.ctx(), b.address(p.getGrad()), b.address(p.getInput()),
            b.address(p), desc});
    return success();
  });
  patterns.add<AvgPool2dOp>([](AvgPool2dOp p, RuntimeCallBuilder &b) {
    ArrayRef<int64_t> x = shapeOf(p.getInput());
    Value desc = geometry(b, x, shapeOf(p),
                          poolWindow(p, x[1], p.getCountIncludePad()));
    b.call(RuntimeFn::pdrt_avg_pool2d,
           {b.ctx(), b.address(p.getInput()), b.address(p), desc});
    return success();
  });
  patterns.add<AvgPool2dGradOp>([](AvgPool2dGradOp p, RuntimeCallBuilder &b) {
    ArrayRef<int64_t> x = shapeOf(p);
    Value desc = geometry(b, x, shapeOf(p.getGrad()),
                          poolWindow(p, x[1], p.getCountIncludePad()));
    b.call(RuntimeFn::pdrt_avg_pool2d_grad,
           {b.ctx(), b.address(p.getGrad()), b.address(p), desc});
    return success();
  });
  patterns.add<PadOp>(
      [](PadOp p, RuntimeCallBuilder &b) { return lowerPad(b, p); });
}
