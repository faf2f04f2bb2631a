//===- InsertProfileMarks.cpp - Timing the ops of a profiling stage -------===//
//
// pd-insert-profile-marks: a pd.profile_mark before every costed op that
// carries pd.profile_id, and one (id -1) before each stage function's
// return; the ids are removed. With every-op, a mark with a fresh id
// before every op that does work (pdc --instrument-ops).
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_INSERTPROFILEMARKSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct InsertProfileMarksPass
    : public mlir::pd::impl::InsertProfileMarksPassBase<
          InsertProfileMarksPass> {
  using InsertProfileMarksPassBase::InsertProfileMarksPassBase;
  void runOnOperation() override;
};

} // namespace

static void markFunction(func::FuncOp fn) {
  PDDialect::ProfileIdAttrHelper ids(fn.getContext());
  OpBuilder b(fn.getContext());
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      b.setInsertionPoint(&op);
      b.create<ProfileMarkOp>(op.getLoc(), b.getI64IntegerAttr(-1));
      continue;
    }
    IntegerAttr id = ids.getAttr(&op);
    if (!id)
      continue;
    ids.removeAttr(&op);
    if (!isa<CostOpInterface>(op))
      continue;
    b.setInsertionPoint(&op);
    b.create<ProfileMarkOp>(op.getLoc(), id);
  }
}

/// every-op: a mark numbered from `next` before every op of `fn` that does
/// work, -1 before its return.
static void markEveryOp(func::FuncOp fn, int64_t &next) {
  OpBuilder b(fn.getContext());
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    bool end = op.hasTrait<OpTrait::IsTerminator>();
    if (!end && runsNoKernel(&op))
      continue;
    b.setInsertionPoint(&op);
    b.create<ProfileMarkOp>(op.getLoc(), b.getI64IntegerAttr(end ? -1 : next++));
  }
}

void InsertProfileMarksPass::runOnOperation() {
  int64_t next = 0;
  for (auto fn : getOperation().getOps<func::FuncOp>()) {
    if (!PDDialect::PhaseAttrHelper(&getContext()).getAttr(fn))
      continue;
    if (everyOp)
      markEveryOp(fn, next);
    else
      markFunction(fn);
  }
}
