//===- SplitScorer.cpp - Pricing the candidates of one split --------------===//

#include "pd/Planner/SplitScorer.h"
#include "pd/Planner/Partition.h"
#include "pd/Planner/Planner.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::pd;

/// Chain positions of the planner's split into d stages (ranks w apart).
const std::vector<int64_t> &SplitScorer::positions() {
  if (!cutPositions)
    cutPositions = graph.cutPositions(
        splitOpChain(graph.chain, stages, spec, replicas, o.stageTimeScale));
  return *cutPositions;
}

const SplitScorer::Modeled &
SplitScorer::model(const std::vector<int64_t> &recompute) {
  auto [it, inserted] = models.try_emplace(recompute);
  if (inserted) {
    llvm::Expected<PipelineSummary> p =
        modelStages(graph, positions(), recompute, o.optimizer);
    if (p)
      it->second.pipeline = std::move(*p);
    else
      it->second.error = llvm::toString(p.takeError());
  }
  return it->second;
}

/// none: no stage; full: every stage; auto: the stages whose arena without
/// recomputation exceeds the budget under c's schedule.
std::vector<int64_t> SplitScorer::recomputeSet(const PlanCandidate &c) {
  std::vector<int64_t> set;
  if (c.recompute == Recompute::Full)
    for (int64_t s = 0; s < stages; ++s)
      set.push_back(s);
  if (c.recompute != Recompute::Auto)
    return set;
  const Modeled &none = model({});
  if (!none.pipeline)
    return set;
  PipelineSummary p = *none.pipeline;
  p.applySchedule(c.schedule, c.microbatches);
  for (int64_t s = 0; s < stages; ++s)
    if (p.stages[s].regions.total() > budget)
      set.push_back(s);
  return set;
}

/// Some stage holds at least 1/d of the parameters, each with its weight
/// versions, gradient and optimizer state: if that alone exceeds the
/// budget, the split need not be modelled.
bool SplitScorer::parametersExceedBudget(PlanCandidate &c) const {
  int64_t perParamByte = weightVersions(c.schedule) + 1 +
                         optimizerStateTensors(o.optimizer);
  int64_t atLeast =
      (graph.alignedParamBytes() + stages - 1) / stages * perParamByte;
  if (budget <= 0 || atLeast <= budget)
    return false;
  c.rejected = llvm::formatv("a stage needs at least {0} for its share of "
                             "the parameters > {1}",
                             formatBytes(atLeast), formatBytes(budget));
  c.peakStageBytes = atLeast;
  c.boundOnly = true;
  c.overBudget = true;
  return true;
}

void SplitScorer::evaluate(PlanCandidate &c, bool pinned) {
  if (!pinned && parametersExceedBudget(c))
    return;
  c.recomputeStages = recomputeSet(c);
  const Modeled &m = model(c.recomputeStages);
  if (!m.pipeline) {
    c.rejected = m.error;
    return;
  }
  for (int64_t p : positions())
    c.cuts.push_back(graph.chain.opIds[p]);
  PipelineSummary p = *m.pipeline;
  p.applySchedule(c.schedule, c.microbatches);
  c.peakStageBytes = p.peakStageBytes();
  if (!pinned)
    for (auto [s, stage] : llvm::enumerate(p.stages))
      if (budget > 0 && stage.regions.total() > budget) {
        c.rejected = llvm::formatv("stage {0} needs {1} > {2}", s,
                                   formatBytes(stage.regions.total()),
                                   formatBytes(budget));
        c.overBudget = true;
        return;
      }
  llvm::Expected<PlanPrediction> sim =
      simulatePlan(p, withCandidate(o, c), spec);
  if (!sim) {
    c.rejected = llvm::toString(sim.takeError());
    return;
  }
  c.samplesPerSecond = sim->samplesPerSecond;
  c.stepSeconds = sim->result.stepSeconds;
}

const PipelineSummary *SplitScorer::pipelineOf(const PlanCandidate &c) const {
  auto it = models.find(c.recomputeStages);
  if (it == models.end() || !it->second.pipeline)
    return nullptr;
  return &*it->second.pipeline;
}
