// Micro-benchmark: the non-GEMM kernels of a Llama block on the CPU, over
// bench/hf_vs_torch.py's Llama (hidden 256, MLP 1024, 8 x 128 tokens),
// single thread, warm caches, ns per element:
//   silu           SiLU and its gradient over the MLP's gate (1024 x 1024):
//     pdrt fused     pdrt_unary / pdrt_unary_grad PDRT_SILU (pd.silu), in
//                    registers (silu_lanes.h)
//     pdrt staged    the same formulas as pdrt's kernels staged them
//                    until 2026-11-27 (copied below): -x a chunk at a time
//                    into an L1 buffer, vmath::exp over it, then a loop
//                    of divisions
//     pdrt unfused   what the exported x * Sigmoid(x) ran before
//                    pd-fuse-decomposed-ops made it pd.silu: sigmoid, mul;
//                    backward mul, sigmoid's gradient, dy s + that
//     onednn         oneDNN's eltwise_swish (alpha 1), forward_training and
//                    backward from the source
//   swiglu         the gated MLP's silu(gate) * up and its gradient:
//     pdrt fused     pdrt_swiglu / pdrt_swiglu_grad (pd.swiglu), in
//                    registers (silu_lanes.h)
//     pdrt staged    the same, staged as silu's "pdrt staged"
//     pdrt silu, mul pd.silu and pd.mul, as before the gate was fused;
//                    backward the two products' gradients (dy up, dy h)
//                    and pd.silu's (the unary gradient)
//     onednn         eltwise_swish into h and binary_mul by up;
//                    backward swish again into h, binary_mul dy h (dup)
//                    and dy up, eltwise_swish backward from the gate
//   rms_norm       RMS norm and its gradient over 1024 rows of 256:
//     pdrt           pdrt_rms_norm / pdrt_rms_norm_grad (row sums in
//                    vmath::dot's lanes)
//     scalar         the same formulas with the sums in index order, one
//                    double chain (pdrt's kernels before 2026-11-27)
// Build and run: bench/kernels/run.sh llama_mlp
// On a 2-core AMD EPYC Zen 3 (AVX2 + FMA, 2026-11-27, eleven runs on a
// shared host), forward / backward: silu: pdrt fused 0.68-0.85 /
// 0.82-1.05, pdrt staged 0.84-1.45 / 1.07-1.58, onednn 0.72-1.12 /
// 1.01-1.63; swiglu: pdrt fused 0.74-1.00 / 1.22-1.47, pdrt staged
// 1.06-1.43 / 1.43-2.15, onednn 1.50-1.86 / 3.28-4.50.
#include <dnnl.hpp>

#include "bench_timing.h"
#include "cpu/vmath.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"

#include <algorithm>
#include <cstdio>
#include <random>

