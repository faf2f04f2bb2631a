//===- MarkCausalGemms.cpp - Causal GEMMs skip zero blocks ------*- C++ -*-===//
//
// pd-mark-causal-gemms: causal attention computes, per batch and head,
//
//   S  = Q K^T           P = masked_softmax(S, causal)     O  = P V
//   dP = dO V^T          dS = masked_softmax_grad(dP, P)
//   dV = P^T dO          dQ = dS K                          dK = dS^T Q
//
// P and dS are lower triangular (the softmax writes zeros above the
// diagonal, its gradient too), and the softmax reads only the lower
// triangle of S, its gradient only that of dP (under `causal`). Dense
// GEMMs spend half their work on those zeros. This pass marks the GEMMs
// with the triangle they may skip (pd.batch_matmul's `triangle`): the
// kernel computes C's column blocks from the diagonal down (S, dP:
// result_lower) or each row block of C over op(A)'s nonzero columns only
// (P V, dS K: lhs_lower; P^T dO, dS^T Q: lhs_upper).
//
// The mask must be a compile-time constant [T, T] over scores [..., T, T]
// that keeps each row's diagonal and nothing above it: the causal mask
// j <= i, or a band inside it (a sliding window, Mistral's), whose P is
// as lower triangular and whose rows the softmax gradient reads only up
// to the diagonal too. P may reach its GEMMs through a where that
// replaces NaNs by zeros (torch's export of scaled dot product
// attention), which keeps it lower triangular. A GEMM whose P or dS
// operand is read through a permutation of its matrix dims or a select,
// or that already has a triangle, stays dense, as does a score GEMM with
// another reader or fewer than min-result-rows rows (too few blocks to
// gain). When every reader of P (or of dS) skips the blocks above the
// diagonal, the softmax (or its gradient) gets `diagonal_blocks` and
// writes each row only up to the end of its diagonal block: the zeros
// past it, half of a long row, would never be read.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Matchers.h"

