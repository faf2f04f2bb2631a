//===- FoldTransposesIntoMatMul.cpp - Heads read through strides -*- C++ -*-===//
//
// pd-fold-transposes-into-matmul: attention splits its heads with
// transposes, [batch, seq, heads, dim] -> [batch, heads, seq, dim] for Q
// and V and [batch, heads, dim, seq] for K^T, and merges them back after
// P V; its backward transposes every gradient the other way. Each is a
// full copy of the activations. A batched GEMM can read any of these
// layouts through strides (one GEMM per (batch, head), with the row
// stride as its leading dimension), so this pass folds
//
//   pd.batch_matmul(pd.transpose(x, p), ...)   into lhs_perm / rhs_perm
//   pd.transpose(pd.batch_matmul(...), r)      into result_perm
//
// when the GEMM can still read (write) the stored operand: one of the
// matrix's two dims innermost for an operand, the columns innermost for
// the result (a result whose rows end up innermost is computed as the
// transposed product B^T A^T instead). torch's dynamo export transposes
// K^T as [B H, T, D] (a reshape merging batch and heads, a 3-D transpose,
// a reshape splitting them again): such a transpose between leading-dim
// reshapes is first made the 4-D transpose it is, which then folds. A
// transpose whose every user folded it disappears, with its copy and its
// buffer. Runs after pd-autodiff, so the forward and the backward fold
// alike; gradient ops that named a forward transpose which disappeared
// (pd.grad_of) then name the matmul that absorbed it, so partitioning
// keeps them beside it.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/GradTags.h"
#include "passes/LeadingReshapes.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FOLDTRANSPOSESINTOMATMULPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FoldTransposesIntoMatMulPass
    : public mlir::pd::impl::FoldTransposesIntoMatMulPassBase<
          FoldTransposesIntoMatMulPass> {
  using FoldTransposesIntoMatMulPassBase::FoldTransposesIntoMatMulPassBase;
  void runOnOperation() override;
};

/// `inner` applied after `outer`: transpose(transpose(x, outer), inner) is
/// transpose(x, composed) with composed[i] = outer[inner[i]].
SmallVector<int64_t> compose(ArrayRef<int64_t> outer,
                             std::optional<ArrayRef<int64_t>> inner) {
  SmallVector<int64_t> out;
  for (size_t i = 0; i < outer.size(); ++i)
    out.push_back(outer[inner ? (*inner)[i] : i]);
  return out;
}

/// Folds a transpose defining an operand into the operand's perm.
struct FoldOperandTranspose : public OpRewritePattern<BatchMatMulOp> {
  FoldOperandTranspose(MLIRContext *ctx, Absorbed &absorbed)
      : OpRewritePattern(ctx), absorbed(absorbed) {}
  Absorbed &absorbed;

  LogicalResult matchAndRewrite(BatchMatMulOp mm,
                                PatternRewriter &rewriter) const override {
    bool changed = false;
    for (bool isLhs : {true, false}) {
      Value operand = isLhs ? mm.getLhs() : mm.getRhs();
      auto transpose = operand.getDefiningOp<TransposeOp>();
      if (!transpose)
        continue;
      Value stored = transpose.getInput();
      SmallVector<int64_t> perm = compose(
          transpose.getPerm(), isLhs ? mm.getLhsPerm() : mm.getRhsPerm());
      auto storedShape = cast<RankedTensorType>(stored.getType()).getShape();
      bool flag = isLhs ? mm.getTransposeLhs() : mm.getTransposeRhs();
      if (!BatchMatMulOp::stridedOperand(storedShape, ArrayRef(perm), flag))
        continue;
      auto id = getContractInt<PDDialect::OpIdAttrHelper>(transpose);
      if (auto into = forwardIdOf(mm); id && into)
        absorbed.try_emplace(*id, *into);
      rewriter.modifyOpInPlace(mm, [&] {
        if (isLhs) {
          mm.getLhsMutable().assign(stored);
          mm.setLhsPerm(perm);
        } else {
          mm.getRhsMutable().assign(stored);
          mm.setRhsPerm(perm);
        }
      });
      changed = true;
    }
    return success(changed);
  }
};

