//===- AccumulateInPlace.cpp - Weight gradients into accumulators -*- C++ -*-=//
//
// pd-accumulate-in-place: a matmul whose only use is a parameter's
// pd.accumulate_grad accumulates into its output (pd.accumulate, C += A B),
// so that pd-allocate-buffers can home it in the gradient accumulator.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_ACCUMULATEINPLACEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct AccumulateInPlacePass
    : public mlir::pd::impl::AccumulateInPlacePassBase<AccumulateInPlacePass> {
  using AccumulateInPlacePassBase::AccumulateInPlacePassBase;
  void runOnOperation() override;
};

} // namespace

void AccumulateInPlacePass::runOnOperation() {
  PDDialect::AccumulateAttrHelper accumulate(&getContext());
  getOperation().walk([&](AccumulateGradOp acc) {
    auto matmul = acc.getGrad().getDefiningOp<MatMulOp>();
    if (matmul && matmul->hasOneUse() && !matmul.getBias())
      accumulate.setAttr(matmul, UnitAttr::get(&getContext()));
  });
}
