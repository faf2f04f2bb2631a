//===- LeadingReshapes.h - Transposes between leading reshapes --*- C++ -*-===//
//
// torch's dynamo export transposes attention's 4-D heads as 3-D tensors:
// reshape(transpose(reshape(x), p)) that merges the batch and head dims,
// transposes the trailing dims and splits the merged dim again. The
// passes that fold transposes and broadcasts into batched GEMMs first make
// it the 4-D transpose it is.
//
//===----------------------------------------------------------------------===//

#ifndef PD_PASSES_LEADINGRESHAPES_H
#define PD_PASSES_LEADINGRESHAPES_H

#include "mlir/IR/PatternMatch.h"

namespace mlir::pd {

/// Adds the pattern rewriting reshape(transpose(reshape(x), p), s), where
/// the inner reshape merges x's first k + 1 dims into one, p keeps that
/// dim first and the outer reshape splits it into the same dims again, to
/// transpose(x, p') with the merged dims in front, unmoved.
void populateTransposeBetweenLeadingReshapes(RewritePatternSet &patterns);

} // namespace mlir::pd

#endif // PD_PASSES_LEADINGRESHAPES_H
