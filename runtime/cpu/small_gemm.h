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
// transposed into a scratch buffer of the thread first (d x T floats),
// and a strided B (K or V in the QKV projection, dO) is copied into it:
// read in place, its rows 2-6 KiB apart share a few L1 sets, and O = P V,
// dV, dQ and dK ran 5-8% slower in the large benchmark GPT's steps.
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

  /// op(A)[i, p] in the stored A.
  const float *aAt(const float *a, int64_t i, int64_t p) const {
    return ta ? a + p * lda + i : a + i * lda + p;
  }
};

/// One GEMM call of a batch entry: C's rows [row, row + rows) and columns
/// [col, col + cols) over op(A)'s columns (op(B)'s rows) [inner, inner +
/// innerSize); an empty inner range writes zeros.
struct GemmStrip {
  int64_t row, rows, col, cols, inner, innerSize;
};

/// How a PDRT_RESULT_LOWER triangle is cut: row blocks up to the end of
/// their diagonal block (libxsmm's kernels run them 4-20% faster) or column
/// blocks from the diagonal down (oneDNN, which packs B for every call,
/// runs the row strips no faster than the dense product).
enum class ResultStrips { Rows, Columns };

/// The calls of one batch entry: the whole product for PDRT_DENSE, else
/// strips of PDRT_CAUSAL_BLOCK rows or columns of C skipping `triangle`'s
/// blocks (pdrt_codes.h pdrt_triangle): PDRT_RESULT_LOWER cut as `form`
/// says, PDRT_LHS_LOWER / UPPER in row blocks over op(A)'s nonzero
/// columns only. Both the libxsmm and the oneDNN path run them.
std::vector<GemmStrip> gemmStrips(const GemmShape &g, int triangle,
                                  ResultStrips form);

/// Zeroes the C rows of a strip with an empty inner range.
void zeroStrip(const GemmShape &g, const GemmStrip &s, float *c);

/// C = op(A) op(B) of one batch entry through dnnl_sgemm, one call per
/// strip (matmul.cc): the path for GEMMs isSmallGemm rejects; with
/// `accumulate`, C += op(A) op(B) (strips with an empty inner range leave
/// C as it is). False on a oneDNN error.
bool runOneDnnGemm(const GemmShape &g, const std::vector<GemmStrip> &strips,
                   const float *a, const float *b, float *c,
                   bool accumulate = false);

/// Whether a batched call's GEMMs run on libxsmm's kernels: op(B) must fit
/// in L2 with room to spare (k x n at most 128 Ki floats), as the JIT
/// kernels stream A and C against a resident B without blocking k. A
/// dense product must also be short in k (at most 256) and narrower
/// (64 Ki floats): at k = 512-1024 (P V without a mask at T = 512+) and
/// on a 2048 x 512 x 256 GEMM oneDNN's packed kernels won.
bool isSmallGemm(const GemmShape &g, int triangle);

/// The libxsmm kernels of one batched call's strips, dispatched once.
class SmallGemmBatch {
public:
  /// `accumulates`: some entries add to C (run's `accumulate`), so the
  /// strips' kernels with beta = 1 are dispatched too.
  SmallGemmBatch(const GemmShape &g, int triangle, bool accumulates = false);
  /// False if libxsmm could not generate a strip's kernel.
  bool ok() const { return ok_; }
  /// C = op(A) op(B) for one batch entry, C += op(A) op(B) with
  /// `accumulate` (strips with an empty inner range then leave C as it
  /// is); false if the scratch buffer for a transposed or strided B could
  /// not be allocated.
  bool run(const float *a, const float *b, float *c,
           bool accumulate = false) const;

private:
  /// Whether run copies op(B) into a contiguous k x n scratch buffer
  /// first: transposed, or strided (Q, K and V read in place from the QKV
  /// projection, dO from [B, T, H, D]), whose rows lie 2-6 KiB apart and
  /// fall into a few L1 sets, so every strip's kernel streamed B from L2.
  bool packsB() const;

  /// libxsmm_smmfunction (null for a strip with an empty inner range).
  using Kernel = void (*)(const float *, const float *, float *, ...);
  GemmShape g_;
  std::vector<GemmStrip> strips_;
  /// Per strip: C = ... (beta 0), and C += ... (beta 1) when accumulating.
  std::vector<Kernel> kernels_, addKernels_;
  bool ok_ = true;
};

} // namespace pdrt

#endif // PDRT_CPU_SMALL_GEMM_H
