//===- Phases.cpp - Running pdc's phases on a module ----------------------===//
//
// Autodiff in one pass manager; then, with the plan search's cuts and
// recomputing stages, stages and buffers in a second.
//
//===----------------------------------------------------------------------===//

#include "Phases.h"
#include "mlir/Pass/PassManager.h"
#include "pd/Pipeline/Pipeline.h"

using namespace mlir;
using namespace mlir::pd;

/// A pass manager with the verifier on, its passes timed under `timing`
/// and, with `commandLine`, the pass-manager flags of the command line
/// applied (--mlir-print-ir-after-all, --mlir-pass-statistics, ...).
static LogicalResult configure(PassManager &pm, bool commandLine,
                               TimingScope &timing) {
  pm.enableVerifier(true);
  pm.enableTiming(timing);
  if (!commandLine)
    return success();
  return applyPassManagerCLOptions(pm);
}

LogicalResult mlir::pd::runAutodiff(ModuleOp module, bool commandLine,
                                    TimingScope timing,
                                    ArrayRef<MatMulRowSplit> splits) {
  PassManager pm(module.getContext());
  if (failed(configure(pm, commandLine, timing)))
    return failure();
  addAutodiffPhase(pm, splits);
  return pm.run(module);
}

LogicalResult mlir::pd::runStagePhases(ModuleOp module,
                                       const CompilerOptions &o,
                                       ArrayRef<int64_t> cuts,
                                       ArrayRef<int64_t> recomputeStages,
                                       EmitKind emit, TimingScope timing,
                                       bool profileMarks) {
  TrainingPipelineOptions phases;
  phases.stages = o.stages;
  phases.microbatches = o.microbatches;
  phases.schedule = o.schedule;
  phases.optimizer = o.optimizer;
  phases.recomputeStages.assign(recomputeStages.begin(), recomputeStages.end());
  phases.stageCuts.assign(cuts.begin(), cuts.end());
  phases.profileMarks = profileMarks;
  PassManager pm(module.getContext());
  if (failed(configure(pm, /*commandLine=*/true, timing)))
    return failure();
  addStagesPhase(pm, phases);
  if (emit != EmitKind::MLIRStages)
    addBuffersPhase(pm, phases);
  return pm.run(module);
}
