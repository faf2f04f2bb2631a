//===- optimizer.h - SGD, momentum, Adam and AdamW updates ---------*- C++ -*-===//
//
// The per-element update rules of DESIGN.md section 4 (PyTorch semantics),
// applied either in place (flush/gpipe) or out of place from one weight
// buffer into the other (2bw), and their application to a whole stage.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_EXEC_OPTIMIZER_H
#define PDRT_EXEC_OPTIMIZER_H

#include "manifest.h"

#include <cstdint>

namespace pdrt {

/// One update of n elements: w_out = update(w_in, g) with optimizer state
/// `s1` (momentum velocity / Adam first moment) and `s2` (Adam second
/// moment); `step` is the 1-based number of this update. w_in may equal
/// w_out (in place).
void optimizerStep(const OptimizerConfig &cfg, const float *wIn, float *wOut,
                   const float *g, float *s1, float *s2, int64_t n,
                   int64_t step);

/// Applies optimizerStep to every param of `m`: weights read from `wIn`
/// and written to `wOut` (weight-version bases), gradients from `grads`,
/// state in the optimizer region at `opt`.
void applyOptimizer(const Manifest &m, const OptimizerConfig &cfg,
                    const char *wIn, char *wOut, const char *grads, char *opt,
                    int64_t step);

} // namespace pdrt

#endif // PDRT_EXEC_OPTIMIZER_H
