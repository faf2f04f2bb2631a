//===- conv.cc - CPU kernels of conv ops ---------------------------------===//
//
// CPU implementations of runtime/include/pdrt/pdrt_conv.h: convolution
// through oneDNN's primitives where they are faster (conv_onednn.h), else
// as im2col + OpenBLAS sgemm (col2im for the input gradient), batch
// normalization with batch statistics and the update of its running
// statistics, and max/average pooling (pdrt_pad lives with the other
// copies in tensor.cc). The index math is pdrt_conv_numerics.h's.
//
//===----------------------------------------------------------------------===//

#include "cpu/conv_onednn.h"
#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_conv_numerics.h"

#include <cblas.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace {

/// Checks the parts of a geometry the kernels divide by or index with.
bool validGeometry(pdrt_ctx *ctx, const char *kernel, const pdrt_conv_geom &g) {
  if (g.group > 0 && g.c % g.group == 0 && g.m % g.group == 0 && g.kh > 0 &&
      g.kw > 0 && g.sh > 0 && g.sw > 0 && g.oh >= 0 && g.ow >= 0)
    return true;
  pdrt::setError(ctx, std::string(kernel) + ": invalid geometry descriptor");
  return false;
}

/// The im2col workspace, reused across calls of a thread.
float *colBuffer(size_t n) {
  thread_local std::vector<float> buffer;
  if (buffer.size() < n)
    buffer.resize(n);
  return buffer.data();
}

/// The output columns [*ox0, *ox1) whose input column ox * sw + offset lies
/// in [0, w).
void validColumns(const pdrt_conv_geom &g, int64_t offset, int64_t *ox0,
                  int64_t *ox1) {
  // ox * sw + offset >= 0  <=>  ox >= ceil(-offset / sw).
  int64_t first = offset >= 0 ? 0 : (-offset + g.sw - 1) / g.sw;
  // ox * sw + offset <= w - 1  <=>  ox <= floor((w - 1 - offset) / sw).
  int64_t last = g.w - 1 - offset < 0 ? -1 : (g.w - 1 - offset) / g.sw;
  *ox0 = first;
  *ox1 = std::max(first, std::min(g.ow, last + 1));
}

/// Calls fn(input offset, column offset, count, input stride) for every run
/// of im2col row `row` whose kernel taps read the input (padding taps are
/// skipped): offsets within one image's channel group and the position
/// oy * ow + ox; consecutive columns read inputs `input stride` apart.
template <typename Fn>
void forEachTapRun(const pdrt_conv_geom &g, int64_t row, Fn fn) {
  int64_t ci, ky, kx;
  pdrt_conv_col_decode(&g, row, &ci, &ky, &kx);
  int64_t ox0, ox1;
  validColumns(g, pdrt_conv_in_x(&g, 0, kx), &ox0, &ox1);
  if (ox0 >= ox1)
    return;
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    int64_t iy = pdrt_conv_in_y(&g, oy, ky);
    if (iy < 0 || iy >= g.h)
      continue;
    int64_t src = (ci * g.h + iy) * g.w + pdrt_conv_in_x(&g, ox0, kx);
    fn(src, oy * g.ow + ox0, ox1 - ox0, g.sw);
  }
}

/// col[row, oy * ow + ox] = x[source] (0 in the padding) for one image's
/// channel group `x` ([c/group, h, w]).
void im2col(const pdrt_conv_geom &g, const float *x, float *col) {
  int64_t rows = pdrt_conv_col_rows(&g), plane = g.oh * g.ow;
  std::memset(col, 0, sizeof(float) * rows * plane);
  for (int64_t row = 0; row < rows; ++row) {
    float *dst = col + row * plane;
    forEachTapRun(g, row, [&](int64_t src, int64_t at, int64_t n, int64_t step) {
      if (step == 1) {
        std::memcpy(dst + at, x + src, sizeof(float) * n);
        return;
      }
      for (int64_t j = 0; j < n; ++j)
        dst[at + j] = x[src + j * step];
    });
  }
}

