/*===- pdrt_tensor.h - Kernels of tensor ops ----------------------*- C -*-===//
 *
 * The C ABI of the tensor and shape ops: strided copies (transpose, slice,
 * broadcast_to), their inverse (slice gradients, concat; any element type
 * through pdrt_scatter_any), gather and GatherElements with their
 * scatter-add gradients, where (pdrt_where_any for any element type),
 * constant padding of any element type, batched matmul, and the
 * element-type-aware kernels: cast, comparisons and logic ops with
 * broadcasting, and logical not. Same conventions as pdrt.h: dense
 * row-major tensors in the stage arena, f32 unless stated, errors kept in
 * ctx. Index and scalar math shared with other backends is in
 * pdrt_tensor_numerics.h.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_TENSOR_H
#define PDRT_PDRT_TENSOR_H

#include <stdint.h>

#include "pdrt/pdrt_codes.h"

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

/// pdrt_scatter for elements of `elem_size` bytes (1, 4 or 8): y (of
/// `y_numel` elements) is zeroed first when `zero_first`, then
/// y[base + offset(i)] = x[i]. Concatenates int64 and bool tensors.
void pdrt_scatter_any(pdrt_ctx *ctx, const void *x, void *y, int64_t y_numel,
                      int64_t base, const int64_t *desc, int32_t zero_first,
                      int64_t elem_size);

/// out = cond ? a : b with numpy broadcasting; cond holds one byte per
/// element. `desc` is [rank, out_dims[rank], cond_strides[rank],
/// a_strides[rank], b_strides[rank]].
void pdrt_where(pdrt_ctx *ctx, const uint8_t *cond, const float *a,
                const float *b, float *out, const int64_t *desc);

/// pdrt_where for a, b and out of `elem_size`-byte elements (1, 4 or 8:
/// bool, int32, int64, or f32 moved as bits); same descriptor.
void pdrt_where_any(pdrt_ctx *ctx, const uint8_t *cond, const void *a,
                    const void *b, void *out, const int64_t *desc,
                    int64_t elem_size);

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

/// The gradient of pdrt_gather on f32 data: adds dout[o, i, :] into
/// ddata[o, idx[i], :] of ddata [outer, rows, inner] for every o and i, in
/// that order, so repeated indices accumulate; with `zero_first`
/// (pdrt_scatter_mode) ddata is zeroed first, else it is added to as it is
/// (an embedding's gradient straight into its accumulator). Index errors as
/// pdrt_gather.
void pdrt_gather_grad(pdrt_ctx *ctx, const float *dout, const int64_t *idx,
                      float *ddata, int64_t outer, int64_t n, int64_t rows,
                      int64_t inner, int32_t zero_first);

/// ONNX GatherElements: out (idx's shape) at position i = (i_0, ..., i_{r-1})
/// is data at i with coordinate `axis` replaced by idx[i]. `desc` is
/// [rank, axis, data_dims[rank], idx_dims[rank]] with 1 <= rank <= 8, axis
/// in [-rank, rank) (negative counts from the end) and idx_dims[d] <=
/// data_dims[d] off the axis; elements have `elem_size` bytes (1, 4 or 8).
/// Negative indices count from the end; an index outside [-dim, dim) is a
/// ctx error naming it and its flat position in idx (nothing is written).
void pdrt_gather_elements(pdrt_ctx *ctx, const void *data, const int64_t *idx,
                          void *out, const int64_t *desc, int64_t elem_size);

/// The gradient of pdrt_gather_elements on f32 data: zeroes ddata (data's
/// shape) and adds dout[i] into ddata at the element pdrt_gather_elements
/// read for position i, so repeated indices accumulate. Same descriptor
/// and errors.
void pdrt_gather_elements_grad(pdrt_ctx *ctx, const float *dout,
                               const int64_t *idx, float *ddata,
                               const int64_t *desc);

/// Constant padding of x into y for elements of `elem_size` bytes (1, 4 or
/// 8): y[begin + i] = x[i], every other element of y holds the low
/// `elem_size` bytes of `value_bits` (little-endian: an f32's bit pattern,
/// an int64's value, 0 or 1 for bool). `desc` is pdrt_pad's [rank,
/// x_dims[rank], y_dims[rank], begin[rank]]; x must fit inside y
/// (0 <= begin[d], begin[d] + x_dims[d] <= y_dims[d]).
void pdrt_pad_value(pdrt_ctx *ctx, const void *x, void *y, const int64_t *desc,
                    int64_t elem_size, int64_t value_bits);

/// ONNX Cast of n elements from element type `from` to `to` (PDRT_DT_*):
/// f32 to an integer truncates toward zero (saturating at the type's
/// limits, NaN gives 0), int64 to int32 wraps, anything to bool is != 0
/// (NaN is true), bool to anything is 0 or 1; from == to copies.
void pdrt_cast(pdrt_ctx *ctx, const void *x, void *y, int64_t n, int32_t from,
               int32_t to);

/// out[i] = a (op) b as a 0/1 byte with numpy broadcasting, a and b of
/// element type `dtype` (PDRT_DT_*); `desc` is pdrt_binary's [rank,
/// out_dims[rank], a_strides[rank], b_strides[rank]]. Comparisons with a
/// NaN are false (EQ included). PDRT_LOGIC_AND / OR / XOR need
/// PDRT_DT_BOOL operands (any nonzero byte is true); other dtypes are a
/// ctx error.
void pdrt_compare(pdrt_ctx *ctx, int32_t op, const void *a, const void *b,
                  uint8_t *out, const int64_t *desc, int32_t dtype);

/// Logical not of n bools: y[i] = x[i] == 0 ? 1 : 0.
void pdrt_not(pdrt_ctx *ctx, const uint8_t *x, uint8_t *y, int64_t n);

/// For b < batch: C_b[m,n] = op(A_b) op(B_b) with the matrices of each
/// operand stored contiguously one after the other (as pdrt_matmul).
void pdrt_batch_matmul(pdrt_ctx *ctx, const float *a, const float *b,
                       float *c, int64_t batch, int64_t m, int64_t n,
                       int64_t k, int32_t trans_a, int32_t trans_b);

/// pdrt_batch_matmul over strided operands: `desc` is [rank, dims[rank],
/// a_strides[rank], b_strides[rank], c_strides[rank], m, n, k, trans_a,
/// trans_b, lda, ldb, ldc, triangle] for the `rank` batch dims (element
/// strides of each batch dim in A, B and C) and one row-major GEMM per
/// batch index, C = op(A) op(B) with leading dimensions lda, ldb, ldc.
/// Attention reads its heads out of [batch, seq, heads, dim] tensors this
/// way, and writes them back, without transposing copies. `triangle`
/// (pdrt_codes.h pdrt_triangle) names the blocks a causal mask lets the
/// GEMM skip: PDRT_RESULT_LOWER leaves C's blocks above the diagonal
/// unwritten. An operand may step 0 along a batch dim (grouped-query
/// attention's shared K and V heads); where C steps 0 along a batch dim of
/// more than one entry, those entries' products are summed into one C in
/// the order of the entries: the entry at index 0 along every such dim
/// writes C, the others add to it (their skipped triangle blocks left as
/// they are).
void pdrt_batch_matmul_strided(pdrt_ctx *ctx, const float *a, const float *b,
                               float *c, const int64_t *desc);

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_TENSOR_H */
