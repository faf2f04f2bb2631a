//===- Partition.h - Where the pipeline is cut -------------------*- C++ -*-===//
//
// The planner's split of a differentiated training function into d
// contiguous stages, handed to pd-partition-stages as its `cuts` option.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_PARTITION_H
#define PD_PLANNER_PARTITION_H

#include "pd/Planner/DeviceSpec.h"
#include "llvm/ADT/ArrayRef.h"

#include <vector>

namespace mlir::pd {

/// The cost the split balances, one entry per compute op (a forward op
/// with operands) in program order (ProgramGraph builds it).
struct OpChain {
  std::vector<int64_t> opIds;
  /// Roofline seconds of the op and of its gradient ops.
  std::vector<double> seconds;
  /// Bytes of the activations that cross a cut before op i (entry 0 and
  /// entry n are 0): sent forward, their gradients sent back.
  std::vector<int64_t> crossingBytes;
  /// Whether a cut before op i would send a forward value to an earlier
  /// stage's backward (the gradient that pd.softmax_cross_entropy_with_grad
  /// computes with the loss, read by the LM head's gradient ops): the
  /// earlier stage would have to receive it in its forward, which waits on
  /// the later stage's forward, which waits on it. Likewise a gradient
  /// read by the gradient ops of a later position (a later stage's
  /// backward would wait on an earlier stage's backward, which waits on
  /// it). Never cut there.
  /// Empty: no such position.
  std::vector<char> flowsBack;
};

/// The split of `chain` into `stages` contiguous non-empty stages that
/// minimises the slowest stage's time: its ops, plus sending and receiving
/// the activations and gradients at its two cuts (ranks `replicas` apart).
/// Exact dynamic programming over the cut positions; chains longer than a
/// few thousand ops cut only at evenly spaced candidate positions. Returns
/// the op id starting each stage after the first (empty for one stage).
/// `timeScale` (one entry per stage, or empty for all 1) multiplies each
/// stage's compute: a stage measured slower than its ops' prices
/// (pdc --calibrate) gets fewer of them.
std::vector<int64_t> splitOpChain(const OpChain &chain, int64_t stages,
                                  const DeviceSpec &spec, int64_t replicas,
                                  llvm::ArrayRef<double> timeScale = {});

} // namespace mlir::pd

#endif // PD_PLANNER_PARTITION_H