/// The adjoint of im2col: dx[source] += col[row, position].
void col2im(const pdrt_conv_geom &g, const float *col, float *dx) {
  int64_t rows = pdrt_conv_col_rows(&g), plane = g.oh * g.ow;
  for (int64_t row = 0; row < rows; ++row) {
    const float *src = col + row * plane;
    forEachTapRun(g, row, [&](int64_t dst, int64_t at, int64_t n, int64_t step) {
      for (int64_t j = 0; j < n; ++j)
        dx[dst + j * step] += src[at + j];
    });
  }
}

/// Row-major C[m, n] = op(A) op(B) + beta C.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a,
          const float *b, float beta, float *c) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) {
    for (int64_t i = 0; i < m * n; ++i)
      c[i] = beta == 0.0f ? 0.0f : beta * c[i];
    return;
  }
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans,
              tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, 1.0f, a, (blasint)(ta ? m : k), b,
              (blasint)(tb ? k : n), beta, c, (blasint)n);
}

/// Per-group sizes of a convolution.
struct GroupSizes {
  int64_t cg, mg, k, plane, inPlane;
};

GroupSizes groupSizes(const pdrt_conv_geom &g) {
  return {g.c / g.group, g.m / g.group, pdrt_conv_col_rows(&g), g.oh * g.ow,
          g.h * g.w};
}

} // namespace

extern "C" void pdrt_conv2d(pdrt_ctx *ctx, const float *x, const float *w,
                            const float *b, float *y, const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_conv2d", g) ||
      pdrt::onednn::convForward(g, x, w, b, y))
    return;
  GroupSizes s = groupSizes(g);
  float *col = colBuffer(s.k * s.plane);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      im2col(g, x + (n * g.c + grp * s.cg) * s.inPlane, col);
      float *out = y + (n * g.m + grp * s.mg) * s.plane;
      gemm(false, false, s.mg, s.plane, s.k, w + grp * s.mg * s.k, col, 0.0f,
           out);
      if (b)
        for (int64_t j = 0; j < s.mg; ++j)
          for (int64_t p = 0; p < s.plane; ++p)
            out[j * s.plane + p] += b[grp * s.mg + j];
    }
}

extern "C" void pdrt_conv2d_grad_input(pdrt_ctx *ctx, const float *dy,
                                       const float *w, float *dx,
                                       const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_conv2d_grad_input", g) ||
      pdrt::onednn::convBackwardData(g, dy, w, dx))
    return;
  GroupSizes s = groupSizes(g);
  std::memset(dx, 0, sizeof(float) * g.n * g.c * s.inPlane);
  float *col = colBuffer(s.k * s.plane);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      // dcol[k, p] = W_g^T [k, mg] dY_g [mg, p].
      gemm(true, false, s.k, s.plane, s.mg, w + grp * s.mg * s.k,
           dy + (n * g.m + grp * s.mg) * s.plane, 0.0f, col);
      col2im(g, col, dx + (n * g.c + grp * s.cg) * s.inPlane);
    }
}

extern "C" void pdrt_conv2d_grad_filter(pdrt_ctx *ctx, const float *dy,
                                        const float *x, float *dw,
                                        const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_conv2d_grad_filter", g) ||
      pdrt::onednn::convBackwardWeights(g, dy, x, dw))
    return;
  GroupSizes s = groupSizes(g);
  if (g.n == 0)
    std::memset(dw, 0, sizeof(float) * g.m * s.k);
  float *col = colBuffer(s.k * s.plane);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      im2col(g, x + (n * g.c + grp * s.cg) * s.inPlane, col);
      // dW_g [mg, k] (+)= dY_g [mg, p] col^T [p, k].
      gemm(false, true, s.mg, s.k, s.plane,
           dy + (n * g.m + grp * s.mg) * s.plane, col, n == 0 ? 0.0f : 1.0f,
           dw + grp * s.mg * s.k);
    }
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

