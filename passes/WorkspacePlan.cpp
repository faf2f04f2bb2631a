//===- WorkspacePlan.cpp - Workspace packing by liveness ------------------===//
//
// Live ranges from mlir::Liveness over the stage function's single block,
// then first-fit (pd/Support/ArenaRules.h, shared with the planner's
// memory model): each value, in order of definition, takes the lowest
// offset that overlaps no value still live.
//
//===----------------------------------------------------------------------===//

#include "passes/WorkspacePlan.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Analysis/Liveness.h"
#include "pd/Support/ArenaRules.h"

using namespace mlir;
using namespace mlir::pd;

WorkspacePlan::WorkspacePlan(func::FuncOp fn,
                             function_ref<bool(Value)> needsWorkspace,
                             int64_t align) {
  Liveness liveness(fn);
  Block &body = fn.getBody().front();
  const LivenessBlockInfo *info = liveness.getLiveness(&body);
  DenseMap<Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(body))
    index[&op] = i;
  for (Operation &op : body)
    for (Value v : op.getResults()) {
      if (!needsWorkspace(v))
        continue;
      // The last op of the block that reads v (its definition if none).
      Operation *end = info->getEndOperation(v, &op);
      int64_t bytes = getTensorBytes(v.getType());
      slots.push_back({v, index[&op], index[end], /*offset=*/0,
                       (bytes + align - 1) / align * align});
    }
  pack();
}

void WorkspacePlan::pack() {
  SmallVector<LiveInterval> intervals;
  for (const Slot &slot : slots)
    intervals.push_back({slot.start, slot.end, slot.size, 0});
  peak = packFirstFit(intervals);
  for (auto [slot, interval] : llvm::zip(slots, intervals))
    slot.offset = interval.offset;
}

const WorkspacePlan::Slot *WorkspacePlan::lookup(Value v) const {
  for (const Slot &slot : slots)
    if (slot.value == v)
      return &slot;
  return nullptr;
}