namespace {

using Floats = AlignedVector;

Floats normal(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Floats v(n);
  for (float &f : v)
    f = dist(gen);
  return v;
}

void report(const char *name, double fwd, double bwd, int64_t n) {
  std::printf("%-14s %10.3f %10.3f\n", name, fwd / n * 1e9, bwd / n * 1e9);
}

// --- pdrt's logistic kernels as they were staged (the "pdrt staged" rows),
// optimised as the runtime builds nn.cc (-O3: at run.sh's -O2 GCC leaves
// the negation and division loops scalar, up to twice as slow).
#pragma GCC push_options
#pragma GCC optimize("O3")

/// f(at, c, e) over x[0, n) a chunk at a time: elements [at, at + c),
/// e[i] = exp(-x[at + i]) in an L1 buffer.
template <typename F> void overNegExpChunks(const float *x, int64_t n, F f) {
  float e[pdrt::vmath::kChunk];
  for (int64_t at = 0; at < n; at += pdrt::vmath::kChunk) {
    const int64_t c = std::min(pdrt::vmath::kChunk, n - at);
    for (int64_t i = 0; i < c; ++i)
      e[i] = -x[at + i];
    pdrt::vmath::exp(e, e, c);
    f(at, c, static_cast<const float *>(e));
  }
}

inline float stagedSiluDerivative(float x, float s) {
  return s * (1.0f + x * (1.0f - s));
}

void stagedSilu(const float *x, float *y, int64_t n) {
  overNegExpChunks(x, n, [&](int64_t at, int64_t c, const float *e) {
    for (int64_t i = 0; i < c; ++i)
      y[at + i] = x[at + i] / (1.0f + e[i]);
  });
}

void stagedSiluGrad(const float *dy, const float *x, float *dx, int64_t n) {
  overNegExpChunks(x, n, [&](int64_t at, int64_t c, const float *e) {
    for (int64_t i = at; i < at + c; ++i) {
      const float s = 1.0f / (1.0f + e[i - at]);
      dx[i] = dy[i] * stagedSiluDerivative(x[i], s);
    }
  });
}

void stagedSwiglu(const float *gate, const float *up, float *y, int64_t n) {
  overNegExpChunks(gate, n, [&](int64_t at, int64_t c, const float *e) {
    for (int64_t i = at; i < at + c; ++i)
      y[i] = gate[i] / (1.0f + e[i - at]) * up[i];
  });
}

void stagedSwigluGrad(const float *dy, const float *gate, const float *up,
                      float *dgate, float *dup, int64_t n) {
  overNegExpChunks(gate, n, [&](int64_t at, int64_t c, const float *e) {
    for (int64_t i = at; i < at + c; ++i) {
      const float ei = e[i - at], s = 1.0f / (1.0f + ei), d = dy[i];
      const float g = gate[i];
      dup[i] = d * (g / (1.0f + ei));
      dgate[i] = d * up[i] * stagedSiluDerivative(g, s);
    }
  });
}

#pragma GCC pop_options

/// x * sigmoid(x) as pd.sigmoid and pd.mul ran it, and its gradient as the
/// three kernels autodiff made of them.
void unfusedSilu(int64_t n, const Floats &x, const Floats &dy, Floats &s,
                 Floats &y, Floats &t, Floats &dx, int reps) {
  const int64_t desc[] = {1, n, 1, 1};
  double f = seconds([&] {
    pdrt_unary(nullptr, PDRT_SIGMOID, 0.0f, x.data(), s.data(), n);
    pdrt_binary(nullptr, PDRT_MUL, x.data(), s.data(), y.data(), desc);
  }, reps);
  double b = seconds([&] {
    pdrt_binary(nullptr, PDRT_MUL, dy.data(), x.data(), t.data(), desc);
    pdrt_unary_grad(nullptr, PDRT_SIGMOID, 0.0f, t.data(), x.data(), s.data(),
                    t.data(), n);
    for (int64_t i = 0; i < n; ++i)
      dx[i] = dy[i] * s[i] + t[i];
  }, reps);
  report("pdrt unfused", f, b, n);
}

void oneDnnSwish(int64_t n, Floats &x, Floats &dy, Floats &y, Floats &dx,
                 int reps) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
  memory mx(md, eng, x.data()), my(md, eng, y.data()),
      mdy(md, eng, dy.data()), mdx(md, eng, dx.data());
  auto alg = algorithm::eltwise_swish;
  auto fpd = eltwise_forward::primitive_desc(
      eltwise_forward::desc(prop_kind::forward_training, alg, md, 1.f, 0.f),
      eng);
  auto bpd = eltwise_backward::primitive_desc(
      eltwise_backward::desc(alg, md, md, 1.f, 0.f), eng, fpd);
  eltwise_forward fwd(fpd);
  eltwise_backward bwd(bpd);
  double f = seconds([&] {
    fwd.execute(s, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}});
  }, reps);
  double b = seconds([&] {
    bwd.execute(s, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DIFF_DST, mdy},
                    {DNNL_ARG_DIFF_SRC, mdx}});
  }, reps);
  s.wait();
  report("onednn", f, b, n);
}

