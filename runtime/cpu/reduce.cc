//===- reduce.cc - pdrt_sum_to: sum over broadcast dimensions -----------------===//
//
// The backward of a broadcast: the forward read y[off(i)] for every element
// i of x's shape (stride 0 on broadcast dims), so the gradient sums x into
// y[off(i)]. Rows reduced along their inner dimension sum in double.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt_numerics.h"

#include <cstring>

extern "C" void pdrt_sum_to(pdrt_ctx *ctx, const float *x, float *y,
                            int64_t out_numel, const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  int64_t rank = desc[0];
  if (rank < 0 || rank > PDRT_MAX_RANK) {
    pdrt::setError(ctx, pdrt::format("pdrt_sum_to: bad rank %lld", (long long)rank));
    return;
  }
  if (out_numel > 0)
    std::memset(y, 0, (size_t)out_numel * sizeof(float));
  int64_t inner = rank ? desc[rank] : 1;
  int64_t stride = rank ? desc[2 * rank] : 0;
  int64_t total = pdrt_desc_numel(desc);
  if (inner == 0 || total == 0)
    return;
  for (int64_t row = 0; row < total / inner; ++row) {
    int64_t off;
    pdrt_desc_offsets(desc, row * inner, &off, nullptr);
    const float *xr = x + row * inner;
    if (stride == 0) {
      double s = 0.0;
      for (int64_t i = 0; i < inner; ++i)
        s += xr[i];
      y[off] += (float)s;
    } else if (stride == 1) {
      // A bias gradient: rows added into y, vectorised (x and y never
      // alias).
      float *__restrict yr = y + off;
      const float *__restrict xs = xr;
      for (int64_t i = 0; i < inner; ++i)
        yr[i] += xs[i];
    } else {
      float *yr = y + off;
      for (int64_t i = 0; i < inner; ++i)
        yr[i * stride] += xr[i];
    }
  }
}
