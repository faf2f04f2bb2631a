/*===- pdrt.h - The pdc runtime's C ABI ------------------------*- C -*-===//
 *
 * The contract between code that pdc generates for one pipeline stage and
 * the runtime it is linked with. Generated code exports three symbols (see
 * "Generated stage interface" below) and calls only the pdrt_* functions
 * declared here. The runtime owns main(): it parses the stage's command
 * line, reads the embedded stage manifest, allocates the stage's arena,
 * loads the initial weights from the ONNX file and runs the schedule.
 *
 * No MLIR or LLVM header may be included by the runtime.
 *
 * Ordering invariant for communication: every message between two stages
 * travels on a channel (id from the manifest); on one channel the sender's
 * n-th pdrt_send matches the receiver's n-th pdrt_recv. Shapes are static, so
 * byte counts always agree.
 *===----------------------------------------------------------------------===*/

#ifndef PDRT_PDRT_H
#define PDRT_PDRT_H

#include <stdint.h>

#include "pdrt/pdrt_codes.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Opaque per-process runtime state: MPI communicators, the current
/// microbatch, data, pending sends, the loss log.
typedef struct pdrt_ctx pdrt_ctx;

/*===----------------------------------------------------------------------===*
 * Generated stage interface (defined by the stage object, called by the
 * runtime).
 *===----------------------------------------------------------------------===*/

/// Returns the stage manifest: a NUL-terminated JSON document (format in
/// docs/stage-manifest.md) with the stage's parameters, inputs, channels and
/// region sizes.
const char *pd_stage_manifest(void);

/// Runs the forward pass of one microbatch. `weights` points at the weight
/// version this microbatch uses; `stash` at the microbatch's stash slot.
/// All offsets inside the generated code are relative to these bases.
void pd_stage_forward(pdrt_ctx *ctx, char *weights, char *grads, char *stash,
                      char *workspace, char *comm);

/// Runs the backward pass of one microbatch (same bases as its forward, the
/// same weight version and the same stash slot).
void pd_stage_backward(pdrt_ctx *ctx, char *weights, char *grads, char *stash,
                       char *workspace, char *comm);

/*===----------------------------------------------------------------------===*
 * Kernels (called by generated code). All tensors are dense row-major f32
 * unless stated; pointers point into the stage arena and never alias unless
 * stated.
 *===----------------------------------------------------------------------===*/

/// C[m,n] = alpha * op(A) * op(B) + beta * C, op(X) = X or X^T.
/// A is [m,k] (or [k,m] when trans_a), B is [k,n] (or [n,k] when trans_b).
void pdrt_matmul(pdrt_ctx *ctx, const float *a, const float *b, float *c,
                 int64_t m, int64_t n, int64_t k, int32_t trans_a,
                 int32_t trans_b, float alpha, float beta);

/// C[m,n] = alpha * op(A) * op(B) + bias, bias [n] added to every row (a
/// Linear layer): C starts as the bias rows and the product adds to it.
void pdrt_matmul_bias(pdrt_ctx *ctx, const float *a, const float *b,
                      const float *bias, float *c, int64_t m, int64_t n,
                      int64_t k, int32_t trans_a, int32_t trans_b, float alpha);

/// out = a (op) b with numpy broadcasting. `desc` is
/// [rank, out_dims[rank], a_strides[rank], b_strides[rank]] in elements; a
/// broadcast dimension has stride 0. rank <= 8. PDRT_BINARY_MIN / MAX
/// propagate a NaN of either operand (torch.minimum / torch.maximum).
void pdrt_binary(pdrt_ctx *ctx, int32_t op, const float *a, const float *b,
                 float *out, const int64_t *desc);

/// The gradient of PDRT_BINARY_MIN / PDRT_BINARY_MAX (`op`) for operand
/// `which` (0: a, 1: b), with torch's rule: d[i] = dy[i] where that operand
/// wins (is the larger for max, the smaller for min), dy[i] / 2 on ties, 0
/// where it loses; both operands of a pair with a NaN get dy[i]. `desc` is
/// pdrt_binary's; dy and d are dense with the output's shape (the caller
/// sums d down to the operand's shape).
void pdrt_minmax_grad(pdrt_ctx *ctx, int32_t op, const float *dy,
                      const float *a, const float *b, float *d,
                      const int64_t *desc, int32_t which);

/// y[i] = max(x[i], 0).
void pdrt_relu(pdrt_ctx *ctx, const float *x, float *y, int64_t n);

/// dx[i] = y[i] > 0 ? dy[i] : 0, where y is relu's output.
void pdrt_relu_grad(pdrt_ctx *ctx, const float *dy, const float *y, float *dx,
                    int64_t n);

/// y[i] = alpha * x[i].
void pdrt_scale(pdrt_ctx *ctx, const float *x, float *y, int64_t n,
                float alpha);

/// Sums x over broadcast dimensions: `desc` is
/// [rank, in_dims[rank], out_strides[rank]] (stride 0 on summed dimensions);
/// y (of the reduced shape, `out_numel` elements) is overwritten.
void pdrt_sum_to(pdrt_ctx *ctx, const float *x, float *y, int64_t out_numel,
                 const int64_t *desc);

