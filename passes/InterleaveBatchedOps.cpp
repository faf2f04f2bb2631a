//===- InterleaveBatchedOps.cpp - Batched kernels entry by entry -*- C++ -*-===//
//
// pd-interleave-batched-ops: a run of strided batched GEMMs and attention
// softmaxes (forward or gradient) over the same batch entries, with only
// views, constants and parameter reads between them, gets
// pd.interleave_begin before it and pd.interleave_end after it; the runtime
// runs the group entry by entry (runtime/exec/interleave.h), so that one
// (batch, head)'s scores stay in cache from kernel to kernel. The runtime
// checks, once per group and set of addresses, that this computes what
// running the kernels in order does, and runs them whole where it would not
// (two tensors the allocator placed in one memory); this pass only finds
// the runs. On the allocated stage functions, where a view is known to run
// no kernel; in the profiling stage too, so that the planner prices the
// kernels as the stages run them.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "passes/Passes.h"

namespace mlir::pd {
#define GEN_PASS_DEF_INTERLEAVEBATCHEDOPSPASS
#include "passes/Passes.h.inc"
} // namespace mlir::pd

using namespace mlir;
using namespace mlir::pd;

namespace {

struct InterleaveBatchedOpsPass
    : public mlir::pd::impl::InterleaveBatchedOpsPassBase<
          InterleaveBatchedOpsPass> {
  using InterleaveBatchedOpsPassBase::InterleaveBatchedOpsPassBase;
  void runOnOperation() override;
};

} // namespace

/// The batch entries of a strided batched GEMM (the leading dims of its
/// operands as it reads them); 0 for any other op.
static int64_t gemmEntries(Operation *op) {
  auto mm = dyn_cast<BatchMatMulOp>(op);
  if (!mm || !mm.isStrided())
    return 0;
  int64_t entries = 1;
  for (int64_t dim : ArrayRef(mm.getLogicalLhsShape()).drop_back(2))
    entries *= dim;
  return entries;
}

/// The rows of an attention softmax (forward or gradient); 0 for any
/// other op.
static int64_t softmaxRows(Operation *op) {
  if (!isa<MaskedSoftmaxOp, MaskedSoftmaxGradOp>(op))
    return 0;
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  return type.getNumElements() / type.getShape().back();
}

/// Wraps `kernels` (consecutive but for ops that run nothing) in a group
/// if they are two or more and split into `entries` entries.
static void wrapGroup(ArrayRef<Operation *> kernels, int64_t entries) {
  if (kernels.size() < 2 || entries < 2)
    return;
  for (Operation *op : kernels)
    if (int64_t rows = softmaxRows(op); rows && rows % entries != 0)
      return;
  OpBuilder b(kernels.front());
  b.create<InterleaveBeginOp>(kernels.front()->getLoc());
  b.setInsertionPointAfter(kernels.back());
  b.create<InterleaveEndOp>(kernels.back()->getLoc());
}

static void interleaveFunction(func::FuncOp fn) {
  SmallVector<Operation *> kernels;
  int64_t entries = 0;
  auto close = [&] {
    wrapGroup(kernels, entries);
    kernels.clear();
    entries = 0;
  };
  for (Operation &op : llvm::make_early_inc_range(fn.getBody().front())) {
    int64_t gemm = gemmEntries(&op);
    if (gemm > 0 || softmaxRows(&op) > 0) {
      if (gemm > 0 && entries > 0 && gemm != entries)
        close();
      if (gemm > 0)
        entries = gemm;
      kernels.push_back(&op);
      continue;
    }
    // A profiling stage's marks do not end a run: the runtime times each
    // recorded call on the mark passed before it.
    if (!runsNoKernel(&op))
      close();
  }
  close();
}

void InterleaveBatchedOpsPass::runOnOperation() {
  for (auto fn : getOperation().getOps<func::FuncOp>())
    if (!fn.isExternal())
      interleaveFunction(fn);
}
