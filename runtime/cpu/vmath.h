//===- vmath.h - Vectorised transcendental functions on arrays ---*- C++ -*-===//
//
// y[i] = f(x[i]) for the functions the elementwise kernels spend their time
// in, computed 16 (AVX-512) or 8 (AVX2) lanes at a time with SLEEF's 1-ULP
// functions (exp: vexp.h's, inlined) instead of one scalar libm call per
// element (whose speed also depends on the argument, so measured op costs
// drifted as training moved the activations). In place (x == y) is
// allowed.
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_VMATH_H
#define PDRT_CPU_VMATH_H

#include <cstdint>

namespace pdrt::vmath {

void exp(const float *x, float *y, int64_t n);
void log(const float *x, float *y, int64_t n);
void erf(const float *x, float *y, int64_t n);
void tanh(const float *x, float *y, int64_t n);
void sin(const float *x, float *y, int64_t n);
void cos(const float *x, float *y, int64_t n);

/// The largest of x[0..n) (n >= 1), 8 or 16 lanes at a time; exact whatever the
/// order (x holds no NaN).
float max(const float *x, int64_t n);

/// The sum of x[0..n) in double: 16 running sums (lane i adds x[i], x[i+16],
/// ...), then combined pairwise. The order is fixed by n alone, so every
/// kernel summing the same row gets the same bits.
double sum(const float *x, int64_t n);

/// y[i] = exp(x[i] - shift) over x[0..n) (y may be x; null: not stored)
/// and the sum of the y[i] in vmath::sum's order, in one pass: the same
/// bits as exp of the shifted row followed by sum. With `next` (the next
/// row of a kernel that reads its rows from memory once and then from L1)
/// its first n floats are prefetched, one cache line per 16 elements,
/// while the exponentials compute (the AVX-512 form).
double expSum(const float *x, float shift, float *y, int64_t n,
              const float *next = nullptr);

/// y[i] = scale * x[i] over x[0..n) (n >= 1; y may be x) and the largest
/// y[i], in one pass: the bits of the product followed by max.
float scaledMax(const float *x, float scale, float *y, int64_t n);

/// x[i] = (float)(x[i] * factor), the product in double, over x[0..n).
void scaleInDouble(float *x, int64_t n, double factor);

/// The last step of sum's order: lanes[0..16) combined pairwise (lane j
/// adds lane j + 8, then j + 4, ...).
inline double combineLanes(double *lanes) {
  for (int width = 8; width >= 1; width /= 2)
    for (int j = 0; j < width; ++j)
      lanes[j] += lanes[j + width];
  return lanes[0];
}

/// The dot product of a[0..n) and b[0..n) in double, in vmath::sum's
/// order (lane i adds a[i] b[i], a[i+16] b[i+16], ...; the float products
/// are exact in double). Rows that differ only by trailing zeros get the
/// same bits.
double dot(const float *a, const float *b, int64_t n);

/// Whether the CPU has AVX-512F and DQ (whatever useAvx512 says).
bool cpuHasAvx512();

/// Whether the AVX-512 kernels run: the CPU has AVX-512F and DQ, checked
/// once at start-up, unless useAvx512(false) turned them off.
bool hasAvx512();

/// Turns the AVX-512 kernels off (tests of the AVX2 forms) or back on
/// where the CPU has them. Not thread-safe: call before any kernel runs.
void useAvx512(bool on);

/// Elements per chunk for kernels that stage arguments in a local buffer.
constexpr int64_t kChunk = 1024;

} // namespace pdrt::vmath

#endif // PDRT_CPU_VMATH_H
