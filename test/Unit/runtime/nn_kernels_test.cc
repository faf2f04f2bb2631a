//===- nn_kernels_test.cc - nn kernels against hand-computed values -------===//
//
// pdrt_unary / pdrt_unary_grad for cos, sin, sigmoid and SiLU (and the
// unknown-kind error), pdrt_swiglu and its gradient, and pdrt_rms_norm against hand-computed rows with its gradient
// pdrt_rms_norm_grad checked by central finite differences of the forward.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using pdtest::randomVector;

const float kPi = 3.14159265358979f;
const float kHalfSqrt3 = 0.866025403784439f; // sin(pi / 3)

TEST(Unary, CosAndSin) {
  std::vector<float> x = {0, kPi / 2, kPi, -kPi / 3}, y(4);
  pdrt_unary(nullptr, PDRT_COS, 0.0f, x.data(), y.data(), 4);
  const float cosWant[] = {1, 0, -1, 0.5f};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], cosWant[i], 1e-6) << "cos element " << i;
  pdrt_unary(nullptr, PDRT_SIN, 0.0f, x.data(), y.data(), 4);
  const float sinWant[] = {0, 1, 0, -kHalfSqrt3};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(y[i], sinWant[i], 1e-6) << "sin element " << i;
}

TEST(Unary, CosAndSinGradientsUseX) {
  // cos' = -sin, sin' = cos, computed from x (y is not read: pass garbage).
  std::vector<float> x = {0, kPi / 2, kPi, -kPi / 3}, dy = {1, 2, 3, 4};
  std::vector<float> junk(4, NAN), dx(4);
  pdrt_unary_grad(nullptr, PDRT_COS, 0.0f, dy.data(), x.data(), junk.data(),
                  dx.data(), 4);
  const float cosWant[] = {0, -2, 0, 4 * kHalfSqrt3};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(dx[i], cosWant[i], 1e-6) << "cos' element " << i;
  pdrt_unary_grad(nullptr, PDRT_SIN, 0.0f, dy.data(), x.data(), junk.data(),
                  dx.data(), 4);
  const float sinWant[] = {1, 0, -3, 2};
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(dx[i], sinWant[i], 1e-6) << "sin' element " << i;
}

/// x over [-40, 40] and a few extremes: 2507 elements, a tail on 8 lanes
/// and on 16 (silu_test.cc checks both ISAs' kernels further).
std::vector<float> sigmoidArguments() {
  std::vector<float> x = {0.0f, -0.0f, 1e-30f, -88.0f, 88.0f, -200.0f, 200.0f};
  for (int i = 0; i < 2500; ++i)
    x.push_back(-40.0f + 80.0f * i / 2499);
  return x;
}

TEST(Unary, SigmoidAndSiluMatchDoubleReferences) {
  std::vector<float> x = sigmoidArguments(), s(x.size()), y(x.size());
  pdrt_unary(nullptr, PDRT_SIGMOID, 0.0f, x.data(), s.data(), x.size());
  pdrt_unary(nullptr, PDRT_SILU, 0.0f, x.data(), y.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double sig = 1.0 / (1.0 + std::exp(-(double)x[i]));
    // Below 2^-126 (x < -87) floats are subnormal or 0: absolute error.
    EXPECT_NEAR(s[i], sig, 4e-7 * sig + 1e-37) << "sigmoid(" << x[i] << ")";
    EXPECT_NEAR(y[i], x[i] * sig, 4e-7 * std::fabs(x[i] * sig) + 1e-37)
        << "silu(" << x[i] << ")";
  }
  EXPECT_EQ(y[5], -0.0f); // -200 exp(200) overflows: -200 / inf
  EXPECT_EQ(y[6], 200.0f);
}

