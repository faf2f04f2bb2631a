//===- matmul.cc - pdrt_matmul on OpenBLAS ------------------------------------===//
//
// C[m,n] = alpha * op(A) * op(B) + beta * C with one row-major cblas_sgemm.
// Degenerate shapes (k == 0) are handled here, since BLAS leading-dimension
// rules reject zero-sized operands.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"

#include <cblas.h>

extern "C" void pdrt_matmul(pdrt_ctx *ctx, const float *a, const float *b,
                            float *c, int64_t m, int64_t n, int64_t k,
                            int32_t trans_a, int32_t trans_b, float alpha,
                            float beta) {
  if (pdrt::hasError(ctx) || m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    for (int64_t i = 0; i < m * n; ++i)
      c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return;
  }
  int64_t lda = trans_a ? m : k;
  int64_t ldb = trans_b ? k : n;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c,
              (blasint)n);
}
