//===- FoldBroadcastsIntoMatMul.cpp - Shared K and V heads ------*- C++ -*-===//
//
// pd-fold-broadcasts-into-matmul: grouped-query attention (Llama, Mistral,
// Qwen2) shares each K and V head among g query heads. Hugging Face's
// repeat_kv exports the sharing as copies,
//
//   %u  = pd.reshape %k : [B, Hkv, T, D] -> [B, Hkv, 1, T, D]
//   %w  = pd.broadcast_to %u : -> [B, Hkv, g, T, D]
//   %kr = pd.reshape %w : -> [B, Hkv g, T, D]
//   %s  = pd.batch_matmul %q, %kr ...
//
// and its backward sums each group's gradients again (pd.sum_to of the
// [B, Hkv, g, T, D] view of dK's and dV's batched products). This pass
// makes a batched GEMM read such an operand as `rhs_groups = g` of %k
// (a zero stride: no copy, and the backward keeps %k instead of the copy
// for its own GEMMs), optionally through a transpose of the trailing
// matrix dims between them (K^T), and makes the GEMM whose product is
// only summed over the groups accumulate the group into its result
// (`result_groups = g`). Runs after pd-autodiff (both directions fold
// alike) and before pd-fold-transposes-into-matmul, which then folds the
// heads' transposes of %k and of the gradients into the GEMMs' strides
// (the copies kept them apart). Gradient ops that named an absorbed
// forward op (pd.grad_of) then name the GEMM that absorbed it.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/GradTags.h"
#include "passes/LeadingReshapes.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FOLDBROADCASTSINTOMATMULPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FoldBroadcastsIntoMatMulPass
    : public mlir::pd::impl::FoldBroadcastsIntoMatMulPassBase<
          FoldBroadcastsIntoMatMulPass> {
  using FoldBroadcastsIntoMatMulPassBase::FoldBroadcastsIntoMatMulPassBase;
  void runOnOperation() override;
};

/// Whether `wide` ([..., H / g, g, T, D]) is `heads` ([..., H, T, D]) with
/// its last batch dim split into (H / g, g), g >= 2.
bool splitsLastBatchDim(ArrayRef<int64_t> heads, ArrayRef<int64_t> wide) {
  size_t rank = heads.size(), h = rank - 3;
  return rank >= 3 && wide.size() == rank + 1 && wide[h + 1] >= 2 &&
         wide.take_front(h) == heads.take_front(h) &&
         wide[h] * wide[h + 1] == heads[h] &&
         wide.drop_front(h + 2) == heads.drop_front(h + 1);
}

/// `wide` with the groups dim (after the last batch dim) set to 1.
SmallVector<int64_t> oneGroup(ArrayRef<int64_t> wide) {
  SmallVector<int64_t> shape(wide);
  shape[wide.size() - 3] = 1;
  return shape;
}

/// `wide` without its groups dim: [..., H / g, T, D].
SmallVector<int64_t> withoutGroups(ArrayRef<int64_t> wide) {
  SmallVector<int64_t> shape(wide);
  shape.erase(shape.begin() + (wide.size() - 3));
  return shape;
}

RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return cast<RankedTensorType>(v.getType()).clone(shape);
}

/// `operand` = reshape(broadcast_to(u)) sharing each of u's last batch
/// entries among `groups` of the operand's.
struct SharedHeads {
  ReshapeOp merge;
  BroadcastToOp broadcast;
  int64_t groups;
};

std::optional<SharedHeads> matchSharedHeads(Value operand) {
  auto merge = operand.getDefiningOp<ReshapeOp>();
  auto broadcast =
      merge ? merge.getInput().getDefiningOp<BroadcastToOp>() : nullptr;
  if (!broadcast)
    return std::nullopt;
  ArrayRef<int64_t> wide = shapeOf(broadcast);
  if (!splitsLastBatchDim(shapeOf(operand), wide) ||
      ArrayRef(oneGroup(wide)) != shapeOf(broadcast.getInput()))
    return std::nullopt;
  return SharedHeads{merge, broadcast, wide[wide.size() - 3]};
}

/// The tensor whose heads are shared, [..., H / g, T, D]: the broadcast's
/// input without its unit dim (the reshape's input when it only added
/// that dim).
Value sharedTensor(PatternRewriter &rewriter, ForwardViews &views,
                   SharedHeads shared) {
  Value u = shared.broadcast.getInput();
  SmallVector<int64_t> shape = withoutGroups(shapeOf(u));
  if (auto expand = u.getDefiningOp<ReshapeOp>();
      expand && shapeOf(expand.getInput()) == ArrayRef(shape))
    return expand.getInput();
  return views.get<ReshapeOp>(rewriter, shared.broadcast, u,
                              withShape(u, shape), Attribute());
}

/// Whether `perm` keeps every batch dim in place (it may swap the matrix
/// dims).
bool keepsBatchDims(ArrayRef<int64_t> perm) {
  for (size_t d = 0; d + 2 < perm.size(); ++d)
    if (perm[d] != (int64_t)d)
      return false;
  return true;
}

/// pd.batch_matmul(a, [transpose] reshape(broadcast_to(u))) ->
/// pd.batch_matmul(a, [transpose] k) {rhs_groups = g}, k = u without its
/// unit dim.
struct FoldSharedRhs : public OpRewritePattern<BatchMatMulOp> {
  FoldSharedRhs(MLIRContext *ctx, Absorbed &absorbed, ForwardViews &views)
      : OpRewritePattern(ctx), absorbed(absorbed), views(views) {}
  Absorbed &absorbed;
  ForwardViews &views;

