//===- PlanSearch.cpp - pdc chooses the pipeline --------------------------===//
//
// Candidates are enumerated with the defaults first (2bw, no recomputation,
// shallow pipelines first); a later one wins if it is more than 0.5%
// faster, or as fast and needs less memory on its largest stage (at d = 1,
// flush keeps one weight version where 2bw keeps two). The model is
// differentiated once per microbatch size and read into a program graph;
// each (b, d, w) is split once by the planner's partition, each
// recomputing set modelled once (StageModel.h), and each schedule and m
// priced from that model by the simulator. Nothing is compiled until the
// chosen plan.
//
//===----------------------------------------------------------------------===//

#include "PlanSearch.h"
#include "PlanScoring.h"
#include "PlanVariants.h"
#include "pd/Planner/Planner.h"
#include "pd/Planner/ProgramGraph.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <thread>

using namespace mlir;
using namespace mlir::pd;

/// "0-5,7,9-10": runs of consecutive stages as ranges.
static std::string stageRanges(ArrayRef<int64_t> stages) {
  std::string out;
  for (size_t i = 0; i < stages.size();) {
    size_t j = i;
    while (j + 1 < stages.size() && stages[j + 1] == stages[j] + 1)
      ++j;
    if (!out.empty())
      out += ",";
    out += std::to_string(stages[i]);
    if (j > i)
      out += (j == i + 1 ? "," : "-") + std::to_string(stages[j]);
    i = j + 1;
  }
  return out;
}

std::string PlanCandidate::describe() const {
  std::string what = stringifyRecompute(recompute).str();
  if (recompute == Recompute::Auto)
    what = "stages " + stageRanges(recomputeStages);
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

/// More than 0.5% faster, or as fast within 0.5% and smaller.
static bool isBetter(const PlanCandidate &c, const PlanCandidate &best) {
  if (c.samplesPerSecond > best.samplesPerSecond * 1.005)
    return true;
  return c.samplesPerSecond >= best.samplesPerSecond * 0.995 &&
         c.peakStageBytes < best.peakStageBytes;
}

/// Everything pinned: the one candidate is modelled for its cuts and
/// recomputing stages; if the model cannot evaluate it, or its planned
/// split would deadlock, the passes split it by FLOPs and the compiled
/// plan's checks report what is wrong.
static FailureOr<PlanSearch> pinnedPlan(ModuleOp module, CompilerOptions &o,
                                        const Variant &v, const DeviceSpec &spec,
                                        int64_t budget, PlanSearch search) {
  PlanCandidate &only = search.candidates.front();
  if (!only.rejected.empty())
    return module.emitError(only.rejected);
  if (v.graph) {
    SplitScorer scorer(*v.graph, only.stages, only.replicas, o, spec, budget);
    scorer.evaluate(only, /*pinned=*/true);
    if (const PipelineSummary *p = scorer.pipelineOf(only))
      search.model = *p;
  }
  if (!v.graph || !only.rejected.empty()) {
    only.rejected.clear();
    only.cuts.clear();
    search.model.reset();
    only.recomputeStages.clear();
    if (only.recompute == Recompute::Full)
      for (int64_t s = 0; s < only.stages; ++s)
        only.recomputeStages.push_back(s);
  }
  o = withCandidate(o, only);
  return search;
}

/// The candidates of one split and their scorer.
struct SplitGroup {
  const Variant *variant = nullptr;
  std::vector<PlanCandidate *> candidates;
  std::unique_ptr<SplitScorer> scorer;
};

/// Scores every candidate not rejected yet: the splits' groups in
/// parallel (the context's threads; --mlir-disable-threading scores them
/// in turn).
static std::map<std::tuple<int64_t, int64_t, int64_t>, SplitGroup>
scoreCandidates(MLIRContext *ctx, std::vector<PlanCandidate> &candidates,
                Variants &variants, const CompilerOptions &o,
                const DeviceSpec &spec, int64_t budget, TimingScope &timing) {
  std::map<std::tuple<int64_t, int64_t, int64_t>, SplitGroup> groups;
  for (PlanCandidate &c : candidates)
    if (c.rejected.empty())
      groups[{c.microbatch, c.stages, c.replicas}].candidates.push_back(&c);
  std::vector<SplitGroup *> work;
  for (auto &[key, group] : groups) {
    group.variant = &variants.at(std::get<0>(key));
    if (!group.variant->graph) {
      for (PlanCandidate *c : group.candidates)
        c->rejected = group.variant->error;
      continue;
    }
    group.scorer = std::make_unique<SplitScorer>(
        *group.variant->graph, std::get<1>(key), std::get<2>(key), o, spec,
        budget);
    work.push_back(&group);
  }
  TimingScope scoring = timing.nest("score candidates");
  parallelForEach(ctx, work, [](SplitGroup *group) {
    for (PlanCandidate *c : group->candidates)
      group->scorer->evaluate(*c, /*pinned=*/false);
  });
  return groups;
}

/// The error when every candidate is rejected: for memory, the smallest
/// candidate and what it needs (modelled now if only its parameters were
/// weighed); otherwise the first candidate's reason.
static LogicalResult
reportNoPlan(ModuleOp module, ArrayRef<PlanCandidate> candidates,
             int64_t budget,
             std::map<std::tuple<int64_t, int64_t, int64_t>, SplitGroup> &groups) {
  const PlanCandidate *smallest = nullptr;
  for (const PlanCandidate &c : candidates)
    if (c.peakStageBytes > 0 &&
        (!smallest || c.peakStageBytes < smallest->peakStageBytes))
      smallest = &c;
  if (!smallest)
    return module.emitError("no plan can run: ")
           << candidates.front().describe() << ": "
           << candidates.front().rejected;
  PlanCandidate exact = *smallest;
  if (exact.boundOnly) {
    exact.rejected.clear();
    exact.boundOnly = false;
    groups.at({exact.microbatch, exact.stages, exact.replicas})
        .scorer->evaluate(exact, /*pinned=*/true);
  }
  return module.emitError("no plan fits the device memory (")
         << formatBytes(budget) << "): the smallest, " << exact.describe()
         << ", needs " << formatBytes(exact.peakStageBytes)
         << " on its largest stage";
}

FailureOr<PlanSearch> mlir::pd::searchPlan(ModuleOp module,
                                           CompilerOptions &o,
                                           const ModelImporter &reimport,
                                           OpProfiler &profiler,
                                           TimingScope &timing) {
  DeviceSpec spec = cantFail(loadDeviceSpec(o));
  int64_t budget = o.deviceMemory > 0 ? o.deviceMemory : spec.memoryBytes;
  PlanSearch search;
  search.candidates = enumerate(o, microbatchSizes(o, bool(reimport)));
  Variants variants(module, o, reimport, spec, profiler, timing);
  if (search.candidates.size() == 1)
    return pinnedPlan(module, o, variants.at(o.microbatch), spec, budget,
                      std::move(search));
  auto groups = scoreCandidates(module.getContext(), search.candidates,
                                variants, o, spec, budget, timing);
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
    return reportNoPlan(module, search.candidates, budget, groups);
  search.model =
      *groups.at({best->microbatch, best->stages, best->replicas})
           .scorer->pipelineOf(*best);
  if (best->microbatch != o.microbatch) {
    Variant &chosen = variants.imported(best->microbatch);
    if (!chosen.owned)
      return module.emitError("cannot import the model at microbatch ")
             << best->microbatch << ": " << chosen.error;
    search.chosenModule = std::move(chosen.owned);
  }
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
