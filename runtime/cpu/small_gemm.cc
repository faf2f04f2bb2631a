//===- small_gemm.cc - Attention's small batched GEMMs on libxsmm ---------===//
//
// libxsmm's kernels are column-major: a row-major C = op(A) op(B) is the
// column-major C^T = op(B)^T op(A)^T, so the kernel's first operand is B
// (n x k, column-major, as B is stored row-major when not transposed), its
// second A (transposed by LIBXSMM_GEMM_FLAG_TRANS_B when op(A) = A^T).
//
//===----------------------------------------------------------------------===//

#include "cpu/small_gemm.h"

#include "cpu/scratch.h"
#include "pdrt/pdrt_codes.h"

#include <libxsmm.h>

#include <algorithm>
#include <cstring>

namespace pdrt {

bool isSmallGemm(const GemmShape &g, int triangle) {
  if (g.k * g.n > (int64_t(128) << 10))
    return false;
  return triangle != PDRT_DENSE || (g.k <= 256 && g.k * g.n <= (64 << 10));
}

SmallGemmBatch::SmallGemmBatch(const GemmShape &g, int triangle) : g_(g) {
  const int64_t block = PDRT_CAUSAL_BLOCK;
  if (triangle == PDRT_DENSE)
    strips_.push_back({0, g.m, 0, g.k, g.n, nullptr});
  else
    for (int64_t at = 0; at < g.m; at += block) {
      int64_t rows = std::min(block, g.m - at);
      if (triangle == PDRT_RESULT_LOWER)
        strips_.push_back({at, rows, 0, g.k, std::min(at + rows, g.n), nullptr});
      else if (triangle == PDRT_LHS_LOWER)
        strips_.push_back({at, rows, 0, std::min(at + rows, g.k), g.n, nullptr});
      else
        strips_.push_back({at, rows, at, std::max<int64_t>(g.k - at, 0), g.n,
                           nullptr});
    }
  // B as the kernels read it: stored, or transposed into scratch (ld n).
  libxsmm_blasint ldb = g.tb ? g.n : g.ldb, lda = g.lda, ldc = g.ldc;
  float alpha = 1.0f, beta = 0.0f;
  int flags = g.ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  for (Strip &s : strips_) {
    if (s.innerSize == 0 || s.cols == 0)
      continue;
    s.kernel = libxsmm_smmdispatch(s.cols, s.rows, s.innerSize, &ldb, &lda,
                                   &ldc, &alpha, &beta, &flags, &prefetch);
    ok_ = ok_ && s.kernel;
  }
}

bool SmallGemmBatch::run(const float *a, const float *b, float *c) const {
  int64_t ldb = g_.ldb;
  if (g_.tb) {
    // op(B) = B^T: B is stored n x k (column-major k x n); its transpose,
    // row-major k x n, is what the kernels read.
    thread_local Scratch scratch;
    float *t = static_cast<float *>(scratch.get(g_.k * g_.n * sizeof(float)));
    if (!t)
      return false;
    libxsmm_otrans(t, b, sizeof(float), g_.k, g_.n, g_.ldb, g_.n);
    b = t;
    ldb = g_.n;
  }
  for (const Strip &s : strips_) {
    float *cRows = c + s.row * g_.ldc;
    if (!s.kernel) {
      for (int64_t r = 0; r < s.rows; ++r)
        std::memset(cRows + r * g_.ldc, 0, s.cols * sizeof(float));
      continue;
    }
    const float *aStrip = g_.ta ? a + s.inner * g_.lda + s.row
                                : a + s.row * g_.lda + s.inner;
    s.kernel(b + s.inner * ldb, aStrip, cRows);
  }
  return true;
}

} // namespace pdrt
