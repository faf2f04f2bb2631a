//===- GradTags.h - pd.grad_of kept valid when ops fuse ---------*- C++ -*-===//
//
// Passes that run after pd-autodiff and fold a forward op into another
// (pd-fold-transposes-into-matmul, pd-fold-slices-into-matmul,
// pd-fold-broadcasts-into-matmul, pd-fuse-elementwise-chains) record
// which forward op absorbed it; gradient ops that still name the vanished
// op in pd.grad_of are then pointed at the absorbing one, so that
// pd-partition-stages keeps them on its stage. The views such a pass
// makes (ForwardViews) carry the tags of the ops they stand in for.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_GRADTAGS_H
#define PD_PASSES_GRADTAGS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <tuple>

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

/// The views (reshapes, transposes) a pass that folds ops into GEMMs makes
/// of a tensor: each made once, right after the tensor (so that it
/// dominates every reader), in the phase of the op it stands in for: a
/// forward op with a fresh pd.op_id, or a gradient op of that op's forward
/// op.
class ForwardViews {
public:
  explicit ForwardViews(ModuleOp module) : nextId(nextFreeOpId(module)) {}

  /// The OpTy(x, args...) of result type `type` (`key` tells views of one
  /// type apart: a transpose's perm).
  template <typename OpTy, typename... Args>
  Value get(PatternRewriter &rewriter, Operation *standsFor, Value x,
            RankedTensorType type, Attribute key, Args... args) {
    // Still one of x's users: the greedy driver may have erased it since.
    if (Operation *known = made.lookup({x, type, key}))
      for (Operation *user : x.getUsers())
        if (user == known)
          return known->getResult(0);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointAfterValue(x);
    Operation *view = rewriter.create<OpTy>(x.getLoc(), type, x, args...);
    tagLike(view, standsFor);
    made[{x, type, key}] = view;
    return view->getResult(0);
  }

private:
  void tagLike(Operation *view, Operation *standsFor);

  DenseMap<std::tuple<Value, Type, Attribute>, Operation *> made;
  int64_t nextId;
};

} // namespace mlir::pd

#endif // PD_PASSES_GRADTAGS_H
