//===- random_data.h - Seeded random tensors for kernel tests ---*- C++ -*-===//

#ifndef PDRT_TEST_RANDOM_DATA_H
#define PDRT_TEST_RANDOM_DATA_H

#include <random>
#include <vector>

namespace pdtest {

/// n floats drawn from N(0, stddev^2) by a Mersenne Twister seeded with
/// `seed` (the same values on every run and machine).
inline std::vector<float> randomVector(size_t n, unsigned seed,
                                       float stddev = 1.0f) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// n floats drawn uniformly from [lo, hi) by a Mersenne Twister seeded
/// with `seed`.
inline std::vector<float> uniformVector(size_t n, float lo, float hi,
                                        unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

} // namespace pdtest

#endif // PDRT_TEST_RANDOM_DATA_H
