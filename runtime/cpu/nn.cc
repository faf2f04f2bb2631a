//===- nn.cc - CPU kernels of nn ops ---------------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_nn.h: sigmoid, SiLU
// and SwiGLU, unary math (cos and sin included), GELU, broadcast, softmax,
// layer norm (llm.c's) and RMS norm, each with its gradient.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "gelu.h"
#include "layer_norm.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"
#include "cpu/scratch.h"
#include "silu.h"
#include "strided_runs.h"
#include "vmath.h"

#include <algorithm>
#include <cmath>
#include <vector>

//===----------------------------------------------------------------------===//
// Sigmoid, SiLU and SwiGLU: s = 1 / (1 + exp(-x)), silu(x) = x s, swiglu =
// silu(gate) up (pd.silu's bits times up), and the gradients recomputed
// from x: silu'(x) = s (1 + x (1 - s)), one form for pd.unary_grad silu
// and pd.swiglu_grad's gate. The kernels of silu_avx512.cc on AVX-512
// CPUs, of silu_avx2.cc elsewhere (silu_lanes.h, the same bits): one pass
// in registers with vexp.h's exp. They replace loops that staged exp(-x)
// a chunk at a time in a stack buffer and divided in a second pass: on a
// Zen 3 EPYC, 2^20 floats, 0.68-0.85 / 0.82-1.05 ns per element for SiLU
// forward / backward against 0.84-1.45 / 1.07-1.58, and 0.74-1.00 /
// 1.22-1.47 for SwiGLU against 1.06-1.43 / 1.43-2.15 (silu_lanes.h).
//===----------------------------------------------------------------------===//

namespace {

void sigmoidArray(const float *x, float *y, int64_t n) {
  if (pdrt::vmath::hasAvx512())
    return pdrt::silu::avx512::sigmoid(x, y, n);
  pdrt::silu::avx2::sigmoid(x, y, n);
}

void siluArray(const float *x, float *y, int64_t n) {
  if (pdrt::vmath::hasAvx512())
    return pdrt::silu::avx512::silu(x, y, n);
  pdrt::silu::avx2::silu(x, y, n);
}

void siluGradArray(const float *dy, const float *x, float *dx, int64_t n) {
  if (pdrt::vmath::hasAvx512())
    return pdrt::silu::avx512::siluGrad(dy, x, dx, n);
  pdrt::silu::avx2::siluGrad(dy, x, dx, n);
}

} // namespace

extern "C" void pdrt_swiglu(pdrt_ctx *ctx, const float *gate, const float *up,
                            float *y, int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  if (pdrt::vmath::hasAvx512())
    return pdrt::silu::avx512::swiglu(gate, up, y, n);
  pdrt::silu::avx2::swiglu(gate, up, y, n);
}

extern "C" void pdrt_swiglu_grad(pdrt_ctx *ctx, const float *dy,
                                 const float *gate, const float *up,
                                 float *dgate, float *dup, int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  if (pdrt::vmath::hasAvx512())
    return pdrt::silu::avx512::swigluGrad(dy, gate, up, dgate, dup, n);
  pdrt::silu::avx2::swigluGrad(dy, gate, up, dgate, dup, n);
}

//===----------------------------------------------------------------------===//
// Unary math and its gradient
//===----------------------------------------------------------------------===//

