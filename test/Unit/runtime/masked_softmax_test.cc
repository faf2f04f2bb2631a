//===- masked_softmax_test.cc - pdrt_masked_softmax against double ----------===//
//
// The fused attention softmax against a double-precision reference of
// softmax(mask ? scale x : -inf): a causal (prefix) mask, an arbitrary
// mask, no mask, a mask row shared by several rows, a row that keeps
// nothing; and that it equals pdrt_softmax of the scaled, -inf-filled
// scores bit for bit on the causal path, so fusing changes no result.
// The gradient against the unfused softmax_grad times scale, zero where
// masked. Under the causal mask the GEMMs leave the scores' and dP's
// upper triangles unwritten: the forward and the causal gradient must not
// read them (NaNs there change nothing). A padding mask of the step, one
// block per batch entry broadcast over its heads, against the reference
// and against the unfused softmax of -inf-filled scores followed by
// Where(IsNaN(y), 0, y) (zero_nan_rows), bit for bit, rows keeping nothing
// and rows with a NaN score included.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace {

std::vector<float> randomScores(size_t n, unsigned seed) {
  return pdtest::randomVector(n, seed, 3.0f);
}

/// softmax(mask ? scale x : -inf) of one row in double.
std::vector<double> reference(const float *x, const uint8_t *mask, int64_t n,
                              float scale) {
  double max = -INFINITY;
  for (int64_t k = 0; k < n; ++k)
    if (!mask || mask[k])
      max = std::max(max, (double)(scale * x[k]));
  std::vector<double> y(n, 0.0);
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k)
    if (!mask || mask[k])
      sum += y[k] = std::exp((double)(scale * x[k]) - max);
  for (double &v : y)
    v /= sum;
  return y;
}

/// A causal [t, t] keep-mask (the lower triangle).
std::vector<uint8_t> causal(int64_t t) {
  std::vector<uint8_t> m(t * t);
  for (int64_t i = 0; i < t; ++i)
    for (int64_t j = 0; j < t; ++j)
      m[i * t + j] = j <= i;
  return m;
}

void expectMatchesReference(const std::vector<float> &x,
                            const std::vector<uint8_t> &mask, int64_t rows,
                            int64_t n, int64_t maskRows, float scale) {
  std::vector<float> y(rows * n, -1.0f);
  pdrt_masked_softmax(nullptr, x.data(), mask.empty() ? nullptr : mask.data(),
                      y.data(), rows, n, maskRows, 1, scale, 0, 0);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *m = mask.empty() ? nullptr : mask.data() + (r % maskRows) * n;
    std::vector<double> want = reference(x.data() + r * n, m, n, scale);
    for (int64_t k = 0; k < n; ++k) {
      if (m && !m[k])
        EXPECT_EQ(y[r * n + k], 0.0f) << "row " << r << " masked col " << k;
      else
        EXPECT_NEAR(y[r * n + k], want[k], 2e-7 + 2e-6 * want[k])
            << "row " << r << " col " << k;
    }
  }
}

TEST(MaskedSoftmax, CausalSharedAcrossBatchAndHeads) {
  const int64_t t = 37, rows = 3 * t; // three heads of a [t, t] mask
  expectMatchesReference(randomScores(rows * t, 1), causal(t), rows, t, t,
                         0.125f);
}

TEST(MaskedSoftmax, ArbitraryMask) {
  const int64_t n = 19, maskRows = 4, rows = 8;
  std::vector<uint8_t> mask(maskRows * n);
  std::mt19937 gen(7);
  for (auto &m : mask)
    m = gen() % 3 != 0;
  mask[5] = 1; // every row keeps something
  for (int64_t r = 0; r < maskRows; ++r)
    mask[r * n + r] = 1;
  expectMatchesReference(randomScores(rows * n, 2), mask, rows, n, maskRows,
                         0.5f);
}

TEST(MaskedSoftmax, ScaleOnly) {
  expectMatchesReference(randomScores(6 * 33, 3), {}, 6, 33, 1, 0.3f);
}

