//===- Compiler.cpp - pdc's phases after import -----------------*- C++ -*-===//
//
// runCompiler: checks the options against the model, runs autodiff, lets
// the plan search fill the free choices (depth, width, microbatch,
// schedule, recomputing stages, the cuts) on the stage model, runs stage
// partitioning, outlining and buffer allocation for the chosen plan
// (stopping at --emit's phase), checks that the stage model agrees and the
// memory fits, simulates the plan, and writes the plan directory: one
// linked executable per stage, plan.json, trace.json and `run`.
//
//===----------------------------------------------------------------------===//

#include "pd/Pipeline/Compiler.h"
#include "PlanDirectory.h"
#include "InstrumentOps.h"
#include "Phases.h"
#include "PlanSearch.h"
#include "SplitAtCuts.h"
#include "OpProfile.h"
#include "dialects/PD/IR/PDOps.h"
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

namespace {
/// The compiled plan's documents: per-stage facts, the prediction,
/// plan.json and the Chrome trace.
struct PlanDocuments {
  SmallVector<StageInfo> stages;
  PlanPrediction prediction;
  std::string plan, trace;
};
} // namespace

/// Checks the compiled plan (the stage model agrees, memory fits),
/// simulates it and renders plan.json and trace.json.
static FailureOr<PlanDocuments> describePlan(ModuleOp module,
                                             const CompilerOptions &o,
                                             const PlanSearch &search,
                                             const OpProfiler &profiler) {
  checkModel(module, search, o);
  PlanDocuments docs;
  std::vector<GemmChoice> gemms = profiler.gemmLibraries();
  for (int64_t s = 0; s < o.stages; ++s) {
    auto info = collectStageInfo(module, s);
    if (failed(info))
      return failure();
    info->gemmLibraries = gemms;
    docs.stages.push_back(*info);
  }
  if (failed(checkMemory(module, docs.stages, o)))
    return failure();
  FailureOr<PlanPrediction> prediction = predictPlan(module, o);
  if (failed(prediction))
    return failure();
  docs.prediction = *prediction;
  llvm::json::Value planJson = buildPlanJson(docs.stages, o, *prediction);
  llvm::json::Object &fields = *planJson.getAsObject();
  if (search.searched())
    fields.try_emplace("search", search.toJson());
  if (!search.splitGemms.empty()) {
    llvm::json::Array splits;
    for (const MatMulRowSplit &s : search.splitGemms)
      splits.push_back(llvm::json::Object{{"op_id", s.opId}, {"rows", s.rows}});
    fields.try_emplace("split_gemms", std::move(splits));
  }
  if (!o.stageTimeScale.empty())
    fields.try_emplace(
        "calibration",
        llvm::json::Object{{"times", o.calibrationTimes},
                           {"stage_time_scale",
                            llvm::json::Array(o.stageTimeScale)}});
  if (!gemms.empty()) {
    llvm::json::Array list;
    for (const GemmChoice &g : gemms)
      list.push_back(llvm::json::Array{g.m, g.n, g.k, g.transA, g.transB,
                                       g.openBlas ? "openblas" : "onednn"});
    fields.try_emplace("gemm_libraries", std::move(list));
  }
  fields.try_emplace("costs", profiler.active()
                                  ? profiler.describe()
                                  : "roofline of " + prediction->spec.name);
  llvm::raw_string_ostream planOs(docs.plan), traceOs(docs.trace);
  planOs << llvm::formatv("{0:2}", planJson) << "\n";
  writeChromeTrace(prediction->result, traceOs);
  traceOs << "\n";
  return docs;
}

/// Writes the plan directory (atomically) and prints the plan.
static LogicalResult writePlan(ModuleOp module, const CompilerOptions &o,
                               const PlanSearch &search,
                               const OpProfiler &profiler,
                               const PlanDocuments &docs,
                               llvm::raw_ostream &out, TimingScope &timing) {
  auto dir = PlanDirectory::create(module.getLoc(), o.outputDir);
  if (failed(dir) || failed(dir->writeFile("plan.json", docs.plan)) ||
      failed(dir->writeFile("trace.json", docs.trace)))
    return failure();
  if (o.instrumentOps && !o.planOnly) {
    FailureOr<std::string> ops = instrumentOps(module, docs.prediction.spec);
    if (failed(ops) || failed(dir->writeFile("ops.json", *ops)))
      return failure();
  }
  TimingScope codegenTiming = timing.nest("code generation");
  if (!o.planOnly && failed(writeExecutables(module, docs.stages, o, *dir)))
    return failure();
  codegenTiming.stop();
  if (failed(dir->commit()))
    return failure();
  search.print(out);
  for (const MatMulRowSplit &s : search.splitGemms)
    out << "split: the GEMM of op " << s.opId << " after row " << s.rows
        << ", so that a stage cut falls inside it\n";
  if (!o.stageTimeScale.empty()) {
    out << "calibrated: stage times x";
    for (auto [s, scale] : llvm::enumerate(o.stageTimeScale))
      out << (s ? ", x" : "") << llvm::formatv("{0:F3}", scale);
    out << " (measured in " << o.calibrationTimes << ")\n";
  }
  if (profiler.active())
    out << "costs: " << profiler.describe() << "\n";
  printPlanSummary(docs.stages, o, docs.prediction, out);
  out << "wrote " << o.outputDir << "/";
  if (o.planOnly)
    out << " (plan.json, trace.json)\n";
  else
    out << " (plan.json, trace.json, run, stage0..stage" << o.stages - 1
        << (o.instrumentOps ? ", ops.json" : "") << ")\n";
  return success();
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
  // A GEMM at a cut split by rows where that balances the stages.
  splitGemmsAtCuts(module, o, *search, reimport, profiler, timing);
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
  FailureOr<PlanDocuments> docs = describePlan(module, o, *search, profiler);
  checkTiming.stop();
  if (failed(docs))
    return failure();
  if (o.emit == EmitKind::Plan || o.emit == EmitKind::Trace) {
    out << (o.emit == EmitKind::Plan ? docs->plan : docs->trace);
    return success();
  }
  if (o.emit == EmitKind::LLVM)
    return emitLLVM(module, docs->stages, o, out);
  return writePlan(module, o, *search, profiler, *docs, out, timing);
}
