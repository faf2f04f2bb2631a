//===- silu_test.cc - Sigmoid, SiLU and SwiGLU kernels on both ISAs -------===//
//
// pdrt_unary PDRT_SIGMOID / PDRT_SILU, pdrt_unary_grad PDRT_SILU,
// pdrt_swiglu and pdrt_swiglu_grad (silu_lanes.h's kernels) on the
// AVX-512 kernels (silu_avx512.cc, where the CPU has them) and the AVX2
// ones: against double-precision references, far out where exp(-x)
// overflows or underflows and on NaN, the same bits wherever a call
// starts, and the same bits on both ISAs.
//
//===----------------------------------------------------------------------===//

#include "cpu/vmath.h"
#include "pdrt/pdrt.h"

#include "isa_fixture.h"
#include "random_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using pdtest::uniformVector;

double sigmoidRef(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double siluGradRef(double x) {
  double s = sigmoidRef(x);
  return s * (1.0 + x * (1.0 - s));
}

/// |got - want| in units in the last place of the float nearest want.
double ulpError(float got, double want) {
  float w = (float)want;
  double ulp = std::fabs((double)std::nextafter(w, INFINITY) - (double)w);
  return std::fabs((double)got - want) / ulp;
}

/// The bits of v (NaNs compare equal to themselves).
std::vector<uint32_t> bitsOf(const std::vector<float> &v) {
  std::vector<uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

/// Every output of the five kernels on x (gate), up and dy.
struct Outputs {
  std::vector<float> sigmoid, silu, dx, swiglu, dgate, dup;
};

Outputs runAll(const std::vector<float> &x, const std::vector<float> &up,
               const std::vector<float> &dy) {
  const int64_t n = x.size();
  Outputs o{std::vector<float>(n), std::vector<float>(n),
            std::vector<float>(n), std::vector<float>(n),
            std::vector<float>(n), std::vector<float>(n)};
  std::vector<float> junk(n, NAN); // pdrt_unary_grad SILU reads only x
  pdrt_unary(nullptr, PDRT_SIGMOID, 0.0f, x.data(), o.sigmoid.data(), n);
  pdrt_unary(nullptr, PDRT_SILU, 0.0f, x.data(), o.silu.data(), n);
  pdrt_unary_grad(nullptr, PDRT_SILU, 0.0f, dy.data(), x.data(), junk.data(),
                  o.dx.data(), n);
  pdrt_swiglu(nullptr, x.data(), up.data(), o.swiglu.data(), n);
  pdrt_swiglu_grad(nullptr, dy.data(), x.data(), up.data(), o.dgate.data(),
                   o.dup.data(), n);
  return o;
}

/// The kernels on the AVX-512 forms (where the CPU has them) or the AVX2
/// ones.
class Silu : public pdtest::OnIsa {};

// sigmoid and silu within 3 ULP (2.5 and 2.9 over every float of
// magnitude 1e-30 to 87), products with up or dy within a relative 5e-7,
// silu' (its 1 - s cancels for x above 0) within 3e-7 max(1, |x|), all
// give or take 1e-37 where a product leaves the normal floats; swiglu is
// silu times up and dup dy times silu bit for bit. Lengths 1..40 leave
// tails of every size on both widths.
TEST_P(Silu, KernelsToFloatAccuracy) {
  std::vector<int64_t> lengths = {3001};
  for (int64_t n = 1; n <= 40; ++n)
    lengths.push_back(n);
  for (float range : {20.0f, 87.0f}) {
    for (int64_t n : lengths) {
      SCOPED_TRACE("n=" + std::to_string(n) + " range " +
                   std::to_string(range));
      std::vector<float> x = uniformVector(n, -range, range, (unsigned)(5 + n));
      std::vector<float> up = uniformVector(n, -2, 2, (unsigned)(50 + n));
      std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(500 + n));
      Outputs o = runAll(x, up, dy);
      for (int64_t i = 0; i < n; ++i) {
        const double g = x[i], s = sigmoidRef(g), d = siluGradRef(g);
        ASSERT_LE(ulpError(o.sigmoid[i], s), 3.0) << "sigmoid(" << g << ")";
        ASSERT_LE(ulpError(o.silu[i], g * s), 3.0) << "silu(" << g << ")";
        ASSERT_NEAR(o.swiglu[i], g * s * up[i],
                    5e-7 * std::fabs(g * s * up[i]) + 1e-37)
            << "swiglu(" << g << ")";
        ASSERT_NEAR(o.dup[i], dy[i] * g * s,
                    5e-7 * std::fabs(dy[i] * g * s) + 1e-37)
            << "dup at " << g;
        const double tol = 3e-7 * std::max(1.0, std::fabs(g));
        ASSERT_NEAR(o.dx[i], dy[i] * d, tol * std::fabs(dy[i]) + 1e-37)
            << "silu'(" << g << ")";
        ASSERT_NEAR(o.dgate[i], (double)dy[i] * up[i] * d,
                    tol * std::fabs((double)dy[i] * up[i]) + 1e-37)
            << "dgate at " << g;
        ASSERT_EQ(o.swiglu[i], o.silu[i] * up[i]) << "element " << i;
        ASSERT_EQ(o.dup[i], dy[i] * o.silu[i]) << "element " << i;
      }
    }
  }
}

// Past x = -88.7 exp(-x) overflows: sigmoid, silu and both gradients are 0
// or -0 there (silu(-90) is not NaN), up to the largest floats; far above 0
// exp(-x) underflows and they are 1, x, 1 (times up, dy); NaN stays NaN in
// every output. 13 values: a tail on both widths.
TEST_P(Silu, ZeroOrXFarOutAndNaNPropagates) {
  const float big = std::numeric_limits<float>::max();
  std::vector<float> x = {-big,   -1e30f, -1e6f,        -200.0f, -90.0f,
                          -88.8f, 88.8f,  90.0f,        200.0f,  1e6f,
                          1e30f,  big,    std::nanf("")};
  const size_t n = x.size();
  std::vector<float> up(n, 2.0f), dy(n, 1.0f);
  Outputs o = runAll(x, up, dy);
  for (size_t i = 0; i + 1 < n; ++i) {
    SCOPED_TRACE("x=" + std::to_string(x[i]));
    if (x[i] > 0) {
      EXPECT_EQ(o.sigmoid[i], 1.0f);
      EXPECT_EQ(o.silu[i], x[i]);
      EXPECT_EQ(o.dx[i], 1.0f);
      EXPECT_EQ(o.swiglu[i], x[i] * 2.0f);
      EXPECT_EQ(o.dgate[i], 2.0f);
      EXPECT_EQ(o.dup[i], x[i]);
    } else {
      for (float v : {o.sigmoid[i], o.silu[i], o.dx[i], o.swiglu[i], o.dgate[i],
                      o.dup[i]})
        EXPECT_EQ(v, 0.0f); // 0 or -0, not NaN
    }
  }
  for (float v : {o.sigmoid[n - 1], o.silu[n - 1], o.dx[n - 1], o.swiglu[n - 1],
                  o.dgate[n - 1], o.dup[n - 1]})
    EXPECT_TRUE(std::isnan(v));
}

// Every element goes through the same vector code: a call on [at, n) gives
// the bits of the call on [0, n), and the gradients written over dy (dgate
// of pdrt_swiglu_grad, dx of pdrt_unary_grad) those written elsewhere.
TEST_P(Silu, BitsDoNotDependOnWhereACallStarts) {
  const int64_t n = 301;
  std::vector<float> x = uniformVector(n, -30, 30, 41),
                     up = uniformVector(n, -2, 2, 42),
                     dy = uniformVector(n, -2, 2, 43);
  Outputs whole = runAll(x, up, dy);
  auto from = [](const std::vector<float> &v, int64_t at) {
    return std::vector<float>(v.begin() + at, v.end());
  };
  for (int64_t at : {1, 3, 5, 8, 13, 16, 300}) {
    SCOPED_TRACE("at " + std::to_string(at));
    Outputs part = runAll(from(x, at), from(up, at), from(dy, at));
    EXPECT_EQ(part.sigmoid, from(whole.sigmoid, at));
    EXPECT_EQ(part.silu, from(whole.silu, at));
    EXPECT_EQ(part.dx, from(whole.dx, at));
    EXPECT_EQ(part.swiglu, from(whole.swiglu, at));
    EXPECT_EQ(part.dgate, from(whole.dgate, at));
    EXPECT_EQ(part.dup, from(whole.dup, at));
    std::vector<float> inPlace = dy, dup(n);
    pdrt_swiglu_grad(nullptr, inPlace.data() + at, x.data() + at,
                     up.data() + at, inPlace.data() + at, dup.data() + at,
                     n - at);
    EXPECT_EQ(from(inPlace, at), from(whole.dgate, at));
    inPlace = dy;
    pdrt_unary_grad(nullptr, PDRT_SILU, 0.0f, inPlace.data() + at,
                    x.data() + at, nullptr, inPlace.data() + at, n - at);
    EXPECT_EQ(from(inPlace, at), from(whole.dx, at));
  }
}

INSTANTIATE_TEST_SUITE_P(Isa, Silu, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return std::string(info.param ? "Avx512" : "Avx2");
                         });

