//===- FuseResidualLayerNorm.cpp - Residual add + layer norm -----*- C++ -*-===//
//
// pd-fuse-residual-layer-norm: a pre-LN transformer block ends with
//
//   %s = pd.add %x, %branch          the residual stream
//   %n = pd.layer_norm %s, %g, %b    the next block's (or the final) norm
//
// two passes over the activations forward (the sum written, then read
// again for its statistics) and, through autodiff, an extra addition
// backward (the residual's gradient plus the norm's input gradient). This
// pass forms one pd.add_layer_norm with both results, whose kernel adds
// and normalizes a row while it is in cache, and whose gradient is one
// pd.layer_norm_grad that adds the residual's gradient as it writes dx.
// Only same-shape adds fuse (no broadcast); the sum keeps its other users.
// Runs before pd-autodiff. Exact: the same float operations in the same
// order.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSERESIDUALLAYERNORMPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseResidualLayerNormPass
    : public mlir::pd::impl::FuseResidualLayerNormPassBase<
          FuseResidualLayerNormPass> {
  using FuseResidualLayerNormPassBase::FuseResidualLayerNormPassBase;
  void runOnOperation() override;
};

/// True if `op` comes after `first` and before `last` in their block.
bool isBetween(Operation *op, Operation *first, Operation *last) {
  for (Operation *it = first->getNextNode(); it && it != last;
       it = it->getNextNode())
    if (it == op)
      return true;
  return false;
}

/// Rewrites layer_norm(add(a, b)) with a, b and the sum of one type to
/// pd.add_layer_norm, anchored on the layer norm.
struct FuseAddIntoLayerNorm : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp norm,
                                PatternRewriter &rewriter) const override {
    auto add = norm.getInput().getDefiningOp<AddOp>();
    if (!add || add.getLhs().getType() != add.getType() ||
        add.getRhs().getType() != add.getType())
      return rewriter.notifyMatchFailure(norm, "input is not a same-shape add");
    // The norm's scale and bias are often parameter reads placed next to
    // the norm, after the add: reads (ops without operands) move up before
    // the add; anything else computed after it keeps the two apart.
    // Found by walking from the add to the norm (a few ops apart), not with
    // isBeforeInBlock: every rewrite renumbers the block, so that made the
    // pass quadratic in the model's depth.
    SmallVector<Operation *> moveUp;
    for (Value v : {norm.getScale(), norm.getBias()}) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != add->getBlock() ||
          !isBetween(def, add, norm))
        continue;
      if (def->getNumOperands() != 0)
        return rewriter.notifyMatchFailure(norm, "scale or bias computed later");
      moveUp.push_back(def);
    }
    for (Operation *def : moveUp)
      rewriter.moveOpBefore(def, add);
    rewriter.setInsertionPoint(add);
    auto fused = rewriter.create<AddLayerNormOp>(
        add.getLoc(), TypeRange{add.getType(), norm.getType()}, add.getLhs(),
        add.getRhs(), norm.getScale(), norm.getBias(), /*rhs_bias=*/Value(),
        norm.getAxisAttr(), norm.getEpsilonAttr());
    rewriter.replaceOp(norm, fused.getResult());
    rewriter.replaceOp(add, fused.getSum());
    return success();
  }
};

} // namespace

void FuseResidualLayerNormPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<FuseAddIntoLayerNorm>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
