//===- layer_norm.h - Layer norm rows on AVX-512 and AVX2 -------*- C++ -*-===//
//
// One row of layer norm and of its gradient, the row sums in double: 16
// floats a vector on AVX-512 (layer_norm_avx512.cc; call only when
// pdrt::vmath::hasAvx512(), nn.cc checks), 8 on AVX2
// (layer_norm_avx2.cc). A row's results do not depend on the rows around
// it or on how many rows a call takes; the two forms differ in their
// sums' order, so not always in the last bit.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_LAYER_NORM_H
#define PDRT_CPU_LAYER_NORM_H

#include <cstdint>

namespace pdrt::layer_norm::avx512 {

/// The row's mean and 1 / sqrt(biased variance + eps) from one pass of
/// sums of x and x^2 in double.
void rowStats(const float *x, int64_t cols, float eps, float *mean,
              float *rstd);

/// y = (x - mean) rstd g + b over one row.
void normalizeRow(const float *x, const float *g, const float *b, float *y,
                  int64_t cols, float mean, float rstd);

/// sum = a + (b + bias) over one row (bias null: a + b).
void addRow(const float *a, const float *b, const float *bias, float *sum,
            int64_t cols);

/// One row of the gradient: dx (plus the addend's row when not null), its
/// terms added to dg and db, and dx added to dsum when not null. dx may be
/// dy: each element of dy is read before dx's is written.
void gradRow(const float *dy, const float *x, const float *g,
             const float *addend, float *dx, float *dg, float *db,
             float *dsum, int64_t cols, float mean, float rstd);

} // namespace pdrt::layer_norm::avx512

// The same functions, 8 floats a vector.
namespace pdrt::layer_norm::avx2 {

void rowStats(const float *x, int64_t cols, float eps, float *mean,
              float *rstd);

void normalizeRow(const float *x, const float *g, const float *b, float *y,
                  int64_t cols, float mean, float rstd);

void addRow(const float *a, const float *b, const float *bias, float *sum,
            int64_t cols);

void gradRow(const float *dy, const float *x, const float *g,
             const float *addend, float *dx, float *dg, float *db,
             float *dsum, int64_t cols, float mean, float rstd);

} // namespace pdrt::layer_norm::avx2

#endif // PDRT_CPU_LAYER_NORM_H
