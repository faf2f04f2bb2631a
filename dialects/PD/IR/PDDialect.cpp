//===- PDDialect.cpp - The pd dialect ---------------------------*- C++ -*-===//
//
// Registers the pd ops and attributes, and defines the generated interface
// and attribute code.
//
//===----------------------------------------------------------------------===//

#include "dialects/PD/IR/PDDialect.h"
#include "dialects/PD/IR/PDOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::pd;

#include "dialects/PD/IR/PDOpsDialect.cpp.inc"
#include "dialects/PD/IR/PDInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/PD/IR/PDAttrs.cpp.inc"

void PDDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/PD/IR/PDOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/PD/IR/PDAttrs.cpp.inc"
      >();
}

/// Folded values become pd.constant ops.
Operation *PDDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense || dense.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, dense);
}
