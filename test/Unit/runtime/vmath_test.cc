//===- vmath_test.cc - Vectorised math and the kernels built on it -------===//
//
// vmath's exp (vexp.h) and SLEEF-backed log, erf, tanh, sin and cos
// against libm in double on both instruction sets (lengths that leave
// tails of every size), its max, sum and dot, and GELU, its gradient,
// GeGLU, softmax and log-softmax against double-precision references (or
// the kernels they are built from): the kernels compute a vector at a time
// but to float accuracy.
//
//===----------------------------------------------------------------------===//

#include "cpu/vmath.h"
#include "pdrt/pdrt.h"

#include "random_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace {

using pdtest::uniformVector;

/// Checks f(x) against ref(x) (double) within `ulps` units in the last
/// place of the reference, for lengths 1..40 and 1000.
void checkArrayFunction(void (*f)(const float *, float *, int64_t),
                        double (*ref)(double), float lo, float hi, int ulps) {
  for (int64_t n : {1, 3, 7, 8, 9, 15, 16, 17, 31, 40, 1000}) {
    std::vector<float> x = uniformVector(n, lo, hi, (unsigned)n), y(n);
    f(x.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      double want = ref(x[i]);
      double ulp = std::max<double>(
          std::fabs(std::nextafter((float)want, INFINITY) - (float)want),
          1e-38);
      EXPECT_LE(std::fabs(y[i] - want), ulps * ulp)
          << "x = " << x[i] << ", n = " << n;
    }
  }
}

double geluRef(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double geluGradRef(double x) {
  return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))) +
         x * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI);
}

} // namespace

// Both instruction sets: the 16-lane SLEEF forms where the CPU has
// AVX-512, then the 8-lane AVX2 forms.
TEST(VectorMath, MatchesLibmToAnUlpOrTwo) {
  for (bool avx512 : {true, false}) {
    pdrt::vmath::useAvx512(avx512);
    SCOPED_TRACE(pdrt::vmath::hasAvx512() ? "AVX-512" : "AVX2");
    checkArrayFunction(pdrt::vmath::exp, [](double x) { return std::exp(x); },
                       -80, 80, 2);
    checkArrayFunction(pdrt::vmath::log, [](double x) { return std::log(x); },
                       1e-6f, 1e6f, 2);
    checkArrayFunction(pdrt::vmath::erf, [](double x) { return std::erf(x); },
                       -5, 5, 2);
    checkArrayFunction(pdrt::vmath::tanh, [](double x) { return std::tanh(x); },
                       -10, 10, 2);
    checkArrayFunction(pdrt::vmath::sin, [](double x) { return std::sin(x); },
                       -10, 10, 2);
    checkArrayFunction(pdrt::vmath::cos, [](double x) { return std::cos(x); },
                       -10, 10, 2);
  }
  pdrt::vmath::useAvx512(true);
}

TEST(VectorMath, ExpInPlaceAndAtTheEnds) {
  for (bool avx512 : {true, false}) {
    pdrt::vmath::useAvx512(avx512);
    SCOPED_TRACE(pdrt::vmath::hasAvx512() ? "AVX-512" : "AVX2");
    std::vector<float> x = {-INFINITY, -200.0f, -104.5f, 0.0f,    1.0f,
                            88.72f,    88.73f,  100.0f,  INFINITY, NAN};
    pdrt::vmath::exp(x.data(), x.data(), (int64_t)x.size());
    EXPECT_EQ(x[0], 0.0f);
    EXPECT_EQ(x[1], 0.0f);
    EXPECT_EQ(x[2], 0.0f);
    EXPECT_EQ(x[3], 1.0f);
    EXPECT_NEAR(x[4], 2.7182817f, 3e-7f);
    EXPECT_TRUE(std::isfinite(x[5]) && x[5] > 3.3e38f) << x[5];
    EXPECT_TRUE(std::isinf(x[6]));
    EXPECT_TRUE(std::isinf(x[7]));
    EXPECT_TRUE(std::isinf(x[8]));
    EXPECT_TRUE(std::isnan(x[9]));
  }
  pdrt::vmath::useAvx512(true);
}