namespace {

/// Sums in double over 4 interleaved lanes: the fixed order the compiler
/// can vectorise (a single accumulator is a serial dependency chain).
struct Lanes {
  double v[4] = {0, 0, 0, 0};
  double total() const { return (v[0] + v[1]) + (v[2] + v[3]); }
};

/// lanes += f(j) for j < s, lane j % 4.
template <typename F> void accumulate(Lanes &lanes, int64_t s, F f) {
  int64_t j = 0;
  for (; j + 4 <= s; j += 4)
    for (int k = 0; k < 4; ++k)
      lanes.v[k] += f(j + k);
  for (; j < s; ++j)
    lanes.v[j % 4] += f(j);
}

/// Mean and biased variance of channel `ch` of x [n, c, s] (two passes, in
/// double).
void channelMoments(const float *x, int64_t n, int64_t c, int64_t s,
                    int64_t ch, double &mean, double &var) {
  Lanes sum, sq;
  for (int64_t i = 0; i < n; ++i) {
    const float *row = x + (i * c + ch) * s;
    accumulate(sum, s, [&](int64_t j) { return (double)row[j]; });
  }
  double count = (double)(n * s), mu = count > 0 ? sum.total() / count : 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float *row = x + (i * c + ch) * s;
    accumulate(sq, s, [&](int64_t j) {
      double d = row[j] - mu;
      return d * d;
    });
  }
  mean = mu;
  var = count > 0 ? sq.total() / count : 0.0;
}

/// Mean and 1/sqrt(biased var + eps) of channel `ch` of x [n, c, s].
void channelStats(const float *x, int64_t n, int64_t c, int64_t s, int64_t ch,
                  float eps, float &mean, float &rstd) {
  double mu, var;
  channelMoments(x, n, c, s, ch, mu, var);
  mean = (float)mu;
  rstd = (float)(1.0 / std::sqrt(var + eps));
}

} // namespace

extern "C" void pdrt_batch_norm(pdrt_ctx *ctx, const float *x, const float *g,
                                const float *b, float *y, int64_t n, int64_t c,
                                int64_t s, float eps) {
  if (pdrt::hasError(ctx))
    return;
  for (int64_t ch = 0; ch < c; ++ch) {
    float mean, rstd;
    channelStats(x, n, c, s, ch, eps, mean, rstd);
    float scale = rstd * g[ch], shift = b[ch] - mean * scale;
    for (int64_t i = 0; i < n; ++i) {
      const float *in = x + (i * c + ch) * s;
      float *out = y + (i * c + ch) * s;
      for (int64_t j = 0; j < s; ++j)
        out[j] = in[j] * scale + shift;
    }
  }
}

extern "C" void pdrt_batch_norm_running_stats(pdrt_ctx *ctx, const float *x,
                                              float *running_mean,
                                              float *running_var, int64_t n,
                                              int64_t c, int64_t s,
                                              float momentum) {
  if (pdrt::hasError(ctx))
    return;
  double k = (double)(n * s), unbias = k > 1 ? k / (k - 1) : 1.0;
  for (int64_t ch = 0; ch < c; ++ch) {
    double mean, var;
    channelMoments(x, n, c, s, ch, mean, var);
    running_mean[ch] =
        momentum * running_mean[ch] + (1.0f - momentum) * (float)mean;
    running_var[ch] = momentum * running_var[ch] +
                      (1.0f - momentum) * (float)(var * unbias);
  }
}

