//===- first_fit_test.cc - The workspace packing ---------------------------===//
//
// packFirstFit (a treap of live blocks) against the definition: scan the
// live blocks in offset order and take the first gap that fits.
//
//===----------------------------------------------------------------------===//

#include "pd/Support/ArenaRules.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir::pd;

namespace {

/// The definition, O(n^2): live blocks sorted by offset, running end.
int64_t packByScan(std::vector<LiveInterval> &intervals) {
  struct Placed {
    int64_t offset, size, end;
  };
  std::vector<Placed> live;
  int64_t peak = 0;
  for (LiveInterval &slot : intervals) {
    llvm::erase_if(live, [&](const Placed &p) { return p.end < slot.start; });
    std::sort(live.begin(), live.end(), [](const Placed &a, const Placed &b) {
      return a.offset < b.offset;
    });
    int64_t offset = 0;
    for (const Placed &p : live) {
      if (offset + slot.size <= p.offset)
        break;
      offset = std::max(offset, p.offset + p.size);
    }
    slot.offset = offset;
    live.push_back({offset, slot.size, slot.end});
    peak = std::max(peak, offset + slot.size);
  }
  return peak;
}

/// Random live ranges over `ops` op positions, one value per op, sizes
/// 0..maxUnits 64-byte units.
std::vector<LiveInterval> randomIntervals(std::mt19937 &rng, int ops,
                                          int maxUnits, int maxSpan) {
  std::vector<LiveInterval> out;
  std::uniform_int_distribution<int> units(0, maxUnits), span(0, maxSpan);
  for (int i = 0; i < ops; ++i)
    out.push_back({i, i + span(rng), 64 * units(rng), 0});
  return out;
}

} // namespace

TEST(FirstFit, MatchesTheScanOnRandomLiveRanges) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    int ops = 1 + trial % 97;
    std::vector<LiveInterval> a =
        randomIntervals(rng, ops, 1 + trial % 13, trial % 40);
    std::vector<LiveInterval> b = a;
    int64_t peakA = packFirstFit(a), peakB = packByScan(b);
    ASSERT_EQ(peakA, peakB) << "trial " << trial;
    for (size_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(a[i].offset, b[i].offset) << "trial " << trial << " value " << i;
  }
}

TEST(FirstFit, ReusesTheLowestGap) {
  // [0,128) and [128,192) live; the first dies; a 64-byte value takes 0.
  std::vector<LiveInterval> v = {
      {0, 1, 128, 0}, {1, 5, 64, 0}, {2, 5, 64, 0}, {3, 5, 192, 0}};
  EXPECT_EQ(packFirstFit(v), 128 + 64 + 192);
  EXPECT_EQ(v[2].offset, 0);
  EXPECT_EQ(v[3].offset, 192);
}

TEST(FirstFit, LongStackOfLiveValuesIsFast) {
  // A recomputing backward: 50000 values live until the end, then a long
  // tail of short-lived ones; quadratic packing would take minutes.
  std::vector<LiveInterval> v;
  for (int i = 0; i < 50000; ++i)
    v.push_back({i, 100000, 64 * (1 + i % 7), 0});
  for (int i = 50000; i < 100000; ++i)
    v.push_back({i, i + 3, 64 * (1 + i % 5), 0});
  int64_t peak = packFirstFit(v);
  int64_t stacked = 0;
  for (int i = 0; i < 50000; ++i)
    stacked += 64 * (1 + i % 7);
  EXPECT_GE(peak, stacked);
  EXPECT_LE(peak, stacked + 4 * 64 * 5);
}
