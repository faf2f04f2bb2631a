//===- Phases.h - Running pdc's phases on a module --------------*- C++ -*-===//
//
// The MLIR phases as pdc runs them: autodiff, then stages (with the
// planner's cuts and recomputing stages) and buffers. Shared by runCompiler
// and the plan search, which differentiates the model at other microbatch
// sizes.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_PHASES_H
#define PD_LIB_PIPELINE_PHASES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "pd/Support/CompilerOptions.h"
#include "pd/Pipeline/Pipeline.h"

namespace mlir::pd {

/// Fuses decomposed ops and differentiates @main. With `commandLine`, the
/// MLIR pass-manager flags of the command line apply (the run whose IR pdc
/// prints or compiles, not the search's other microbatch sizes); passes are
/// timed under `timing`.
LogicalResult runAutodiff(ModuleOp module, bool commandLine,
                          TimingScope timing = {},
                          ArrayRef<MatMulRowSplit> splits = {});

/// Partitions the differentiated module at `cuts` (pd.op_id starting each
/// stage after the first; empty: the pass's FLOP balance), outlines the
/// stages, recomputes `recomputeStages`, and, unless `emit` stops at the
/// stages, allocates the buffers; with the command line's pass-manager
/// flags.
LogicalResult runStagePhases(ModuleOp module, const CompilerOptions &o,
                             ArrayRef<int64_t> cuts,
                             ArrayRef<int64_t> recomputeStages, EmitKind emit,
                             TimingScope timing = {},
                             bool profileMarks = false);

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_PHASES_H