/// acc[i] += g[i] (gradient accumulation).
void pdrt_accumulate(pdrt_ctx *ctx, const float *g, float *acc, int64_t n);

/// Copies `bytes` bytes (regions may not overlap).
void pdrt_copy(pdrt_ctx *ctx, const void *src, void *dst, int64_t bytes);

/// *loss = mean over rows r with labels[r] != ignore_index of
/// -log softmax(logits[r,:])[labels[r]]; 0 when no row counts.
/// `labels` holds int64 values. A label outside [0, c) other than
/// ignore_index is a fatal data error naming the row.
void pdrt_softmax_xent(pdrt_ctx *ctx, const float *logits,
                       const int64_t *labels, float *loss, int64_t n,
                       int64_t c, int64_t ignore_index);

/// dlogits[r,:] = (*dloss / K) * (softmax(logits[r,:]) - onehot(labels[r]))
/// for the K counted rows, 0 for ignored rows.
void pdrt_softmax_xent_grad(pdrt_ctx *ctx, const float *dloss,
                            const float *logits, const int64_t *labels,
                            float *dlogits, int64_t n, int64_t c,
                            int64_t ignore_index);

/// Per-row form (reduction "none"): loss[r] = -log softmax(logits[r,:])
/// [labels[r]], 0 for ignored rows; same label checks.
void pdrt_softmax_xent_rows(pdrt_ctx *ctx, const float *logits,
                            const int64_t *labels, float *loss, int64_t n,
                            int64_t c, int64_t ignore_index);

/// Its gradient: dlogits[r,:] = dloss[r] * (softmax(logits[r,:]) -
/// onehot(labels[r])), 0 for ignored rows.
void pdrt_softmax_xent_rows_grad(pdrt_ctx *ctx, const float *dloss,
                                 const float *logits, const int64_t *labels,
                                 float *dlogits, int64_t n, int64_t c,
                                 int64_t ignore_index);

/// pdrt_softmax_xent and, from the same exponentials, the gradient its
/// backward would compute from the stage's gradient seed (pdrt_grad_seed):
/// dlogits = pdrt_softmax_xent_grad with *dloss = the seed. Bit for bit the
/// results of the two separate calls. dlogits may be logits (the gradient
/// written over them, pd-allocate-buffers' in-place rule).
void pdrt_softmax_xent_with_grad(pdrt_ctx *ctx, const float *logits,
                                 const int64_t *labels, float *loss,
                                 float *dlogits, int64_t n, int64_t c,
                                 int64_t ignore_index);

/*===----------------------------------------------------------------------===*
 * Training services (called by generated code).
 *===----------------------------------------------------------------------===*/

/// Copies the current microbatch's rows of graph input `index` (the
/// manifest's input list) into `dst` (`bytes` = the microbatch's bytes).
void pdrt_load_input(pdrt_ctx *ctx, int64_t index, void *dst, int64_t bytes);

/// Writes the loss gradient seed of one microbatch into *seed:
/// 1 / (microbatches * replicas), so that accumulated gradients are those of
/// the mean loss over the global batch.
void pdrt_grad_seed(pdrt_ctx *ctx, float *seed);

/// Records the loss of the current microbatch (last stage only).
void pdrt_report_loss(pdrt_ctx *ctx, const float *loss);

/// Marks the start of op `id` (-1: the end of the function) in a profiling
/// stage (pdc --profile): with run --profile-ops, the time from one mark
/// to the next is added to the marked op's total. A no-op otherwise.
void pdrt_profile_mark(pdrt_ctx *ctx, int64_t id);

/// Between these two calls, pdrt_batch_matmul_strided, pdrt_masked_softmax
/// and pdrt_masked_softmax_grad record their calls; the end runs them batch
/// entry by batch entry (entry 0 of each in order, then entry 1, ...), so
/// that one entry's tensors stay in cache from kernel to kernel
/// (pd-interleave-batched-ops places the calls). Only where that computes
/// what running them whole and in order does (exec/interleave.h): calls
/// that do not split into the same entries, or whose entries share memory,
/// run whole, in order.
void pdrt_interleave_begin(pdrt_ctx *ctx);
void pdrt_interleave_end(pdrt_ctx *ctx);

/// The base of this stage's state region (the manifest's `state`: tensors
/// such as BatchNormalization running statistics that the forward updates
/// in place; one copy, not versioned).
char *pdrt_state_region(pdrt_ctx *ctx);

/// Starts sending `bytes` bytes on `channel` (non-blocking). The buffer must
/// stay untouched until the runtime completes the send, which it does
/// before calling the same stage function again.
void pdrt_send(pdrt_ctx *ctx, int64_t channel, const void *buf, int64_t bytes);

/// Receives `bytes` bytes on `channel` into `buf` (blocks until arrived).
void pdrt_recv(pdrt_ctx *ctx, int64_t channel, void *buf, int64_t bytes);

#ifdef __cplusplus
}
#endif

/* Kernels of the op families, one header each. */
#include "pdrt/pdrt_tensor.h"
#include "pdrt/pdrt_nn.h"
#include "pdrt/pdrt_conv.h"

#endif /* PDRT_PDRT_H */