TEST(Unary, SiluGradientFromXAgreesWithFiniteDifferences) {
  // silu'(x) = s (1 + x (1 - s)); y is not read (pass garbage).
  std::vector<float> x = sigmoidArguments(), junk(x.size(), NAN);
  std::vector<float> dy = randomVector(x.size(), 7), dx(x.size());
  pdrt_unary_grad(nullptr, PDRT_SILU, 0.0f, dy.data(), x.data(), junk.data(),
                  dx.data(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    double h = 1e-4 * std::max(1.0, std::fabs((double)x[i]));
    auto silu = [](double v) { return v / (1.0 + std::exp(-v)); };
    double want = dy[i] * (silu(x[i] + h) - silu(x[i] - h)) / (2 * h);
    EXPECT_NEAR(dx[i], want, 1e-5 * std::max(1.0, std::fabs(want)))
        << "silu'(" << x[i] << ")";
  }
}

TEST(Swiglu, IsSiluOfTheGateTimesUpBitForBit) {
  std::vector<float> gate = sigmoidArguments();
  const int64_t n = gate.size();
  std::vector<float> up = randomVector(n, 3), silu(n), y(n);
  pdrt_unary(nullptr, PDRT_SILU, 0.0f, gate.data(), silu.data(), n);
  pdrt_swiglu(nullptr, gate.data(), up.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], silu[i] * up[i]) << "element " << i;
}

TEST(Swiglu, GradientsAgreeWithFiniteDifferences) {
  std::vector<float> gate = sigmoidArguments();
  const int64_t n = gate.size();
  std::vector<float> up = randomVector(n, 3), dy = randomVector(n, 4);
  std::vector<float> dgate(n), dup(n), silu(n);
  pdrt_swiglu_grad(nullptr, dy.data(), gate.data(), up.data(), dgate.data(),
                   dup.data(), n);
  pdrt_unary(nullptr, PDRT_SILU, 0.0f, gate.data(), silu.data(), n);
  auto siluOf = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (int64_t i = 0; i < n; ++i) {
    // d/d up is dy silu(gate): the forward's silu, bit for bit.
    ASSERT_EQ(dup[i], dy[i] * silu[i]) << "element " << i;
    double h = 1e-4 * std::max(1.0, std::fabs((double)gate[i]));
    double want = (double)dy[i] * up[i] *
                  (siluOf(gate[i] + h) - siluOf(gate[i] - h)) / (2 * h);
    EXPECT_NEAR(dgate[i], want, 1e-5 * std::max(1.0, std::fabs(want)))
        << "gate " << gate[i];
  }
  // dgate may be written over dy.
  std::vector<float> inPlace = dy;
  pdrt_swiglu_grad(nullptr, inPlace.data(), gate.data(), up.data(),
                   inPlace.data(), dup.data(), n);
  EXPECT_EQ(inPlace, dgate);
}

TEST(Unary, UnknownKindIsAContextError) {
  pdrt_ctx ctx;
  float x = 1, y = -1;
  pdrt_unary(&ctx, PDRT_SILU + 1, 0.0f, &x, &y, 1);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_unary: unknown kind 12");
  EXPECT_EQ(y, -1.0f);
}

TEST(RmsNorm, RowsMatchHandComputedValues) {
  // Row 0: mean(x^2) = 4, rstd = 1/2. Row 1: mean(x^2) = 9, rstd = 1/3.
  std::vector<float> x = {2, -2, 2, -2, 3, 3, 3, 3}, g = {1, 0.5f, 2, -1};
  std::vector<float> y(8);
  pdrt_rms_norm(nullptr, x.data(), g.data(), y.data(), 2, 4, 0.0f);
  EXPECT_EQ(y, (std::vector<float>{1, -0.5f, 2, 1, 1, 0.5f, 2, -1}));
  // eps enters under the root: a zero row stays 0, and mean(x^2) = 0.75
  // with eps = 0.25 gives rstd = 1.
  std::vector<float> z = {0, 0, 0, 0, 1, -1, 1, 0}, yz(8);
  pdrt_rms_norm(nullptr, z.data(), g.data(), yz.data(), 2, 4, 0.25f);
  EXPECT_EQ(yz, (std::vector<float>{0, 0, 0, 0, 1, -0.5f, 2, 0}));
}

TEST(RmsNorm, RstdAccumulatesInDouble) {
  // Sum of squares 2^24 + 4095: a float sum stalls at 2^24 (its ulp is 2),
  // losing every 1 after the first element.
  // y of an element 1 with gain 1 is rstd itself.
  std::vector<float> x(4096, 1.0f), g(4096, 1.0f), y(4096);
  x[0] = 4096.0f;
  pdrt_rms_norm(nullptr, x.data(), g.data(), y.data(), 1, 4096, 0.0f);
  EXPECT_NEAR(y[1], 1.0 / std::sqrt((16777216.0 + 4095.0) / 4096.0), 1e-8);
}

