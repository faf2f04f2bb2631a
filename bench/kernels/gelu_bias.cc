// Micro-benchmark: the MLP up projection's bias and GELU, where the bias
// is added (single thread, 64 MiB written between calls so operands come
// from memory as in a step):
//   in the GEMM  pdrt_matmul_bias (bias rows filled, sgemm with beta 1),
//                then pdrt_gelu; backward pdrt_gelu_grad_bias with its
//                bias gradient
//   in the GELU  pdrt_matmul (beta 0), then pdrt_gelu_bias (gelu(z + b));
//                backward pdrt_gelu_grad_bias at z + b with its bias
//                gradient (pd-fuse-bias-into-consumers)
// Best of 8 (the first calls create oneDNN's kernels), ms per call. Build and
// run: bench/kernels/run.sh gelu_bias [rows out in]   (default 1024 1024 256)
#include "pdrt/pdrt.h"

#include "bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  const int64_t m = argc > 1 ? std::atoll(argv[1]) : 1024;
  const int64_t n = argc > 2 ? std::atoll(argv[2]) : 1024;
  const int64_t k = argc > 3 ? std::atoll(argv[3]) : 256;
  AlignedVector x(m * k, 0.01f), w(n * k, 0.02f), b(n, 0.1f), z(m * n),
      h(m * n), dy(m * n, 0.01f), dz(m * n), db(n);
  AlignedVector junk((64 << 20) / sizeof(float));
  auto flush = [&] {
    for (size_t i = 0; i < junk.size(); i += 16)
      junk[i] += 1.0f;
  };
  double best[4] = {1e30, 1e30, 1e30, 1e30};
  auto time = [&](int which, auto f) {
    flush();
    auto t0 = std::chrono::steady_clock::now();
    f();
    best[which] = std::min(
        best[which],
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
            .count());
  };
  for (int rep = 0; rep < 8; ++rep) {
    time(0, [&] {
      pdrt_matmul_bias(nullptr, x.data(), w.data(), b.data(), z.data(), m, n, k,
                       0, 1, 1.0f);
      pdrt_gelu(nullptr, 0, z.data(), h.data(), m * n);
    });
    time(1, [&] {
      pdrt_matmul(nullptr, x.data(), w.data(), z.data(), m, n, k, 0, 1, 1.0f,
                  0.0f);
      pdrt_gelu_bias(nullptr, 0, z.data(), b.data(), h.data(), m, n);
    });
    time(2, [&] {
      pdrt_gelu_grad_bias(nullptr, 0, dy.data(), z.data(), nullptr, dz.data(),
                          db.data(), m, n);
    });
    time(3, [&] {
      pdrt_gelu_grad_bias(nullptr, 0, dy.data(), z.data(), b.data(), dz.data(),
                          db.data(), m, n);
    });
  }
  std::printf("| %lld x %lld x %lld | bias in the GEMM | bias in the GELU |\n",
              (long long)m, (long long)n, (long long)k);
  std::printf("|---|---|---|\n");
  std::printf("| forward: GEMM + GELU | %.3f ms | %.3f ms |\n", best[0] * 1e3,
              best[1] * 1e3);
  std::printf(
      "| backward: GELU gradient + bias gradient | %.3f ms | %.3f ms |\n",
      best[2] * 1e3, best[3] * 1e3);
}
