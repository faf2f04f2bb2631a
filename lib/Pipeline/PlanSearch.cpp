//===- PlanSearch.cpp - pdc chooses the pipeline --------------------------===//
//
// Candidates are enumerated with the defaults first (2bw, no recomputation,
// shallow pipelines first); a later one wins if it is more than 0.5%
// faster, or as fast and needs less memory on its largest stage (at d = 1,
// flush keeps one weight version where 2bw keeps two). Each candidate is
// compiled through the buffer plan on a copy of the module (the phases
// take milliseconds on the models pdc is tested with) and simulated; its
// errors are captured as its rejection reason.
//
//===----------------------------------------------------------------------===//

#include "PlanSearch.h"
#include "Phases.h"
#include "pd/Codegen/StageInfo.h"
#include "pd/Planner/Planner.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <thread>

using namespace mlir;
using namespace mlir::pd;

std::string PlanCandidate::describe() const {
  std::string what = stringifyRecompute(recompute).str();
  if (recompute == Recompute::Auto) {
    what = "stages ";
    llvm::raw_string_ostream os(what);
    llvm::interleave(recomputeStages, os, ",");
  }
  return llvm::formatv("d={0} w={1} m={2} b={3} {4} recompute={5}", stages,
                       replicas, microbatches, microbatch,
                       stringifySchedule(schedule), what);
}

/// Devices the search fills: --devices, else one per core on the CPU.
static int64_t deviceCount(const CompilerOptions &o) {
  if (o.devices)
    return o.devices;
  return std::max<int64_t>(1, std::thread::hardware_concurrency());
}

/// Microbatch sizes to try: the imported one, and with --global-batch
/// (which keeps the training problem fixed) and no --microbatch, the powers
/// of two from a quarter to four times it that divide the global batch.
static std::vector<int64_t> microbatchSizes(const CompilerOptions &o,
                                            bool canReimport) {
  std::vector<int64_t> sizes = {o.microbatch};
  if (o.microbatchGiven || !o.globalBatch || !canReimport)
    return sizes;
  for (int64_t b = 1; b <= 4 * o.microbatch; b *= 2)
    if (b != o.microbatch && 4 * b >= o.microbatch && o.globalBatch % b == 0)
      sizes.push_back(b);
  return sizes;
}

/// The candidates `o` leaves open, defaults first.
static std::vector<PlanCandidate> enumerate(const CompilerOptions &o,
                                            ArrayRef<int64_t> microbatchSizes) {
  std::vector<std::pair<int64_t, int64_t>> shapes; // (d, w)
  if (o.stages || o.replicas) {
    int64_t d = o.stages, w = o.replicas;
    if (!w)
      w = o.devices ? std::max<int64_t>(o.devices / d, 1) : 1;
    if (!d)
      d = o.devices ? std::max<int64_t>(o.devices / w, 1) : 1;
    shapes.push_back({d, w});
  } else {
    int64_t n = deviceCount(o);
    for (int64_t d = 1; d <= n; ++d)
      if (n % d == 0)
        shapes.push_back({d, n / d});
  }
  std::vector<Schedule> schedules = {o.schedule};
  if (!o.scheduleGiven)
    for (Schedule s : {Schedule::Flush, Schedule::GPipe})
      if (s != o.schedule)
        schedules.push_back(s);
  // Per-stage recomputation: none, every stage, or (auto) the stages that
  // would not fit without it.
  std::vector<Recompute> recomputes = {o.recompute};
  if (!o.recomputeGiven)
    recomputes.insert(recomputes.end(), {Recompute::Auto, Recompute::Full});
  std::vector<PlanCandidate> out;
  for (int64_t b : microbatchSizes)
  for (auto [d, w] : shapes)
    for (Schedule s : schedules)
      for (Recompute r : recomputes) {
        PlanCandidate c;
        c.stages = d;
        c.replicas = w;
        c.microbatch = b;
        c.schedule = s;
        c.recompute = r;
        c.microbatches = o.microbatches ? o.microbatches : d;
        if (!o.microbatches && o.globalBatch) {
          int64_t perStep = b * w;
          c.microbatches = o.globalBatch / perStep;
          if (o.globalBatch % perStep || c.microbatches == 0)
            c.rejected = llvm::formatv("--global-batch {0} is not a multiple "
                                       "of b x w = {1}",
                                       o.globalBatch, b * w);
        }
        if (c.rejected.empty() && s == Schedule::TwoBW && c.microbatches < d)
          c.rejected = llvm::formatv("2bw needs m ({0}) >= d ({1})",
                                     c.microbatches, d);
        out.push_back(c);
      }
  return out;
}

