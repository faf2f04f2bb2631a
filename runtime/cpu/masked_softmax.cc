//===- masked_softmax.cc - Attention's scaled, masked softmax ---------------===//
//
// y = softmax(mask ? scale * x : -inf) per row, and its gradient. A causal
// mask keeps a prefix of every row: only the prefix is exponentiated and
// the tail is zeroed (only up to the end of the row's diagonal block when
// the caller passes the block: the GEMMs reading the result skip the
// blocks past it), which halves the exp work of causal attention. Other
// masks go through a row of -inf. Under the causal mask the gradient reads
// each row's prefix only (the GEMM before it skipped the tail). The sums
// and the gradient's dot products are in double over 16 lanes (vmath::sum,
// vmath::dot), as in pdrt_softmax and pdrt_softmax_grad, whose bits they
// reproduce: a serial double sum was one 4-cycle dependency per element.
// Inside pdrt_interleave_begin / _end a call is recorded and run in equal
// runs of rows, one per batch entry of the group (exec/interleave.h).
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "exec/interleave.h"
#include "pdrt/pdrt.h"
#include "vmath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace {

/// The number of leading kept elements of `mask`, or -1 when a dropped
/// element comes before a kept one (the mask is not a prefix).
int64_t keptPrefix(const uint8_t *mask, int64_t dim) {
  int64_t kept = 0;
  while (kept < dim && mask[kept])
    ++kept;
  for (int64_t k = kept; k < dim; ++k)
    if (mask[k])
      return -1;
  return kept;
}

/// y[0, n) = softmax(y[0, n)) in place given the row's max: exp(y - max)
/// vectorised, the sum in double, as pdrt_softmax does.
void softmaxInPlace(float *y, int64_t n, float max) {
  float inv = (float)(1.0 / pdrt::vmath::expSum(y, max, y, n));
  for (int64_t k = 0; k < n; ++k)
    y[k] *= inv;
}

/// Where a row whose first n elements are kept ends: dim, or with
/// block > 0 the end of the diagonal block holding its last kept element.
int64_t writtenEnd(int64_t n, int64_t dim, int64_t block) {
  if (block <= 0 || n <= 0)
    return dim;
  return std::min((n - 1) / block * block + block, dim);
}

/// y[0, n) = softmax(scale * x[0, n)); y[n, end) is zero.
void scaledSoftmaxPrefix(const float *x, float *y, int64_t n, int64_t end,
                         float scale) {
  if (n > 0)
    softmaxInPlace(y, n, pdrt::vmath::scaledMax(x, scale, y, n));
  std::memset(y + n, 0, (end - n) * sizeof(float));
}

/// One row under an arbitrary mask: dropped elements become -inf, whose
/// exp is 0; a row that keeps nothing is zero.
void scaledSoftmaxMasked(const float *x, const uint8_t *mask, float *y,
                         int64_t dim, float scale) {
  const float ninf = -std::numeric_limits<float>::infinity();
  bool any = false;
  for (int64_t k = 0; k < dim; ++k) {
    y[k] = mask[k] ? scale * x[k] : ninf;
    any |= mask[k] != 0;
  }
  if (any)
    softmaxInPlace(y, dim, pdrt::vmath::max(y, dim));
  else
    std::memset(y, 0, dim * sizeof(float));
}

/// pdrt_masked_softmax over rows [first, last), the masks' kept prefixes
/// (keptPrefix, -1: not a prefix) given.
void maskedSoftmaxRows(const float *x, const uint8_t *mask, float *y,
                       int64_t first, int64_t last, int64_t dim,
                       const std::vector<int64_t> &prefix, float scale,
                       int64_t block) {
  for (int64_t r = first; r < last; ++r) {
    if (!mask) {
      scaledSoftmaxPrefix(x + r * dim, y + r * dim, dim, dim, scale);
      continue;
    }
    int64_t m = r % (int64_t)prefix.size();
    if (prefix[m] >= 0)
      scaledSoftmaxPrefix(x + r * dim, y + r * dim, prefix[m],
                          writtenEnd(prefix[m], dim, block), scale);
    else
      scaledSoftmaxMasked(x + r * dim, mask + m * dim, y + r * dim, dim,
                          scale);
  }
}

/// pdrt_masked_softmax_grad over rows [first, last).
void maskedSoftmaxGradRows(const float *dy, const float *y, float *dx,
                           int64_t first, int64_t last, int64_t dim,
                           float scale, int64_t causalRows, int64_t block) {
  for (int64_t r = first; r < last; ++r) {
    const float *dyr = dy + r * dim, *yr = y + r * dim;
    float *dxr = dx + r * dim;
    // A causal row's tail has y = 0; its dy was not computed
    // (PDRT_RESULT_LOWER), so only the prefix is read.
    int64_t n = causalRows > 0 ? std::min(r % causalRows + 1, dim) : dim;
    float s = (float)pdrt::vmath::dot(dyr, yr, n);
    for (int64_t k = 0; k < n; ++k)
      dxr[k] = scale * (yr[k] * (dyr[k] - s));
    int64_t end = causalRows > 0 ? writtenEnd(n, dim, block) : dim;
    std::memset(dxr + n, 0, (end - n) * sizeof(float));
  }
}

