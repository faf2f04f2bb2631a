//===- partition_test.cc - The planner's split of an op chain -------------===//

#include "pd/Planner/Partition.h"

#include <gtest/gtest.h>

using namespace mlir::pd;

namespace {

DeviceSpec freeLinks() {
  DeviceSpec spec;
  spec.flops = 1;
  spec.memoryBandwidth = 1;
  spec.intraNodeBandwidth = spec.interNodeBandwidth = 1e30;
  spec.devicesPerNode = 8;
  return spec;
}

OpChain chainOf(std::vector<double> seconds,
                std::vector<int64_t> crossing = {}) {
  OpChain c;
  for (size_t i = 0; i < seconds.size(); ++i)
    c.opIds.push_back(10 * i); // ids need not be dense
  c.seconds = seconds;
  c.crossingBytes =
      crossing.empty() ? std::vector<int64_t>(seconds.size() + 1, 0) : crossing;
  return c;
}

} // namespace

// Heavy ends (embedding, LM head): the middle stage takes the light layers.
TEST(Partition, BalancesNonUniformOps) {
  OpChain c = chainOf({6, 1, 1, 1, 1, 1, 1, 6});
  EXPECT_EQ(splitOpChain(c, 3, freeLinks(), 1), (std::vector<int64_t>{10, 70}));
}

// Layer counts need not divide d: 5 equal layers on 2 stages split 3 + 2
// or 2 + 3 (either minimises the bottleneck of 3).
TEST(Partition, UnevenLayerCount) {
  OpChain c = chainOf({1, 1, 1, 1, 1});
  std::vector<int64_t> cuts = splitOpChain(c, 2, freeLinks(), 1);
  ASSERT_EQ(cuts.size(), 1u);
  EXPECT_TRUE(cuts[0] == 20 || cuts[0] == 30) << cuts[0];
}

// A cut where a big activation crosses costs its transfers: the split
// moves to the cheap boundary even though the compute is less balanced.
TEST(Partition, AvoidsExpensiveBoundaries) {
  DeviceSpec spec = freeLinks();
  spec.intraNodeBandwidth = 1; // one second per byte
  OpChain c = chainOf({1, 1, 1, 1}, {0, 0, 5, 0, 0});
  EXPECT_EQ(splitOpChain(c, 2, spec, 1), (std::vector<int64_t>{10}));
}

// A cut before the loss would send its fused gradient (a forward value)
// back to the LM head's gradient ops: never cut there, even where it would
// balance the stages best (the loss alone on the last stage).
TEST(Partition, NeverCutsWhereAForwardValueFlowsBack) {
  OpChain c = chainOf({1, 1, 1, 3});
  EXPECT_EQ(splitOpChain(c, 2, freeLinks(), 1), (std::vector<int64_t>{30}));
  c.flowsBack = {0, 0, 0, 1, 0};
  EXPECT_EQ(splitOpChain(c, 2, freeLinks(), 1), (std::vector<int64_t>{20}));
  EXPECT_EQ(splitOpChain(c, 3, freeLinks(), 1), (std::vector<int64_t>{10, 20}));
}

TEST(Partition, OneStageNeedsNoCut) {
  EXPECT_TRUE(splitOpChain(chainOf({1, 2}), 1, freeLinks(), 1).empty());
}

