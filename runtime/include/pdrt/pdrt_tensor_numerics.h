/*===- pdrt_tensor_numerics.h - Index math of the tensor kernels -*- C++ -*-===//
 *
 * The index math of gather, GatherElements, where and the strided copies
 * of pdrt_tensor.h, and the scalar math of cast and compare:
 * header-only and free of host-only calls, so g++ (runtime/cpu) and nvcc
 * (a CUDA backend) compile the same code and the CPU tests cover it.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_TENSOR_NUMERICS_H
#define PDRT_PDRT_TENSOR_NUMERICS_H

#include "pdrt/pdrt_numerics.h"

#include <stdint.h>

#include <type_traits>

/// The slice an ONNX Gather index selects among `rows`: negative indices
/// count from the end. Returns -1 when `index` is outside [-rows, rows).
PDRT_HD int64_t pdrt_gather_row(int64_t index, int64_t rows) {
  int64_t row = index < 0 ? index + rows : index;
  return row >= 0 && row < rows ? row : -1;
}

/// The element offset of row-major linear index `linear` over the dims of
/// a descriptor [rank, dims[rank], strides_0[rank], strides_1[rank], ...]
/// through stride array `which` (0-based).
PDRT_HD int64_t pdrt_desc_offset(const int64_t *desc, int64_t linear,
                                 int which) {
  int64_t rank = desc[0], offset = 0;
  const int64_t *dims = desc + 1;
  const int64_t *strides = desc + 1 + rank * (1 + which);
  for (int64_t d = rank - 1; d >= 0; --d) {
    offset += (linear % dims[d]) * strides[d];
    linear /= dims[d];
  }
  return offset;
}

/// Writes the row-major strides (in elements) of dims[rank] into
/// strides[rank] and returns the element count.
PDRT_HD int64_t pdrt_dense_strides(int64_t rank, const int64_t *dims,
                                   int64_t *strides) {
  int64_t n = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    strides[d] = n;
    n *= dims[d];
  }
  return n;
}

/// f32 to int64 truncating toward zero (ONNX Cast); out-of-range values
/// saturate and NaN gives 0, where a plain C++ conversion is undefined.
PDRT_HD int64_t pdrt_f32_to_i64(float x) {
  return x != x ? 0
         : x >= 9223372036854775808.0f  ? INT64_MAX
         : x < -9223372036854775808.0f ? INT64_MIN
                                       : (int64_t)x;
}

/// f32 to int32 as pdrt_f32_to_i64.
PDRT_HD int32_t pdrt_f32_to_i32(float x) {
  return x != x ? 0
         : x >= 2147483648.0f  ? INT32_MAX
         : x < -2147483648.0f ? INT32_MIN
                              : (int32_t)x;
}

/// One element of pdrt_cast between the storage types of PDRT_DT_* (float,
/// int64_t, int32_t, and uint8_t for bool): to bool is != 0, from bool is
/// 0/1, f32 to an integer as pdrt_f32_to_i64/i32, the rest C++'s
/// conversions (int64 to int32 wraps, integers to f32 round to nearest).
template <typename To, typename From> PDRT_HD To pdrt_cast_value(From x) {
  if constexpr (std::is_same<To, uint8_t>::value ||
                std::is_same<From, uint8_t>::value)
    return x != 0 ? (To)1 : (To)0;
  else if constexpr (std::is_same<From, float>::value &&
                     std::is_same<To, int64_t>::value)
    return pdrt_f32_to_i64(x);
  else if constexpr (std::is_same<From, float>::value &&
                     std::is_same<To, int32_t>::value)
    return pdrt_f32_to_i32(x);
  else
    return (To)x;
}

/// One element of pdrt_compare's op `op` (PDRT_CMP_EQ/LT/LE/GT/GE, then
/// PDRT_LOGIC_AND/OR/XOR on nonzero-is-true operands) as 0 or 1.
template <typename T> PDRT_HD uint8_t pdrt_compare_apply(int32_t op, T a, T b) {
  switch (op) {
  case 0: return a == b;
  case 1: return a < b;
  case 2: return a <= b;
  case 3: return a > b;
  case 4: return a >= b;
  case 5: return (a != 0) & (b != 0);
  case 6: return (a != 0) | (b != 0);
  default: return (a != 0) != (b != 0);
  }
}

#endif /* PDRT_PDRT_TENSOR_NUMERICS_H */
