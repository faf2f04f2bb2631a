// Best-of-N wall time of a kernel call, for the bench/kernels programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

/// The fastest of `reps` timed calls of f (after one warm-up call), in
/// seconds; `before`, if given, runs untimed before each timed call.
inline double seconds(const std::function<void()> &f, int reps,
                      const std::function<void()> &before = nullptr) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    if (before)
      before();
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  return best;
}

#include <cstdlib>
#include <new>
#include <vector>

/// Storage on 64-byte boundaries, where pdc's arena places every tensor.
/// std::vector's own sits 16 bytes past a cache line, and oneDNN's sgemm
/// runs some shapes up to 25% slower on such operands (2048 x 512 x 1536
/// NN: 143 against 190 GFLOP/s), so kernels are timed on AlignedVector.
template <typename T> struct AlignedAllocator {
  using value_type = T;
  AlignedAllocator() = default;
  template <typename U> AlignedAllocator(const AlignedAllocator<U> &) {}
  T *allocate(size_t n) {
    size_t bytes = (n * sizeof(T) + 63) / 64 * 64;
    if (void *p = std::aligned_alloc(64, bytes ? bytes : 64))
      return static_cast<T *>(p);
    throw std::bad_alloc();
  }
  void deallocate(T *p, size_t) { std::free(p); }
  template <typename U> bool operator==(const AlignedAllocator<U> &) const {
    return true;
  }
  template <typename U> bool operator!=(const AlignedAllocator<U> &) const {
    return false;
  }
};

using AlignedVector = std::vector<float, AlignedAllocator<float>>;
