//===- OpProfile.cpp - Op costs measured on this machine ------------------===//
//
// The cache: <dir>/<cpu>/<model hash>.json =
//   {"cpu": "...", "model": "...", "ops": {"<signature>": seconds, ...},
//    "gemms": {"<signature>": {"shapes": [[m, n, k, trans_a, trans_b], ...],
//                              "onednn": seconds, "openblas": seconds}}}.
// The profiling stage: the model at d = 1, flush, two microbatches, SGD,
// every costed op of @main tagged pd.profile_id (its position), run for
// kProfileSteps steps, one copy per core at once (each under mpirun, one
// thread), on synthetic data and the model's initial weights (synthetic
// ones if it has no weight data: op times depend on the values, by 20% on
// a GPT); the first step is warm-up; an op's time is the mean over the
// copies. Its pdrt_matmuls alternate between oneDNN and OpenBLAS from one
// microbatch to the next (PDRT_GEMM_LIBRARY=alternate), so that both
// libraries' calls of an op are interleaved in time and a change in the
// machine's load touches both alike (two runs one after the other, one
// per library, had chosen differently on a loaded machine): an op that
// ran GEMMs (the stage lists their shapes) costs its time on the faster
// library and its shapes go to that library in the plan
// (runtime/cpu/gemm_library.h); other ops cost the mean over all calls.
//
//===----------------------------------------------------------------------===//

#include "OpProfile.h"
#include "Phases.h"
#include "dialects/PD/IR/PDOps.h"
#include "pd/Codegen/Codegen.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <map>
#include <thread>
#include <unistd.h>

extern char **environ;

using namespace mlir;
using namespace mlir::pd;

std::string mlir::pd::opSignature(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << "(";
  llvm::interleaveComma(op->getOperandTypes(), os);
  os << ")->(";
  llvm::interleaveComma(op->getResultTypes(), os);
  os << ")";
  for (NamedAttribute attr : op->getAttrDictionary()) {
    if (attr.getName().strref().starts_with("pd."))
      continue;
    std::string value;
    llvm::raw_string_ostream vs(value);
    attr.getValue().print(vs);
    // Long values (constant tensors) by their hash.
    if (value.size() > 160)
      value = llvm::formatv("#{0:x}", llvm::xxh3_64bits(value)).str();
    os << " " << attr.getName().strref() << "=" << value;
  }
  return text;
}

/// This machine's CPU model, as a file name.
static std::string cpuKey() {
  std::string name = "unknown-cpu";
  // /proc files report no size: read them as a stream.
  if (auto buffer = llvm::MemoryBuffer::getFileAsStream("/proc/cpuinfo")) {
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (StringRef line : lines)
      if (line.starts_with("model name")) {
        name = line.split(':').second.trim().str();
        break;
      }
  }
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '-' && c != '.')
      c = '_';
  return name;
}

static std::string cacheDirectory(const CompilerOptions &o) {
  if (!o.profileCache.empty())
    return o.profileCache;
  if (const char *env = std::getenv("PDC_PROFILE_CACHE"))
    return env;
  SmallString<256> dir;
  if (!llvm::sys::path::home_directory(dir))
    return ".pdc-profiles";
  llvm::sys::path::append(dir, ".cache", "pdc", "profiles");
  return std::string(dir);
}

/// [m, n, k, trans_a, trans_b] from JSON.
static std::optional<OpProfiler::GemmShape>
readGemmShape(const llvm::json::Value &value) {
  const llvm::json::Array *a = value.getAsArray();
  if (!a || a->size() != 5)
    return std::nullopt;
  OpProfiler::GemmShape shape;
  for (size_t i = 0; i < 5; ++i) {
    std::optional<int64_t> v = (*a)[i].getAsInteger();
    if (!v)
      return std::nullopt;
    shape[i] = *v;
  }
  return shape;
}

/// A cache entry of "gemms" (none if malformed: measured again).
static std::optional<OpProfiler::GemmTimes>
readGemmTimes(const llvm::json::Value &value) {
  const llvm::json::Object *o = value.getAsObject();
  const llvm::json::Array *shapes = o ? o->getArray("shapes") : nullptr;
  std::optional<double> oneDnn = o ? o->getNumber("onednn") : std::nullopt;
  std::optional<double> openBlas = o ? o->getNumber("openblas") : std::nullopt;
  if (!shapes || !oneDnn || !openBlas)
    return std::nullopt;
  OpProfiler::GemmTimes t{{}, *oneDnn, *openBlas};
  for (const llvm::json::Value &v : *shapes) {
    std::optional<OpProfiler::GemmShape> shape = readGemmShape(v);
    if (!shape)
      return std::nullopt;
    t.shapes.push_back(*shape);
  }
  return t;
}

