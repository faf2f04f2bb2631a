// Micro-benchmark: causal attention's six batched GEMMs through
// pdrt_batch_matmul_strided (libxsmm's kernels on these shapes,
// small_gemm.h) and through oneDNN's dnnl_sgemm, dense against the
// triangles pd-mark-causal-gemms sets (pdrt_codes.h pdrt_triangle), in the layouts
// the benchmark GPTs run them: Q, K, V read in place from the QKV
// projection [B, T, 3, H, D], O and dO as [B, T, H, D], S, P, dP, dS as
// [B, H, T, T]. Single thread, best of 20 calls, ms per call.
// Build and run: bench/kernels/run.sh causal_gemm [batch seq heads head_dim]
#include "pdrt/pdrt.h"

#include "bench_timing.h"
#include "cpu/small_gemm.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

struct Gemm {
  const char *what;
  const float *a, *b;
  float *c;
  // Batch strides (b, h) of A, B, C; m, n, k; transposes; leading dims.
  int64_t as[2], bs[2], cs[2], m, n, k, ta, tb, lda, ldb, ldc;
  int64_t triangle;
};

double run(const Gemm &g, int64_t batch, int64_t heads, int64_t triangle) {
  const int64_t desc[] = {2,        batch,    heads,    g.as[0], g.as[1],
                          g.bs[0],  g.bs[1],  g.cs[0],  g.cs[1], g.m,
                          g.n,      g.k,      g.ta,     g.tb,    g.lda,
                          g.ldb,    g.ldc,    triangle};
  return seconds([&] {
    pdrt_batch_matmul_strided(nullptr, g.a, g.b, g.c, desc);
  }, 20);
}

/// The same batched call on oneDNN alone (pdrt's path for large operands).
double runOneDnn(const Gemm &g, int64_t batch, int64_t heads, int64_t triangle) {
  pdrt::GemmShape shape{g.m, g.n, g.k, g.ta != 0, g.tb != 0, g.lda, g.ldb, g.ldc};
  std::vector<pdrt::GemmStrip> strips =
      pdrt::gemmStrips(shape, (int)triangle, pdrt::ResultStrips::Columns);
  return seconds([&] {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        pdrt::runOneDnnGemm(shape, strips,
                            g.a + b * g.as[0] + h * g.as[1],
                            g.b + b * g.bs[0] + h * g.bs[1],
                            g.c + b * g.cs[0] + h * g.cs[1]);
  }, 20);
}

} // namespace

