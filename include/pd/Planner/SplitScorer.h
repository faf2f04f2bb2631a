//===- SplitScorer.h - Pricing the candidates of one split ------*- C++ -*-===//
//
// The candidates sharing a microbatch size b, depth d and width w share the
// planner's cuts and, per recomputing set, the stage model; each schedule
// and m is priced from that model by the simulator. A SplitScorer does
// that for one (b, d, w) and touches nothing else, so the plan search
// scores the splits in parallel.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_SPLITSCORER_H
#define PD_PLANNER_SPLITSCORER_H

#include "pd/Planner/Candidates.h"
#include "pd/Planner/DeviceSpec.h"
#include "pd/Planner/ProgramGraph.h"
#include "pd/Planner/StageModel.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::pd {

class SplitScorer {
public:
  SplitScorer(const ProgramGraph &graph, int64_t stages, int64_t replicas,
              const CompilerOptions &o, const DeviceSpec &spec, int64_t budget)
      : graph(graph), stages(stages), replicas(replicas), o(o), spec(spec),
        budget(budget) {}

  /// Fills in c's cuts, recomputing stages and memory and, unless
  /// `pinned`, its throughput or why it is rejected (a stage over the
  /// budget, a schedule that would deadlock, a split the passes reject).
  void evaluate(PlanCandidate &c, bool pinned);
  /// The stage model of an evaluated candidate (null if it had none).
  const PipelineSummary *pipelineOf(const PlanCandidate &c) const;

private:
  /// A stage model, or why the passes would reject the split.
  struct Modeled {
    std::optional<PipelineSummary> pipeline;
    std::string error;
  };

  const std::vector<int64_t> &positions();
  const Modeled &model(const std::vector<int64_t> &recompute);
  std::vector<int64_t> recomputeSet(const PlanCandidate &c);
  bool parametersExceedBudget(PlanCandidate &c) const;

  const ProgramGraph &graph;
  int64_t stages, replicas;
  const CompilerOptions &o;
  const DeviceSpec &spec;
  int64_t budget;
  std::optional<std::vector<int64_t>> cutPositions;
  std::map<std::vector<int64_t>, Modeled> models;
};

} // namespace mlir::pd

#endif // PD_PLANNER_SPLITSCORER_H