TEST(MaskedSoftmax, RowKeepingNothingIsZero) {
  std::vector<float> x = {1, 2, 3, 4}, y(4, -1.0f);
  std::vector<uint8_t> mask = {0, 0, 1, 0};
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), y.data(), 2, 2, 2, 1,
                      1.0f, 0, 0);
  EXPECT_EQ(y, (std::vector<float>{0, 0, 1, 0}));
}

TEST(MaskedSoftmax, CausalEqualsUnfusedBitForBit) {
  const int64_t t = 29, rows = 2 * t;
  std::vector<float> x = randomScores(rows * t, 4), filled(rows * t);
  std::vector<uint8_t> mask = causal(t);
  const float scale = 0.17677669f;
  for (int64_t i = 0; i < rows * t; ++i)
    filled[i] = mask[i % (t * t)] ? x[i] * scale
                                  : -std::numeric_limits<float>::infinity();
  std::vector<float> fused(rows * t), unfused(rows * t);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), fused.data(), rows, t, t,
                      1, scale, 0, 0);
  pdrt_softmax(nullptr, filled.data(), unfused.data(), rows, t, 1, 0);
  EXPECT_EQ(fused, unfused);
}

// The gradient written over dy (pd-allocate-buffers gives dx dy's slot
// when dy dies at the softmax gradient: getOverwritableOperand): bit for
// bit the out-of-place kernel, dense and causal with diagonal blocks.
TEST(MaskedSoftmax, GradientOverItsIncomingGradientBitForBit) {
  const int64_t t = 45, rows = 2 * t;
  std::vector<float> x = randomScores(rows * t, 15), y(rows * t);
  pdrt_masked_softmax(nullptr, x.data(), nullptr, y.data(), rows, t, t, 1,
                      0.125f, 0, 0);
  for (auto [causalRows, block] : {std::pair<int64_t, int64_t>{0, 0}, {t, 32}}) {
    std::vector<float> dy = randomScores(rows * t, 16), dx(rows * t, 0.0f);
    pdrt_masked_softmax_grad(nullptr, dy.data(), y.data(), dx.data(), rows, t,
                             0.125f, causalRows, block);
    pdrt_masked_softmax_grad(nullptr, dy.data(), y.data(), dy.data(), rows, t,
                             0.125f, causalRows, block);
    for (int64_t r = 0; r < rows; ++r) {
      // Past a causal row's diagonal block neither is written.
      int64_t i = r % t,
              end = block ? std::min((i / block + 1) * block, t) : t;
      for (int64_t k = 0; k < end; ++k)
        ASSERT_EQ(dy[r * t + k], dx[r * t + k])
            << "causal rows " << causalRows << " row " << r << " col " << k;
    }
  }
}

TEST(MaskedSoftmax, GradientIsScaledSoftmaxGradient) {
  const int64_t t = 13, rows = 2 * t;
  std::vector<float> x = randomScores(rows * t, 5), dy = randomScores(rows * t, 6);
  std::vector<uint8_t> mask = causal(t);
  std::vector<float> y(rows * t), dx(rows * t), plain(rows * t);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), y.data(), rows, t, t, 1,
                      0.25f, 0, 0);
  pdrt_masked_softmax_grad(nullptr, dy.data(), y.data(), dx.data(), rows, t,
                           0.25f, 0, 0);
  pdrt_softmax_grad(nullptr, dy.data(), y.data(), plain.data(), rows, t, 1, 0);
  for (int64_t i = 0; i < rows * t; ++i) {
    if (!mask[i % (t * t)])
      EXPECT_EQ(dx[i], 0.0f) << i;
    EXPECT_EQ(dx[i], 0.25f * plain[i]) << i;
  }
}

/// x with NaN in every element the causal [t, t] mask drops.
std::vector<float> nanAboveDiagonal(std::vector<float> x, int64_t t) {
  for (size_t i = 0; i < x.size(); ++i)
    if (i % t > (i / t) % t)
      x[i] = std::numeric_limits<float>::quiet_NaN();
  return x;
}

