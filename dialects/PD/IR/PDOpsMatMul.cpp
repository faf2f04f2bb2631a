//===- PDOpsMatMul.cpp - pd.batch_matmul: layouts, verifier, gradient ---===//
//
// pd.batch_matmul of PDOpsTensor.td: how its operands and result are read
// and written in place (perms, selects, the strided-GEMM descriptor the
// lowering emits), its verifier, gradient rule and costs, including the
// blocks a causal `triangle` skips.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "dialects/PD/IR/PDOpsHelpers.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"

using namespace mlir;
using namespace mlir::pd;

//===----------------------------------------------------------------------===//
// BatchMatMulOp: C = op(A) op(B) per batch index
//   d op(A) = dC op(B)^T,   d op(B) = op(A)^T dC   (as for pd.matmul)
//===----------------------------------------------------------------------===//

/// [rows, cols] of the trailing matrix of `shape`, transposed when `t`.
static std::pair<int64_t, int64_t> matrixDims(ArrayRef<int64_t> shape,
                                              bool t) {
  int64_t r = shape[shape.size() - 2], c = shape.back();
  return t ? std::make_pair(c, r) : std::make_pair(r, c);
}

static std::pair<int64_t, int64_t> matrixDims(Value v, bool t) {
  return matrixDims(cast<RankedTensorType>(v.getType()).getShape(), t);
}

/// `shape` in the dim order `perm` (pd.transpose's result shape).
static SmallVector<int64_t> permuted(ArrayRef<int64_t> shape,
                                     std::optional<ArrayRef<int64_t>> perm) {
  if (!perm)
    return SmallVector<int64_t>(shape);
  SmallVector<int64_t> out;
  for (int64_t p : *perm)
    out.push_back(shape[p]);
  return out;
}

/// Whether `perm` is a permutation of [0, rank).
static bool isPermutation(ArrayRef<int64_t> perm, size_t rank) {
  if (perm.size() != rank)
    return false;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= (int64_t)rank || seen[p])
      return false;
    seen[p] = true;
  }
  return true;
}

/// The dims of a row-major `stored` left by a select ([axis, index]; none:
/// all of them) and their strides in its storage.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
selectedDims(ArrayRef<int64_t> stored,
             std::optional<ArrayRef<int64_t>> select) {
  SmallVector<int64_t> dims(stored), strides = computeStrides(stored);
  if (select) {
    dims.erase(dims.begin() + (*select)[0]);
    strides.erase(strides.begin() + (*select)[0]);
  }
  return {dims, strides};
}

int64_t BatchMatMulOp::selectOffset(ArrayRef<int64_t> stored,
                                    std::optional<ArrayRef<int64_t>> select) {
  return select ? (*select)[1] * computeStrides(stored)[(*select)[0]] : 0;
}

SmallVector<int64_t> BatchMatMulOp::getLogicalLhsShape() {
  return permuted(
      selectedDims(getLhs().getType().getShape(), getLhsSelect()).first,
      getLhsPerm());
}

SmallVector<int64_t> BatchMatMulOp::getLogicalRhsShape() {
  return permuted(
      selectedDims(getRhs().getType().getShape(), getRhsSelect()).first,
      getRhsPerm());
}

std::optional<BatchMatMulOp::StridedMatrix>
BatchMatMulOp::stridedOperand(ArrayRef<int64_t> stored,
                              std::optional<ArrayRef<int64_t>> perm,
                              bool transpose,
                              std::optional<ArrayRef<int64_t>> select) {
  auto [selected, selectedStrides] = selectedDims(stored, select);
  SmallVector<int64_t> strides = permuted(selectedStrides, perm);
  SmallVector<int64_t> dims = permuted(selected, perm);
  size_t rank = dims.size();
  int64_t rows = dims[rank - 2], cols = dims[rank - 1];
  int64_t rowStride = strides[rank - 2], colStride = strides[rank - 1];
  StridedMatrix layout;
  layout.batchStrides.assign(strides.begin(), strides.end() - 2);
  if (colStride == 1 || cols == 1) {
    // Stored row-major [rows, cols].
    layout.transpose = transpose;
    layout.ld = rows == 1 ? std::max<int64_t>(cols, 1) : rowStride;
    return layout;
  }
  if (rowStride == 1 || rows == 1) {
    // Stored row-major [cols, rows]: the matrix is its transpose.
    layout.transpose = !transpose;
    layout.ld = cols == 1 ? std::max<int64_t>(rows, 1) : colStride;
    return layout;
  }
  return std::nullopt;
}