/// silu(g) up and its gradient from oneDNN's primitives. (A binary_mul
/// post-op on eltwise_swish runs oneDNN 2.6's reference implementation,
/// about 90 ns per element, and on a 1-D tensor computes nothing.)
void oneDnnSwiglu(int64_t n, Floats &g, Floats &u, Floats &dy, Floats &h,
                  Floats &y, Floats &t, Floats &dg, Floats &du, int reps) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
  memory mg(md, eng, g.data()), mu(md, eng, u.data()), mh(md, eng, h.data()),
      my(md, eng, y.data()), mdy(md, eng, dy.data()), mt(md, eng, t.data()),
      mdg(md, eng, dg.data()), mdu(md, eng, du.data());
  auto alg = algorithm::eltwise_swish;
  auto swishPd = eltwise_forward::primitive_desc(
      eltwise_forward::desc(prop_kind::forward_training, alg, md, 1.f, 0.f),
      eng);
  eltwise_forward swish(swishPd);
  binary mul(binary::primitive_desc(
      binary::desc(algorithm::binary_mul, md, md, md), eng));
  eltwise_backward swishGrad(eltwise_backward::primitive_desc(
      eltwise_backward::desc(alg, md, md, 1.f, 0.f), eng, swishPd));
  double f = seconds([&] {
    swish.execute(s, {{DNNL_ARG_SRC, mg}, {DNNL_ARG_DST, mh}});
    mul.execute(s, {{DNNL_ARG_SRC_0, mh}, {DNNL_ARG_SRC_1, mu},
                    {DNNL_ARG_DST, my}});
  }, reps);
  double b = seconds([&] {
    swish.execute(s, {{DNNL_ARG_SRC, mg}, {DNNL_ARG_DST, mh}});
    mul.execute(s, {{DNNL_ARG_SRC_0, mdy}, {DNNL_ARG_SRC_1, mh},
                    {DNNL_ARG_DST, mdu}});
    mul.execute(s, {{DNNL_ARG_SRC_0, mdy}, {DNNL_ARG_SRC_1, mu},
                    {DNNL_ARG_DST, mt}});
    swishGrad.execute(s, {{DNNL_ARG_SRC, mg}, {DNNL_ARG_DIFF_DST, mt},
                          {DNNL_ARG_DIFF_SRC, mdg}});
  }, reps);
  s.wait();
  report("onednn", f, b, n);
}

void silu(int reps) {
  const int64_t n = 8 * 128 * 1024;
  Floats x = normal(n, 1), dy = normal(n, 2), s(n), y(n), t(n), dx(n);
  std::printf("silu over %lld floats\n%-14s %10s %10s\n", (long long)n,
              "kernel", "fwd ns/el", "bwd ns/el");
  double f = seconds([&] {
    pdrt_unary(nullptr, PDRT_SILU, 0.0f, x.data(), y.data(), n);
  }, reps);
  double b = seconds([&] {
    pdrt_unary_grad(nullptr, PDRT_SILU, 0.0f, dy.data(), x.data(), y.data(),
                    dx.data(), n);
  }, reps);
  report("pdrt fused", f, b, n);
  f = seconds([&] { stagedSilu(x.data(), y.data(), n); }, reps);
  b = seconds([&] { stagedSiluGrad(dy.data(), x.data(), dx.data(), n); },
              reps);
  report("pdrt staged", f, b, n);
  unfusedSilu(n, x, dy, s, y, t, dx, reps);
  oneDnnSwish(n, x, dy, y, dx, reps);
}

