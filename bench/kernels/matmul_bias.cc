// Micro-benchmark: a Linear layer's C = A W^T + bias, single thread, on the
// forward GEMM shapes of the benchmark GPTs (b*T rows), three ways, beside
// the GEMM alone (beta 0, no bias):
//   sgemm+add    dnnl_sgemm (beta 0), then the bias added in a second pass
//   fill+sgemm   C filled with the bias rows, dnnl_sgemm with beta 1
//                (what pdrt_matmul_bias does)
//   primitive    oneDNN's matmul primitive with a bias argument (the bias in
//                the GEMM's epilogue), primitive created once per shape
// Build and run: bench/kernels/run.sh matmul_bias [rows hidden]
// On the Ice Lake Xeon VM of docs/performance.md, 2026-11-26, 64-byte-
// aligned operands, over the four Linears: rows 1024, hidden 256: GEMM
// alone 8.52 ms, fill+sgemm 8.95, primitive 8.59, sgemm+add 9.51; rows
// 2048, hidden 512: 65.2 / 67.0 / 67.9 / 69.6. The primitive's warm edge on
// the small shapes (4%) measured 0.4% of a step in the plan (the Linear
// forwards are a third of its GEMM time), not worth its per-shape primitive
// cache, so pdrt_matmul_bias fills and calls dnnl_sgemm. A GELU post-op
// would write only gelu(z), and the backward needs z. In a GPT only the
// QKV projection still takes this path: pd-fuse-bias-into-consumers moves
// the other Linears' biases into the GELU or the residual layer norm.
#include <oneapi/dnnl/dnnl.h>

#include "bench_timing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