OpProfiler::OpProfiler(const CompilerOptions &o) : o(o), cpu(cpuKey()) {
  if (o.deviceSpec != "cpu")
    return;
  auto model = llvm::MemoryBuffer::getFile(o.modelPath);
  std::string hash =
      model ? llvm::formatv("{0:x16}", llvm::xxh3_64bits((*model)->getBuffer()))
                  .str()
            : "unreadable";
  SmallString<256> file(cacheDirectory(o));
  llvm::sys::path::append(file, cpu, hash + ".json");
  cacheFile = std::string(file);
  if (auto buffer = llvm::MemoryBuffer::getFile(cacheFile)) {
    llvm::Expected<llvm::json::Value> json =
        llvm::json::parse((*buffer)->getBuffer());
    const llvm::json::Object *ops =
        json && json->getAsObject() ? json->getAsObject()->getObject("ops")
                                    : nullptr;
    if (ops)
      for (const auto &[sig, value] : *ops)
        if (std::optional<double> s = value.getAsNumber())
          seconds[sig.str()] = *s;
    const llvm::json::Object *gemmOps =
        json && json->getAsObject() ? json->getAsObject()->getObject("gemms")
                                    : nullptr;
    if (gemmOps)
      for (const auto &[sig, value] : *gemmOps)
        if (std::optional<GemmTimes> t = readGemmTimes(value))
          gemms[sig.str()] = *t;
    if (!json)
      llvm::consumeError(json.takeError());
  }
  active_ = o.profile || !seconds.empty();
}

std::string OpProfiler::describe() const {
  std::vector<GemmChoice> choices = gemmLibraries();
  int64_t openBlas = llvm::count_if(
      choices, [](const GemmChoice &g) { return g.openBlas; });
  return llvm::formatv("{0} op shapes measured on {1}{2}, GEMMs: {3} shapes "
                       "on oneDNN, {4} on OpenBLAS (cache {5})",
                       seconds.size(), cpu,
                       measuredNow ? llvm::formatv(", {0} now", measuredNow)
                                         .str()
                                   : std::string(),
                       choices.size() - openBlas, openBlas, cacheFile);
}

std::vector<GemmChoice> OpProfiler::gemmLibraries() const {
  std::map<GemmShape, std::pair<double, double>> byShape;
  for (const auto &entry : gemms)
    for (const GemmShape &shape : entry.getValue().shapes) {
      auto &sum = byShape[shape];
      sum.first += entry.getValue().oneDnn;
      sum.second += entry.getValue().openBlas;
    }
  std::vector<GemmChoice> choices;
  for (const auto &[shape, sum] : byShape)
    choices.push_back({shape[0], shape[1], shape[2], shape[3] != 0,
                       shape[4] != 0, sum.second < sum.first});
  return choices;
}

LogicalResult OpProfiler::save(Location loc) {
  llvm::json::Object ops, gemmOps;
  for (const auto &entry : seconds)
    ops[entry.getKey()] = entry.getValue();
  for (const auto &entry : gemms) {
    llvm::json::Array shapes;
    for (const GemmShape &shape : entry.getValue().shapes)
      shapes.push_back(llvm::json::Array(shape));
    gemmOps[entry.getKey()] =
        llvm::json::Object{{"shapes", std::move(shapes)},
                           {"onednn", entry.getValue().oneDnn},
                           {"openblas", entry.getValue().openBlas}};
  }
  llvm::json::Object doc{{"cpu", cpu},
                         {"model", o.modelPath},
                         {"ops", std::move(ops)},
                         {"gemms", std::move(gemmOps)}};
  if (std::error_code ec = llvm::sys::fs::create_directories(
          llvm::sys::path::parent_path(cacheFile)))
    return emitError(loc, "cannot create the profile cache ")
           << llvm::sys::path::parent_path(cacheFile) << ": " << ec.message();
  // Written to a temporary file and renamed: a reader never sees half.
  std::string tmp = cacheFile + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return emitError(loc, "cannot write the profile cache ")
             << tmp << ": " << ec.message();
    os << llvm::formatv("{0:2}", llvm::json::Value(std::move(doc))) << "\n";
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, cacheFile))
    return emitError(loc, "cannot write the profile cache ")
           << cacheFile << ": " << ec.message();
  return success();
}

