//===- ArenaRules.h - How a stage's arena is laid out -----------*- C++ -*-===//
//
// The allocation rules pd-allocate-buffers applies and the planner's memory
// model (pd/Planner/StageModel.h) predicts with: region sizes, alignment,
// weight versions, stash slots and the first-fit packing of the workspace.
// One copy of each rule, so that the model and the buffer plan cannot
// drift apart (pdc compares them for the plan it writes).
//
//===----------------------------------------------------------------------===//

#ifndef PD_SUPPORT_ARENARULES_H
#define PD_SUPPORT_ARENARULES_H

#include "dialects/PD/IR/PDEnumOptions.h"
#include "pd/Support/FirstFit.h"
#include "llvm/ADT/ArrayRef.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

namespace mlir::pd {

/// Byte sizes of a stage's arena regions (docs/stage-manifest.md).
struct StageRegions {
  int64_t weights = 0, weightVersions = 1, grads = 0, optimizer = 0, state = 0,
          stashSlot = 0, stashSlots = 1, workspace = 0, comm = 0;
  /// Under 2bw, a copy of the tied parameters' gradients while their sum
  /// over the owner stages is in flight (tiedGradsBytes).
  int64_t tieGrads = 0;
  /// The whole arena: what the runtime allocates for this stage.
  int64_t total() const {
    return weights * weightVersions + grads + optimizer + state +
           stashSlot * stashSlots + workspace + comm + tieGrads;
  }
  bool operator==(const StageRegions &o) const {
    return weights == o.weights && weightVersions == o.weightVersions &&
           grads == o.grads && optimizer == o.optimizer && state == o.state &&
           stashSlot == o.stashSlot && stashSlots == o.stashSlots &&
           workspace == o.workspace && comm == o.comm &&
           tieGrads == o.tieGrads;
  }
  bool operator!=(const StageRegions &o) const { return !(*this == o); }
};

/// Every tensor in the arena starts on a 64-byte boundary.
constexpr int64_t kArenaAlign = 64;

inline int64_t alignArena(int64_t bytes) {
  return (bytes + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
}

/// Weight versions a stage keeps: two under 2BW, one otherwise.
inline int64_t weightVersions(Schedule schedule) {
  return schedule == Schedule::TwoBW ? 2 : 1;
}

/// Stash slots of stage `stage` of `stages`: the microbatches in flight
/// there (d - k under 1F1B; all m under GPipe).
inline int64_t stashSlots(Schedule schedule, int64_t stages, int64_t stage,
                          int64_t microbatches) {
  return schedule == Schedule::GPipe ? microbatches : stages - stage;
}

/// The staging copy of tied gradients a stage needs: under 2bw the sum of a
/// tied parameter's gradient over its owner stages completes only before
/// the new weights are first read, while the next batch's backwards already
/// accumulate; flush and GPipe sum at the update itself.
inline int64_t tiedGradsBytes(Schedule schedule, int64_t alignedTiedBytes) {
  return schedule == Schedule::TwoBW ? alignedTiedBytes : 0;
}

/// One workspace tensor: live over op indices [start, end] of its function,
/// `size` bytes (aligned); `offset` is filled by packFirstFit.
struct LiveInterval {
  int64_t start = 0, end = 0, size = 0, offset = 0;
};

/// First-fit packing: each interval, in the given order (definition order),
/// takes the lowest offset that overlaps no interval still live (one whose
/// end is not before its start). Returns the peak (the workspace size).
inline int64_t packFirstFit(llvm::MutableArrayRef<LiveInterval> intervals) {
  FirstFitArena arena;
  using Live = std::pair<int64_t, int32_t>; // (end, block)
  std::priority_queue<Live, std::vector<Live>, std::greater<Live>> live;
  int64_t peak = 0;
  for (LiveInterval &slot : intervals) {
    while (!live.empty() && live.top().first < slot.start) {
      arena.remove(live.top().second);
      live.pop();
    }
    live.push({slot.end, arena.place(slot.size, slot.offset)});
    peak = std::max(peak, slot.offset + slot.size);
  }
  return peak;
}

} // namespace mlir::pd

#endif // PD_SUPPORT_ARENARULES_H