std::optional<BatchMatMulOp::StridedMatrix>
BatchMatMulOp::stridedResult(ArrayRef<int64_t> stored,
                             std::optional<ArrayRef<int64_t>> perm,
                             std::optional<ArrayRef<int64_t>> select) {
  // C's dim perm[i] is stored as dim i: C's dim d has the stride of the
  // stored dim that holds it.
  auto [selected, selectedStrides] = selectedDims(stored, select);
  size_t rank = selected.size();
  SmallVector<int64_t> strides(rank), dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = perm ? (*perm)[i] : (int64_t)i;
    strides[d] = selectedStrides[i];
    dims[d] = selected[i];
  }
  int64_t rows = dims[rank - 2], cols = dims[rank - 1];
  if (strides[rank - 1] != 1 && cols != 1)
    return std::nullopt;
  StridedMatrix layout;
  layout.transpose = false;
  layout.ld = rows == 1 ? std::max<int64_t>(cols, 1) : strides[rank - 2];
  layout.batchStrides.assign(strides.begin(), strides.end() - 2);
  return layout;
}

std::optional<BatchMatMulOp::ResultPart> BatchMatMulOp::getResultPart() {
  DenseI64ArrayAttr part =
      PDDialect::ConcatPartAttrHelper(getContext()).getAttr(*this);
  if (!part || part[0] > getType().getRank())
    return std::nullopt;
  ResultPart result;
  result.stored.assign(getType().getShape().begin(), getType().getShape().end());
  result.stored.insert(result.stored.begin() + part[0], part[2]);
  result.select = {part[0], part[1]};
  return result;
}

/// `batch` (the op's batch dims) with its last dim divided by `groups`:
/// the batch dims of a grouped rhs or result.
static SmallVector<int64_t> grouped(ArrayRef<int64_t> batch,
                                    std::optional<uint64_t> groups) {
  SmallVector<int64_t> out(batch);
  if (groups && !out.empty() && *groups > 0)
    out.back() /= (int64_t)*groups;
  return out;
}

LogicalResult BatchMatMulOp::verifyGroups() {
  auto rhs = getRhsGroups(), result = getResultGroups();
  for (auto [name, groups] : {std::make_pair("rhs_groups", rhs),
                              std::make_pair("result_groups", result)})
    if (groups && *groups < 2)
      return emitOpError(name) << " must be at least 2, got " << *groups;
  if (rhs && result && *rhs != *result)
    return emitOpError("rhs_groups and result_groups differ: ")
           << *rhs << " vs " << *result;
  int64_t groups = getBatchGroups(), heads = getLogicalLhsShape().end()[-3];
  if (groups > 1 && heads % groups != 0)
    return emitOpError("groups of ")
           << groups << " do not divide the last batch dim, " << heads;
  return success();
}

/// Whether `select` ([axis, index]) picks a part of `stored`.
static bool isSelect(ArrayRef<int64_t> select, ArrayRef<int64_t> stored) {
  return select.size() == 2 && select[0] >= 0 &&
         select[0] < (int64_t)stored.size() && select[1] >= 0 &&
         select[1] < stored[select[0]];
}

LogicalResult BatchMatMulOp::verify() {
  int64_t rank = getType().getRank();
  for (auto [name, operand, select] :
       {std::make_tuple("lhs", getLhs(), getLhsSelect()),
        std::make_tuple("rhs", getRhs(), getRhsSelect())}) {
    auto stored = cast<RankedTensorType>(operand.getType()).getShape();
    if (select && !isSelect(*select, stored))
      return emitOpError(name) << "_select is not [axis, index] of the "
                               << name << " shape";
    if (rank < 3 || (int64_t)stored.size() != rank + (select ? 1 : 0))
      return emitOpError("expects operands and result of one rank >= 3 "
                         "(an operand with a select: one more)");
  }
  for (auto [name, perm] : {std::make_pair("lhs_perm", getLhsPerm()),
                            std::make_pair("rhs_perm", getRhsPerm()),
                            std::make_pair("result_perm", getResultPerm())})
    if (perm && !isPermutation(*perm, rank))
      return emitOpError(name) << " is not a permutation of " << rank
                               << " dims";
  SmallVector<int64_t> lhs = getLogicalLhsShape(), rhs = getLogicalRhsShape();
  SmallVector<int64_t> out;
  if (auto perm = getResultPerm()) {
    // The stored result is transpose(C, perm): C's dim perm[i] is stored
    // as dim i.
    out.assign(rank, 0);
    for (int64_t i = 0; i < rank; ++i)
      out[(*perm)[i]] = getType().getShape()[i];
  } else {
    out.assign(getType().getShape().begin(), getType().getShape().end());
  }
  if (failed(verifyGroups()))
    return failure();
  ArrayRef<int64_t> batch = ArrayRef(lhs).drop_back(2);
  if (ArrayRef(grouped(batch, getRhsGroups())) != ArrayRef(rhs).drop_back(2) ||
      ArrayRef(grouped(batch, getResultGroups())) != ArrayRef(out).drop_back(2))
    return emitOpError("batch dimensions differ");
  auto [m, k] = matrixDims(lhs, getTransposeLhs());
  auto [k2, n] = matrixDims(rhs, getTransposeRhs());
  if (k != k2)
    return emitOpError("contraction dimensions differ: ") << k << " vs " << k2;
  if (out[out.size() - 2] != m || out.back() != n)
    return emitOpError("result matrices are not [") << m << "," << n << "]";
  if (!stridedOperand(getLhs().getType().getShape(), getLhsPerm(),
                      getTransposeLhs(), getLhsSelect()))
    return emitOpError("lhs_perm leaves neither matrix dim innermost");
  if (!stridedOperand(getRhs().getType().getShape(), getRhsPerm(),
                      getTransposeRhs(), getRhsSelect()))
    return emitOpError("rhs_perm leaves neither matrix dim innermost");
  if (getResultPerm() &&
      !stridedResult(getType().getShape(), getResultPerm()))
    return emitOpError("result_perm does not keep the columns innermost");
  if (auto triangle = getTriangle()) {
    bool result = *triangle == Triangle::ResultLower;
    if (result ? m != n : m != k)
      return emitOpError("triangle = ")
             << stringifyTriangle(*triangle) << " needs a square "
             << (result ? "result" : "lhs") << " matrix, got ["
             << m << "," << (result ? n : k) << "]";
  }
  return success();
}

