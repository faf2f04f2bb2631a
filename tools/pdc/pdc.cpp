//===- pdc.cpp - The pdc training compiler driver ---------------*- C++ -*-===//
//
// `pdc MODEL.onnx -o PLAN_DIR [options]`: parses the command line into
// ImportOptions and CompilerOptions (DESIGN.md section 2), imports the model
// and hands it to runCompiler. Every diagnostic is printed as one line
// `pdc: error: ...`, and any failure exits with code 1 (firtool's shape).
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDDialect.h"
#include "pd/Import/ONNXImporter.h"
#include "pd/Pipeline/Compiler.h"
#include "pd/Planner/Calibration.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

static cl::OptionCategory pdcCategory("pdc options");

/// An enumerated option's parser whose error is pdc's one line:
/// `pdc: error: invalid --NAME 'VALUE' (expected a, b or c)`.
template <typename E>
class ChoiceParser : public cl::parser<E> {
public:
  using cl::parser<E>::parser;

  bool parse(cl::Option &option, StringRef name, StringRef arg, E &value) {
    std::string list;
    for (auto [i, choice] : llvm::enumerate(this->Values)) {
      if (choice.Name == arg) {
        value = choice.V.getValue();
        return false;
      }
      list += (i == 0                         ? ""
               : i + 1 == this->Values.size() ? " or "
                                              : ", ") +
              choice.Name.str();
    }
    llvm::errs() << "pdc: error: invalid --" << name << " '" << arg
                 << "' (expected " << list << ")\n";
    return true;
  }
};

static cl::opt<std::string> inputFilename(cl::Positional, cl::Required,
                                          cl::desc("<model.onnx>"),
                                          cl::cat(pdcCategory));
static cl::opt<std::string> outputDir("o", cl::desc("Plan directory to write"),
                                      cl::value_desc("dir"),
                                      cl::cat(pdcCategory));
static cl::opt<pd::EmitKind, false, ChoiceParser<pd::EmitKind>> emit(
    "emit", cl::desc("Print one phase's output instead of writing the plan"),
    cl::init(pd::EmitKind::PlanDirectory),
    cl::values(
        clEnumValN(pd::EmitKind::MLIRImport, "mlir-import",
                   "the imported pd module"),
        clEnumValN(pd::EmitKind::MLIRGrad, "mlir-grad", "after autodiff"),
        clEnumValN(pd::EmitKind::MLIRStages, "mlir-stages",
                   "after partitioning and outlining"),
        clEnumValN(pd::EmitKind::MLIRBuffers, "mlir-buffers",
                   "after buffer allocation"),
        clEnumValN(pd::EmitKind::LLVM, "llvm", "every stage's LLVM IR"),
        clEnumValN(pd::EmitKind::Plan, "plan", "plan.json"),
        clEnumValN(pd::EmitKind::Trace, "trace",
                   "the simulated timeline (Chrome trace JSON)")),
    cl::cat(pdcCategory));
static cl::opt<bool> planOnly("plan-only",
                              cl::desc("Write plan.json without codegen"),
                              cl::cat(pdcCategory));
static cl::opt<bool> splitGemms(
    "split-gemms",
    cl::desc("Let the planner split a GEMM at a stage cut by rows, the "
             "halves on both stages, when that balances them (default on)"),
    cl::init(true), cl::cat(pdcCategory));
static cl::opt<bool> instrumentOps(
    "instrument-ops",
    cl::desc("Time every op in the stage executables (run --profile-ops "
             "FILE; the plan's ops.json names them)"),
    cl::cat(pdcCategory));
static cl::opt<std::string> calibrate(
    "calibrate",
    cl::desc("Balance the stages on their speeds in a run of an "
             "instrumented plan of this model at the same depth (the file "
             "of its run --profile-ops)"),
    cl::value_desc("TIMES.json"), cl::cat(pdcCategory));
static cl::opt<std::string> calibratePlan(
    "calibrate-plan",
    cl::desc("The instrumented plan that --calibrate's run ran (its "
             "ops.json; default: the directory of TIMES.json)"),
    cl::value_desc("DIR"), cl::cat(pdcCategory));
