//===- SplitAtCuts.h - GEMMs split by rows at the stage cuts ----*- C++ -*-===//
//
// A stage cut falls between ops, so the chosen pipeline is balanced only
// to within the op at each cut. When a 2-D pd.matmul there (its forward
// and gradient GEMMs) is heavier than the imbalance it leaves, the model is
// imported again with that matmul split by rows (pd-split-matmul-rows), the
// rows chosen to even out the two stages, and the same candidate is
// evaluated on it; the split model replaces the module when the stage
// model predicts it faster.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_SPLITATCUTS_H
#define PD_LIB_PIPELINE_SPLITATCUTS_H

#include "OpProfile.h"
#include "PlanSearch.h"
#include "pd/Pipeline/Pipeline.h"

namespace mlir::pd {

/// Splits the GEMMs at the chosen plan's cuts where that balances it:
/// with a split, `module` then holds the split model, and `search` the
/// re-evaluated plan (its chosen candidate and model) and the splits
/// (splitGemms). Leaves both as they were when no split helps.
void splitGemmsAtCuts(ModuleOp module, const CompilerOptions &o,
                      PlanSearch &search, const ModelImporter &reimport,
                      OpProfiler &profiler, TimingScope &timing);

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_SPLITATCUTS_H
