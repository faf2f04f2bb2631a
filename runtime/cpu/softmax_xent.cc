//===- softmax_xent.cc - Softmax cross-entropy and its gradient ---------------===//
//
// Rows with label == ignore_index do not count; the loss is the mean over
// the counted rows of lse(row) - row[label] (pdrt_numerics.h), or with the
// _rows forms (reduction "none") each row's own value, 0 when ignored. A label
// outside [0, c) is a data error naming the row (the executor adds which
// microbatch and step). The CPU forms of pdrt_numerics.h's row functions
// compute exp a vector at a time and sum in double over 16 lanes in the
// same pass (vmath::expSum): the one summation order of the loss, its
// gradient and the fused form.
// pdrt_softmax_xent_with_grad is the loss and its seeded gradient from one
// pass of exponentials (pd-fuse-cross-entropy-gradient).
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt_numerics.h"
#include "vmath.h"

#include <algorithm>
#include <cmath>

namespace {

/// Row r + 1 of n rows of c logits, or null after the last.
const float *nextRow(const float *logits, int64_t r, int64_t n, int64_t c) {
  return r + 1 < n ? logits + (r + 1) * c : nullptr;
}

/// Cross-entropy of one row (pdrt_row_xent) from its max, exp sum and
/// the label's logit.
float xentFrom(float labelLogit, float mx, double sum) {
  return (mx + (float)std::log(sum)) - labelLogit;
}

/// Cross-entropy of one row (pdrt_row_xent). `next`, the next row or
/// null, is fetched into the cache while this row's exponentials compute
/// (the max pass reads the row from memory, the others from L1: 0.7x the
/// time on the small GPT's 1024 x 4096 logits).
float rowXent(const float *x, int64_t c, int64_t label, const float *next) {
  float mx = pdrt::vmath::max(x, c);
  return xentFrom(x[label], mx, pdrt::vmath::expSum(x, mx, nullptr, c, next));
}

/// dx = scale * (e / sum - onehot(label)) from the row's exponentials e
/// (already in dx) and their sum.
void scaleToGrad(float *dx, int64_t c, int64_t label, float scale,
                 double sum) {
  pdrt::vmath::scaleInDouble(dx, c, scale / sum);
  dx[label] -= scale;
}

/// scale * (softmax(x) - onehot(label)) of one row (pdrt_row_xent_grad),
/// with one exp pass: dx = exp(x - max), then dx * (scale / sum).
void rowXentGrad(const float *x, int64_t c, int64_t label, float scale,
                 float *dx, const float *next) {
  float mx = pdrt::vmath::max(x, c);
  scaleToGrad(dx, c, label, scale, pdrt::vmath::expSum(x, mx, dx, c, next));
}

/// Both at once: returns the row's loss and writes its gradient (dx may be
/// x: the label's logit is read before the exponentials overwrite it).
/// `next` as rowXent's.
float rowXentWithGrad(const float *x, int64_t c, int64_t label, float scale,
                      float *dx, const float *next) {
  float mx = pdrt::vmath::max(x, c);
  float labelLogit = x[label];
  double sum = pdrt::vmath::expSum(x, mx, dx, c, next);
  float loss = xentFrom(labelLogit, mx, sum);
  scaleToGrad(dx, c, label, scale, sum);
  return loss;
}

/// Counts the rows that take part in the loss; false (and the sticky error
/// set) when a label is out of range.
bool countRows(pdrt_ctx *ctx, const int64_t *labels, int64_t n, int64_t c,
               int64_t ignore, int64_t *counted) {
  *counted = 0;
  for (int64_t r = 0; r < n; ++r) {
    if (labels[r] == ignore)
      continue;
    if (labels[r] < 0 || labels[r] >= c) {
      pdrt::setError(ctx, pdrt::format("label %lld out of range [0, %lld) in row "
                                       "%lld of the microbatch",
                                       (long long)labels[r], (long long)c,
                                       (long long)r));
      return false;
    }
    ++*counted;
  }
  return true;
}

/// dlogits of every row: scaleOf(r) * (softmax - onehot) for counted rows,
/// 0 for ignored ones.
template <typename ScaleOf>
void xentGradRows(const float *logits, const int64_t *labels, float *dlogits,
                  int64_t n, int64_t c, int64_t ignore, ScaleOf scaleOf) {
  for (int64_t r = 0; r < n; ++r) {
    float *dr = dlogits + r * c;
    if (labels[r] == ignore) {
      for (int64_t j = 0; j < c; ++j)
        dr[j] = 0.0f;
      continue;
    }
    rowXentGrad(logits + r * c, c, labels[r], scaleOf(r), dr,
                nextRow(logits, r, n, c));
  }
}

} // namespace