namespace {

/// x^alpha: exact products for the common small integer powers.
inline float powApply(float alpha, float x) {
  if (alpha == 2.0f) return x * x;
  if (alpha == 1.0f) return x;
  if (alpha == 3.0f) return x * x * x;
  if (alpha == 0.5f) return std::sqrt(x);
  return std::pow(x, alpha);
}

/// f(x) of the kinds pdrt_unary computes one element at a time: those
/// vectorised() gives no vector kernel.
inline float scalarApply(int32_t kind, float alpha, float x) {
  switch (kind) {
  case PDRT_NEG: return -x;
  case PDRT_SQRT: return std::sqrt(x);
  case PDRT_RECIPROCAL: return 1.0f / x;
  default: return powApply(alpha, x); // PDRT_POW
  }
}

/// f'(x) of pdrt_unary, from the forward's x and y, for the kinds whose
/// derivative needs no transcendental function (pdrt_unary_grad computes
/// PDRT_SILU, PDRT_ERF, PDRT_SIN and PDRT_COS in vector loops instead).
inline float unaryDerivative(int kind, float alpha, float x, float y) {
  switch (kind) {
  case PDRT_NEG: return -1.0f;
  case PDRT_SQRT: return 0.5f / y;
  case PDRT_EXP: return y;
  case PDRT_LOG: return 1.0f / x;
  case PDRT_TANH: return 1.0f - y * y;
  case PDRT_SIGMOID: return y * (1.0f - y);
  case PDRT_RECIPROCAL: return -y * y;
  default: // PDRT_POW
    if (alpha == 2.0f) return 2.0f * x;
    if (alpha == 1.0f) return 1.0f;
    return alpha * powApply(alpha - 1.0f, x);
  }
}

bool validKind(pdrt_ctx *ctx, int32_t kind) {
  if (kind >= PDRT_NEG && kind <= PDRT_SILU)
    return true;
  pdrt::setError(ctx, "pdrt_unary: unknown kind " + std::to_string(kind));
  return false;
}

/// The vectorised form of unary `kind`; null for the kinds scalarApply
/// computes. Every kind is named (no default), so that -Wswitch asks where
/// a new one goes.
using ArrayFn = void (*)(const float *, float *, int64_t);
ArrayFn vectorised(int32_t kind) {
  switch (static_cast<pdrt_unary_kind>(kind)) {
  case PDRT_EXP: return pdrt::vmath::exp;
  case PDRT_LOG: return pdrt::vmath::log;
  case PDRT_ERF: return pdrt::vmath::erf;
  case PDRT_TANH: return pdrt::vmath::tanh;
  case PDRT_COS: return pdrt::vmath::cos;
  case PDRT_SIN: return pdrt::vmath::sin;
  case PDRT_SIGMOID: return sigmoidArray;
  case PDRT_SILU: return siluArray;
  case PDRT_NEG:
  case PDRT_SQRT:
  case PDRT_RECIPROCAL:
  case PDRT_POW: return nullptr;
  }
  return nullptr;
}

} // namespace

