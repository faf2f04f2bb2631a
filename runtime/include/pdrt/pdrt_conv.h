/*===- pdrt_conv.h - Kernels of conv ops ----------------------*- C -*-===//
 *
 * The C ABI of the convolutional ops (conv, batch norm, pooling). Same conventions as pdrt.h: dense row-major
 * tensors in the stage arena, f32 unless stated, errors kept in ctx.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_CONV_H
#define PDRT_PDRT_CONV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdrt_ctx pdrt_ctx;

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_CONV_H */
