//===- nn_kernels_test.cc - nn kernels against hand-computed values ---------===//
//
// pdrt_unary / pdrt_unary_grad for cos and sin (and the unknown-kind
// error), and pdrt_rms_norm against hand-computed rows with its gradient
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

TEST(Unary, UnknownKindIsAContextError) {
  pdrt_ctx ctx;
  float x = 1, y = -1;
  pdrt_unary(&ctx, PDRT_SIN + 1, 0.0f, &x, &y, 1);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_unary: unknown kind 11");
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
  std::vector<float> x(4096, 1.0f);
  x[0] = 4096.0f;
  float rstd = pdrt_row_rms_rstd(x.data(), 4096, 0.0f);
  EXPECT_NEAR(rstd, 1.0 / std::sqrt((16777216.0 + 4095.0) / 4096.0), 1e-8);
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
  pdrt_rms_norm_grad(nullptr, dy.data(), x.data(), g.data(), dx.data(), dg.data(),
                     rows, cols, eps);
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
  pdrt_rms_norm_grad(nullptr, dy.data(), x.data(), g.data(), dx.data(), dg.data(),
                     1, 2, 0.0f);
  const double rstd = 1.0 / std::sqrt(12.5);
  EXPECT_NEAR(dx[0], rstd * 0.64, 1e-6);
  EXPECT_NEAR(dx[1], rstd * -0.48, 1e-6);
  EXPECT_NEAR(dg[0], 3 * rstd, 1e-6);
  EXPECT_EQ(dg[1], 0.0f);
}

TEST(RmsNorm, SkippedAfterAnError) {
  pdrt_ctx ctx;
  ctx.failed = true;
  std::vector<float> x = {1, 2}, g = {1, 1}, y = {7, 7};
  pdrt_rms_norm(&ctx, x.data(), g.data(), y.data(), 1, 2, 0.0f);
  EXPECT_EQ(y, (std::vector<float>{7, 7}));
}

TEST(AddLayerNorm, EqualsAddThenLayerNormBitForBit) {
  const int64_t rows = 5, cols = 37;
  std::vector<float> a = randomVector(rows * cols, 21),
                     b = randomVector(rows * cols, 22),
                     g = randomVector(cols, 23), beta = randomVector(cols, 24);
  std::vector<float> sum(rows * cols), y(rows * cols), s2(rows * cols),
      y2(rows * cols);
  pdrt_add_layer_norm(nullptr, a.data(), b.data(), /*b_bias=*/nullptr,
                      g.data(), beta.data(), sum.data(), y.data(), rows, cols,
                      1e-5f);
  for (int64_t i = 0; i < rows * cols; ++i)
    s2[i] = a[i] + b[i];
  pdrt_layer_norm(nullptr, s2.data(), g.data(), beta.data(), y2.data(), rows,
                  cols, 1e-5f);
  EXPECT_EQ(sum, s2);
  EXPECT_EQ(y, y2);
}

// A Linear's bias moved into the norm (pd-fuse-bias-into-consumers): the
// sum a + (b + bias) and its norm bit for bit those of the bias added to
// b beforehand; 9 rows (a block of kNormRows and a tail).
TEST(AddLayerNorm, WithRhsBiasEqualsTheBiasAddedFirstBitForBit) {
  const int64_t rows = 9, cols = 37;
  std::vector<float> a = randomVector(rows * cols, 41),
                     b = randomVector(rows * cols, 42),
                     bias = randomVector(cols, 43), g = randomVector(cols, 44),
                     beta = randomVector(cols, 45);
  std::vector<float> biased(rows * cols), sum(rows * cols), y(rows * cols),
      s2(rows * cols), y2(rows * cols);
  for (int64_t i = 0; i < rows * cols; ++i)
    biased[i] = b[i] + bias[i % cols];
  pdrt_add_layer_norm(nullptr, a.data(), b.data(), bias.data(), g.data(),
                      beta.data(), sum.data(), y.data(), rows, cols, 1e-5f);
  pdrt_add_layer_norm(nullptr, a.data(), biased.data(), nullptr, g.data(),
                      beta.data(), s2.data(), y2.data(), rows, cols, 1e-5f);
  EXPECT_EQ(sum, s2);
  EXPECT_EQ(y, y2);
}

