//===- ONNXOpsConv.cpp - Convolutional ops ----------------------*- C++ -*-===//
//
// Handlers for the convolutional family (Conv, BatchNormalization,
// MaxPool, GlobalAveragePool), which small CNNs export.
//
//===----------------------------------------------------------------------===//

#include "ImporterImpl.h"

using namespace mlir;
using namespace mlir::pd;
using namespace mlir::pd::detail;

void mlir::pd::detail::registerConvHandlers(HandlerTable &table) {}
