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

TEST(Partition, OneStageNeedsNoCut) {
  EXPECT_TRUE(splitOpChain(chainOf({1, 2}), 1, freeLinks(), 1).empty());
}