  LogicalResult matchAndRewrite(BatchMatMulOp mm,
                                PatternRewriter &rewriter) const override {
    if (mm.isStrided())
      return rewriter.notifyMatchFailure(mm, "already reads through strides");
    Value rhs = mm.getRhs();
    auto transpose = rhs.getDefiningOp<TransposeOp>();
    if (transpose && keepsBatchDims(transpose.getPerm()))
      rhs = transpose.getInput();
    else
      transpose = nullptr;
    std::optional<SharedHeads> shared = matchSharedHeads(rhs);
    if (!shared)
      return rewriter.notifyMatchFailure(mm, "rhs shares no heads");
    Value k = sharedTensor(rewriter, views, *shared);
    if (transpose) {
      SmallVector<int64_t> shape;
      for (int64_t d : transpose.getPerm())
        shape.push_back(shapeOf(k)[d]);
      k = views.get<TransposeOp>(rewriter, transpose, k, withShape(k, shape),
                                 transpose.getPermAttr(),
                                 transpose.getPermAttr());
    }
    // Gradient ops of the copy's ops, should these vanish, follow the GEMM;
    // those of the transpose follow its new transpose.
    auto absorb = [&](Operation *op, std::optional<int64_t> into) {
      auto id =
          op ? getContractInt<PDDialect::OpIdAttrHelper>(op) : std::nullopt;
      if (id && into)
        absorbed.try_emplace(*id, *into);
    };
    std::optional<int64_t> gemm = forwardIdOf(mm);
    absorb(shared->merge, gemm);
    absorb(shared->broadcast, gemm);
    absorb(shared->broadcast.getInput().getDefiningOp(), gemm);
    if (transpose)
      absorb(transpose, forwardIdOf(k.getDefiningOp()));
    rewriter.modifyOpInPlace(mm, [&] {
      mm.getRhsMutable().assign(k);
      mm.setRhsGroups(shared->groups);
    });
    return success();
  }
};

/// sum_to(reshape([transpose] pd.batch_matmul(a, b))) over the groups of
/// its last batch dim -> [transpose] pd.batch_matmul(a, b) {result_groups
/// = g}, anchored on the sum (the transpose, of the trailing matrix dims:
/// dK^T's back to dK).
struct FoldGroupSum : public OpRewritePattern<SumToOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(SumToOp sum,
                                PatternRewriter &rewriter) const override {
    auto split = sum.getInput().getDefiningOp<ReshapeOp>();
    Value product = split ? split.getInput() : Value();
    auto transpose = product ? product.getDefiningOp<TransposeOp>() : nullptr;
    if (transpose && keepsBatchDims(transpose.getPerm()) &&
        transpose->hasOneUse())
      product = transpose.getInput();
    else
      transpose = nullptr;
    auto mm = product ? product.getDefiningOp<BatchMatMulOp>() : nullptr;
    if (!mm || !mm->hasOneUse() || !split->hasOneUse() || mm.isStrided())
      return rewriter.notifyMatchFailure(sum, "not the sum of a plain GEMM's "
                                              "groups");
    ArrayRef<int64_t> wide = shapeOf(split);
    if (!splitsLastBatchDim(shapeOf(split.getInput()), wide) ||
        ArrayRef(oneGroup(wide)) != shapeOf(sum))
      return rewriter.notifyMatchFailure(sum, "does not sum the groups of "
                                              "the last batch dim");
    int64_t groups = wide[wide.size() - 3];
    SmallVector<int64_t> shape(shapeOf(mm));
    shape[shape.size() - 3] /= groups;
    auto summed = rewriter.create<BatchMatMulOp>(
        mm.getLoc(), withShape(mm, shape), mm.getLhs(), mm.getRhs(),
        mm.getTransposeLhsAttr(), mm.getTransposeRhsAttr(),
        /*lhs_perm=*/nullptr, /*rhs_perm=*/nullptr, /*result_perm=*/nullptr,
        /*lhs_select=*/nullptr, /*rhs_select=*/nullptr, /*triangle=*/nullptr,
        /*rhs_groups=*/nullptr, rewriter.getI64IntegerAttr(groups));
    summed->setDiscardableAttrs(mm->getDiscardableAttrDictionary());
    Value result = summed;
    if (transpose) {
      auto moved = rewriter.create<TransposeOp>(
          transpose.getLoc(), withShape(transpose, withoutGroups(wide)), summed,
          transpose.getPermAttr());
      moved->setDiscardableAttrs(transpose->getDiscardableAttrDictionary());
      result = moved;
    }
    // The sum's readers get the grouped product; a reshape that only drops
    // the unit dim again is the product itself.
    for (Operation *user : llvm::make_early_inc_range(sum->getUsers()))
      if (auto squeeze = dyn_cast<ReshapeOp>(user);
          squeeze && squeeze.getType() == result.getType())
        rewriter.replaceOp(squeeze, result);
    if (sum->use_empty()) {
      rewriter.eraseOp(sum);
    } else {
      auto reshape =
          rewriter.create<ReshapeOp>(sum.getLoc(), sum.getType(), result);
      reshape->setDiscardableAttrs(sum->getDiscardableAttrDictionary());
      rewriter.replaceOp(sum, reshape.getResult());
    }
    rewriter.eraseOp(split);
    if (transpose)
      rewriter.eraseOp(transpose);
    rewriter.eraseOp(mm);
    return success();
  }
};

} // namespace

void FoldBroadcastsIntoMatMulPass::runOnOperation() {
  Absorbed absorbed;
  ForwardViews views(getOperation());
  RewritePatternSet patterns(&getContext());
  patterns.add<FoldSharedRhs>(&getContext(), absorbed, views);
  patterns.add<FoldGroupSum>(&getContext());
  populateTransposeBetweenLeadingReshapes(patterns);
  if (failed(foldAndRetag(getOperation(), std::move(patterns), absorbed)))
    signalPassFailure();
}