TEST(MaskedSoftmax, CausalReadsNothingAboveTheDiagonal) {
  const int64_t t = 21, rows = 3 * t;
  std::vector<float> x = randomScores(rows * t, 8);
  std::vector<uint8_t> mask = causal(t);
  std::vector<float> clean(rows * t), dirty(rows * t);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), clean.data(), rows, t, t,
                      1, 0.3f, 0, 0);
  pdrt_masked_softmax(nullptr, nanAboveDiagonal(x, t).data(), mask.data(),
                      dirty.data(), rows, t, t, 1, 0.3f, 0, 0);
  EXPECT_EQ(dirty, clean);
}

TEST(MaskedSoftmax, CausalGradientReadsThePrefixOnly) {
  const int64_t t = 37, rows = 2 * t; // rows of 37: a 16-lane tail
  std::vector<float> x = randomScores(rows * t, 9), dy = randomScores(rows * t, 10);
  std::vector<uint8_t> mask = causal(t);
  std::vector<float> y(rows * t), dense(rows * t), causalDx(rows * t, -1.0f);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), y.data(), rows, t, t, 1,
                      0.125f, 0, 0);
  pdrt_masked_softmax_grad(nullptr, dy.data(), y.data(), dense.data(), rows, t,
                           0.125f, 0, 0);
  pdrt_masked_softmax_grad(nullptr, nanAboveDiagonal(dy, t).data(), y.data(),
                           causalDx.data(), rows, t, 0.125f, t, 0);
  EXPECT_EQ(causalDx, dense);
}

// With a block (pd.masked_softmax's `diagonal_blocks`), each causal row is
// written up to the end of its diagonal block only, with the same values
// there as whole rows get; the elements past it keep what they held.
// Rows of 75 under blocks of 32: rows end at 32, 64 and 75.
TEST(MaskedSoftmax, DiagonalBlocksWriteOnlyToTheBlockEnd) {
  const int64_t t = 75, rows = 2 * t, block = 32;
  const float sentinel = -7.0f;
  std::vector<float> x = randomScores(rows * t, 11), dy = randomScores(rows * t, 12);
  std::vector<uint8_t> mask = causal(t);
  std::vector<float> whole(rows * t), part(rows * t, sentinel);
  std::vector<float> wholeDx(rows * t), partDx(rows * t, sentinel);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), whole.data(), rows, t, t,
                      1, 0.125f, 0, 0);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), part.data(), rows, t, t,
                      1, 0.125f, block, 0);
  pdrt_masked_softmax_grad(nullptr, dy.data(), whole.data(), wholeDx.data(),
                           rows, t, 0.125f, t, 0);
  pdrt_masked_softmax_grad(nullptr, dy.data(), whole.data(), partDx.data(),
                           rows, t, 0.125f, t, block);
  for (int64_t r = 0; r < rows; ++r) {
    int64_t i = r % t, end = std::min((i / block + 1) * block, t);
    for (int64_t k = 0; k < t; ++k) {
      float wantY = k < end ? whole[r * t + k] : sentinel;
      float wantDx = k < end ? wholeDx[r * t + k] : sentinel;
      ASSERT_EQ(part[r * t + k], wantY) << "row " << r << " col " << k;
      ASSERT_EQ(partDx[r * t + k], wantDx) << "row " << r << " col " << k;
    }
  }
}

