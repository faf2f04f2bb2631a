//===- tensor.cc - CPU kernels of tensor ops ---------------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_tensor.h.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"

#include <cblas.h>

#include <cstring>
#include <string>

extern "C" void pdrt_permute(pdrt_ctx *ctx, const void *x, void *y,
                             const int64_t *desc, int64_t elem_size) {
  if (pdrt::hasError(ctx))
    return;
  int64_t total = pdrt_desc_numel(desc);
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  for (int64_t i = 0; i < total; ++i) {
    int64_t offset;
    pdrt_desc_offsets(desc, i, &offset, nullptr);
    std::memcpy(dst + i * elem_size, src + offset * elem_size, elem_size);
  }
}

namespace {
/// The row of index `i`, or -1 after recording an out-of-range error.
int64_t gatherRow(pdrt_ctx *ctx, const int64_t *idx, int64_t i,
                  int64_t rows) {
  int64_t row = idx[i] < 0 ? idx[i] + rows : idx[i];
  if (row >= 0 && row < rows)
    return row;
  pdrt::setError(ctx, "gather index " + std::to_string(idx[i]) +
                          " at position " + std::to_string(i) +
                          " is outside [-" + std::to_string(rows) + ", " +
                          std::to_string(rows) + ")");
  return -1;
}
} // namespace

extern "C" void pdrt_gather(pdrt_ctx *ctx, const float *data,
                            const int64_t *idx, float *out, int64_t n,
                            int64_t rows, int64_t row_size) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = gatherRow(ctx, idx, i, rows);
    if (row < 0)
      return;
    std::memcpy(out + i * row_size, data + row * row_size,
                sizeof(float) * row_size);
  }
}

extern "C" void pdrt_gather_grad(pdrt_ctx *ctx, const float *dout,
                                 const int64_t *idx, float *ddata, int64_t n,
                                 int64_t rows, int64_t row_size) {
  if (pdrt::hasError(ctx))
    return;
  std::memset(ddata, 0, sizeof(float) * rows * row_size);
  for (int64_t i = 0; i < n; ++i) {
    int64_t row = gatherRow(ctx, idx, i, rows);
    if (row < 0)
      return;
    float *dst = ddata + row * row_size;
    const float *src = dout + i * row_size;
    for (int64_t j = 0; j < row_size; ++j)
      dst[j] += src[j];
  }
}

extern "C" void pdrt_batch_matmul(pdrt_ctx *ctx, const float *a,
                                  const float *b, float *c, int64_t batch,
                                  int64_t m, int64_t n, int64_t k,
                                  int32_t trans_a, int32_t trans_b) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < batch; ++i)
    pdrt_matmul(ctx, a + i * m * k, b + i * k * n, c + i * m * n, m, n, k,
                trans_a, trans_b, 1.0f, 0.0f);
}

extern "C" void pdrt_scatter(pdrt_ctx *ctx, const float *x, float *y,
                             int64_t y_numel, int64_t base,
                             const int64_t *desc, int32_t zero_first) {
  if (pdrt::hasError(ctx))
    return;
  if (zero_first)
    std::memset(y, 0, sizeof(float) * y_numel);
  int64_t total = pdrt_desc_numel(desc);
  for (int64_t i = 0; i < total; ++i) {
    int64_t offset;
    pdrt_desc_offsets(desc, i, &offset, nullptr);
    y[base + offset] = x[i];
  }
}

namespace {
/// Offset of linear index `linear` through stride array `which` (0-based)
/// of a descriptor [rank, dims[rank], strides[rank] x k].
int64_t stridedOffset(const int64_t *desc, int64_t linear, int which) {
  int64_t rank = desc[0], offset = 0;
  const int64_t *dims = desc + 1, *strides = desc + 1 + rank * (1 + which);
  for (int64_t d = rank - 1; d >= 0; --d) {
    offset += (linear % dims[d]) * strides[d];
    linear /= dims[d];
  }
  return offset;
}
} // namespace

extern "C" void pdrt_where(pdrt_ctx *ctx, const uint8_t *cond, const float *a,
                           const float *b, float *out, const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  int64_t total = pdrt_desc_numel(desc);
  for (int64_t i = 0; i < total; ++i)
    out[i] = cond[stridedOffset(desc, i, 0)] ? a[stridedOffset(desc, i, 1)]
                                             : b[stridedOffset(desc, i, 2)];
}

extern "C" void pdrt_where_grad(pdrt_ctx *ctx, const float *dy,
                                const uint8_t *cond, float *dx,
                                const int64_t *desc, int32_t negate) {
  if (pdrt::hasError(ctx))
    return;
  int64_t total = pdrt_desc_numel(desc);
  for (int64_t i = 0; i < total; ++i) {
    bool take = (cond[stridedOffset(desc, i, 0)] != 0) != (negate != 0);
    dx[i] = take ? dy[i] : 0.0f;
  }
}
