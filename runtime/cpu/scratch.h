//===- scratch.h - A thread's grow-on-demand aligned buffer ------*- C++ -*-===//
//
// Scratch memory outside the arena for kernels that stage an operand
// (oneDNN's blocked layouts in conv_onednn.cc, the transposed product of
// sgemm_tn.cc): 64-byte aligned (on huge pages from 2 MiB on, big_alloc.h),
// grown to the largest request so far and kept, so a plan's steady state
// allocates nothing.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_SCRATCH_H
#define PDRT_CPU_SCRATCH_H

#include "cpu/big_alloc.h"

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace pdrt {

class Scratch {
public:
  /// At least `bytes` bytes, 64-byte aligned; null if allocation failed.
  void *get(size_t bytes) {
    if (bytes > size_) {
      data_.reset(bigAlloc(bytes));
      size_ = data_ ? bigAllocSize(bytes) : 0;
    }
    return data_.get();
  }

private:
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  std::unique_ptr<void, Free> data_;
  size_t size_ = 0;
};

} // namespace pdrt

#endif // PDRT_CPU_SCRATCH_H
