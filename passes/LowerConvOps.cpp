//===- LowerConvOps.cpp - Runtime calls of conv ops -------------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for the convolutional ops (conv, batch norm,
// pooling, padding): each op becomes one call of its pdrt_* kernel
// (runtime/include/pdrt/pdrt_conv.h) on the addresses StageLowering
// computes, window geometry passed as a constant descriptor.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"
#include "llvm/ADT/TypeSwitch.h"
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
static Value geometry(StageLowering &L, ArrayRef<int64_t> x,
                      ArrayRef<int64_t> y, const Window &win) {
  return L.descriptor({x[0], x[1], x[2], x[3], y[1], win.kernel[0],
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
static Value addressOrNull(StageLowering &L, Value v, Location loc) {
  if (v)
    return L.address(v);
  return L.getBuilder().create<LLVM::ZeroOp>(
      loc, LLVM::LLVMPointerType::get(L.getBuilder().getContext()));
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
static FailureOr<Value> stateAddress(StageLowering &L, Operation *op,
                                     FlatSymbolRefAttr sym) {
  auto fn = op->getParentOfType<func::FuncOp>();
  auto layout = fn->getAttrOfType<DictionaryAttr>(
      PDDialect::StateAttrHelper::getNameStr());
  auto offset =
      layout ? layout.getAs<IntegerAttr>(sym.getValue()) : IntegerAttr();
  if (!offset)
    return op->emitError("pd-lower-to-runtime: state ")
           << sym << " has no offset in pd.state; run pd-allocate-buffers";
  OpBuilder &b = L.getBuilder();
  Location loc = op->getLoc();
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  ModuleOp module = L.getModule();
  auto base = module.lookupSymbol<LLVM::LLVMFuncOp>("pdrt_state_region");
  if (!base) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(module.getBody());
    base = b.create<LLVM::LLVMFuncOp>(loc, "pdrt_state_region",
                                      LLVM::LLVMFunctionType::get(ptr, {ptr}));
  }
  Value region =
      b.create<LLVM::CallOp>(loc, base, ValueRange{L.ctx()}).getResult();
  return b
      .create<LLVM::GEPOp>(
          loc, ptr, b.getI8Type(), region,
          ArrayRef<LLVM::GEPArg>{L.byteOffset(offset.getInt())})
      .getResult();
}

/// y = batch_norm(x) and, with running statistics, their update.
static LogicalResult lowerBatchNormForward(StageLowering &L, BatchNormOp bn) {
  auto [n, c, s] = batchNormDims(bn.getInput());
  L.call("pdrt_batch_norm",
         {L.ctx(), L.address(bn.getInput()), L.address(bn.getScale()),
          L.address(bn.getBias()), L.address(bn), L.i64(n), L.i64(c), L.i64(s),
          L.f32(bn.getEpsilon().convertToFloat())});
  if (!bn.getRunningMeanAttr())
    return success();
  FailureOr<Value> mean = stateAddress(L, bn, bn.getRunningMeanAttr());
  if (failed(mean))
    return failure();
  FailureOr<Value> var = stateAddress(L, bn, bn.getRunningVarAttr());
  if (failed(var))
    return failure();
  L.call("pdrt_batch_norm_running_stats",
         {L.ctx(), L.address(bn.getInput()), *mean, *var, L.i64(n), L.i64(c),
          L.i64(s), L.f32(bn.getMomentum()->convertToFloat())});
  return success();
}

static LogicalResult lowerBatchNorm(StageLowering &L, Operation *op) {
  if (auto bn = dyn_cast<BatchNormOp>(op))
    return lowerBatchNormForward(L, bn);
  auto g = cast<BatchNormGradOp>(op);
  auto [n, c, s] = batchNormDims(g.getInput());
  L.call("pdrt_batch_norm_grad",
         {L.ctx(), L.address(g.getGrad()), L.address(g.getInput()),
          L.address(g.getScale()), L.address(g.getInputGrad()),
          L.address(g.getScaleGrad()), L.address(g.getBiasGrad()), L.i64(n),
          L.i64(c), L.i64(s), L.f32(g.getEpsilon().convertToFloat())});
  return success();
}

/// pdrt_pad's descriptor [rank, x_dims, y_dims, begin].
static LogicalResult lowerPad(StageLowering &L, PadOp p) {
  ArrayRef<int64_t> x = shapeOf(p.getInput()), y = shapeOf(p);
  SmallVector<int64_t> words{(int64_t)x.size()};
  words.append(x.begin(), x.end());
  words.append(y.begin(), y.end());
  ArrayRef<int64_t> begin = p.getPads().take_front(x.size());
  words.append(begin.begin(), begin.end());
  Type elem = cast<RankedTensorType>(p.getType()).getElementType();
  double value = p.getValue().convertToDouble();
  if (elem.isF32() && value == 0.0) {
    L.call("pdrt_pad", {L.ctx(), L.address(p.getInput()), L.address(p),
                        L.descriptor(words)});
    return success();
  }
  // The fill element's bytes: a float's bit pattern, an integer's value.
  int64_t bits = (int64_t)value;
  if (elem.isF32())
    bits = (int64_t)llvm::bit_cast<uint32_t>((float)value);
  else if (elem.isInteger(1))
    bits = value != 0.0;
  L.call("pdrt_pad_value",
         {L.ctx(), L.address(p.getInput()), L.address(p), L.descriptor(words),
          L.i64((elem.getIntOrFloatBitWidth() + 7) / 8), L.i64(bits)});
  return success();
}

std::optional<LogicalResult> mlir::pd::lowerConvOp(StageLowering &L,
                                                   Operation *op) {
  using Result = std::optional<LogicalResult>;
  return TypeSwitch<Operation *, Result>(op)
      .Case<Conv2dOp>([&](Conv2dOp c) {
        Value desc = geometry(L, shapeOf(c.getInput()), shapeOf(c),
                              convWindow(c, c.getFilter()));
        L.call("pdrt_conv2d",
               {L.ctx(), L.address(c.getInput()), L.address(c.getFilter()),
                addressOrNull(L, c.getBias(), c.getLoc()), L.address(c), desc});
        return success();
      })
      .Case<Conv2dGradInputOp>([&](Conv2dGradInputOp c) {
        Value desc = geometry(L, shapeOf(c), shapeOf(c.getGrad()),
                              convWindow(c, c.getFilter()));
        L.call("pdrt_conv2d_grad_input",
               {L.ctx(), L.address(c.getGrad()), L.address(c.getFilter()),
                L.address(c), desc});
        return success();
      })
      .Case<Conv2dGradFilterOp>([&](Conv2dGradFilterOp c) {
        Value desc = geometry(L, shapeOf(c.getInput()), shapeOf(c.getGrad()),
                              convWindow(c, c.getResult()));
        L.call("pdrt_conv2d_grad_filter",
               {L.ctx(), L.address(c.getGrad()), L.address(c.getInput()),
                L.address(c), desc});
        return success();
      })
      .Case<BatchNormOp, BatchNormGradOp>(
          [&](Operation *bn) { return lowerBatchNorm(L, bn); })
      .Case<MaxPool2dOp>([&](MaxPool2dOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        Value desc = geometry(L, x, shapeOf(p), poolWindow(p, x[1], false));
        L.call("pdrt_max_pool2d",
               {L.ctx(), L.address(p.getInput()), L.address(p), desc});
        return success();
      })
      .Case<MaxPool2dGradOp>([&](MaxPool2dGradOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        Value desc =
            geometry(L, x, shapeOf(p.getGrad()), poolWindow(p, x[1], false));
        L.call("pdrt_max_pool2d_grad",
               {L.ctx(), L.address(p.getGrad()), L.address(p.getInput()),
                L.address(p), desc});
        return success();
      })
      .Case<AvgPool2dOp>([&](AvgPool2dOp p) {
        ArrayRef<int64_t> x = shapeOf(p.getInput());
        Value desc = geometry(L, x, shapeOf(p),
                              poolWindow(p, x[1], p.getCountIncludePad()));
        L.call("pdrt_avg_pool2d",
               {L.ctx(), L.address(p.getInput()), L.address(p), desc});
        return success();
      })
      .Case<AvgPool2dGradOp>([&](AvgPool2dGradOp p) {
        ArrayRef<int64_t> x = shapeOf(p);
        Value desc = geometry(L, x, shapeOf(p.getGrad()),
                              poolWindow(p, x[1], p.getCountIncludePad()));
        L.call("pdrt_avg_pool2d_grad",
               {L.ctx(), L.address(p.getGrad()), L.address(p), desc});
        return success();
      })
      .Case<PadOp>([&](PadOp p) { return lowerPad(L, p); })
      .Default([](Operation *) { return std::nullopt; });
}
