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
#include "Phases.h"
#include "PlanSearch.h"
#include "OpProfile.h"
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
  if (llvm::Expected<DeviceSpec> spec = loadDeviceSpec(o); !spec)
    return emitError(loc, llvm::toString(spec.takeError()));
  // A pinned depth or width fixes the other from --devices; with neither
  // the plan search fills both.
  if (o.stages || o.replicas) {
    if (o.replicas == 0)
      o.replicas = (o.devices && o.stages) ? o.devices / o.stages : 1;
    if (o.stages == 0)
      o.stages = o.devices ? std::max<int64_t>(o.devices / o.replicas, 1) : 1;
    if (o.devices && o.devices != o.stages * o.replicas)
      return emitError(loc, "--devices ")
             << o.devices << " is not --stages " << o.stages
             << " x --replicas " << o.replicas;
  }
  if (o.schedule == Schedule::TwoBW && o.scheduleGiven && o.stages &&
      o.microbatches && o.microbatches < o.stages)
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

/// The stage model's prediction of the plan against its real buffer plan
/// and functions: they must agree (the search trusted the model), so a
/// difference is a pdc bug, reported as a warning naming the stage and the
/// region.
static void checkModel(ModuleOp module, const PlanSearch &search,
                       const CompilerOptions &o) {
  if (!search.model)
    return;
  DeviceSpec spec = cantFail(loadDeviceSpec(o));
  FailureOr<PipelineSummary> real = summarizeModule(module, o.stages, spec);
  if (failed(real))
    return;
  PipelineSummary model = *search.model;
  model.applySchedule(o.schedule, o.microbatches);
  if (std::optional<std::string> diff = describeDifference(model, *real))
    emitWarning(module.getLoc(), "the planner's memory and time model "
                                 "differs from the compiled plan (a pdc bug; "
                                 "the plan itself is right): ")
        << *diff;
}

LogicalResult mlir::pd::runCompiler(ModuleOp module,
                                    const CompilerOptions &options,
                                    llvm::raw_ostream &out,
                                    const ModelImporter &reimport,
                                    TimingScope timing) {
  CompilerOptions o = options;
  if (failed(resolveOptions(module, o)) ||
      failed(runAutodiff(module, /*commandLine=*/true,
                         timing.nest("autodiff"))))
    return failure();
  if (o.emit == EmitKind::MLIRGrad) {
    module.print(out);
    out << "\n";
    return success();
  }
  TimingScope searchTiming = timing.nest("plan search");
  OpProfiler profiler(o);
  FailureOr<PlanSearch> search =
      searchPlan(module, o, reimport, profiler, searchTiming);
  searchTiming.stop();
  if (failed(search))
    return failure();
  // The chosen microbatch size's model replaces the module's contents.
  if (search->chosenModule) {
    module.getBodyRegion().takeBody(search->chosenModule->getBodyRegion());
    module->setAttrs(search->chosenModule.get()->getAttrDictionary());
  }
  const PlanCandidate &chosen = search->candidates.front();
  if (failed(runStagePhases(module, o, chosen.cuts, chosen.recomputeStages,
                            o.emit, timing.nest("stages and buffers"))))
    return failure();
  if (o.emit == EmitKind::MLIRStages || o.emit == EmitKind::MLIRBuffers) {
    module.print(out);
    out << "\n";
    return success();
  }
  TimingScope checkTiming = timing.nest("plan checks and prediction");
  checkModel(module, *search, o);
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
  llvm::json::Value planJson = buildPlanJson(stages, o, *prediction);
  if (search->searched())
    planJson.getAsObject()->try_emplace("search", search->toJson());
  planJson.getAsObject()->try_emplace(
      "costs", profiler.active() ? profiler.describe()
                                 : std::string("roofline of ") +
                                       prediction->spec.name);
  planOs << llvm::formatv("{0:2}", planJson) << "\n";
  writeChromeTrace(prediction->result, traceOs);
  traceOs << "\n";
  checkTiming.stop();
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
  TimingScope codegenTiming = timing.nest("code generation");
  if (!o.planOnly && failed(writeExecutables(module, stages, o, *dir)))
    return failure();
  codegenTiming.stop();
  if (failed(dir->commit()))
    return failure();
  search->print(out);
  if (profiler.active())
    out << "costs: " << profiler.describe() << "\n";
  printPlanSummary(stages, o, *prediction, out);
  out << "wrote " << o.outputDir << "/";
  if (o.planOnly)
    out << " (plan.json, trace.json)\n";
  else
    out << " (plan.json, trace.json, run, stage0..stage" << o.stages - 1
        << ")\n";
  return success();
}