extern "C" void pdrt_batch_norm_grad(pdrt_ctx *ctx, const float *dy,
                                     const float *x, const float *g, float *dx,
                                     float *dg, float *db, int64_t n, int64_t c,
                                     int64_t s, float eps) {
  if (pdrt::hasError(ctx))
    return;
  double k = (double)(n * s);
  for (int64_t ch = 0; ch < c; ++ch) {
    float mean, rstd;
    channelStats(x, n, c, s, ch, eps, mean, rstd);
    Lanes dySum, dyXhatSum;
    for (int64_t i = 0; i < n; ++i) {
      const float *d = dy + (i * c + ch) * s, *in = x + (i * c + ch) * s;
      accumulate(dySum, s, [&](int64_t j) { return (double)d[j]; });
      accumulate(dyXhatSum, s, [&](int64_t j) {
        return (double)(d[j] * (in[j] - mean) * rstd);
      });
    }
    double sumDy = dySum.total(), sumDyXhat = dyXhatSum.total();
    db[ch] = (float)sumDy;
    dg[ch] = (float)sumDyXhat;
    float scale = k > 0 ? (float)(g[ch] * rstd / k) : 0.0f;
    float mDb = (float)sumDy, mDg = (float)sumDyXhat;
    for (int64_t i = 0; i < n; ++i) {
      const float *d = dy + (i * c + ch) * s, *in = x + (i * c + ch) * s;
      float *out = dx + (i * c + ch) * s;
      for (int64_t j = 0; j < s; ++j) {
        float xhat = (in[j] - mean) * rstd;
        out[j] = scale * ((float)k * d[j] - mDb - xhat * mDg);
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

namespace {

/// Calls fn(window, plane index, output index) for every output of every
/// (image, channel) plane.
template <typename Fn> void forEachWindow(const pdrt_conv_geom &g, Fn fn) {
  for (int64_t plane = 0; plane < g.n * g.c; ++plane)
    for (int64_t oy = 0; oy < g.oh; ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox)
        fn(pdrt_pool_window_at(&g, oy, ox), plane,
           (plane * g.oh + oy) * g.ow + ox);
}

/// The offset (within its plane) of the first maximum of a window (the
/// last NaN if any, as in PyTorch); -1 when the window holds no input
/// element.
int64_t argmaxOf(const pdrt_conv_geom &g, const float *x,
                 const pdrt_pool_window &win) {
  int64_t best = -1;
  float top = 0.0f;
  for (int64_t y = win.y0; y < win.y1; ++y) {
    const float *row = x + y * g.w;
    for (int64_t xx = win.x0; xx < win.x1; ++xx) {
      float v = row[xx];
      bool take = (best < 0) | (v > top) | (v != v);
      top = take ? v : top;
      best = take ? y * g.w + xx : best;
    }
  }
  return best;
}

/// The maxima of output row oy of one plane x: top[ox] and at[ox], the
/// offset within the plane of window ox's first maximum (the last NaN if
/// any, as in PyTorch), -1 when the window holds no input element; the
/// plane has fewer than 2^31 elements. Every window scans its taps in
/// row-major order, as argmaxOf does. A window's scan is a chain of
/// unpredictable choices, which compiled to mispredicted branches (4 ns per
/// tap); here the windows of the row advance a tap at a time: the tap's
/// inputs are gathered into `vals` (stride sw), and one loop of blends,
/// which the compiler vectorises, updates every window.
void rowArgmax(const pdrt_conv_geom &g, const float *x, int64_t oy,
               float *top, int32_t *at, float *vals) {
  for (int64_t ox = 0; ox < g.ow; ++ox) {
    top[ox] = 0.0f;
    at[ox] = -1;
  }
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    int64_t iy = oy * g.sh - g.pt + ky;
    if (iy < 0 || iy >= g.h)
      continue;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      int64_t ox0, ox1;
      validColumns(g, kx - g.pl, &ox0, &ox1);
      int64_t n = ox1 - ox0, first = iy * g.w + ox0 * g.sw - g.pl + kx;
      const float *src = x + first;
      for (int64_t j = 0; j < n; ++j)
        vals[j] = src[j * g.sw];
      float *t = top + ox0;
      int32_t *a = at + ox0, base = (int32_t)first, step = (int32_t)g.sw;
      for (int32_t j = 0; j < (int32_t)n; ++j) {
        float v = vals[j];
        bool take = (a[j] < 0) | (v > t[j]) | (v != v);
        t[j] = take ? v : t[j];
        a[j] = take ? base + j * step : a[j];
      }
    }
  }
}

/// Calls fn(plane, output index, input offset of the window's maximum
/// within the plane or -1, its value) for every output.
template <typename Fn>
void forEachMax(const pdrt_conv_geom &g, const float *x, Fn fn) {
  int64_t inPlane = g.h * g.w;
  if (inPlane >= INT32_MAX) {
    forEachWindow(g, [&](const pdrt_pool_window &win, int64_t plane,
                         int64_t out) {
      const float *in = x + plane * inPlane;
      int64_t at = argmaxOf(g, in, win);
      fn(plane, out, at, at < 0 ? 0.0f : in[at]);
    });
    return;
  }
  thread_local std::vector<float> top, vals;
  thread_local std::vector<int32_t> at;
  top.resize(g.ow);
  vals.resize(g.ow);
  at.resize(g.ow);
  for (int64_t plane = 0; plane < g.n * g.c; ++plane)
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      rowArgmax(g, x + plane * inPlane, oy, top.data(), at.data(), vals.data());
      int64_t out = (plane * g.oh + oy) * g.ow;
      for (int64_t ox = 0; ox < g.ow; ++ox)
        fn(plane, out + ox, (int64_t)at[ox], top[ox]);
    }
}

/// Whether a pooling geometry is the common 2x2 window at stride 2 with
/// every window inside the input (no padding reaches it).
bool isPlain2x2(const pdrt_conv_geom &g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.pt == 0 &&
         g.pl == 0 && 2 * g.oh <= g.h && 2 * g.ow <= g.w;
}

/// The argmax (0..3, row-major; the last NaN wins) of the 2x2 window whose
/// rows start at r0 and r1, and its value.
inline int argmax2x2(const float *r0, const float *r1, float &top) {
  const float v[4] = {r0[0], r0[1], r1[0], r1[1]};
  int best = 0;
  top = v[0];
  for (int k = 1; k < 4; ++k) {
    bool take = (v[k] > top) | (v[k] != v[k]);
    top = take ? v[k] : top;
    best = take ? k : best;
  }
  return best;
}

/// Calls fn(plane, output index, input offset of the window's argmax within
/// the plane, its value) for every output of a plain 2x2 pooling.
template <typename Fn>
void forEachArgmax2x2(const pdrt_conv_geom &g, const float *x, Fn fn) {
  int64_t inPlane = g.h * g.w;
  for (int64_t plane = 0; plane < g.n * g.c; ++plane)
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      const float *r0 = x + plane * inPlane + 2 * oy * g.w, *r1 = r0 + g.w;
      int64_t out = (plane * g.oh + oy) * g.ow;
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        float top;
        int k = argmax2x2(r0 + 2 * ox, r1 + 2 * ox, top);
        fn(plane, out + ox, (2 * oy + (k >> 1)) * g.w + 2 * ox + (k & 1), top);
      }
    }
}