static cl::opt<bool>
    profile("profile",
            cl::desc("Measure the ops' costs on this machine for the planner "
                     "(cpu device spec; cached)"),
            cl::cat(pdcCategory));
static cl::opt<std::string>
    profileCache("profile-cache",
                 cl::desc("Cache of measured op costs (default "
                          "$PDC_PROFILE_CACHE, else ~/.cache/pdc/profiles)"),
                 cl::value_desc("DIR"), cl::cat(pdcCategory));

// Cluster.
static cl::opt<pd::TargetKind, false, ChoiceParser<pd::TargetKind>> target(
    "target", cl::desc("Hardware of the stage executables"),
    cl::init(pd::TargetKind::CPU),
    cl::values(clEnumValN(pd::TargetKind::CPU, "cpu",
                          "OpenBLAS kernels, MPI between ranks"),
               clEnumValN(pd::TargetKind::CUDA, "cuda",
                          "CUDA kernels, NCCL between GPUs")),
    cl::cat(pdcCategory));
static cl::opt<int64_t> devices("devices", cl::desc("Number of devices"),
                                cl::init(0), cl::cat(pdcCategory));
static cl::opt<std::string>
    deviceMemory("device-memory",
                 cl::desc("Memory per device (80GiB, 16GB, 512MiB, bytes)"),
                 cl::cat(pdcCategory));
static cl::opt<std::string>
    deviceSpec("device-spec", cl::desc("cpu, v100, a100, h100 or FILE.json"),
               cl::init("cpu"), cl::cat(pdcCategory));
static cl::opt<int64_t> nodes("nodes", cl::desc("Number of machines"),
                              cl::init(0), cl::cat(pdcCategory));
static cl::opt<int64_t> devicesPerNode("devices-per-node",
                                       cl::desc("Devices per machine"),
                                       cl::init(0), cl::cat(pdcCategory));

// Planner overrides.
static cl::opt<int64_t> stages("stages", cl::desc("Pipeline depth d"),
                               cl::init(0), cl::cat(pdcCategory));
static cl::opt<int64_t> replicas("replicas", cl::desc("Pipeline width w"),
                                 cl::init(0), cl::cat(pdcCategory));
static cl::list<std::string>
    dimValues("dim", cl::desc("Size of a symbolic input dimension, NAME=N "
                              "(repeatable)"),
              cl::value_desc("NAME=N"), cl::cat(pdcCategory));
static cl::opt<int64_t> microbatch("microbatch", cl::desc("Microbatch size b"),
                                   cl::init(0), cl::cat(pdcCategory));
static cl::opt<int64_t> microbatches("microbatches",
                                     cl::desc("Microbatches per batch m"),
                                     cl::init(0), cl::cat(pdcCategory));
static cl::opt<int64_t>
    globalBatch("global-batch",
                cl::desc("Samples per optimizer step, all replicas (B = b x "
                         "m x w)"),
                cl::init(0), cl::cat(pdcCategory));
static cl::opt<pd::Recompute, false, ChoiceParser<pd::Recompute>> recompute(
    "recompute", cl::desc("Activation recomputation"),
    cl::init(pd::Recompute::None),
    cl::values(clEnumValN(pd::Recompute::None, "none", "stash activations"),
               clEnumValN(pd::Recompute::Full, "full",
                          "rerun each stage's forward before its backward"),
               clEnumValN(pd::Recompute::Auto, "auto",
                          "recompute the stages that would not fit the "
                          "device memory")),
    cl::cat(pdcCategory));
static cl::opt<pd::Schedule, false, ChoiceParser<pd::Schedule>> schedule("schedule",
                                      cl::desc("Pipeline schedule"),
                                      cl::init(pd::Schedule::TwoBW),
                                      pd::scheduleChoices(),
                                      cl::cat(pdcCategory));

// Optimizer.
static cl::opt<pd::Optimizer, false, ChoiceParser<pd::Optimizer>> optimizer("optimizer", cl::desc("Optimizer"),
                                        cl::init(pd::Optimizer::SGD),
                                        pd::optimizerChoices(),
                                        cl::cat(pdcCategory));
