//===- sgemm_tn.h - C = A^T B on the fastest path for its shape -*- C++ -*-===//
//
// oneDNN 2.6's single-thread sgemm runs a row-major C = A^T B (A k x m,
// B k x n: the weight gradient dW = dY^T X of a Linear layer, m its output
// width) slowly when m is a multiple of 512 and n is narrow: A's rows, a
// multiple of 2 KiB apart, fall into the same L1 sets while it packs them
// (2048 x 512: 120-135 GFLOP/s against 180 for 2304 x 512). Computed as its
// transpose C^T = B^T A, the same product runs at 170-185 when m is a
// multiple of 1024; for m an odd multiple of 512 both oneDNN forms stay
// near 140-150 and OpenBLAS's, which does not alias, runs at 150-158.
// chooseTNPath picks among the three (bench/kernels/run.sh sgemm_tn times
// them over a grid of shapes and prints where the choice is not the
// fastest). The transposed path computes T = alpha B^T A into a scratch
// buffer of the thread, in column chunks that bound it, then C = T^T +
// beta C by a oneDNN reorder (with a sum post-op when beta != 0).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SGEMM_TN_H
#define PDRT_CPU_SGEMM_TN_H

#include <cstdint>

namespace pdrt {

/// How pdrt_matmul runs C = A^T B.
enum class TNPath {
  Direct,     ///< dnnl_sgemm('T', 'N')
  Transposed, ///< sgemmTNThroughTranspose
  OpenBLAS,   ///< cblas_sgemm
};

/// The fastest path for a row-major C = A^T B of m x n (see above).
TNPath chooseTNPath(int64_t m, int64_t n);

/// C = alpha A^T B + beta C (row-major; A k x m with leading dimension lda,
/// B k x n with ldb, C m x n with ldc) computed as T = alpha B^T A, at most
/// maxScratch floats of T at a time. False on a oneDNN error (C may then be
/// partly written).
bool sgemmTNThroughTranspose(int64_t m, int64_t n, int64_t k, float alpha,
                             const float *a, int64_t lda, const float *b,
                             int64_t ldb, float beta, float *c, int64_t ldc,
                             int64_t maxScratch = int64_t(1) << 21);

} // namespace pdrt

#endif // PDRT_CPU_SGEMM_TN_H
