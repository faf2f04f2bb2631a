// Micro-benchmark: the non-GEMM kernels of a Llama block on the CPU, over
// bench/hf_vs_torch.py's Llama (hidden 256, MLP 1024, 8 x 128 tokens),
// single thread, warm caches, ns per element:
//   silu           SiLU and its gradient over the MLP's gate (1024 x 1024):
//     pdrt fused     pdrt_unary / pdrt_unary_grad PDRT_SILU (pd.silu)
//     pdrt unfused   what the exported x * Sigmoid(x) ran before
//                    pd-fuse-decomposed-ops made it pd.silu: sigmoid, mul;
//                    backward mul, sigmoid's gradient, dy s + that
//     onednn         oneDNN's eltwise_swish (alpha 1), forward_training and
//                    backward from the source
//   swiglu         the gated MLP's silu(gate) * up and its gradient:
//     pdrt fused     pdrt_swiglu / pdrt_swiglu_grad (pd.swiglu)
//     pdrt silu, mul pd.silu and pd.mul, as before the gate was fused;
//                    backward the two products' gradients (dy up, dy h)
//                    and pd.silu's (the unary gradient)
//   rms_norm       RMS norm and its gradient over 1024 rows of 256:
//     pdrt           pdrt_rms_norm / pdrt_rms_norm_grad (row sums in
//                    vmath::dot's lanes)
//     scalar         the same formulas with the sums in index order, one
//                    double chain (pdrt's kernels before 2026-11-27)
// Build and run: bench/kernels/run.sh llama_mlp
#include <dnnl.hpp>

#include "bench_timing.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_numerics.h"

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
    pdrt_rms_norm_grad(nullptr, dy.data(), x.data(), g.data(), dx.data(),
                       dg.data(), rows, cols, 1e-6f);
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
