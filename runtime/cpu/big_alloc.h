//===- big_alloc.h - Large buffers on transparent huge pages ------*- C++ -*-===//
//
// The arena and the kernels' scratch buffers are read by every GEMM of a
// step: on 4 KiB pages a 1024 x 1024 operand spans 1024 pages, and the
// GEMMs' strided panel reads miss the TLB. Where the kernel's transparent
// huge pages are `madvise` (Debian's default), a buffer of 2 MiB or more
// is 2 MiB-aligned and advised MADV_HUGEPAGE, so it is backed by 2 MiB
// pages; smaller buffers are 64-byte aligned as before. The small GPT's
// step ran about 2% faster at d = 1 on an Ice Lake Xeon (docs/performance.md).
// A kernel without THP ignores the advice.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_BIG_ALLOC_H
#define PDRT_CPU_BIG_ALLOC_H

#include <cstddef>
#include <cstdlib>
#include <sys/mman.h>

namespace pdrt {

constexpr size_t kHugePage = size_t(2) << 20;

/// The bytes bigAlloc(bytes) allocates: a multiple of 2 MiB from 2 MiB on,
/// of 64 below.
inline size_t bigAllocSize(size_t bytes) {
  size_t align = bytes >= kHugePage ? kHugePage : 64;
  return (bytes + align - 1) / align * align;
}

/// At least `bytes` bytes (bigAllocSize(bytes)), on huge pages from 2 MiB
/// on; free with std::free. Null when allocation fails.
inline void *bigAlloc(size_t bytes) {
  size_t size = bigAllocSize(bytes);
  bool huge = size >= kHugePage;
  void *p = std::aligned_alloc(huge ? kHugePage : 64, size ? size : 64);
  if (p && huge)
    madvise(p, size, MADV_HUGEPAGE); // advice only: failure changes nothing
  return p;
}

} // namespace pdrt

#endif // PDRT_CPU_BIG_ALLOC_H