/// Whether `rows` split into `parts` equal runs whose every row sees the
/// mask (or causal) row it would see in the whole call: the run length is
/// a multiple of the pattern's period.
bool splitsRows(int64_t rows, int64_t period, int64_t parts) {
  if (parts == 1)
    return true;
  if (parts <= 0 || rows % parts != 0)
    return false;
  return period <= 0 || (rows / parts) % period == 0;
}

/// `parts` equal runs of `rows` rows of `dim` floats from `base`.
pdrt::EntryAccess rowRuns(const float *base, int64_t rows, int64_t dim,
                          int64_t parts, bool write) {
  pdrt::EntryAccess e;
  e.write = write;
  e.rows = rows / parts;
  e.rowBytes = e.ldBytes = dim * (int64_t)sizeof(float);
  for (int64_t i = 0; i < parts; ++i)
    e.bases.push_back((uintptr_t)(base + i * e.rows * dim));
  return e;
}

/// A call over rows recorded in an interleaved group: `runRows(first,
/// last)` computes rows [first, last); each of `operands` (a pointer to
/// `rows` rows of `dim` floats, and whether the call writes it) is read
/// or written row for row. It splits into runs whose length is a multiple
/// of `period` (the mask's or the causal pattern's rows; 0: none).
class DeferredRows : public pdrt::DeferredKernel {
public:
  using Operand = std::pair<const float *, bool>;
  DeferredRows(int64_t rows, int64_t dim, int64_t period,
               std::vector<Operand> operands,
               std::function<void(int64_t, int64_t)> runRows)
      : rows_(rows), dim_(dim), period_(period),
        operands_(std::move(operands)), runRows_(std::move(runRows)) {}
  bool splits(int64_t parts) const override {
    return splitsRows(rows_, period_, parts);
  }
  void run(pdrt_ctx *, int64_t i, int64_t parts) override {
    int64_t per = rows_ / parts;
    runRows_(i * per, (i + 1) * per);
  }
  void accesses(int64_t parts,
                std::vector<pdrt::EntryAccess> &out) const override {
    for (auto [base, write] : operands_)
      out.push_back(rowRuns(base, rows_, dim_, parts, write));
  }
  void key(std::vector<uintptr_t> &out) const override {
    for (auto [base, write] : operands_)
      out.push_back((uintptr_t)base);
    out.insert(out.end(), {(uintptr_t)rows_, (uintptr_t)dim_});
  }

private:
  int64_t rows_, dim_, period_;
  std::vector<Operand> operands_;
  std::function<void(int64_t, int64_t)> runRows_;
};

} // namespace

extern "C" void pdrt_masked_softmax(pdrt_ctx *ctx, const float *x,
                                    const uint8_t *mask, float *y,
                                    int64_t rows, int64_t dim,
                                    int64_t mask_rows, float scale,
                                    int64_t block) {
  if (pdrt::hasError(ctx) || rows <= 0 || dim <= 0)
    return;
  // Each mask row's kept prefix, once for all the rows that share it.
  std::vector<int64_t> prefix(mask ? mask_rows : 0);
  for (int64_t m = 0; m < (int64_t)prefix.size(); ++m)
    prefix[m] = keptPrefix(mask + m * dim, dim);
  if (pdrt::interleaving(ctx)) {
    // The mask is constant data of the stage: no call writes it.
    int64_t period = mask ? mask_rows : 0;
    pdrt::defer(ctx, std::make_unique<DeferredRows>(
                         rows, dim, period,
                         std::vector<DeferredRows::Operand>{{x, false}, {y, true}},
                         [=, prefix = std::move(prefix)](int64_t first, int64_t last) {
                           maskedSoftmaxRows(x, mask, y, first, last, dim,
                                             prefix, scale, block);
                         }));
    return;
  }
  maskedSoftmaxRows(x, mask, y, 0, rows, dim, prefix, scale, block);
}

extern "C" void pdrt_masked_softmax_grad(pdrt_ctx *ctx, const float *dy,
                                         const float *y, float *dx,
                                         int64_t rows, int64_t dim,
                                         float scale, int64_t causal_rows,
                                         int64_t block) {
  if (pdrt::hasError(ctx) || rows <= 0 || dim <= 0)
    return;
  if (pdrt::interleaving(ctx)) {
    pdrt::defer(ctx, std::make_unique<DeferredRows>(
                         rows, dim, causal_rows,
                         std::vector<DeferredRows::Operand>{
                             {dy, false}, {y, false}, {dx, true}},
                         [=](int64_t first, int64_t last) {
                           maskedSoftmaxGradRows(dy, y, dx, first, last, dim,
                                                 scale, causal_rows, block);
                         }));
    return;
  }
  maskedSoftmaxGradRows(dy, y, dx, 0, rows, dim, scale, causal_rows, block);
}
