//===- AccumulateInPlace.cpp - Weight gradients into accumulators -*- C++ -*-=//
//
// pd-accumulate-in-place: a matmul (without a bias) or a gather_grad whose
// only use is a parameter's pd.accumulate_grad accumulates into its output
// (pd.accumulate: C += A B, or the embedding rows added to what the output
// holds), so that pd-allocate-buffers can home it in the gradient
// accumulator (AccumulateGradOp::getInPlaceProducer).
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
    if (Operation *producer = acc.getInPlaceProducer())
      accumulate.setAttr(producer, UnitAttr::get(&getContext()));
  });
}