// pd-allocate-buffers homes a stashed softmax's scores in its own slot
// (MaskedSoftmaxOp::getInPlaceInput): written over its input, the kernel
// gives the bits it gives out of place, for the causal prefix (with and
// without diagonal blocks), an arbitrary mask and no mask.
TEST(MaskedSoftmax, InPlaceEqualsOutOfPlaceBitForBit) {
  const int64_t t = 45, rows = 2 * t;
  std::vector<uint8_t> prefix = causal(t), arbitrary(t * t);
  std::mt19937 gen(13);
  for (int64_t i = 0; i < t * t; ++i)
    arbitrary[i] = gen() % 3 != 0 || i % (t + 1) == 0; // the diagonal kept
  struct Case {
    const std::vector<uint8_t> *mask;
    int64_t block;
  };
  for (const Case &c : {Case{&prefix, 0}, Case{&prefix, 32},
                        Case{&arbitrary, 0}, Case{nullptr, 0}}) {
    std::vector<float> x = randomScores(rows * t, 14), y(rows * t, 0.0f);
    const uint8_t *mask = c.mask ? c.mask->data() : nullptr;
    pdrt_masked_softmax(nullptr, x.data(), mask, y.data(), rows, t, t, 1,
                        0.125f, c.block, 0);
    pdrt_masked_softmax(nullptr, x.data(), mask, x.data(), rows, t, t, 1,
                        0.125f, c.block, 0);
    for (int64_t r = 0; r < rows; ++r) {
      // With diagonal blocks the columns past the row's block are unwritten
      // (x keeps its scores there, y its zeros).
      int64_t i = r % t,
              end = c.block ? std::min((i / c.block + 1) * c.block, t) : t;
      for (int64_t k = 0; k < end; ++k)
        ASSERT_EQ(x[r * t + k], y[r * t + k])
            << "mask " << (c.mask ? (c.mask == &prefix ? "causal" : "arbitrary")
                                  : "none")
            << " block " << c.block << " row " << r << " col " << k;
    }
  }
}

/// B batch entries of H heads of [T, N] scores under a padding mask of
/// one [R, N] block per entry (R = T: per query row; R = 1: per key).
struct PaddingCase {
  int64_t batch, heads, t, n, maskRows;
};

/// The padding mask of a case: entry b keeps a prefix of its keys whose
/// length varies with b and the mask row; entry 1 keeps nothing at all.
std::vector<uint8_t> paddingMask(const PaddingCase &c) {
  std::vector<uint8_t> mask(c.batch * c.maskRows * c.n);
  for (int64_t b = 0; b < c.batch; ++b)
    for (int64_t i = 0; i < c.maskRows; ++i)
      for (int64_t k = 0; k < c.n; ++k)
        mask[(b * c.maskRows + i) * c.n + k] =
            b != 1 && k < c.n - (3 * b + i) % c.n;
  return mask;
}

TEST(MaskedSoftmax, PaddingMaskPerBatchEntry) {
  for (PaddingCase c :
       {PaddingCase{3, 4, 5, 7, 5}, PaddingCase{3, 2, 6, 9, 1}}) {
    const int64_t rows = c.batch * c.heads * c.t;
    std::vector<uint8_t> mask = paddingMask(c);
    mask[2 * c.maskRows * c.n] = 0; // a row of entry 2 that is no prefix
    std::vector<float> x = randomScores(rows * c.n, 21), y(rows * c.n, -1.0f);
    pdrt_masked_softmax(nullptr, x.data(), mask.data(), y.data(), rows, c.n,
                        c.maskRows, c.batch, 0.25f, 0, 0);
    for (int64_t r = 0; r < rows; ++r) {
      int64_t b = r / (c.heads * c.t), i = r % c.maskRows;
      const uint8_t *m = mask.data() + (b * c.maskRows + i) * c.n;
      bool any = std::any_of(m, m + c.n, [](uint8_t v) { return v != 0; });
      std::vector<double> want = reference(x.data() + r * c.n, m, c.n, 0.25f);
      for (int64_t k = 0; k < c.n; ++k) {
        if (!m[k] || !any)
          ASSERT_EQ(y[r * c.n + k], 0.0f) << "row " << r << " col " << k;
        else
          ASSERT_NEAR(y[r * c.n + k], want[k], 2e-7 + 2e-6 * want[k])
              << "row " << r << " col " << k;
      }
    }
  }
}

