//===- dropout_test.cc - Philox4x32-10 and pdrt_dropout ---------------------===//
//
// The generator against the known-answer vectors of Random123 (kat_vectors:
// philox4x32_10), and the dropout kernel's contract: the same key gives the
// same mask (so the same call on dy is the gradient), each key component
// changes it, and the kept fraction and scale are right.
//
//===----------------------------------------------------------------------===//

#include "exec/context.h"
#include "pdrt/pdrt.h"
#include "pdrt/pdrt_nn.h"
#include "pdrt/pdrt_random.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

void expectPhilox(pdrt_philox4 c, uint32_t k0, uint32_t k1, pdrt_philox4 want) {
  pdrt_philox4 got = pdrt_philox4x32_10(c, k0, k1);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(got.v[i], want.v[i]) << "word " << i;
}

TEST(Philox, Random123KnownAnswers) {
  expectPhilox({{0, 0, 0, 0}}, 0, 0,
               {{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}});
  expectPhilox({{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}},
               0xffffffffu, 0xffffffffu,
               {{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}});
  expectPhilox({{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}},
               0xa4093822u, 0x299f31d0u,
               {{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}});
}

/// A stage context for step t, microbatch i of replica r (m and W given).
struct Ctx {
  pdrt::Manifest manifest;
  pdrt_ctx ctx;
  Ctx(uint64_t seed, int64_t m, int w, int64_t t, int64_t i, int r) {
    manifest.microbatches = m;
    manifest.replicas = w;
    ctx.manifest = &manifest;
    ctx.seed = seed;
    ctx.microbatch = t * m + i;
    ctx.replica = r;
  }
};

std::vector<float> drop(pdrt_ctx *ctx, const std::vector<float> &x, float p,
                        int64_t id) {
  std::vector<float> y(x.size());
  pdrt_dropout(ctx, x.data(), y.data(), (int64_t)x.size(), p, id);
  return y;
}

TEST(Dropout, SameKeySameMaskAndEachKeyPartMatters) {
  std::vector<float> x(1003, 1.0f);
  Ctx a(7, 4, 2, 3, 1, 1);
  std::vector<float> y = drop(&a.ctx, x, 0.25f, 5);
  EXPECT_EQ(y, drop(&a.ctx, x, 0.25f, 5));
  int kept = 0;
  for (float v : y) {
    EXPECT_TRUE(v == 0.0f || v == 1.0f / 0.75f);
    kept += v != 0.0f;
  }
  EXPECT_NEAR(kept / 1003.0, 0.75, 0.05);
  EXPECT_NE(y, drop(&a.ctx, x, 0.25f, 6));           // rng_id
  Ctx seed(8, 4, 2, 3, 1, 1), step(7, 4, 2, 4, 1, 1), mb(7, 4, 2, 3, 2, 1),
      replica(7, 4, 2, 3, 1, 0);
  for (Ctx *c : {&seed, &step, &mb, &replica})
    EXPECT_NE(y, drop(&c->ctx, x, 0.25f, 5));
}

TEST(Dropout, KeyIsTheMicrobatchPositionInTheRun) {
  // Microbatch 1 of replica 1 at step 3 with m=4, W=2 is the run's
  // microbatch 3*8 + 4 + 1 = 29, as microbatch 5 of replica 0 with m=8, W=1.
  std::vector<float> x(64, 2.0f);
  Ctx w2(7, 4, 2, 3, 1, 1), w1(7, 8, 1, 3, 5, 0);
  EXPECT_EQ(pdrt::microbatchKey(&w2.ctx), 29u);
  EXPECT_EQ(drop(&w2.ctx, x, 0.5f, 0), drop(&w1.ctx, x, 0.5f, 0));
}

TEST(Dropout, GradientIsTheSameMaskOnDy) {
  Ctx a(1, 2, 1, 0, 1, 0);
  std::vector<float> x = {1, -2, 3, 4, 5, 6, 7, 8, 9}, dy(9, 1.0f);
  std::vector<float> y = drop(&a.ctx, x, 0.5f, 2), dx = drop(&a.ctx, dy, 0.5f, 2);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(y[i], x[i] * dx[i]);
}

} // namespace