/// The scalar sum(dy * rms_norm(x, g)) in double: its gradients with respect
/// to x and g are pdrt_rms_norm_grad's dx and dg for that dy.
double rmsLoss(const std::vector<float> &x, const std::vector<float> &g,
               const std::vector<float> &dy, int64_t rows, int64_t cols,
               float eps) {
  std::vector<float> y(x.size());
  pdrt_rms_norm(nullptr, x.data(), g.data(), y.data(), rows, cols, eps);
  double s = 0.0;
  for (size_t i = 0; i < y.size(); ++i)
    s += (double)dy[i] * y[i];
  return s;
}

TEST(RmsNorm, GradientMatchesFiniteDifferences) {
  const int64_t rows = 3, cols = 7;
  const float eps = 1e-5f;
  std::vector<float> x = randomVector(rows * cols, 21);
  std::vector<float> g = randomVector(cols, 22), dy = randomVector(rows * cols, 23);
  std::vector<float> dx(rows * cols, 99.0f), dg(cols, 99.0f);
  pdrt_rms_norm_grad(nullptr, dy.data(), x.data(), g.data(), nullptr, dx.data(),
                     dg.data(), rows, cols, eps);
  // Central differences (in double) of the float forward: with h = 1e-2 the
  // truncation error is O(h^2) and the float rounding ~ 1e-7 |loss| / h;
  // together they stay near 3e-5 here, 15x inside the tolerance, while a 2%
  // error in the row term of dx already misses it by 10x.
  const float h = 1e-2f;
  for (int64_t i = 0; i < rows * cols; ++i) {
    std::vector<float> p = x, q = x;
    p[i] += h;
    q[i] -= h;
    double fd = (rmsLoss(p, g, dy, rows, cols, eps) -
                 rmsLoss(q, g, dy, rows, cols, eps)) / (p[i] - q[i]);
    EXPECT_NEAR(dx[i], fd, 5e-4 * (1.0 + std::fabs(fd))) << "dx element " << i;
  }
  // dg is overwritten (the 99s are gone), not accumulated.
  for (int64_t c = 0; c < cols; ++c) {
    std::vector<float> p = g, q = g;
    p[c] += h;
    q[c] -= h;
    double fd = (rmsLoss(x, p, dy, rows, cols, eps) -
                 rmsLoss(x, q, dy, rows, cols, eps)) / (p[c] - q[c]);
    EXPECT_NEAR(dg[c], fd, 5e-4 * (1.0 + std::fabs(fd))) << "dg element " << c;
  }
}

TEST(RmsNorm, GradientMatchesClosedFormOnAHandRow) {
  // x = (3, 4), g = (1, 1), eps = 0: rstd = 1 / sqrt(12.5), y = x rstd.
  // dy = (1, 0): mean(dy g x) = 1.5, so
  // dx = rstd (dy - x rstd^2 1.5) = rstd (1 - 0.36, -0.48), dg = (3 rstd, 0).
  std::vector<float> x = {3, 4}, g = {1, 1}, dy = {1, 0}, dx(2), dg(2);
  pdrt_rms_norm_grad(nullptr, dy.data(), x.data(), g.data(), nullptr, dx.data(),
                     dg.data(), 1, 2, 0.0f);
  const double rstd = 1.0 / std::sqrt(12.5);
  EXPECT_NEAR(dx[0], rstd * 0.64, 1e-6);
  EXPECT_NEAR(dx[1], rstd * -0.48, 1e-6);
  EXPECT_NEAR(dg[0], 3 * rstd, 1e-6);
  EXPECT_EQ(dg[1], 0.0f);
}

