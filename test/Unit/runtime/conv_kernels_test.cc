//===- conv_kernels_test.cc - Conv family kernels vs references -----------===//
//
// pdrt_conv2d against a naive direct convolution (strides, asymmetric pads,
// dilations, groups, bias), its input and filter gradients, through oneDNN's
// primitives and through the im2col + sgemm kernels, batch norm (and
// its running-statistics update against torch's formula), max and average
// pooling gradients against finite differences of the forward kernels on
// tiny shapes, the output-size rule and pdrt_pad.
//
//===----------------------------------------------------------------------===//

#include "cpu/conv_onednn.h"
#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_conv_numerics.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

namespace {

using pdtest::randomVector;

/// A descriptor for input [n, c, h, w], m output channels, a kh x kw
/// kernel, strides s, pads {t, l, b, r}, dilations d and `group` groups.
std::vector<int64_t> makeDesc(int64_t n, int64_t c, int64_t h, int64_t w,
                              int64_t m, int64_t kh, int64_t kw, int64_t sh,
                              int64_t sw, std::array<int64_t, 4> pads,
                              int64_t dh, int64_t dw, int64_t group,
                              int ceil = 0, int64_t flags = 0) {
  int64_t oh = pdrt_conv_out_size(h, kh, sh, pads[0], pads[2], dh, ceil);
  int64_t ow = pdrt_conv_out_size(w, kw, sw, pads[1], pads[3], dw, ceil);
  return {n,  c,       h,       w,       m,       kh, kw, oh,    ow,   sh,
          sw, pads[0], pads[1], pads[2], pads[3], dh, dw, group, flags};
}

/// Direct convolution in double.
std::vector<double> naiveConv(const std::vector<int64_t> &d,
                              const std::vector<float> &x,
                              const std::vector<float> &w, const float *b) {
  pdrt_conv_geom g = pdrt_conv_geom_from(d.data());
  int64_t cg = g.c / g.group, mg = g.m / g.group;
  std::vector<double> y(g.n * g.m * g.oh * g.ow, 0.0);
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t m = 0; m < g.m; ++m)
      for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          double s = b ? b[m] : 0.0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < g.kh; ++ky)
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                int64_t iy = oy * g.sh - g.pt + ky * g.dh;
                int64_t ix = ox * g.sw - g.pl + kx * g.dw;
                if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w)
                  continue;
                int64_t c = (m / mg) * cg + ci;
                s += (double)x[((n * g.c + c) * g.h + iy) * g.w + ix] *
                     w[((m * cg + ci) * g.kh + ky) * g.kw + kx];
              }
          y[((n * g.m + m) * g.oh + oy) * g.ow + ox] = s;
        }
  return y;
}

/// sum(f(v) * r) in double, the scalar loss of the finite differences.
double weightedSum(const std::vector<float> &y, const std::vector<float> &r) {
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i)
    s += (double)y[i] * r[i];
  return s;
}

/// Checks `grad` against central differences of loss() in `v`, every
/// element, relative to the largest gradient.
void expectGradient(std::vector<float> &v, const std::vector<float> &grad,
                    const std::function<double()> &loss, float h, double tol,
                    const char *what) {
  ASSERT_EQ(v.size(), grad.size()) << what;
  double scale = 1e-3;
  for (float g : grad)
    scale = std::max(scale, (double)std::fabs(g));
  for (size_t i = 0; i < v.size(); ++i) {
    float old = v[i];
    v[i] = old + h;
    double plus = loss();
    v[i] = old - h;
    double minus = loss();
    v[i] = old;
    double fd = (plus - minus) / (2.0 * h);
    EXPECT_NEAR(grad[i] / scale, fd / scale, tol) << what << " element " << i;
  }
}

