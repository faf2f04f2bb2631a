// Micro-benchmark: single-thread sgemm of OpenBLAS (cblas_sgemm) against
// oneDNN (dnnl_sgemm) on the GEMM shapes of the benchmark GPTs (b*T rows),
// forward and both gradients, row-major as pdrt_matmul calls them, and
// pdrt_matmul itself without a plan, that is on its default library for
// this CPU (runtime/cpu/gemm_library.h: oneDNN with AVX-512, A^T B of a
// wide A run as its transpose, runtime/cpu/sgemm_tn.h; OpenBLAS without).
// Build and run: bench/kernels/run.sh sgemm_libs [rows hidden vocab seq head_dim]
#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include "pdrt/pdrt.h"

#include "bench_timing.h"

#include <algorithm>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

struct Shape {
  const char *what;
  int m, n, k;
  bool ta, tb;
};


} // namespace

int main(int argc, char **argv) {
  int rows = argc > 1 ? std::atoi(argv[1]) : 1024; // b * T
  int h = argc > 2 ? std::atoi(argv[2]) : 256;
  int vocab = argc > 3 ? std::atoi(argv[3]) : 4096;
  std::vector<Shape> shapes = {
      {"qkv fwd", rows, 3 * h, h, false, true},
      {"qkv dW", 3 * h, h, rows, true, false},
      {"qkv dX", rows, h, 3 * h, false, false},
      {"mlp up fwd", rows, 4 * h, h, false, true},
      {"mlp up dW", 4 * h, h, rows, true, false},
      {"mlp down fwd", rows, h, 4 * h, false, true},
      {"mlp down dW", h, 4 * h, rows, true, false},
      {"head fwd", rows, vocab, h, false, true},
      {"head dW", vocab, h, rows, true, false},
      {"head dX", rows, h, vocab, false, false},
  };
  // Attention: batch x heads products of seq x seq x head_dim.
  int seq = argc > 4 ? std::atoi(argv[4]) : 128, hd = argc > 5 ? std::atoi(argv[5]) : 64;
  std::vector<Shape> attention = {
      {"q k^T", seq, seq, hd, false, true},
      {"att v", seq, hd, seq, false, false},
      {"att^T dy", seq, hd, seq, true, false},
  };
  int batch = rows / seq * (h / hd);
  std::printf("| GEMM | m x n x k | OpenBLAS GFLOP/s | oneDNN GFLOP/s | "
              "oneDNN / OpenBLAS | pdrt_matmul GFLOP/s | pdrt / oneDNN |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  double totalBlas = 0, totalDnnl = 0, totalPdrt = 0;
  for (const Shape &s : shapes) {
    AlignedVector a((size_t)s.m * s.k, 0.01f), b((size_t)s.k * s.n, 0.02f),
        c((size_t)s.m * s.n, 0.0f);
    int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n, ldc = s.n;
    double tb = seconds([&] {
      cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                  s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f,
                  a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc);
    }, 5);
    // dnnl_sgemm is row-major.
    double td = seconds([&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f,
                 a.data(), lda, b.data(), ldb, 0.0f, c.data(), ldc);
    }, 5);
    double tp = seconds([&] {
      pdrt_matmul(nullptr, a.data(), b.data(), c.data(), s.m, s.n, s.k, s.ta,
                  s.tb, 1.0f, 0.0f);
    }, 5);
    double flops = 2.0 * s.m * s.n * s.k;
    totalBlas += tb;
    totalDnnl += td;
    totalPdrt += tp;
    std::printf("| %s | %d x %d x %d | %.1f | %.1f | %.2f | %.1f | %.2f |\n",
                s.what, s.m, s.n, s.k, flops / tb * 1e-9, flops / td * 1e-9,
                tb / td, flops / tp * 1e-9, td / tp);
  }
  for (const Shape &s : attention) {
    AlignedVector a((size_t)batch * s.m * s.k, 0.01f),
        b((size_t)batch * s.k * s.n, 0.02f), c((size_t)batch * s.m * s.n, 0.0f);
    int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n, ldc = s.n;
    auto run = [&](bool dnnl) {
      for (int i = 0; i < batch; ++i) {
        const float *ai = a.data() + (size_t)i * s.m * s.k;
        const float *bi = b.data() + (size_t)i * s.k * s.n;
        float *ci = c.data() + (size_t)i * s.m * s.n;
        if (dnnl)
          dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f,
                     ai, lda, bi, ldb, 0.0f, ci, ldc);
        else
          cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                      s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f,
                      ai, lda, bi, ldb, 0.0f, ci, ldc);
      }
    };
    double tb = seconds([&] { run(false); }, 5);
    double td = seconds([&] { run(true); }, 5);
    double flops = 2.0 * batch * s.m * s.n * s.k;
    totalBlas += tb;
    totalDnnl += td;
    totalPdrt += td;
    std::printf("| %s (x%d) | %d x %d x %d | %.1f | %.1f | %.2f | (oneDNN) | |\n",
                s.what, batch, s.m, s.n, s.k, flops / tb * 1e-9,
                flops / td * 1e-9, tb / td);
  }
  std::printf("| all | | %.2f ms | %.2f ms | %.2f | %.2f ms | %.2f |\n",
              totalBlas * 1e3, totalDnnl * 1e3, totalBlas / totalDnnl,
              totalPdrt * 1e3, totalDnnl / totalPdrt);
}
