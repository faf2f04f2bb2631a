//===- Candidates.h - The plans the search weighs ---------------*- C++ -*-===//
//
// The candidate plans for the choices the command line leaves open (depth
// d and width w with d x w = N devices, microbatch size b, microbatches m,
// schedule, recomputation), defaults first, and the rule that ranks them.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_CANDIDATES_H
#define PD_PLANNER_CANDIDATES_H

#include "pd/Support/CompilerOptions.h"
#include "llvm/ADT/ArrayRef.h"

#include <string>
#include <vector>

namespace mlir::pd {

struct PlanCandidate {
  int64_t stages = 1, replicas = 1, microbatches = 1, microbatch = 1;
  Schedule schedule = Schedule::TwoBW;
  Recompute recompute = Recompute::None;
  double samplesPerSecond = 0, stepSeconds = 0;
  int64_t peakStageBytes = 0; ///< The largest stage's arena.
  /// peakStageBytes is only a lower bound: the candidate was rejected for
  /// its parameters alone, without modelling its split.
  bool boundOnly = false;
  /// Rejected because a stage exceeds the device memory (not for another
  /// reason found after its memory was modelled).
  bool overBudget = false;
  /// The stages that recompute (under recompute=auto, those chosen).
  std::vector<int64_t> recomputeStages;
  /// The pd.op_id starting each stage after the first.
  std::vector<int64_t> cuts;
  std::string rejected; ///< Why it cannot run; empty if it can.

  /// "d=2 w=1 m=4 b=8 2bw recompute=none" ("recompute=stages 1,3" for
  /// auto).
  std::string describe() const;
};

/// Microbatch sizes to try: the imported one, and with --global-batch
/// (which keeps the training problem fixed) and no --microbatch, the powers
/// of two from a quarter to four times it that divide the global batch.
std::vector<int64_t> microbatchSizes(const CompilerOptions &o,
                                     bool canReimport);

/// The candidates `o` leaves open, defaults first (2bw, no recomputation,
/// shallow pipelines first); those that cannot run (m < d under 2bw, a
/// global batch that b x w does not divide) already rejected.
std::vector<PlanCandidate> enumerateCandidates(const CompilerOptions &o,
                                               llvm::ArrayRef<int64_t> sizes);

/// More than 0.5% faster, or as fast within 0.5% and smaller on its
/// largest stage (at d = 1 flush, with one weight version, beats 2bw).
bool isBetter(const PlanCandidate &c, const PlanCandidate &best);

/// `o` with the choices of `c` filled in.
CompilerOptions withCandidate(CompilerOptions o, const PlanCandidate &c);

/// "3008 bytes", or "19.3 GiB" for sizes of 10 KiB and more.
std::string formatBytes(int64_t bytes);

} // namespace mlir::pd

#endif // PD_PLANNER_CANDIDATES_H