// The gradient with an addend (the residual stream's) and an
// input_grad_sum (a moved bias's gradient): dx is the plain gradient plus
// the addend, dg and db unchanged, and the sum dx's rows summed as
// pdrt_sum_to sums them, bit for bit; 11 rows cover the blocks of four and
// the rows alone.
TEST(AddLayerNorm, GradientAddsTheAddendAndSumsItsRows) {
  const int64_t rows = 11, cols = 37;
  std::vector<float> dy = randomVector(rows * cols, 41),
                     x = randomVector(rows * cols, 42),
                     g = randomVector(cols, 43),
                     addend = randomVector(rows * cols, 44);
  std::vector<float> dx(rows * cols), dg(cols), db(cols), ds(cols, 7.0f),
      dx2(rows * cols), dg2(cols), db2(cols), ds2(cols);
  pdrt_layer_norm_grad(nullptr, dy.data(), x.data(), g.data(), addend.data(),
                       dx.data(), dg.data(), db.data(), ds.data(), rows, cols,
                       1e-5f);
  pdrt_layer_norm_grad(nullptr, dy.data(), x.data(), g.data(), nullptr,
                       dx2.data(), dg2.data(), db2.data(), nullptr, rows, cols,
                       1e-5f);
  for (int64_t i = 0; i < rows * cols; ++i)
    EXPECT_EQ(dx[i], addend[i] + dx2[i]) << i;
  EXPECT_EQ(dg, dg2);
  EXPECT_EQ(db, db2);
  const int64_t desc[] = {2, rows, cols, 0, 1};
  pdrt_sum_to(nullptr, dx.data(), ds2.data(), cols, desc);
  EXPECT_EQ(ds, ds2);
}

// The gradient written over dy (pd-allocate-buffers gives dx dy's slot
// when dy dies at it: getOverwritableOperand), with and without the
// addend and the row sum: dx, dg, db and the sum bit for bit those of the
// kernel out of place; 11 rows cover the blocks of four and the rows alone.
TEST(AddLayerNorm, GradientOverItsIncomingGradientBitForBit) {
  const int64_t rows = 11, cols = 37;
  std::vector<float> x = randomVector(rows * cols, 61),
                     g = randomVector(cols, 62),
                     addend = randomVector(rows * cols, 63);
  for (bool withAddend : {false, true}) {
    std::vector<float> dy = randomVector(rows * cols, 64), dx(rows * cols),
                       dg(cols), db(cols), ds(cols), dg2(cols), db2(cols),
                       ds2(cols);
    const float *a = withAddend ? addend.data() : nullptr;
    pdrt_layer_norm_grad(nullptr, dy.data(), x.data(), g.data(), a, dx.data(),
                         dg.data(), db.data(), ds.data(), rows, cols, 1e-5f);
    pdrt_layer_norm_grad(nullptr, dy.data(), x.data(), g.data(), a, dy.data(),
                         dg2.data(), db2.data(), ds2.data(), rows, cols, 1e-5f);
    EXPECT_EQ(dy, dx) << (withAddend ? "with" : "without") << " addend";
    EXPECT_EQ(dg, dg2);
    EXPECT_EQ(db, db2);
    EXPECT_EQ(ds, ds2);
  }
}

// Layer norm takes rows four at a time (their sums interleaved): every
// row's output and input gradient equal those of the row alone bit for
// bit, and dg, db the rows' terms added in row order, for widths with and
// without a lane tail.
TEST(LayerNorm, BlocksOfRowsEqualOneRowAtATimeBitForBit) {
  for (int64_t cols : {37, 256}) {
    const int64_t rows = 11; // two blocks of four and three rows alone
    std::vector<float> x = randomVector(rows * cols, 51),
                       dy = randomVector(rows * cols, 52),
                       g = randomVector(cols, 53), b = randomVector(cols, 54);
    std::vector<float> y(rows * cols), dx(rows * cols), dg(cols), db(cols);
    pdrt_layer_norm(nullptr, x.data(), g.data(), b.data(), y.data(), rows,
                    cols, 1e-5f);
    pdrt_layer_norm_grad(nullptr, dy.data(), x.data(), g.data(), nullptr,
                         dx.data(), dg.data(), db.data(), nullptr, rows, cols,
                       1e-5f);
    std::vector<float> sumDg(cols, 0.0f), sumDb(cols, 0.0f);
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> yr(cols), dxr(cols), dgr(cols), dbr(cols);
      const int64_t at = r * cols;
      pdrt_layer_norm(nullptr, x.data() + at, g.data(), b.data(), yr.data(),
                      1, cols, 1e-5f);
      pdrt_layer_norm_grad(nullptr, dy.data() + at, x.data() + at, g.data(),
                           nullptr, dxr.data(), dgr.data(), dbr.data(),
                           nullptr, 1, cols, 1e-5f);
      for (int64_t c = 0; c < cols; ++c) {
        EXPECT_EQ(y[at + c], yr[c]) << "row " << r << " col " << c;
        EXPECT_EQ(dx[at + c], dxr[c]) << "row " << r << " col " << c;
        sumDg[c] += dgr[c];
        sumDb[c] += dbr[c];
      }
    }
    // The kernel may fuse each row's multiply-add into dg (one rounding
    // where the separate sums here round twice).
    for (int64_t c = 0; c < cols; ++c) {
      EXPECT_NEAR(dg[c], sumDg[c], 1e-6f * (1.0f + std::fabs(sumDg[c])));
      EXPECT_NEAR(db[c], sumDb[c], 1e-6f * (1.0f + std::fabs(sumDb[c])));
    }
  }
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
