// Micro-benchmark: which GELU kernel pdrt runs on the CPU. GELU and its
// gradient over the small benchmark GPT's MLP activation (8 x 128 x 1024
// floats), single thread, warm caches, ns per element, erf and tanh forms:
//   pdrt avx2     what pdrt runs without AVX-512: gelu_lanes.h's kernels
//                 on 8 lanes (gelu_avx2.cc)
//   pdrt avx512   what pdrt runs on AVX-512 CPUs: the same on 16 lanes
//                 (gelu_avx512.cc; until 2026-11-27 Eigen expressions)
//   onednn        oneDNN's eltwise primitive (gelu_erf / gelu_tanh), created
//                 once, forward_training and backward
// Build and run: bench/kernels/run.sh gelu_kernels
// On an AMD EPYC Zen 4 (2026-11-25, forward / backward, ns per element):
// erf: avx512 0.31 / 0.61, onednn 0.60 / 0.81; tanh: avx512 0.42 / 0.68,
// onednn 0.80 / 1.03; the staged AVX2 kernels before gelu_avx2.cc 0.93 /
// 1.05 (erf) and 2.40 / 2.45 (tanh). On an AMD EPYC Zen 3 (AVX2 only,
// 2026-11-27): erf: avx2 0.96 / 1.05 (the staged kernels 1.94 / 2.05),
// onednn 0.92-1.14 / 1.16-1.63; tanh: avx2 0.90 / 1.35 (staged 3.63 /
// 3.54), onednn 4.08-5.19 / 4.50-5.58. With 2^y folded into the
// polynomials and Estrin's order (gelu_avx2.cc): erf 0.68-0.85 /
// 0.79-0.97, tanh 0.47-0.57 / 0.67-0.86 (onednn erf 0.86-1.15 /
// 1.14-1.70 in the same runs). On an Intel Xeon (model 207, AVX-512,
// 2026-11-27, three alternating runs): avx512 erf 0.44-0.69 / 0.48-0.80
// (Eigen's 0.34-0.55 / 0.62-1.05), tanh 0.37-0.54 / 0.51-0.81 (Eigen's
// 0.59-0.93 / 0.95-1.30); avx2 erf 0.74-1.16 / 0.79-1.24.
#include <dnnl.hpp>

#include "bench_timing.h"
#include "cpu/vmath.h"
#include "pdrt/pdrt.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <cstdio>
#include <random>
#include <vector>

int main() {
  const int64_t n = 8 * 128 * 1024;
  // 64-byte aligned, as every tensor of a stage's arena is (the AVX-512
  // kernels copy through an aligned block otherwise).
  struct Free { void operator()(float *p) const { std::free(p); } };
  auto buffer = [&] {
    return std::unique_ptr<float[], Free>(
        static_cast<float *>(std::aligned_alloc(64, n * sizeof(float))));
  };
  auto xb = buffer(), yb = buffer(), dyb = buffer(), dxb = buffer();
  float *x = xb.get(), *y = yb.get(), *dy = dyb.get(), *dx = dxb.get();
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = normal(gen);
    dy[i] = normal(gen);
  }
  const int reps = 30;
  auto perElement = [&](double s) { return s / (double)n * 1e9; };
  std::printf("%-14s %-5s %10s %10s\n", "kernel", "form", "fwd ns/el",
              "bwd ns/el");
  for (int tanhForm = 0; tanhForm < 2; ++tanhForm) {
    const char *form = tanhForm ? "tanh" : "erf";
    for (bool avx512 : {false, true}) {
      pdrt::vmath::useAvx512(avx512);
      if (avx512 && !pdrt::vmath::hasAvx512())
        continue;
      double f = seconds([&] { pdrt_gelu(nullptr, tanhForm, x, y, n); }, reps);
      double b = seconds([&] {
        pdrt_gelu_grad(nullptr, tanhForm, dy, x, dx, n);
      }, reps);
      std::printf("%-14s %-5s %10.3f %10.3f\n", avx512 ? "pdrt avx512" : "pdrt avx2",
                  form, perElement(f), perElement(b));
    }
    using namespace dnnl;
    engine eng(engine::kind::cpu, 0);
    stream s(eng);
    memory::desc md({n}, memory::data_type::f32, memory::format_tag::a);
    memory mx(md, eng, x), my(md, eng, y), mdy(md, eng, dy),
        mdx(md, eng, dx);
    auto alg = tanhForm ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf;
    auto fpd = eltwise_forward::primitive_desc(
        eltwise_forward::desc(prop_kind::forward_training, alg, md, 0.f, 0.f), eng);
    auto bpd = eltwise_backward::primitive_desc(
        eltwise_backward::desc(alg, md, md, 0.f, 0.f), eng, fpd);
    eltwise_forward fwd(fpd);
    eltwise_backward bwd(bpd);
    double f = seconds([&] { fwd.execute(s, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}}); }, reps);
    double b = seconds([&] {
      bwd.execute(s, {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DIFF_DST, mdy}, {DNNL_ARG_DIFF_SRC, mdx}});
    }, reps);
    s.wait();
    std::printf("%-14s %-5s %10.3f %10.3f\n", "onednn", form, perElement(f), perElement(b));
  }
  pdrt::vmath::useAvx512(true);
}
