//===- interleave_test.cc - Batched kernels run entry by entry ------------===//
//
// pdrt_interleave_begin / _end: causal attention's forward (S, its masked
// softmax written over it, P V) and backward (dP, dS written over it, dK,
// dV, dQ into the parts of the QKV gradient) recorded and run entry by
// entry give the bits of the kernels run whole, and do run entry by entry;
// a group whose calls share memory across entries (an output placed over
// an input another entry still reads) or do not split into the same
// entries runs whole and still gives those bits; a padding mask of the
// step (one block per batch entry) runs entry by entry unless a call of
// the group writes over it; entriesIndependent's rules (rows that one
// accumulating call's entries share among themselves); and run
// --profile-ops' times land on each call's mark.
//
//===----------------------------------------------------------------------===//

#include "pdrt/pdrt.h"

#include "exec/context.h"
#include "exec/interleave.h"
#include "random_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

namespace {

constexpr int64_t B = 2, T = 64, H = 3, D = 32, Row = 3 * H * D;

/// A pdrt_batch_matmul_strided descriptor over (B, H).
using Desc = std::array<int64_t, 18>;
Desc desc(std::array<int64_t, 2> as, std::array<int64_t, 2> bs,
          std::array<int64_t, 2> cs, int64_t m, int64_t n, int64_t k,
          int64_t ta, int64_t tb, int64_t lda, int64_t ldb, int64_t ldc,
          int64_t triangle) {
  return {2,     B,  H,  as[0], as[1], bs[0], bs[1], cs[0], cs[1],
          m,     n,  k,  ta,    tb,    lda,   ldb,   ldc,   triangle};
}

/// Attention's tensors and descriptors in the benchmark GPTs' layouts:
/// Q, K, V read in place from [B, T, 3, H, D], O and dO as [B, T, H, D],
/// the scores [B, H, T, T].
struct Attention {
  std::vector<float> qkv = pdtest::randomVector(B * T * Row, 1),
                     dout = pdtest::randomVector(B * T * H * D, 2),
                     o = std::vector<float>(B * T * H * D),
                     scores = std::vector<float>(B * H * T * T),
                     dqkv = std::vector<float>(B * T * Row);
  std::vector<uint8_t> mask = std::vector<uint8_t>(T * T);
  const std::array<int64_t, 2> pq{T * Row, D}, po{T * H * D, D},
      ps{H * T * T, T * T};
  const Desc s = desc(pq, pq, ps, T, T, D, 0, 1, Row, Row, T, PDRT_RESULT_LOWER),
             pv = desc(ps, pq, po, T, D, T, 0, 0, T, Row, H * D, PDRT_LHS_LOWER),
             dp = desc(po, pq, ps, T, T, D, 0, 1, H * D, Row, T, PDRT_RESULT_LOWER),
             dv = desc(ps, po, pq, T, D, T, 1, 0, T, H * D, Row, PDRT_LHS_UPPER),
             dq = desc(ps, pq, pq, T, D, T, 0, 0, T, Row, Row, PDRT_LHS_LOWER),
             dk = desc(ps, pq, pq, T, D, T, 1, 0, T, Row, Row, PDRT_LHS_UPPER);
  std::vector<float> probs; ///< P after forward()

  Attention() {
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j)
        mask[i * T + j] = j <= i;
  }
  const float *q() const { return qkv.data(); }
  const float *k() const { return qkv.data() + H * D; }
  const float *v() const { return qkv.data() + 2 * H * D; }

  /// S = Q K^T, P = softmax over it in place, O = P V.
  void forward(pdrt_ctx *ctx) {
    pdrt_batch_matmul_strided(ctx, q(), k(), scores.data(), s.data());
    pdrt_masked_softmax(ctx, scores.data(), mask.data(), scores.data(),
                        B * H * T, T, T, 1, 0.125f, PDRT_CAUSAL_BLOCK, 0);
    pdrt_batch_matmul_strided(ctx, scores.data(), v(), o.data(), pv.data());
  }
  /// dP = dO V^T, dS over it in place, dK, dV, dQ into dqkv's parts.
  void backward(pdrt_ctx *ctx, std::vector<float> &ds) {
    pdrt_batch_matmul_strided(ctx, dout.data(), v(), ds.data(), dp.data());
    pdrt_masked_softmax_grad(ctx, ds.data(), probs.data(), ds.data(), B * H * T,
                             T, 0.125f, T, PDRT_CAUSAL_BLOCK);
    pdrt_batch_matmul_strided(ctx, ds.data(), q(), dqkv.data() + H * D, dk.data());
    pdrt_batch_matmul_strided(ctx, probs.data(), dout.data(),
                              dqkv.data() + 2 * H * D, dv.data());
    pdrt_batch_matmul_strided(ctx, ds.data(), k(), dqkv.data(), dq.data());
  }
};

/// Whether ctx's groups so far all ran entry by entry (and there was one).
bool ranByEntries(const pdrt_ctx &ctx) {
  if (ctx.interleaved.checked.empty())
    return false;
  for (const auto &[key, independent] : ctx.interleaved.checked)
    if (!independent)
      return false;
  return true;
}

