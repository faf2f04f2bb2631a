//===- strided_runs_test.cc - forEachRun against per-element offsets -------===//
//
// pdrt::forEachRun (runtime/cpu/strided_runs.h) merges contiguous dims and
// walks runs with an odometer; every element it visits must have the offsets
// pdrt_desc_offset computes for its linear index, for random shapes with
// size-1 and size-0 dims, broadcast (zero), negative and permuted strides.
//
//===----------------------------------------------------------------------===//

#include "cpu/strided_runs.h"
#include "pdrt/pdrt_tensor_numerics.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

/// A random descriptor with `operands` stride arrays.
std::vector<int64_t> randomDesc(std::mt19937 &rng, int operands) {
  int64_t rank = std::uniform_int_distribution<int>(0, PDRT_MAX_RANK)(rng);
  std::vector<int64_t> desc{rank};
  for (int64_t d = 0; d < rank; ++d)
    desc.push_back(std::uniform_int_distribution<int>(rng() % 23 ? 1 : 0, 3)(rng));
  for (int k = 0; k < operands; ++k) {
    // Dense row-major strides, then some dims broadcast, negated or swapped.
    std::vector<int64_t> s(rank);
    int64_t step = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      s[d] = step;
      step *= std::max<int64_t>(desc[1 + d], 1);
    }
    for (int64_t d = 0; d < rank; ++d) {
      int pick = rng() % 6;
      if (pick == 0)
        s[d] = 0;
      else if (pick == 1)
        s[d] = -s[d];
      else if (pick == 2 && rank > 1)
        std::swap(s[d], s[rng() % rank]);
    }
    desc.insert(desc.end(), s.begin(), s.end());
  }
  return desc;
}

template <int N> void checkAgainstOffsets(const std::vector<int64_t> &desc) {
  int64_t total = pdrt_desc_numel(desc.data()), visited = 0;
  pdrt::forEachRun<N>(desc.data(), [&](const pdrt::StridedRun<N> &run) {
    ASSERT_EQ(run.linear, visited);
    for (int64_t j = 0; j < run.count; ++j)
      for (int k = 0; k < N; ++k)
        ASSERT_EQ(run.offset[k] + j * run.stride[k],
                  pdrt_desc_offset(desc.data(), run.linear + j, k))
            << "operand " << k << " element " << run.linear + j;
    visited += run.count;
  });
  EXPECT_EQ(visited, total);
}

TEST(StridedRuns, MatchesPerElementOffsetsOnRandomDescriptors) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    checkAgainstOffsets<1>(randomDesc(rng, 1));
    checkAgainstOffsets<2>(randomDesc(rng, 2));
    checkAgainstOffsets<3>(randomDesc(rng, 3));
  }
}

TEST(StridedRuns, MergesContiguousDimsIntoOneRun) {
  // [2, 3, 4] dense for both operands: one run of 24.
  std::vector<int64_t> desc{3, 2, 3, 4, 12, 4, 1, 12, 4, 1};
  int runs = 0;
  pdrt::forEachRun<2>(desc.data(), [&](const pdrt::StridedRun<2> &run) {
    ++runs;
    EXPECT_EQ(run.count, 24);
  });
  EXPECT_EQ(runs, 1);
}

TEST(StridedRuns, RankZeroIsOneElementAndEmptyShapesNone) {
  std::vector<int64_t> scalar{0};
  int runs = 0;
  pdrt::forEachRun<1>(scalar.data(), [&](const pdrt::StridedRun<1> &run) {
    ++runs;
    EXPECT_EQ(run.count, 1);
    EXPECT_EQ(run.offset[0], 0);
  });
  EXPECT_EQ(runs, 1);
  std::vector<int64_t> empty{2, 3, 0, 0, 1};
  pdrt::forEachRun<1>(empty.data(), [&](const pdrt::StridedRun<1> &) { ++runs; });
  EXPECT_EQ(runs, 1);
}

} // namespace
