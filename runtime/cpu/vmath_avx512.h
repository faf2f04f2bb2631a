//===- vmath_avx512.h - The AVX-512 forms of vmath.h -------------*- C++ -*-===//
//
// Call only on CPUs with AVX-512F (vmath.cc checks).
//
//===----------------------------------------------------------------------===//

#ifndef PDRT_CPU_VMATH_AVX512_H
#define PDRT_CPU_VMATH_AVX512_H

#include <cstdint>

namespace pdrt::vmath::avx512 {

void exp(const float *x, float *y, int64_t n);
void log(const float *x, float *y, int64_t n);
void erf(const float *x, float *y, int64_t n);
void tanh(const float *x, float *y, int64_t n);
void sin(const float *x, float *y, int64_t n);
void cos(const float *x, float *y, int64_t n);
double expSum(const float *x, float shift, float *y, int64_t n,
              const float *next = nullptr);
float max(const float *x, int64_t n);
double sum(const float *x, int64_t n);
double dot(const float *a, const float *b, int64_t n);
float scaledMax(const float *x, float scale, float *y, int64_t n);
void scaleInDouble(float *x, int64_t n, double factor);

} // namespace pdrt::vmath::avx512

#endif // PDRT_CPU_VMATH_AVX512_H