TEST(Interleave, AttentionForwardAndBackwardGiveTheWholeKernelsBits) {
  Attention whole, grouped;
  whole.forward(nullptr);
  pdrt_ctx ctx;
  pdrt_interleave_begin(&ctx);
  grouped.forward(&ctx);
  pdrt_interleave_end(&ctx);
  ASSERT_FALSE(ctx.failed) << ctx.error;
  EXPECT_TRUE(ranByEntries(ctx));
  EXPECT_EQ(0, std::memcmp(whole.o.data(), grouped.o.data(), whole.o.size() * 4));
  EXPECT_EQ(0, std::memcmp(whole.scores.data(), grouped.scores.data(),
                           whole.scores.size() * 4));

  whole.probs = grouped.probs = whole.scores;
  std::vector<float> dsWhole(B * H * T * T), dsGrouped(B * H * T * T);
  whole.backward(nullptr, dsWhole);
  pdrt_interleave_begin(&ctx);
  grouped.backward(&ctx, dsGrouped);
  pdrt_interleave_end(&ctx);
  ASSERT_FALSE(ctx.failed) << ctx.error;
  EXPECT_TRUE(ranByEntries(ctx));
  EXPECT_EQ(0, std::memcmp(whole.dqkv.data(), grouped.dqkv.data(),
                           whole.dqkv.size() * 4));
  EXPECT_EQ(0, std::memcmp(dsWhole.data(), dsGrouped.data(), dsWhole.size() * 4));
}

TEST(Interleave, SharedMemoryAcrossEntriesRunsWhole) {
  // dV written one head over into the memory of dO, which dP reads: entry
  // by entry, entry (b, h)'s dV would overwrite rows that entry (b, h + 1)'s
  // dP has not read yet.
  Attention whole, grouped;
  whole.forward(nullptr);
  whole.probs = grouped.probs = whole.scores;
  auto backwardOverDout = [](Attention &a, pdrt_ctx *ctx) {
    std::vector<float> ds(B * H * T * T), buf(a.dout.size() + D);
    std::copy(a.dout.begin(), a.dout.end(), buf.begin());
    if (ctx)
      pdrt_interleave_begin(ctx);
    pdrt_batch_matmul_strided(ctx, buf.data(), a.v(), ds.data(), a.dp.data());
    pdrt_masked_softmax_grad(ctx, ds.data(), a.probs.data(), ds.data(),
                             B * H * T, T, 0.125f, T, PDRT_CAUSAL_BLOCK);
    Desc dvOverDout = desc(a.ps, a.po, a.po, T, D, T, 1, 0, T, H * D, H * D,
                           PDRT_LHS_UPPER);
    pdrt_batch_matmul_strided(ctx, a.probs.data(), buf.data(), buf.data() + D,
                              dvOverDout.data());
    if (ctx)
      pdrt_interleave_end(ctx);
    return buf;
  };
  std::vector<float> expected = backwardOverDout(whole, nullptr);
  pdrt_ctx ctx;
  std::vector<float> got = backwardOverDout(grouped, &ctx);
  ASSERT_FALSE(ctx.failed) << ctx.error;
  ASSERT_EQ(1u, ctx.interleaved.checked.size());
  EXPECT_FALSE(ctx.interleaved.checked.begin()->second);
  EXPECT_EQ(0, std::memcmp(expected.data(), got.data(), got.size() * 4));
}

TEST(Interleave, CallsThatDoNotSplitAlikeRunWhole) {
  // A softmax over rows that are not B * H runs of whole masks.
  Attention whole, grouped;
  auto run = [](Attention &a, pdrt_ctx *ctx) {
    pdrt_batch_matmul_strided(ctx, a.q(), a.k(), a.scores.data(), a.s.data());
    pdrt_masked_softmax(ctx, a.scores.data(), a.mask.data(), a.scores.data(),
                        B * H * T, T, 3 * T / 2 /*rows of a longer mask*/, 1,
                        0.125f, 0, 0);
  };
  std::vector<uint8_t> longer(3 * T / 2 * T, 1);
  whole.mask = grouped.mask = longer;
  run(whole, nullptr);
  pdrt_ctx ctx;
  pdrt_interleave_begin(&ctx);
  run(grouped, &ctx);
  pdrt_interleave_end(&ctx);
  ASSERT_FALSE(ctx.failed) << ctx.error;
  EXPECT_TRUE(ctx.interleaved.checked.empty()); // never split, never checked
  EXPECT_EQ(0, std::memcmp(whole.scores.data(), grouped.scores.data(),
                           whole.scores.size() * 4));
}

