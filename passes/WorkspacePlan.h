//===- WorkspacePlan.h - Workspace packing by liveness ----------*- C++ -*-===//
//
// The analysis behind pd-allocate-buffers' workspace: the live range of
// every value of a stage function that no other region holds, from
// mlir::Liveness, packed first-fit into one region. The pass records the
// offsets as #pd.buffer<workspace, offset>; the buffer-assignment test
// printer queries the same analysis for the live ranges.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_WORKSPACEPLAN_H
#define PD_PASSES_WORKSPACEPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::pd {

class WorkspacePlan {
public:
  /// One value's home: live over op indices [start, end] of the function's
  /// body, at `offset` in the workspace (`within` bytes into the slot it
  /// shares, if any).
  struct Slot {
    Value value;
    int64_t start, end, offset, size, within = 0;
  };

  /// Where a value lies in another's memory: that value and a byte offset
  /// into it (null: nowhere else).
  struct Within {
    Value value;
    int64_t offset = 0;
    explicit operator bool() const { return (bool)value; }
  };

  /// Plans the results of `fn`'s ops for which `needsWorkspace` holds,
  /// each `align`-byte aligned. A value for which `viewOf` returns another
  /// (a reshape's or a contiguous slice's result: the value it views, and
  /// where) shares that value's slot, which then stays live until the
  /// view's last use too. A value for which `partOf` returns a later one
  /// (a result written into the concat that joins it, pd-concat-in-place)
  /// shares that value's slot at the given offset, which is then live from
  /// the first such part's definition. A value for which `overwrites`
  /// returns an operand of its op (whose kernel may write it over that
  /// operand) takes the operand's slot when that op is the slot's last
  /// reader, the operand starts the slot and the slot is large enough.
  WorkspacePlan(func::FuncOp fn, function_ref<bool(Value)> needsWorkspace,
                int64_t align, function_ref<Within(Value)> viewOf = nullptr,
                function_ref<Within(Value)> partOf = nullptr,
                function_ref<Value(Value)> overwrites = nullptr);

  ArrayRef<Slot> getSlots() const { return slots; }
  /// The workspace bytes the function needs (the packing's peak).
  int64_t getPeakBytes() const { return peak; }
  /// The slot of `v`, or null if the workspace does not hold it.
  const Slot *lookup(Value v) const;

private:
  void pack();
  /// Index in `slots` of the slot each view shares (-1: its own).
  SmallVector<int64_t> sharedSlot;

  SmallVector<Slot> slots;
  int64_t peak = 0;
};

} // namespace mlir::pd

#endif // PD_PASSES_WORKSPACEPLAN_H