// One template (silu_lanes.h) on 16 and 8 lanes: the same bits for all
// five kernels, lengths leaving every tail of both widths, values past
// exp's overflow and underflow and NaN (AVX-512 CPUs).
TEST(SiluOnBothIsas, TheSameBits) {
  pdrt::vmath::useAvx512(true);
  if (!pdrt::vmath::hasAvx512())
    GTEST_SKIP() << "no AVX-512F/DQ on this CPU";
  for (int64_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
    std::vector<float> x = uniformVector(n, -100, 100, (unsigned)(900 + n));
    std::vector<float> up = uniformVector(n, -2, 2, (unsigned)(901 + n));
    std::vector<float> dy = uniformVector(n, -2, 2, (unsigned)(902 + n));
    x[n / 2] = std::nanf("");
    x[n - 1] = -std::numeric_limits<float>::max();
    auto run = [&](bool avx512) {
      pdrt::vmath::useAvx512(avx512);
      Outputs o = runAll(x, up, dy);
      return std::vector<std::vector<uint32_t>>{
          bitsOf(o.sigmoid), bitsOf(o.silu),  bitsOf(o.dx),
          bitsOf(o.swiglu),  bitsOf(o.dgate), bitsOf(o.dup)};
    };
    EXPECT_EQ(run(true), run(false)) << "n=" << n;
  }
  pdrt::vmath::useAvx512(true);
}

} // namespace
