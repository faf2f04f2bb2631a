//===- ONNXOpsMath.cpp - MatMul, Gemm and elementwise arithmetic -*- C++ -*-===//
//
// Handlers for the ONNX math family: MatMul and Gemm become pd.matmul (with
// pending 2-D transposes folded into its transpose flags), Add/Sub/Mul/Div
// and Min/Max the numpy-broadcasting pd.add/sub/mul/div/min/max. Result
// shapes are computed here.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Creates a broadcast-binary pd op by name with the broadcast result type.
FailureOr<Value> mlir::pd::detail::buildBroadcastBinary(NodeBinder &b,
                                                        StringRef opName,
                                                        Value lhs, Value rhs,
                                                        StringRef lhsName,
                                                        StringRef rhsName) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  auto shape = broadcastShapes(lhsType.getShape(), rhsType.getShape());
  if (failed(shape))
    return b.emitError() << "shapes of '" << lhsName << "' "
                         << shapeString(lhsType.getShape()) << " and '"
                         << rhsName << "' " << shapeString(rhsType.getShape())
                         << " are not broadcastable";
  auto type = RankedTensorType::get(*shape, b.builder().getF32Type());
  OperationState state(b.loc(), opName);
  state.addOperands({lhs, rhs});
  state.addTypes(type);
  return b.builder().create(state)->getResult(0);
}

/// An operand of pd.matmul: the source tensor and whether op() transposes.
struct MatrixOperand {
  Value value;
  bool transpose = false;
  /// (rows, cols) of op(value).
  std::pair<int64_t, int64_t> dims() const {
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    return transpose ? std::make_pair(shape[1], shape[0])
                     : std::make_pair(shape[0], shape[1]);
  }
};

/// Binds input `i` as a 2-D f32 matrix, folding a pending Transpose and the
/// node's own transpose attribute (`trans`) into one flag.
static ParseResult matrixOperand(NodeBinder &b, MatrixOperand &out, unsigned i,
                                 bool trans) {
  ONNXValue raw;
  if (b.rawOperand(raw, i))
    return failure();
  auto type = cast<RankedTensorType>(raw.value.getType());
  if (!type.getElementType().isF32()) {
    b.emitError() << "input '" << b.inputName(i) << "' has element type "
                  << type.getElementType() << ", expected f32";
    return failure();
  }
  if (type.getRank() != 2) {
    b.emitError() << "input '" << b.inputName(i) << "' has shape "
                  << shapeString(raw.shape())
                  << "; only 2-D matrix products are supported";
    return failure();
  }
  out = MatrixOperand{raw.value, raw.transposed != trans};
  return success();
}

/// Builds pd.matmul alpha * op(a) * op(b), checking the inner dimensions.
static FailureOr<Value> buildMatMul(NodeBinder &b, const MatrixOperand &lhs,
                                    const MatrixOperand &rhs, float alpha) {
  auto [m, k] = lhs.dims();
  auto [k2, n] = rhs.dims();
  if (k != k2)
    return b.emitError() << "inner dimensions of '" << b.inputName(0) << "' "
                         << shapeString({m, k}) << " and '" << b.inputName(1)
                         << "' " << shapeString({k2, n}) << " differ";
  auto type = RankedTensorType::get({m, n}, b.builder().getF32Type());
  OpBuilder &builder = b.builder();
  UnitAttr unit = builder.getUnitAttr();
  FloatAttr alphaAttr =
      alpha != 1.0f ? builder.getF32FloatAttr(alpha) : nullptr;
  auto op = builder.create<MatMulOp>(b.loc(), type, lhs.value, rhs.value,
                                     /*bias=*/Value(),
                                     lhs.transpose ? unit : nullptr,
                                     rhs.transpose ? unit : nullptr, alphaAttr);
  return op.getResult();
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

/// `v` reshaped to `shape` (unchanged when it already has it).
static Value reshapeTo(OpBuilder &builder, Location loc, Value v,
                       ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder.getF32Type());
  return v.getType() == type ? v
                             : builder.create<ReshapeOp>(loc, type, v).getResult();
}

/// `v` broadcast to `shape` with pd.broadcast_to (unchanged when equal).
static Value broadcastTo(OpBuilder &builder, Location loc, Value v,
                         ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get(shape, builder.getF32Type());
  return v.getType() == type
             ? v
             : builder.create<BroadcastToOp>(loc, type, v).getResult();
}