static CompilerOptions withCandidate(CompilerOptions o,
                                     const PlanCandidate &c) {
  o.stages = c.stages;
  o.replicas = c.replicas;
  o.microbatches = c.microbatches;
  o.microbatch = c.microbatch;
  o.schedule = c.schedule;
  o.recompute = c.recompute;
  return o;
}

/// Compiles `c` on a copy of `module` and simulates it; a failure, a stage
/// over the memory budget or a schedule that would deadlock rejects it.
static void evaluate(ModuleOp module, const CompilerOptions &base,
                     int64_t budget, PlanCandidate &c) {
  CompilerOptions o = withCandidate(base, c);
  std::string error;
  ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Error && error.empty())
      error = d.str();
    return success();
  });
  OwningOpRef<ModuleOp> trial = module.clone();
  FailureOr<std::vector<int64_t>> recompute = chooseRecomputeStages(*trial, o);
  if (failed(recompute)) {
    c.rejected = error;
    return;
  }
  c.recomputeStages = *recompute;
  if (failed(runPhases(*trial, o, *recompute, EmitKind::MLIRBuffers))) {
    c.rejected = error;
    return;
  }
  for (int64_t s = 0; s < c.stages; ++s) {
    FailureOr<StageInfo> info = collectStageInfo(*trial, s);
    if (failed(info)) {
      c.rejected = error;
      return;
    }
    int64_t bytes = info->regions.total();
    c.peakStageBytes = std::max(c.peakStageBytes, bytes);
    if (budget > 0 && bytes > budget && c.rejected.empty())
      c.rejected = llvm::formatv("stage {0} needs {1} bytes > {2}", s, bytes,
                                 budget);
  }
  if (!c.rejected.empty())
    return;
  FailureOr<PlanPrediction> p = predictPlan(*trial, o);
  if (failed(p)) {
    c.rejected = error;
    return;
  }
  c.samplesPerSecond = p->samplesPerSecond;
  c.stepSeconds = p->result.stepSeconds;
}

/// More than 0.5% faster, or as fast within 0.5% and smaller.
static bool isBetter(const PlanCandidate &c, const PlanCandidate &best) {
  if (c.samplesPerSecond > best.samplesPerSecond * 1.005)
    return true;
  return c.samplesPerSecond >= best.samplesPerSecond * 0.995 &&
         c.peakStageBytes < best.peakStageBytes;
}

/// The error when every candidate is rejected: for memory, the smallest
/// candidate and what it needs; otherwise the first candidate's reason.
static LogicalResult reportNoPlan(ModuleOp module,
                                  ArrayRef<PlanCandidate> candidates,
                                  int64_t budget) {
  const PlanCandidate *smallest = nullptr;
  for (const PlanCandidate &c : candidates)
    if (c.peakStageBytes > 0 &&
        (!smallest || c.peakStageBytes < smallest->peakStageBytes))
      smallest = &c;
  if (smallest)
    return module.emitError("no plan fits the device memory (")
           << budget << " bytes): the smallest, " << smallest->describe()
           << ", needs " << smallest->peakStageBytes
           << " bytes on its largest stage";
  return module.emitError("no plan can run: ")
         << candidates.front().describe() << ": "
         << candidates.front().rejected;
}

