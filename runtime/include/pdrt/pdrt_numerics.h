/*===- pdrt_numerics.h - Numerics shared by the CPU and CUDA kernels -*- C++ -*-===//
 *
 * Index math of the broadcast descriptors of pdrt_binary / pdrt_sum_to, the
 * scalar math of pdrt_binary's ops and of the min/max gradient, and the
 * per-row formulas of softmax cross-entropy and RMS norm. Everything here is
 * inline, header-only and free of host-only calls, so g++ (runtime/cpu) and
 * nvcc (runtime/cuda) compile the same code and the CPU tests cover it.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_NUMERICS_H
#define PDRT_PDRT_NUMERICS_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define PDRT_HD __host__ __device__ __forceinline__
#else
#define PDRT_HD inline
#endif

/// Largest rank a broadcast descriptor may have.
#define PDRT_MAX_RANK 8

/// Number of elements of the output of a pdrt_binary descriptor
/// [rank, out_dims[rank], a_strides[rank], b_strides[rank]] (or of the input
/// of a pdrt_sum_to descriptor [rank, in_dims[rank], out_strides[rank]]).
PDRT_HD int64_t pdrt_desc_numel(const int64_t *desc) {
  int64_t rank = desc[0], n = 1;
  for (int64_t d = 0; d < rank; ++d)
    n *= desc[1 + d];
  return n;
}

/// Maps the row-major linear index `linear` over desc's dims to element
/// offsets through the stride arrays that follow the dims: `*off_a` uses
/// the first stride array, `*off_b` the second (pass NULL to skip it, as
/// pdrt_sum_to's descriptor has only one).
PDRT_HD void pdrt_desc_offsets(const int64_t *desc, int64_t linear,
                               int64_t *off_a, int64_t *off_b) {
  int64_t rank = desc[0];
  const int64_t *dims = desc + 1;
  const int64_t *sa = dims + rank;
  const int64_t *sb = sa + rank;
  int64_t oa = 0, ob = 0;
  for (int64_t d = rank - 1; d >= 0; --d) {
    int64_t i = linear % dims[d];
    linear /= dims[d];
    oa += i * sa[d];
    if (off_b)
      ob += i * sb[d];
  }
  *off_a = oa;
  if (off_b)
    *off_b = ob;
}

/// min(a, b) that propagates a NaN of either operand (torch.minimum); a
/// compare and a blend, no libm call.
PDRT_HD float pdrt_min_nan(float a, float b) {
  return (a < b || a != a) ? a : b;
}

/// max(a, b) that propagates a NaN of either operand (torch.maximum).
PDRT_HD float pdrt_max_nan(float a, float b) {
  return (a > b || a != a) ? a : b;
}

/// Applies binary op `op` (PDRT_ADD/SUB/MUL/DIV/BINARY_POW/BINARY_MIN/
/// BINARY_MAX) to one pair of elements.
PDRT_HD float pdrt_binary_apply(int32_t op, float a, float b) {
  switch (op) {
  case 0: return a + b;
  case 1: return a - b;
  case 2: return a * b;
  case 3: return a / b;
  case 5: return pdrt_min_nan(a, b);
  case 6: return pdrt_max_nan(a, b);
  default: return powf(a, b);
  }
}

/// The share of dy that operand x of min (is_max = 0) or max (is_max = 1)
/// gets against the other operand o, as torch's derivative: 0 where x
/// loses (x > o for min, x < o for max), 1/2 on ties, 1 otherwise (so a
/// NaN pair passes dy to both operands).
PDRT_HD float pdrt_minmax_grad_share(int32_t is_max, float x, float o) {
  float share = x == o ? 0.5f : 1.0f; // selects, not branches: vectorises
  int loses = is_max ? x < o : x > o;
  return loses ? 0.0f : share;
}

/// log(sum_j exp(x[j])) of one row of `c` logits, computed stably as
/// max + log(sum exp(x - max)) with the sum accumulated in double.
PDRT_HD float pdrt_row_logsumexp(const float *x, int64_t c) {
  float mx = -INFINITY;
  for (int64_t j = 0; j < c; ++j)
    mx = x[j] > mx ? x[j] : mx;
  double s = 0.0;
  for (int64_t j = 0; j < c; ++j)
    s += exp((double)(x[j] - mx));
  return mx + (float)log(s);
}

/// Cross-entropy of one row: -log softmax(x)[label] = lse - x[label].
PDRT_HD float pdrt_row_xent(const float *x, int64_t c, int64_t label) {
  return pdrt_row_logsumexp(x, c) - x[label];
}

/// Gradient of one row's cross-entropy scaled by `scale`:
/// dx[j] = scale * (softmax(x)[j] - (j == label)), softmax(x)[j] =
/// exp(x[j] - lse).
PDRT_HD void pdrt_row_xent_grad(const float *x, int64_t c, int64_t label,
                                float scale, float *dx) {
  float lse = pdrt_row_logsumexp(x, c);
  for (int64_t j = 0; j < c; ++j) {
    float p = expf(x[j] - lse);
    dx[j] = scale * (p - (j == label ? 1.0f : 0.0f));
  }
}

/// RMS norm's 1 / sqrt(mean(x^2) + eps) of a row of `c` elements whose
/// squares sum (in double) to `sum_squares`. Each kernel sums the squares
/// in its own order (the CPU's: pdrt::vmath::dot's lanes).
PDRT_HD float pdrt_rms_rstd(double sum_squares, int64_t c, float eps) {
  return (float)(1.0 / sqrt(sum_squares / (double)c + (double)eps));
}


#endif /* PDRT_PDRT_NUMERICS_H */
