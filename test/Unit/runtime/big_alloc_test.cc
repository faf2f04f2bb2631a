//===- big_alloc_test.cc - Large buffers and the scratch buffer -----------===//
//
// bigAlloc's sizes and alignment on both sides of 2 MiB (whether the kernel
// backs a buffer with huge pages is its choice, so it is not asserted), and
// Scratch growing to the largest request and keeping its buffer.
//
//===----------------------------------------------------------------------===//

#include "cpu/big_alloc.h"
#include "cpu/scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace {

bool alignedTo(const void *p, size_t align) {
  return reinterpret_cast<uintptr_t>(p) % align == 0;
}

} // namespace

TEST(BigAlloc, SmallBuffersAre64ByteAligned) {
  for (size_t bytes : {size_t(1), size_t(64), size_t(100), size_t(4096),
                       pdrt::kHugePage - 1}) {
    EXPECT_EQ(pdrt::bigAllocSize(bytes), (bytes + 63) / 64 * 64) << bytes;
    void *p = pdrt::bigAlloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(alignedTo(p, 64)) << bytes;
    std::memset(p, 1, bytes);
    std::free(p);
  }
}

TEST(BigAlloc, LargeBuffersAreWholeAlignedHugePages) {
  const size_t huge = pdrt::kHugePage;
  for (size_t bytes : {huge, huge + 1, 3 * huge - 5, 5 * huge}) {
    size_t size = pdrt::bigAllocSize(bytes);
    EXPECT_EQ(size % huge, 0u) << bytes;
    EXPECT_GE(size, bytes);
    EXPECT_LT(size - bytes, huge);
    void *p = pdrt::bigAlloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(alignedTo(p, huge)) << bytes;
    std::memset(p, 1, size); // all of it is usable
    std::free(p);
  }
}

TEST(Scratch, GrowsToTheLargestRequestAndKeepsIt) {
  pdrt::Scratch scratch;
  void *small = scratch.get(1000);
  ASSERT_NE(small, nullptr);
  EXPECT_TRUE(alignedTo(small, 64));
  EXPECT_EQ(scratch.get(10), small); // a smaller request reuses it
  void *big = scratch.get(3 * pdrt::kHugePage);
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(alignedTo(big, pdrt::kHugePage));
  std::memset(big, 2, 3 * pdrt::kHugePage);
  EXPECT_EQ(scratch.get(1000), big);
  EXPECT_EQ(scratch.get(3 * pdrt::kHugePage), big);
}