/// Fails with an error naming input `i` unless `v` is f32.
static LogicalResult checkF32(NodeBinder &b, const ONNXValue &v, unsigned i) {
  Type elem = cast<RankedTensorType>(v.value.getType()).getElementType();
  if (elem.isF32())
    return success();
  return b.emitError() << "input '" << b.inputName(i) << "' has element type "
                       << elem << ", expected f32";
}

/// MatMul of N-D operands (numpy matmul): a 1-D lhs is a row [1, K] and a
/// 1-D rhs a column [K, 1], whose unit dimension the result drops;
/// [..., M, K] x [K, N] is one 2-D pd.matmul on the flattened rows (a
/// pending transpose of the 2-D rhs folds into its flag); otherwise the
/// batch dimensions broadcast (pd.broadcast_to materialises the operands
/// that need it) and pd.batch_matmul multiplies.
static LogicalResult importBatchedMatMul(NodeBinder &b, ONNXValue rawLhs,
                                         ONNXValue rawRhs) {
  OpBuilder &builder = b.builder();
  Location loc = b.loc();
  if (failed(checkF32(b, rawLhs, 0)) || failed(checkF32(b, rawRhs, 1)))
    return failure();
  bool rhsTransposed = rawRhs.transposed && rawRhs.shape().size() == 2;
  auto materialise = [&](ONNXValue v) -> Value {
    if (!v.transposed)
      return v.value;
    auto type = RankedTensorType::get(v.shape(), builder.getF32Type());
    return builder.create<TransposeOp>(loc, type, v.value,
                                       builder.getDenseI64ArrayAttr({1, 0}));
  };
  Value lhs = materialise(rawLhs);
  Value rhs = rhsTransposed ? rawRhs.value : materialise(rawRhs);
  SmallVector<int64_t> a = rawLhs.shape(), w = rawRhs.shape();
  bool row = a.size() == 1, column = w.size() == 1;
  if (row)
    a.insert(a.begin(), 1);
  if (column)
    w.push_back(1);
  auto batch = broadcastShapes(ArrayRef<int64_t>(a).drop_back(2),
                               ArrayRef<int64_t>(w).drop_back(2));
  if (a.empty() || w.empty() || a.back() != w[w.size() - 2] || failed(batch))
    return b.emitError() << "cannot multiply '" << b.inputName(0) << "' "
                         << shapeString(a) << " by '" << b.inputName(1)
                         << "' " << shapeString(w);
  int64_t m = a[a.size() - 2], k = a.back(), n = w.back();
  SmallVector<int64_t> out(*batch);
  if (!row)
    out.push_back(m);
  if (!column)
    out.push_back(n);
  Type f32 = builder.getF32Type();
  lhs = reshapeTo(builder, loc, lhs, a);
  Value product;
  if (w.size() == 2) {
    int64_t rows = 1;
    for (int64_t d : ArrayRef<int64_t>(a).drop_back())
      rows *= d;
    rhs = rhsTransposed ? rhs : reshapeTo(builder, loc, rhs, w);
    product = builder.create<MatMulOp>(
        loc, RankedTensorType::get({rows, n}, f32),
        reshapeTo(builder, loc, lhs, {rows, k}), rhs, /*bias=*/Value(), nullptr,
        rhsTransposed ? builder.getUnitAttr() : nullptr, nullptr);
  } else {
    SmallVector<int64_t> lhsShape(*batch), rhsShape(*batch), resShape(*batch);
    lhsShape.append({m, k});
    rhsShape.append({k, n});
    resShape.append({m, n});
    product = builder.create<BatchMatMulOp>(
        loc, RankedTensorType::get(resShape, f32),
        broadcastTo(builder, loc, lhs, lhsShape),
        broadcastTo(builder, loc, reshapeTo(builder, loc, rhs, w), rhsShape),
        /*transpose_lhs=*/nullptr, /*transpose_rhs=*/nullptr,
        /*lhs_perm=*/nullptr, /*rhs_perm=*/nullptr, /*result_perm=*/nullptr,
        /*lhs_select=*/nullptr, /*rhs_select=*/nullptr, /*triangle=*/nullptr,
        /*rhs_groups=*/nullptr, /*result_groups=*/nullptr);
  }
  return b.setResult(0, reshapeTo(builder, loc, product, out));
}

