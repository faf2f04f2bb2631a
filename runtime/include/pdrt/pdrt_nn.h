/*===- pdrt_nn.h - Kernels of nn ops ----------------------*- C -*-===//
 *
 * The C ABI of the neural-network math (unary math including cos and sin,
 * GELU, dropout, broadcast, softmax, layer norm and RMS norm). Same
 * conventions as pdrt.h: dense row-major tensors in the stage arena, f32
 * unless stated, errors kept in ctx.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_NN_H
#define PDRT_PDRT_NN_H

#include <stdint.h>

#include "pdrt/pdrt_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdrt_ctx pdrt_ctx;


/// y[i] = f(x[i]) for the function `kind`; PDRT_POW computes x^alpha.
void pdrt_unary(pdrt_ctx *ctx, int32_t kind, float alpha, const float *x,
                float *y, int64_t n);

/// dx[i] = dy[i] * f'(x[i]) for the forward y = f(x) of `kind` (x and y are
/// the forward's input and output; PDRT_POW's exponent is alpha; PDRT_COS,
/// PDRT_SIN and PDRT_SILU use only x: -sin(x), cos(x) and s (1 + x (1 - s))
/// with s = sigmoid(x)).
void pdrt_unary_grad(pdrt_ctx *ctx, int32_t kind, float alpha,
                     const float *dy, const float *x, const float *y,
                     float *dx, int64_t n);

/// Gated SiLU: y[i] = silu(gate[i]) * up[i], silu(g) = g sigmoid(g): the
/// bits of pdrt_unary PDRT_SILU on gate times up.
void pdrt_swiglu(pdrt_ctx *ctx, const float *gate, const float *up, float *y,
                 int64_t n);

/// Its gradient, s = sigmoid(gate[i]) recomputed: dgate[i] = dy[i] up[i]
/// s (1 + gate[i] (1 - s)), dup[i] = dy[i] silu(gate[i]) (pdrt_swiglu's
/// bits of it). dgate may be dy.
void pdrt_swiglu_grad(pdrt_ctx *ctx, const float *dy, const float *gate,
                      const float *up, float *dgate, float *dup, int64_t n);

/// Rotary position embedding over the first `rotated` columns (even, h =
/// rotated / 2) of x viewed as [rows, dim]: y[i] = x[i] cos[i] - x[i + h]
/// sin[i] and y[i + h] = x[i + h] cos[i + h] + x[i] sin[i + h] for i < h
/// (x cos + rotate_half(x) sin), y[j] = x[j] for rotated <= j < dim
/// (partial rotary), with cos and sin the rows of [table_rows, rotated]
/// tables, x row r reading table row (r / repeat) mod table_rows. With
/// `adjoint` the transposed map (the gradient): y[i] = x[i] cos[i] +
/// x[i + h] sin[i + h] and y[i + h] = x[i + h] cos[i + h] - x[i] sin[i].
/// y must not overlap x.
void pdrt_rotary(pdrt_ctx *ctx, const float *x, const float *cos,
                 const float *sin, float *y, int64_t rows, int64_t dim,
                 int64_t rotated, int64_t table_rows, int64_t repeat,
                 int32_t adjoint);

/// GELU: y[i] = 0.5 x (1 + erf(x / sqrt(2))), or with `approx_tanh` the
/// approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
void pdrt_gelu(pdrt_ctx *ctx, int32_t approx_tanh, const float *x, float *y,
               int64_t n);

/// Its gradient dx[i] = dy[i] * gelu'(x[i]) from the forward's input x.
void pdrt_gelu_grad(pdrt_ctx *ctx, int32_t approx_tanh, const float *dy,
                    const float *x, float *dx, int64_t n);

/// pdrt_gelu of x + bias over `rows` rows of `cols`: y[r][j] = gelu(x[r][j]
/// + bias[j]) (the bias of the Linear layer before the GELU, moved into it
/// by pd-fuse-bias-into-consumers), the same bits as pdrt_gelu of the sum.
void pdrt_gelu_bias(pdrt_ctx *ctx, int32_t approx_tanh, const float *x,
                    const float *bias, float *y, int64_t rows, int64_t cols);

/// pdrt_gelu_grad of `rows` rows of `cols` at x + bias (x where bias is
/// null) and, where db is not null, in the same pass db[j] = the sum over
/// the rows of dx[r][j] (the gradient of that bias): rows added in order in
/// float, the bits of pdrt_sum_to on dx.
void pdrt_gelu_grad_bias(pdrt_ctx *ctx, int32_t approx_tanh, const float *dy,
                         const float *x, const float *bias, float *dx,
                         float *db, int64_t rows, int64_t cols);

/// Gated GELU (GeGLU, Gemma's MLP): y[i] = gelu(gate[i]) * up[i], the
/// bits of pdrt_gelu on gate times up.
void pdrt_geglu(pdrt_ctx *ctx, int32_t approx_tanh, const float *gate,
                const float *up, float *y, int64_t n);

/// Its gradient, recomputed from gate: dgate[i] = dy[i] up[i]
/// gelu'(gate[i]), dup[i] = dy[i] gelu(gate[i]). dgate may be dy.
void pdrt_geglu_grad(pdrt_ctx *ctx, int32_t approx_tanh, const float *dy,
                     const float *gate, const float *up, float *dgate,
                     float *dup, int64_t n);

/// Training-mode dropout: y[i] = keep(i) ? x[i] / (1 - ratio) : 0 with the
/// counter-based mask of pdrt_random.h, keyed by the run's seed, the
/// running microbatch (ctx) and `rng_id`. The same call on dy is the
/// gradient. Tensors of 2^34 elements or more are a context error.
void pdrt_dropout(pdrt_ctx *ctx, const float *x, float *y, int64_t n,
                  float ratio, int64_t rng_id);

/// y = x repeated along broadcast axes: `desc` is
/// [rank, out_dims[rank], x_strides[rank]] (stride 0 on repeated axes).
void pdrt_broadcast(pdrt_ctx *ctx, const float *x, float *y,
                    const int64_t *desc);

/// Softmax (log-softmax when `log`) along the middle axis of x viewed as
/// [outer, dim, inner].
void pdrt_softmax(pdrt_ctx *ctx, const float *x, float *y, int64_t outer,
                  int64_t dim, int64_t inner, int32_t log);

/// Its gradient from the output y: softmax dx = y (dy - sum(dy y));
/// log-softmax dx = dy - exp(y) sum(dy).
void pdrt_softmax_grad(pdrt_ctx *ctx, const float *dy, const float *y,
                       float *dx, int64_t outer, int64_t dim, int64_t inner,
                       int32_t log);

/// Softmax of each row of x [rows, dim] after scaling by `scale` and
/// masking: mask (null: none) is mask_groups blocks of [mask_rows, dim]
/// bytes, 0 dropping an element (y = 0 there). The rows split into
/// mask_groups equal runs, run g reading block g, and row r of a run reads
/// the block's row r % mask_rows: one [T, T] causal mask for every batch
/// entry and head (1 group), or a padding mask per batch entry broadcast
/// over its heads ([B, T or 1, dim]: B groups). A row that keeps nothing
/// gets y = 0, or 1 / dim everywhere with PDRT_SOFTMAX_UNIFORM_EMPTY_ROWS
/// in `flags` (the softmax of a row filled with one finite value); with
/// PDRT_SOFTMAX_ZERO_NAN_ROWS a row whose softmax is NaN (a NaN or +inf
/// score) is zero (softmax followed by Where(IsNaN(y), 0, y)).
/// With block = B > 0 (a causal mask, whose row i keeps a prefix of i + 1
/// elements) row r is written only up to the end of its diagonal block,
/// min((i / B + 1) B, dim) with i = r % mask_rows; the rest of the row is
/// left as it was.
void pdrt_masked_softmax(pdrt_ctx *ctx, const float *x, const uint8_t *mask,
                         float *y, int64_t rows, int64_t dim, int64_t mask_rows,
                         int64_t mask_groups, float scale, int64_t block,
                         int64_t flags);

/// Its gradient from the output: dx = scale y (dy - sum(dy y)). With
/// causal_rows = R > 0 row r keeps its first (r % R) + 1 elements (the
/// rows of [R, R] matrices under the causal mask): dy is read there only
/// and dx is zero after them, up to the end of the row's diagonal block
/// of `block` columns when block > 0 (the rest left as it was); 0: whole
/// rows.
void pdrt_masked_softmax_grad(pdrt_ctx *ctx, const float *dy, const float *y,
                              float *dx, int64_t rows, int64_t dim,
                              float scale, int64_t causal_rows, int64_t block);

/// Layer norm of each row of x [rows, cols]: y = (x - mean) rstd g + b,
/// rstd = 1 / sqrt(biased var + eps).
void pdrt_layer_norm(pdrt_ctx *ctx, const float *x, const float *g,
                     const float *b, float *y, int64_t rows, int64_t cols,
                     float eps);

/// Its gradients (the row statistics are recomputed from x):
/// db = sum_rows dy, dg = sum_rows dy xhat,
/// dx = rstd (dy g - mean(dy g) - xhat mean(dy g xhat)), plus `addend`
/// when it is not null (the residual stream's own gradient); `dsum`, when
/// not null, gets the rows of dx summed (dsum = sum_rows dx, added in row
/// order as pdrt_sum_to does: a bias gradient of the norm's input).
void pdrt_layer_norm_grad(pdrt_ctx *ctx, const float *dy, const float *x,
                          const float *g, const float *addend, float *dx,
                          float *dg, float *db, float *dsum, int64_t rows,
                          int64_t cols, float eps);

/// A chain of elementwise ops in one pass: `desc` is [n, inputs,
/// period[inputs], registers, instructions, instruction words (5 each,
/// pdrt_chain_kind)]. Input i is read at element e as in_i[e % period]
/// (period n: the whole tensor; 1: a scalar; the row length: a vector
/// broadcast over rows). The program runs on blocks of elements that stay
/// in L1; the last instruction's register is written to out. At most
/// four inputs (unused ones null).
void pdrt_elementwise_chain(pdrt_ctx *ctx, const int64_t *desc, float *out,
                            const float *in0, const float *in1,
                            const float *in2, const float *in3);

/// A residual add and the layer norm of its sum, a row at a time:
/// sum = a + b, y = layer_norm(sum) as pdrt_layer_norm computes it. With
/// b_bias (a vector of cols, or null) sum = a + (b + b_bias[col]): the
/// bias of the Linear layer that computed b.
void pdrt_add_layer_norm(pdrt_ctx *ctx, const float *a, const float *b,
                         const float *b_bias, const float *g,
                         const float *beta, float *sum, float *y, int64_t rows,
                         int64_t cols, float eps);

/// RMS norm of each row of x [rows, cols] (Llama's RMSNorm, ONNX
/// RMSNormalization over the last axis): y = x rstd g[col],
/// rstd = 1 / sqrt(mean(x^2) + eps) with the mean accumulated in double.
void pdrt_rms_norm(pdrt_ctx *ctx, const float *x, const float *g, float *y,
                   int64_t rows, int64_t cols, float eps);

/// sum = a + b and y = the RMS norm of sum, a row at a time: the bits of
/// the add and pdrt_rms_norm apart (a residual add and the next norm).
void pdrt_add_rms_norm(pdrt_ctx *ctx, const float *a, const float *b,
                       const float *g, float *sum, float *y, int64_t rows,
                       int64_t cols, float eps);

/// Its gradients (rstd recomputed from x): dg = sum_rows dy x rstd
/// (overwritten), dx = rstd (dy g - x rstd^2 mean(dy g x)), plus addend
/// where it is not null (the residual stream's gradient, added last: the
/// bits of the two apart).
void pdrt_rms_norm_grad(pdrt_ctx *ctx, const float *dy, const float *x,
                        const float *g, const float *addend, float *dx,
                        float *dg, int64_t rows, int64_t cols, float eps);

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_NN_H */