TEST(RmsNorm, AddAndAddendEqualTheUnfusedOpsBitForBit) {
  // pdrt_add_rms_norm = the add, then pdrt_rms_norm; pdrt_rms_norm_grad
  // with an addend = without, then the add.
  const int64_t rows = 5, cols = 67;
  std::vector<float> a = randomVector(rows * cols, 31),
                     b = randomVector(rows * cols, 32),
                     g = randomVector(cols, 33),
                     dy = randomVector(rows * cols, 34),
                     ds = randomVector(rows * cols, 35);
  std::vector<float> sum(rows * cols), y(rows * cols), s2(rows * cols),
      y2(rows * cols);
  pdrt_add_rms_norm(nullptr, a.data(), b.data(), g.data(), sum.data(), y.data(),
                    rows, cols, 1e-6f);
  for (int64_t i = 0; i < rows * cols; ++i)
    s2[i] = a[i] + b[i];
  pdrt_rms_norm(nullptr, s2.data(), g.data(), y2.data(), rows, cols, 1e-6f);
  EXPECT_EQ(sum, s2);
  EXPECT_EQ(y, y2);
  std::vector<float> dx(rows * cols), dg(cols), dx2(rows * cols), dg2(cols);
  pdrt_rms_norm_grad(nullptr, dy.data(), sum.data(), g.data(), ds.data(),
                     dx.data(), dg.data(), rows, cols, 1e-6f);
  pdrt_rms_norm_grad(nullptr, dy.data(), sum.data(), g.data(), nullptr,
                     dx2.data(), dg2.data(), rows, cols, 1e-6f);
  for (int64_t i = 0; i < rows * cols; ++i)
    dx2[i] += ds[i];
  EXPECT_EQ(dx, dx2);
  EXPECT_EQ(dg, dg2);
}

TEST(RmsNorm, SkippedAfterAnError) {
  pdrt_ctx ctx;
  ctx.failed = true;
  std::vector<float> x = {1, 2}, g = {1, 1}, y = {7, 7};
  pdrt_rms_norm(&ctx, x.data(), g.data(), y.data(), 1, 2, 0.0f);
  EXPECT_EQ(y, (std::vector<float>{7, 7}));
}

TEST(ElementwiseChain, EqualsTheUnfusedOpsBitForBit) {
  // y = relu((x * sigmoid(x)) * u + b) - 0.5, b broadcast over rows, over
  // more elements than one block.
  const int64_t rows = 7, cols = 131, n = rows * cols;
  std::vector<float> x = randomVector(n, 41), u = randomVector(n, 42),
                     b = randomVector(cols, 43);
  const int64_t half = 0x3f000000; // 0.5f
  const int64_t desc[] = {n, 3, n, n, cols, /*registers*/ 10, /*count*/ 7,
                          PDRT_CHAIN_UNARY, PDRT_SIGMOID, 3, 0, 0,
                          PDRT_CHAIN_BINARY, PDRT_MUL, 4, 0, 3,
                          PDRT_CHAIN_BINARY, PDRT_MUL, 5, 4, 1,
                          PDRT_CHAIN_BINARY, PDRT_ADD, 6, 5, 2,
                          PDRT_CHAIN_RELU, 0, 7, 6, 0,
                          PDRT_CHAIN_CONST, 0, 8, half, 0,
                          PDRT_CHAIN_BINARY, PDRT_SUB, 9, 7, 8};
  std::vector<float> y(n);
  pdrt_elementwise_chain(nullptr, desc, y.data(), x.data(), u.data(),
                         b.data(), nullptr);
  std::vector<float> s(n), t(n), want(n);
  pdrt_unary(nullptr, PDRT_SIGMOID, 0.0f, x.data(), s.data(), n);
  const int64_t same[] = {1, n, 1, 1};
  pdrt_binary(nullptr, PDRT_MUL, x.data(), s.data(), t.data(), same);
  pdrt_binary(nullptr, PDRT_MUL, t.data(), u.data(), s.data(), same);
  const int64_t rowsDesc[] = {2, rows, cols, cols, 1, 0, 1};
  pdrt_binary(nullptr, PDRT_ADD, s.data(), b.data(), t.data(), rowsDesc);
  pdrt_relu(nullptr, t.data(), s.data(), n);
  for (int64_t i = 0; i < n; ++i)
    want[i] = s[i] - 0.5f;
  EXPECT_EQ(y, want);
}

TEST(ElementwiseChain, MalformedProgramIsAContextError) {
  pdrt_ctx ctx;
  float x = 1, y = -1;
  // Instruction 0 writes input register 0.
  const int64_t desc[] = {1, 1, 1, 2, 1, PDRT_CHAIN_RELU, 0, 0, 0, 0};
  pdrt_elementwise_chain(&ctx, desc, &y, &x, nullptr, nullptr, nullptr);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_elementwise_chain: malformed program");
  EXPECT_EQ(y, -1.0f);
}

} // namespace
