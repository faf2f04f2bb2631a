//===- matmul.cc - pdrt_matmul on oneDNN ------------------------------------===//
//
// C[m,n] = alpha * op(A) * op(B) + beta * C with one row-major dnnl_sgemm:
// on the benchmark GPTs' shapes oneDNN's single-thread sgemm is 5-16%
// faster than OpenBLAS 0.3.21's on AVX-512 (bench/kernels/sgemm_libs.cc);
// A^T B runs as its transpose or through OpenBLAS where oneDNN's kernel is
// slow on its shape (sgemm_tn.h).
// Attention's batched GEMMs skip the blocks a causal mask zeroes or never
// reads (pdrt_batch_matmul_strided's triangle; bench/kernels/causal_gemm).
// Degenerate shapes (k == 0) are handled here. pdrt_matmul_bias starts C
// from the bias rows and lets the GEMM add the product (beta = 1), so a
// Linear layer's bias costs no extra pass over C. Also sizes the thread pools
// (OpenBLAS for the BLAS users left, OpenMP for oneDNN) so that the ranks
// sharing a machine do not oversubscribe its cores.
//
//===----------------------------------------------------------------------===//

#include "cpu/sgemm_tn.h"
#include "exec/context.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace pdrt {

void setBlasThreads(int localRanks) {
  int cores = (int)std::thread::hardware_concurrency();
  int threads = cores / (localRanks > 0 ? localRanks : 1);
  threads = threads > 0 ? threads : 1;
  // What the user chose stays.
  if (!std::getenv("OPENBLAS_NUM_THREADS"))
    openblas_set_num_threads(threads);
  if (!std::getenv("OMP_NUM_THREADS"))
    omp_set_num_threads(threads);
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
  pdrt::TNPath path = trans_a && !trans_b ? pdrt::chooseTNPath(m, n)
                                           : pdrt::TNPath::Direct;
  bool ok = true;
  if (path == pdrt::TNPath::OpenBLAS)
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, lda,
                b, ldb, beta, c, n);
  else if (path == pdrt::TNPath::Transposed)
    ok = pdrt::sgemmTNThroughTranspose(m, n, k, alpha, a, lda, b, ldb, beta, c,
                                       n);
  else
    ok = dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, alpha,
                    a, lda, b, ldb, beta, c, n) == dnnl_success;
  if (!ok)
    pdrt::setError(ctx, pdrt::format("pdrt_matmul: dnnl_sgemm of %lld x %lld "
                                     "x %lld failed",
                                     (long long)m, (long long)n, (long long)k));
}

extern "C" void pdrt_matmul_bias(pdrt_ctx *ctx, const float *a, const float *b,
                                 const float *bias, float *c, int64_t m,
                                 int64_t n, int64_t k, int32_t trans_a,
                                 int32_t trans_b, float alpha) {
  if (pdrt::hasError(ctx) || m <= 0 || n <= 0)
    return;
  for (int64_t i = 0; i < m; ++i)
    std::memcpy(c + i * n, bias, n * sizeof(float));
  pdrt_matmul(ctx, a, b, c, m, n, k, trans_a, trans_b, alpha, 1.0f);
}

namespace {

/// One row-major GEMM C = op(A) op(B) (m x n, inner k) as dnnl_sgemm runs
/// it; false on a oneDNN error.
struct Gemm {
  char ta, tb;
  int64_t lda, ldb, ldc;

  /// op(A)[i, p] and op(B)[p, j] in the stored operands.
  const float *atA(const float *a, int64_t i, int64_t p) const {
    return ta == 'T' ? a + p * lda + i : a + i * lda + p;
  }
  const float *atB(const float *b, int64_t p, int64_t j) const {
    return tb == 'T' ? b + j * ldb + p : b + p * ldb + j;
  }
  bool run(int64_t m, int64_t n, int64_t k, const float *a, const float *b,
           float *c) const {
    return dnnl_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc) ==
           dnnl_success;
  }

  /// C = op(A) op(B) skipping `triangle`'s blocks (pdrt_codes.h): column
  /// blocks of a square C from the diagonal down, or row blocks of C over
  /// the nonzero columns of a triangular op(A).
  bool runTriangle(int triangle, int64_t m, int64_t n, int64_t k,
                   const float *a, const float *b, float *c) const {
    const int64_t block = PDRT_CAUSAL_BLOCK;
    for (int64_t at = 0; at < m; at += block) {
      int64_t size = std::min(block, m - at);
      bool ok = true;
      if (triangle == PDRT_RESULT_LOWER)
        ok = run(m - at, size, k, atA(a, at, 0), atB(b, 0, at),
                 c + at * ldc + at);
      else if (triangle == PDRT_LHS_LOWER)
        ok = run(size, n, at + size, atA(a, at, 0), b, c + at * ldc);
      else
        ok = run(size, n, k - at, atA(a, at, at), atB(b, at, 0),
                 c + at * ldc);
      if (!ok)
        return false;
    }
    return true;
  }
};

} // namespace

extern "C" void pdrt_batch_matmul_strided(pdrt_ctx *ctx, const float *a,
                                          const float *b, float *c,
                                          const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  int64_t rank = desc[0];
  const int64_t *dims = desc + 1, *as = dims + rank, *bs = as + rank,
                *cs = bs + rank, *g = cs + rank;
  int64_t m = g[0], n = g[1], k = g[2];
  Gemm gemm{g[3] ? 'T' : 'N', g[4] ? 'T' : 'N', g[5], g[6], g[7]};
  int triangle = (int)g[8];
  int64_t batch = 1;
  for (int64_t i = 0; i < rank; ++i)
    batch *= dims[i];
  for (int64_t index = 0; index < batch; ++index) {
    int64_t ao = 0, bo = 0, co = 0;
    for (int64_t i = rank - 1, rest = index; i >= 0; --i) {
      int64_t at = rest % dims[i];
      rest /= dims[i];
      ao += at * as[i];
      bo += at * bs[i];
      co += at * cs[i];
    }
    if (k == 0) {
      for (int64_t r = 0; r < m; ++r)
        std::memset(c + co + r * gemm.ldc, 0, n * sizeof(float));
      continue;
    }
    bool ok = triangle == PDRT_DENSE
                  ? gemm.run(m, n, k, a + ao, b + bo, c + co)
                  : gemm.runTriangle(triangle, m, n, k, a + ao, b + bo, c + co);
    if (!ok) {
      pdrt::setError(ctx, pdrt::format("pdrt_batch_matmul_strided: dnnl_sgemm "
                                       "of %lld x %lld x %lld failed",
                                       (long long)m, (long long)n,
                                       (long long)k));
      return;
    }
  }
}
