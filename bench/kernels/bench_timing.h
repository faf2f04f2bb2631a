// Best-of-N wall time of a kernel call, for the bench/kernels programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>

/// The fastest of `reps` timed calls of f (after one warm-up call), in seconds.
inline double seconds(const std::function<void()> &f, int reps) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  return best;
}
