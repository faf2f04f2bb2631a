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
// Inside pdrt_interleave_begin / _end a batched call is recorded and run
// entry by entry (exec/interleave.h; its descriptor, constant data of the
// stage code, must live until the end). Degenerate shapes (k == 0) are
// handled here. pdrt_matmul_bias starts C from the bias rows and lets the
// GEMM add the product (beta = 1), so a Linear layer's bias costs no extra
// pass over C. Also sizes the thread pools
// (OpenBLAS for the BLAS users left, OpenMP for oneDNN) so that the ranks
// sharing a machine do not oversubscribe its cores.
//
//===----------------------------------------------------------------------===//

#include "cpu/gemm_library.h"
#include "cpu/sgemm_tn.h"
#include "cpu/small_gemm.h"
#include "exec/context.h"
#include "exec/interleave.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
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
                         const float *b, float *c, bool accumulate) {
  for (const GemmStrip &s : strips) {
    if (s.innerSize == 0) {
      if (!accumulate)
        zeroStrip(g, s, c);
      continue;
    }
    // op(B)[s.inner, s.col] in the stored B.
    const float *bAt = g.tb ? b + s.col * g.ldb + s.inner
                            : b + s.inner * g.ldb + s.col;
    if (dnnl_sgemm(g.ta ? 'T' : 'N', g.tb ? 'T' : 'N', s.rows, s.cols,
                   s.innerSize, 1.0f, g.aAt(a, s.row, s.inner), g.lda, bAt,
                   g.ldb, accumulate ? 1.0f : 0.0f, c + s.row * g.ldc + s.col,
                   g.ldc) != dnnl_success)
      return false;
  }
  return true;
}

namespace {

/// One pdrt_batch_matmul_strided call, its kernels chosen: runs any range
/// of its batch entries. A batch dim along which C steps 0 (grouped-query
/// attention's dK and dV, pd.batch_matmul's result_groups) sums its
/// entries' products into one C: the entry at index 0 of every such dim
/// writes C, the others add to it, in the order of the entries.
class StridedBatchGemm {
public:
  explicit StridedBatchGemm(const int64_t *desc) {
    rank_ = desc[0];
    dims_ = desc + 1;
    as_ = dims_ + rank_, bs_ = as_ + rank_, cs_ = bs_ + rank_;
    const int64_t *g = cs_ + rank_;
    triangle_ = (int)g[8];
    shape_ = {g[0], g[1], g[2], g[3] != 0, g[4] != 0, g[5], g[6], g[7]};
    for (int64_t i = 0; i < rank_; ++i) {
      entries_ *= dims_[i];
      accumulates_ |= cs_[i] == 0 && dims_[i] > 1;
    }
    if (shape_.k > 0 && pdrt::isSmallGemm(shape_, triangle_)) {
      small_.emplace(shape_, triangle_, accumulates_);
      if (!small_->ok())
        small_.reset();
    }
    if (!small_)
      strips_ =
          pdrt::gemmStrips(shape_, triangle_, pdrt::ResultStrips::Columns);
  }

  int64_t entries() const { return entries_; }

  /// Whether some entries add their product to another entry's C.
  bool accumulates() const { return accumulates_; }

  const pdrt::GemmShape &shape() const { return shape_; }

  /// The element offsets of entry `index` in A, B and C; whether it adds
  /// to C (a nonzero index along a dim C steps 0).
  bool offsets(int64_t index, int64_t &ao, int64_t &bo, int64_t &co) const {
    ao = bo = co = 0;
    bool adds = false;
    for (int64_t i = rank_ - 1, rest = index; i >= 0; --i) {
      int64_t at = rest % dims_[i];
      rest /= dims_[i];
      ao += at * as_[i];
      bo += at * bs_[i];
      co += at * cs_[i];
      adds |= at > 0 && cs_[i] == 0;
    }
    return adds;
  }

