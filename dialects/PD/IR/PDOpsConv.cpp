//===- PDOpsConv.cpp - Verifiers, costs and gradients of conv ops -*- C++ -*-===//
//
// Verifiers, CostOpInterface and GradientOpInterface of the ops in
// PDOpsConv.td (convolution, batch norm, pooling, padding). Every gradient
// rule opens with the math of its forward op.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOpsConv.h"
#include "dialects/PD/IR/PDOps.h"
#include "dialects/PD/IR/PDOpsHelpers.h"

using namespace mlir;
using namespace mlir::pd;

int64_t mlir::pd::convOutputSize(int64_t in, int64_t kernel, int64_t stride,
                                 int64_t padBegin, int64_t padEnd,
                                 int64_t dilation, bool ceilMode) {
  int64_t span = in + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0 || stride <= 0)
    return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + padBegin)
    --out;
  return out;
}

/// Checks the window attributes: `sizes` entries of `name` all >= `min`.
static LogicalResult verifyWindowAttr(Operation *op, StringRef name,
                                      ArrayRef<int64_t> values, size_t size,
                                      int64_t min) {
  if (values.size() != size || llvm::any_of(values, [&](int64_t v) {
        return v < min;
      }))
    return op->emitOpError() << name << " must have " << size
                             << " entries, each at least " << min;
  return success();
}

/// The output shape [N, channels, OH, OW] of a window op on `input`
/// (kernel [KH, KW]); checks the attributes first.
static FailureOr<SmallVector<int64_t>>
windowOutputShape(Operation *op, ArrayRef<int64_t> input, int64_t channels,
                  ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
                  ArrayRef<int64_t> pads, ArrayRef<int64_t> dilations,
                  bool ceilMode) {
  if (input.size() != 4)
    return op->emitOpError("input must be NCHW (rank 4), got ")
           << shapeStr(input);
  if (failed(verifyWindowAttr(op, "strides", strides, 2, 1)) ||
      failed(verifyWindowAttr(op, "pads", pads, 4, 0)) ||
      failed(verifyWindowAttr(op, "dilations", dilations, 2, 1)) ||
      failed(verifyWindowAttr(op, "kernel_shape", kernel, 2, 1)))
    return failure();
  SmallVector<int64_t> out{input[0], channels};
  for (int i = 0; i < 2; ++i)
    out.push_back(convOutputSize(input[2 + i], kernel[i], strides[i], pads[i],
                                 pads[2 + i], dilations[i], ceilMode));
  if (out[2] <= 0 || out[3] <= 0)
    return op->emitOpError("the window does not fit the padded input ")
           << shapeStr(input);
  return out;
}

static LogicalResult expectShape(Operation *op, StringRef what,
                                 ArrayRef<int64_t> got,
                                 ArrayRef<int64_t> want) {
  if (got == want)
    return success();
  return op->emitOpError() << what << " shape " << shapeStr(got) << " is not "
                           << shapeStr(want);
}

//===----------------------------------------------------------------------===//
// Conv2dOp: y = conv(x, w) + b
//   dx = conv2d_grad_input(dy, w)   (col2im of w^T dy)
//   dw = conv2d_grad_filter(dy, x)  (dy im2col(x)^T)
//   db = sum_{n, oy, ox} dy
//===----------------------------------------------------------------------===//

/// Verifies input x, filter w and output y of a convolution.
static LogicalResult verifyConv(Operation *op, ArrayRef<int64_t> x,
                                ArrayRef<int64_t> w, ArrayRef<int64_t> y,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pads,
                                ArrayRef<int64_t> dilations, int64_t group) {
  if (w.size() != 4)
    return op->emitOpError("filter must be [M, C/group, KH, KW], got ")
           << shapeStr(w);
  if (x.size() == 4 &&
      (group < 1 || x[1] % group != 0 || w[0] % group != 0 ||
       w[1] * group != x[1]))
    return op->emitOpError("group ")
           << group << " does not divide input channels " << x[1]
           << " and filter " << shapeStr(w) << " into equal groups";
  auto out = windowOutputShape(op, x, w[0], w.drop_front(2), strides, pads,
                               dilations, false);
  if (failed(out))
    return failure();
  return expectShape(op, "result", y, *out);
}