FailureOr<PlanSearch> mlir::pd::searchPlan(ModuleOp module,
                                           CompilerOptions &o,
                                           const ModelImporter &reimport) {
  PlanSearch search;
  std::vector<int64_t> sizes = microbatchSizes(o, bool(reimport));
  search.candidates = enumerate(o, sizes);
  if (search.candidates.size() == 1) {
    const PlanCandidate &only = search.candidates.front();
    if (!only.rejected.empty())
      return module.emitError(only.rejected);
    o = withCandidate(o, only);
    search.candidates.clear();
    return search;
  }
  int64_t budget = o.deviceMemory;
  if (budget <= 0)
    budget = cantFail(loadDeviceSpec(o.deviceSpec)).memoryBytes;
  // The model at each microbatch size (the given module at its own).
  std::map<int64_t, OwningOpRef<ModuleOp>> imported;
  std::map<int64_t, std::string> importErrors;
  for (int64_t b : llvm::drop_begin(sizes)) {
    std::string error;
    ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
      if (error.empty())
        error = d.str();
      return success();
    });
    FailureOr<OwningOpRef<ModuleOp>> m = reimport(b);
    if (succeeded(m))
      imported[b] = std::move(*m);
    else
      importErrors[b] = "microbatch " + std::to_string(b) + ": " + error;
  }
  for (PlanCandidate &c : search.candidates) {
    if (!c.rejected.empty())
      continue;
    if (importErrors.count(c.microbatch))
      c.rejected = importErrors[c.microbatch];
    else
      evaluate(c.microbatch == o.microbatch ? module
                                            : imported[c.microbatch].get(),
               o, budget, c);
  }
  // recompute=auto choosing no stage or every stage repeats none or full.
  llvm::erase_if(search.candidates, [](const PlanCandidate &c) {
    return c.recompute == Recompute::Auto &&
           (c.recomputeStages.empty() ||
            (int64_t)c.recomputeStages.size() == c.stages);
  });
  const PlanCandidate *best = nullptr;
  for (const PlanCandidate &c : search.candidates)
    if (c.rejected.empty() && (!best || isBetter(c, *best)))
      best = &c;
  if (!best)
    return reportNoPlan(module, search.candidates, budget);
  if (best->microbatch != o.microbatch)
    search.chosenModule = std::move(imported[best->microbatch]);
  o = withCandidate(o, *best);
  // The chosen plan first, then the others by throughput, then rejections.
  PlanCandidate chosen = *best;
  llvm::stable_sort(search.candidates,
                    [](const PlanCandidate &a, const PlanCandidate &b) {
                      if (a.rejected.empty() != b.rejected.empty())
                        return a.rejected.empty();
                      return a.samplesPerSecond > b.samplesPerSecond;
                    });
  auto it = llvm::find_if(search.candidates, [&](const PlanCandidate &c) {
    return c.describe() == chosen.describe();
  });
  std::rotate(search.candidates.begin(), it, it + 1);
  return search;
}

static llvm::json::Object candidateJson(const PlanCandidate &c) {
  llvm::json::Array recomputing;
  for (int64_t s : c.recomputeStages)
    recomputing.push_back(s);
  llvm::json::Object obj{{"stages", c.stages},
                         {"replicas", c.replicas},
                         {"microbatch", c.microbatch},
                         {"microbatches", c.microbatches},
                         {"schedule", stringifySchedule(c.schedule)},
                         {"recompute", stringifyRecompute(c.recompute)},
                         {"recompute_stages", std::move(recomputing)}};
  if (c.rejected.empty()) {
    obj["samples_per_second"] = c.samplesPerSecond;
    obj["step_seconds"] = c.stepSeconds;
    obj["peak_stage_bytes"] = c.peakStageBytes;
  } else {
    obj["rejected"] = c.rejected;
  }
  return obj;
}

llvm::json::Value PlanSearch::toJson() const {
  llvm::json::Array feasible, rejected;
  for (const PlanCandidate &c : candidates)
    (c.rejected.empty() ? feasible : rejected).push_back(candidateJson(c));
  return llvm::json::Object{{"considered", (int64_t)candidates.size()},
                            {"ranked", std::move(feasible)},
                            {"rejected", std::move(rejected)}};
}

void PlanSearch::print(llvm::raw_ostream &os) const {
  if (!searched())
    return;
  const PlanCandidate &chosen = candidates.front();
  os << "planner: chose " << chosen.describe() << " of " << candidates.size()
     << " candidates, "
     << llvm::formatv("{0:F0}", chosen.samplesPerSecond) << " samples/s\n";
  int shown = 0;
  for (const PlanCandidate &c : llvm::drop_begin(candidates)) {
    if (!c.rejected.empty() || shown == 3)
      break;
    os << "  next: " << c.describe() << ", "
       << llvm::formatv("{0:F0}", c.samplesPerSecond) << " samples/s\n";
    ++shown;
  }
  int rejected = 0;
  for (const PlanCandidate &c : candidates)
    if (!c.rejected.empty() && rejected++ < 5)
      os << "  rejected: " << c.describe() << ": " << c.rejected << "\n";
  if (rejected > 5)
    os << "  ... and " << rejected - 5 << " more rejected (plan.json)\n";
}
