//===- FuseSliceGradients.cpp - Summed slice gradients as a concat -*- C++ -*-===//
//
// pd-fuse-slice-gradients: the gradient of a tensor split into slices (the
// fused qkv projection of attention split into Q, K and V, ONNX Split) is
// the sum of one pd.slice_grad per slice, each a zero tensor of the full
// shape with its slice's gradient placed in it:
//
//   %a = pd.slice_grad %dv {starts = [0, 0, 128]} : 2x16x64 -> 2x16x192
//   %b = pd.slice_grad %dk {starts = [0, 0, 64]}  : 2x16x64 -> 2x16x192
//   %s = pd.add %a, %b
//   %c = pd.slice_grad %dq {starts = [0, 0, 0]}   : 2x16x64 -> 2x16x192
//   %g = pd.add %s, %c
//
// three zero fills, three copies and two full-size additions. When the
// slices tile the tensor along one axis (unit steps, every other axis
// whole, no gap and no overlap) the sum is their concatenation:
//
//   %g = pd.concat %dq, %dk, %dv {axis = 2}
//
// one pass that writes each element once. Exact (x + 0 = x). Runs after
// pd-autodiff; the concat keeps the root addition's pd.grad_of.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSESLICEGRADIENTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseSliceGradientsPass
    : public mlir::pd::impl::FuseSliceGradientsPassBase<
          FuseSliceGradientsPass> {
  using FuseSliceGradientsPassBase::FuseSliceGradientsPassBase;
  void runOnOperation() override;
};

/// The leaves of the addition tree rooted at `root` whose inner additions
/// have no other user; false if a leaf is not a slice_grad.
bool collectSliceGrads(AddOp root, SmallVectorImpl<SliceGradOp> &leaves) {
  for (Value operand : {root.getLhs(), root.getRhs()}) {
    if (operand.getType() != root.getType())
      return false;
    if (auto add = operand.getDefiningOp<AddOp>();
        add && add->hasOneUse()) {
      if (!collectSliceGrads(add, leaves))
        return false;
      continue;
    }
    auto slice = operand.getDefiningOp<SliceGradOp>();
    if (!slice || !slice->hasOneUse())
      return false;
    leaves.push_back(slice);
  }
  return true;
}

/// The axis along which `slices`, sorted by start, tile their result
/// exactly, or -1.
int64_t tilingAxis(SmallVectorImpl<SliceGradOp> &slices) {
  auto full = cast<RankedTensorType>(slices.front().getType()).getShape();
  int64_t axis = -1;
  for (SliceGradOp s : slices) {
    if (!llvm::all_of(s.getSteps(), [](int64_t step) { return step == 1; }))
      return -1;
    auto part = cast<RankedTensorType>(s.getGrad().getType()).getShape();
    for (size_t i = 0; i < full.size(); ++i) {
      if (part[i] == full[i] && s.getStarts()[i] == 0)
        continue;
      if (axis != -1 && axis != (int64_t)i)
        return -1;
      axis = i;
    }
  }
  if (axis == -1)
    return -1;
  llvm::sort(slices, [&](SliceGradOp a, SliceGradOp b) {
    return a.getStarts()[axis] < b.getStarts()[axis];
  });
  int64_t next = 0;
  for (SliceGradOp s : slices) {
    if (s.getStarts()[axis] != next)
      return -1;
    next += cast<RankedTensorType>(s.getGrad().getType()).getDimSize(axis);
  }
  return next == full[axis] ? axis : -1;
}

/// The slice gradients summed by the tree rooted at `root`, sorted, and
/// the axis they tile, if they do.
std::optional<std::pair<SmallVector<SliceGradOp>, int64_t>>
matchTiling(AddOp root) {
  SmallVector<SliceGradOp> slices;
  if (!collectSliceGrads(root, slices) || slices.size() < 2)
    return std::nullopt;
  int64_t axis = tilingAxis(slices);
  if (axis < 0)
    return std::nullopt;
  return std::make_pair(std::move(slices), axis);
}

/// Rewrites a sum of slice gradients that tile their tensor to a concat,
/// anchored on the root addition of the largest such sum.
struct SliceGradSumToConcat : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp root,
                                PatternRewriter &rewriter) const override {
    if (root->hasOneUse())
      if (auto parent = dyn_cast<AddOp>(*root->getUsers().begin());
          parent && matchTiling(parent))
        return rewriter.notifyMatchFailure(root, "part of a larger sum");
    auto tiling = matchTiling(root);
    if (!tiling)
      return rewriter.notifyMatchFailure(root, "not slice_grads tiling an axis");
    auto &[slices, axis] = *tiling;
    SmallVector<Value> parts;
    for (SliceGradOp s : slices)
      parts.push_back(s.getGrad());
    auto concat = rewriter.create<ConcatOp>(root.getLoc(), root.getType(),
                                            parts,
                                            rewriter.getI64IntegerAttr(axis));
    for (NamedAttribute attr : root->getDiscardableAttrs())
      concat->setAttr(attr.getName(), attr.getValue());
    rewriter.replaceOp(root, concat.getResult());
    return success();
  }
};

} // namespace

void FuseSliceGradientsPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<SliceGradSumToConcat>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