/// Runs the conv forward and both gradients on one geometry.
void checkConv(const std::vector<int64_t> &d, bool bias) {
  pdrt_conv_geom g = pdrt_conv_geom_from(d.data());
  size_t xs = g.n * g.c * g.h * g.w, ws = g.m * (g.c / g.group) * g.kh * g.kw;
  size_t ys = g.n * g.m * g.oh * g.ow;
  ASSERT_GT(ys, 0u);
  std::vector<float> x = randomVector(xs, 1), w = randomVector(ws, 2);
  std::vector<float> b = randomVector(g.m, 3), r = randomVector(ys, 4);
  std::vector<float> y(ys);
  const float *bp = bias ? b.data() : nullptr;
  pdrt_conv2d(nullptr, x.data(), w.data(), bp, y.data(), d.data());
  std::vector<double> want = naiveConv(d, x, w, bp);
  for (size_t i = 0; i < ys; ++i)
    EXPECT_NEAR(y[i], want[i], 1e-4) << "output " << i;

  std::vector<float> dx(xs, 7.0f), dw(ws, 7.0f);
  pdrt_conv2d_grad_input(nullptr, r.data(), w.data(), dx.data(), d.data());
  pdrt_conv2d_grad_filter(nullptr, r.data(), x.data(), dw.data(), d.data());
  auto loss = [&]() {
    pdrt_conv2d(nullptr, x.data(), w.data(), bp, y.data(), d.data());
    return weightedSum(y, r);
  };
  expectGradient(x, dx, loss, 1e-2f, 2e-3, "dx");
  expectGradient(w, dw, loss, 1e-2f, 2e-3, "dw");
}

TEST(ConvNumerics, OutputSizeFloorAndCeil) {
  EXPECT_EQ(pdrt_conv_out_size(16, 3, 1, 1, 1, 1, 0), 16);
  EXPECT_EQ(pdrt_conv_out_size(5, 2, 2, 0, 0, 1, 0), 2);
  EXPECT_EQ(pdrt_conv_out_size(5, 2, 2, 0, 0, 1, 1), 3);
  // The last ceil window would start in the end padding: dropped.
  EXPECT_EQ(pdrt_conv_out_size(4, 2, 2, 1, 1, 1, 1), 3);
  EXPECT_EQ(pdrt_conv_out_size(7, 3, 1, 0, 0, 2, 0), 3);
  EXPECT_EQ(pdrt_conv_out_size(2, 5, 1, 0, 0, 1, 0), 0);
}

TEST(ConvNumerics, Im2colSourceOffsets) {
  // 2 channels of 4x5, 3x3 kernel, stride 2, pads 1, dilation 1.
  std::vector<int64_t> d =
      makeDesc(1, 2, 4, 5, 1, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, 1);
  pdrt_conv_geom g = pdrt_conv_geom_from(d.data());
  EXPECT_EQ(pdrt_conv_col_rows(&g), 18);
  EXPECT_EQ(pdrt_conv_col_source(&g, 0, 0, 0), -1); // top-left tap in the pad
  EXPECT_EQ(pdrt_conv_col_source(&g, 4, 0, 0), 0);  // centre tap: x[0, 0, 0]
  // Row 9 + 4 = channel 1's centre tap at output (1, 2): x[1, 2, 4].
  EXPECT_EQ(pdrt_conv_col_source(&g, 13, 1, 2), (1 * 4 + 2) * 5 + 4);
  EXPECT_EQ(pdrt_conv_col_source(&g, 17, 1, 2), -1); // bottom-right: x col 5
}

/// The conv tests run through oneDNN (true) and through im2col + sgemm.
class Conv2d : public ::testing::TestWithParam<bool> {
protected:
  void SetUp() override { pdrt::onednn::useOneDnn(GetParam()); }
  void TearDown() override { pdrt::onednn::useOneDnn(true); }
};

TEST_P(Conv2d, Plain3x3PaddedWithBias) {
  checkConv(makeDesc(2, 3, 5, 5, 4, 3, 3, 1, 1, {1, 1, 1, 1}, 1, 1, 1), true);
}

TEST_P(Conv2d, StridedAsymmetricPadsDilated) {
  checkConv(makeDesc(2, 2, 7, 6, 3, 3, 2, 2, 1, {0, 1, 2, 0}, 2, 1, 1), false);
}

TEST_P(Conv2d, DepthwiseWithMultiplier) {
  checkConv(makeDesc(2, 3, 5, 4, 6, 3, 3, 1, 2, {1, 1, 1, 1}, 1, 1, 3), true);
}

TEST_P(Conv2d, TwoGroups) {
  checkConv(makeDesc(1, 4, 4, 4, 2, 1, 1, 1, 1, {0, 0, 0, 0}, 1, 1, 2), true);
}

