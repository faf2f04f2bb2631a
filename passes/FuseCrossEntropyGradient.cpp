//===- FuseCrossEntropyGradient.cpp - The loss and its gradient at once -*- C++ -*-===//
//
// pd-fuse-cross-entropy-gradient: when the objective is a mean softmax
// cross-entropy, the backward starts from its seeded gradient:
//
//   %l = pd.softmax_cross_entropy %z, %y                (forward)
//   ...
//   %s = pd.grad_seed
//   %dz = pd.softmax_cross_entropy_grad %s, %z, %y      (backward)
//
// Both read all N x C logits and exponentiate each: the forward for the
// log-sum-exp, the backward for the softmax (4096 classes per row in a
// GPT's LM head). The seed is a runtime constant, known before the forward
// runs, so the gradient can come with the loss:
//
//   %l, %dz = pd.softmax_cross_entropy_with_grad %z, %y
//
// one exponential per element instead of two, and the backward no longer
// reads the logits: the stash holds %dz in place of %z (the same size).
// The fused kernel's results are the unfused kernels' bit for bit. The
// fused op is a forward op (the loss's op id, no pd.grad_of). Runs after
// pd-autodiff; a loss whose gradient is not the seed itself (a weighted
// sum of losses, reduction "none") is left alone.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSECROSSENTROPYGRADIENTPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseCrossEntropyGradientPass
    : public mlir::pd::impl::FuseCrossEntropyGradientPassBase<
          FuseCrossEntropyGradientPass> {
  using FuseCrossEntropyGradientPassBase::FuseCrossEntropyGradientPassBase;
  void runOnOperation() override;
};

/// The mean loss whose seeded gradient `grad` is, or null.
SoftmaxCrossEntropyLossOp seededLossOf(SoftmaxCrossEntropyLossGradOp grad) {
  if (!grad.getGrad().getDefiningOp<GradSeedOp>())
    return {};
  for (Operation *user : grad.getLogits().getUsers()) {
    auto loss = dyn_cast<SoftmaxCrossEntropyLossOp>(user);
    if (loss && loss.getLabels() == grad.getLabels() &&
        loss.getIgnoreIndex() == grad.getIgnoreIndex() &&
        loss.getType().getRank() == 0 &&
        loss.getType() == grad.getGrad().getType())
      return loss;
  }
  return {};
}

void fuse(SoftmaxCrossEntropyLossGradOp grad, SoftmaxCrossEntropyLossOp loss) {
  OpBuilder b(loss);
  auto fused = b.create<SoftmaxCrossEntropyWithGradOp>(
      loss.getLoc(), loss.getType(), grad.getType(), loss.getLogits(),
      loss.getLabels(), loss.getIgnoreIndexAttr());
  // The loss's op id and placement contract; not the gradient's tag.
  fused->setDiscardableAttrs(loss->getDiscardableAttrDictionary());
  loss.replaceAllUsesWith(fused.getLoss());
  grad.replaceAllUsesWith(fused.getDlogits());
  Operation *seed = grad.getGrad().getDefiningOp();
  grad.erase();
  loss.erase();
  if (seed->use_empty())
    seed->erase();
}

} // namespace

void FuseCrossEntropyGradientPass::runOnOperation() {
  SmallVector<SoftmaxCrossEntropyLossGradOp> grads;
  getOperation().walk(
      [&](SoftmaxCrossEntropyLossGradOp grad) { grads.push_back(grad); });
  for (SoftmaxCrossEntropyLossGradOp grad : grads)
    if (SoftmaxCrossEntropyLossOp loss = seededLossOf(grad))
      fuse(grad, loss);
}
