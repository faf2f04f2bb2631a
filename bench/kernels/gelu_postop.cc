// Micro-benchmark: would the MLP's GELU gradient be cheaper inside the
// backward GEMM that produces its input? dz = gelu'(z) * (dY W2), the
// bias gradient db = the column sums of dz (b*T = 1024 rows, hidden 256,
// MLP 1024 wide: the small benchmark GPT's up projection), single thread:
//   sgemm + gelu_grad   what pdc runs: dnnl_sgemm writes dY W2, then
//                       pdrt_gelu_grad_bias reads it with z and writes dz
//                       and db in one pass
//   post-op + colsum    oneDNN's matmul primitive with a binary_mul
//                       post-op by g = gelu'(z) (the forward would stash g
//                       instead of z), writing dz; then db from dz
//   post-op only        the same without db
//   matmul              the primitive without the post-op
//   sgemm               dnnl_sgemm alone
//   gelu_grad           pdrt_gelu_grad_bias alone
// Every call follows a write of MIB MiB (default 1024) that evicts the
// operands, as in a step; best and mean of 10 calls, ms.
// Build and run: bench/kernels/run.sh gelu_postop [MIB]
// On the AMX Xeon (family 6 model 167, oneDNN 2.6 brg:avx512_core,
// 2026-11-28, four runs, the last evicting 256 MiB, best ms): sgemm +
// gelu_grad 4.11-4.91, post-op + colsum 4.49-5.05, post-op only 3.99-4.55,
// matmul 3.37-3.67, sgemm 2.88-3.79, gelu_grad 1.11-1.42. The post-op
// reads g from memory as the separate pass reads z, so it saves only the
// write and the read of dY W2 (0.1-0.4 ms), which the bias gradient's own
// pass over dz costs again: no gain, so pdc keeps the GEMM and
// pdrt_gelu_grad_bias.
#include <dnnl.hpp>
#include <oneapi/dnnl/dnnl.h>

#include "bench_timing.h"
#include "pdrt/pdrt.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <utility>

int main(int argc, char **argv) {
  const int64_t m = 1024, n = 1024, k = 256;
  AlignedVector dy(m * k), w2(k * n), dh(m * n), dz(m * n), z(m * n), g(m * n),
      bias(n), db(n);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto *v : {&dy, &w2, &bias})
    for (float &e : *v)
      e = 0.1f * normal(gen);
  for (auto *v : {&z, &g})
    for (float &e : *v)
      e = normal(gen);
  AlignedVector junk((size_t(argc > 1 ? std::atoll(argv[1]) : 1024) << 20) /
                     sizeof(float));
  auto evict = [&] {
    for (size_t i = 0; i < junk.size(); i += 16)
      junk[i] += 1.0f;
  };
  // {best, mean} of 10 timed calls after 2 untimed ones, in ms.
  auto time = [&](const std::function<void()> &f) {
    double best = 1e30, sum = 0;
    for (int r = 0; r < 12; ++r) {
      evict();
      auto t0 = std::chrono::steady_clock::now();
      f();
      double t =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      if (r >= 2) {
        best = std::min(best, t);
        sum += t;
      }
    }
    return std::make_pair(1e3 * best, 1e3 * sum / 10);
  };

  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  using dt = memory::data_type;
  using tag = memory::format_tag;
  memory::desc aDesc({m, k}, dt::f32, tag::ab), bDesc({k, n}, dt::f32, tag::ab),
      cDesc({m, n}, dt::f32, tag::ab);
  post_ops ops;
  ops.append_binary(algorithm::binary_mul, cDesc);
  primitive_attr attr;
  attr.set_post_ops(ops);
  matmul::primitive_desc withPostOp(matmul::desc(aDesc, bDesc, cDesc), attr,
                                    eng);
  matmul::primitive_desc plainDesc(matmul::desc(aDesc, bDesc, cDesc), eng);
  matmul postOp(withPostOp), plain(plainDesc);
  memory a(aDesc, eng, dy.data()), b(bDesc, eng, w2.data()),
      c(cDesc, eng, dz.data()), gm(cDesc, eng, g.data()),
      c0(cDesc, eng, dh.data());
  std::printf("oneDNN matmul: %s (post-op), %s (plain)\n",
              withPostOp.impl_info_str(), plainDesc.impl_info_str());

  auto sgemm = [&] {
    dnnl_sgemm('N', 'N', m, n, k, 1.0f, dy.data(), k, w2.data(), n, 0.0f,
               dh.data(), n);
  };
  auto geluGrad = [&] {
    pdrt_gelu_grad_bias(nullptr, 0, dh.data(), z.data(), bias.data(), dz.data(),
                        db.data(), m, n);
  };
  auto withMul = [&] {
    postOp.execute(s,
                   {{DNNL_ARG_SRC, a},
                    {DNNL_ARG_WEIGHTS, b},
                    {DNNL_ARG_DST, c},
                    {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, gm}});
    s.wait();
  };
  auto columnSums = [&] {
    std::fill(db.begin(), db.end(), 0.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        db[j] += dz[i * n + j];
  };
  struct Row {
    const char *name;
    std::function<void()> f;
  } rows[] = {
      {"sgemm + gelu_grad", [&] { sgemm(), geluGrad(); }},
      {"post-op + colsum", [&] { withMul(), columnSums(); }},
      {"post-op only", withMul},
      {"matmul",
       [&] {
         plain.execute(
             s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c0}});
         s.wait();
       }},
      {"sgemm", sgemm},
      {"gelu_grad", geluGrad},
  };
  std::printf("| %lld x %lld x %lld | best ms | mean ms |\n|---|---|---|\n",
              (long long)m, (long long)n, (long long)k);
  for (const Row &row : rows) {
    auto [best, mean] = time(row.f);
    std::printf("| %s | %.3f | %.3f |\n", row.name, best, mean);
  }
}
