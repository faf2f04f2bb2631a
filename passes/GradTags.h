//===- GradTags.h - pd.grad_of kept valid when ops fuse ---------*- C++ -*-===//
//
// Passes that run after pd-autodiff and fold a forward op into another
// (pd-fold-transposes-into-matmul, pd-fold-slices-into-matmul,
// pd-fold-broadcasts-into-matmul, pd-fuse-elementwise-chains) record
// which forward op absorbed it; gradient ops that still name the vanished
// op in pd.grad_of are then pointed at the absorbing one, so that
// pd-partition-stages keeps them on its stage.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_GRADTAGS_H
#define PD_PASSES_GRADTAGS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::pd {

/// Forward op ids folded into another op: vanished id -> absorbing id.
using Absorbed = llvm::DenseMap<int64_t, int64_t>;

/// The forward op `op` is (pd.op_id) or differentiates (pd.grad_of).
std::optional<int64_t> forwardIdOf(Operation *op);

/// Points every pd.grad_of that names a forward op no longer in `module`
/// at the op that absorbed it (following chains of absorptions).
void retagOrphanedGradients(ModuleOp module, const Absorbed &absorbed);

/// Applies `patterns` to `module` greedily (no region simplification),
/// then retagOrphanedGradients with what they recorded in `absorbed`.
LogicalResult foldAndRetag(ModuleOp module, RewritePatternSet &&patterns,
                           const Absorbed &absorbed);

/// The smallest pd.op_id above every one in `module`: the first id for the
/// forward ops a pass makes.
int64_t nextFreeOpId(ModuleOp module);

} // namespace mlir::pd

#endif // PD_PASSES_GRADTAGS_H