/// A perm attribute, none for the identity.
DenseI64ArrayAttr permAttr(PatternRewriter &rewriter, ArrayRef<int64_t> perm) {
  if (isIdentityPermutation(perm))
    return nullptr;
  return rewriter.getDenseI64ArrayAttr(perm);
}

/// Folds a transpose of the result into result_perm (composed with one the
/// matmul has), swapping the product (C^T = op(B)^T op(A)^T) when the
/// transpose puts C's rows innermost.
struct FoldResultTranspose : public OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    auto mm = transpose.getInput().getDefiningOp<BatchMatMulOp>();
    if (!mm || !mm->hasOneUse())
      return rewriter.notifyMatchFailure(transpose, "not of a sole matmul");
    SmallVector<int64_t> perm(transpose.getPerm());
    if (auto stored = mm.getResultPerm())
      perm = compose(*stored, ArrayRef<int64_t>(perm));
    int64_t rank = perm.size();
    auto stored = transpose.getType().getShape();
    if (BatchMatMulOp::stridedResult(stored, ArrayRef(perm))) {
      auto fused = rewriter.create<BatchMatMulOp>(
          mm.getLoc(), transpose.getType(), mm.getLhs(), mm.getRhs(),
          mm.getTransposeLhsAttr(), mm.getTransposeRhsAttr(),
          mm.getLhsPermAttr(), mm.getRhsPermAttr(), permAttr(rewriter, perm),
          mm.getLhsSelectAttr(), mm.getRhsSelectAttr(), /*triangle=*/nullptr,
          mm.getRhsGroupsAttr(), mm.getResultGroupsAttr());
      fused->setDiscardableAttrs(mm->getDiscardableAttrDictionary());
      rewriter.replaceOp(transpose, fused.getResult());
      rewriter.eraseOp(mm);
      return success();
    }
    // C^T = op(B)^T op(A)^T: C's dim d is C^T's swap(d).
    SmallVector<int64_t> swapped(perm);
    for (int64_t &d : swapped)
      d = d == rank - 1 ? rank - 2 : d == rank - 2 ? rank - 1 : d;
    if (!BatchMatMulOp::stridedResult(stored, ArrayRef(swapped)))
      return rewriter.notifyMatchFailure(transpose, "no GEMM writes this layout");
    if (mm.getRhsGroups())
      return rewriter.notifyMatchFailure(transpose, "a grouped rhs cannot "
                                                    "become the lhs");
    auto fused = rewriter.create<BatchMatMulOp>(
        mm.getLoc(), transpose.getType(), mm.getRhs(), mm.getLhs(),
        mm.getTransposeRhs() ? UnitAttr() : rewriter.getUnitAttr(),
        mm.getTransposeLhs() ? UnitAttr() : rewriter.getUnitAttr(),
        mm.getRhsPermAttr(), mm.getLhsPermAttr(), permAttr(rewriter, swapped),
        mm.getRhsSelectAttr(), mm.getLhsSelectAttr(), /*triangle=*/nullptr,
        /*rhs_groups=*/nullptr, mm.getResultGroupsAttr());
    fused->setDiscardableAttrs(mm->getDiscardableAttrDictionary());
    rewriter.replaceOp(transpose, fused.getResult());
    rewriter.eraseOp(mm);
    return success();
  }
};

} // namespace

void FoldTransposesIntoMatMulPass::runOnOperation() {
  Absorbed absorbed;
  RewritePatternSet patterns(&getContext());
  patterns.add<FoldOperandTranspose>(&getContext(), absorbed);
  patterns.add<FoldResultTranspose>(&getContext());
  populateTransposeBetweenLeadingReshapes(patterns);
  if (failed(foldAndRetag(getOperation(), std::move(patterns), absorbed)))
    signalPassFailure();
}
