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

/// y = x read through strides: `desc` is [rank, out_dims[rank],
/// x_strides[rank]] in elements of `elem_size` bytes (4 or 8). A transpose
/// passes the input's strides permuted.
void pdrt_permute(pdrt_ctx *ctx, const void *x, void *y, const int64_t *desc,
                  int64_t elem_size);

/// The inverse of pdrt_permute: y[base + offset(i)] = x[i] for the offsets
/// that `desc` ([rank, x_dims[rank], y_strides[rank]], f32 elements) gives;
/// when `zero_first`, y (of `y_numel` floats) is zeroed first. Slice
/// gradients and concatenation write through it.
void pdrt_scatter(pdrt_ctx *ctx, const float *x, float *y, int64_t y_numel,
                  int64_t base, const int64_t *desc, int32_t zero_first);

/// out = cond ? a : b with numpy broadcasting; cond holds one byte per
/// element. `desc` is [rank, out_dims[rank], cond_strides[rank],
/// a_strides[rank], b_strides[rank]].
void pdrt_where(pdrt_ctx *ctx, const uint8_t *cond, const float *a,
                const float *b, float *out, const int64_t *desc);

/// The gradient of one branch of where: dx = (cond != negate) ? dy : 0, dx
/// of dy's shape; `desc` is [rank, dy_dims[rank], cond_strides[rank]].
void pdrt_where_grad(pdrt_ctx *ctx, const float *dy, const uint8_t *cond,
                     float *dx, const int64_t *desc, int32_t negate);

/// out[i, :] = data[idx[i], :] for i < n, rows of `row_size` floats; data
/// has `rows` rows; negative indices count from the end; an index outside
/// [-rows, rows) is a ctx error naming it.
void pdrt_gather(pdrt_ctx *ctx, const float *data, const int64_t *idx,
                 float *out, int64_t n, int64_t rows, int64_t row_size);

/// The forward gathered out[i, :] = data[idx[i], :]; this zeroes ddata
/// [rows, row_size] and adds dout[i, :] into row idx[i] for every i.
void pdrt_gather_grad(pdrt_ctx *ctx, const float *dout, const int64_t *idx,
                      float *ddata, int64_t n, int64_t rows,
                      int64_t row_size);

/// For b < batch: C_b[m,n] = op(A_b) op(B_b) with the matrices of each
/// operand stored contiguously one after the other (as pdrt_matmul).
void pdrt_batch_matmul(pdrt_ctx *ctx, const float *a, const float *b,
                       float *c, int64_t batch, int64_t m, int64_t n,
                       int64_t k, int32_t trans_a, int32_t trans_b);

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_TENSOR_H */
