/*===- pdrt_tensor.h - Kernels of tensor ops ----------------------*- C -*-===//
 *
 * The C ABI of the tensor and shape ops: strided copies (transpose, slice,
 * broadcast_to), their inverse (slice gradients, concat), gather and its
 * scatter-add gradient, where and batched matmul. Same conventions as
 * pdrt.h: dense row-major tensors in the stage arena, f32 unless stated,
 * errors kept in ctx. Index math shared with other backends is in
 * pdrt_tensor_numerics.h.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_TENSOR_H
#define PDRT_PDRT_TENSOR_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdrt_ctx pdrt_ctx;

/// y = x read through strides: `desc` is [rank, out_dims[rank],
/// x_strides[rank]] in elements of `elem_size` bytes (1, 4 or 8). A
/// transpose passes the input's strides permuted, a slice its strides times
/// the steps (negative for negative steps) from an offset x, broadcast_to
/// stride 0 on broadcast dimensions.
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

/// ONNX Gather of `n` indices along one axis, data seen as [outer, rows,
/// inner] elements of `elem_size` bytes (1, 4 or 8) and out as [outer, n,
/// inner]: out[o, i, :] = data[o, idx[i], :]. Negative indices count from
/// the end; an index outside [-rows, rows) is a ctx error naming it and its
/// position (out is then left partly written).
void pdrt_gather(pdrt_ctx *ctx, const void *data, const int64_t *idx,
                 void *out, int64_t outer, int64_t n, int64_t rows,
                 int64_t inner, int64_t elem_size);

/// The gradient of pdrt_gather on f32 data: zeroes ddata [outer, rows,
/// inner] and adds dout[o, i, :] into ddata[o, idx[i], :] for every o and
/// i, so repeated indices accumulate. Index errors as pdrt_gather.
void pdrt_gather_grad(pdrt_ctx *ctx, const float *dout, const int64_t *idx,
                      float *ddata, int64_t outer, int64_t n, int64_t rows,
                      int64_t inner);

/// For b < batch: C_b[m,n] = op(A_b) op(B_b) with the matrices of each
/// operand stored contiguously one after the other (as pdrt_matmul).
void pdrt_batch_matmul(pdrt_ctx *ctx, const float *a, const float *b,
                       float *c, int64_t batch, int64_t m, int64_t n,
                       int64_t k, int32_t trans_a, int32_t trans_b);

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_TENSOR_H */
