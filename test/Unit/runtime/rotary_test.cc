//===- rotary_test.cc - The rotary position embedding kernel -------------===//
//
// pdrt_rotary against x cos + rotate_half(x) sin in double, over both
// layouts of the heads (a [T, D] table read by repeat 1 and by repeat H,
// the same bits), its adjoint against the transpose of the forward map,
// partial rotary (the leading columns rotated, the others copied) and its
// argument checks.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace {

using pdtest::randomVector;

constexpr int64_t kB = 2, kH = 3, kT = 5, kD = 8, kHalf = kD / 2;

/// x cos + rotate_half(x) sin of one row in double (rotate_half(x) =
/// concat(-x[h:], x[:h])), or its transpose x cos + rotate_half^T(x sin).
std::vector<double> referenceRow(const float *x, const float *c, const float *s,
                                 bool adjoint) {
  std::vector<double> y(kD);
  for (int64_t i = 0; i < kD; ++i) {
    int64_t j = i < kHalf ? i + kHalf : i - kHalf;
    double sign = i < kHalf ? -1.0 : 1.0;
    y[i] = double(x[i]) * c[i] +
           (adjoint ? -sign * double(x[j]) * s[j] : sign * double(x[j]) * s[i]);
  }
  return y;
}

/// Runs pdrt_rotary over rows of x with a [kT, kD] table.
std::vector<float> rotate(const std::vector<float> &x,
                          const std::vector<float> &c,
                          const std::vector<float> &s, int64_t repeat,
                          bool adjoint) {
  std::vector<float> y(x.size());
  pdrt_ctx ctx;
  pdrt_rotary(&ctx, x.data(), c.data(), s.data(), y.data(), x.size() / kD, kD,
              kD, kT, repeat, adjoint);
  EXPECT_FALSE(ctx.failed) << ctx.error;
  return y;
}

TEST(Rotary, HeadsFirstAndTokensFirstMatchDoubleAndEachOther) {
  auto x = randomVector(kB * kH * kT * kD, 1);
  auto c = randomVector(kT * kD, 2), s = randomVector(kT * kD, 3);
  for (bool adjoint : {false, true}) {
    // x as [B, H, T, D]: table row t of row (b, h, t), repeat 1.
    std::vector<float> y = rotate(x, c, s, /*repeat=*/1, adjoint);
    // The same tensor as [B, T, H, D]: table row t, repeat H.
    std::vector<float> xt(x.size());
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t t = 0; t < kT; ++t)
          for (int64_t i = 0; i < kD; ++i)
            xt[((b * kT + t) * kH + h) * kD + i] =
                x[((b * kH + h) * kT + t) * kD + i];
    std::vector<float> yt = rotate(xt, c, s, /*repeat=*/kH, adjoint);
    for (int64_t b = 0; b < kB; ++b)
      for (int64_t h = 0; h < kH; ++h)
        for (int64_t t = 0; t < kT; ++t) {
          int64_t row = (b * kH + h) * kT + t;
          std::vector<double> ref =
              referenceRow(&x[row * kD], &c[t * kD], &s[t * kD], adjoint);
          for (int64_t i = 0; i < kD; ++i) {
            float got = y[row * kD + i];
            EXPECT_NEAR(got, ref[i], 1e-6 * (1 + std::fabs(ref[i])))
                << "adjoint " << adjoint << " row " << row << " i " << i;
            EXPECT_EQ(got, yt[((b * kT + t) * kH + h) * kD + i]);
          }
        }
  }
}

TEST(Rotary, AdjointIsTheTransposedMap) {
  // <R x, z> = <x, R^T z> for the map R of one table.
  auto x = randomVector(kB * kT * kD, 4), z = randomVector(kB * kT * kD, 5);
  auto c = randomVector(kT * kD, 6), s = randomVector(kT * kD, 7);
  std::vector<float> rx = rotate(x, c, s, 1, false);
  std::vector<float> rtz = rotate(z, c, s, 1, true);
  double lhs = 0, rhs = 0, scale = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    lhs += double(rx[i]) * z[i];
    rhs += double(x[i]) * rtz[i];
    scale += std::fabs(double(rx[i]) * z[i]);
  }
  EXPECT_NEAR(lhs, rhs, 1e-6 * scale);
}

TEST(Rotary, PartialRotatesTheLeadingColumnsAndCopiesTheRest) {
  // Rows of kD + kRest columns with [kT, kD] tables: the first kD columns
  // get the bits of the whole-row rotation, the others are x's.
  constexpr int64_t kRest = 6, kCols = kD + kRest, kRows = kB * kH * kT;
  auto x = randomVector(kRows * kCols, 8);
  auto c = randomVector(kT * kD, 9), s = randomVector(kT * kD, 10);
  std::vector<float> lead(kRows * kD);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t i = 0; i < kD; ++i)
      lead[r * kD + i] = x[r * kCols + i];
  for (bool adjoint : {false, true}) {
    std::vector<float> whole = rotate(lead, c, s, /*repeat=*/1, adjoint);
    std::vector<float> y(x.size(), -1.0f);
    pdrt_ctx ctx;
    pdrt_rotary(&ctx, x.data(), c.data(), s.data(), y.data(), kRows, kCols, kD,
                kT, 1, adjoint);
    ASSERT_FALSE(ctx.failed) << ctx.error;
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t i = 0; i < kCols; ++i)
        EXPECT_EQ(y[r * kCols + i],
                  i < kD ? whole[r * kD + i] : x[r * kCols + i])
            << "adjoint " << adjoint << " row " << r << " column " << i;
  }
}

TEST(Rotary, OddOrTooManyRotatedColumnsAreAContextError) {
  std::vector<float> x(8, 1.0f), t(6, 1.0f), y(8, -1.0f);
  for (int64_t rotated : {3, 6}) {
    pdrt_ctx ctx;
    pdrt_rotary(&ctx, x.data(), t.data(), t.data(), y.data(), 2, 4, rotated, 1,
                1, 0);
    ASSERT_TRUE(ctx.failed);
    EXPECT_EQ(ctx.error, "pdrt_rotary: " + std::to_string(rotated) +
                             " rotated of 4 columns (must be even and at "
                             "most all), table rows 1 and repeat 1 (must be "
                             ">= 1)");
    EXPECT_EQ(y, std::vector<float>(8, -1.0f));
  }
}

} // namespace