// exp (vexp.h's, inlined) within 1.01 ULP of e^x in double across the
// floats: every 1021st bit pattern, subnormal results and the overflow
// edge included (an exhaustive sweep of all 2^32 gave at most 1.010 ULP,
// 22 values above 1).
TEST(VectorMath, ExpWithinAnUlpOverTheFloats) {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 1021) {
    uint32_t b = (uint32_t)bits;
    float v;
    std::memcpy(&v, &b, sizeof v);
    if (v > -104.0f && v < 88.72f) // NaN fails both
      x.push_back(v);
  }
  for (bool avx512 : {true, false}) {
    pdrt::vmath::useAvx512(avx512);
    SCOPED_TRACE(pdrt::vmath::hasAvx512() ? "AVX-512" : "AVX2");
    std::vector<float> y(x.size());
    pdrt::vmath::exp(x.data(), y.data(), (int64_t)x.size());
    double worst = 0;
    float worstX = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      double want = std::exp((double)x[i]);
      float rounded = (float)want;
      double ulp = rounded == 0.0f
                       ? std::ldexp(1.0, -149)
                       : std::nextafter(rounded, INFINITY) - (double)rounded;
      double err = std::fabs(y[i] - want) / ulp;
      if (err > worst) {
        worst = err;
        worstX = x[i];
      }
    }
    EXPECT_LE(worst, 1.01) << "at x = " << worstX;
  }
  pdrt::vmath::useAvx512(true);
}

// Lengths that leave every tail after the 32-wide and the 8-wide loops
// (64 and 16 on AVX-512), the maximum in each running lane, the head and
// the tail.
TEST(VectorMath, MaxOfEveryLength) {
  for (int64_t n = 1; n <= 100; ++n) {
    for (int64_t at : {int64_t(0), n / 3, n / 2, n - 1}) {
      std::vector<float> x = uniformVector(n, -3, 3, (unsigned)(100 + n));
      x[at] = 7.5f;
      EXPECT_EQ(pdrt::vmath::max(x.data(), n), 7.5f) << n << " " << at;
    }
  }
}

// sum and dot in double against a long double reference, for lengths that
// leave tails of every size; trailing zeros (a causal row's masked tail)
// leave the bits unchanged.
TEST(VectorMath, SumAndDotInDoubleAndBlindToTrailingZeros) {
  for (int64_t n = 1; n <= 70; ++n) {
    std::vector<float> a = uniformVector(n, -3, 3, (unsigned)(200 + n));
    std::vector<float> b = uniformVector(n, -3, 3, (unsigned)(300 + n));
    long double sum = 0, dot = 0;
    for (int64_t i = 0; i < n; ++i) {
      sum += a[i];
      dot += (long double)a[i] * b[i];
    }
    EXPECT_NEAR(pdrt::vmath::sum(a.data(), n), (double)sum, 1e-12) << n;
    EXPECT_NEAR(pdrt::vmath::dot(a.data(), b.data(), n), (double)dot, 1e-12)
        << n;
    std::vector<float> az(a), bz(b);
    az.resize(n + 37, 0.0f);
    bz.resize(n + 37, 0.0f);
    EXPECT_EQ(pdrt::vmath::sum(az.data(), n + 37), pdrt::vmath::sum(a.data(), n));
    EXPECT_EQ(pdrt::vmath::dot(az.data(), bz.data(), n + 37),
              pdrt::vmath::dot(a.data(), b.data(), n));
  }
}

// The AVX-512 forms of max, sum, dot, scaledMax, scaleInDouble and exp
// (16-float, 8-double vectors) give the AVX2 forms' results bit for bit:
// the same 16 lanes, in the same order; lengths past the 64-wide loop
// with every tail.
TEST(VectorMath, RowFunctionsTheSameBitsOnBothIsas) {
  pdrt::vmath::useAvx512(true);
  if (!pdrt::vmath::hasAvx512())
    GTEST_SKIP() << "no AVX-512F/DQ on this CPU";
  for (int64_t n = 1; n <= 200; n += (n < 70 ? 1 : 13)) {
    std::vector<float> a = uniformVector(n, -3, 3, (unsigned)(400 + n));
    std::vector<float> b = uniformVector(n, -3, 3, (unsigned)(500 + n));
    float max512 = pdrt::vmath::max(a.data(), n);
    double sum512 = pdrt::vmath::sum(a.data(), n);
    double dot512 = pdrt::vmath::dot(a.data(), b.data(), n);
    std::vector<float> y512(n), s512(a), y2(n), s2(a), e512(n), e2(n);
    pdrt::vmath::exp(a.data(), e512.data(), n);
    float scaledMax512 = pdrt::vmath::scaledMax(a.data(), 0.37f, y512.data(), n);
    pdrt::vmath::scaleInDouble(s512.data(), n, 1.0 / 3.0);
    pdrt::vmath::useAvx512(false);
    EXPECT_EQ(max512, pdrt::vmath::max(a.data(), n)) << n;
    EXPECT_EQ(sum512, pdrt::vmath::sum(a.data(), n)) << n;
    EXPECT_EQ(dot512, pdrt::vmath::dot(a.data(), b.data(), n)) << n;
    EXPECT_EQ(scaledMax512, pdrt::vmath::scaledMax(a.data(), 0.37f, y2.data(), n))
        << n;
    EXPECT_EQ(y512, y2) << n;
    pdrt::vmath::scaleInDouble(s2.data(), n, 1.0 / 3.0);
    EXPECT_EQ(s512, s2) << n;
    pdrt::vmath::exp(a.data(), e2.data(), n);
    EXPECT_EQ(e512, e2) << n;
    pdrt::vmath::useAvx512(true);
  }
}

