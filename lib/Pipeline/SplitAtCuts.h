//===- SplitAtCuts.h - GEMMs split by rows at the stage cuts ----*- C++ -*-===//
//
// A stage cut falls between ops, so the chosen pipeline is balanced only
// to within the op at each cut. When the chosen plan is unbalanced and a
// 2-D pd.matmul (its forward and gradient GEMMs) is where a balanced cut
// would fall, the model is imported again with that matmul split by rows
// there (pd-split-matmul-rows) and the same candidate is evaluated on it;
// the split model replaces the module when the stage model predicts it
// faster.
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
