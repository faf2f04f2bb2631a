/*===- pdrt_nn.h - Kernels of nn ops ----------------------*- C -*-===//
 *
 * The C ABI of the neural-network math (unary math, reductions, softmax, layer norm, dropout). Same conventions as pdrt.h: dense row-major
 * tensors in the stage arena, f32 unless stated, errors kept in ctx.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_NN_H
#define PDRT_PDRT_NN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdrt_ctx pdrt_ctx;

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_NN_H */
