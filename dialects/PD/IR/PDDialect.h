//===- PDDialect.h - The pd dialect -----------------------------*- C++ -*-===//
//
// Declares the pd dialect class (generated from PDOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDDIALECT_H
#define PD_DIALECT_PD_IR_PDDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "dialects/PD/IR/PDOpsDialect.h.inc"

#endif // PD_DIALECT_PD_IR_PDDIALECT_H