// The fused exp and sum: bit for bit the two passes it replaces (exp of
// the shifted row, then sum), on both instruction sets, for lengths that
// leave tails of every size; stored in place, elsewhere, or not at all.
TEST(VectorMath, ExpSumIsExpThenSumBitForBit) {
  for (bool avx512 : {true, false}) {
    pdrt::vmath::useAvx512(avx512);
    SCOPED_TRACE(pdrt::vmath::hasAvx512() ? "AVX-512" : "AVX2");
    for (int64_t n = 1; n <= 70; ++n) {
      std::vector<float> x = uniformVector(n, -9, 3, (unsigned)(400 + n));
      float shift = 1.25f;
      std::vector<float> want(n);
      for (int64_t i = 0; i < n; ++i)
        want[i] = x[i] - shift;
      pdrt::vmath::exp(want.data(), want.data(), n);
      double wantSum = pdrt::vmath::sum(want.data(), n);
      std::vector<float> y(n + 1, -1.0f), inPlace(x);
      EXPECT_EQ(pdrt::vmath::expSum(x.data(), shift, y.data(), n), wantSum) << n;
      EXPECT_EQ(std::vector<float>(y.begin(), y.begin() + n), want) << n;
      EXPECT_EQ(y[n], -1.0f) << n; // nothing past the row
      EXPECT_EQ(pdrt::vmath::expSum(inPlace.data(), shift, inPlace.data(), n),
                wantSum) << n;
      EXPECT_EQ(inPlace, want) << n;
      EXPECT_EQ(pdrt::vmath::expSum(x.data(), shift, nullptr, n), wantSum) << n;
    }
  }
  pdrt::vmath::useAvx512(true);
}

double geluTanhRef(double x) {
  return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
double geluTanhGradRef(double x) {
  double t = std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x));
  double du = std::sqrt(2.0 / M_PI) * (1.0 + 3.0 * 0.044715 * x * x);
  return 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du;
}

/// GELU and its gradient (erf or tanh form) on the AVX-512 kernels
/// (gelu_avx512.cc, where the CPU has them) or the AVX2 ones.
class Gelu : public ::testing::TestWithParam<std::tuple<bool, bool>> {
protected:
  void SetUp() override {
    auto [avx512, approxTanh] = GetParam();
    if (avx512) {
      pdrt::vmath::useAvx512(true);
      if (!pdrt::vmath::hasAvx512())
        GTEST_SKIP() << "no AVX-512F/DQ on this CPU";
    } else {
      pdrt::vmath::useAvx512(false);
    }
  }
  void TearDown() override { pdrt::vmath::useAvx512(true); }
};

// Both forms keep an absolute error near 1.5e-7 in Phi (A&S's erfc): y
// within that of |x| times it, the gradient likewise; lengths 1..40 leave
// tails of every size.
TEST_P(Gelu, AndItsGradientToFloatAccuracy) {
  bool approxTanh = std::get<1>(GetParam());
  auto ref = approxTanh ? geluTanhRef : geluRef;
  auto gradRef = approxTanh ? geluTanhGradRef : geluGradRef;
  std::vector<int64_t> lengths = {3001};
  for (int64_t n = 1; n <= 40; ++n)
    lengths.push_back(n);
  for (int64_t n : lengths) {
    std::vector<float> x = uniformVector(n, -8, 8, (unsigned)(7 + n)), y(n),
                       dx(n);
    std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(70 + n));
    pdrt_gelu(nullptr, approxTanh, x.data(), y.data(), n);
    pdrt_gelu_grad(nullptr, approxTanh, dy.data(), x.data(), dx.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      double tol = 4e-7 * std::max(1.0, std::fabs((double)x[i]));
      ASSERT_NEAR(y[i], ref(x[i]), tol) << "n=" << n << " x=" << x[i];
      ASSERT_NEAR(dx[i], dy[i] * gradRef(x[i]), 2 * tol)
          << "n=" << n << " x=" << x[i];
    }
  }
}

