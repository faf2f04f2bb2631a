//===- PDOps.h - Ops, attributes and interfaces of pd -----------*- C++ -*-===//
//
// The pd ops (generated from PDOps.td), their interfaces and the shape
// helpers the verifiers, gradient rules and importer share.
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDOPS_H
#define PD_DIALECT_PD_IR_PDOPS_H

#include "dialects/PD/IR/PDDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::pd {

/// Returns the size in bytes of a statically shaped tensor type (0 for
/// anything else).
int64_t getTensorBytes(Type type);

/// Computes the numpy broadcast of two shapes; fails if they are not
/// broadcast-compatible.
FailureOr<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                ArrayRef<int64_t> b);

} // namespace mlir::pd

#include "dialects/PD/IR/PDInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/PD/IR/PDOps.h.inc"

namespace mlir::pd {

/// The buffer pd-allocate-buffers gave `v`: the `pd.buffer` argument
/// attribute of a function argument, the `pd.buffer` of a single-result op,
/// or entry i of a multi-result op's `pd.buffers` array. Null before
/// allocation.
BufferAttr getBuffer(Value v);

/// Records `buffer` as the home of `v` (see getBuffer).
void setBuffer(Value v, BufferAttr buffer);

} // namespace mlir::pd

#endif // PD_DIALECT_PD_IR_PDOPS_H
