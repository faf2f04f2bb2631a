/*===- pdrt_tensor_numerics.h - Index math of the tensor kernels -*- C++ -*-===//
 *
 * The index math of gather, where and the strided copies of
 * pdrt_tensor.h: header-only and free of host-only calls, so g++
 * (runtime/cpu) and nvcc (a CUDA backend) compile the same code and the
 * CPU tests cover it.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_TENSOR_NUMERICS_H
#define PDRT_PDRT_TENSOR_NUMERICS_H

#include "pdrt/pdrt_numerics.h"

#include <stdint.h>

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

#endif /* PDRT_PDRT_TENSOR_NUMERICS_H */