  /// C = op(A) op(B) (or C +=) for entries [first, last).
  void run(pdrt_ctx *ctx, const float *a, const float *b, float *c,
           int64_t first, int64_t last) const {
    for (int64_t index = first; index < last; ++index) {
      int64_t ao, bo, co;
      bool adds = offsets(index, ao, bo, co);
      if (!runEntry(ctx, a + ao, b + bo, c + co, adds))
        return;
    }
  }

private:
  bool runEntry(pdrt_ctx *ctx, const float *a, const float *b, float *c,
                bool adds) const {
    if (shape_.k == 0) {
      for (int64_t r = 0; r < shape_.m && !adds; ++r)
        std::memset(c + r * shape_.ldc, 0, shape_.n * sizeof(float));
      return true;
    }
    if (small_) {
      if (small_->run(a, b, c, adds))
        return true;
      pdrt::setError(ctx, "pdrt_batch_matmul_strided: out of memory for "
                          "a transposed operand");
      return false;
    }
    if (pdrt::runOneDnnGemm(shape_, strips_, a, b, c, adds))
      return true;
    pdrt::setError(ctx, pdrt::format("pdrt_batch_matmul_strided: dnnl_sgemm "
                                     "of %lld x %lld x %lld failed",
                                     (long long)shape_.m, (long long)shape_.n,
                                     (long long)shape_.k));
    return false;
  }

  int64_t rank_ = 0, entries_ = 1;
  bool accumulates_ = false;
  const int64_t *dims_, *as_, *bs_, *cs_;
  int triangle_ = 0;
  pdrt::GemmShape shape_;
  std::optional<pdrt::SmallGemmBatch> small_;
  std::vector<pdrt::GemmStrip> strips_;
};

/// A pdrt_batch_matmul_strided call recorded in an interleaved group.
class DeferredBatchGemm : public pdrt::DeferredKernel {
public:
  DeferredBatchGemm(const float *a, const float *b, float *c,
                    const int64_t *desc)
      : a_(a), b_(b), c_(c), desc_(desc), gemm_(desc) {}
  int64_t gemmEntries() const override { return gemm_.entries(); }
  bool splits(int64_t parts) const override {
    return parts == 1 || parts == gemm_.entries();
  }
  void run(pdrt_ctx *ctx, int64_t i, int64_t parts) override {
    if (parts == 1)
      gemm_.run(ctx, a_, b_, c_, 0, gemm_.entries());
    else
      gemm_.run(ctx, a_, b_, c_, i, i + 1);
  }

  void accesses(int64_t /*parts: its entries*/,
                std::vector<pdrt::EntryAccess> &out) const override {
    const pdrt::GemmShape &g = gemm_.shape();
    // The stored operands' rectangles: op(A) m x k, op(B) k x n, C m x n.
    auto rect = [](bool write, bool transposed, int64_t rows, int64_t cols,
                   int64_t ld) {
      pdrt::EntryAccess e;
      e.write = write;
      e.rows = transposed ? cols : rows;
      e.rowBytes = (transposed ? rows : cols) * (int64_t)sizeof(float);
      e.ldBytes = ld * (int64_t)sizeof(float);
      return e;
    };
    pdrt::EntryAccess a = rect(false, g.ta, g.m, g.k, g.lda),
                      b = rect(false, g.tb, g.k, g.n, g.ldb),
                      c = rect(true, false, g.m, g.n, g.ldc);
    c.accumulates = gemm_.accumulates();
    for (int64_t e = 0; e < gemm_.entries(); ++e) {
      int64_t ao, bo, co;
      gemm_.offsets(e, ao, bo, co);
      a.bases.push_back((uintptr_t)(a_ + ao));
      b.bases.push_back((uintptr_t)(b_ + bo));
      c.bases.push_back((uintptr_t)(c_ + co));
    }
    out.push_back(std::move(a));
    out.push_back(std::move(b));
    out.push_back(std::move(c));
  }
  void key(std::vector<uintptr_t> &out) const override {
    out.insert(out.end(), {(uintptr_t)a_, (uintptr_t)b_, (uintptr_t)c_,
                           (uintptr_t)desc_});
  }

private:
  const float *a_, *b_;
  float *c_;
  const int64_t *desc_;
  StridedBatchGemm gemm_;
};

} // namespace

extern "C" void pdrt_batch_matmul_strided(pdrt_ctx *ctx, const float *a,
                                          const float *b, float *c,
                                          const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  if (pdrt::interleaving(ctx)) {
    pdrt::defer(ctx, std::make_unique<DeferredBatchGemm>(a, b, c, desc));
    return;
  }
  StridedBatchGemm gemm(desc);
  gemm.run(ctx, a, b, c, 0, gemm.entries());
}
