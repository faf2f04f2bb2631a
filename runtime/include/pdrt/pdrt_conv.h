/*===- pdrt_conv.h - Kernels of conv ops ----------------------*- C -*-===//
 *
 * The C ABI of the convolutional ops (conv, batch norm, pooling, padding).
 * Same conventions as pdrt.h: dense row-major tensors in the stage arena,
 * f32 unless stated, errors kept in ctx.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_CONV_H
#define PDRT_PDRT_CONV_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pdrt_ctx pdrt_ctx;

/* Every `desc` is a geometry descriptor of PDRT_CONV_DESC_WORDS words
 * (pdrt_conv_numerics.h): input [n, c, h, w], output [n, m, oh, ow], kernel,
 * strides, pads, dilations, groups and flags. */

/// Grouped 2-D convolution (NCHW): y[n, m] = sum over the group's input
/// channels of x (zero padded) correlated with w[m] ([m, c/group, kh, kw]),
/// plus b[m] when b is not NULL. On the CPU oneDNN's direct convolution
/// where it is faster (cpu/conv_onednn.h), else im2col + one sgemm per
/// image and group.
void pdrt_conv2d(pdrt_ctx *ctx, const float *x, const float *w, const float *b,
                 float *y, const int64_t *desc);

/// Gradient of pdrt_conv2d for its input: dx = col2im(w^T dy) per image and
/// group (dx is overwritten).
void pdrt_conv2d_grad_input(pdrt_ctx *ctx, const float *dy, const float *w,
                            float *dx, const int64_t *desc);

/// Gradient of pdrt_conv2d for its filter: dw = sum over images of
/// dy im2col(x)^T per group (dw is overwritten).
void pdrt_conv2d_grad_filter(pdrt_ctx *ctx, const float *dy, const float *x,
                             float *dw, const int64_t *desc);

/// Batch normalization with batch statistics of x viewed as [n, c, s]: per
/// channel, mean and biased variance over n and s, then
/// y = (x - mean) rstd g + b with rstd = 1 / sqrt(var + eps).
void pdrt_batch_norm(pdrt_ctx *ctx, const float *x, const float *g,
                     const float *b, float *y, int64_t n, int64_t c, int64_t s,
                     float eps);

/// Updates the running statistics of a training-mode batch normalization of
/// x viewed as [n, c, s] as torch does, with ONNX's momentum m (torch's is
/// 1 - m) and k = n * s elements per channel:
/// running_mean = m running_mean + (1 - m) mean,
/// running_var = m running_var + (1 - m) var k / (k - 1) (unbiased; the
/// biased variance when k = 1).
void pdrt_batch_norm_running_stats(pdrt_ctx *ctx, const float *x,
                                   float *running_mean, float *running_var,
                                   int64_t n, int64_t c, int64_t s,
                                   float momentum);

/// Its gradients (statistics recomputed from x), with k = n * s:
/// db = sum dy, dg = sum dy xhat, dx = g rstd / k (k dy - db - xhat dg).
void pdrt_batch_norm_grad(pdrt_ctx *ctx, const float *dy, const float *x,
                          const float *g, float *dx, float *dg, float *db,
                          int64_t n, int64_t c, int64_t s, float eps);

/// Max pooling: each output is the maximum of its window clipped to the
/// input (padding never wins).
void pdrt_max_pool2d(pdrt_ctx *ctx, const float *x, float *y,
                     const int64_t *desc);

/// Its gradient: each dy goes to the first maximum of its window in x
/// (dx is overwritten; windows may overlap, so contributions add up).
void pdrt_max_pool2d_grad(pdrt_ctx *ctx, const float *dy, const float *x,
                          float *dx, const int64_t *desc);

/// Average pooling: the window's sum over the divisor of
/// pdrt_pool_window_at (count_include_pad is flags bit 0).
void pdrt_avg_pool2d(pdrt_ctx *ctx, const float *x, float *y,
                     const int64_t *desc);

/// Its gradient: dy / divisor added to every input of the window.
void pdrt_avg_pool2d_grad(pdrt_ctx *ctx, const float *dy, float *dx,
                          const int64_t *desc);

/// Constant zero padding of x [dims] into y: y is zero except
/// y[begin + i] = x[i]. `desc` is [rank, x_dims[rank], y_dims[rank],
/// begin[rank]]; x must fit inside y. pdrt_pad_value (pdrt_tensor.h) with
/// 4-byte elements and value 0, which also implements it (cpu/tensor.cc).
void pdrt_pad(pdrt_ctx *ctx, const float *x, float *y, const int64_t *desc);

#ifdef __cplusplus
}
#endif

#endif /* PDRT_PDRT_CONV_H */