namespace {

/// The slowest stage of `cuts` (op ids) on `c`: its ops plus the transfers
/// at both its cuts.
double bottleneck(const OpChain &c, const std::vector<int64_t> &cuts,
                  const DeviceSpec &spec) {
  std::vector<int64_t> at = {0};
  for (int64_t id : cuts)
    at.push_back(id / 10);
  at.push_back(c.opIds.size());
  auto comm = [&](int64_t p) {
    return p == 0 || p == (int64_t)c.opIds.size()
               ? 0.0
               : 2 * spec.transferSeconds(c.crossingBytes[p], 0, 1);
  };
  double worst = 0;
  for (size_t s = 0; s + 1 < at.size(); ++s) {
    double t = comm(at[s]) + comm(at[s + 1]);
    for (int64_t i = at[s]; i < at[s + 1]; ++i)
      t += c.seconds[i];
    worst = std::max(worst, t);
  }
  return worst;
}

/// The exact optimum over every cut position, O(d n^2).
double exactBottleneck(const OpChain &c, int64_t d, const DeviceSpec &spec) {
  int64_t n = c.opIds.size();
  std::vector<double> prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + c.seconds[i];
  auto comm = [&](int64_t p) {
    return p == 0 || p == n ? 0.0
                            : 2 * spec.transferSeconds(c.crossingBytes[p], 0, 1);
  };
  const double inf = 1e300;
  std::vector<double> f(n + 1, inf), g(n + 1, inf);
  for (int64_t j = 1; j <= n; ++j)
    f[j] = prefix[j] + comm(j);
  for (int64_t k = 2; k <= d; ++k) {
    std::fill(g.begin(), g.end(), inf);
    for (int64_t j = k; j <= n; ++j)
      for (int64_t i = k - 1; i < j; ++i)
        g[j] = std::min(g[j], std::max(f[i], prefix[j] - prefix[i] + comm(i) +
                                                 comm(j)));
    std::swap(f, g);
  }
  return f[n];
}

} // namespace

// A chain longer than the DP's candidates (a deep transformer): cuts are
// chosen among window minima of the crossing bytes, then refined exactly
// within a band on the full chain; the result is within 1% of the exact
// optimum over every position.
TEST(Partition, LongChainsStayNearTheExactOptimum) {
  DeviceSpec spec = freeLinks();
  spec.intraNodeBandwidth = spec.interNodeBandwidth = 1e6;
  uint64_t x = 12345;
  auto random = [&]() {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return double(x >> 11) / double(1ULL << 53);
  };
  for (int64_t d : {4, 8, 16}) {
    int64_t n = 5000;
    std::vector<double> seconds(n);
    std::vector<int64_t> crossing(n + 1, 0);
    for (int64_t i = 0; i < n; ++i) {
      seconds[i] = 1 + random();
      crossing[i] = (int64_t)(1e5 * random());
    }
    OpChain c = chainOf(seconds, crossing);
    std::vector<int64_t> cuts = splitOpChain(c, d, spec, 1);
    ASSERT_EQ((int64_t)cuts.size(), d - 1);
    double exact = exactBottleneck(c, d, spec);
    EXPECT_LE(bottleneck(c, cuts, spec), exact * 1.01) << "d = " << d;
  }
}

// A stage's time scale (pdc --calibrate) weighs its ops: eight equal ops
// split 4 + 4 at equal speeds, 6 + 2 when the second stage runs its ops 3x
// slower than the first (3 x 2 = 1 x 6 balanced); a scale of another
// depth is ignored.
TEST(Partition, StageTimeScaleMovesTheCut) {
  OpChain c = chainOf({1, 1, 1, 1, 1, 1, 1, 1});
  EXPECT_EQ(splitOpChain(c, 2, freeLinks(), 1, {1.0, 1.0}),
            (std::vector<int64_t>{40}));
  EXPECT_EQ(splitOpChain(c, 2, freeLinks(), 1, {0.5, 1.5}),
            (std::vector<int64_t>{60}));
  EXPECT_EQ(splitOpChain(c, 2, freeLinks(), 1, {1.5, 0.5}),
            (std::vector<int64_t>{20}));
  EXPECT_EQ(splitOpChain(c, 2, freeLinks(), 1, {0.5, 1.0, 1.5}),
            (std::vector<int64_t>{40}));
}

// Long chains cut at candidate positions and refine on the full chain
// with the same scales: 4000 equal ops, the last of 4 stages 2x slower.
TEST(Partition, StageTimeScaleOnLongChains) {
  OpChain c = chainOf(std::vector<double>(4000, 1.0));
  std::vector<int64_t> cuts = splitOpChain(c, 4, freeLinks(), 1,
                                           {0.875, 0.875, 0.875, 1.75});
  // Balanced: 3 stages of 1142.9 ops at 0.875 and one of 571.4 at 1.75.
  ASSERT_EQ(cuts.size(), 3u);
  EXPECT_NEAR(cuts[2] / 10, 3429, 2);
}
