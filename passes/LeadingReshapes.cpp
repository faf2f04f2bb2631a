//===- LeadingReshapes.cpp - Transposes between reshapes --------*- C++ -*-===//

#include "passes/LeadingReshapes.h"
#include "dialects/PD/IR/PDOps.h"

using namespace mlir;
using namespace mlir::pd;

namespace {

/// reshape(transpose(reshape(x), p), s) where the inner reshape merges
/// x's first k + 1 dims into one, p keeps that dim first, and the outer
/// reshape splits it into the same dims again: transpose(x, p') with the
/// merged dims in front, unmoved.
struct TransposeBetweenLeadingReshapes : public OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReshapeOp split,
                                PatternRewriter &rewriter) const override {
    auto transpose = split.getInput().getDefiningOp<TransposeOp>();
    auto merge = transpose ? transpose.getInput().getDefiningOp<ReshapeOp>()
                           : ReshapeOp();
    if (!merge || !transpose->hasOneUse())
      return rewriter.notifyMatchFailure(split, "no transpose of a reshape");
    ArrayRef<int64_t> x = shapeOf(merge.getInput()), merged = shapeOf(merge),
                      moved = shapeOf(transpose), out = shapeOf(split);
    ArrayRef<int64_t> perm = transpose.getPerm();
    int64_t k = (int64_t)x.size() - (int64_t)merged.size();
    if (k < 1 || perm.empty() || perm[0] != 0 ||
        out.size() != moved.size() + k ||
        x.drop_front(k + 1) != merged.drop_front() ||
        out.take_front(k + 1) != x.take_front(k + 1) ||
        out.drop_front(k + 1) != moved.drop_front())
      return rewriter.notifyMatchFailure(split, "not the leading dims");
    SmallVector<int64_t> full;
    for (int64_t i = 0; i <= k; ++i)
      full.push_back(i);
    for (int64_t d : perm.drop_front())
      full.push_back(d + k);
    auto unfolded = rewriter.create<TransposeOp>(
        transpose.getLoc(), split.getType(), merge.getInput(),
        rewriter.getDenseI64ArrayAttr(full));
    unfolded->setDiscardableAttrs(transpose->getDiscardableAttrDictionary());
    rewriter.replaceOp(split, unfolded.getResult());
    rewriter.eraseOp(transpose);
    if (merge->use_empty())
      rewriter.eraseOp(merge);
    return success();
  }
};

} // namespace

void mlir::pd::populateTransposeBetweenLeadingReshapes(
    RewritePatternSet &patterns) {
  patterns.add<TransposeBetweenLeadingReshapes>(patterns.getContext());
}
