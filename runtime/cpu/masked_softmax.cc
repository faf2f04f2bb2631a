//===- masked_softmax.cc - Attention's scaled, masked softmax ---------------===//
//
// y = softmax(mask ? scale * x : -inf) per row, and its gradient. A causal
// mask keeps a prefix of every row: only the prefix is exponentiated and
// the tail is zeroed (only up to the end of the row's diagonal block when
// the caller passes the block: the GEMMs reading the result skip the
// blocks past it), which halves the exp work of causal attention. Other
// masks go through a row of -inf. Under the causal mask the gradient reads
// each row's prefix only (the GEMM before it skipped the tail). The sums
// and the gradient's dot products are in double over 16 lanes (vmath::sum,
// vmath::dot), as in pdrt_softmax and pdrt_softmax_grad, whose bits they
// reproduce: a serial double sum was one 4-cycle dependency per element.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "vmath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace {

/// The number of leading kept elements of `mask`, or -1 when a dropped
/// element comes before a kept one (the mask is not a prefix).
int64_t keptPrefix(const uint8_t *mask, int64_t dim) {
  int64_t kept = 0;
  while (kept < dim && mask[kept])
    ++kept;
  for (int64_t k = kept; k < dim; ++k)
    if (mask[k])
      return -1;
  return kept;
}

/// y[0, n) = softmax(y[0, n)) in place given the row's max: exp(y - max)
/// vectorised, the sum in double, as pdrt_softmax does.
void softmaxInPlace(float *y, int64_t n, float max) {
  float inv = (float)(1.0 / pdrt::vmath::expSum(y, max, y, n));
  for (int64_t k = 0; k < n; ++k)
    y[k] *= inv;
}

/// Where a row whose first n elements are kept ends: dim, or with
/// block > 0 the end of the diagonal block holding its last kept element.
int64_t writtenEnd(int64_t n, int64_t dim, int64_t block) {
  if (block <= 0 || n <= 0)
    return dim;
  return std::min((n - 1) / block * block + block, dim);
}

/// y[0, n) = softmax(scale * x[0, n)); y[n, end) is zero.
void scaledSoftmaxPrefix(const float *x, float *y, int64_t n, int64_t end,
                         float scale) {
  if (n > 0)
    softmaxInPlace(y, n, pdrt::vmath::scaledMax(x, scale, y, n));
  std::memset(y + n, 0, (end - n) * sizeof(float));
}

/// One row under an arbitrary mask: dropped elements become -inf, whose
/// exp is 0; a row that keeps nothing is zero.
void scaledSoftmaxMasked(const float *x, const uint8_t *mask, float *y,
                         int64_t dim, float scale) {
  const float ninf = -std::numeric_limits<float>::infinity();
  bool any = false;
  for (int64_t k = 0; k < dim; ++k) {
    y[k] = mask[k] ? scale * x[k] : ninf;
    any |= mask[k] != 0;
  }
  if (any)
    softmaxInPlace(y, dim, pdrt::vmath::max(y, dim));
  else
    std::memset(y, 0, dim * sizeof(float));
}

} // namespace

extern "C" void pdrt_masked_softmax(pdrt_ctx *ctx, const float *x,
                                    const uint8_t *mask, float *y,
                                    int64_t rows, int64_t dim,
                                    int64_t mask_rows, float scale,
                                    int64_t block) {
  if (pdrt::hasError(ctx) || rows <= 0 || dim <= 0)
    return;
  if (!mask) {
    for (int64_t r = 0; r < rows; ++r)
      scaledSoftmaxPrefix(x + r * dim, y + r * dim, dim, dim, scale);
    return;
  }
  // Each mask row's kept prefix, once for all the rows that share it.
  std::vector<int64_t> prefix(mask_rows);
  for (int64_t m = 0; m < mask_rows; ++m)
    prefix[m] = keptPrefix(mask + m * dim, dim);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t m = r % mask_rows;
    if (prefix[m] >= 0)
      scaledSoftmaxPrefix(x + r * dim, y + r * dim, prefix[m],
                          writtenEnd(prefix[m], dim, block), scale);
    else
      scaledSoftmaxMasked(x + r * dim, mask + m * dim, y + r * dim, dim,
                          scale);
  }
}

extern "C" void pdrt_masked_softmax_grad(pdrt_ctx *ctx, const float *dy,
                                         const float *y, float *dx,
                                         int64_t rows, int64_t dim,
                                         float scale, int64_t causal_rows,
                                         int64_t block) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t r = 0; r < rows; ++r) {
    const float *dyr = dy + r * dim, *yr = y + r * dim;
    float *dxr = dx + r * dim;
    // A causal row's tail has y = 0; its dy was not computed
    // (PDRT_RESULT_LOWER), so only the prefix is read.
    int64_t n = causal_rows > 0 ? std::min(r % causal_rows + 1, dim) : dim;
    float s = (float)pdrt::vmath::dot(dyr, yr, n);
    for (int64_t k = 0; k < n; ++k)
      dxr[k] = scale * (yr[k] * (dyr[k] - s));
    int64_t end = causal_rows > 0 ? writtenEnd(n, dim, block) : dim;
    std::memset(dxr + n, 0, (end - n) * sizeof(float));
  }
}