extern "C" void pdrt_unary(pdrt_ctx *ctx, int32_t kind, float alpha,
                           const float *x, float *y, int64_t n) {
  if (pdrt::hasError(ctx) || !validKind(ctx, kind))
    return;
  if (ArrayFn f = vectorised(kind))
    return f(x, y, n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = scalarApply(kind, alpha, x[i]);
}

extern "C" void pdrt_unary_grad(pdrt_ctx *ctx, int32_t kind, float alpha,
                                const float *dy, const float *x,
                                const float *y, float *dx, int64_t n) {
  if (pdrt::hasError(ctx) || !validKind(ctx, kind))
    return;
  if (kind == PDRT_SILU)
    return siluGradArray(dy, x, dx, n);
  if (kind == PDRT_ERF || kind == PDRT_SIN || kind == PDRT_COS) {
    // The derivative's transcendental part a chunk at a time.
    float buf[pdrt::vmath::kChunk];
    for (int64_t at = 0; at < n; at += pdrt::vmath::kChunk) {
      int64_t c = std::min(pdrt::vmath::kChunk, n - at);
      const float *xs = x + at;
      if (kind == PDRT_ERF) {
        for (int64_t i = 0; i < c; ++i)
          buf[i] = -xs[i] * xs[i];
        pdrt::vmath::exp(buf, buf, c);
        for (int64_t i = 0; i < c; ++i)
          dx[at + i] = dy[at + i] * (1.1283791670955126f * buf[i]);
      } else if (kind == PDRT_SIN) {
        pdrt::vmath::cos(xs, buf, c);
        for (int64_t i = 0; i < c; ++i)
          dx[at + i] = dy[at + i] * buf[i];
      } else {
        pdrt::vmath::sin(xs, buf, c);
        for (int64_t i = 0; i < c; ++i)
          dx[at + i] = dy[at + i] * -buf[i];
      }
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i)
    dx[i] = dy[i] * unaryDerivative(kind, alpha, x[i], y[i]);
}

//===----------------------------------------------------------------------===//
// GELU: y = 0.5 x (1 + erf(x / sqrt(2))), or 0.5 x (1 + tanh(u)) with
// u = sqrt(2/pi) (x + 0.044715 x^3); the backward recomputes from x. The
// kernels of gelu_avx512.cc on AVX-512 CPUs, of gelu_avx2.cc elsewhere
// (gelu_lanes.h, the same bits). GeGLU (Gemma's gated MLP): GELU(gate) up
// in one pass, its gradient recomputing GELU(gate) and GELU'(gate).
//===----------------------------------------------------------------------===//

namespace {

void geluForward(int32_t approxTanh, const float *x, const float *bias,
                 float *y, int64_t n) {
  if (pdrt::vmath::hasAvx512())
    return pdrt::gelu::avx512::forward(approxTanh, x, bias, y, n);
  pdrt::gelu::avx2::forward(approxTanh, x, bias, y, n);
}

void geluBackward(int32_t approxTanh, const float *dy, const float *x,
                  const float *bias, float *dx, int64_t n) {
  if (pdrt::vmath::hasAvx512())
    return pdrt::gelu::avx512::backward(approxTanh, dy, x, bias, dx, n);
  pdrt::gelu::avx2::backward(approxTanh, dy, x, bias, dx, n);
}

/// acc += row, element by element in float: a bias gradient's sum over the
/// rows added one row at a time, in order, as pdrt_sum_to adds them (the
/// fused kernels give its bits).
void addRowInto(float *__restrict acc, const float *__restrict row,
                int64_t cols) {
  for (int64_t j = 0; j < cols; ++j)
    acc[j] += row[j];
}

} // namespace

extern "C" void pdrt_gelu(pdrt_ctx *ctx, int32_t approxTanh, const float *x,
                          float *y, int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  geluForward(approxTanh, x, /*bias=*/nullptr, y, n);
}

extern "C" void pdrt_gelu_grad(pdrt_ctx *ctx, int32_t approxTanh,
                               const float *dy, const float *x, float *dx,
                               int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  geluBackward(approxTanh, dy, x, /*bias=*/nullptr, dx, n);
}

extern "C" void pdrt_gelu_bias(pdrt_ctx *ctx, int32_t approxTanh,
                               const float *x, const float *bias, float *y,
                               int64_t rows, int64_t cols) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t r = 0; r < rows; ++r)
    geluForward(approxTanh, x + r * cols, bias, y + r * cols, cols);
}

extern "C" void pdrt_gelu_grad_bias(pdrt_ctx *ctx, int32_t approxTanh,
                                    const float *dy, const float *x,
                                    const float *bias, float *dx, float *db,
                                    int64_t rows, int64_t cols) {
  if (pdrt::hasError(ctx))
    return;
  if (db)
    std::fill(db, db + cols, 0.0f);
  // A row at a time: its dx is still in L1 when it is added into db.
  for (int64_t r = 0; r < rows; ++r) {
    geluBackward(approxTanh, dy + r * cols, x + r * cols, bias, dx + r * cols,
                 cols);
    if (db)
      addRowInto(db, dx + r * cols, cols);
  }
}

extern "C" void pdrt_geglu(pdrt_ctx *ctx, int32_t approxTanh, const float *gate,
                           const float *up, float *y, int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  if (pdrt::vmath::hasAvx512())
    return pdrt::gelu::avx512::gated(approxTanh, gate, up, y, n);
  pdrt::gelu::avx2::gated(approxTanh, gate, up, y, n);
}

