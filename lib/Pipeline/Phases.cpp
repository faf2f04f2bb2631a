//===- Phases.cpp - Running pdc's phases on a module ----------------------===//
//
// Autodiff in one pass manager; then the planner reads the differentiated
// function and chooses the cuts, and stages and buffers run in a second.
// A planned split whose schedule would deadlock falls back to FLOP balance.
//
//===----------------------------------------------------------------------===//

#include "Phases.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "pd/Codegen/StageInfo.h"
#include "pd/Pipeline/Pipeline.h"
#include "pd/Planner/Partition.h"
#include "pd/Planner/Planner.h"

using namespace mlir;
using namespace mlir::pd;

/// A pass manager with the verifier on and, for the run whose output
/// --emit prints, the pass-manager flags of the command line applied
/// (--mlir-print-ir-after-all, --mlir-timing, ...).
static LogicalResult configure(PassManager &pm, bool applyCommandLine) {
  pm.enableVerifier(true);
  if (!applyCommandLine)
    return success();
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  applyDefaultTimingPassManagerCLOptions(pm);
  return success();
}

/// The planner's cuts of the differentiated @main into o.stages stages.
static std::vector<int64_t> planStageCuts(ModuleOp module,
                                          const CompilerOptions &o) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || o.stages <= 1)
    return {};
  DeviceSpec spec = cantFail(loadDeviceSpec(o.deviceSpec));
  return splitOpChain(buildOpChain(main, spec), o.stages, spec, o.replicas);
}

/// Whether the plan of a buffer-assigned module simulates without a
/// deadlock or a stash overflow.
static bool simulatesCleanly(ModuleOp module, const CompilerOptions &o) {
  DeviceSpec spec = cantFail(loadDeviceSpec(o.deviceSpec));
  FailureOr<SimInput> input = buildSimInput(module, o, spec);
  if (failed(input))
    return false;
  SimResult r = simulatePipeline(*input);
  return r.deadlock.empty() && r.stashOverflow.empty();
}

/// The planner's split, unless the plan it leads to would deadlock (a
/// value skipping stages whose receiver is held by a tied parameter's
/// update, with sends too large to go eagerly): then none, and
/// pd-partition-stages balances FLOPs.
static FailureOr<std::vector<int64_t>>
chooseStageCuts(ModuleOp differentiated, const CompilerOptions &o,
                const TrainingPipelineOptions &phases) {
  std::vector<int64_t> cuts = planStageCuts(differentiated, o);
  if (cuts.empty())
    return cuts;
  OwningOpRef<ModuleOp> trial = differentiated.clone();
  TrainingPipelineOptions withCuts = phases;
  withCuts.stageCuts = cuts;
  PassManager pm(differentiated.getContext());
  addStagesPhase(pm, withCuts);
  addBuffersPhase(pm, withCuts);
  if (failed(pm.run(*trial)))
    return failure();
  if (!simulatesCleanly(*trial, o))
    cuts.clear();
  return cuts;
}

/// Runs the phases up to `emit`'s: autodiff; then, with the planner's split
/// of the differentiated function, stages and buffers.
LogicalResult mlir::pd::runPhases(ModuleOp module, const CompilerOptions &o,
                                  ArrayRef<int64_t> recomputeStages,
                                  EmitKind emit) {
  PassManager grad(module.getContext());
  if (failed(configure(grad, emit == o.emit)))
    return failure();
  addAutodiffPhase(grad);
  if (failed(grad.run(module)))
    return failure();
  if (emit == EmitKind::MLIRGrad)
    return success();
  TrainingPipelineOptions phases;
  phases.stages = o.stages;
  phases.microbatches = o.microbatches;
  phases.schedule = o.schedule;
  phases.optimizer = o.optimizer;
  phases.recomputeStages.assign(recomputeStages.begin(), recomputeStages.end());
  FailureOr<std::vector<int64_t>> cuts = chooseStageCuts(module, o, phases);
  if (failed(cuts))
    return failure();
  phases.stageCuts = *cuts;
  PassManager pm(module.getContext());
  if (failed(configure(pm, emit == o.emit)))
    return failure();
  addStagesPhase(pm, phases);
  if (emit != EmitKind::MLIRStages)
    addBuffersPhase(pm, phases);
  return pm.run(module);
}

/// The stages that recompute their activations: none, all, or (auto) those
/// whose plan without recomputation needs more than the device's memory
/// (--device-memory, else the device spec's), found by planning a copy of
/// the module without recomputation.
FailureOr<std::vector<int64_t>>
mlir::pd::chooseRecomputeStages(ModuleOp module, const CompilerOptions &o) {
  std::vector<int64_t> stages;
  if (o.recompute == Recompute::Full)
    for (int64_t s = 0; s < o.stages; ++s)
      stages.push_back(s);
  if (o.recompute != Recompute::Auto)
    return stages;
  OwningOpRef<ModuleOp> trial = module.clone();
  if (failed(runPhases(*trial, o, {}, EmitKind::MLIRBuffers)))
    return failure();
  int64_t budget = o.deviceMemory;
  if (budget <= 0)
    budget = cantFail(loadDeviceSpec(o.deviceSpec)).memoryBytes;
  for (int64_t s = 0; s < o.stages; ++s) {
    FailureOr<StageInfo> info = collectStageInfo(*trial, s);
    if (failed(info))
      return failure();
    if (info->regions.total() > budget)
      stages.push_back(s);
  }
  return stages;
}

