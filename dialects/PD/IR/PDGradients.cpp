//===- PDGradients.cpp - Vector-Jacobian products of pd ops -----*- C++ -*-===//
//
// GradientOpInterface for each differentiable pd op. Every rule opens with
// the math of its forward op; gradients of broadcast operands are summed
// back to the operand's shape with pd.sum_to.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"

using namespace mlir;
using namespace mlir::pd;

/// Sums `grad` down to the shape of `type` if broadcasting made it larger.
static Value sumToType(OpBuilder &b, Location loc, Value grad, Type type) {
  if (grad.getType() == type)
    return grad;
  return b.create<SumToOp>(loc, type, grad);
}

static RankedTensorType matmulType(Value a, Value b, bool ta, bool tb) {
  auto at = cast<RankedTensorType>(a.getType());
  auto bt = cast<RankedTensorType>(b.getType());
  int64_t m = at.getDimSize(ta ? 1 : 0), n = bt.getDimSize(tb ? 0 : 1);
  return RankedTensorType::get({m, n}, at.getElementType());
}

static Value buildMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                         bool ta, bool tb, float alpha) {
  return b.create<MatMulOp>(loc, matmulType(lhs, rhs, ta, tb), lhs, rhs,
                           /*bias=*/Value(), ta, tb, APFloat(alpha));
}

//===----------------------------------------------------------------------===//
// MatMulOp: C = alpha * op(A) op(B) (+ bias, broadcast over rows)
//   d op(A) = alpha * dC op(B)^T,   d op(B) = alpha * op(A)^T dC,
//   d bias = dC summed over rows
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  Value dc = resultGrads[0];
  Value a = getLhs(), bm = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  float alpha = getAlpha().convertToFloat();
  Location loc = getLoc();
  // dA = alpha dC op(B)^T, or its transpose op(B) dC^T when A was transposed.
  Value da = ta ? buildMatMul(b, loc, bm, dc, tb, true, alpha)
                : buildMatMul(b, loc, dc, bm, false, !tb, alpha);
  // dB = alpha op(A)^T dC, or its transpose dC^T op(A) when B was transposed.
  Value db = tb ? buildMatMul(b, loc, dc, a, true, ta, alpha)
                : buildMatMul(b, loc, a, dc, !ta, false, alpha);
  operandGrads.push_back(da);
  operandGrads.push_back(db);
  if (Value bias = getBias())
    operandGrads.push_back(sumToType(b, loc, dc, bias.getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// AddOp: C = A + B          dA = sum_to(dC),  dB = sum_to(dC)
// SubOp: C = A - B          dA = sum_to(dC),  dB = sum_to(-dC)
// MulOp: C = A * B          dA = sum_to(dC * B),  dB = sum_to(dC * A)
//===----------------------------------------------------------------------===//

LogicalResult AddOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dc = resultGrads[0];
  operandGrads.push_back(sumToType(b, getLoc(), dc, getLhs().getType()));
  operandGrads.push_back(sumToType(b, getLoc(), dc, getRhs().getType()));
  return success();
}

LogicalResult SubOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dc = resultGrads[0];
  Value neg = b.create<ScaleOp>(getLoc(), dc, b.getF32FloatAttr(-1.0f));
  operandGrads.push_back(sumToType(b, getLoc(), dc, getLhs().getType()));
  operandGrads.push_back(sumToType(b, getLoc(), neg, getRhs().getType()));
  return success();
}

LogicalResult MulOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                              SmallVectorImpl<Value> &operandGrads) {
  Value dc = resultGrads[0];
  Type t = dc.getType();
  Value da = b.create<MulOp>(getLoc(), t, dc, getRhs());
  Value db = b.create<MulOp>(getLoc(), t, dc, getLhs());
  operandGrads.push_back(sumToType(b, getLoc(), da, getLhs().getType()));
  operandGrads.push_back(sumToType(b, getLoc(), db, getRhs().getType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ReluOp: y = max(x, 0)     dx = dy * (y > 0)
//===----------------------------------------------------------------------===//

LogicalResult ReluOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                               SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(
      b.create<ReluGradOp>(getLoc(), resultGrads[0], getResult()));
  return success();
}

//===----------------------------------------------------------------------===//
// ScaleOp: y = f * x        dx = f * dy
//===----------------------------------------------------------------------===//

LogicalResult ScaleOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(
      b.create<ScaleOp>(getLoc(), resultGrads[0], getFactorAttr()));
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxCrossEntropyLossOp: l = -(1/K) sum_i log softmax(z_i)[y_i]
//   dz_i = dl * (softmax(z_i) - onehot(y_i)) / K; labels get no gradient.
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxCrossEntropyLossOp::buildVJP(
    OpBuilder &b, ArrayRef<Value> resultGrads,
    SmallVectorImpl<Value> &operandGrads) {
  auto grad = b.create<SoftmaxCrossEntropyLossGradOp>(
      getLoc(), getLogits().getType(), resultGrads[0], getLogits(),
      getLabels(), getIgnoreIndexAttr());
  operandGrads.push_back(grad);
  operandGrads.push_back(Value());
  return success();
}