/// The copies of the profiling stage run at once: one per core, so that
/// each op is timed under the load of a plan that fills the machine
/// (caches, memory bandwidth and clocks shared by every core).
static unsigned profilingCopies() {
  return std::clamp(std::thread::hardware_concurrency(), 1u, 64u);
}

/// The stage's own error line in `output`, else its last line.
static std::string failureReason(StringRef output, StringRef fallback) {
  SmallVector<StringRef> lines;
  output.split(lines, '\n', -1, /*KeepEmpty=*/false);
  StringRef why = fallback;
  for (StringRef line : llvm::reverse(lines))
    if (!line.trim().empty() && !line.starts_with("---")) {
      why = line.trim();
      if (line.contains("error"))
        break;
    }
  return why.str();
}

/// Steps of the profiling run: one of warm-up, then each microbatch of
/// the two once per step, on each library every other step.
constexpr int kProfileSteps = 5;

/// Runs `copies` copies of the profiling stage `exe` at once, each under
/// its own mpirun and one thread; copy i writes its per-op totals to
/// `json`.i.
static LogicalResult runProfilingStage(Location loc, StringRef exe,
                                       StringRef json, unsigned copies) {
  auto mpirun = llvm::sys::findProgramByName("mpirun");
  if (!mpirun)
    return emitError(loc, "--profile runs the model under mpirun, which is "
                          "not on PATH");
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e)
    if (!StringRef(*e).starts_with("OPENBLAS_NUM_THREADS=") &&
        !StringRef(*e).starts_with("OMP_NUM_THREADS=") &&
        !StringRef(*e).starts_with("PDRT_GEMM_LIBRARY="))
      env.push_back(*e);
  env.push_back("OPENBLAS_NUM_THREADS=1");
  env.push_back("OMP_NUM_THREADS=1");
  env.push_back("PDRT_GEMM_LIBRARY=alternate");
  struct Copy {
    std::vector<std::string> args;
    std::vector<std::string> env;
    SmallString<128> log, session;
    llvm::sys::ProcessInfo process;
  };
  std::vector<Copy> running(copies);
  for (unsigned i = 0; i < copies; ++i) {
    Copy &c = running[i];
    // Unbound, so that the copies spread over the cores.
    c.args = {*mpirun, "-np", "1", "--bind-to", "none", "-x",
              "OPENBLAS_NUM_THREADS", "-x", "OMP_NUM_THREADS", "-x",
              "PDRT_GEMM_LIBRARY"};
    if (::getuid() == 0)
      c.args.push_back("--allow-run-as-root");
    for (std::string a : {exe.str(), std::string("--synthetic"),
                          std::string("--synthetic-weights-if-missing"),
                          std::string("--steps"),
                          std::to_string(kProfileSteps),
                          std::string("--profile-ops"),
                          (json + "." + Twine(i)).str()})
      c.args.push_back(a);
    llvm::sys::fs::createTemporaryFile("pdc-profile", "log", c.log);
    // Each mpirun its own session directory: side by side, Open MPI 4's
    // mpiruns share /tmp/ompi.HOST.UID, and one's cleanup can remove it
    // while another creates its subdirectory (open-mpi/ompi#8510).
    c.env = env;
    SmallString<128> tmp;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, tmp);
    llvm::sys::path::append(tmp, "pdc-profile-mpi");
    if (!::getenv("OMPI_MCA_orte_tmpdir_base") &&
        !llvm::sys::fs::createUniqueDirectory(tmp, c.session))
      c.env.push_back(("OMPI_MCA_orte_tmpdir_base=" + c.session).str());
    std::vector<StringRef> argRefs(c.args.begin(), c.args.end());
    std::vector<StringRef> copyEnv(c.env.begin(), c.env.end());
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(c.log),
                                            StringRef(c.log)};
    c.process =
        llvm::sys::ExecuteNoWait(*mpirun, argRefs, copyEnv, redirects);
  }
  std::string failure;
  for (Copy &c : running) {
    std::string message;
    llvm::sys::ProcessInfo done =
        llvm::sys::Wait(c.process, std::nullopt, &message);
    std::string output;
    if (auto buffer = llvm::MemoryBuffer::getFile(c.log))
      output = (*buffer)->getBuffer().trim().str();
    llvm::sys::fs::remove(c.log);
    if (!c.session.empty())
      llvm::sys::fs::remove_directories(c.session);
    if (done.ReturnCode != 0 && failure.empty())
      failure = llvm::formatv("exit {0}): {1}", done.ReturnCode,
                              failureReason(output, message));
  }
  if (!failure.empty())
    return emitError(loc, "--profile: the profiling stage failed (") << failure;
  return success();
}

