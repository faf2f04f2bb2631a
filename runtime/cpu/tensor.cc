//===- tensor.cc - CPU kernels of tensor ops -----------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_tensor.h: strided copies
// and their inverse, gather and its scatter-add gradient, where and its
// branch gradient, and batched matmul as a loop of OpenBLAS GEMMs (through
// pdrt_matmul; OpenBLAS 0.3.21 has no cblas_sgemm_batch).
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_tensor_numerics.h"
#include "strided_runs.h"

#include <cstring>
#include <string>

namespace {
/// Records an error and returns false when desc's rank exceeds what the
/// strided walkers support.
bool checkRank(pdrt_ctx *ctx, const char *kernel, const int64_t *desc) {
  if (desc[0] >= 0 && desc[0] <= PDRT_MAX_RANK)
    return true;
  pdrt::setError(ctx, std::string(kernel) + ": rank " + std::to_string(desc[0]) +
                          " exceeds " + std::to_string(PDRT_MAX_RANK));
  return false;
}

/// Copies one strided run of elements of type T to a dense destination.
template <typename T>
void copyRun(const char *src, char *dst, const pdrt::StridedRun<1> &run) {
  const T *s = reinterpret_cast<const T *>(src) + run.offset[0];
  T *d = reinterpret_cast<T *>(dst) + run.linear;
  for (int64_t j = 0; j < run.count; ++j)
    d[j] = s[j * run.stride[0]];
}
} // namespace

extern "C" void pdrt_permute(pdrt_ctx *ctx, const void *x, void *y,
                             const int64_t *desc, int64_t elem_size) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_permute", desc))
    return;
  const char *src = static_cast<const char *>(x);
  char *dst = static_cast<char *>(y);
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    if (run.stride[0] == 1) {
      std::memcpy(dst + run.linear * elem_size, src + run.offset[0] * elem_size,
                  run.count * elem_size);
      return;
    }
    switch (elem_size) {
    case 4: return copyRun<uint32_t>(src, dst, run);
    case 8: return copyRun<uint64_t>(src, dst, run);
    case 1: return copyRun<uint8_t>(src, dst, run);
    default:
      for (int64_t j = 0; j < run.count; ++j)
        std::memcpy(dst + (run.linear + j) * elem_size,
                    src + (run.offset[0] + j * run.stride[0]) * elem_size,
                    elem_size);
    }
  });
}

extern "C" void pdrt_scatter(pdrt_ctx *ctx, const float *x, float *y,
                             int64_t y_numel, int64_t base, const int64_t *desc,
                             int32_t zero_first) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_scatter", desc))
    return;
  if (zero_first)
    std::memset(y, 0, sizeof(float) * y_numel);
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    float *d = y + base + run.offset[0];
    const float *s = x + run.linear;
    for (int64_t j = 0; j < run.count; ++j)
      d[j * run.stride[0]] = s[j];
  });
}

namespace {
/// Checks every index against [-rows, rows) before any data moves; records
/// the first bad one as the ctx error and returns false.
bool checkIndices(pdrt_ctx *ctx, const int64_t *idx, int64_t n, int64_t rows) {
  for (int64_t i = 0; i < n; ++i)
    if (pdrt_gather_row(idx[i], rows) < 0) {
      pdrt::setError(ctx, "gather index " + std::to_string(idx[i]) +
                              " at position " + std::to_string(i) +
                              " is outside [-" + std::to_string(rows) + ", " +
                              std::to_string(rows) + ")");
      return false;
    }
  return true;
}
} // namespace

extern "C" void pdrt_gather(pdrt_ctx *ctx, const void *data, const int64_t *idx,
                            void *out, int64_t outer, int64_t n, int64_t rows,
                            int64_t inner, int64_t elem_size) {
  if (pdrt::hasError(ctx) || !checkIndices(ctx, idx, n, rows))
    return;
  const char *src = static_cast<const char *>(data);
  char *dst = static_cast<char *>(out);
  int64_t slice = inner * elem_size;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i)
      std::memcpy(dst + (o * n + i) * slice,
                  src + (o * rows + pdrt_gather_row(idx[i], rows)) * slice,
                  slice);
}

extern "C" void pdrt_gather_grad(pdrt_ctx *ctx, const float *dout,
                                 const int64_t *idx, float *ddata,
                                 int64_t outer, int64_t n, int64_t rows,
                                 int64_t inner) {
  if (pdrt::hasError(ctx) || !checkIndices(ctx, idx, n, rows))
    return;
  std::memset(ddata, 0, sizeof(float) * outer * rows * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < n; ++i) {
      float *dst = ddata + (o * rows + pdrt_gather_row(idx[i], rows)) * inner;
      const float *src = dout + (o * n + i) * inner;
      for (int64_t j = 0; j < inner; ++j)
        dst[j] += src[j];
    }
}

extern "C" void pdrt_batch_matmul(pdrt_ctx *ctx, const float *a, const float *b,
                                  float *c, int64_t batch, int64_t m, int64_t n,
                                  int64_t k, int32_t trans_a, int32_t trans_b) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t i = 0; i < batch; ++i)
    pdrt_matmul(ctx, a + i * m * k, b + i * k * n, c + i * m * n, m, n, k,
                trans_a, trans_b, 1.0f, 0.0f);
}

extern "C" void pdrt_where(pdrt_ctx *ctx, const uint8_t *cond, const float *a,
                           const float *b, float *out, const int64_t *desc) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_where", desc))
    return;
  pdrt::forEachRun<3>(desc, [&](const pdrt::StridedRun<3> &run) {
    const uint8_t *c = cond + run.offset[0];
    const float *ar = a + run.offset[1], *br = b + run.offset[2];
    float *o = out + run.linear;
    for (int64_t j = 0; j < run.count; ++j)
      o[j] = c[j * run.stride[0]] ? ar[j * run.stride[1]] : br[j * run.stride[2]];
  });
}

extern "C" void pdrt_where_grad(pdrt_ctx *ctx, const float *dy,
                                const uint8_t *cond, float *dx,
                                const int64_t *desc, int32_t negate) {
  if (pdrt::hasError(ctx) || !checkRank(ctx, "pdrt_where_grad", desc))
    return;
  const bool flip = negate != 0;
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    const uint8_t *c = cond + run.offset[0];
    for (int64_t j = 0; j < run.count; ++j) {
      int64_t i = run.linear + j;
      dx[i] = ((c[j * run.stride[0]] != 0) != flip) ? dy[i] : 0.0f;
    }
  });
}