static Value buildBatchMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                              bool ta, bool tb) {
  auto shape = SmallVector<int64_t>(
      cast<RankedTensorType>(lhs.getType()).getShape().drop_back(2));
  shape.push_back(matrixDims(lhs, ta).first);
  shape.push_back(matrixDims(rhs, tb).second);
  auto type = RankedTensorType::get(shape, b.getF32Type());
  UnitAttr unit = b.getUnitAttr();
  return b.create<BatchMatMulOp>(loc, type, lhs, rhs, ta ? unit : nullptr,
                                 tb ? unit : nullptr, /*lhs_perm=*/nullptr,
                                 /*rhs_perm=*/nullptr,
                                 /*result_perm=*/nullptr,
                                 /*lhs_select=*/nullptr,
                                 /*rhs_select=*/nullptr,
                                 /*triangle=*/nullptr, /*rhs_groups=*/nullptr,
                                 /*result_groups=*/nullptr);
}

LogicalResult BatchMatMulOp::buildVJP(OpBuilder &b, ArrayRef<Value> resultGrads,
                                      SmallVectorImpl<Value> &operandGrads) {
  if (getLhsPerm() || getRhsPerm() || getResultPerm() || getLhsSelect() ||
      getRhsSelect() || getRhsGroups() || getResultGroups())
    return emitOpError("stored dim orders, selects and groups are folded in "
                       "after differentiation; this op has them already");
  Value dc = resultGrads[0], a = getLhs(), bm = getRhs();
  bool ta = getTransposeLhs(), tb = getTransposeRhs();
  Location loc = getLoc();
  operandGrads.push_back(ta ? buildBatchMatMul(b, loc, bm, dc, tb, true)
                            : buildBatchMatMul(b, loc, dc, bm, false, !tb));
  operandGrads.push_back(tb ? buildBatchMatMul(b, loc, dc, a, true, ta)
                            : buildBatchMatMul(b, loc, a, dc, !ta, false));
  return success();
}

/// The multiply-adds of one GEMM that skips `triangle`'s blocks, as
/// pdrt_batch_matmul_strided does: column blocks of C from the diagonal
/// down (result_lower), row blocks of C over op(A)'s nonzero columns
/// (lhs_lower, lhs_upper); blocks of PDRT_CAUSAL_BLOCK.
static int64_t triangleMacs(Triangle triangle, int64_t m, int64_t n,
                            int64_t k) {
  constexpr int64_t block = BatchMatMulOp::kCausalBlock;
  int64_t macs = 0;
  for (int64_t at = 0; at < m; at += block) {
    int64_t size = std::min(block, m - at);
    if (triangle == Triangle::ResultLower)
      macs += (m - at) * size * k;
    else if (triangle == Triangle::LhsLower)
      macs += size * n * (at + size);
    else
      macs += size * n * (k - at);
  }
  return macs;
}

int64_t BatchMatMulOp::getFlops() {
  auto triangle = getTriangle();
  if (!triangle)
    return getDenseFlops();
  auto [m, k] = matrixDims(getLogicalLhsShape(), getTransposeLhs());
  int64_t n = matrixDims(getLogicalRhsShape(), getTransposeRhs()).second;
  return 2 * getProducts() * triangleMacs(*triangle, m, n, k);
}

int64_t BatchMatMulOp::getProducts() {
  int64_t products = 1;
  for (int64_t d : ArrayRef(getLogicalLhsShape()).drop_back(2))
    products *= d;
  return products;
}

int64_t BatchMatMulOp::getDenseFlops() {
  auto [m, k] = matrixDims(getLogicalLhsShape(), getTransposeLhs());
  int64_t n = matrixDims(getLogicalRhsShape(), getTransposeRhs()).second;
  return 2 * getProducts() * m * n * k;
}

/// The bytes of the operands' parts it reads (not of a selected operand's
/// whole storage) and of the result.
int64_t BatchMatMulOp::getBytes() {
  auto elements = [](ArrayRef<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  };
  return 4 * (elements(getLogicalLhsShape()) + elements(getLogicalRhsShape()) +
              numElements(getResult()));
}
