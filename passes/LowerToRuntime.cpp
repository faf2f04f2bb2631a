//===- LowerToRuntime.cpp - Stage functions to pdrt_* calls -----*- C++ -*-===//
//
// pd-lower-to-runtime: the last pd pass before LLVM IR. The forward and
// backward functions of one buffer-assigned stage are converted, with
// applyFullConversion, into `llvm.func @pd_stage_forward|backward` whose
// every op is a call of its runtime kernel (runtime/include/pdrt/pdrt.h)
// on pointers computed from the region bases the runtime passes in and the
// values' #pd.buffer. The patterns live in one file per op family
// (RuntimeLowering.h); the other stages' functions are dropped first.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "passes/Passes.h"
#include "passes/RuntimeLowering.h"

namespace mlir::pd {
#define GEN_PASS_DEF_LOWERTORUNTIMEPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct LowerToRuntimePass
    : public mlir::pd::impl::LowerToRuntimePassBase<LowerToRuntimePass> {
  using LowerToRuntimePassBase::LowerToRuntimePassBase;
  void runOnOperation() override;
};

} // namespace

/// The lowering's precondition: every value of `fn` (but constants, which
/// become read-only data) has a buffer.
static LogicalResult checkBuffers(func::FuncOp fn) {
  for (BlockArgument arg : fn.getArguments())
    if (!getBuffer(arg))
      return fn.emitError("pd-lower-to-runtime: argument ")
             << arg.getArgNumber()
             << " has no buffer; run pd-allocate-buffers first";
  WalkResult walk = fn.walk([](Operation *op) {
    if (isa<ConstantOp>(op))
      return WalkResult::advance();
    for (Value result : op->getResults())
      if (!getBuffer(result)) {
        op->emitError("pd-lower-to-runtime: result has no buffer; run "
                      "pd-allocate-buffers first");
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

void LowerToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  func::FuncOp fwd = lookupStageFunction(module, stage, Phase::Forward);
  func::FuncOp bwd = lookupStageFunction(module, stage, Phase::Backward);
  if (!fwd || !bwd) {
    module.emitError("pd-lower-to-runtime: no functions of stage ")
        << int64_t(stage);
    return signalPassFailure();
  }
  if (failed(checkBuffers(fwd)) || failed(checkBuffers(bwd)))
    return signalPassFailure();
  // Only this stage's functions become code.
  for (auto fn : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
    if (fn != fwd && fn != bwd)
      fn.erase();

  MLIRContext *context = &getContext();
  std::unique_ptr<RuntimeTarget> target = createCpuRuntimeTarget();
  StageLowering lowering{*target,
                         PDDialect::StateAttrHelper(context).getAttr(fwd),
                         declareRuntimeFunctions(module, *target)};
  RuntimeTypeConverter converter(context);
  RewritePatternSet set(context);
  RuntimePatterns patterns(set, converter, lowering);
  populateStageRuntimePatterns(patterns);
  populateNNRuntimePatterns(patterns);
  populateTensorRuntimePatterns(patterns);
  populateConvRuntimePatterns(patterns);

  ConversionTarget legal(*context);
  legal.addLegalDialect<LLVM::LLVMDialect>();
  legal.addLegalOp<ModuleOp>();
  legal.addIllegalDialect<PDDialect, func::FuncDialect>();
  if (failed(applyFullConversion(module, legal, std::move(set))))
    return signalPassFailure();
  eraseUncalledDeclarations(module, lowering.runtimeDecls);
}