/// The gradient of a plain 2x2 pooling (dx zeroed by the caller): each
/// window writes dy to its argmax and 0 to its other three inputs, four
/// windows at a time in SSE registers (rows deinterleaved, the argmax by
/// mask blends, dy written through masks), then one at a time. The scalar
/// form compiled to branches that random data mispredicts: 0.85 ms on the
/// CNN example's first pool, 0.06 here (eight windows at a time in AVX2
/// registers: 0.05).
void maxPool2x2Grad(const pdrt_conv_geom &g, const float *dy, const float *x,
                    float *dx) {
  int64_t inPlane = g.h * g.w;
  for (int64_t plane = 0; plane < g.n * g.c; ++plane)
    for (int64_t oy = 0; oy < g.oh; ++oy) {
      int64_t row = plane * inPlane + 2 * oy * g.w;
      const float *r0 = x + row, *r1 = r0 + g.w;
      float *d0 = dx + row, *d1 = d0 + g.w;
      const float *grad = dy + (plane * g.oh + oy) * g.ow;
      int64_t ox = 0;
      for (; ox + 4 <= g.ow; ox += 4) {
        __m128 v[4];
        for (int r = 0; r < 2; ++r) {
          const float *p = (r ? r1 : r0) + 2 * ox;
          __m128 lo = _mm_loadu_ps(p), hi = _mm_loadu_ps(p + 4);
          v[2 * r] = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(2, 0, 2, 0));
          v[2 * r + 1] = _mm_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 3, 1));
        }
        __m128 best = v[0], k = _mm_setzero_ps();
        for (int j = 1; j < 4; ++j) {
          __m128 take = _mm_or_ps(_mm_cmpgt_ps(v[j], best), _mm_cmpunord_ps(v[j], v[j]));
          best = _mm_blendv_ps(best, v[j], take);
          k = _mm_blendv_ps(k, _mm_set1_ps((float)j), take);
        }
        __m128 d = _mm_loadu_ps(grad + ox), out[4];
        for (int j = 0; j < 4; ++j)
          out[j] = _mm_and_ps(d, _mm_cmpeq_ps(k, _mm_set1_ps((float)j)));
        _mm_storeu_ps(d0 + 2 * ox, _mm_unpacklo_ps(out[0], out[1]));
        _mm_storeu_ps(d0 + 2 * ox + 4, _mm_unpackhi_ps(out[0], out[1]));
        _mm_storeu_ps(d1 + 2 * ox, _mm_unpacklo_ps(out[2], out[3]));
        _mm_storeu_ps(d1 + 2 * ox + 4, _mm_unpackhi_ps(out[2], out[3]));
      }
      for (; ox < g.ow; ++ox) {
        float top;
        int k = argmax2x2(r0 + 2 * ox, r1 + 2 * ox, top);
        (k < 2 ? d0 : d1)[2 * ox + (k & 1)] = grad[ox];
      }
    }
}

} // namespace

