//===- FuseBiasGradients.cpp - Bias gradients with the GELU's -----*- C++ -*-===//
//
// pd-fuse-bias-gradients: the MLP's up projection adds a bias before its
// GELU, so the bias gradient is the GELU gradient summed over the rows:
//
//   %dh = pd.gelu_grad %dg, %h : tensor<8x128x1024xf32>
//   %v = pd.reshape %dh : tensor<8x128x1024xf32> -> tensor<1024x1024xf32>
//   %db = pd.sum_to %v : tensor<1024x1024xf32> -> tensor<1024xf32>
//
// The sum reads all of dh back from memory (4 MiB per microbatch of the
// small benchmark GPT) after the GELU gradient wrote it; the fused form
// adds each row into db while it is still in cache:
//
//   %dh, %db = pd.gelu_grad %dg, %h : tensor<8x128x1024xf32> -> tensor<1024xf32>
//
// Bit for bit the unfused results. Runs on the outlined stage functions
// (first in the buffers phase), so that both ops are known to be on the
// same stage: before partitioning they differentiate different forward
// ops (the GELU, the matmul with the bias), which a stage cut may
// separate. Looks through reshapes that keep the last dimension.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEBIASGRADIENTSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseBiasGradientsPass
    : public mlir::pd::impl::FuseBiasGradientsPassBase<FuseBiasGradientsPass> {
  using FuseBiasGradientsPassBase::FuseBiasGradientsPassBase;
  void runOnOperation() override;
};

void fuse(SumToOp sum, GeluGradOp grad) {
  OpBuilder b(grad);
  auto fused = b.create<GeluGradOp>(grad.getLoc(), grad.getResult().getType(),
                                    sum.getType(), grad.getGrad(),
                                    grad.getInput(), grad.getInputBias(),
                                    grad.getApproximateAttr());
  fused->setDiscardableAttrs(grad->getDiscardableAttrDictionary());
  // Measured costs add up where the profile measured both; otherwise the
  // fused op is priced by its own FLOPs and bytes (as the stage model does).
  PDDialect::SecondsAttrHelper seconds(grad.getContext());
  FloatAttr a = seconds.getAttr(grad), c = seconds.getAttr(sum);
  if (a && c)
    seconds.setAttr(fused, b.getF64FloatAttr(a.getValueAsDouble() +
                                             c.getValueAsDouble()));
  else
    seconds.removeAttr(fused);
  grad.getResult().replaceAllUsesWith(fused.getResult());
  sum.getResult().replaceAllUsesWith(fused.getBiasGrad());
  Value in = sum.getInput();
  sum.erase();
  // The reshapes only the sum read.
  while (auto view = in.getDefiningOp<ReshapeOp>()) {
    if (!view->use_empty())
      break;
    in = view.getInput();
    view.erase();
  }
  grad.erase();
}

} // namespace

void FuseBiasGradientsPass::runOnOperation() {
  SmallVector<SumToOp> sums;
  getOperation().walk([&](SumToOp sum) { sums.push_back(sum); });
  for (SumToOp sum : sums)
    if (GeluGradOp grad = sum.getSummedGeluGrad())
      fuse(sum, grad);
}