static cl::opt<double> lr("lr", cl::desc("Learning rate"), cl::init(0.01),
                          cl::cat(pdcCategory));
static cl::opt<double> momentum("momentum", cl::init(0.9),
                                cl::desc("SGD momentum"), cl::cat(pdcCategory));
static cl::opt<double> beta1("beta1", cl::init(0.9), cl::desc("Adam beta1"),
                             cl::cat(pdcCategory));
static cl::opt<double> beta2("beta2", cl::init(0.999), cl::desc("Adam beta2"),
                             cl::cat(pdcCategory));
static cl::opt<double> eps("eps", cl::init(1e-8), cl::desc("Adam epsilon"),
                           cl::cat(pdcCategory));
static cl::opt<double> weightDecay("weight-decay", cl::init(0.0),
                                   cl::desc("Weight decay"),
                                   cl::cat(pdcCategory));

// Model.
static cl::opt<std::string>
    lossName("loss", cl::desc("Value of the model to train as the loss"),
             cl::cat(pdcCategory));

//===----------------------------------------------------------------------===//
// Option validation
//===----------------------------------------------------------------------===//

/// Prints one `pdc: error:` line and returns failure.
static LogicalResult optionError(const llvm::Twine &message) {
  llvm::errs() << "pdc: error: " << message << "\n";
  return failure();
}

/// Parses a byte count: plain bytes or a number with a decimal (KB, MB, GB,
/// TB) or binary (KiB, MiB, GiB, TiB) suffix; "B" alone is allowed.
static std::optional<int64_t> parseSize(StringRef text) {
  StringRef number =
      text.take_while([](char c) { return llvm::isDigit(c) || c == '.'; });
  StringRef suffix = text.drop_front(number.size());
  double value;
  if (number.empty() || number.getAsDouble(value))
    return std::nullopt;
  std::optional<double> scale =
      llvm::StringSwitch<std::optional<double>>(suffix.lower())
          .Cases("", "b", 1.0)
          .Cases("k", "kb", 1e3)
          .Cases("m", "mb", 1e6)
          .Cases("g", "gb", 1e9)
          .Cases("t", "tb", 1e12)
          .Case("kib", 1024.0)
          .Case("mib", 1024.0 * 1024)
          .Case("gib", 1024.0 * 1024 * 1024)
          .Case("tib", 1024.0 * 1024 * 1024 * 1024)
          .Default(std::nullopt);
  if (!scale || value * *scale >= 9.2e18)
    return std::nullopt;
  return static_cast<int64_t>(std::llround(value * *scale));
}

/// Checks that integer option `name` is not negative.
static LogicalResult checkCount(StringRef name, int64_t value) {
  if (value >= 0)
    return success();
  return optionError("invalid --" + name + " " + llvm::Twine(value) +
                     " (expected a non-negative count)");
}

/// Validates the enumerated and numeric options.
static LogicalResult checkOptions() {
  std::pair<StringRef, int64_t> counts[] = {
      {"devices", devices},
      {"nodes", nodes},
      {"devices-per-node", devicesPerNode},
      {"stages", stages},
      {"replicas", replicas},
      {"microbatch", microbatch},
      {"microbatches", microbatches},
      {"global-batch", globalBatch}};
  for (auto [name, value] : counts)
    if (failed(checkCount(name, value)))
      return failure();
  if (!(lr > 0.0) || eps < 0.0 || weightDecay < 0.0)
    return optionError("invalid optimizer settings: --lr must be positive, "
                       "--eps and --weight-decay non-negative");
  if (outputDir.empty() && emit == pd::EmitKind::PlanDirectory)
    return optionError("no output directory: pass -o PLAN_DIR (or --emit)");
  if (planOnly && outputDir.empty())
    return optionError("--plan-only writes plan.json: pass -o PLAN_DIR");
  if (profile && deviceSpec != "cpu")
    return optionError("--profile measures this machine's CPU: it needs "
                       "--device-spec cpu, not '" + deviceSpec + "'");
  return success();
}

