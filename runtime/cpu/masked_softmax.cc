//===- masked_softmax.cc - Attention's scaled, masked softmax ---------------===//
//
// y = softmax(mask ? scale * x : -inf) per row, and its gradient. The
// mask is a compile-time constant shared by every batch entry and head (a
// causal mask), or a tensor of the step (a padding mask: one [R, dim]
// block per group of rows, broadcast over the heads between). A causal
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
#include <string>
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
/// vectorised, the sum in double, as pdrt_softmax does. A row whose
/// softmax is NaN (a NaN or +inf score, or every score -inf) has a NaN
/// sum and every element NaN; with zeroNan it is zero instead.
void softmaxInPlace(float *y, int64_t n, float max, bool zeroNan) {
  double sum = pdrt::vmath::expSum(y, max, y, n);
  if (zeroNan && std::isnan(sum)) {
    std::memset(y, 0, n * sizeof(float));
    return;
  }
  float inv = (float)(1.0 / sum);
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

/// What a row that keeps nothing holds: 0, or 1 / dim everywhere (the
/// softmax of a row of one finite fill).
void emptyRow(float *y, int64_t dim, bool uniform) {
  if (!uniform) {
    std::memset(y, 0, dim * sizeof(float));
    return;
  }
  float inv = (float)(1.0 / (double)dim);
  for (int64_t k = 0; k < dim; ++k)
    y[k] = inv;
}

/// y[0, n) = softmax(scale * x[0, n)); y[n, end) is zero.
void scaledSoftmaxPrefix(const float *x, float *y, int64_t n, int64_t end,
                         float scale, bool zeroNan) {
  if (n > 0)
    softmaxInPlace(y, n, pdrt::vmath::scaledMax(x, scale, y, n), zeroNan);
  std::memset(y + n, 0, (end - n) * sizeof(float));
}

/// One row under an arbitrary mask: dropped elements become -inf, whose
/// exp is 0; a row that keeps nothing is emptyRow's.
void scaledSoftmaxMasked(const float *x, const uint8_t *mask, float *y,
                         int64_t dim, float scale, bool zeroNan,
                         bool uniformEmpty) {
  const float ninf = -std::numeric_limits<float>::infinity();
  bool any = false;
  for (int64_t k = 0; k < dim; ++k) {
    y[k] = mask[k] ? scale * x[k] : ninf;
    any |= mask[k] != 0;
  }
  if (any)
    softmaxInPlace(y, dim, pdrt::vmath::max(y, dim), zeroNan);
  else
    emptyRow(y, dim, uniformEmpty);
}

/// Which mask row each row of x reads: the mask is blocks of `rows` rows;
/// x's rows split into runs of `perGroup`, run g reading block g, and
/// within a run row r reads block row r % rows.
struct MaskRows {
  int64_t rows = 1, perGroup = 1;
  int64_t of(int64_t r) const { return r / perGroup * rows + r % rows; }
};

/// What a call computes besides the rows: the masks' kept prefixes
/// (keptPrefix, -1: not a prefix), the scale, the diagonal block, whether
/// a NaN row becomes zero and whether an empty row is uniform.
struct SoftmaxCall {
  const uint8_t *mask = nullptr;
  MaskRows maskRows;
  std::vector<int64_t> prefix;
  float scale = 1.0f;
  int64_t block = 0;
  bool zeroNan = false, uniformEmpty = false;
};

/// pdrt_masked_softmax over rows [first, last).
void maskedSoftmaxRows(const float *x, float *y, int64_t first, int64_t last,
                       int64_t dim, const SoftmaxCall &c) {
  for (int64_t r = first; r < last; ++r) {
    if (!c.mask) {
      scaledSoftmaxPrefix(x + r * dim, y + r * dim, dim, dim, c.scale,
                          c.zeroNan);
      continue;
    }
    int64_t m = c.maskRows.of(r);
    if (c.prefix[m] == 0 && c.uniformEmpty)
      emptyRow(y + r * dim, dim, true);
    else if (c.prefix[m] >= 0)
      scaledSoftmaxPrefix(x + r * dim, y + r * dim, c.prefix[m],
                          writtenEnd(c.prefix[m], dim, c.block), c.scale,
                          c.zeroNan);
    else
      scaledSoftmaxMasked(x + r * dim, c.mask + m * dim, y + r * dim, dim,
                          c.scale, c.zeroNan, c.uniformEmpty);
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
/// or written row for row, and every run reads all of `shared` (a mask:
/// its address and bytes). It splits into runs whose length is a
/// multiple of `period` (the mask's or the causal pattern's rows; 0: none).
class DeferredRows : public pdrt::DeferredKernel {
public:
  using Operand = std::pair<const float *, bool>;
  using Shared = std::pair<const void *, int64_t>;
  DeferredRows(int64_t rows, int64_t dim, int64_t period,
               std::vector<Operand> operands, Shared shared,
               std::function<void(int64_t, int64_t)> runRows)
      : rows_(rows), dim_(dim), period_(period), operands_(std::move(operands)),
        shared_(shared), runRows_(std::move(runRows)) {}
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
    if (auto [base, bytes] = shared_; base && bytes > 0) {
      pdrt::EntryAccess e;
      e.rows = 1;
      e.rowBytes = e.ldBytes = bytes;
      e.bases.assign(parts, (uintptr_t)base);
      out.push_back(std::move(e));
    }
  }
  void key(std::vector<uintptr_t> &out) const override {
    for (auto [base, write] : operands_)
      out.push_back((uintptr_t)base);
    out.insert(out.end(),
               {(uintptr_t)shared_.first, (uintptr_t)rows_, (uintptr_t)dim_});
  }

private:
  int64_t rows_, dim_, period_;
  std::vector<Operand> operands_;
  Shared shared_;
  std::function<void(int64_t, int64_t)> runRows_;
};

} // namespace

extern "C" void pdrt_masked_softmax(pdrt_ctx *ctx, const float *x,
                                    const uint8_t *mask, float *y, int64_t rows,
                                    int64_t dim, int64_t mask_rows,
                                    int64_t mask_groups, float scale,
                                    int64_t block, int64_t flags) {
  if (pdrt::hasError(ctx) || rows <= 0 || dim <= 0)
    return;
  SoftmaxCall call;
  call.mask = mask;
  call.scale = scale;
  call.block = block;
  call.zeroNan = (flags & PDRT_SOFTMAX_ZERO_NAN_ROWS) != 0;
  call.uniformEmpty = (flags & PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS) != 0;
  if (mask) {
    if (mask_rows <= 0 || mask_groups <= 0 ||
        (mask_groups > 1 && rows % (mask_rows * mask_groups) != 0)) {
      pdrt::setError(ctx, "pdrt_masked_softmax: " + std::to_string(rows) +
                              " rows do not split into " +
                              std::to_string(mask_groups) + " groups of " +
                              std::to_string(mask_rows) + " mask rows");
      return;
    }
    call.maskRows = {mask_rows, rows / mask_groups};
    // Each mask row's kept prefix, once for all the rows that share it.
    call.prefix.resize(mask_rows * mask_groups);
    for (int64_t m = 0; m < (int64_t)call.prefix.size(); ++m)
      call.prefix[m] = keptPrefix(mask + m * dim, dim);
  }
  if (pdrt::interleaving(ctx)) {
    // Every run reads the whole mask: the group's other calls must not
    // write it (a padding mask is a tensor of the step).
    int64_t period = mask ? mask_rows : 0;
    int64_t maskBytes = (int64_t)call.prefix.size() * dim;
    pdrt::defer(ctx,
                std::make_unique<DeferredRows>(
                    rows, dim, period,
                    std::vector<DeferredRows::Operand>{{x, false}, {y, true}},
                    DeferredRows::Shared{mask, maskBytes},
                    [=, call = std::move(call)](int64_t first, int64_t last) {
                      maskedSoftmaxRows(x, y, first, last, dim, call);
                    }));
    return;
  }
  maskedSoftmaxRows(x, y, 0, rows, dim, call);
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
                         DeferredRows::Shared{nullptr, 0},
                         [=](int64_t first, int64_t last) {
                           maskedSoftmaxGradRows(dy, y, dx, first, last, dim,
                                                 scale, causal_rows, block);
                         }));
    return;
  }
  maskedSoftmaxGradRows(dy, y, dx, 0, rows, dim, scale, causal_rows, block);
}
