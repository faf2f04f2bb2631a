//===- ONNXOpsNN.cpp - Activations, math, reductions, norms -----*- C++ -*-===//
//
// Handlers for the neural-network family: unary activations and math
// (Relu, Neg, Sqrt, Exp, Log, Erf, Tanh, Sigmoid, Reciprocal, Cos, Sin, Pow with a
// constant exponent, Gelu), reductions (ReduceSum, ReduceMean, axes as
// attribute or input per opset), Softmax/LogSoftmax, LayerNormalization and
// RMSNormalization.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// An f32 elementwise unary op whose result type is its operand's.
template <typename OpTy> static LogicalResult importUnary(NodeBinder &b) {
  Value input;
  if (b.expectOutputs(1) || b.f32Operand(input, 0))
    return failure();
  Value result = b.builder().create<OpTy>(b.loc(), input.getType(), input);
  return b.setResult(0, result);
}

/// Gelu (20): pd.gelu with approximate "none" (erf) or "tanh".
static LogicalResult importGelu(NodeBinder &b) {
  Value input;
  std::string approximate;
  if (b.expectOutputs(1) || b.f32Operand(input, 0) ||
      b.attr(approximate, "approximate", "none"))
    return failure();
  std::optional<GeluApproximation> form = symbolizeGeluApproximation(approximate);
  if (!form)
    return b.emitError() << "approximate must be \"none\" or \"tanh\", got \""
                         << approximate << "\"";
  Value result = b.builder().create<GeluOp>(
      b.loc(), input.getType(), input, /*bias=*/Value(),
      GeluApproximationAttr::get(b.builder().getContext(), *form));
  return b.setResult(0, result);
}

/// The axes of ReduceSum/ReduceMean: an attribute before `inputSince`, an
/// optional constant input from it on; no axes means all (or none with
/// noop_with_empty_axes).
static FailureOr<SmallVector<int64_t>> reductionAxes(NodeBinder &b,
                                                     int64_t rank,
                                                     int64_t inputSince) {
  SmallVector<int64_t> axes;
  int64_t noop = 0;
  if (b.opset() < inputSince) {
    if (b.attr(axes, "axes"))
      return failure();
  } else {
    if (b.attr(noop, "noop_with_empty_axes", 0))
      return failure();
    if (b.hasInput(1)) {
      SmallVector<double> values;
      if (b.constantOperand(values, 1))
        return failure();
      for (double v : values)
        axes.push_back((int64_t)v);
    }
  }
  if (axes.empty() && !noop)
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  return b.normalizeAxes(axes, rank);
}

/// ReduceSum (1, 11, 13: axes input) and ReduceMean (1, 11, 13, 18: axes
/// input) with keepdims; the mean scales the sum by 1/count.
template <bool Mean, int64_t InputSince>
static LogicalResult importReduce(NodeBinder &b) {
  Value input;
  int64_t keepdims;
  if (b.expectOutputs(1) || b.f32Operand(input, 0) ||
      b.attr(keepdims, "keepdims", 1))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  auto axes = reductionAxes(b, type.getRank(), InputSince);
  if (failed(axes))
    return failure();
  if (axes->empty())
    return b.setResult(0, input);
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (auto [i, d] : llvm::enumerate(type.getShape())) {
    bool reduced = llvm::is_contained(*axes, (int64_t)i);
    count *= reduced ? d : 1;
    if (!reduced || keepdims)
      shape.push_back(reduced ? 1 : d);
  }
  OpBuilder &builder = b.builder();
  Value sum = builder.create<ReduceSumOp>(
      b.loc(), RankedTensorType::get(shape, type.getElementType()), input,
      builder.getDenseI64ArrayAttr(*axes),
      keepdims ? builder.getUnitAttr() : UnitAttr());
  if (Mean)
    sum = builder.create<ScaleOp>(b.loc(), sum,
                                  builder.getF32FloatAttr(1.0f / count));
  return b.setResult(0, sum);
}

/// Pow (7, 12, 13, 15): pd.pow with a compile-time constant scalar exponent,
/// pd.pow_broadcast (elementwise, broadcasting) with a tensor one.
static LogicalResult importPow(NodeBinder &b) {
  Value input;
  if (b.expectOutputs(1) || b.f32Operand(input, 0))
    return failure();
  FailureOr<DenseElementsAttr> constant = b.constantInput(1);
  if (failed(constant))
    return failure();
  if (*constant && constant->getNumElements() == 1) {
    SmallVector<double> exponent;
    if (b.constantOperand(exponent, 1))
      return failure();
    Value result = b.builder().create<PowOp>(
        b.loc(), input, b.builder().getF32FloatAttr((float)exponent.front()));
    return b.setResult(0, result);
  }
  // A tensor exponent: elementwise x^y with broadcasting.
  Value exponent;
  if (b.f32Operand(exponent, 1))
    return failure();
  auto shape =
      broadcastShapes(cast<RankedTensorType>(input.getType()).getShape(),
                      cast<RankedTensorType>(exponent.getType()).getShape());
  if (failed(shape))
    return b.emitError() << "inputs do not broadcast";
  Value result = b.builder().create<PowBroadcastOp>(
      b.loc(), RankedTensorType::get(*shape, b.builder().getF32Type()), input,
      exponent);
  return b.setResult(0, result);
}

