//===- ONNXOpsMath.cpp - MatMul, Gemm and elementwise arithmetic -*- C++
//-*-===//
//
// Handlers for the ONNX math family: MatMul and Gemm become pd.matmul (with
// pending 2-D transposes folded into its transpose flags), Add/Sub/Mul the
// numpy-broadcasting pd.add/sub/mul. Result shapes are computed here.
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
                                     lhs.transpose ? unit : nullptr,
                                     rhs.transpose ? unit : nullptr, alphaAttr);
  return op.getResult();
}

//===----------------------------------------------------------------------===//
// Handlers
//===----------------------------------------------------------------------===//

/// MatMul of N-D operands (numpy semantics without batch broadcasting):
/// [..., M, K] x [K, N] is one 2-D product on the flattened rows;
/// [..., M, K] x [..., K, N] with equal leading dims is pd.batch_matmul.
static LogicalResult importBatchedMatMul(NodeBinder &b) {
  Value lhs, rhs;
  if (b.f32Operand(lhs, 0) || b.f32Operand(rhs, 1))
    return failure();
  auto a = cast<RankedTensorType>(lhs.getType()).getShape();
  auto w = cast<RankedTensorType>(rhs.getType()).getShape();
  if (a.size() < 2 || w.size() < 2 || a.back() != w[w.size() - 2])
    return b.emitError() << "cannot multiply '" << b.inputName(0) << "' "
                         << shapeString(a) << " by '" << b.inputName(1)
                         << "' " << shapeString(w);
  OpBuilder &builder = b.builder();
  Type f32 = builder.getF32Type();
  SmallVector<int64_t> outShape(a.drop_back());
  outShape.push_back(w.back());
  auto outType = RankedTensorType::get(outShape, f32);
  if (w.size() == 2) {
    int64_t rows = cast<RankedTensorType>(lhs.getType()).getNumElements() /
                   a.back();
    Value flat = builder.create<ReshapeOp>(
        b.loc(), RankedTensorType::get({rows, a.back()}, f32), lhs);
    Value product = builder.create<MatMulOp>(
        b.loc(), RankedTensorType::get({rows, w.back()}, f32), flat, rhs,
        nullptr, nullptr, nullptr);
    return b.setResult(0, builder.create<ReshapeOp>(b.loc(), outType, product)
                              .getResult());
  }
  if (a.size() != w.size() || a.drop_back(2) != w.drop_back(2))
    return b.emitError() << "batch dimensions of " << shapeString(a)
                         << " and " << shapeString(w)
                         << " differ; broadcast batch dimensions are not "
                            "supported";
  Value product = builder.create<BatchMatMulOp>(b.loc(), outType, lhs, rhs);
  return b.setResult(0, product);
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
    return importBatchedMatMul(b);
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

void mlir::pd::detail::registerMathHandlers(HandlerTable &table) {
  table["MatMul"] = {1, importMatMul};
  table["Gemm"] = {7, importGemm};
  table["Add"] = {7, importBroadcastBinary<AddOp>};
  table["Sub"] = {7, importBroadcastBinary<SubOp>};
  table["Mul"] = {7, importBroadcastBinary<MulOp>};
  table["Div"] = {7, importBroadcastBinary<DivOp>};
}