extern "C" void pdrt_geglu_grad(pdrt_ctx *ctx, int32_t approxTanh,
                                const float *dy, const float *gate,
                                const float *up, float *dgate, float *dup,
                                int64_t n) {
  if (pdrt::hasError(ctx))
    return;
  if (pdrt::vmath::hasAvx512())
    return pdrt::gelu::avx512::gatedGrad(approxTanh, dy, gate, up, dgate, dup,
                                         n);
  pdrt::gelu::avx2::gatedGrad(approxTanh, dy, gate, up, dgate, dup, n);
}

extern "C" void pdrt_broadcast(pdrt_ctx *ctx, const float *x, float *y,
                               const int64_t *desc) {
  if (pdrt::hasError(ctx))
    return;
  if (desc[0] < 0 || desc[0] > PDRT_MAX_RANK) {
    pdrt::setError(ctx, pdrt::format("pdrt_broadcast: bad rank %lld", (long long)desc[0]));
    return;
  }
  pdrt::forEachRun<1>(desc, [&](const pdrt::StridedRun<1> &run) {
    const float *s = x + run.offset[0];
    float *d = y + run.linear;
    for (int64_t j = 0; j < run.count; ++j)
      d[j] = s[j * run.stride[0]];
  });
}

//===----------------------------------------------------------------------===//
// Softmax: rows of length `dim` with stride `inner`
//===----------------------------------------------------------------------===//

namespace {
/// Softmax of contiguous rows (the last axis): exp(x - max) a row at a
/// time, vectorised, with its sum in double over 16 lanes (vmath::expSum).
void softmaxRows(const float *x, float *y, int64_t rows, int64_t dim,
                 int32_t log) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * dim;
    float *yr = y + r * dim;
    float max = pdrt::vmath::max(xr, dim);
    if (log) {
      // exp(x - max) only for the sum.
      float logSum = (float)std::log(pdrt::vmath::expSum(xr, max, nullptr, dim));
      for (int64_t k = 0; k < dim; ++k)
        yr[k] = (xr[k] - max) - logSum;
      continue;
    }
    float inv = (float)(1.0 / pdrt::vmath::expSum(xr, max, yr, dim));
    for (int64_t k = 0; k < dim; ++k)
      yr[k] *= inv;
  }
}
} // namespace

extern "C" void pdrt_softmax(pdrt_ctx *ctx, const float *x, float *y,
                             int64_t outer, int64_t dim, int64_t inner,
                             int32_t log) {
  if (pdrt::hasError(ctx))
    return;
  if (inner == 1)
    return softmaxRows(x, y, outer, dim, log);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      const float *xr = x + o * dim * inner + in;
      float *yr = y + o * dim * inner + in;
      float max = xr[0];
      for (int64_t k = 1; k < dim; ++k)
        max = std::max(max, xr[k * inner]);
      double sum = 0.0;
      for (int64_t k = 0; k < dim; ++k)
        sum += std::exp(xr[k * inner] - max);
      float logSum = (float)std::log(sum);
      for (int64_t k = 0; k < dim; ++k) {
        float shifted = xr[k * inner] - max;
        yr[k * inner] = log ? shifted - logSum : std::exp(shifted - logSum);
      }
    }
}