/// Bidirectional attention under a padding mask of the step ([B, 1, T]:
/// batch entry b keeps its first T - 5 b keys), O = softmax(Q K^T) V,
/// O written at `out` (o's memory, or over the mask's).
std::vector<float> paddedForward(Attention &a, pdrt_ctx *ctx, bool overMask) {
  std::vector<uint8_t> padding(B * T);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < T; ++k)
      padding[b * T + k] = k < T - 5 * b;
  // The mask's bytes lead a float buffer that P V may write over.
  std::vector<float> buf(a.o.size() + B * T);
  std::memcpy(buf.data(), padding.data(), padding.size());
  const uint8_t *mask = (const uint8_t *)buf.data();
  Desc s = a.s, pv = a.pv;
  s[17] = pv[17] = PDRT_DENSE;
  if (ctx)
    pdrt_interleave_begin(ctx);
  pdrt_batch_matmul_strided(ctx, a.q(), a.k(), a.scores.data(), s.data());
  pdrt_masked_softmax(ctx, a.scores.data(), mask, a.scores.data(), B * H * T, T,
                      1, B, 0.125f, 0, 1);
  float *out = overMask ? buf.data() : a.o.data();
  pdrt_batch_matmul_strided(ctx, a.scores.data(), a.v(), out, pv.data());
  if (ctx)
    pdrt_interleave_end(ctx);
  return std::vector<float>(out, out + a.o.size());
}

TEST(Interleave, PaddingMaskOfTheStepRunsByEntriesUnlessOverwritten) {
  for (bool overMask : {false, true}) {
    Attention whole, grouped;
    std::vector<float> expected = paddedForward(whole, nullptr, overMask);
    pdrt_ctx ctx;
    std::vector<float> got = paddedForward(grouped, &ctx, overMask);
    ASSERT_FALSE(ctx.failed) << ctx.error;
    ASSERT_EQ(1u, ctx.interleaved.checked.size());
    EXPECT_EQ(!overMask, ctx.interleaved.checked.begin()->second)
        << "P V written over the mask: " << overMask;
    EXPECT_EQ(0, std::memcmp(expected.data(), got.data(), got.size() * 4));
  }
}

pdrt::EntryAccess access(bool write, std::vector<uintptr_t> bases,
                         int64_t rows = 2, int64_t rowBytes = 8,
                         int64_t ldBytes = 32) {
  pdrt::EntryAccess a;
  a.write = write, a.rows = rows, a.rowBytes = rowBytes, a.ldBytes = ldBytes;
  a.bases = std::move(bases);
  return a;
}

TEST(Interleave, EntriesIndependentRules) {
  using pdrt::entriesIndependent;
  // One tensor written by one call and read by the next, entry for entry.
  EXPECT_TRUE(entriesIndependent({access(true, {0, 8}), access(false, {0, 8})}));
  // Read by another entry than the one that wrote it.
  EXPECT_FALSE(entriesIndependent({access(true, {0, 8}), access(false, {8, 0})}));
  // Rows that overlap without being the same rows.
  EXPECT_FALSE(entriesIndependent({access(true, {0, 8}), access(false, {4, 12})}));
  // Reads may overlap anyhow.
  EXPECT_TRUE(entriesIndependent({access(false, {0, 8}), access(false, {4, 12})}));
  // Interleaved columns of one matrix (attention's heads) never meet.
  EXPECT_TRUE(entriesIndependent({access(true, {0, 8}), access(true, {16, 24})}));
  // Two entries of one call that write the same rows.
  EXPECT_FALSE(entriesIndependent({access(true, {0, 0})}));
  // ... unless the call accumulates them (a GEMM summing a group), and no
  // other call touches them.
  pdrt::EntryAccess sum = access(true, {0, 0, 64, 64});
  sum.accumulates = true;
  EXPECT_TRUE(entriesIndependent({sum, access(false, {128, 136, 144, 152})}));
  EXPECT_FALSE(entriesIndependent({sum, access(false, {0, 8, 64, 72})}));
}

TEST(Interleave, ProfiledCallsTimeOnTheirMarks) {
  Attention a;
  pdrt_ctx ctx;
  ctx.profile = true;
  pdrt_profile_mark(&ctx, 0);
  pdrt_interleave_begin(&ctx);
  pdrt_profile_mark(&ctx, 1);
  pdrt_batch_matmul_strided(&ctx, a.q(), a.k(), a.scores.data(), a.s.data());
  pdrt_profile_mark(&ctx, 2);
  pdrt_masked_softmax(&ctx, a.scores.data(), a.mask.data(), a.scores.data(),
                      B * H * T, T, T, 1, 0.125f, PDRT_CAUSAL_BLOCK, 0);
  pdrt_interleave_end(&ctx);
  pdrt_profile_mark(&ctx, -1);
  ASSERT_FALSE(ctx.failed) << ctx.error;
  EXPECT_TRUE(ranByEntries(ctx));
  // Each call's time on its mark; the last mark's own time is only the
  // recording (the group's run is not counted twice).
  double gemm = ctx.opTimes[1].first, softmax = ctx.opTimes[2].first;
  EXPECT_GT(gemm, 0.0);
  EXPECT_GT(softmax, 0.0);
  EXPECT_EQ(1, ctx.opTimes[1].second);
  EXPECT_EQ(1, ctx.opTimes[2].second);
}

} // namespace