TEST_P(Conv2d, StridedDownsampleWideChannels) {
  checkConv(makeDesc(1, 8, 6, 6, 16, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, 1), true);
}

INSTANTIATE_TEST_SUITE_P(Kernels, Conv2d, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "oneDNN" : "Im2col";
                         });

TEST(Conv2dOneDnn, AgreesWithIm2colAndKeepsItsPrimitives) {
  // ResNet's strided 3x3 downsample at a small size, with bias.
  std::vector<int64_t> d =
      makeDesc(2, 16, 12, 12, 32, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, 1);
  pdrt_conv_geom g = pdrt_conv_geom_from(d.data());
  size_t xs = g.n * g.c * g.h * g.w, ws = g.m * g.c * g.kh * g.kw,
         ys = g.n * g.m * g.oh * g.ow;
  std::vector<float> x = randomVector(xs, 1), w = randomVector(ws, 2),
                     b = randomVector(g.m, 3), dy = randomVector(ys, 4);
  auto runAll = [&](bool onednn, std::vector<float> &y, std::vector<float> &dx,
                    std::vector<float> &dw) {
    pdrt::onednn::useOneDnn(onednn);
    y.assign(ys, 7.0f);
    dx.assign(xs, 7.0f);
    dw.assign(ws, 7.0f);
    pdrt_conv2d(nullptr, x.data(), w.data(), b.data(), y.data(), d.data());
    pdrt_conv2d_grad_input(nullptr, dy.data(), w.data(), dx.data(), d.data());
    pdrt_conv2d_grad_filter(nullptr, dy.data(), x.data(), dw.data(), d.data());
    pdrt::onednn::useOneDnn(true);
  };
  int before = pdrt::onednn::primitivesCreated();
  std::vector<float> y1, dx1, dw1, y2, dx2, dw2;
  runAll(true, y1, dx1, dw1);
  EXPECT_EQ(pdrt::onednn::primitivesCreated(), before + 3);
  runAll(true, y1, dx1, dw1); // the same three primitives again
  EXPECT_EQ(pdrt::onednn::primitivesCreated(), before + 3);
  runAll(false, y2, dx2, dw2);
  auto expectClose = [](const std::vector<float> &a, const std::vector<float> &b,
                        const char *what) {
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_NEAR(a[i], b[i], 1e-4 * (1.0 + std::fabs(b[i]))) << what << " " << i;
  };
  expectClose(y1, y2, "y");
  expectClose(dx1, dx2, "dx");
  expectClose(dw1, dw2, "dw");
}

TEST(Conv2d, BadGeometryIsAStickyError) {
  std::vector<int64_t> d =
      makeDesc(1, 3, 4, 4, 2, 1, 1, 1, 1, {0, 0, 0, 0}, 1, 1, 2);
  pdrt_ctx ctx;
  std::vector<float> x(48), w(6), y(32);
  pdrt_conv2d(&ctx, x.data(), w.data(), nullptr, y.data(), d.data());
  EXPECT_TRUE(ctx.failed);
  EXPECT_NE(ctx.error.find("pdrt_conv2d"), std::string::npos) << ctx.error;
}

TEST(BatchNorm, NormalizesPerChannelAndGradientMatches) {
  const int64_t n = 3, c = 2, s = 5;
  const float eps = 1e-5f;
  std::vector<float> x = randomVector(n * c * s, 5), gam = randomVector(c, 6);
  std::vector<float> bet = randomVector(c, 7), r = randomVector(n * c * s, 8);
  std::vector<float> y(n * c * s);
  pdrt_batch_norm(nullptr, x.data(), gam.data(), bet.data(), y.data(), n, c, s,
                  eps);
  for (int64_t ch = 0; ch < c; ++ch) { // (y - beta) / gamma has mean 0, var 1
    double m = 0, v = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j)
        m += (y[(i * c + ch) * s + j] - bet[ch]) / gam[ch];
    m /= n * s;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < s; ++j) {
        double t = (y[(i * c + ch) * s + j] - bet[ch]) / gam[ch] - m;
        v += t * t;
      }
    EXPECT_NEAR(m, 0.0, 1e-5);
    EXPECT_NEAR(v / (n * s), 1.0, 1e-3);
  }
  std::vector<float> dx(x.size()), dg(c), db(c);
  pdrt_batch_norm_grad(nullptr, r.data(), x.data(), gam.data(), dx.data(),
                       dg.data(), db.data(), n, c, s, eps);
  auto loss = [&]() {
    pdrt_batch_norm(nullptr, x.data(), gam.data(), bet.data(), y.data(), n, c,
                    s, eps);
    return weightedSum(y, r);
  };
  expectGradient(x, dx, loss, 1e-2f, 5e-3, "dx");
  expectGradient(gam, dg, loss, 1e-2f, 2e-3, "dgamma");
  expectGradient(bet, db, loss, 1e-2f, 2e-3, "dbeta");
}