extern "C" void pdrt_softmax_xent(pdrt_ctx *ctx, const float *logits,
                                  const int64_t *labels, float *loss,
                                  int64_t n, int64_t c, int64_t ignore_index) {
  int64_t counted;
  if (pdrt::hasError(ctx) || !countRows(ctx, labels, n, c, ignore_index, &counted))
    return;
  double sum = 0.0;
  for (int64_t r = 0; r < n; ++r)
    if (labels[r] != ignore_index)
      sum += rowXent(logits + r * c, c, labels[r], nextRow(logits, r, n, c));
  *loss = counted ? (float)(sum / (double)counted) : 0.0f;
}

// Forward computed loss = (1/K) * sum over counted rows r of
// lse(logits[r]) - logits[r][labels[r]]; so d loss / d logits[r][j] =
// (softmax(logits[r])[j] - onehot(labels[r])[j]) / K, times the incoming
// dloss.
extern "C" void pdrt_softmax_xent_grad(pdrt_ctx *ctx, const float *dloss,
                                       const float *logits,
                                       const int64_t *labels, float *dlogits,
                                       int64_t n, int64_t c,
                                       int64_t ignore_index) {
  int64_t counted;
  if (pdrt::hasError(ctx) || !countRows(ctx, labels, n, c, ignore_index, &counted))
    return;
  float scale = counted ? *dloss / (float)counted : 0.0f;
  xentGradRows(logits, labels, dlogits, n, c, ignore_index,
               [&](int64_t) { return scale; });
}

extern "C" void pdrt_softmax_xent_rows(pdrt_ctx *ctx, const float *logits,
                                       const int64_t *labels, float *loss,
                                       int64_t n, int64_t c,
                                       int64_t ignore_index) {
  int64_t counted;
  if (pdrt::hasError(ctx) || !countRows(ctx, labels, n, c, ignore_index, &counted))
    return;
  for (int64_t r = 0; r < n; ++r)
    loss[r] = labels[r] == ignore_index
                  ? 0.0f
                  : rowXent(logits + r * c, c, labels[r],
                            nextRow(logits, r, n, c));
}

extern "C" void pdrt_softmax_xent_rows_grad(pdrt_ctx *ctx, const float *dloss,
                                            const float *logits,
                                            const int64_t *labels,
                                            float *dlogits, int64_t n,
                                            int64_t c, int64_t ignore_index) {
  int64_t counted;
  if (pdrt::hasError(ctx) || !countRows(ctx, labels, n, c, ignore_index, &counted))
    return;
  xentGradRows(logits, labels, dlogits, n, c, ignore_index,
               [&](int64_t r) { return dloss[r]; });
}

extern "C" void pdrt_softmax_xent_with_grad(pdrt_ctx *ctx, const float *logits,
                                            const int64_t *labels, float *loss,
                                            float *dlogits, int64_t n,
                                            int64_t c, int64_t ignore_index) {
  int64_t counted;
  if (pdrt::hasError(ctx) || !countRows(ctx, labels, n, c, ignore_index, &counted))
    return;
  float scale = counted ? pdrt::gradSeed(ctx) / (float)counted : 0.0f;
  double sum = 0.0;
  for (int64_t r = 0; r < n; ++r) {
    float *dr = dlogits + r * c;
    if (labels[r] == ignore_index) {
      std::fill(dr, dr + c, 0.0f);
      continue;
    }
    sum += rowXentWithGrad(logits + r * c, c, labels[r], scale, dr,
                           nextRow(logits, r, n, c));
  }
  *loss = counted ? (float)(sum / (double)counted) : 0.0f;
}