extern "C" void pdrt_softmax_grad(pdrt_ctx *ctx, const float *dy,
                                  const float *y, float *dx, int64_t outer,
                                  int64_t dim, int64_t inner, int32_t log) {
  if (pdrt::hasError(ctx))
    return;
  if (log && inner == 1) {
    // dx = dy - exp(y) sum(dy), exp vectorised into dx.
    for (int64_t r = 0; r < outer; ++r) {
      const float *dyr = dy + r * dim;
      float *dxr = dx + r * dim;
      double sum = 0.0;
      for (int64_t k = 0; k < dim; ++k)
        sum += dyr[k];
      pdrt::vmath::exp(y + r * dim, dxr, dim);
      for (int64_t k = 0; k < dim; ++k)
        dxr[k] = dyr[k] - dxr[k] * (float)sum;
    }
    return;
  }
  if (!log && inner == 1) {
    // dx = y (dy - dot(dy, y)), the dot in double over 16 lanes.
    for (int64_t r = 0; r < outer; ++r) {
      const float *dyr = dy + r * dim, *yr = y + r * dim;
      float *dxr = dx + r * dim;
      float s = (float)pdrt::vmath::dot(dyr, yr, dim);
      for (int64_t k = 0; k < dim; ++k)
        dxr[k] = yr[k] * (dyr[k] - s);
    }
    return;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      int64_t base = o * dim * inner + in;
      double sum = 0.0;
      for (int64_t k = 0; k < dim; ++k)
        sum += log ? dy[base + k * inner]
                   : (double)dy[base + k * inner] * y[base + k * inner];
      for (int64_t k = 0; k < dim; ++k) {
        int64_t i = base + k * inner;
        dx[i] = log ? dy[i] - std::exp(y[i]) * (float)sum
                    : y[i] * (dy[i] - (float)sum);
      }
    }
}

//===----------------------------------------------------------------------===//
// Layer norm (llm.c's layernorm_forward / layernorm_backward)
//===----------------------------------------------------------------------===//

namespace {

/// A row of layer norm and of its gradient on this CPU (layer_norm.h):
/// the AVX-512 forms or the AVX2 ones.
struct NormRows {
  decltype(&pdrt::layer_norm::avx2::rowStats) rowStats;
  decltype(&pdrt::layer_norm::avx2::normalizeRow) normalizeRow;
  decltype(&pdrt::layer_norm::avx2::addRow) addRow;
  decltype(&pdrt::layer_norm::avx2::gradRow) gradRow;
};

const NormRows &normRows() {
  namespace ln = pdrt::layer_norm;
  static const NormRows avx512{ln::avx512::rowStats, ln::avx512::normalizeRow,
                               ln::avx512::addRow, ln::avx512::gradRow};
  static const NormRows avx2{ln::avx2::rowStats, ln::avx2::normalizeRow,
                             ln::avx2::addRow, ln::avx2::gradRow};
  return pdrt::vmath::hasAvx512() ? avx512 : avx2;
}

} // namespace

extern "C" void pdrt_layer_norm(pdrt_ctx *ctx, const float *x, const float *g,
                                const float *b, float *y, int64_t rows,
                                int64_t cols, float eps) {
  if (pdrt::hasError(ctx))
    return;
  const NormRows &ln = normRows();
  for (int64_t r = 0; r < rows; ++r) {
    float mean, rstd;
    ln.rowStats(x + r * cols, cols, eps, &mean, &rstd);
    ln.normalizeRow(x + r * cols, g, b, y + r * cols, cols, mean, rstd);
  }
}

extern "C" void pdrt_add_layer_norm(pdrt_ctx *ctx, const float *a,
                                    const float *b, const float *bBias,
                                    const float *g, const float *beta,
                                    float *sum, float *y, int64_t rows,
                                    int64_t cols, float eps) {
  if (pdrt::hasError(ctx))
    return;
  // Each row's sum normalised while it is in L1.
  const NormRows &ln = normRows();
  for (int64_t r = 0; r < rows; ++r) {
    float *sr = sum + r * cols, mean, rstd;
    ln.addRow(a + r * cols, b + r * cols, bBias, sr, cols);
    ln.rowStats(sr, cols, eps, &mean, &rstd);
    ln.normalizeRow(sr, g, beta, y + r * cols, cols, mean, rstd);
  }
}

