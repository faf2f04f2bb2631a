//===- gelu_avx512.cc - GELU and its gradient on AVX-512 ------------------===//
//
// Built with -mavx512f -mavx512dq (runtime/CMakeLists.txt). Each kernel is
// one Eigen array expression, which Eigen evaluates as one loop of 16-lane
// packets with its vectorised erf, exp and tanh (the rational and
// polynomial approximations TensorFlow's CPU kernels use) kept in
// registers: no staging buffer and no out-of-line call per vector. On this
// project's benchmark machine (Zen 4) that is 0.31 ns per element for the
// forward and 0.61 for the backward, against 0.93 and 1.05 for the AVX2
// kernels (SLEEF's exp inside an A&S erfc) and 0.60 and 0.81 for oneDNN's
// eltwise primitive (bench/kernels/gelu_kernels). Eigen is used in this
// file only: its templates, instantiated with AVX-512 here, must not be
// instantiated by a file built for AVX2, or the linker could keep one copy
// for both.
//
//===----------------------------------------------------------------------===//

#include "gelu_avx512.h"

#include <Eigen/Core>
#include <unsupported/Eigen/SpecialFunctions>

#include <algorithm>

namespace pdrt::gelu::avx512 {

namespace {

using Out = Eigen::Map<Eigen::ArrayXf>;
using In = Eigen::Map<const Eigen::ArrayXf>;

constexpr float kInvSqrt2 = 0.7071067811865476f;    // 1 / sqrt(2)
constexpr float kInvSqrt2Pi = 0.3989422804014327f;  // 1 / sqrt(2 pi)
constexpr float kSqrt2OverPi = 0.7978845608028654f; // sqrt(2 / pi)
constexpr float kCubic = 0.044715f;

/// The tanh form through sigma(2u) = 0.5 (1 + tanh(u)) = 1 / (1 + e),
/// e = exp(-2u), and 0.5 (1 - tanh(u)^2) = 2 e sigma(2u)^2, which keep their
/// relative accuracy in both tails where 1 - tanh(u)^2 and 1 + tanh(u)
/// cancel. u is clamped to +-40 (e stays finite; sigma^2 underflows to 0
/// past it, as the exact value does).
template <typename X> auto tanhFormExp(const X &x) {
  auto u = kSqrt2OverPi * (x + kCubic * x.cube());
  return (-2.0f * u.min(40.0f).max(-40.0f)).exp();
}

} // namespace

void forward(bool approxTanh, const float *xp, float *yp, int64_t n) {
  In x(xp, n);
  Out y(yp, n);
  if (approxTanh)
    y = x / (1.0f + tanhFormExp(x));
  else
    y = 0.5f * x * (1.0f + (kInvSqrt2 * x).erf());
}

void backward(bool approxTanh, const float *dyp, const float *xp, float *dxp,
              int64_t n) {
  In dy(dyp, n), x(xp, n);
  Out dx(dxp, n);
  if (approxTanh) {
    // gelu' = 0.5 (1 + t) + 0.5 x (1 - t^2) u', u' = sqrt(2/pi)(1 + 3c x^2),
    // a chunk at a time so e and sigma are evaluated once per element.
    constexpr int64_t kChunk = 1024;
    Eigen::Array<float, kChunk, 1> e, s;
    for (int64_t at = 0; at < n; at += kChunk) {
      int64_t c = std::min(kChunk, n - at);
      In xs(xp + at, c), dys(dyp + at, c);
      Out dxs(dxp + at, c);
      auto ec = e.head(c);
      auto sc = s.head(c);
      ec = tanhFormExp(xs);
      sc = 1.0f / (1.0f + ec);
      dxs = dys * (sc + 2.0f * xs * ec * sc.square() * kSqrt2OverPi *
                            (1.0f + 3.0f * kCubic * xs.square()));
    }
    return;
  }
  // gelu' = Phi(x) + x phi(x), phi the standard normal density.
  dx = dy * (0.5f * (1.0f + (kInvSqrt2 * x).erf()) +
             kInvSqrt2Pi * x * (-0.5f * x.square()).exp());
}

} // namespace pdrt::gelu::avx512
