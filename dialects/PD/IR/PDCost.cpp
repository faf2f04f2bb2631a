//===- PDCost.cpp - FLOP estimates of pd ops --------------------*- C++ -*-===//
//
// CostOpInterface for each pd op: the floating-point operations of one
// execution at the op's static shapes. Bytes use the interface's default
// (operands plus results).
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"
#include "dialects/PD/IR/PDOpsHelpers.h"

using namespace mlir;
using namespace mlir::pd;

int64_t MatMulOp::getFlops() {
  auto lhs = getLhs().getType();
  int64_t k = lhs.getDimSize(getTransposeLhs() ? 0 : 1);
  return 2 * numElements(getResult()) * k +
         (getBias() ? numElements(getResult()) : 0);
}

int64_t AddOp::getFlops() { return numElements(getResult()); }
int64_t SubOp::getFlops() { return numElements(getResult()); }
int64_t MulOp::getFlops() { return numElements(getResult()); }
int64_t ReluOp::getFlops() { return numElements(getResult()); }
int64_t ReluGradOp::getFlops() { return numElements(getResult()); }
int64_t ScaleOp::getFlops() { return numElements(getResult()); }
int64_t SumToOp::getFlops() { return numElements(getInput()); }

// exp, sum, log and the gather per element: about 4 flops each.
int64_t SoftmaxCrossEntropyLossOp::getFlops() {
  return 4 * numElements(getLogits());
}
int64_t SoftmaxCrossEntropyLossGradOp::getFlops() {
  return 4 * numElements(getLogits());
}
// One exp per element serves both results: the loss's sum and the scaled
// softmax.
int64_t SoftmaxCrossEntropyWithGradOp::getFlops() {
  return 5 * numElements(getLogits());
}
