// Micro-benchmark: a row-major C = A^T B (m x n, inner k; the weight
// gradient of a Linear layer) three ways, single thread, 64-byte-aligned
// operands: dnnl_sgemm directly, as its transpose C^T = B^T A
// (pdrt::sgemmTNThroughTranspose) and OpenBLAS's cblas_sgemm, over a grid
// of m and n. Prints GFLOP/s, the fastest path, the one pdrt_matmul takes
// (pdrt::chooseTNPath) and a mark where that one is more than 5% slower
// than the fastest: the data behind runtime/cpu/sgemm_tn.h's rule.
// Build and run: bench/kernels/run.sh sgemm_tn [k]
#include "cpu/sgemm_tn.h"
#include "pdrt/pdrt.h"

#include "bench_timing.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char **argv) {
  const int64_t k = argc > 1 ? std::atoll(argv[1]) : 2048;
  const char *names[] = {"direct", "transposed", "openblas"};
  std::printf(
      "| m x n x k | direct | transposed | OpenBLAS | fastest | pdrt |\n");
  std::printf("|---|---|---|---|---|---|\n");
  int misses = 0, shapes = 0;
  for (int64_t m :
       {512, 768, 1024, 1280, 1536, 1792, 2048, 2304, 2560, 3072, 4096})
    for (int64_t n : {128, 256, 384, 512, 640, 768, 1024}) {
      AlignedVector a(k * m, 0.01f), b(k * n, 0.02f), c(m * n);
      double t[3] = {
          seconds(
              [&] {
                dnnl_sgemm('T', 'N', m, n, k, 1.0f, a.data(), m, b.data(), n,
                           0.0f, c.data(), n);
              },
              4),
          seconds(
              [&] {
                pdrt::sgemmTNThroughTranspose(m, n, k, 1.0f, a.data(), m,
                                              b.data(), n, 0.0f, c.data(), n);
              },
              4),
          seconds(
              [&] {
                cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, k,
                            1.0f, a.data(), m, b.data(), n, 0.0f, c.data(), n);
              },
              4)};
      int fastest = 0;
      for (int i = 1; i < 3; ++i)
        fastest = t[i] < t[fastest] ? i : fastest;
      int chosen = (int)pdrt::chooseTNPath(m, n);
      bool miss = t[chosen] > 1.05 * t[fastest];
      misses += miss;
      ++shapes;
      double gflop = 2e-9 * m * n * k;
      std::printf("| %lld x %lld x %lld | %.1f | %.1f | %.1f | %s | %s%s |\n",
                  (long long)m, (long long)n, (long long)k, gflop / t[0],
                  gflop / t[1], gflop / t[2], names[fastest], names[chosen],
                  miss ? " (>5% slower)" : "");
    }
  std::printf("pdrt's path within 5%% of the fastest on %d of %d shapes\n",
              shapes - misses, shapes);
}
