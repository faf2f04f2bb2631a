//===- matmul.cc - pdrt_matmul on oneDNN or OpenBLAS ----------------------===//
//
// C[m,n] = alpha * op(A) * op(B) + beta * C with one row-major sgemm of
// oneDNN or OpenBLAS, the one the plan measured faster for the shape
// (gemm_library.h); on oneDNN, A^T B runs as its transpose where its
// kernel is slow on the shape (sgemm_tn.h).
// Attention's batched GEMMs skip the blocks a causal mask zeroes or never
// reads (pdrt_batch_matmul_strided's triangle; bench/kernels/causal_gemm)
// and run on libxsmm's small-GEMM kernels where op(B) is small
// (small_gemm.h), on oneDNN's otherwise.
// Degenerate shapes (k == 0) are handled here. pdrt_matmul_bias starts C
// from the bias rows and lets the GEMM add the product (beta = 1), so a
// Linear layer's bias costs no extra pass over C. Also sizes the thread pools
// (OpenBLAS for the BLAS users left, OpenMP for oneDNN) so that the ranks
// sharing a machine do not oversubscribe its cores.
//
//===----------------------------------------------------------------------===//

#include "cpu/gemm_library.h"
#include "cpu/sgemm_tn.h"
#include "cpu/small_gemm.h"
#include "exec/context.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <optional>
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
  pdrt::GemmShape2D shape{m, n, k, trans_a != 0, trans_b != 0};
  pdrt::noteProfiledGemm(ctx, shape);
  if (pdrt::chooseGemmLibrary(ctx, shape) == pdrt::GemmLibrary::OpenBLAS) {
    cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                trans_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda, b,
                ldb, beta, c, n);
    return;
  }
  bool transposed = trans_a && !trans_b &&
                    pdrt::chooseTNPath(m, n) == pdrt::TNPath::Transposed;
  bool ok = true;
  if (transposed)
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

bool pdrt::runOneDnnGemm(const GemmShape &g,
                         const std::vector<GemmStrip> &strips, const float *a,
                         const float *b, float *c) {
  for (const GemmStrip &s : strips) {
    if (s.innerSize == 0) {
      zeroStrip(g, s, c);
      continue;
    }
    // op(B)[s.inner, s.col] in the stored B.
    const float *bAt = g.tb ? b + s.col * g.ldb + s.inner
                            : b + s.inner * g.ldb + s.col;
    if (dnnl_sgemm(g.ta ? 'T' : 'N', g.tb ? 'T' : 'N', s.rows, s.cols,
                   s.innerSize, 1.0f, g.aAt(a, s.row, s.inner), g.lda, bAt,
                   g.ldb, 0.0f, c + s.row * g.ldc + s.col, g.ldc) != dnnl_success)
      return false;
  }
  return true;
}

extern "C" void pdrt_batch_matmul_strided(pdrt_ctx *ctx, const float *a,
                                          const float *b, float *c,
                                          const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  int64_t rank = desc[0];
  const int64_t *dims = desc + 1, *as = dims + rank, *bs = as + rank,
                *cs = bs + rank, *g = cs + rank;
  int64_t m = g[0], n = g[1], k = g[2];
  int triangle = (int)g[8];
  pdrt::GemmShape shape{m, n, k, g[3] != 0, g[4] != 0, g[5], g[6], g[7]};
  std::optional<pdrt::SmallGemmBatch> small;
  if (k > 0 && pdrt::isSmallGemm(shape, triangle)) {
    small.emplace(shape, triangle);
    if (!small->ok())
      small.reset();
  }
  std::vector<pdrt::GemmStrip> strips;
  if (!small)
    strips = pdrt::gemmStrips(shape, triangle, pdrt::ResultStrips::Columns);
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
        std::memset(c + co + r * shape.ldc, 0, n * sizeof(float));
      continue;
    }
    if (small) {
      if (!small->run(a + ao, b + bo, c + co)) {
        pdrt::setError(ctx, "pdrt_batch_matmul_strided: out of memory for "
                            "a transposed operand");
        return;
      }
      continue;
    }
    if (!pdrt::runOneDnnGemm(shape, strips, a + ao, b + bo, c + co)) {
      pdrt::setError(ctx, pdrt::format("pdrt_batch_matmul_strided: dnnl_sgemm "
                                       "of %lld x %lld x %lld failed",
                                       (long long)m, (long long)n,
                                       (long long)k));
      return;
    }
  }
}