/// Resolves the device count from --devices, --nodes and --devices-per-node:
/// --nodes x --devices-per-node when --nodes is given (and --devices, if
/// also given, must agree); otherwise --devices, or one node's devices.
static LogicalResult resolveDevices(int64_t &count) {
  count = devices;
  if (nodes == 0 && devicesPerNode == 0)
    return success();
  int64_t perNode = devicesPerNode ? devicesPerNode.getValue() : 1;
  if (nodes == 0) {
    if (count == 0)
      count = perNode;
    return success();
  }
  int64_t total = nodes.getValue() * perNode;
  if (count != 0 && count != total)
    return optionError(
        "--devices " + llvm::Twine(count) +
        " does not match --nodes x --devices-per-node = " + llvm::Twine(total));
  count = total;
  return success();
}

/// --calibrate: the stages' time scale from a run of an instrumented plan.
static LogicalResult readCalibration(pd::CompilerOptions &opts) {
  if (calibrate.empty()) {
    if (!calibratePlan.empty())
      return optionError("--calibrate-plan needs --calibrate");
    return success();
  }
  SmallString<256> ops(calibratePlan.empty()
                           ? llvm::sys::path::parent_path(calibrate)
                           : StringRef(calibratePlan));
  llvm::sys::path::append(ops, "ops.json");
  llvm::Expected<std::vector<double>> scale =
      pd::readStageTimeScale(ops, calibrate);
  if (!scale)
    return optionError("--calibrate: " + llvm::toString(scale.takeError()));
  if (stages > 0 && stages != (int64_t)scale->size())
    return optionError("--calibrate: '" + calibrate + "' times a run of " +
                       llvm::Twine(scale->size()) + " stages, not --stages " +
                       llvm::Twine(stages));
  opts.stageTimeScale = std::move(*scale);
  opts.calibrationTimes = calibrate;
  return success();
}

/// Fills CompilerOptions from the parsed command line.
static LogicalResult buildOptions(pd::CompilerOptions &opts) {
  if (failed(checkOptions()) || failed(resolveDevices(opts.devices)) ||
      failed(readCalibration(opts)))
    return failure();
  if (!deviceMemory.empty()) {
    std::optional<int64_t> bytes = parseSize(deviceMemory);
    if (!bytes)
      return optionError("invalid --device-memory '" + deviceMemory +
                         "' (expected bytes or a size such as 80GiB, 16GB, "
                         "512MiB)");
    opts.deviceMemory = *bytes;
  }
  SmallString<256> path(inputFilename);
  (void)llvm::sys::fs::make_absolute(path);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  opts.modelPath = path.str().str();
  opts.outputDir = outputDir;
  opts.target = target;
  opts.emit = emit;
  opts.planOnly = planOnly;
  opts.deviceSpec = deviceSpec;
  opts.devicesPerNode = devicesPerNode;
  opts.profile = profile;
  opts.instrumentOps = instrumentOps;
  opts.splitGemms = splitGemms;
  opts.profileCache = profileCache;
  opts.stages = stages;
  opts.replicas = replicas;
  opts.microbatch = microbatch;
  opts.microbatches = microbatches;
  opts.globalBatch = globalBatch;
  opts.recompute = recompute;
  opts.schedule = schedule;
  opts.recomputeGiven = recompute.getNumOccurrences() > 0;
  opts.microbatchGiven = microbatch.getNumOccurrences() > 0;
  opts.scheduleGiven = schedule.getNumOccurrences() > 0;
  opts.optimizer = optimizer;
  opts.lr = lr;
  opts.momentum = momentum;
  opts.beta1 = beta1;
  opts.beta2 = beta2;
  opts.eps = eps;
  opts.weightDecay = weightDecay;
  return success();
}

//===----------------------------------------------------------------------===//
// Diagnostics and the compilation
//===----------------------------------------------------------------------===//

