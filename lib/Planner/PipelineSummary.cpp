//===- PipelineSummary.cpp - A pipeline's modelled memory and time --------===//
//
// The schedule's share of a modelled pipeline's arena, its peak, and the
// difference between two summaries that pdc reports when the stage model
// and a compiled plan disagree.
//
//===----------------------------------------------------------------------===//

#include "pd/Planner/StageModel.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace mlir::pd;

void PipelineSummary::applySchedule(Schedule schedule, int64_t microbatches) {
  int64_t d = stages.size();
  for (int64_t s = 0; s < d; ++s) {
    stages[s].regions.weightVersions = weightVersions(schedule);
    stages[s].regions.stashSlots = stashSlots(schedule, d, s, microbatches);
    stages[s].regions.tieGrads =
        tiedGradsBytes(schedule, stages[s].alignedTiedBytes);
  }
}

int64_t PipelineSummary::peakStageBytes() const {
  int64_t peak = 0;
  for (const StageSummary &s : stages)
    peak = std::max(peak, s.regions.total());
  return peak;
}

/// Whether two sums of the same op costs agree (summed in one order, they
/// are equal; a small relative slack covers another order).
static bool sameSeconds(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b));
}

std::optional<std::string>
mlir::pd::describeDifference(const PipelineSummary &a,
                             const PipelineSummary &b) {
  if (a.stages.size() != b.stages.size())
    return llvm::formatv("{0} vs {1} stages", a.stages.size(),
                         b.stages.size()).str();
  for (auto [s, pair] : llvm::enumerate(llvm::zip(a.stages, b.stages))) {
    const StageSummary &x = std::get<0>(pair), &y = std::get<1>(pair);
    const StageRegions &r = x.regions, &q = y.regions;
    struct Field {
      const char *name;
      int64_t a, b;
    } fields[] = {{"weights", r.weights, q.weights},
                  {"weight versions", r.weightVersions, q.weightVersions},
                  {"grads", r.grads, q.grads},
                  {"optimizer", r.optimizer, q.optimizer},
                  {"state", r.state, q.state},
                  {"stash slot", r.stashSlot, q.stashSlot},
                  {"stash slots", r.stashSlots, q.stashSlots},
                  {"workspace", r.workspace, q.workspace},
                  {"comm", r.comm, q.comm},
                  {"tied gradients", r.tieGrads, q.tieGrads}};
    for (const Field &f : fields)
      if (f.a != f.b)
        return llvm::formatv("stage {0} {1}: {2} vs {3}", s, f.name, f.a, f.b)
            .str();
    if (x.recompute != y.recompute)
      return llvm::formatv("stage {0} recomputation: {1} vs {2}", s,
                           x.recompute, y.recompute)
          .str();
    if (!sameSeconds(x.forwardSeconds, y.forwardSeconds) ||
        !sameSeconds(x.backwardSeconds, y.backwardSeconds))
      return llvm::formatv("stage {0} seconds (forward, backward): {1:e}, "
                           "{2:e} vs {3:e}, {4:e}",
                           s, x.forwardSeconds, x.backwardSeconds,
                           y.forwardSeconds, y.backwardSeconds)
          .str();
    std::vector<StageRecv> rx = x.recvs, ry = y.recvs;
    llvm::sort(rx);
    llvm::sort(ry);
    if (rx != ry)
      return llvm::formatv("stage {0} receives {1} vs {2} tensors", s,
                           rx.size(), ry.size())
          .str();
  }
  if (a.tiedBytes != b.tiedBytes)
    return std::string("the tied parameters differ");
  return std::nullopt;
}