namespace mlir::pd {
#define GEN_PASS_DEF_MARKCAUSALGEMMSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct MarkCausalGemmsPass
    : public mlir::pd::impl::MarkCausalGemmsPassBase<MarkCausalGemmsPass> {
  using MarkCausalGemmsPassBase::MarkCausalGemmsPassBase;
  void runOnOperation() override;
};

/// Whether `softmax` applies to square [..., T, T] scores a constant mask
/// inside the causal one: row i keeps its diagonal and no column j > i
/// (the causal mask itself, or a sliding window: Mistral's band). Every
/// row keeps something, so none is an empty row's fill, and P is zero
/// above the diagonal.
bool isWithinCausal(MaskedSoftmaxOp softmax) {
  auto shape = cast<RankedTensorType>(softmax.getType()).getShape();
  DenseElementsAttr mask;
  if (!softmax.getMask() || shape.size() < 2 ||
      !matchPattern(softmax.getMask(), m_Constant(&mask)))
    return false;
  int64_t t = shape.back();
  auto maskShape = cast<RankedTensorType>(mask.getType()).getShape();
  if (shape[shape.size() - 2] != t || maskShape != ArrayRef<int64_t>{t, t})
    return false;
  int64_t at = 0;
  for (bool keep : mask.getValues<bool>()) {
    int64_t row = at / t, col = at % t;
    if (col > row ? keep : col == row && !keep)
      return false;
    ++at;
  }
  return true;
}

/// Whether a GEMM reads its operand's matrices as stored: no select, and
/// any permutation leaves the two matrix dims in place.
bool matricesAsStored(std::optional<ArrayRef<int64_t>> perm,
                      std::optional<ArrayRef<int64_t>> select) {
  if (select)
    return false;
  if (!perm)
    return true;
  int64_t rank = perm->size();
  return (*perm)[rank - 2] == rank - 2 && (*perm)[rank - 1] == rank - 1;
}

/// The GEMM computing `scores`, whose lower triangle alone is read, skips
/// the blocks above the diagonal when nothing else reads it and its
/// matrices have at least `minRows` rows.
void markScores(Value scores, int64_t minRows) {
  auto mm = scores.getDefiningOp<BatchMatMulOp>();
  if (!mm || !mm->hasOneUse() || mm.getTriangle() ||
      !matricesAsStored(mm.getResultPerm(), std::nullopt))
    return;
  auto shape = mm.getType().getShape();
  if (shape[shape.size() - 2] < minRows)
    return;
  mm.setTriangle(Triangle::ResultLower);
}

/// Whether `where` keeps the zeros of its operand `lower`: it selects
/// between `lower` and a constant zero, at `lower`'s shape. Scaled dot
/// product attention as torch exports it replaces P's NaNs by zeros so.
bool keepsZeros(WhereOp where, Value lower) {
  if (where.getType() != lower.getType())
    return false;
  Value other = where.getLhs() == lower ? where.getRhs() : where.getLhs();
  return other != lower && matchPattern(other, m_AnyZeroFloat());
}

/// Marks the readers of the lower triangular `lower` (P, or dS): GEMMs
/// multiplying it from the left, those of a where that keeps its zeros,
/// and the softmax gradients it is the output of (then their dP, if it has
/// `minRows` rows, and dS in turn).
void markReaders(Value lower, int64_t minRows) {
  for (OpOperand &use : lower.getUses()) {
    Operation *user = use.getOwner();
    if (auto where = dyn_cast<WhereOp>(user)) {
      if (use.getOperandNumber() != 0 && keepsZeros(where, lower))
        markReaders(where.getResult(), minRows);
      continue;
    }
    if (auto mm = dyn_cast<BatchMatMulOp>(user)) {
      if (use.getOperandNumber() == 0 && !mm.getTriangle() &&
          matricesAsStored(mm.getLhsPerm(), mm.getLhsSelect()))
        mm.setTriangle(mm.getTransposeLhs() ? Triangle::LhsUpper
                                            : Triangle::LhsLower);
      continue;
    }
    auto grad = dyn_cast<MaskedSoftmaxGradOp>(user);
    if (!grad || grad.getOutput() != lower || grad.getGrad() == lower ||
        grad.getCausal())
      continue;
    grad.setCausal(true);
    markScores(grad.getGrad(), minRows);
    markReaders(grad.getResult(), minRows);
  }
}

/// Whether every reader of the lower triangular `lower` reads no element
/// past a row's diagonal block: GEMMs that skip the blocks above the
/// diagonal, and the causal softmax gradient reading it as its output.
bool readOnlyToDiagonalBlocks(Value lower) {
  return llvm::all_of(lower.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (auto mm = dyn_cast<BatchMatMulOp>(user))
      return use.getOperandNumber() == 0 && mm.getTriangle() &&
             (*mm.getTriangle() == Triangle::LhsLower ||
              *mm.getTriangle() == Triangle::LhsUpper);
    auto grad = dyn_cast<MaskedSoftmaxGradOp>(user);
    return grad && grad.getCausal() && grad.getOutput() == lower &&
           grad.getGrad() != lower;
  });
}

} // namespace

void MarkCausalGemmsPass::runOnOperation() {
  getOperation().walk([&](MaskedSoftmaxOp softmax) {
    if (!isWithinCausal(softmax))
      return;
    markScores(softmax.getInput(), minResultRows);
    markReaders(softmax.getResult(), minResultRows);
    // The zeros past the diagonal blocks of P and dS are never read when
    // every reader skips those blocks: the kernels need not write them.
    if (readOnlyToDiagonalBlocks(softmax.getResult()))
      softmax.setDiagonalBlocks(true);
    for (Operation *user : softmax.getResult().getUsers())
      if (auto grad = dyn_cast<MaskedSoftmaxGradOp>(user))
        if (grad.getCausal() && readOnlyToDiagonalBlocks(grad.getResult()))
          grad.setDiagonalBlocks(true);
  });
}