extern "C" void pdrt_max_pool2d(pdrt_ctx *ctx, const float *x, float *y,
                                const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_max_pool2d", g))
    return;
  if (isPlain2x2(g))
    return forEachArgmax2x2(g, x, [&](int64_t, int64_t out, int64_t, float v) {
      y[out] = v;
    });
  forEachMax(g, x, [&](int64_t, int64_t out, int64_t at, float v) {
    y[out] = at < 0 ? -INFINITY : v;
  });
}

extern "C" void pdrt_max_pool2d_grad(pdrt_ctx *ctx, const float *dy,
                                     const float *x, float *dx,
                                     const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_max_pool2d_grad", g))
    return;
  int64_t inPlane = g.h * g.w;
  std::memset(dx, 0, sizeof(float) * g.n * g.c * inPlane);
  if (isPlain2x2(g))
    return maxPool2x2Grad(g, dy, x, dx);
  forEachMax(g, x, [&](int64_t plane, int64_t out, int64_t at, float) {
    if (at >= 0)
      dx[plane * inPlane + at] += dy[out];
  });
}

extern "C" void pdrt_avg_pool2d(pdrt_ctx *ctx, const float *x, float *y,
                                const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_avg_pool2d", g))
    return;
  int64_t inPlane = g.h * g.w;
  forEachWindow(g, [&](const pdrt_pool_window &win, int64_t plane,
                       int64_t out) {
    const float *in = x + plane * inPlane;
    float sum = 0.0f;
    for (int64_t yy = win.y0; yy < win.y1; ++yy)
      for (int64_t xx = win.x0; xx < win.x1; ++xx)
        sum += in[yy * g.w + xx];
    y[out] = win.divisor > 0 ? sum / (float)win.divisor : 0.0f;
  });
}

extern "C" void pdrt_avg_pool2d_grad(pdrt_ctx *ctx, const float *dy, float *dx,
                                     const int64_t *desc) {
  pdrt_conv_geom g = pdrt_conv_geom_from(desc);
  if (pdrt::hasError(ctx) || !validGeometry(ctx, "pdrt_avg_pool2d_grad", g))
    return;
  int64_t inPlane = g.h * g.w;
  std::memset(dx, 0, sizeof(float) * g.n * g.c * inPlane);
  forEachWindow(g, [&](const pdrt_pool_window &win, int64_t plane,
                       int64_t out) {
    if (win.divisor <= 0)
      return;
    float share = dy[out] / (float)win.divisor;
    float *d = dx + plane * inPlane;
    for (int64_t yy = win.y0; yy < win.y1; ++yy)
      for (int64_t xx = win.x0; xx < win.x1; ++xx)
        d[yy * g.w + xx] += share;
  });
}