// pd-fuse-attention-softmax rewrites softmax(s c + Where(mask, 0, -inf))
// followed by Where(IsNaN(y), 0, y) (torch's scaled_dot_product_attention
// export) to one call with zero_nan_rows: the bits of the unfused ops.
TEST(MaskedSoftmax, ZeroNanRowsEqualsUnfusedGuardBitForBit) {
  const PaddingCase c{2, 3, 4, 11, 1};
  const int64_t rows = c.batch * c.heads * c.t;
  const float scale = 0.125f, ninf = -std::numeric_limits<float>::infinity();
  std::vector<uint8_t> mask = paddingMask(c);
  std::vector<float> x = randomScores(rows * c.n, 22);
  x[5 * c.n + 2] = std::numeric_limits<float>::quiet_NaN(); // a kept NaN
  x[7 * c.n + 1] = std::numeric_limits<float>::infinity();  // a kept +inf
  std::vector<float> filled(rows * c.n), unfused(rows * c.n);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < c.n; ++k)
      filled[r * c.n + k] = x[r * c.n + k] * scale +
                            (mask[r / (c.heads * c.t) * c.n + k] ? 0.0f : ninf);
  pdrt_softmax(nullptr, filled.data(), unfused.data(), rows, c.n, 1, 0);
  for (float &v : unfused)
    v = std::isnan(v) ? 0.0f : v;
  std::vector<float> fused(rows * c.n, -1.0f);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), fused.data(), rows, c.n,
                      c.maskRows, c.batch, scale, 0, 1);
  EXPECT_EQ(fused, unfused);
  // Without zero_nan_rows a NaN row stays NaN; a row keeping nothing is 0.
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), fused.data(), rows, c.n,
                      c.maskRows, c.batch, scale, 0, 0);
  EXPECT_TRUE(std::isnan(fused[5 * c.n]));
  EXPECT_TRUE(std::isnan(fused[7 * c.n]));
  EXPECT_EQ(fused[c.heads * c.t * c.n], 0.0f);
}

// torch's dynamo export fills a padding mask with finfo.min, which absorbs
// the scores: a row keeping nothing is uniform, the others as under -inf.
// With PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS the kernel gives the unfused bits.
TEST(MaskedSoftmax, UniformEmptyRowsEqualUnfusedFiniteFillBitForBit) {
  const PaddingCase c{3, 2, 4, 13, 4};
  const int64_t rows = c.batch * c.heads * c.t;
  const float scale = 0.25f, min = std::numeric_limits<float>::lowest();
  std::vector<uint8_t> mask = paddingMask(c);
  mask[2 * c.maskRows * c.n + 1] = 0; // a row of entry 2 that is no prefix
  std::vector<float> x = randomScores(rows * c.n, 23);
  std::vector<float> filled(rows * c.n), unfused(rows * c.n);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t *m =
        mask.data() + (r / (c.heads * c.t) * c.maskRows + r % c.maskRows) * c.n;
    for (int64_t k = 0; k < c.n; ++k)
      filled[r * c.n + k] = x[r * c.n + k] * scale + (m[k] ? 0.0f : min);
  }
  pdrt_softmax(nullptr, filled.data(), unfused.data(), rows, c.n, 1, 0);
  std::vector<float> fused(rows * c.n, -1.0f);
  pdrt_masked_softmax(nullptr, x.data(), mask.data(), fused.data(), rows, c.n,
                      c.maskRows, c.batch, scale, 0,
                      PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS |
                          PDRT_SOFTMAX_ZERO_NAN_ROWS);
  EXPECT_EQ(fused, unfused);
  EXPECT_EQ(fused[c.heads * c.t * c.n], 1.0f / c.n); // entry 1 keeps nothing
}

TEST(MaskedSoftmax, GroupsThatDoNotDivideTheRowsAreAContextError) {
  pdrt_ctx ctx;
  std::vector<float> x(6 * 2, 1.0f), y(6 * 2, -1.0f);
  std::vector<uint8_t> mask(4 * 2, 1);
  pdrt_masked_softmax(&ctx, x.data(), mask.data(), y.data(), 6, 2, 1, 4, 1.0f,
                      0, 0);
  ASSERT_TRUE(ctx.failed);
  EXPECT_EQ(ctx.error, "pdrt_masked_softmax: 6 rows do not split into 4 "
                       "groups of 1 mask rows");
  EXPECT_EQ(y, std::vector<float>(6 * 2, -1.0f));
}

} // namespace
