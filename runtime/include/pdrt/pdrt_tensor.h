/*===- pdrt_tensor.h - Kernels of tensor ops ----------------------*- C -*-===//
 *
 * The C ABI of the tensor and shape ops (transpose, copy with strides, gather/scatter, concat, where, batched matmul). Same conventions as pdrt.h: dense row-major
 * tensors in the stage arena, f32 unless stated, errors kept in ctx.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_TENSOR_H
#define PDRT_PDRT_TENSOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdrt_ctx pdrt_ctx;

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_TENSOR_H */
