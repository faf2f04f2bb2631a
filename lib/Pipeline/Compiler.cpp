//===- Compiler.cpp - pdc's phases after import -----------------*- C++ -*-===//
//
// runCompiler: resolves the plan's free choices from the options and the
// model, chooses the recomputing stages, runs autodiff, asks the planner
// where to cut, runs stage partitioning, outlining and buffer allocation
// (stopping at --emit's phase), checks memory, simulates the plan, and
// writes the plan directory: one linked executable per stage, plan.json,
// trace.json and `run`.
//
//===----------------------------------------------------------------------===//

#include "pd/Pipeline/Compiler.h"
#include "PlanDirectory.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "pd/Pipeline/Pipeline.h"
#include "pd/Codegen/Codegen.h"
#include "pd/Planner/Partition.h"
#include "pd/Planner/Planner.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::pd;

/// Fills the choices left open (0) from the model and the other options,
/// and rejects combinations that cannot run.
static LogicalResult resolveOptions(ModuleOp module, CompilerOptions &o) {
  Location loc = module.getLoc();
  if (o.target != TargetKind::CPU)
    return emitError(loc, "--target ")
           << stringifyTarget(o.target)
           << " is not supported by this build; use --target cpu";
  if (llvm::Expected<DeviceSpec> spec = loadDeviceSpec(o.deviceSpec); !spec)
    return emitError(loc, llvm::toString(spec.takeError()));
  if (o.replicas == 0)
    o.replicas = (o.devices && o.stages) ? o.devices / o.stages : 1;
  if (o.stages == 0)
    o.stages = o.devices ? std::max<int64_t>(o.devices / o.replicas, 1) : 1;
  if (o.devices && o.devices != o.stages * o.replicas)
    return emitError(loc, "--devices ")
           << o.devices << " is not --stages " << o.stages
           << " x --replicas " << o.replicas;
  if (o.microbatches == 0)
    o.microbatches = o.stages;
  if (o.schedule == Schedule::TwoBW && o.microbatches < o.stages)
    return emitError(loc, "--schedule 2bw needs --microbatches (")
           << o.microbatches << ") >= --stages (" << o.stages << ")";
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.getNumArguments() == 0)
    return emitError(loc, "the model has no graph inputs");
  auto first = cast<RankedTensorType>(main.getArgument(0).getType());
  o.microbatch = first.getRank() > 0 ? first.getDimSize(0) : 1;
  if (o.modelPath.empty())
    if (auto path = module->getAttrOfType<StringAttr>(
            PDDialect::ModelAttrHelper::getNameStr()))
      o.modelPath = path.str();
  return success();
}

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
static LogicalResult runPhases(ModuleOp module, const CompilerOptions &o,
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
static FailureOr<std::vector<int64_t>>
chooseRecomputeStages(ModuleOp module, const CompilerOptions &o) {
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

static LogicalResult checkMemory(ModuleOp module, ArrayRef<StageInfo> stages,
                                 const CompilerOptions &o) {
  if (o.deviceMemory <= 0)
    return success();
  for (const StageInfo &s : stages)
    if (s.regions.total() > o.deviceMemory) {
      InFlightDiagnostic diag = emitError(module.getLoc(), "stage ")
                                << s.stage << " needs " << s.regions.total()
                                << " bytes, more than --device-memory "
                                << o.deviceMemory;
      if (s.recompute)
        diag << " even with recomputation";
      else
        diag << " (--recompute full or auto stashes less)";
      return diag;
    }
  return success();
}

static LogicalResult writeExecutables(ModuleOp module,
                                      ArrayRef<StageInfo> stages,
                                      const CompilerOptions &o,
                                      PlanDirectory &dir) {
  for (const StageInfo &s : stages) {
    auto lowered = lowerStageToLLVM(module, s, o);
    if (failed(lowered))
      return failure();
    std::string exe = (dir.path() + "/stage" + Twine(s.stage)).str();
    std::string obj = exe + ".o";
    if (failed(emitObjectFile(**lowered, obj)) ||
        failed(linkStage(module.getLoc(), obj, exe)))
      return failure();
    llvm::sys::fs::remove(obj);
  }
  return writeLauncher(module.getLoc(), dir.path(), o);
}

static LogicalResult emitLLVM(ModuleOp module, ArrayRef<StageInfo> stages,
                              const CompilerOptions &o, llvm::raw_ostream &out) {
  for (const StageInfo &s : stages) {
    auto lowered = lowerStageToLLVM(module, s, o);
    if (failed(lowered))
      return failure();
    out << "; ---- stage " << s.stage << " ----\n";
    if (failed(printLLVMIR(**lowered, out)))
      return failure();
  }
  return success();
}

LogicalResult mlir::pd::runCompiler(ModuleOp module,
                                    const CompilerOptions &options,
                                    llvm::raw_ostream &out) {
  CompilerOptions o = options;
  if (failed(resolveOptions(module, o)))
    return failure();
  FailureOr<std::vector<int64_t>> recompute = chooseRecomputeStages(module, o);
  if (failed(recompute) || failed(runPhases(module, o, *recompute, o.emit)))
    return failure();
  if (o.emit == EmitKind::MLIRGrad || o.emit == EmitKind::MLIRStages ||
      o.emit == EmitKind::MLIRBuffers) {
    module.print(out);
    out << "\n";
    return success();
  }

  SmallVector<StageInfo> stages;
  for (int64_t s = 0; s < o.stages; ++s) {
    auto info = collectStageInfo(module, s);
    if (failed(info))
      return failure();
    stages.push_back(*info);
  }
  if (failed(checkMemory(module, stages, o)))
    return failure();
  FailureOr<PlanPrediction> prediction = predictPlan(module, o);
  if (failed(prediction))
    return failure();
  std::string plan, trace;
  llvm::raw_string_ostream planOs(plan), traceOs(trace);
  planOs << llvm::formatv("{0:2}", buildPlanJson(stages, o, *prediction))
         << "\n";
  writeChromeTrace(prediction->result, traceOs);
  traceOs << "\n";
  if (o.emit == EmitKind::Plan || o.emit == EmitKind::Trace) {
    out << (o.emit == EmitKind::Plan ? plan : trace);
    return success();
  }
  if (o.emit == EmitKind::LLVM)
    return emitLLVM(module, stages, o, out);

  auto dir = PlanDirectory::create(module.getLoc(), o.outputDir);
  if (failed(dir) || failed(dir->writeFile("plan.json", plan)) ||
      failed(dir->writeFile("trace.json", trace)))
    return failure();
  if (!o.planOnly && failed(writeExecutables(module, stages, o, *dir)))
    return failure();
  if (failed(dir->commit()))
    return failure();
  printPlanSummary(stages, o, *prediction, out);
  out << "wrote " << o.outputDir << "/";
  if (o.planOnly)
    out << " (plan.json, trace.json)\n";
  else
    out << " (plan.json, trace.json, run, stage0..stage" << o.stages - 1
        << ")\n";
  return success();
}
