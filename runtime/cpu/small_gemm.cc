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

std::vector<GemmStrip> gemmStrips(const GemmShape &g, int triangle,
                                  ResultStrips form) {
  if (triangle == PDRT_DENSE)
    return {{0, g.m, 0, g.n, 0, g.k}};
  std::vector<GemmStrip> strips;
  const int64_t block = PDRT_CAUSAL_BLOCK;
  for (int64_t at = 0; at < g.m; at += block) {
    int64_t size = std::min(block, g.m - at);
    if (triangle == PDRT_RESULT_LOWER && form == ResultStrips::Rows)
      strips.push_back({at, size, 0, std::min(at + size, g.n), 0, g.k});
    else if (triangle == PDRT_RESULT_LOWER)
      strips.push_back({at, g.m - at, at, std::min(size, g.n - at), 0, g.k});
    else if (triangle == PDRT_LHS_LOWER)
      strips.push_back({at, size, 0, g.n, 0, std::min(at + size, g.k)});
    else
      strips.push_back({at, size, 0, g.n, at, std::max<int64_t>(g.k - at, 0)});
  }
  return strips;
}

void zeroStrip(const GemmShape &g, const GemmStrip &s, float *c) {
  for (int64_t r = 0; r < s.rows; ++r)
    std::memset(c + (s.row + r) * g.ldc + s.col, 0, s.cols * sizeof(float));
}

SmallGemmBatch::SmallGemmBatch(const GemmShape &g, int triangle,
                               bool accumulates)
    : g_(g), strips_(gemmStrips(g, triangle, ResultStrips::Rows)) {
  // B as the kernels read it: stored when contiguous, else copied or
  // transposed into scratch (ld n).
  libxsmm_blasint ldb = packsB() ? g.n : g.ldb, lda = g.lda, ldc = g.ldc;
  float alpha = 1.0f;
  int flags = g.ta ? LIBXSMM_GEMM_FLAG_TRANS_B : 0;
  int prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
  auto dispatch = [&](const GemmStrip &s, float beta) -> Kernel {
    if (s.innerSize == 0 || s.cols == 0)
      return nullptr;
    Kernel kernel = libxsmm_smmdispatch(s.cols, s.rows, s.innerSize, &ldb, &lda,
                                        &ldc, &alpha, &beta, &flags, &prefetch);
    ok_ = ok_ && kernel;
    return kernel;
  };
  for (const GemmStrip &s : strips_) {
    kernels_.push_back(dispatch(s, 0.0f));
    if (accumulates)
      addKernels_.push_back(dispatch(s, 1.0f));
  }
}

bool SmallGemmBatch::packsB() const { return g_.tb || g_.ldb != g_.n; }

bool SmallGemmBatch::run(const float *a, const float *b, float *c,
                         bool accumulate) const {
  if (accumulate && addKernels_.size() != strips_.size())
    return false;
  int64_t ldb = g_.ldb;
  if (packsB()) {
    thread_local Scratch scratch;
    float *t = static_cast<float *>(scratch.get(g_.k * g_.n * sizeof(float)));
    if (!t)
      return false;
    if (g_.tb) // B is stored n x k (column-major k x n): transpose it.
      libxsmm_otrans(t, b, sizeof(float), g_.k, g_.n, g_.ldb, g_.n);
    else
      for (int64_t p = 0; p < g_.k; ++p)
        std::memcpy(t + p * g_.n, b + p * g_.ldb, g_.n * sizeof(float));
    b = t;
    ldb = g_.n;
  }
  const std::vector<Kernel> &kernels = accumulate ? addKernels_ : kernels_;
  for (size_t i = 0; i < strips_.size(); ++i) {
    const GemmStrip &s = strips_[i];
    if (kernels[i])
      kernels[i](b + s.inner * ldb + s.col, g_.aAt(a, s.row, s.inner),
                 c + s.row * g_.ldc + s.col);
    else if (!accumulate)
      zeroStrip(g_, s, c);
  }
  return true;
}

} // namespace pdrt