// Far out, GELU is x or 0 and its gradient 1 or 0, up to the largest
// floats (where the tanh form's x^3 overflows and its exp is clamped, and
// the erf form's x^2 / 2 leaves the floats); NaN stays NaN. Nine values,
// so the last goes through the tail vector.
TEST_P(Gelu, IsXOrZeroFarOutUpToTheLargestFloats) {
  bool approxTanh = std::get<1>(GetParam());
  const float big = std::numeric_limits<float>::max();
  std::vector<float> x = {-big, -1e30f, -1e6f, -40.0f, 40.0f,
                          1e6f, 1e30f,  big,   std::nanf("")};
  size_t n = x.size();
  std::vector<float> y(n), dx(n), dy(n, 1.0f);
  pdrt_gelu(nullptr, approxTanh, x.data(), y.data(), (int64_t)n);
  pdrt_gelu_grad(nullptr, approxTanh, dy.data(), x.data(), dx.data(),
                 (int64_t)n);
  for (size_t i = 0; i + 1 < n; ++i) {
    if (x[i] > 0) {
      EXPECT_EQ(y[i], x[i]) << "x=" << x[i];
      EXPECT_EQ(dx[i], 1.0f) << "x=" << x[i];
    } else {
      EXPECT_LE(std::fabs(y[i]), 1e-20f) << "x=" << x[i];
      EXPECT_LE(std::fabs(dx[i]), 1e-20f) << "x=" << x[i] << " dx=" << dx[i];
    }
  }
  EXPECT_TRUE(std::isnan(y[n - 1]));
  EXPECT_TRUE(std::isnan(dx[n - 1]));
}

// One template (gelu_lanes.h) on 16 and 8 lanes: the same bits for GELU,
// its gradient, the bias forms and GeGLU, lengths leaving every tail of both
// widths, values past both forms' clamps (|x| about 8.5 for the tanh
// form's exponent, 13.2 for the erf form's underflow) (AVX-512 CPUs).
TEST(GeluOnBothIsas, TheSameBits) {
  pdrt::vmath::useAvx512(true);
  if (!pdrt::vmath::hasAvx512())
    GTEST_SKIP() << "no AVX-512F/DQ on this CPU";
  for (int approxTanh : {0, 1}) {
    for (int64_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
      std::vector<float> x = uniformVector(n, -16, 16, (unsigned)(600 + n));
      std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(700 + n));
      std::vector<float> bias = uniformVector(n, -1, 1, (unsigned)(800 + n));
      auto run = [&](bool avx512) {
        pdrt::vmath::useAvx512(avx512);
        std::vector<float> y(n), dx(n), yb(n), dxb(n), db(n);
        pdrt_gelu(nullptr, approxTanh, x.data(), y.data(), n);
        pdrt_gelu_grad(nullptr, approxTanh, dy.data(), x.data(), dx.data(), n);
        pdrt_gelu_bias(nullptr, approxTanh, x.data(), bias.data(), yb.data(), 1,
                       n);
        pdrt_gelu_grad_bias(nullptr, approxTanh, dy.data(), x.data(),
                            bias.data(), dxb.data(), db.data(), 1, n);
        std::vector<float> gy(n), dgate(n), dup(n);
        pdrt_geglu(nullptr, approxTanh, x.data(), bias.data(), gy.data(), n);
        pdrt_geglu_grad(nullptr, approxTanh, dy.data(), x.data(), bias.data(),
                        dgate.data(), dup.data(), n);
        return std::vector<std::vector<float>>{y,  dx, yb,    dxb,
                                               db, gy, dgate, dup};
      };
      EXPECT_EQ(run(true), run(false)) << "n=" << n << " tanh=" << approxTanh;
    }
  }
  pdrt::vmath::useAvx512(true);
}

