//===- PDDialect.h - The pd dialect -----------------------------*- C++ -*-===//
//
// Declares the pd dialect class and its attributes (generated from PDOps.td),
// with the helpers of the discardable attributes passes hand each other.
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDDIALECT_H
#define PD_DIALECT_PD_IR_PDDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

// The enumerations (PDEnums.td) and the attribute classes come first: the dialect's discardable-attribute
// helpers (PDOps.td) are typed with them.
#include "dialects/PD/IR/PDEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/PD/IR/PDAttrs.h.inc"

#include "dialects/PD/IR/PDOpsDialect.h.inc"

#endif // PD_DIALECT_PD_IR_PDDIALECT_H
