//===- StageModel.h - Memory and time of a split, without compiling it -*- C++ -*-===//
//
// What each stage of a pipeline holds and computes, for any split of a
// ProgramGraph and any set of recomputing stages: the stage functions that
// pd-outline-stages, pd-recompute-forward and pd-accumulate-in-place would
// build are followed op by op on the graph's arrays, and their arena sized
// by the rules of pd-allocate-buffers (pd/Support/ArenaRules.h). The result
// is the exact allocation of that plan, in time linear in the program, so
// that the plan search can score thousands of candidates; pdc compares it
// with the real buffer plan of the plan it writes.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_STAGEMODEL_H
#define PD_PLANNER_STAGEMODEL_H

#include "pd/Planner/ProgramGraph.h"
#include "pd/Support/ArenaRules.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::pd {

/// A tensor a stage receives per microbatch (a pd.recv).
struct StageRecv {
  int64_t peer = 0, bytes = 0;
  bool forward = true; ///< In the forward function (else the backward).
  bool operator<(const StageRecv &o) const {
    return std::tie(peer, bytes, forward) < std::tie(o.peer, o.bytes, o.forward);
  }
  bool operator==(const StageRecv &o) const {
    return peer == o.peer && bytes == o.bytes && forward == o.forward;
  }
};

/// One stage as the planner needs it: its arena, the seconds of its
/// forward and backward functions, what it receives.
struct StageSummary {
  StageRegions regions;
  double forwardSeconds = 0, backwardSeconds = 0;
  std::vector<StageRecv> recvs;
  bool recompute = false;
  /// Aligned bytes of the parameters it shares with other stages.
  int64_t alignedTiedBytes = 0;
};

/// A pipeline's stages and its tied parameters: for each set of owner
/// stages (more than one), the bytes of the parameters they share.
struct PipelineSummary {
  std::vector<StageSummary> stages;
  std::map<std::vector<int64_t>, int64_t> tiedBytes;

  /// Weight versions, stash slots and tied-gradient staging of `schedule`
  /// with m microbatches.
  void applySchedule(Schedule schedule, int64_t microbatches);
  /// The largest stage's arena.
  int64_t peakStageBytes() const;
};

/// The stages of `graph` cut before the chain positions `cuts` (ascending),
/// the listed stages recomputing their forward, parameters carrying
/// optimizer state for `optimizer`; regions with one weight version and one
/// stash slot (see applySchedule). Fails with the reason the passes would
/// give (a parameter read feeding two stages, a forward op using a
/// gradient of another stage, a recomputed op with side effects).
llvm::Expected<PipelineSummary> modelStages(const ProgramGraph &graph,
                                            ArrayRef<int64_t> cuts,
                                            ArrayRef<int64_t> recomputeStages,
                                            Optimizer optimizer);

/// The first difference between two summaries of the same plan (a region's
/// bytes, a function's seconds, what a stage receives, the tied
/// parameters), e.g. "stage 1 workspace: 4096 vs 4160 bytes"; none if they
/// agree.
std::optional<std::string> describeDifference(const PipelineSummary &a,
                                              const PipelineSummary &b);

} // namespace mlir::pd

#endif // PD_PLANNER_STAGEMODEL_H