// The fused bias gradient (pd-fuse-bias-gradients): dx bit for bit that of
// pdrt_gelu_grad over the whole tensor, db that of pdrt_sum_to of dx to the
// last dimension; rows whose width leaves a tail, and the benchmark GPT's.
TEST_P(Gelu, GradientWithBiasGradientIsTheUnfusedOpsBitForBit) {
  bool approxTanh = std::get<1>(GetParam());
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 45}, {64, 1024}, {1, 1}}) {
    int64_t n = rows * cols;
    std::vector<float> x = uniformVector(n, -6, 6, (unsigned)(11 + n));
    std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(12 + n));
    std::vector<float> dx(n), want(n), db(cols, 5.0f), wantDb(cols);
    pdrt_gelu_grad(nullptr, approxTanh, dy.data(), x.data(), want.data(), n);
    const int64_t toBias[] = {2, rows, cols, 0, 1}; // [rows, cols] -> [cols]
    pdrt_sum_to(nullptr, want.data(), wantDb.data(), cols, toBias);
    pdrt_gelu_grad_bias(nullptr, approxTanh, dy.data(), x.data(),
                        /*bias=*/nullptr, dx.data(), db.data(), rows, cols);
    EXPECT_EQ(dx, want) << rows << " x " << cols;
    EXPECT_EQ(db, wantDb) << rows << " x " << cols;
  }
}

// A bias moved into the GELU (pd-fuse-bias-into-consumers): forward and
// gradient bit for bit those of pdrt_gelu / pdrt_gelu_grad on x + bias
// added beforehand, with and without the bias gradient; rows past one
// staging chunk (2500 columns) and rows with a tail.
TEST_P(Gelu, WithInputBiasIsTheKernelOnTheSumBitForBit) {
  bool approxTanh = std::get<1>(GetParam());
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 45}, {3, 2500}, {1, 1}}) {
    int64_t n = rows * cols;
    std::vector<float> x = uniformVector(n, -6, 6, (unsigned)(21 + n));
    std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(22 + n));
    std::vector<float> bias = uniformVector(cols, -1, 1, (unsigned)(23 + cols));
    std::vector<float> z(n);
    for (int64_t i = 0; i < n; ++i)
      z[i] = x[i] + bias[i % cols];
    std::vector<float> y(n), wantY(n), dx(n), wantDx(n), db(cols, 5.0f),
        wantDb(cols);
    pdrt_gelu(nullptr, approxTanh, z.data(), wantY.data(), n);
    pdrt_gelu_bias(nullptr, approxTanh, x.data(), bias.data(), y.data(), rows,
                   cols);
    EXPECT_EQ(y, wantY) << rows << " x " << cols;
    pdrt_gelu_grad(nullptr, approxTanh, dy.data(), z.data(), wantDx.data(), n);
    const int64_t toBias[] = {2, rows, cols, 0, 1}; // [rows, cols] -> [cols]
    pdrt_sum_to(nullptr, wantDx.data(), wantDb.data(), cols, toBias);
    pdrt_gelu_grad_bias(nullptr, approxTanh, dy.data(), x.data(), bias.data(),
                        dx.data(), /*db=*/nullptr, rows, cols);
    EXPECT_EQ(dx, wantDx) << rows << " x " << cols;
    std::fill(dx.begin(), dx.end(), 0.0f);
    pdrt_gelu_grad_bias(nullptr, approxTanh, dy.data(), x.data(), bias.data(),
                        dx.data(), db.data(), rows, cols);
    EXPECT_EQ(dx, wantDx) << rows << " x " << cols;
    EXPECT_EQ(db, wantDb) << rows << " x " << cols;
  }
}

// The gradient written over dy (pd-allocate-buffers gives dx dy's slot
// when dy dies at the GELU gradient: getOverwritableOperand), with and
// without the moved bias and its gradient, at offsets off a 64-byte
// boundary (the staged path) too: bit for bit the out-of-place kernel.
TEST_P(Gelu, GradientOverItsIncomingGradientBitForBit) {
  bool approxTanh = std::get<1>(GetParam());
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{37, 45}, {4, 1024}}) {
    int64_t n = rows * cols;
    std::vector<float> x = uniformVector(n, -6, 6, (unsigned)(31 + n));
    std::vector<float> bias = uniformVector(cols, -1, 1, (unsigned)(32 + cols));
    for (int64_t at : {0, 3}) {
      std::vector<float> dy = uniformVector(n + at, -2, 2, (unsigned)(33 + n));
      std::vector<float> want(n + at), db(cols), wantDb(cols);
      pdrt_gelu_grad(nullptr, approxTanh, dy.data() + at, x.data(),
                     want.data() + at, n);
      std::vector<float> inPlace = dy;
      pdrt_gelu_grad(nullptr, approxTanh, inPlace.data() + at, x.data(),
                     inPlace.data() + at, n);
      EXPECT_TRUE(std::equal(want.begin() + at, want.end(), inPlace.begin() + at))
          << rows << " x " << cols << " at " << at;
      pdrt_gelu_grad_bias(nullptr, approxTanh, dy.data() + at, x.data(),
                          bias.data(), want.data() + at, wantDb.data(), rows,
                          cols);
      inPlace = dy;
      pdrt_gelu_grad_bias(nullptr, approxTanh, inPlace.data() + at, x.data(),
                          bias.data(), inPlace.data() + at, db.data(), rows,
                          cols);
      EXPECT_TRUE(std::equal(want.begin() + at, want.end(), inPlace.begin() + at))
          << rows << " x " << cols << " at " << at << " with bias";
      EXPECT_EQ(db, wantDb) << rows << " x " << cols << " at " << at;
    }
  }
}

