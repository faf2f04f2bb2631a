//===- FuseBiasGradients.cpp - Bias gradients with the op before --*- C++ -*-===//
//
// pd-fuse-bias-gradients: a bias added before an op has as gradient that
// op's input gradient summed over the rows. The MLP's up projection adds
// its bias before the GELU:
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
// Likewise the attention output and MLP down projections' biases, moved
// into the residual add + layer norm (pd-fuse-bias-into-consumers): their
// gradient is the pd.layer_norm_grad's input_grad summed, which the
// fused layer_norm_grad returns as its input_grad_sum.
//
// Bit for bit the unfused results. Looks through reshapes that keep the
// last dimension. Runs twice. With same-forward-op, last in the autodiff
// phase on the differentiated @main, it fuses the pairs whose ops
// differentiate one forward op (equal pd.grad_of: a bias that
// pd-fuse-bias-into-consumers moved into the GELU or the residual norm),
// which partitioning keeps on one stage: the planner then prices, and the
// profiling stage times, the fused op the stages run. Without it, first
// in the buffers phase on the outlined stage functions, it fuses the pairs
// that differentiate different forward ops (the GELU, and a matmul that
// kept its bias), which only a stage known to hold both can fuse.
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

/// A copy of `grad` (same operands and attributes) with `sum`'s result
/// as its optional last result.
template <typename GradOp>
Operation *cloneWithSum(OpBuilder &b, SumToOp sum, GradOp grad) {
  SmallVector<Type> types(grad->getResultTypes());
  types.push_back(sum.getType());
  return b.create<GradOp>(grad.getLoc(), types, grad->getOperands(),
                          grad->getAttrs());
}

void fuse(SumToOp sum, Operation *grad) {
  OpBuilder b(grad);
  Operation *fused = isa<GeluGradOp>(grad)
                         ? cloneWithSum(b, sum, cast<GeluGradOp>(grad))
                         : cloneWithSum(b, sum, cast<LayerNormGradOp>(grad));
  fused->setDiscardableAttrs(grad->getDiscardableAttrDictionary());
  // Measured costs add up where the profile measured both; otherwise the
  // fused op is priced by its own FLOPs and bytes (as the stage model does).
  PDDialect::SecondsAttrHelper seconds(grad->getContext());
  FloatAttr a = seconds.getAttr(grad), c = seconds.getAttr(sum);
  if (a && c)
    seconds.setAttr(fused, b.getF64FloatAttr(a.getValueAsDouble() +
                                             c.getValueAsDouble()));
  else
    seconds.removeAttr(fused);
  for (auto [from, to] : llvm::zip(grad->getResults(), fused->getResults()))
    from.replaceAllUsesWith(to);
  sum.getResult().replaceAllUsesWith(fused->getResults().back());
  Value in = sum.getInput();
  sum.erase();
  // The reshapes only the sum read.
  while (auto view = in.getDefiningOp<ReshapeOp>()) {
    if (!view->use_empty())
      break;
    in = view.getInput();
    view.erase();
  }
  grad->erase();
}

/// Whether both ops differentiate the same forward op (or neither is
/// tagged).
bool differentiateOneForwardOp(Operation *a, Operation *b) {
  return getContractInt<PDDialect::GradOfAttrHelper>(a) ==
         getContractInt<PDDialect::GradOfAttrHelper>(b);
}

} // namespace

void FuseBiasGradientsPass::runOnOperation() {
  SmallVector<SumToOp> sums;
  getOperation().walk([&](SumToOp sum) { sums.push_back(sum); });
  for (SumToOp sum : sums)
    if (Operation *grad = sum.getSummedProducer())
      if (!sameForwardOp || differentiateOneForwardOp(sum, grad))
        fuse(sum, grad);
}