using OpTime = OpProfiler::OpTime;

/// The ops of a --profile-ops file, by op id.
static FailureOr<std::map<int64_t, OpTime>> readOpTimesOf(Location loc,
                                                          StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return emitError(loc, "--profile: no op times from the profiling stage");
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return emitError(loc, "--profile: unreadable op times in ") << path;
  }
  // {"ranks": [{..., "ops": [...]}]}: the profiling stage runs as one rank.
  std::map<int64_t, OpTime> times;
  const llvm::json::Array *ranks =
      json->getAsObject() ? json->getAsObject()->getArray("ranks") : nullptr;
  const llvm::json::Object *rank =
      ranks && !ranks->empty() ? ranks->front().getAsObject() : nullptr;
  const llvm::json::Array *ops = rank ? rank->getArray("ops") : nullptr;
  for (const llvm::json::Value &v : ops ? *ops : llvm::json::Array()) {
    const llvm::json::Object *op = v.getAsObject();
    if (!op)
      continue;
    auto id = op->getInteger("id");
    auto total = op->getNumber("seconds");
    auto calls = op->getInteger("calls");
    if (!id || !total || !calls || *calls <= 0)
      continue;
    OpTime &t = times[*id];
    t.seconds = *total / double(*calls);
    // Seconds per call on one library; the mean over all calls if the op
    // ran none on it.
    auto perCall = [&](StringRef library) {
      const llvm::json::Object *by = op->getObject("by_library");
      const llvm::json::Object *lib = by ? by->getObject(library) : nullptr;
      std::optional<double> s = lib ? lib->getNumber("seconds") : std::nullopt;
      std::optional<int64_t> c = lib ? lib->getInteger("calls") : std::nullopt;
      return s && c && *c > 0 ? *s / double(*c) : t.seconds;
    };
    t.oneDnn = perCall("onednn");
    t.openBlas = perCall("openblas");
    if (const llvm::json::Array *gemms = op->getArray("gemms"))
      for (const llvm::json::Value &g : *gemms)
        if (std::optional<OpProfiler::GemmShape> shape = readGemmShape(g))
          t.gemms.push_back(*shape);
  }
  return times;
}

/// The ops, by op id, their seconds averaged over the copies' files
/// `json`.0 .. `json`.(copies - 1).
static FailureOr<std::map<int64_t, OpTime>>
readOpTimes(Location loc, StringRef json, unsigned copies) {
  std::map<int64_t, OpTime> mean;
  for (unsigned i = 0; i < copies; ++i) {
    FailureOr<std::map<int64_t, OpTime>> times =
        readOpTimesOf(loc, (json + "." + Twine(i)).str());
    if (failed(times))
      return failure();
    for (auto &[id, t] : *times) {
      OpTime &m = mean[id];
      m.seconds += t.seconds / copies;
      m.oneDnn += t.oneDnn / copies;
      m.openBlas += t.openBlas / copies;
      if (m.gemms.empty())
        m.gemms = std::move(t.gemms);
    }
  }
  return mean;
}

