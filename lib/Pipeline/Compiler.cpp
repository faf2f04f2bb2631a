//===- Compiler.cpp - pdc's phases after import -----------------*- C++ -*-===//
//
// runCompiler: resolves the plan's free choices from the options and the
// model, runs autodiff, stage partitioning, outlining and buffer allocation
// (stopping at --emit's phase), checks memory, and writes the plan
// directory: one linked executable per stage, plan.json and `run`.
//
//===----------------------------------------------------------------------===//

#include "pd/Pipeline/Compiler.h"
#include "PlanDirectory.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "pd/Pipeline/Pipeline.h"
#include "pd/Codegen/Codegen.h"
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

/// Runs the MLIR phases in one pass manager, up to the one --emit asks for
/// (all three otherwise), with the pass-manager flags of the command line
/// (--mlir-print-ir-after-all, --mlir-timing, ...) applied.
static LogicalResult runPhases(ModuleOp module, const CompilerOptions &o,
                               ArrayRef<int64_t> recomputeStages,
                               EmitKind emit) {
  TrainingPipelineOptions phases;
  phases.stages = o.stages;
  phases.microbatches = o.microbatches;
  phases.schedule = o.schedule;
  phases.optimizer = o.optimizer;
  phases.recomputeStages.assign(recomputeStages.begin(), recomputeStages.end());
  PassManager pm(module.getContext());
  pm.enableVerifier(true);
  if (emit == o.emit) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
  }
  addAutodiffPhase(pm);
  if (emit != EmitKind::MLIRGrad)
    addStagesPhase(pm, phases);
  if (emit != EmitKind::MLIRGrad && emit != EmitKind::MLIRStages)
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
