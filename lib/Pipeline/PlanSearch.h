//===- PlanSearch.h - pdc chooses the pipeline ------------------*- C++ -*-===//
//
// The choices the command line leaves open (depth d and width w with
// d x w = N devices, microbatch size b, microbatches m, schedule,
// recomputation per stage) searched over without compiling: each
// candidate's split comes from the planner's partition of the program
// graph, its memory and time from the stage model (pd/Planner/StageModel.h)
// and the simulator. The highest predicted throughput whose every stage
// fits the device memory wins. Pinned flags fix their dimension.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_PLANSEARCH_H
#define PD_LIB_PIPELINE_PLANSEARCH_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "pd/Pipeline/Compiler.h"
#include "pd/Pipeline/Pipeline.h"
#include "pd/Planner/Candidates.h"
#include "pd/Planner/StageModel.h"
#include "pd/Support/CompilerOptions.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace mlir::pd {

class OpProfiler;

struct PlanSearch {
  /// Every candidate considered, the chosen one first, then the feasible
  /// ones by decreasing throughput, then the rejected ones. A single
  /// candidate when the command line pins every choice.
  std::vector<PlanCandidate> candidates;
  bool searched() const { return candidates.size() > 1; }
  /// The chosen plan as the stage model predicts it (no value if the model
  /// could not evaluate a pinned plan; the passes then report why).
  std::optional<PipelineSummary> model;
  /// The model differentiated at the chosen microbatch size, when it is
  /// not the one searchPlan was given.
  OwningOpRef<ModuleOp> chosenModule;
  /// GEMMs split by rows at the chosen plan's cuts (SplitAtCuts.h).
  std::vector<MatMulRowSplit> splitGemms;

  /// plan.json's "search": the chosen plan, the next best, the rejections.
  llvm::json::Value toJson() const;
  /// The lines pdc prints about the search.
  void print(llvm::raw_ostream &os) const;
};

/// Searches the choices `o` leaves open on the differentiated `module` and
/// writes the best into `o` (stages, replicas, microbatch, microbatches,
/// schedule, recompute). With every choice pinned the single candidate is
/// modelled but not rejected (the compiled plan's checks report why it
/// cannot run). Fails with an error naming the first rejection when no
/// candidate can run.
FailureOr<PlanSearch> searchPlan(ModuleOp module, CompilerOptions &o,
                                 const ModelImporter &reimport,
                                 OpProfiler &profiler, TimingScope &timing);

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_PLANSEARCH_H