LogicalResult OpProfiler::measure(ModuleOp module, TimingScope &timing) {
  TimingScope scope = timing.nest("profile ops");
  Location loc = module.getLoc();
  OwningOpRef<ModuleOp> stage = module.clone();
  auto main = stage->lookupSymbol<func::FuncOp>("main");
  std::vector<std::string> sigs;
  std::vector<bool> matmuls;
  PDDialect::ProfileIdAttrHelper ids(module.getContext());
  for (Operation &op : main.getBody().front().without_terminator()) {
    if (isa<CostOpInterface>(op))
      ids.setAttr(&op, IntegerAttr::get(IntegerType::get(op.getContext(), 64),
                                        (int64_t)sigs.size()));
    sigs.push_back(opSignature(&op));
    matmuls.push_back(isa<MatMulOp>(op));
  }
  CompilerOptions p = o;
  // The module's own microbatch size (the search measures several).
  if (main.getNumArguments() > 0)
    if (auto type = dyn_cast<RankedTensorType>(main.getArgument(0).getType()))
      if (type.getRank() > 0)
        p.microbatch = type.getDimSize(0);
  p.stages = p.replicas = 1;
  p.microbatches = 2;
  p.schedule = Schedule::Flush;
  p.optimizer = Optimizer::SGD;
  p.recompute = Recompute::None;
  if (failed(runStagePhases(*stage, p, {}, {}, EmitKind::PlanDirectory, {},
                            /*profileMarks=*/true)))
    return failure();
  FailureOr<StageInfo> info = collectStageInfo(*stage, 0);
  if (failed(info))
    return failure();
  auto lowered = lowerStageToLLVM(*stage, *info, p);
  if (failed(lowered))
    return failure();
  SmallString<128> dir;
  if (llvm::sys::fs::createUniqueDirectory("pdc-profile", dir))
    return emitError(loc, "--profile: cannot create a temporary directory");
  std::string exe = (dir + "/stage0").str();
  std::string json = (dir + "/times.json").str();
  unsigned copies = profilingCopies();
  LogicalResult ran = success();
  if (failed(emitObjectFile(**lowered, exe + ".o")) ||
      failed(linkStage(loc, exe + ".o", exe)) ||
      failed(runProfilingStage(loc, exe, json, copies)))
    ran = failure();
  FailureOr<std::map<int64_t, OpTime>> times = failure();
  if (succeeded(ran))
    times = readOpTimes(loc, json, copies);
  llvm::sys::fs::remove_directories(dir);
  if (failed(times))
    return failure();
  recordTimes(sigs, matmuls, *times);
  return save(loc);
}

void OpProfiler::recordTimes(ArrayRef<std::string> sigs,
                             const std::vector<bool> &matmuls,
                             const std::map<int64_t, OpTime> &times) {
  // Ops of one signature share the mean of their times, per library.
  struct Sum {
    double all = 0, oneDnn = 0, openBlas = 0;
    int64_t ops = 0;
    bool matmul = false;
    std::vector<GemmShape> gemms;
  };
  llvm::StringMap<Sum> sums;
  for (const auto &[id, t] : times) {
    if (id < 0 || id >= (int64_t)sigs.size())
      continue;
    Sum &sum = sums[sigs[id]];
    sum.all += t.seconds;
    sum.oneDnn += t.oneDnn;
    sum.openBlas += t.openBlas;
    ++sum.ops;
    sum.matmul = matmuls[id];
    for (const GemmShape &g : t.gemms)
      if (!llvm::is_contained(sum.gemms, g))
        sum.gemms.push_back(g);
  }
  for (auto &entry : sums) {
    Sum &sum = entry.getValue();
    double d = sum.oneDnn / sum.ops, b = sum.openBlas / sum.ops;
    // A matmul that ran no GEMM (an empty product) is recorded too, so
    // that it is not measured again.
    seconds[entry.getKey()] =
        sum.gemms.empty() ? sum.all / sum.ops : std::min(d, b);
    if (sum.matmul || !sum.gemms.empty())
      gemms[entry.getKey()] = {std::move(sum.gemms), d, b};
    ++measuredNow;
  }
}

LogicalResult OpProfiler::annotate(ModuleOp module, TimingScope &timing) {
  if (!active_)
    return success();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return success();
  // A matmul without both libraries' times (a cache from before they
  // were measured) is measured again.
  auto missing = [&] {
    return llvm::any_of(main.getBody().front(), [&](Operation &op) {
      if (!isa<CostOpInterface>(op))
        return false;
      std::string sig = opSignature(&op);
      return !seconds.count(sig) || (isa<MatMulOp>(op) && !gemms.count(sig));
    });
  };
  if (o.profile && missing() && failed(measure(module, timing)))
    return failure();
  PDDialect::SecondsAttrHelper attr(module.getContext());
  Builder b(module.getContext());
  for (Operation &op : main.getBody().front())
    if (isa<CostOpInterface>(op)) {
      auto it = seconds.find(opSignature(&op));
      if (it != seconds.end())
        attr.setAttr(&op, b.getF64FloatAttr(it->second));
    }
  return success();
}
