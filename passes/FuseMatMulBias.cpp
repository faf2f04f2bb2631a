//===- FuseMatMulBias.cpp - A Linear layer's bias into its matmul -*- C++ -*-===//
//
// pd-fuse-matmul-bias: a Linear layer imports as a matmul, often a reshape
// back to [batch, seq, N], and an add of the bias [N] broadcast over the
// rows: a second pass over the whole output. This pass moves the bias into
// the matmul (pd.matmul's optional `bias`), whose kernel starts the product
// from the bias rows, so the output is written once:
//
//   %p = pd.matmul %x, %w {transpose_rhs} : 32x64, 192x64 -> 32x192
//   %r = pd.reshape %p : 32x192 -> 2x16x192
//   %y = pd.add %b, %r : 192, 2x16x192 -> 2x16x192
// becomes
//   %p = pd.matmul %x, %w, %b {transpose_rhs} : 32x64, 192x64, 192 -> 32x192
//   %y = pd.reshape %p : 32x192 -> 2x16x192
//
// The matmul's gradient then sums dC over rows for the bias, as the add's
// did. Runs before pd-autodiff.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEMATMULBIASPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseMatMulBiasPass
    : public mlir::pd::impl::FuseMatMulBiasPassBase<FuseMatMulBiasPass> {
  using FuseMatMulBiasPassBase::FuseMatMulBiasPassBase;
  void runOnOperation() override;
};

/// The bias-free matmul computing `v`, directly or through a reshape that
/// keeps the row length, when nothing else reads it.
MatMulOp matmulBehind(Value v, ReshapeOp &reshape) {
  reshape = v.getDefiningOp<ReshapeOp>();
  if (reshape) {
    if (!reshape->hasOneUse())
      return {};
    auto from = cast<RankedTensorType>(reshape.getInput().getType());
    auto to = cast<RankedTensorType>(reshape.getType());
    if (to.getRank() < 1 || from.getShape().back() != to.getShape().back())
      return {};
    v = reshape.getInput();
  }
  auto mm = v.getDefiningOp<MatMulOp>();
  if (!mm || mm.getBias() || !mm->hasOneUse())
    return {};
  return mm;
}

/// Rewrites add(bias, [reshape] matmul) to a matmul with the bias,
/// anchored on the add.
struct FoldBiasIntoMatMul : public OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [bias, product] : {std::pair(add.getLhs(), add.getRhs()),
                                 std::pair(add.getRhs(), add.getLhs())}) {
      auto biasType = cast<RankedTensorType>(bias.getType());
      if (product.getType() != add.getType() || biasType.getRank() != 1)
        continue;
      ReshapeOp reshape;
      MatMulOp mm = matmulBehind(product, reshape);
      if (!mm || mm.getType().getDimSize(1) != biasType.getDimSize(0))
        continue;
      auto fused = rewriter.create<MatMulOp>(
          mm.getLoc(), mm.getType(), mm.getLhs(), mm.getRhs(), bias,
          mm.getTransposeLhsAttr(), mm.getTransposeRhsAttr(),
          mm.getAlphaAttr());
      Value result = fused.getResult();
      if (reshape)
        result = rewriter.create<ReshapeOp>(reshape.getLoc(), add.getType(),
                                            result);
      rewriter.replaceOp(add, result);
      return success();
    }
    return rewriter.notifyMatchFailure(add, "not a bias added to a matmul");
  }
};

} // namespace

void FuseMatMulBiasPass::runOnOperation() {
  RewritePatternSet patterns(&getContext());
  patterns.add<FoldBiasIntoMatMul>(&getContext());
  GreedyRewriteConfig config;
  config.enableRegionSimplification = GreedySimplifyRegionLevel::Disabled;
  if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns),
                                          config)))
    signalPassFailure();
}
