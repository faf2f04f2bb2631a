// Micro-benchmark: is a GELU "epilogue" worth having on the CPU target
// without a GEMM that applies it in its micro-kernel? The MLP's up
// projection z = x W^T + b, h = gelu(z) (forward) and its backward
// dz = gelu'(z) * (dY W2), single thread, b*T = 1024 rows, hidden 256:
//   full        what pdc runs: the bias-row fill and one dnnl_sgemm over all
//               rows, then pdrt_gelu (pdrt_gelu_grad) over the result
//   panel P     the same per panel of P rows, the GELU applied while the
//               panel is in cache (an epilogue built on dnnl_sgemm calls)
//   sgemm only  the GEMM alone, the floor an epilogue could approach
// Pass "cold" to evict the caches (64 MiB written) before every call.
// Build and run: bench/kernels/run.sh gelu_epilogue [cold]
// On the AMD EPYC (Zen 4) development machine, 2026-11-25, warm and cold:
// forward full 6.6-7.3 ms, panels 6.5-7.9 ms (the best P differs run to
// run), sgemm only 5.2-5.4 ms; backward full 6.4-6.6 ms, panels 7.4-8.1 ms,
// sgemm only 5.0-5.1 ms. dnnl_sgemm packs B again for every panel, which
// costs what the cached GELU saves: a GELU epilogue needs a GEMM that
// applies it per tile (oneDNN's matmul post-op, which writes gelu(z) only
// while the backward needs z; cuBLASLt's
// GELU_AUX_BIAS, which writes both, on the CUDA target).
#include <oneapi/dnnl/dnnl.h>

#include "bench_timing.h"
#include "pdrt/pdrt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

int main(int argc, char **argv) {
  const int64_t m = 1024, n = 1024, k = 256;
  AlignedVector x(m * k), w(n * k), bias(n), z(m * n), h(m * n);
  AlignedVector dy(m * k), w2(k * n), dh(m * n), dz(m * n);
  AlignedVector junk(argc > 1 ? (64 << 20) / 4 : 0);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  for (auto *v : {&x, &w, &bias, &dy, &w2})
    for (float &e : *v)
      e = normal(gen);
  auto evict = [&] {
    for (size_t i = 0; i < junk.size(); i += 16)
      junk[i] += 1.0f;
  };
  // Best of 10 in ms; with "cold" the eviction runs before each timed call.
  auto time = [&](const std::function<void()> &f) {
    if (junk.empty())
      return 1e3 * seconds(f, 10);
    double best = 1e30;
    for (int r = 0; r < 10; ++r) {
      evict();
      auto t0 = std::chrono::steady_clock::now();
      f();
      best = std::min(best, std::chrono::duration<double>(
                                std::chrono::steady_clock::now() - t0)
                                .count());
    }
    return 1e3 * best;
  };
  auto forward = [&](int64_t rows) {
    for (int64_t r0 = 0; r0 < m; r0 += rows) {
      for (int64_t i = r0; i < r0 + rows; ++i)
        std::memcpy(&z[i * n], bias.data(), n * sizeof(float));
      dnnl_sgemm('N', 'T', rows, n, k, 1.0f, &x[r0 * k], k, w.data(), k, 1.0f,
                 &z[r0 * n], n);
      pdrt_gelu(nullptr, 0, &z[r0 * n], &h[r0 * n], rows * n);
    }
  };
  auto backward = [&](int64_t rows) {
    for (int64_t r0 = 0; r0 < m; r0 += rows) {
      dnnl_sgemm('N', 'N', rows, n, k, 1.0f, &dy[r0 * k], k, w2.data(), n,
                 0.0f, &dh[r0 * n], n);
      pdrt_gelu_grad(nullptr, 0, &dh[r0 * n], &z[r0 * n], &dz[r0 * n],
                     rows * n);
    }
  };
  std::printf("| %s | full ms | panel 64 ms | panel 128 ms | panel 256 ms | sgemm only ms |\n",
              argc > 1 ? "cold caches" : "warm caches");
  std::printf("|---|---|---|---|---|---|\n");
  auto row = [&](const char *what, const std::function<void(int64_t)> &pass,
                 const std::function<void()> &gemm) {
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.3f |\n", what,
                time([&] { pass(m); }), time([&] { pass(64); }),
                time([&] { pass(128); }), time([&] { pass(256); }), time(gemm));
  };
  row("forward", forward, [&] {
    dnnl_sgemm('N', 'T', m, n, k, 1.0f, x.data(), k, w.data(), k, 0.0f,
               z.data(), n);
  });
  row("backward", backward, [&] {
    dnnl_sgemm('N', 'N', m, n, k, 1.0f, dy.data(), k, w2.data(), n, 0.0f,
               dh.data(), n);
  });
}
