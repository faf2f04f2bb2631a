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