void swiglu(int reps) {
  const int64_t n = 8 * 128 * 1024;
  const int64_t desc[] = {1, n, 1, 1};
  Floats g = normal(n, 1), u = normal(n, 6), dy = normal(n, 2), h(n), y(n),
         t(n), dg(n), du(n);
  std::printf("swiglu over %lld floats\n%-14s %10s %10s\n", (long long)n,
              "kernel", "fwd ns/el", "bwd ns/el");
  double f = seconds([&] {
    pdrt_swiglu(nullptr, g.data(), u.data(), y.data(), n);
  }, reps);
  double b = seconds([&] {
    pdrt_swiglu_grad(nullptr, dy.data(), g.data(), u.data(), dg.data(),
                     du.data(), n);
  }, reps);
  report("pdrt fused", f, b, n);
  f = seconds([&] { stagedSwiglu(g.data(), u.data(), y.data(), n); }, reps);
  b = seconds([&] {
    stagedSwigluGrad(dy.data(), g.data(), u.data(), dg.data(), du.data(), n);
  }, reps);
  report("pdrt staged", f, b, n);
  f = seconds([&] {
    pdrt_unary(nullptr, PDRT_SILU, 0.0f, g.data(), h.data(), n);
    pdrt_binary(nullptr, PDRT_MUL, h.data(), u.data(), y.data(), desc);
  }, reps);
  b = seconds([&] {
    pdrt_binary(nullptr, PDRT_MUL, dy.data(), u.data(), t.data(), desc);
    pdrt_binary(nullptr, PDRT_MUL, dy.data(), h.data(), du.data(), desc);
    pdrt_unary_grad(nullptr, PDRT_SILU, 0.0f, t.data(), g.data(), h.data(),
                    dg.data(), n);
  }, reps);
  report("pdrt silu, mul", f, b, n);
  oneDnnSwiglu(n, g, u, dy, h, y, t, dg, du, reps);
}

/// 1 / sqrt(mean(x^2) + eps), the squares summed in index order.
float indexOrderRstd(const float *x, int64_t cols, float eps) {
  double s = 0.0;
  for (int64_t c = 0; c < cols; ++c)
    s += (double)x[c] * x[c];
  return pdrt_rms_rstd(s, cols, eps);
}

/// RMS norm and its gradient with every row sum in index order.
void scalarRmsNorm(const Floats &x, const Floats &g, const Floats &dy,
                   Floats &y, Floats &dx, Floats &dg, int64_t rows,
                   int64_t cols, int reps) {
  const float eps = 1e-6f;
  double f = seconds([&] {
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x.data() + r * cols;
      const float rstd = indexOrderRstd(xr, cols, eps);
      for (int64_t c = 0; c < cols; ++c)
        y[r * cols + c] = xr[c] * rstd * g[c];
    }
  }, reps);
  double b = seconds([&] {
    for (int64_t c = 0; c < cols; ++c)
      dg[c] = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x.data() + r * cols, *dyr = dy.data() + r * cols;
      const float rstd = indexOrderRstd(xr, cols, eps);
      double meanDnX = 0.0;
      for (int64_t c = 0; c < cols; ++c)
        meanDnX += (double)dyr[c] * g[c] * xr[c];
      const float k = (float)(meanDnX / cols) * rstd * rstd;
      for (int64_t c = 0; c < cols; ++c) {
        dg[c] += dyr[c] * xr[c] * rstd;
        dx[r * cols + c] = rstd * (dyr[c] * g[c] - xr[c] * k);
      }
    }
  }, reps);
  report("scalar", f, b, rows * cols);
}

void rmsNorm(int reps) {
  const int64_t rows = 1024, cols = 256, n = rows * cols;
  Floats x = normal(n, 3), g = normal(cols, 4), dy = normal(n, 5), y(n),
         dx(n), dg(cols);
  std::printf("rms_norm over %lld x %lld\n%-14s %10s %10s\n", (long long)rows,
              (long long)cols, "kernel", "fwd ns/el", "bwd ns/el");
  double f = seconds([&] {
    pdrt_rms_norm(nullptr, x.data(), g.data(), y.data(), rows, cols, 1e-6f);
  }, reps);
  double b = seconds([&] {
    pdrt_rms_norm_grad(nullptr, dy.data(), x.data(), g.data(), nullptr,
                       dx.data(), dg.data(), rows, cols, 1e-6f);
  }, reps);
  report("pdrt", f, b, n);
  scalarRmsNorm(x, g, dy, y, dx, dg, rows, cols, reps);
}

} // namespace

int main() {
  const int reps = 30;
  silu(reps);
  swiglu(reps);
  rmsNorm(reps);
}
