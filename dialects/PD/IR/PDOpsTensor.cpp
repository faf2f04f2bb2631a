//===- PDOpsTensor.cpp - Verifiers, costs and gradients of tensor ops -*- C++ -*-===//
//
// Verifiers, CostOpInterface and GradientOpInterface of the ops in
// PDOpsTensor.td. Every gradient rule opens with the math of its forward op.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"

using namespace mlir;
using namespace mlir::pd;

static int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

static std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

//===----------------------------------------------------------------------===//
// TransposeOp: y = transpose(x, perm)     dx = transpose(dy, perm^-1)
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType()).getShape();
  auto out = cast<RankedTensorType>(getType()).getShape();
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<bool> seen(in.size(), false);
  if (perm.size() != in.size())
    return emitOpError("perm has ") << perm.size() << " entries for rank "
                                    << in.size();
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)in.size() || seen[p])
      return emitOpError("perm is not a permutation of [0, ")
             << in.size() << ")";
    seen[p] = true;
  }
  for (auto [i, p] : llvm::enumerate(perm))
    if (out.size() != in.size() || out[i] != in[p])
      return emitOpError("result shape ")
             << shapeStr(out) << " is not the permuted input shape";
  return success();
}

LogicalResult TransposeOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                    SmallVectorImpl<Value> &operandGrads) {
  SmallVector<int64_t> inverse(getPerm().size());
  for (auto [i, p] : llvm::enumerate(getPerm()))
    inverse[p] = i;
  operandGrads.push_back(b.create<TransposeOp>(
      getLoc(), getInput().getType(), resultGrads[0],
      b.getDenseI64ArrayAttr(inverse)));
  return success();
}

int64_t TransposeOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// ReshapeOp: y = reshape(x)     dx = reshape(dy)
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = cast<RankedTensorType>(getInput().getType());
  auto out = cast<RankedTensorType>(getType());
  if (in.getNumElements() != out.getNumElements() ||
      in.getElementType() != out.getElementType())
    return emitOpError("cannot reshape ")
           << in << " to " << out << " (element counts or types differ)";
  return success();
}

LogicalResult ReshapeOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                  SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(
      b.create<ReshapeOp>(getLoc(), getInput().getType(), resultGrads[0]));
  return success();
}

int64_t ReshapeOp::getFlops() { return 0; }

//===----------------------------------------------------------------------===//
// GatherOp: y[i, :] = T[idx[i], :]     dT[idx[i], :] += dy[i, :]
//===----------------------------------------------------------------------===//

LogicalResult GatherOp::verify() {
  auto data = getData().getType().getShape();
  auto idx = getIndices().getType().getShape();
  SmallVector<int64_t> expected(idx);
  if (data.empty())
    return emitOpError("data must have rank >= 1");
  expected.append(data.begin() + 1, data.end());
  if (ArrayRef<int64_t>(expected) != getType().getShape())
    return emitOpError("result shape ")
           << shapeStr(getType().getShape()) << " is not "
           << shapeStr(expected);
  return success();
}

LogicalResult GatherOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                 SmallVectorImpl<Value> &operandGrads) {
  operandGrads.push_back(b.create<GatherGradOp>(
      getLoc(), getData().getType(), resultGrads[0], getIndices()));
  operandGrads.push_back(Value());
  return success();
}

int64_t GatherOp::getFlops() { return 0; }
int64_t GatherGradOp::getFlops() { return numElements(getGrad()); }

//===----------------------------------------------------------------------===//
// BatchMatMulOp: C = op(A) op(B) per batch index
//   d op(A) = dC op(B)^T,   d op(B) = op(A)^T dC   (as for pd.matmul)
//===----------------------------------------------------------------------===//

/// [rows, cols] of the trailing matrix of `v`, transposed when `t`.
static std::pair<int64_t, int64_t> matrixDims(Value v, bool t) {
  auto shape = cast<RankedTensorType>(v.getType()).getShape();
  int64_t r = shape[shape.size() - 2], c = shape.back();
  return t ? std::make_pair(c, r) : std::make_pair(r, c);
}

LogicalResult BatchMatMulOp::verify() {
  auto lhs = getLhs().getType().getShape(), rhs = getRhs().getType().getShape();
  auto out = getType().getShape();
  if (lhs.size() < 3 || lhs.size() != rhs.size() || out.size() != lhs.size())
    return emitOpError("expects operands and result of one rank >= 3");
  if (lhs.drop_back(2) != rhs.drop_back(2) || lhs.drop_back(2) != out.drop_back(2))
    return emitOpError("batch dimensions differ");
  auto [m, k] = matrixDims(getLhs(), getTransposeLhs());
  auto [k2, n] = matrixDims(getRhs(), getTransposeRhs());
  if (k != k2)
    return emitOpError("contraction dimensions differ: ") << k << " vs " << k2;
  if (out[out.size() - 2] != m || out.back() != n)
    return emitOpError("result matrices are not [") << m << "," << n << "]";
  return success();
}

static Value buildBatchMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              bool ta, bool tb) {
  auto shape = SmallVector<int64_t>(
      cast<RankedTensorType>(lhs.getType()).getShape().drop_back(2));
  shape.push_back(matrixDims(lhs, ta).first);
  shape.push_back(matrixDims(rhs, tb).second);
  auto type = RankedTensorType::get(shape, b.getF32Type());
  auto op = b.create<BatchMatMulOp>(loc, type, lhs, rhs);
  op.setTransposeLhs(ta);
  op.setTransposeRhs(tb);
  return op;
}

LogicalResult BatchMatMulOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  Value dc = resultGrads[0], a = getLhs(), bm = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Location loc = getLoc();
  operandGrads.push_back(ta ? buildBatchMatMul(b, loc, bm, dc, tb, true)
                            : buildBatchMatMul(b, loc, dc, bm, false, !tb));
  operandGrads.push_back(tb ? buildBatchMatMul(b, loc, dc, a, true, ta)
                            : buildBatchMatMul(b, loc, a, dc, !ta, false));
  return success();
}

int64_t BatchMatMulOp::getFlops() {
  return 2 * numElements(getResult()) *
         matrixDims(getLhs(), getTransposeLhs()).second;
}