TEST(BatchNorm, RunningStatisticsAsTorchUpdatesThem) {
  // torch: running = (1 - t) running + t stat with t = 1 - ONNX momentum and
  // the unbiased variance; two updates chain.
  const int64_t n = 2, c = 3, s = 4, k = n * s;
  const float momentum = 0.9f;
  std::vector<float> mean = {0.5f, -1.0f, 0.0f}, var = {1.0f, 2.0f, 0.5f};
  std::vector<float> wantMean = mean, wantVar = var;
  for (unsigned seed : {11u, 12u}) {
    std::vector<float> x = randomVector(n * c * s, seed);
    for (float &v : x)
      v = 3.0f * v + 1.0f;
    pdrt_batch_norm_running_stats(nullptr, x.data(), mean.data(), var.data(),
                                  n, c, s, momentum);
    for (int64_t ch = 0; ch < c; ++ch) {
      double m = 0, v = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j)
          m += x[(i * c + ch) * s + j];
      m /= k;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < s; ++j)
          v += std::pow(x[(i * c + ch) * s + j] - m, 2);
      v /= k - 1;
      wantMean[ch] = momentum * wantMean[ch] + (1 - momentum) * m;
      wantVar[ch] = momentum * wantVar[ch] + (1 - momentum) * v;
      EXPECT_NEAR(mean[ch], wantMean[ch], 1e-5 * (1 + std::fabs(wantMean[ch])));
      EXPECT_NEAR(var[ch], wantVar[ch], 1e-5 * (1 + std::fabs(wantVar[ch])));
    }
  }
}

/// Pooling forward + gradient against finite differences.
void checkPool(const std::vector<int64_t> &d, bool max) {
  pdrt_conv_geom g = pdrt_conv_geom_from(d.data());
  std::vector<float> x = randomVector(g.n * g.c * g.h * g.w, 9);
  std::vector<float> r = randomVector(g.n * g.c * g.oh * g.ow, 10);
  std::vector<float> y(r.size()), dx(x.size(), 3.0f);
  auto forward = max ? pdrt_max_pool2d : pdrt_avg_pool2d;
  if (max)
    pdrt_max_pool2d_grad(nullptr, r.data(), x.data(), dx.data(), d.data());
  else
    pdrt_avg_pool2d_grad(nullptr, r.data(), dx.data(), d.data());
  auto loss = [&]() {
    forward(nullptr, x.data(), y.data(), d.data());
    return weightedSum(y, r);
  };
  expectGradient(x, dx, loss, 1e-3f, 2e-3, max ? "max dx" : "avg dx");
}

TEST(Pool, MaxPoolValuesAndGradient) {
  std::vector<int64_t> d =
      makeDesc(1, 1, 3, 3, 1, 2, 2, 1, 1, {0, 0, 0, 0}, 1, 1, 1);
  std::vector<float> x = {1, 5, 2, 4, 3, 9, 0, 8, 7}, y(4);
  pdrt_max_pool2d(nullptr, x.data(), y.data(), d.data());
  EXPECT_EQ(y, (std::vector<float>{5, 9, 8, 9}));
  checkPool(makeDesc(2, 2, 5, 5, 2, 3, 3, 2, 2, {1, 1, 1, 1}, 1, 1, 2), true);
  checkPool(makeDesc(1, 2, 5, 4, 2, 2, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 2, 1),
            true);
}

