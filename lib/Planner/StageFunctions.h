//===- StageFunctions.h - The stage model's functions -----------*- C++ -*-===//
//
// The planner's stage model (StageModel.cpp) rebuilds each stage's forward
// and backward function as a list of virtual ops and values; StageArena.cpp
// re-enacts the buffer passes on those lists. Private to lib/Planner.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PLANNER_STAGEFUNCTIONS_H
#define PD_PLANNER_STAGEFUNCTIONS_H

#include "pd/Planner/ProgramGraph.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <vector>

namespace mlir::pd::stage_model {

enum class VKind : uint8_t { Clone, Input, Source, Recv, Send, ReportLoss };
enum class Home : uint8_t { None, Weights, Grads, Stash, Comm };

/// An op of a modelled stage function.
struct VOp {
  VKind kind = VKind::Clone;
  bool alive = true;
  int32_t orig = -1; ///< Graph op of a clone or a re-read source.
  int32_t peer = -1; ///< Sender of a recv.
  /// The sum_to this GELU or layer-norm gradient absorbed
  /// (pd-fuse-bias-gradients), by index in its function: it defines that
  /// op's result too.
  int32_t absorbed = -1;
  /// A concat whose inputs its GEMMs write in place (pd-concat-in-place):
  /// it runs no kernel.
  bool partsInPlace = false;
  /// A reshape or contiguous slice that is a view (allocateViews): it
  /// runs no kernel.
  bool viewed = false;
  uint32_t operandBegin = 0, operandEnd = 0, resultBegin = 0, resultEnd = 0;
};

/// A value of a modelled stage function.
struct VVal {
  int64_t bytes = 0;
  int32_t def = -1; ///< Defining VOp; -1 for a function argument.
  Home home = Home::None;
  bool constant = false;
};

/// A modelled stage function.
struct VFn {
  std::vector<VOp> ops;
  std::vector<int32_t> pool; ///< Operands of the ops.
  std::vector<VVal> vals;
  std::vector<int32_t> returned;
  /// Per value: the value whose workspace slot it shares as a view (-1:
  /// none).
  std::vector<int32_t> viewOf;
  /// Per value: whether it is a view at a non-zero offset into that slot
  /// (a window of it), which no kernel may write over in place.
  std::vector<bool> offStart;
  /// Per value: the concat result it is written into, whose home it
  /// shares (pd-concat-in-place; -1: none).
  std::vector<int32_t> partOf;

  llvm::ArrayRef<int32_t> operandsOf(const VOp &op) const {
    return llvm::ArrayRef(pool).slice(op.operandBegin,
                                      op.operandEnd - op.operandBegin);
  }
  int32_t addArgument(int64_t bytes) {
    vals.push_back({bytes, -1, Home::None, false});
    return vals.size() - 1;
  }
};

/// pd-allocate-buffers' homeRoot: what holds the stashed or sent value `v`.
int32_t homeRoot(const ProgramGraph &g, const VFn &fn, int32_t v);
/// pd-allocate-buffers' shareWithOperand for the stashed value `v`.
void shareWithOperand(const ProgramGraph &g, VFn &fn, int32_t v);
/// pd-allocate-buffers' views of `fn` (VFn::viewOf).
void allocateViews(const ProgramGraph &g, VFn &fn);
/// pd-fuse-bias-gradients on `fn`.
void fuseBiasGradients(const ProgramGraph &g, VFn &fn);
/// pd-concat-in-place on `fn` (VFn::partOf, VOp::partsInPlace).
void concatInPlace(const ProgramGraph &g, VFn &fn);
/// The workspace bytes pd-allocate-buffers gives `fn`.
int64_t workspaceBytes(const ProgramGraph &g, const VFn &fn);

} // namespace mlir::pd::stage_model

#endif // PD_PLANNER_STAGEFUNCTIONS_H
