//===- Pipeline.h - The pass pipelines of pdc -------------------*- C++ -*-===//
//
// The phases of the training compiler as pass pipelines, shared by the pdc
// driver (which stops after the phase --emit names) and pd-opt, where the
// whole sequence is registered as `pd-training-pipeline`.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PIPELINE_PIPELINE_H
#define PD_PIPELINE_PIPELINE_H

#include "dialects/PD/IR/PDEnumOptions.h"
#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

namespace mlir::pd {

/// The options the phases after import need.
struct TrainingPipelineOptions {
  int64_t stages = 1;
  int64_t microbatches = 0;
  Schedule schedule = Schedule::TwoBW;
  Optimizer optimizer = Optimizer::SGD;
  /// Stages whose backward recomputes their forward's activations.
  std::vector<int64_t> recomputeStages;
  /// The planner's split (pd-partition-stages' `cuts`); empty: the pass
  /// balances FLOPs itself.
  std::vector<int64_t> stageCuts;
  /// A profiling stage (pdc --profile): time each op carrying
  /// pd.profile_id.
  bool profileMarks = false;
};

/// Phase 1: reverse-mode differentiation of the loss.
/// A pd.matmul split by rows before differentiation (pd-split-matmul-rows)
/// so that a stage cut can fall inside it: its position in @main's body
/// (its pd.op_id) and the rows of its first half.
struct MatMulRowSplit {
  int64_t opId = 0, rows = 0;
};

void addAutodiffPhase(OpPassManager &pm,
                      llvm::ArrayRef<MatMulRowSplit> splits = {});
/// Phase 2: balanced stage assignment and per-stage function outlining.
void addStagesPhase(OpPassManager &pm, const TrainingPipelineOptions &options);
/// Phase 3: the 2BW memory plan of every stage.
void addBuffersPhase(OpPassManager &pm, const TrainingPipelineOptions &options);

/// Registers `pd-training-pipeline` (all three phases) for pd-opt.
void registerTrainingPipeline();

} // namespace mlir::pd

#endif // PD_PIPELINE_PIPELINE_H
