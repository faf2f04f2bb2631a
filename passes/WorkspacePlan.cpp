//===- WorkspacePlan.cpp - Workspace packing by liveness ------------------===//
//
// Live ranges from mlir::Liveness over the stage function's single block,
// then first-fit: each value, in order of definition, takes the lowest
// offset that overlaps no value still live.
//
//===----------------------------------------------------------------------===//

#include "passes/WorkspacePlan.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Analysis/Liveness.h"

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
  struct Placed {
    int64_t offset, size, end;
  };
  SmallVector<Placed> live;
  for (Slot &slot : slots) {
    llvm::erase_if(live, [&](const Placed &p) { return p.end < slot.start; });
    llvm::sort(live, [](const Placed &a, const Placed &b) {
      return a.offset < b.offset;
    });
    int64_t offset = 0;
    for (const Placed &p : live) {
      if (offset + slot.size <= p.offset)
        break;
      offset = std::max(offset, p.offset + p.size);
    }
    slot.offset = offset;
    live.push_back({offset, slot.size, slot.end});
    peak = std::max(peak, offset + slot.size);
  }
}

const WorkspacePlan::Slot *WorkspacePlan::lookup(Value v) const {
  for (const Slot &slot : slots)
    if (slot.value == v)
      return &slot;
  return nullptr;
}