/// The plain 2x2 / stride 2 pooling of 2 x 3 planes of h x w (odd sizes
/// drop the last row and column) against a naive scan (the first maximum;
/// PyTorch's rule for NaNs: the last NaN wins), with three NaNs in window
/// (0, 1) of plane 0 and, when the row has more than 11 windows, a
/// four-way tie in window (0, 9) and NaNs in windows (0, 10) and (0, 11).
void checkPlain2x2(int64_t h, int64_t w) {
  std::vector<int64_t> d = makeDesc(2, 3, h, w, 3, 2, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 3);
  const int64_t oh = d[7], ow = d[8];
  std::vector<float> x = randomVector(2 * 3 * h * w, 11);
  x[3] = NAN;
  x[w + 2] = NAN;
  x[w + 3] = NAN;
  if (ow > 11) {
    for (int64_t k : {int64_t(18), int64_t(19), 18 + w, 19 + w})
      x[k] = 5.0f;
    x[21] = NAN;
    x[22 + w] = NAN;
  }
  std::vector<float> r = randomVector(2 * 3 * oh * ow, 12);
  std::vector<float> y(r.size()), dx(x.size()), want(r.size()), wantDx(x.size());
  for (int64_t p = 0; p < 2 * 3; ++p)
    for (int64_t oy = 0; oy < oh; ++oy)
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t best = -1;
        for (int64_t k = 0; k < 4; ++k) {
          int64_t at = p * h * w + (2 * oy + k / 2) * w + 2 * ox + k % 2;
          if (best < 0 || x[at] > x[best] || std::isnan(x[at]))
            best = at;
        }
        int64_t out = (p * oh + oy) * ow + ox;
        want[out] = x[best];
        wantDx[best] += r[out];
      }
  pdrt_max_pool2d(nullptr, x.data(), y.data(), d.data());
  pdrt_max_pool2d_grad(nullptr, r.data(), x.data(), dx.data(), d.data());
  EXPECT_EQ(0, std::memcmp(y.data(), want.data(), y.size() * sizeof(float)));
  EXPECT_EQ(dx, wantDx);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(dx[w + 3], r[1]);
  if (ow > 11) {
    EXPECT_EQ(dx[18], r[9]); // the tie goes to the first
    EXPECT_EQ(dx[19], 0.0f);
    EXPECT_EQ(dx[22 + w], r[11]);
  }
  checkPool(d, true);
}

TEST(Pool, Plain2x2MaxPoolMatchesNaiveWindows) {
  checkPlain2x2(7, 7);   // 3 windows a row: one at a time
  checkPlain2x2(7, 9);   // 4 a row: one block of 4
  checkPlain2x2(5, 37);  // 18 a row: 4 blocks, then 2 one at a time
}

TEST(Pool, AveragePoolDivisors) {
  // 3x3 input of ones, 2x2 kernel, stride 2, pads 1 on every side.
  for (int64_t include = 0; include < 2; ++include) {
    std::vector<int64_t> d = makeDesc(1, 1, 3, 3, 1, 2, 2, 2, 2, {1, 1, 1, 1},
                                      1, 1, 1, 0, include);
    std::vector<float> x(9, 1.0f), y(4);
    pdrt_avg_pool2d(nullptr, x.data(), y.data(), d.data());
    // Every window holds one or two inputs of its four (padded) cells.
    float corner = include ? 0.25f : 1.0f, edge = include ? 0.5f : 1.0f;
    EXPECT_EQ(y, (std::vector<float>{corner, edge, edge, 1.0f}));
  }
  checkPool(makeDesc(2, 2, 5, 5, 2, 3, 3, 2, 2, {1, 0, 1, 2}, 1, 1, 2, 0, 1),
            false);
  checkPool(makeDesc(1, 2, 5, 4, 2, 2, 2, 2, 2, {0, 0, 0, 0}, 1, 1, 2, 1, 0),
            false);
}

TEST(Pad, ZeroPadsEveryAxis) {
  std::vector<int64_t> d = {2, 2, 2, 3, 4, 1, 1};
  std::vector<float> x = {1, 2, 3, 4}, y(12, 9.0f);
  pdrt_pad(nullptr, x.data(), y.data(), d.data());
  EXPECT_EQ(y, (std::vector<float>{0, 0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0}));
}

} // namespace
