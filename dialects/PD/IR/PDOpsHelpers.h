//===- PDOpsHelpers.h - Small helpers of the ops' C++ files ------*- C++ -*-===//
//
// Element counts and shape strings for the verifiers and cost rules of the
// pd ops (PDOps*.cpp, PDCost.cpp). Internal to the dialect's sources.
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDOPSHELPERS_H
#define PD_DIALECT_PD_IR_PDOPSHELPERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <string>

namespace mlir::pd {

/// The element count of a ranked tensor value.
inline int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// A shape as diagnostics print it: [2,3,4].
inline std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "," : "") + std::to_string(d);
  return s + "]";
}

} // namespace mlir::pd

#endif // PD_DIALECT_PD_IR_PDOPSHELPERS_H
