//===- layer_norm_test.cc - Layer norm kernels on both ISAs --------------===//
//
// pdrt_layer_norm, pdrt_add_layer_norm and pdrt_layer_norm_grad on the
// AVX-512 rows (layer_norm_avx512.cc, where the CPU has them) and on the
// AVX2 rows (layer_norm_avx2.cc): against a float64 reference, and the
// fused forms bit for bit against the unfused ones.
//
//===----------------------------------------------------------------------===//

#include "cpu/vmath.h"
#include "pdrt/pdrt.h"

#include "isa_fixture.h"
#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace {

using pdtest::randomVector;

class LayerNormOnIsa : public pdtest::OnIsa {};

/// Layer norm of one row and its gradient in double, from the formulas.
struct NormReference {
  std::vector<double> xhat, y, dx;
  NormReference(const float *x, const float *dy, const float *g,
                const float *b, int64_t cols, double eps)
      : xhat(cols), y(cols), dx(cols) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += x[c];
    mean /= cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (x[c] - mean) * (x[c] - mean);
    const double rstd = 1.0 / std::sqrt(var / cols + eps);
    double meanDn = 0, meanDnX = 0;
    for (int64_t c = 0; c < cols; ++c) {
      xhat[c] = (x[c] - mean) * rstd;
      y[c] = xhat[c] * g[c] + b[c];
      meanDn += (double)dy[c] * g[c] / cols;
      meanDnX += (double)dy[c] * g[c] * xhat[c] / cols;
    }
    for (int64_t c = 0; c < cols; ++c)
      dx[c] = rstd * ((double)dy[c] * g[c] - meanDn - xhat[c] * meanDnX);
  }
};

// Rows of widths with and without a tail of lanes (3, 15, 16, 37, 256,
// 300) against the float64 formulas: y, dx and the column sums dg, db
// within a few float roundings of the values' scale; rows offset by 3
// so the mean is not 0.
TEST_P(LayerNormOnIsa, MatchesAFloat64Reference) {
  for (int64_t cols : {3, 15, 16, 37, 256, 300}) {
    const int64_t rows = 6;
    std::vector<float> x = randomVector(rows * cols, 71),
                       dy = randomVector(rows * cols, 72),
                       g = randomVector(cols, 73), b = randomVector(cols, 74);
    for (float &v : x)
      v += 3.0f;
    std::vector<float> y(rows * cols), dx(rows * cols), dg(cols), db(cols);
    pdrt_layer_norm(nullptr, x.data(), g.data(), b.data(), y.data(), rows,
                    cols, 1e-5f);
    pdrt_layer_norm_grad(nullptr, dy.data(), x.data(), g.data(), nullptr,
                         dx.data(), dg.data(), db.data(), nullptr, rows, cols,
                         1e-5f);
    std::vector<double> wantDg(cols, 0.0), wantDb(cols, 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t at = r * cols;
      NormReference ref(x.data() + at, dy.data() + at, g.data(), b.data(),
                        cols, 1e-5);
      for (int64_t c = 0; c < cols; ++c) {
        EXPECT_NEAR(y[at + c], ref.y[c], 2e-6 * (1 + std::fabs(ref.y[c])))
            << "cols " << cols << " row " << r << " col " << c;
        EXPECT_NEAR(dx[at + c], ref.dx[c], 1e-5 * (1 + std::fabs(ref.dx[c])))
            << "cols " << cols << " row " << r << " col " << c;
        wantDb[c] += dy[at + c];
        wantDg[c] += dy[at + c] * ref.xhat[c];
      }
    }
    for (int64_t c = 0; c < cols; ++c) {
      EXPECT_NEAR(db[c], wantDb[c], 1e-5 * (1 + std::fabs(wantDb[c])));
      EXPECT_NEAR(dg[c], wantDg[c], 1e-4 * (1 + std::fabs(wantDg[c])));
    }
  }
}

// Rows whose mean lies 1000 standard deviations from 0, where a variance
// formed as E[x^2] - mean^2 cancels the most: normalised with g = 1, b = 0
// each row has mean 0 and variance 1 to within the float mean's rounding
// (half an ulp of 1000, 3e-5, carried by every x - mean).
TEST_P(LayerNormOnIsa, FarFromZeroTheRowsStillNormalise) {
  const int64_t rows = 4, cols = 256;
  std::vector<float> x = randomVector(rows * cols, 81), y(rows * cols),
                     g(cols, 1.0f), b(cols, 0.0f);
  for (float &v : x)
    v += 1000.0f;
  pdrt_layer_norm(nullptr, x.data(), g.data(), b.data(), y.data(), rows, cols,
                  1e-5f);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < cols; ++c)
      mean += y[r * cols + c] / (double)cols;
    for (int64_t c = 0; c < cols; ++c)
      var += (y[r * cols + c] - mean) * (y[r * cols + c] - mean) / cols;
    EXPECT_NEAR(mean, 0.0, 1e-4) << "row " << r;
    EXPECT_NEAR(var, 1.0, 1e-4) << "row " << r;
  }
}

TEST_P(LayerNormOnIsa, AddNormEqualsAddThenLayerNormBitForBit) {
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
TEST_P(LayerNormOnIsa, AddNormWithRhsBiasEqualsTheBiasAddedFirstBitForBit) {
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
TEST_P(LayerNormOnIsa, AddNormGradientAddsTheAddendAndSumsItsRows) {
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
TEST_P(LayerNormOnIsa, AddNormGradientOverItsIncomingGradientBitForBit) {
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
TEST_P(LayerNormOnIsa, BlocksOfRowsEqualOneRowAtATimeBitForBit) {
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

INSTANTIATE_TEST_SUITE_P(Isa, LayerNormOnIsa, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "Avx512" : "Avx2";
                         });

} // namespace