LogicalResult Conv2dOp::verify() {
  ArrayRef<int64_t> w = shapeOf(getFilter());
  if (getBias() && (w.empty() || shapeOf(getBias()) != w.take_front()))
    return emitOpError("bias must be [M], got ") << shapeStr(shapeOf(getBias()));
  return verifyConv(*this, shapeOf(getInput()), w, getType().getShape(),
                    getStrides(), getPads(), getDilations(), getGroup());
}

LogicalResult Conv2dGradInputOp::verify() {
  return verifyConv(*this, getType().getShape(), shapeOf(getFilter()),
                    shapeOf(getGrad()), getStrides(), getPads(),
                    getDilations(), getGroup());
}

LogicalResult Conv2dGradFilterOp::verify() {
  return verifyConv(*this, shapeOf(getInput()), getType().getShape(),
                    shapeOf(getGrad()), getStrides(), getPads(),
                    getDilations(), getGroup());
}

LogicalResult Conv2dOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Location loc = getLoc();
  Value dy = resultGrads[0];
  operandGrads.push_back(b.create<Conv2dGradInputOp>(
      loc, getInput().getType(), dy, getFilter(), getStridesAttr(),
      getPadsAttr(), getDilationsAttr(), getGroupAttr()));
  operandGrads.push_back(b.create<Conv2dGradFilterOp>(
      loc, getFilter().getType(), dy, getInput(), getStridesAttr(),
      getPadsAttr(), getDilationsAttr(), getGroupAttr()));
  if (getBias())
    operandGrads.push_back(b.create<ReduceSumOp>(
        loc, getBias().getType(), dy, b.getDenseI64ArrayAttr({0, 2, 3}),
        UnitAttr()));
  return success();
}

/// 2 * N * M * OH * OW * (C/group) * KH * KW: one multiply-add per tap.
static int64_t convFlops(Value output, Value filter) {
  ArrayRef<int64_t> w = shapeOf(filter);
  return 2 * numElements(output) * w[1] * w[2] * w[3];
}

int64_t Conv2dOp::getFlops() {
  return convFlops(getResult(), getFilter()) +
         (getBias() ? numElements(getResult()) : 0);
}
int64_t Conv2dGradInputOp::getFlops() {
  return convFlops(getGrad(), getFilter());
}
int64_t Conv2dGradFilterOp::getFlops() {
  return convFlops(getGrad(), getResult());
}

//===----------------------------------------------------------------------===//
// BatchNormOp: y = xhat * g + b, xhat = (x - mean_c) * rstd_c over N, D...
//   db = sum dy, dg = sum dy * xhat,
//   dx = g * rstd / k * (k * dy - db - xhat * dg), k elements per channel
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput());
  if (x.size() < 2)
    return emitOpError("input must be [N, C, D...], got ") << shapeStr(x);
  for (Value v : {getScale(), getBias()})
    if (failed(expectShape(*this, "scale and bias", shapeOf(v), {x[1]})))
      return failure();
  if (getType() != getInput().getType())
    return emitOpError("result type must be the input type");
  bool stats = getRunningMean() && getRunningVar();
  if (stats != getMomentum().has_value() ||
      (!stats && (getRunningMean() || getRunningVar())))
    return emitOpError("running_mean, running_var and momentum come together");
  return success();
}

/// The running statistics name pd.state symbols of shape [C].
LogicalResult
BatchNormOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  Type channels = getScale().getType();
  for (FlatSymbolRefAttr sym : {getRunningMeanAttr(), getRunningVarAttr()}) {
    if (!sym)
      continue;
    auto state = symbolTable.lookupNearestSymbolFrom<StateOp>(*this, sym);
    if (!state)
      return emitOpError("'") << sym.getValue() << "' does not name a pd.state";
    if (state.getType() != channels)
      return emitOpError("running statistic '")
             << sym.getValue() << "' has type " << state.getType()
             << ", expected " << channels;
  }
  return success();
}

