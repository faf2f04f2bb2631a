//===- Phases.h - Running pdc's phases on a module --------------*- C++ -*-===//
//
// The MLIR phases as pdc runs them: autodiff; the planner's cuts; stages
// (with the recomputing stages) and buffers. Shared by runCompiler and the
// plan search, which runs them on copies of the module.
//
//===----------------------------------------------------------------------===//

#ifndef PD_LIB_PIPELINE_PHASES_H
#define PD_LIB_PIPELINE_PHASES_H

#include "mlir/IR/BuiltinOps.h"
#include "pd/Support/CompilerOptions.h"

#include <vector>

namespace mlir::pd {

/// Runs the phases up to `emit`'s on `module`; the pass-manager flags of the
/// command line apply only when `emit` is the phase pdc prints (not to the
/// copies the planner compiles).
LogicalResult runPhases(ModuleOp module, const CompilerOptions &o,
                        ArrayRef<int64_t> recomputeStages, EmitKind emit);

/// The stages that recompute their activations under `o.recompute`.
FailureOr<std::vector<int64_t>> chooseRecomputeStages(ModuleOp module,
                                                      const CompilerOptions &o);

} // namespace mlir::pd

#endif // PD_LIB_PIPELINE_PHASES_H