extern "C" void pdrt_layer_norm_grad(pdrt_ctx *ctx, const float *dy,
                                     const float *x, const float *g,
                                     const float *addend, float *dx,
                                     float *dg, float *db, float *dsum,
                                     int64_t rows, int64_t cols, float eps) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t c = 0; c < cols; ++c)
    dg[c] = db[c] = 0.0f;
  if (dsum)
    std::fill(dsum, dsum + cols, 0.0f);
  auto at = [&](const float *p, int64_t r) { return p ? p + r * cols : p; };
  const NormRows &ln = normRows();
  for (int64_t r = 0; r < rows; ++r) {
    float mean, rstd;
    ln.rowStats(x + r * cols, cols, eps, &mean, &rstd);
    ln.gradRow(dy + r * cols, x + r * cols, g, at(addend, r), dx + r * cols,
               dg, db, dsum, cols, mean, rstd);
  }
}

//===----------------------------------------------------------------------===//
// RMS norm: y = x rstd g, rstd = 1 / sqrt(mean(x^2) + eps) per row. The
// row sums in double, in vmath::dot's lanes (the products exact); the
// other loops have no reduction and vectorise.
//===----------------------------------------------------------------------===//

namespace {

float rowRmsRstd(const float *x, int64_t cols, float eps) {
  return pdrt_rms_rstd(pdrt::vmath::dot(x, x, cols), cols, eps);
}

/// One row of pdrt_rms_norm.
void rmsNormRow(const float *x, const float *g, float *y, int64_t cols,
                float eps) {
  const float rstd = rowRmsRstd(x, cols, eps);
  for (int64_t c = 0; c < cols; ++c)
    y[c] = x[c] * rstd * g[c];
}

} // namespace

extern "C" void pdrt_rms_norm(pdrt_ctx *ctx, const float *x, const float *g,
                              float *y, int64_t rows, int64_t cols, float eps) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t r = 0; r < rows; ++r)
    rmsNormRow(x + r * cols, g, y + r * cols, cols, eps);
}

extern "C" void pdrt_add_rms_norm(pdrt_ctx *ctx, const float *a, const float *b,
                                  const float *g, float *sum, float *y,
                                  int64_t rows, int64_t cols, float eps) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t r = 0; r < rows; ++r) {
    const float *ar = a + r * cols, *br = b + r * cols;
    float *sr = sum + r * cols;
    for (int64_t c = 0; c < cols; ++c)
      sr[c] = ar[c] + br[c];
    rmsNormRow(sr, g, y + r * cols, cols, eps);
  }
}

extern "C" void pdrt_rms_norm_grad(pdrt_ctx *ctx, const float *dy,
                                   const float *x, const float *g,
                                   const float *addend, float *dx, float *dg,
                                   int64_t rows, int64_t cols, float eps) {
  if (pdrt::hasError(ctx))
    return;
  static thread_local pdrt::Scratch scratch;
  auto *dn = static_cast<float *>(scratch.get(cols * sizeof(float)));
  if (!dn)
    return pdrt::setError(ctx, "pdrt_rms_norm_grad: out of memory");
  for (int64_t c = 0; c < cols; ++c)
    dg[c] = 0.0f;
  for (int64_t r = 0; r < rows; ++r) {
    const float *xr = x + r * cols, *dyr = dy + r * cols;
    float *dxr = dx + r * cols;
    const float rstd = rowRmsRstd(xr, cols, eps);
    // d rstd / d x_c = -rstd^3 x_c / cols, so the row term is
    // -x rstd^3 mean(dn x), dn = dy g.
    for (int64_t c = 0; c < cols; ++c)
      dn[c] = dyr[c] * g[c];
    const float k =
        (float)(pdrt::vmath::dot(dn, xr, cols) / cols) * rstd * rstd;
    for (int64_t c = 0; c < cols; ++c) {
      dg[c] += dyr[c] * xr[c] * rstd;
      dxr[c] = rstd * (dn[c] - xr[c] * k);
    }
    if (addend)
      for (int64_t c = 0; c < cols; ++c)
        dxr[c] += addend[r * cols + c];
  }
}