#define CHECK(x)                                                               \
  do {                                                                         \
    if ((x) != dnnl_success) {                                                 \
      std::fprintf(stderr, "%s failed\n", #x);                                 \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// The matmul primitive for [m,k] x [k,n] (B stored [n,k], transposed) +
/// bias [1,n].
struct BiasMatmul {
  dnnl_engine_t engine;
  dnnl_stream_t stream;
  dnnl_primitive_t prim;
  dnnl_memory_t a, b, bias, c;
  BiasMatmul(int m, int n, int k) {
    CHECK(dnnl_engine_create(&engine, dnnl_cpu, 0));
    CHECK(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags));
    dnnl_memory_desc_t amd, bmd, biasmd, cmd;
    dnnl_dims_t ad = {m, k}, as = {k, 1}, bd = {k, n}, bs = {1, k},
                biasd = {1, n}, biass = {n, 1}, cd = {m, n}, cs = {n, 1};
    CHECK(dnnl_memory_desc_init_by_strides(&amd, 2, ad, dnnl_f32, as));
    CHECK(dnnl_memory_desc_init_by_strides(&bmd, 2, bd, dnnl_f32, bs));
    CHECK(dnnl_memory_desc_init_by_strides(&biasmd, 2, biasd, dnnl_f32, biass));
    CHECK(dnnl_memory_desc_init_by_strides(&cmd, 2, cd, dnnl_f32, cs));
    dnnl_matmul_desc_t desc;
    CHECK(dnnl_matmul_desc_init(&desc, &amd, &bmd, &biasmd, &cmd));
    dnnl_primitive_desc_t pd;
    CHECK(dnnl_primitive_desc_create(&pd, &desc, nullptr, engine, nullptr));
    const char *impl = nullptr;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    std::fprintf(stderr, "matmul %dx%dx%d: %s\n", m, n, k, impl ? impl : "?");
    CHECK(dnnl_primitive_create(&prim, pd));
    CHECK(dnnl_memory_create(&a, &amd, engine, DNNL_MEMORY_NONE));
    CHECK(dnnl_memory_create(&b, &bmd, engine, DNNL_MEMORY_NONE));
    CHECK(dnnl_memory_create(&bias, &biasmd, engine, DNNL_MEMORY_NONE));
    CHECK(dnnl_memory_create(&c, &cmd, engine, DNNL_MEMORY_NONE));
  }
  void run(const float *ap, const float *bp, const float *biasp, float *cp) {
    CHECK(dnnl_memory_set_data_handle(a, (void *)ap));
    CHECK(dnnl_memory_set_data_handle(b, (void *)bp));
    CHECK(dnnl_memory_set_data_handle(bias, (void *)biasp));
    CHECK(dnnl_memory_set_data_handle(c, cp));
    dnnl_exec_arg_t args[4] = {{DNNL_ARG_SRC, a},
                               {DNNL_ARG_WEIGHTS, b},
                               {DNNL_ARG_BIAS, bias},
                               {DNNL_ARG_DST, c}};
    CHECK(dnnl_primitive_execute(prim, stream, 4, args));
    CHECK(dnnl_stream_wait(stream));
  }
};

} // namespace

int main(int argc, char **argv) {
  int rows = argc > 1 ? std::atoi(argv[1]) : 1024;
  int h = argc > 2 ? std::atoi(argv[2]) : 256;
  struct Shape { const char *what; int n, k; };
  std::vector<Shape> shapes = {{"qkv", 3 * h, h}, {"attn proj", h, h},
                               {"mlp up", 4 * h, h}, {"mlp down", h, 4 * h}};
  std::printf("| Linear | m x n x k | sgemm alone ms | sgemm+add ms | fill+sgemm ms | primitive ms | sgemm+add / primitive |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  double total[4] = {0, 0, 0, 0};
  for (const Shape &s : shapes) {
    int m = rows, n = s.n, k = s.k;
    AlignedVector a((size_t)m * k), w((size_t)n * k), bias(n),
        c((size_t)m * n), ref((size_t)m * n);
    for (size_t i = 0; i < a.size(); ++i) a[i] = 0.001f * (i % 97);
    for (size_t i = 0; i < w.size(); ++i) w[i] = 0.002f * (i % 89);
    for (int j = 0; j < n; ++j) bias[j] = 0.1f * j;
    double tg = seconds([&] {
      dnnl_sgemm('N', 'T', m, n, k, 1.0f, a.data(), k, w.data(), k, 0.0f,
                 c.data(), n);
    }, 7);
    double t0 = seconds([&] {
      dnnl_sgemm('N', 'T', m, n, k, 1.0f, a.data(), k, w.data(), k, 0.0f,
                 c.data(), n);
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j)
          c[(size_t)i * n + j] += bias[j];
    }, 7);
    ref = c;
    double t1 = seconds([&] {
      for (int i = 0; i < m; ++i)
        std::memcpy(c.data() + (size_t)i * n, bias.data(), n * sizeof(float));
      dnnl_sgemm('N', 'T', m, n, k, 1.0f, a.data(), k, w.data(), k, 1.0f,
                 c.data(), n);
    }, 7);
    BiasMatmul mm(m, n, k);
    double t2 = seconds([&] { mm.run(a.data(), w.data(), bias.data(), c.data()); }, 7);
    double err = 0;
    for (size_t i = 0; i < c.size(); ++i)
      err = std::max(err, (double)std::abs(c[i] - ref[i]) / (1.0 + std::abs(ref[i])));
    total[0] += t0; total[1] += t1; total[2] += t2;
    total[3] += tg;
    std::printf("| %s | %d x %d x %d | %.3f | %.3f | %.3f | %.3f | %.2f |  (max rel diff %.1e)\n",
                s.what, m, n, k, tg * 1e3, t0 * 1e3, t1 * 1e3, t2 * 1e3, t0 / t2, err);
  }
  std::printf("| all | | %.3f | %.3f | %.3f | %.3f | %.2f |\n", total[3] * 1e3,
              total[0] * 1e3, total[1] * 1e3, total[2] * 1e3, total[0] / total[2]);
}
