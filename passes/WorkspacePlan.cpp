//===- WorkspacePlan.cpp - Workspace packing by liveness ------------------===//
//
// Live ranges from mlir::Liveness over the stage function's single block,
// then first-fit (pd/Support/ArenaRules.h, shared with the planner's
// memory model): each value, in order of definition, takes the lowest
// offset that overlaps no value still live. A view (a reshape's or a
// contiguous slice's result) shares the slot of the value it views, at
// its offset there, kept live for both; a part (a result written into a
// later concat's result) shares the concat's slot at its offset, placed
// at the first part's definition; a result its kernel may write over an
// operand that dies at its op and starts its slot takes that slot.
//
//===----------------------------------------------------------------------===//

#include "passes/WorkspacePlan.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/Analysis/Liveness.h"
#include "llvm/ADT/DenseSet.h"
#include "pd/Support/ArenaRules.h"

using namespace mlir;
using namespace mlir::pd;

WorkspacePlan::WorkspacePlan(func::FuncOp fn,
                             function_ref<bool(Value)> needsWorkspace,
                             int64_t align, function_ref<Within(Value)> viewOf,
                             function_ref<Within(Value)> partOf,
                             function_ref<Value(Value)> overwrites) {
  Liveness liveness(fn);
  Block &body = fn.getBody().front();
  const LivenessBlockInfo *info = liveness.getLiveness(&body);
  DenseMap<Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(body))
    index[&op] = i;
  DenseMap<Value, int64_t> slotOf;
  DenseMap<Value, int64_t> withinOf; // bytes into the shared slot (0: none)
  DenseSet<int64_t> wholes; // slots placed by a concat's first part
  auto alignedBytes = [&](Value x) {
    return (getTensorBytes(x.getType()) + align - 1) / align * align;
  };
  for (Operation &op : body)
    for (Value v : op.getResults()) {
      if (!needsWorkspace(v))
        continue;
      // The last op of the block that reads v (its definition if none).
      int64_t end = index[info->getEndOperation(v, &op)];
      // A whole whose first part has placed its slot.
      if (auto it = slotOf.find(v); it != slotOf.end()) {
        slots[it->second].end = std::max(slots[it->second].end, end);
        continue;
      }
      int64_t shared = -1, within = 0;
      if (Within view = viewOf ? viewOf(v) : Within()) {
        if (auto it = slotOf.find(view.value); it != slotOf.end()) {
          shared = it->second;
          within = withinOf.lookup(view.value) + view.offset;
        }
      } else if (Within part = partOf ? partOf(v) : Within()) {
        auto [it, placed] =
            slotOf.try_emplace(part.value, (int64_t)slots.size());
        if (placed) {
          wholes.insert(slots.size());
          slots.push_back({part.value, index[&op], end, /*offset=*/0,
                           alignedBytes(part.value)});
          sharedSlot.push_back(-1);
        }
        shared = it->second;
        within = part.offset;
      } else if (Value operand = overwrites ? overwrites(v) : Value()) {
        // The operand's slot, if this op is its last reader and the
        // operand starts it (the kernel writes over it in place).
        auto it = slotOf.find(operand);
        if (it != slotOf.end() && !wholes.count(it->second) &&
            withinOf.lookup(operand) == 0 &&
            slots[it->second].end == index[&op] &&
            slots[it->second].size >= alignedBytes(v))
          shared = it->second;
      }
      slotOf[v] = shared >= 0 ? shared : (int64_t)slots.size();
      if (within)
        withinOf[v] = within;
      if (shared >= 0)
        slots[shared].end = std::max(slots[shared].end, end);
      slots.push_back(
          {v, index[&op], end, /*offset=*/0, alignedBytes(v), within});
      sharedSlot.push_back(shared);
    }
  pack();
}

void WorkspacePlan::pack() {
  SmallVector<LiveInterval> intervals;
  for (auto [slot, shared] : llvm::zip(slots, sharedSlot))
    if (shared < 0)
      intervals.push_back({slot.start, slot.end, slot.size, 0});
  peak = packFirstFit(intervals);
  auto next = intervals.begin();
  for (auto [slot, shared] : llvm::zip(slots, sharedSlot))
    if (shared < 0)
      slot.offset = (next++)->offset;
  for (auto [slot, shared] : llvm::zip(slots, sharedSlot))
    if (shared >= 0)
      slot.offset = slots[shared].offset + slot.within;
}

const WorkspacePlan::Slot *WorkspacePlan::lookup(Value v) const {
  for (const Slot &slot : slots)
    if (slot.value == v)
      return &slot;
  return nullptr;
}