/// MatMul (1, 9, 13): 2-D products fold pending transposes into pd.matmul;
/// N-D products go through importBatchedMatMul.
static LogicalResult importMatMul(NodeBinder &b) {
  if (b.expectOutputs(1))
    return failure();
  ONNXValue a, w;
  if (b.rawOperand(a, 0) || b.rawOperand(w, 1))
    return failure();
  if (a.shape().size() != 2 || w.shape().size() != 2)
    return importBatchedMatMul(b, a, w);
  MatrixOperand lhs, rhs;
  if (matrixOperand(b, lhs, 0, false) ||
      matrixOperand(b, rhs, 1, false))
    return failure();
  auto result = buildMatMul(b, lhs, rhs, 1.0f);
  return failed(result) ? failure() : b.setResult(0, *result);
}

/// Gemm (7, 9, 11, 13): Y = alpha * op(A) * op(B) + beta * C, with C
/// unidirectionally broadcast to [M, N] and optional from opset 11.
static LogicalResult importGemm(NodeBinder &b) {
  int64_t transA, transB;
  float alpha, beta;
  MatrixOperand lhs, rhs;
  Value c;
  if (b.expectOutputs(1) || b.attr(transA, "transA", 0) ||
      b.attr(transB, "transB", 0) || b.attr(alpha, "alpha", 1.0f) ||
      b.attr(beta, "beta", 1.0f) || matrixOperand(b, lhs, 0, transA != 0) ||
      matrixOperand(b, rhs, 1, transB != 0) || b.optionalF32Operand(c, 2))
    return failure();
  if (!c && b.opset() < 11)
    return b.emitError() << "input C is required before opset 11";
  auto product = buildMatMul(b, lhs, rhs, alpha);
  if (failed(product) || !c)
    return failed(product) ? failure() : b.setResult(0, *product);
  auto yShape = cast<RankedTensorType>(product->getType()).getShape();
  auto cShape = cast<RankedTensorType>(c.getType()).getShape();
  auto shape = broadcastShapes(cShape, yShape);
  if (failed(shape) || ArrayRef<int64_t>(*shape) != yShape)
    return b.emitError() << "bias '" << b.inputName(2) << "' of shape "
                         << shapeString(cShape)
                         << " does not broadcast to the product shape "
                         << shapeString(yShape);
  if (beta != 1.0f)
    c = b.builder().create<ScaleOp>(b.loc(), c,
                                    b.builder().getF32FloatAttr(beta));
  auto sum = buildBroadcastBinary(b, AddOp::getOperationName(), *product, c,
                                  b.outputName(0), b.inputName(2));
  return failed(sum) ? failure() : b.setResult(0, *sum);
}

/// Add, Sub, Mul, Div (7, 13, 14): numpy broadcasting on f32.
template <typename OpTy>
static LogicalResult importBroadcastBinary(NodeBinder &b) {
  Value lhs, rhs;
  if (b.expectOutputs(1) || b.f32Operand(lhs, 0) || b.f32Operand(rhs, 1))
    return failure();
  auto result = buildBroadcastBinary(b, OpTy::getOperationName(), lhs, rhs,
                                     b.inputName(0), b.inputName(1));
  return failed(result) ? failure() : b.setResult(0, *result);
}

/// Min and Max (8, 12, 13) of one or more f32 tensors with numpy
/// broadcasting: a chain of binary pd.min / pd.max.
template <typename OpTy> static LogicalResult importMinMax(NodeBinder &b) {
  Value acc;
  if (b.expectOutputs(1) || b.f32Operand(acc, 0))
    return failure();
  for (unsigned i = 1; i < b.numInputs(); ++i) {
    Value next;
    if (b.f32Operand(next, i))
      return failure();
    auto result = buildBroadcastBinary(b, OpTy::getOperationName(), acc, next,
                                       b.inputName(i - 1), b.inputName(i));
    if (failed(result))
      return failure();
    acc = *result;
  }
  return b.setResult(0, acc);
}

void mlir::pd::detail::registerMathHandlers(HandlerTable &table) {
  table["MatMul"] = {1, importMatMul};
  table["Gemm"] = {7, importGemm};
  table["Add"] = {7, importBroadcastBinary<AddOp>};
  table["Sub"] = {7, importBroadcastBinary<SubOp>};
  table["Mul"] = {7, importBroadcastBinary<MulOp>};
  table["Div"] = {7, importBroadcastBinary<DivOp>};
  table["Min"] = {8, importMinMax<MinOp>};
  table["Max"] = {8, importMinMax<MaxOp>};
}
