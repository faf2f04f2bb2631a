//===- sgemm_tn.h - C = A^T B through its transpose -------------*- C++ -*-===//
//
// oneDNN 2.6's single-thread sgemm runs a row-major C = A^T B (A k x m,
// B k x n) with m large against a narrow n at 60-75 GFLOP/s on AVX-512,
// where the same product computed as its transpose C^T = B^T A runs at
// 105-150: the weight gradients of a Linear layer that widens its input
// (dW = dY^T X of the MLP's up projection, the fused QKV projection, the
// LM head: m = 4h, 3h, vocab over n = h). bench/kernels/sgemm_libs times
// both. pdrt_matmul takes this path for the shapes of
// preferTransposedResult: T = alpha B^T A into a scratch buffer of the
// thread, in column chunks that bound it, then C = T^T + beta C by a
// oneDNN reorder (with a sum post-op when beta != 0).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SGEMM_TN_H
#define PDRT_CPU_SGEMM_TN_H

#include <cstdint>

namespace pdrt {

/// Whether C = A^T B (m x n) runs faster as its transpose (see above).
bool preferTransposedResult(int64_t m, int64_t n);

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
