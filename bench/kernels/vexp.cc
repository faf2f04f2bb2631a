// Micro-benchmark: e^x over a row in L1, SLEEF's 1-ULP exp (a call per
// vector, what vmath.cc used) against vexp.h's inlined Cephes scheme (what
// it uses now), 8 lanes; then pdrt's softmax cross-entropy with its
// gradient on the benchmark GPTs' logits ([tokens, vocab], the row
// functions built on that exp: max, expSum, scaleInDouble), from memory,
// ns per element. Single thread, best of N.
//
// Build and run: bench/kernels/run.sh vexp
#include "bench_timing.h"
#include "cpu/vexp.h"
#include "pdrt/pdrt.h"

#include <sleef.h>

#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

namespace {

AlignedVector normalVector(size_t n, float mean, float sd, unsigned seed) {
  AlignedVector v(n);
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(mean, sd);
  for (float &x : v)
    x = normal(gen);
  return v;
}

template <typename F> double nsPerElement(const AlignedVector &x, F exp8) {
  AlignedVector y(x.size());
  constexpr int kPasses = 100;
  double s = seconds([&] {
    for (int p = 0; p < kPasses; ++p)
      for (size_t i = 0; i < x.size(); i += 8)
        _mm256_store_ps(&y[i], exp8(_mm256_load_ps(&x[i])));
  }, 10);
  return s * 1e9 / (kPasses * (double)x.size());
}

void benchExp() {
  AlignedVector x = normalVector(4096, -3.0f, 3.0f, 1);
  std::printf("exp of 4096 floats in L1, ns per element (3 rounds)\n");
  for (int round = 0; round < 3; ++round)
    std::printf("  Sleef_expf8_u10 %.3f   vexp::exp8 %.3f\n",
                nsPerElement(x, [](__m256 v) { return Sleef_expf8_u10(v); }),
                nsPerElement(x, [](__m256 v) { return pdrt::vexp::exp8(v); }));
}

void benchCrossEntropy(const char *name, int64_t n, int64_t c) {
  AlignedVector logits = normalVector(n * c, 0.0f, 2.0f, 2), dlogits(n * c);
  AlignedVector evict(size_t(64) << 20 >> 2); // 64 MiB between calls
  std::vector<int64_t> labels(n);
  std::mt19937 gen(3);
  for (int64_t &l : labels)
    l = gen() % c;
  float loss;
  double best = 1e30;
  for (int r = 0; r < 10; ++r) {
    for (size_t i = 0; i < evict.size(); i += 16)
      evict[i] += 1.0f;
    auto t0 = std::chrono::steady_clock::now();
    pdrt_softmax_xent_with_grad(nullptr, logits.data(), labels.data(), &loss,
                                dlogits.data(), n, c, -100);
    best = std::min(best, std::chrono::duration<double>(
                              std::chrono::steady_clock::now() - t0)
                              .count());
  }
  std::printf("softmax cross-entropy with gradient, %s %lldx%lld: %.3f ms "
              "(%.2f ns per element)\n",
              name, (long long)n, (long long)c, best * 1e3,
              best * 1e9 / (double)(n * c));
}

} // namespace

int main() {
  benchExp();
  benchCrossEntropy("small gpt", 1024, 4096);
  benchCrossEntropy("large gpt", 2048, 4096);
}
