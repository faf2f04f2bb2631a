//===- ScalarConstant.h - One-element f32 constants in patterns -*- C++ -*-===//
//
// The value of a one-element f32 constant operand (a scale, an epsilon, a
// mask fill), which the fusion passes match on.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_SCALARCONSTANT_H
#define PD_PASSES_SCALARCONSTANT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"

#include <optional>

namespace mlir::pd {

/// The value of `v` when it is a constant holding one f32 element.
inline std::optional<float> scalarF32Constant(Value v) {
  DenseElementsAttr attr;
  if (!v || !matchPattern(v, m_Constant(&attr)) ||
      attr.getNumElements() != 1 || !attr.getElementType().isF32())
    return std::nullopt;
  return *attr.getValues<float>().begin();
}

} // namespace mlir::pd

#endif // PD_PASSES_SCALARCONSTANT_H
