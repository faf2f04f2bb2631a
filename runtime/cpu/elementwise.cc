//===- elementwise.cc - Broadcast binary ops and pointwise kernels ------------===//
//
// pdrt_binary (add, sub, mul, div, pow, NaN-propagating min and max) walks
// the output run by run (strided_runs.h), the inner loop specialised for
// the common 0/1 strides so the compiler vectorises it; pdrt_minmax_grad
// walks the same way with the scalar rule of pdrt_numerics.h. relu, its
// gradient, scale, accumulate, copy.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt_numerics.h"
#include "strided_runs.h"

#include <cstring>

namespace {

/// out = a (op) b over the descriptor, with op fixed at compile time.
template <int Op>
void binaryAll(const float *a, const float *b, float *out, const int64_t *desc) {
  pdrt::mapBroadcastPair(desc, a, b, out, [](int64_t, float x, float y) {
    return pdrt_binary_apply(Op, x, y);
  });
}

/// d = dy * the share of operand `Which` of min/max (IsMax) over the
/// descriptor.
template <int IsMax, int Which>
void minmaxGradAll(const float *dy, const float *a, const float *b, float *d,
                   const int64_t *desc) {
  pdrt::mapBroadcastPair(desc, a, b, d, [dy](int64_t i, float x, float y) {
    return Which ? dy[i] * pdrt_minmax_grad_share(IsMax, y, x)
                 : dy[i] * pdrt_minmax_grad_share(IsMax, x, y);
  });
}

bool validRank(pdrt_ctx *ctx, const char *kernel, const int64_t *desc) {
  if (desc[0] >= 0 && desc[0] <= PDRT_MAX_RANK)
    return true;
  pdrt::setError(ctx, pdrt::format("%s: bad rank %lld", kernel,
                                   (long long)desc[0]));
  return false;
}

} // namespace

extern "C" void pdrt_binary(pdrt_ctx *ctx, int32_t op, const float *a,
                            const float *b, float *out, const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  if (desc[0] < 0 || desc[0] > PDRT_MAX_RANK || op < PDRT_ADD || op > PDRT_BINARY_MAX) {
    pdrt::setError(ctx, pdrt::format("pdrt_binary: bad op %d or rank %lld",
                                     (int)op, (long long)desc[0]));
    return;
  }
  switch (op) {
  case PDRT_ADD: return binaryAll<PDRT_ADD>(a, b, out, desc);
  case PDRT_SUB: return binaryAll<PDRT_SUB>(a, b, out, desc);
  case PDRT_MUL: return binaryAll<PDRT_MUL>(a, b, out, desc);
  case PDRT_DIV: return binaryAll<PDRT_DIV>(a, b, out, desc);
  case PDRT_BINARY_MIN: return binaryAll<PDRT_BINARY_MIN>(a, b, out, desc);
  case PDRT_BINARY_MAX: return binaryAll<PDRT_BINARY_MAX>(a, b, out, desc);
  default: return binaryAll<PDRT_BINARY_POW>(a, b, out, desc);
  }
}

extern "C" void pdrt_minmax_grad(pdrt_ctx *ctx, int32_t op, const float *dy,
                                 const float *a, const float *b, float *d,
                                 const int64_t *desc, int32_t which) {
  if (pdrt::hasError(ctx) || !validRank(ctx, "pdrt_minmax_grad", desc))
    return;
  if (op != PDRT_BINARY_MIN && op != PDRT_BINARY_MAX) {
    pdrt::setError(ctx, pdrt::format("pdrt_minmax_grad: op %d is not "
                                     "PDRT_BINARY_MIN or PDRT_BINARY_MAX",
                                     (int)op));
    return;
  }
  if (which != 0 && which != 1) {
    pdrt::setError(ctx, pdrt::format("pdrt_minmax_grad: operand %d is not 0 or 1",
                                     (int)which));
    return;
  }
  bool isMax = op == PDRT_BINARY_MAX;
  if (isMax)
    return which ? minmaxGradAll<1, 1>(dy, a, b, d, desc)
                 : minmaxGradAll<1, 0>(dy, a, b, d, desc);
  return which ? minmaxGradAll<0, 1>(dy, a, b, d, desc)
               : minmaxGradAll<0, 0>(dy, a, b, d, desc);
}

extern "C" void pdrt_relu(pdrt_ctx *ctx, const float *x, float *y, int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < n; ++i)
    y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

// Forward computed y = max(x, 0); the gradient passes where y > 0.
extern "C" void pdrt_relu_grad(pdrt_ctx *ctx, const float *dy, const float *y,
                               float *dx, int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < n; ++i)
    dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

extern "C" void pdrt_scale(pdrt_ctx *ctx, const float *x, float *y, int64_t n,
                           float alpha) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < n; ++i)
    y[i] = alpha * x[i];
}

extern "C" void pdrt_accumulate(pdrt_ctx *ctx, const float *g, float *acc,
                                int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < n; ++i)
    acc[i] += g[i];
}

extern "C" void pdrt_copy(pdrt_ctx *ctx, const void *src, void *dst,
                          int64_t bytes) {
  if (pdrt::hasError(ctx) || bytes <= 0)
    return;
  std::memcpy(dst, src, (size_t)bytes);
}
