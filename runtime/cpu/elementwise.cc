//===- elementwise.cc - Broadcast binary ops and pointwise kernels ------------===//
//
// pdrt_binary walks the output row by row: the shared descriptor math of
// pdrt_numerics.h gives each row's operand offsets, and the inner loop runs
// with the innermost strides (specialised for the common 0/1 strides so
// the compiler vectorises it). relu, its gradient, scale, accumulate, copy.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt_numerics.h"
#include "strided_runs.h"

#include <cstring>

namespace {

/// out[i] = a[i*sa] (op) b[i*sb] for i < n, with op fixed at compile time.
template <int Op>
void binaryRow(const float *a, const float *b, float *out, int64_t n,
               int64_t sa, int64_t sb) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = pdrt_binary_apply(Op, a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const float bv = b[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = pdrt_binary_apply(Op, a[i], bv);
  } else if (sa == 0 && sb == 1) {
    const float av = a[0];
    for (int64_t i = 0; i < n; ++i)
      out[i] = pdrt_binary_apply(Op, av, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = pdrt_binary_apply(Op, a[i * sa], b[i * sb]);
  }
}

template <int Op>
void binaryAll(const float *a, const float *b, float *out, const int64_t *desc) {
  pdrt::forEachRun<2>(desc, [&](const pdrt::StridedRun<2> &run) {
    binaryRow<Op>(a + run.offset[0], b + run.offset[1], out + run.linear,
                  run.count, run.stride[0], run.stride[1]);
  });
}

} // namespace

extern "C" void pdrt_binary(pdrt_ctx *ctx, int32_t op, const float *a,
                            const float *b, float *out, const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  if (desc[0] < 0 || desc[0] > PDRT_MAX_RANK || op < PDRT_ADD || op > PDRT_BINARY_POW) {
    pdrt::setError(ctx, pdrt::format("pdrt_binary: bad op %d or rank %lld",
                                     (int)op, (long long)desc[0]));
    return;
  }
  switch (op) {
  case PDRT_ADD: return binaryAll<PDRT_ADD>(a, b, out, desc);
  case PDRT_SUB: return binaryAll<PDRT_SUB>(a, b, out, desc);
  case PDRT_MUL: return binaryAll<PDRT_MUL>(a, b, out, desc);
  case PDRT_DIV: return binaryAll<PDRT_DIV>(a, b, out, desc);
  default: return binaryAll<PDRT_BINARY_POW>(a, b, out, desc);
  }
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