/// Softmax and LogSoftmax. From opset 13 the op normalises along `axis`
/// (default -1); before, it coerces the input to 2-D at `axis` (default 1),
/// which equals the per-axis form only when axis is the last dimension.
template <bool Log> static LogicalResult importSoftmax(NodeBinder &b) {
  Value input;
  int64_t axis;
  bool modern = b.opset() >= 13;
  if (b.expectOutputs(1) || b.f32Operand(input, 0) ||
      b.attr(axis, "axis", modern ? -1 : 1))
    return failure();
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  auto axes = b.normalizeAxes({axis}, rank);
  if (failed(axes))
    return failure();
  if (!modern && axes->front() != rank - 1)
    return b.emitError() << "axis " << axis << " before opset 13 flattens "
                         << "the trailing dimensions, which is supported only "
                         << "for the last axis";
  Value result = b.builder().create<SoftmaxOp>(
      b.loc(), input.getType(), input,
      b.builder().getI64IntegerAttr(axes->front()),
      Log ? b.builder().getUnitAttr() : UnitAttr());
  return b.setResult(0, result);
}

/// LayerNormalization (17): scale and bias over the dims from `axis`;
/// the optional Mean and InvStdDev outputs must be unused.
static LogicalResult importLayerNorm(NodeBinder &b) {
  Value input, scale, bias;
  int64_t axis;
  float epsilon;
  if (b.f32Operand(input, 0) || b.f32Operand(scale, 1) ||
      b.optionalF32Operand(bias, 2) || b.attr(axis, "axis", -1) ||
      b.attr(epsilon, "epsilon", 1e-5f))
    return failure();
  for (unsigned i = 1; i < b.numOutputs(); ++i)
    if (b.isOutputUsed(i))
      return b.emitError() << "output '" << b.outputName(i)
                           << "' (Mean/InvStdDev) is not supported";
  auto type = cast<RankedTensorType>(input.getType());
  auto axes = b.normalizeAxes({axis}, type.getRank());
  if (failed(axes))
    return failure();
  OpBuilder &builder = b.builder();
  if (!bias) {
    auto biasType = cast<RankedTensorType>(scale.getType());
    bias = builder.create<ConstantOp>(
        b.loc(), DenseElementsAttr::get(biasType, 0.0f));
  }
  if (scale.getType() != bias.getType() ||
      cast<RankedTensorType>(scale.getType()).getShape() !=
          type.getShape().drop_front(axes->front()))
    return b.emitError() << "Scale '" << b.inputName(1)
                         << "' and B must have the normalized shape "
                         << shapeString(type.getShape().drop_front(axes->front()));
  Value result = builder.create<LayerNormOp>(
      b.loc(), type, input, scale, bias, builder.getI64IntegerAttr(axes->front()),
      builder.getF32FloatAttr(epsilon));
  return b.setResult(0, result);
}

/// RMSNormalization (23): y = x / sqrt(mean(x^2) + epsilon) * scale over
/// the dims from `axis`; scale must have the normalized shape.
static LogicalResult importRMSNorm(NodeBinder &b) {
  Value input, scale;
  int64_t axis;
  float epsilon;
  if (b.expectOutputs(1) || b.f32Operand(input, 0) || b.f32Operand(scale, 1) ||
      b.attr(axis, "axis", -1) || b.attr(epsilon, "epsilon", 1e-5f))
    return failure();
  auto type = cast<RankedTensorType>(input.getType());
  auto axes = b.normalizeAxes({axis}, type.getRank());
  if (failed(axes))
    return failure();
  ArrayRef<int64_t> trailing = type.getShape().drop_front(axes->front());
  if (cast<RankedTensorType>(scale.getType()).getShape() != trailing)
    return b.emitError() << "scale '" << b.inputName(1)
                         << "' must have the normalized shape "
                         << shapeString(trailing);
  OpBuilder &builder = b.builder();
  Value result = builder.create<RMSNormOp>(
      b.loc(), type, input, scale, builder.getI64IntegerAttr(axes->front()),
      builder.getF32FloatAttr(epsilon));
  return b.setResult(0, result);
}

void mlir::pd::detail::registerNNHandlers(HandlerTable &table) {
  // Unary math (6/13 versions differ only in types, which are f32 here).
  table["Relu"] = {6, importUnary<ReluOp>};
  table["Neg"] = {6, importUnary<NegOp>};
  table["Sqrt"] = {6, importUnary<SqrtOp>};
  table["Exp"] = {6, importUnary<ExpOp>};
  table["Log"] = {6, importUnary<LogOp>};
  table["Erf"] = {9, importUnary<ErfOp>};
  table["Tanh"] = {6, importUnary<TanhOp>};
  table["Sigmoid"] = {6, importUnary<SigmoidOp>};
  table["Reciprocal"] = {6, importUnary<ReciprocalOp>};
  table["Cos"] = {7, importUnary<CosOp>};
  table["Sin"] = {7, importUnary<SinOp>};
  table["Pow"] = {7, importPow};
  table["Gelu"] = {20, importGelu};
  table["ReduceSum"] = {1, importReduce<false, 13>};
  table["ReduceMean"] = {1, importReduce<true, 18>};
  table["Softmax"] = {1, importSoftmax<false>};
  table["LogSoftmax"] = {1, importSoftmax<true>};
  table["LayerNormalization"] = {17, importLayerNorm};
  table["RMSNormalization"] = {23, importRMSNorm};
}