int main(int argc, char **argv) {
  const int64_t B = argc > 1 ? std::atoi(argv[1]) : 8;
  const int64_t T = argc > 2 ? std::atoi(argv[2]) : 128;
  const int64_t H = argc > 3 ? std::atoi(argv[3]) : 4;
  const int64_t D = argc > 4 ? std::atoi(argv[4]) : 64;
  const int64_t row = 3 * H * D; // a QKV projection row
  AlignedVector qkv(B * T * row, 0.01f), dqkv(B * T * row),
      o(B * T * H * D, 0.02f), scores(B * H * T * T, 0.001f),
      probs(B * H * T * T, 0.001f);
  const float *q = qkv.data(), *k = qkv.data() + H * D, *v = qkv.data() + 2 * H * D;
  // Batch strides: QKV parts (b: T * row, h: D), [B, T, H, D] (T*H*D, D),
  // [B, H, T, T] (H*T*T, T*T).
  const int64_t pq[2] = {T * row, D}, po[2] = {T * H * D, D},
                ps[2] = {H * T * T, T * T};
  auto copy = [](const int64_t *s, int64_t *d) { d[0] = s[0], d[1] = s[1]; };
  std::vector<Gemm> gemms = {
      {"S = Q K^T", q, k, scores.data(), {}, {}, {}, T, T, D, 0, 1, row, row, T, PDRT_RESULT_LOWER},
      {"O = P V", probs.data(), v, o.data(), {}, {}, {}, T, D, T, 0, 0, T, row, H * D, PDRT_LHS_LOWER},
      {"dP = dO V^T", o.data(), v, scores.data(), {}, {}, {}, T, T, D, 0, 1, H * D, row, T, PDRT_RESULT_LOWER},
      {"dV = P^T dO", probs.data(), o.data(), dqkv.data() + 2 * H * D, {}, {}, {}, T, D, T, 1, 0, T, H * D, row, PDRT_LHS_UPPER},
      {"dQ = dS K", probs.data(), k, dqkv.data(), {}, {}, {}, T, D, T, 0, 0, T, row, row, PDRT_LHS_LOWER},
      {"dK = dS^T Q", probs.data(), q, dqkv.data() + H * D, {}, {}, {}, T, D, T, 1, 0, T, row, row, PDRT_LHS_UPPER},
  };
  // Operand layouts by role: scores-shaped A, or the QKV / O parts.
  copy(pq, gemms[0].as), copy(pq, gemms[0].bs), copy(ps, gemms[0].cs);
  copy(ps, gemms[1].as), copy(pq, gemms[1].bs), copy(po, gemms[1].cs);
  copy(po, gemms[2].as), copy(pq, gemms[2].bs), copy(ps, gemms[2].cs);
  copy(ps, gemms[3].as), copy(po, gemms[3].bs), copy(pq, gemms[3].cs);
  copy(ps, gemms[4].as), copy(pq, gemms[4].bs), copy(pq, gemms[4].cs);
  copy(ps, gemms[5].as), copy(pq, gemms[5].bs), copy(pq, gemms[5].cs);
  std::printf("B %lld, T %lld, H %lld, D %lld (ms per call)\n\n", (long long)B,
              (long long)T, (long long)H, (long long)D);
  std::printf("| GEMM | oneDNN dense | oneDNN causal | pdrt dense | pdrt causal "
              "| oneDNN causal / pdrt causal |\n|---|---|---|---|---|---|\n");
  double total[4] = {0, 0, 0, 0};
  for (const Gemm &g : gemms) {
    double t[4] = {runOneDnn(g, B, H, PDRT_DENSE), runOneDnn(g, B, H, g.triangle),
                   run(g, B, H, PDRT_DENSE), run(g, B, H, g.triangle)};
    for (int i = 0; i < 4; ++i)
      total[i] += t[i];
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.2f |\n", g.what, t[0] * 1e3,
                t[1] * 1e3, t[2] * 1e3, t[3] * 1e3, t[1] / t[3]);
  }
  std::printf("| all six | %.3f | %.3f | %.3f | %.3f | %.2f |\n", total[0] * 1e3,
              total[1] * 1e3, total[2] * 1e3, total[3] * 1e3, total[1] / total[3]);

  // dV, dQ and dK as pd-concat-in-place runs them, written into the QKV
  // projection's gradient through its strides (as above), against three
  // [B, T, H, D] results and the concat that copies them into it.
  AlignedVector parts(3 * B * T * H * D);
  std::vector<Gemm> apart(gemms.begin() + 3, gemms.end());
  for (size_t i = 0; i < apart.size(); ++i) {
    apart[i].c = parts.data() + i * B * T * H * D;
    apart[i].ldc = H * D;
    copy(po, apart[i].cs);
  }
  auto gemmsOf = [&](const std::vector<Gemm> &list) {
    for (const Gemm &g : list) {
      const int64_t desc[] = {2,       B,       H,       g.as[0], g.as[1],
                              g.bs[0], g.bs[1], g.cs[0], g.cs[1], g.m,
                              g.n,     g.k,     g.ta,    g.tb,    g.lda,
                              g.ldb,   g.ldc,   g.triangle};
      pdrt_batch_matmul_strided(nullptr, g.a, g.b, g.c, desc);
    }
  };
  double inPlace = seconds([&] { gemmsOf(std::vector<Gemm>(gemms.begin() + 3, gemms.end())); }, 20);
  double copied = seconds([&] {
    gemmsOf(apart);
    // dQ, dK, dV (parts 1, 2, 0 above) row by row into [B, T, 3, H, D].
    const float *from[3] = {parts.data() + B * T * H * D,
                            parts.data() + 2 * B * T * H * D, parts.data()};
    for (int64_t r = 0; r < B * T; ++r)
      for (int p = 0; p < 3; ++p)
        std::memcpy(dqkv.data() + r * row + p * H * D, from[p] + r * H * D,
                    H * D * sizeof(float));
  }, 20);
  std::printf("\ndV, dQ, dK and their concat: %.3f ms written in place, "
              "%.3f ms apart and copied\n", inPlace * 1e3, copied * 1e3);
}
