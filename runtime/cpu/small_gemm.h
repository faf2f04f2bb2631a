//===- small_gemm.h - Attention's small batched GEMMs on libxsmm -*- C++ -*-===//
//
// Attention runs one small GEMM per (batch, head): T x T x d and T x d x T
// products with d = 64 and T = 128-256 in the benchmark GPTs, 32-row
// strips of them under a causal mask. dnnl_sgemm packs its operands on
// every call; libxsmm's JIT kernels read the operands in place, with no
// per-call set-up. Warm, on single strips (32 x n x 64 and 32 x 64 x k, n
// and k 32-256) libxsmm ran 126-202 GFLOP/s and dnnl_sgemm 66-152; on
// the batched calls of the benchmark GPTs' attention the six causal
// products take 1.1-1.5x less time (bench/kernels/run.sh causal_gemm
// compares the two). A SmallGemmBatch dispatches the kernels of one
// batched call's strips once and runs them for every batch entry.
// libxsmm's JIT has no transposed first operand in its column-major
// terms, that is no transposed B in pdrt's row-major ones: op(B) = B^T is
// transposed into a scratch buffer of the thread first (d x T floats).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SMALL_GEMM_H
#define PDRT_CPU_SMALL_GEMM_H

#include <cstdint>
#include <vector>

namespace pdrt {

/// One row-major GEMM C = op(A) op(B) (m x n, inner k) of a batched call,
/// with the leading dimensions of the stored operands.
struct GemmShape {
  int64_t m, n, k;
  bool ta, tb;
  int64_t lda, ldb, ldc;
};

/// C = op(A) op(B) of one batch entry through dnnl_sgemm, skipping
/// `triangle`'s blocks in column (PDRT_RESULT_LOWER) or row blocks of
/// PDRT_CAUSAL_BLOCK (matmul.cc): the path for GEMMs isSmallGemm rejects.
/// False on a oneDNN error.
bool runOneDnnGemm(const GemmShape &g, int triangle, const float *a,
                   const float *b, float *c);

/// Whether a batched call's GEMMs run on libxsmm's kernels: op(B) must fit
/// in L2 with room to spare (k x n at most 128 Ki floats), as the JIT
/// kernels stream A and C against a resident B without blocking k. A
/// dense product must also be short in k (at most 256) and narrower
/// (64 Ki floats): at k = 512-1024 (P V without a mask at T = 512+) and
/// on a 2048 x 512 x 256 GEMM oneDNN's packed kernels won.
bool isSmallGemm(const GemmShape &g, int triangle);

/// The kernels of one batched call, C = op(A) op(B) skipping `triangle`'s
/// blocks (pdrt_codes.h pdrt_triangle) in strips of PDRT_CAUSAL_BLOCK rows
/// of C, dispatched once.
class SmallGemmBatch {
public:
  SmallGemmBatch(const GemmShape &g, int triangle);
  /// False if libxsmm could not generate a strip's kernel.
  bool ok() const { return ok_; }
  /// C = op(A) op(B) for one batch entry; false if the scratch buffer for
  /// a transposed B could not be allocated.
  bool run(const float *a, const float *b, float *c) const;

private:
  /// One libxsmm call: C rows [row, row + rows) over op(A)'s columns /
  /// op(B)'s rows [inner, inner + innerSize) and C's columns [0, cols).
  struct Strip {
    int64_t row, rows, inner, innerSize, cols;
    /// libxsmm_smmfunction (null: the strip's product is empty, C = 0).
    void (*kernel)(const float *, const float *, float *, ...);
  };
  GemmShape g_;
  std::vector<Strip> strips_;
  bool ok_ = true;
};

} // namespace pdrt

#endif // PDRT_CPU_SMALL_GEMM_H
