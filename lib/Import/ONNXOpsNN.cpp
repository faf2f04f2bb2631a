//===- ONNXOpsNN.cpp - Activations ------------------------------*- C++ -*-===//
//
// Handlers for the neural-network activation family. Relu is what a plain
// torch MLP exports; every activation keeps its operand's shape and type.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

/// An f32 elementwise unary op whose result type is its operand's.
template <typename OpTy> static LogicalResult importUnary(NodeBinder &b) {
  Value input;
  if (b.expectOutputs(1) || b.f32Operand(input, 0))
    return failure();
  Value result = b.builder().create<OpTy>(b.loc(), input.getType(), input);
  return b.setResult(0, result);
}

void mlir::pd::detail::registerNNHandlers(HandlerTable &table) {
  // Relu 6, 13, 14: the same semantics on f32.
  table["Relu"] = {6, importUnary<ReluOp>};
}
