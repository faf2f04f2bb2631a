//===- FuseResidualLayerNorm.cpp - Residual add + norm ----------*- C++ -*-===//
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
// Llama's blocks (pd.rms_norm after the add) likewise become
// pd.add_rms_norm, whose gradient is one pd.rms_norm_grad with the
// residual's gradient as its addend.
// Only same-shape adds fuse (no broadcast); the sum keeps its other users.
// Runs before pd-autodiff. Exact: the same float operations in the same
// order.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
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

/// Collects into `moveUp` (operands first) the ops between `add` and
/// `norm` that compute `v`, if none of them reads the sum or has a side
/// effect; false otherwise.
bool collectParamComputation(Value v, AddOp add, Operation *norm,
                             SmallVectorImpl<Operation *> &moveUp) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != add->getBlock() ||
      llvm::is_contained(moveUp, def) || !isBetween(def, add, norm))
    return true;
  if (!isMemoryEffectFree(def) && def->getNumOperands() != 0)
    return false;
  for (Value operand : def->getOperands())
    if (operand == add.getResult() ||
        !collectParamComputation(operand, add, norm, moveUp))
      return false;
  moveUp.push_back(def);
  return true;
}

/// The add whose sum `norm` normalizes when a, b and the sum are of one
/// type, with the norm's parameter operands moved before it: they are
/// often parameter reads placed next to the norm, after the add, or
/// computed from such reads there (Gemma's RMS norm scales by 1 + w);
/// those computations move up, anything that reads the sum keeps the two
/// apart (null then). Found by walking from the add to the norm (a few
/// ops apart), not with isBeforeInBlock: every rewrite renumbers the
/// block, so that made the pass quadratic in the depth.
AddOp matchResidualAdd(Operation *norm, Value input, ValueRange params,
                       PatternRewriter &rewriter) {
  auto add = input.getDefiningOp<AddOp>();
  if (!add || add.getLhs().getType() != add.getType() ||
      add.getRhs().getType() != add.getType())
    return {};
  SmallVector<Operation *> moveUp;
  for (Value v : params)
    if (!collectParamComputation(v, add, norm, moveUp))
      return {};
  for (Operation *def : moveUp)
    rewriter.moveOpBefore(def, add);
  return add;
}

/// Rewrites layer_norm(add(a, b)) with a, b and the sum of one type to
/// pd.add_layer_norm, anchored on the layer norm.
struct FuseAddIntoLayerNorm : public OpRewritePattern<LayerNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerNormOp norm,
                                PatternRewriter &rewriter) const override {
    AddOp add = matchResidualAdd(norm, norm.getInput(),
                                 {norm.getScale(), norm.getBias()}, rewriter);
    if (!add)
      return rewriter.notifyMatchFailure(norm, "no same-shape add before it");
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

/// Rewrites rms_norm(add(a, b)) likewise to pd.add_rms_norm.
struct FuseAddIntoRMSNorm : public OpRewritePattern<RMSNormOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RMSNormOp norm,
                                PatternRewriter &rewriter) const override {
    AddOp add =
        matchResidualAdd(norm, norm.getInput(), {norm.getScale()}, rewriter);
    if (!add)
      return rewriter.notifyMatchFailure(norm, "no same-shape add before it");
    rewriter.setInsertionPoint(add);
    auto fused = rewriter.create<AddRMSNormOp>(
        add.getLoc(), TypeRange{add.getType(), norm.getType()}, add.getLhs(),
        add.getRhs(), norm.getScale(), norm.getAxisAttr(),
        norm.getEpsilonAttr());
    rewriter.replaceOp(norm, fused.getResult());
    rewriter.replaceOp(add, fused.getSum());
    return success();
  }
};

} // namespace

void FuseResidualLayerNormPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<FuseAddIntoLayerNorm, FuseAddIntoRMSNorm>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
