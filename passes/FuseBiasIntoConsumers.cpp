//===- FuseBiasIntoConsumers.cpp - A Linear bias into its GELU --*- C++ -*-===//
//
// pd-fuse-bias-into-consumers: a transformer MLP's up projection is
//
//   %z = pd.matmul %x, %w, %b {transpose_rhs}   (pd-fuse-matmul-bias)
//   %h = pd.gelu %z
//
// whose kernel first fills the whole product with the bias rows (one
// pass over a 4h-wide activation, 16 MiB per microbatch in the large
// benchmark GPT) for the GEMM to add into. The GELU reads every element
// of z anyway: this pass moves the bias into it (pd.gelu %z, %b computes
// gelu(z + b) in its pass), so the GEMM writes its product once, and the
// GELU's gradient recomputes z + b as it recomputes gelu'(z). The bias
// gradient becomes the GELU gradient's column sums, which
// pd-fuse-bias-gradients computes in the same pass. The matmul and any
// reshapes between the two (which must keep the last dimension, the one
// the bias runs along) must have no other user. Runs before pd-autodiff.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_FUSEBIASINTOCONSUMERSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct FuseBiasIntoConsumersPass
    : public mlir::pd::impl::FuseBiasIntoConsumersPassBase<
          FuseBiasIntoConsumersPass> {
  using FuseBiasIntoConsumersPassBase::FuseBiasIntoConsumersPassBase;
  void runOnOperation() override;
};

int64_t lastDim(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return type.getRank() ? type.getShape().back() : -1;
}

/// The matmul with a bias that `v` is, directly or through single-use
/// reshapes keeping the last dimension, and that only `v`'s chain reads.
MatMulOp biasedProducer(Value v) {
  int64_t n = lastDim(v);
  while (auto view = v.getDefiningOp<ReshapeOp>()) {
    if (!view->hasOneUse() || lastDim(view.getInput()) != n)
      return {};
    v = view.getInput();
  }
  auto mm = v.getDefiningOp<MatMulOp>();
  if (!mm || !mm.getBias() || !mm->hasOneUse() || lastDim(mm) != n)
    return {};
  return mm;
}

} // namespace

void FuseBiasIntoConsumersPass::runOnOperation() {
  getOperation().walk([](GeluOp gelu) {
    if (gelu.getBias() || !gelu.getInput().hasOneUse())
      return;
    MatMulOp mm = biasedProducer(gelu.getInput());
    if (!mm)
      return;
    gelu.getBiasMutable().assign(mm.getBias());
    mm.getBiasMutable().clear();
  });
}
