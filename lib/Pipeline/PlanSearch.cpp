//===- PlanSearch.cpp - pdc chooses the pipeline --------------------------===//
//
// The candidates (pd/Planner/Candidates.h) are scored on the model at each
// microbatch size (PlanVariants.h), one SplitScorer per (b, d, w) in
// parallel (pd/Planner/SplitScorer.h), and ranked (isBetter). Nothing is
// compiled until the chosen plan.
//
//===----------------------------------------------------------------------===//

#include "PlanSearch.h"
#include "PlanVariants.h"
#include "pd/Planner/Planner.h"
#include "pd/Planner/ProgramGraph.h"
#include "pd/Planner/SplitScorer.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Threading.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>

using namespace mlir;
using namespace mlir::pd;

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

/// The error when every candidate is rejected: when some were too large
/// for the memory, the smallest of those and what it needs (modelled now
/// if only its parameters were weighed); otherwise the first candidate's
/// reason.
static LogicalResult
reportNoPlan(ModuleOp module, ArrayRef<PlanCandidate> candidates,
             int64_t budget,
             std::map<std::tuple<int64_t, int64_t, int64_t>, SplitGroup> &groups) {
  const PlanCandidate *smallest = nullptr;
  for (const PlanCandidate &c : candidates)
    if (c.overBudget &&
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
  search.candidates = enumerateCandidates(o, microbatchSizes(o, bool(reimport)));
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
