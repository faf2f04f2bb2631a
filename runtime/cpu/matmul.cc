//===- matmul.cc - pdrt_matmul on OpenBLAS ------------------------------------===//
//
// C[m,n] = alpha * op(A) * op(B) + beta * C with one row-major cblas_sgemm.
// Degenerate shapes (k == 0) are handled here, since BLAS leading-dimension
// rules reject zero-sized operands. Also sizes OpenBLAS's thread pool so the
// ranks sharing a machine do not oversubscribe its cores.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"

#include <cblas.h>

#include <cstdlib>
#include <thread>

namespace pdrt {

void setBlasThreads(int localRanks) {
  if (std::getenv("OPENBLAS_NUM_THREADS") || std::getenv("OMP_NUM_THREADS"))
    return; // The user chose.
  int cores = (int)std::thread::hardware_concurrency();
  int threads = cores / (localRanks > 0 ? localRanks : 1);
  openblas_set_num_threads(threads > 0 ? threads : 1);
}

} // namespace pdrt

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