LogicalResult BatchNormOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  Type scale = getScale().getType();
  auto grad = b.create<BatchNormGradOp>(
      getLoc(), TypeRange{getInput().getType(), scale, scale}, resultGrads[0],
      getInput(), getScale(), getEpsilonAttr());
  operandGrads.append(grad->result_begin(), grad->result_end());
  return success();
}

int64_t BatchNormOp::getFlops() { return 8 * numElements(getResult()); }
int64_t BatchNormGradOp::getFlops() { return 16 * numElements(getInput()); }

//===----------------------------------------------------------------------===//
// MaxPool2dOp: y = max over the window        dx[argmax] += dy
// AvgPool2dOp: y = sum over the window / d    dx[window] += dy / d
//===----------------------------------------------------------------------===//

static LogicalResult verifyPool(Operation *op, Value input, Type result,
                                ArrayRef<int64_t> kernel,
                                ArrayRef<int64_t> strides,
                                ArrayRef<int64_t> pads, bool ceilMode) {
  ArrayRef<int64_t> x = shapeOf(input);
  int64_t channels = x.size() > 1 ? x[1] : 0;
  auto out = windowOutputShape(op, x, channels, kernel, strides, pads, {1, 1},
                               ceilMode);
  if (failed(out))
    return failure();
  for (int i = 0; i < 2; ++i)
    if (pads[i] >= kernel[i] || pads[2 + i] >= kernel[i])
      return op->emitOpError("pads must be smaller than the kernel");
  return expectShape(op, "result", cast<RankedTensorType>(result).getShape(),
                     *out);
}

LogicalResult MaxPool2dOp::verify() {
  return verifyPool(*this, getInput(), getType(), getKernelShape(),
                    getStrides(), getPads(), getCeilMode());
}

LogicalResult MaxPool2dOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<MaxPool2dGradOp>(
      getLoc(), getInput().getType(), resultGrads[0], getInput(),
      getKernelShapeAttr(), getStridesAttr(), getPadsAttr(),
      getCeilModeAttr()));
  return success();
}

LogicalResult AvgPool2dOp::verify() {
  return verifyPool(*this, getInput(), getType(), getKernelShape(),
                    getStrides(), getPads(), getCeilMode());
}

LogicalResult AvgPool2dOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<AvgPool2dGradOp>(
      getLoc(), getInput().getType(), resultGrads[0], getKernelShapeAttr(),
      getStridesAttr(), getPadsAttr(), getCeilModeAttr(),
      getCountIncludePadAttr()));
  return success();
}

static int64_t windowSize(ArrayRef<int64_t> kernel) {
  return kernel.size() == 2 ? kernel[0] * kernel[1] : 1;
}

int64_t MaxPool2dOp::getFlops() {
  return numElements(getResult()) * windowSize(getKernelShape());
}
int64_t MaxPool2dGradOp::getFlops() {
  return numElements(getGrad()) * windowSize(getKernelShape());
}
int64_t AvgPool2dOp::getFlops() {
  return numElements(getResult()) * windowSize(getKernelShape());
}
int64_t AvgPool2dGradOp::getFlops() {
  return numElements(getGrad()) * windowSize(getKernelShape());
}

//===----------------------------------------------------------------------===//
// PadOp: y = x placed at `begin` in zeros     dx = slice(dy, begin, steps 1)
//===----------------------------------------------------------------------===//

LogicalResult PadOp::verify() {
  ArrayRef<int64_t> x = shapeOf(getInput()), pads = getPads();
  size_t rank = x.size();
  if (failed(verifyWindowAttr(*this, "pads", pads, 2 * rank, 0)))
    return failure();
  SmallVector<int64_t> want;
  for (size_t i = 0; i < rank; ++i)
    want.push_back(x[i] + pads[i] + pads[rank + i]);
  return expectShape(*this, "result", getType().getShape(), want);
}

LogicalResult PadOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  size_t rank = shapeOf(getInput()).size();
  SmallVector<int64_t> steps(rank, 1);
  operandGrads.push_back(b.create<SliceOp>(
      getLoc(), getInput().getType(), resultGrads[0],
      b.getDenseI64ArrayAttr(getPads().take_front(rank)),
      b.getDenseI64ArrayAttr(steps)));
  return success();
}

int64_t PadOp::getFlops() { return 0; }
