//===- PlanSearch.h - pdc chooses the pipeline ------------------*- C++ -*-===//
//
// The choices the command line leaves open (depth d and width w with
// d x w = N devices, microbatches m, schedule, recomputation) searched over
// by compiling each candidate's phases on a copy of the module and
// simulating it: the highest predicted throughput whose every stage fits
// the device memory wins. Pinned flags fix their dimension.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_PLANSEARCH_H
#define PD_LIB_PIPELINE_PLANSEARCH_H

#include "mlir/IR/BuiltinOps.h"
#include "pd/Pipeline/Compiler.h"
#include "pd/Support/CompilerOptions.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::pd {

struct PlanCandidate {
  int64_t stages = 1, replicas = 1, microbatches = 1, microbatch = 1;
  Schedule schedule = Schedule::TwoBW;
  Recompute recompute = Recompute::None;
  double samplesPerSecond = 0, stepSeconds = 0;
  int64_t peakStageBytes = 0; ///< The largest stage's arena.
  /// The stages that recompute (under recompute=auto, those chosen).
  std::vector<int64_t> recomputeStages;
  std::string rejected;       ///< Why it cannot run; empty if it can.

  /// "d=2 w=1 m=4 b=8 2bw recompute=none" ("recompute=stages 1,3" for
  /// auto).
  std::string describe() const;
};

struct PlanSearch {
  /// Every candidate considered, the feasible ones by decreasing
  /// throughput first, then the rejected ones.
  std::vector<PlanCandidate> candidates;
  bool searched() const { return candidates.size() > 1; }
  /// The model imported at the chosen microbatch size, when it is not the
  /// one searchPlan was given.
  OwningOpRef<ModuleOp> chosenModule;

  /// plan.json's "search": the chosen plan, the next best, the rejections.
  llvm::json::Value toJson() const;
  /// The lines pdc prints about the search.
  void print(llvm::raw_ostream &os) const;
};

/// Searches the choices `o` leaves open and writes the best into `o`
/// (stages, replicas, microbatches, schedule, recompute). With every choice
/// pinned the single candidate is not evaluated here. Fails with an error
/// naming the first rejection when no candidate can run.
FailureOr<PlanSearch> searchPlan(ModuleOp module, CompilerOptions &o,
                                 const ModelImporter &reimport);

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_PLANSEARCH_H
