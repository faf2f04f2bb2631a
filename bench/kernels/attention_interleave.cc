// Micro-benchmark: causal attention's forward (S = Q K^T, its masked
// softmax over it, O = P V) and backward (dP = dO V^T, dS over it, dK,
// dV, dQ into the QKV gradient's parts) as the benchmark GPTs' stages run
// them, kernel after kernel over all (batch, head) entries against one
// interleaved group (pdrt_interleave_begin / _end: entry by entry), warm
// and with the caches flushed before every call (96 MiB written), single
// thread, best of 10, ms per call.
// Build and run: bench/kernels/run.sh attention_interleave [B T H D]
#include "pdrt/pdrt.h"

#include "bench_timing.h"
#include "exec/context.h"

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

namespace {

int64_t B, T, H, D, Row;

/// A pdrt_batch_matmul_strided descriptor over (B, H): the batch strides
/// of A, B and C, then the GEMM.
std::vector<int64_t> desc(const int64_t *as, const int64_t *bs,
                          const int64_t *cs, int64_t m, int64_t n, int64_t k,
                          int64_t ta, int64_t tb, int64_t lda, int64_t ldb,
                          int64_t ldc, int64_t triangle) {
  return {2, B,  H,  as[0], as[1], bs[0], bs[1], cs[0], cs[1],
          m, n,  k,  ta,    tb,    lda,   ldb,   ldc,   triangle};
}

void flushCaches() {
  static std::vector<char> junk(96 << 20, 1);
  for (size_t i = 0; i < junk.size(); i += 64)
    junk[i]++;
}

/// Best of 10 calls of f (after one), each after flushCaches when `cold`.
double timed(const std::function<void()> &f, bool cold) {
  return seconds(f, 10, cold ? std::function<void()>(flushCaches) : nullptr);
}

} // namespace

int main(int argc, char **argv) {
  B = argc > 1 ? std::atoi(argv[1]) : 8;
  T = argc > 2 ? std::atoi(argv[2]) : 128;
  H = argc > 3 ? std::atoi(argv[3]) : 4;
  D = argc > 4 ? std::atoi(argv[4]) : 64;
  Row = 3 * H * D;
  AlignedVector qkv(B * T * Row, 0.01f), dqkv(B * T * Row), o(B * T * H * D),
      dout(B * T * H * D, 0.02f), scores(B * H * T * T), ds(B * H * T * T);
  std::vector<uint8_t> mask(T * T);
  for (int64_t i = 0; i < T; ++i)
    for (int64_t j = 0; j < T; ++j)
      mask[i * T + j] = j <= i;
  const float *q = qkv.data(), *k = q + H * D, *v = q + 2 * H * D;
  const int64_t pq[2] = {T * Row, D}, po[2] = {T * H * D, D},
                ps[2] = {H * T * T, T * T};
  auto S = desc(pq, pq, ps, T, T, D, 0, 1, Row, Row, T, PDRT_RESULT_LOWER);
  auto PV = desc(ps, pq, po, T, D, T, 0, 0, T, Row, H * D, PDRT_LHS_LOWER);
  auto DP = desc(po, pq, ps, T, T, D, 0, 1, H * D, Row, T, PDRT_RESULT_LOWER);
  auto DK = desc(ps, pq, pq, T, D, T, 1, 0, T, Row, Row, PDRT_LHS_UPPER);
  auto DV = desc(ps, po, pq, T, D, T, 1, 0, T, H * D, Row, PDRT_LHS_UPPER);
  auto DQ = desc(ps, pq, pq, T, D, T, 0, 0, T, Row, Row, PDRT_LHS_LOWER);
  const float scale = 0.125f;
  pdrt_ctx ctx;
  auto forward = [&](bool grouped) {
    if (grouped)
      pdrt_interleave_begin(&ctx);
    pdrt_batch_matmul_strided(&ctx, q, k, scores.data(), S.data());
    pdrt_masked_softmax(&ctx, scores.data(), mask.data(), scores.data(),
                        B * H * T, T, T, 1, scale, PDRT_CAUSAL_BLOCK, 0);
    pdrt_batch_matmul_strided(&ctx, scores.data(), v, o.data(), PV.data());
    if (grouped)
      pdrt_interleave_end(&ctx);
  };
  auto backward = [&](bool grouped) {
    if (grouped)
      pdrt_interleave_begin(&ctx);
    pdrt_batch_matmul_strided(&ctx, dout.data(), v, ds.data(), DP.data());
    pdrt_masked_softmax_grad(&ctx, ds.data(), scores.data(), ds.data(),
                             B * H * T, T, scale, T, PDRT_CAUSAL_BLOCK);
    pdrt_batch_matmul_strided(&ctx, ds.data(), q, dqkv.data() + H * D, DK.data());
    pdrt_batch_matmul_strided(&ctx, scores.data(), dout.data(),
                              dqkv.data() + 2 * H * D, DV.data());
    pdrt_batch_matmul_strided(&ctx, ds.data(), k, dqkv.data(), DQ.data());
    if (grouped)
      pdrt_interleave_end(&ctx);
  };
  std::printf("B %lld, T %lld, H %lld, D %lld (ms per call)\n\n| pass | caches | "
              "kernel by kernel | interleaved | speed-up |\n|---|---|---|---|---|\n",
              (long long)B, (long long)T, (long long)H, (long long)D);
  for (bool cold : {false, true})
    for (auto [name, pass] : {std::pair<const char *, std::function<void(bool)>>{
                                  "forward", forward},
                              {"backward", backward}}) {
      double whole = timed([&] { pass(false); }, cold);
      double grouped = timed([&] { pass(true); }, cold);
      std::printf("| %s | %s | %.3f | %.3f | %.2fx |\n", name,
                  cold ? "flushed" : "warm", whole * 1e3, grouped * 1e3,
                  whole / grouped);
    }
  bool byEntries = !ctx.interleaved.checked.empty();
  for (const auto &entry : ctx.interleaved.checked)
    byEntries &= entry.second;
  std::printf("\ngroups ran entry by entry: %s\n", byEntries ? "yes" : "no");
  return ctx.failed ? 1 : 0;
}