/// The ONNX node a location names, if any (importer locations are
/// NameLoc(node, file); later passes may fuse or nest them).
static std::optional<std::string> nodeName(Location loc) {
  std::optional<std::string> name;
  loc->walk([&](Location inner) {
    if (auto nameLoc = dyn_cast<NameLoc>(inner)) {
      name = nameLoc.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// Prints a diagnostic (and its notes) as `pdc: <severity>: <message>`,
/// adding the node name when the message does not already mention it.
static void printDiagnostic(Diagnostic &diag) {
  StringRef severity = "error";
  switch (diag.getSeverity()) {
  case DiagnosticSeverity::Error:
    severity = "error";
    break;
  case DiagnosticSeverity::Warning:
    severity = "warning";
    break;
  case DiagnosticSeverity::Note:
    severity = "note";
    break;
  case DiagnosticSeverity::Remark:
    severity = "remark";
    break;
  }
  std::string message = diag.str();
  llvm::errs() << "pdc: " << severity << ": " << message;
  if (auto name = nodeName(diag.getLocation()))
    if (!StringRef(message).contains("'" + *name + "'"))
      llvm::errs() << " (at node '" << *name << "')";
  llvm::errs() << "\n";
  for (Diagnostic &note : diag.getNotes())
    printDiagnostic(note);
}

/// Imports the model and runs the compiler (firtool's executeFirtool).
static LogicalResult executePdc(MLIRContext &context,
                                const pd::CompilerOptions &opts,
                                TimingScope &timing) {
  pd::ImportOptions importOpts;
  importOpts.batchSize = opts.microbatch;
  importOpts.lossOutput = lossName;
  for (const std::string &spec : dimValues)
    if (!importOpts.addDimValue(spec)) {
      llvm::errs() << "pdc: error: --dim expects NAME=N with N > 0, got '"
                   << spec << "'\n";
      return failure();
    }
  TimingScope importTiming = timing.nest("import");
  auto module = pd::importONNXFile(inputFilename, context, importOpts);
  importTiming.stop();
  if (failed(module))
    return failure();
  if (opts.emit == pd::EmitKind::MLIRImport) {
    (*module)->print(llvm::outs());
    llvm::outs() << "\n";
    return success();
  }
  auto reimport = [&](int64_t b) {
    pd::ImportOptions again = importOpts;
    again.batchSize = b;
    return pd::importONNXFile(inputFilename, context, again);
  };
  return pd::runCompiler(**module, opts, llvm::outs(), reimport,
                         timing.nest("compile"));
}

/// The MLIR flags that apply to pdc's pass pipeline, listed by --help.
static bool isDebugOption(StringRef name) {
  return name.starts_with("mlir-print-ir") ||
         llvm::is_contained({"mlir-timing", "mlir-timing-display",
                             "mlir-pass-statistics", "mlir-print-debuginfo",
                             "mlir-disable-threading",
                             "mlir-elide-elementsattrs-if-larger"},
                            name);
}

/// Registers MLIR's pass-manager, context and printer flags; --help shows
/// pdc's options and those flags, every other LLVM option stays hidden.
static void registerCommandLine() {
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  static cl::OptionCategory debugCategory("pdc debugging options (MLIR)");
  for (auto &entry : cl::getRegisteredOptions())
    if (isDebugOption(entry.getKey()))
      entry.getValue()->addCategory(debugCategory);
  cl::HideUnrelatedOptions({&pdcCategory, &debugCategory});
}

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  registerCommandLine();
  cl::ParseCommandLineOptions(argc, argv,
                              "pdc: ahead-of-time compiler for "
                              "pipeline-parallel training\n");
  pd::CompilerOptions opts;
  if (failed(buildOptions(opts)))
    return 1;

  DialectRegistry registry;
  registry.insert<pd::PDDialect, func::FuncDialect, arith::ArithDialect,
                  LLVM::LLVMDialect>();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // A failing pass must not dump the IR into the user's one error line.
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](Diagnostic &diag) {
    printDiagnostic(diag);
    return success();
  });
  // One timing tree for the whole run (--mlir-timing): import, each phase,
  // the plan search, code generation, and the passes inside the phases.
  DefaultTimingManager timing;
  applyDefaultTimingManagerCLOptions(timing);
  TimingScope root = timing.getRootScope();
  return failed(executePdc(context, opts, root)) ? 1 : 0;
}
