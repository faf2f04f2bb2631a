//===- PDOpsNN.cpp - Verifiers, costs and gradients of nn ops -*- C++ -*-===//
//
// Verifiers, CostOpInterface and GradientOpInterface of the ops in
// PDOpsNN.td. Every gradient rule opens with the math of its forward op.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDOps.h"

using namespace mlir;
using namespace mlir::pd;