// GeGLU (pd.geglu): gelu(gate) * up bit for bit pdrt_gelu's bits times
// up; its gradient dup = dy * gelu(gate) likewise, and dgate that of
// pdrt_gelu_grad on dy * up, also written over dy; lengths leaving every
// tail.
TEST_P(Gelu, GatedIsTheGeluKernelTimesUpBitForBit) {
  bool approxTanh = std::get<1>(GetParam());
  for (int64_t n : {1, 7, 16, 45, 1000}) {
    std::vector<float> gate = uniformVector(n, -8, 8, (unsigned)(41 + n));
    std::vector<float> up = uniformVector(n, -2, 2, (unsigned)(42 + n));
    std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(43 + n));
    std::vector<float> g(n), wantY(n), dyUp(n), wantDgate(n), wantDup(n);
    pdrt_gelu(nullptr, approxTanh, gate.data(), g.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      wantY[i] = g[i] * up[i];
      wantDup[i] = dy[i] * g[i];
      dyUp[i] = dy[i] * up[i];
    }
    pdrt_gelu_grad(nullptr, approxTanh, dyUp.data(), gate.data(),
                   wantDgate.data(), n);
    std::vector<float> y(n), dgate(n), dup(n);
    pdrt_geglu(nullptr, approxTanh, gate.data(), up.data(), y.data(), n);
    pdrt_geglu_grad(nullptr, approxTanh, dy.data(), gate.data(), up.data(),
                    dgate.data(), dup.data(), n);
    EXPECT_EQ(y, wantY) << "n=" << n;
    EXPECT_EQ(dgate, wantDgate) << "n=" << n;
    EXPECT_EQ(dup, wantDup) << "n=" << n;
    std::vector<float> inPlace = dy;
    pdrt_geglu_grad(nullptr, approxTanh, inPlace.data(), gate.data(), up.data(),
                    inPlace.data(), dup.data(), n);
    EXPECT_EQ(inPlace, wantDgate) << "n=" << n << " over dy";
  }
}

INSTANTIATE_TEST_SUITE_P(
    IsaAndForm, Gelu, ::testing::Combine(::testing::Bool(), ::testing::Bool()),
    [](const ::testing::TestParamInfo<std::tuple<bool, bool>> &info) {
      return std::string(std::get<0>(info.param) ? "Avx512" : "Avx2") +
             (std::get<1>(info.param) ? "Tanh" : "Erf");
    });

TEST(VectorMath, SoftmaxRowsMatchDouble) {
  const int64_t rows = 5, dim = 37;
  std::vector<float> x = uniformVector(rows * dim, -20, 20, 11), y(x.size()),
                     logy(x.size());
  pdrt_softmax(nullptr, x.data(), y.data(), rows, dim, 1, 0);
  pdrt_softmax(nullptr, x.data(), logy.data(), rows, dim, 1, 1);
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t k = 0; k < dim; ++k)
      mx = std::max(mx, (double)x[r * dim + k]);
    for (int64_t k = 0; k < dim; ++k)
      sum += std::exp(x[r * dim + k] - mx);
    for (int64_t k = 0; k < dim; ++k) {
      double lp = x[r * dim + k] - mx - std::log(sum);
      EXPECT_NEAR(logy[r * dim + k], lp, 2e-5 * std::max(1.0, std::fabs(lp)));
      // x - max is rounded to float: a relative error of |lp| ulps.
      double rel = 4e-7 * std::max(1.0, std::fabs(lp));
      EXPECT_NEAR(y[r * dim + k], std::exp(lp), rel * std::exp(lp) + 1e-37);
    }
  }
}
